#!/usr/bin/env bash
# Checks what `make` and `make test` need before they start, and names all
# that is missing, each with how to get it, rather than letting a build or a
# test run fail halfway with a tool's own error. README.md's Requirements
# list the same things.
#   build: CMake >= 3.25, Ninja, C and C++ compilers, nvcc 13 (the CUDA 13 toolkit)
#   test:  python3 (or $PYTHON) >= 3.9 with pytest and numpy; pkg-config and
#          readelf (the test of the installed library)
#   bash tools/requirements.sh [build] [test]      exit 1 if anything is missing
set -u
missing=()
need() { missing+=("$1"); }

# The major and minor version in a tool's version text, as "major minor".
version_of() { sed -nE 's/.*[^0-9.]([0-9]+)\.([0-9]+)(\.[0-9]+)*.*/\1 \2/p' | head -n 1; }

for group in "$@"; do
  case $group in
  build)
    if ! command -v cmake >/dev/null; then
      need "cmake >= 3.25: apt-get install cmake, or python3 -m pip install cmake"
    else
      read -r major minor <<< "$(cmake --version | version_of)"
      if [ "${major:-0}" -lt 3 ] || { [ "$major" -eq 3 ] && [ "${minor:-0}" -lt 25 ]; }; then
        need "cmake >= 3.25 (this one is $major.$minor): python3 -m pip install cmake"
      fi
    fi
    command -v ninja >/dev/null || need "ninja: apt-get install ninja-build, or python3 -m pip install ninja"
    command -v "${CC:-cc}" >/dev/null || need "a C compiler (${CC:-cc}): apt-get install gcc"
    command -v "${CXX:-c++}" >/dev/null || need "a C++ compiler (${CXX:-c++}): apt-get install g++"
    nvcc=${CUDACXX:-$(command -v nvcc)}
    if [ -z "$nvcc" ]; then
      if [ -x /usr/local/cuda/bin/nvcc ]; then
        need "nvcc on PATH: export PATH=/usr/local/cuda/bin:\$PATH (or CUDACXX=/usr/local/cuda/bin/nvcc)"
      else
        need "nvcc 13 (the CUDA 13 toolkit): https://developer.nvidia.com/cuda-downloads"
      fi
    else
      read -r major minor <<< "$("$nvcc" --version | grep -i release | version_of)"
      [ "${major:-0}" -ge 13 ] || need "nvcc 13 ($nvcc is release ${major:-?}.${minor:-?}): the CUDA 13 toolkit"
    fi
    ;;
  test)
    command -v pkg-config >/dev/null || need "pkg-config: apt-get install pkg-config"
    command -v readelf >/dev/null || need "readelf: apt-get install binutils"
    python=${PYTHON:-python3}
    if ! command -v "$python" >/dev/null; then
      need "$python >= 3.9 (the Python tests): apt-get install python3 python3-pip"
    elif ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
      need "$python >= 3.9 (this one is $("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])'))"
    else
      absent=()
      for module in pytest numpy; do
        "$python" -c "import $module" 2>/dev/null || absent+=("$module")
      done
      [ ${#absent[@]} -eq 0 ] || need "Python modules for $python, ${absent[*]}: $python -m pip install ${absent[*]}"
    fi
    ;;
  *)
    echo "usage: tools/requirements.sh [build] [test]" >&2
    exit 2
    ;;
  esac
done

[ ${#missing[@]} -eq 0 ] && exit 0
echo "tessera: missing what the build or its tests need (README.md, Requirements):" >&2
printf '  - %s\n' "${missing[@]}" >&2
exit 1
