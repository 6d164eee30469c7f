# Shared steps of the one-call device scripts (training_gpu.sh, quantized_gpu.sh,
# residual_gpu.sh): source it, then call these. Logs go under $OUT.

# Configures and builds ./build (Release, Ninja); exits after the build log's errors.
# INSTANCES (a regular expression): only those sm90 instances (TESS_INSTANCES), a lab build.
gpu_build() {
    export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
    { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESS_INSTANCES="${INSTANCES:-}" &&
        cmake --build build -j 16; } > $OUT/build.log 2>&1 ||
        { grep -B2 -A6 "error" $OUT/build.log | head -60; exit 1; }
    echo "built $SECONDS s"
}

# Runs each test binary named in $1 (build/tests/NAME, 240 s each): its last line and first failures.
gpu_tests() {
    for t in $1; do
        timeout 240 build/tests/$t > $OUT/$t.log 2>&1
        echo "$t rc=$? $(tail -1 $OUT/$t.log) ($SECONDS s)"
        grep -m8 "check failed" -A1 $OUT/$t.log
    done
}

# Runs pytest on $1 against this build (pytest from .peers/wheels where missing): summary and failures.
gpu_pytest() {
    export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
    python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links .peers/wheels pytest > /dev/null 2>&1
    timeout 240 python3 -m pytest -q -rs $1 > $OUT/pytest.log 2>&1
    echo "pytest rc=$?: $(tail -1 $OUT/pytest.log) ($SECONDS s)"
    grep -E "^FAILED|^E " $OUT/pytest.log | head -20
}
