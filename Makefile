# Thin wrapper over CMake. `make` builds, `make test` runs every test (ctest,
# then pytest), `make bench` runs the benchmarks on the GPU, `make install`
# installs into PREFIX. What is missing for a build or its tests is named
# before anything starts (tools/requirements.sh).
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PYTHON ?= python3

.PHONY: all configure test test-requirements test-gpu bench install clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

configure:
	@if [ ! -f $(BUILD)/CMakeCache.txt ]; then \
	  bash tools/requirements.sh build && \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS); fi

test: test-requirements all
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	PYTHONPATH=$(CURDIR)/python TESSERA_LIBRARY=$(CURDIR)/$(BUILD)/lib/libtessera.so $(PYTHON) -m pytest -q python/tests

# The tests' needs, and the build's where it is not configured yet: all named at once.
test-requirements:
	@PYTHON=$(PYTHON) bash tools/requirements.sh $(if $(wildcard $(BUILD)/CMakeCache.txt),,build) test

# Only the GPU tests (on a machine with a Hopper GPU).
test-gpu: all
	ctest --test-dir $(BUILD) --output-on-failure -L gpu

bench: all
	bash bench/run $(BUILD)

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
