#!/usr/bin/env bash
# The Python package on the GPU, and the bench tool's held-at-the-cap mode,
# in one device call: builds libtessera and the CLI, runs the Python tests
# against that build (pytest from wheels carried in .peers/wheels where the
# device has none), bench/python_overhead.py, and `tessera bench gemm
# --hold` on FP8 8192^3 per-tensor and rowwise beside cuBLASLt. Logs and
# CSVs under OUT, a short summary last. HOLD=0 skips the held runs.
#   bash dev/ab/python_gpu.sh OUT
set -uo pipefail
out=${1:?usage: python_gpu.sh OUT}
here=$(pwd)
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PATH=/usr/local/cuda/bin:$PATH PYTHONDONTWRITEBYTECODE=1
mkdir -p "$out"
{ cmake -S . -B /tmp/pg-build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/pg-build -j 16 --target tessera tessera_cli; } \
    > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
export TESSERA_LIBRARY=/tmp/pg-build/lib/libtessera.so PYTHONPATH=$here/python
python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links "$here/.peers/wheels" pytest > "$out/pip.log" 2>&1
timeout 300 python3 -m pytest -q -rs python/tests > "$out/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -1 "$out/pytest.log")"
timeout 60 python3 bench/python_overhead.py --m 1 --n 4096 --k 4096 --csv "$out/python_overhead.csv" > "$out/python_overhead.log" 2>&1
echo "python_overhead rc=$?"; tail -6 "$out/python_overhead.log"
cli=/tmp/pg-build/bin/tessera
[ "${HOLD:-1}" = 0 ] && exit 0
for recipe in tensor outer; do
    timeout 90 "$cli" bench gemm --m=8192 --n=8192 --k=8192 --A=e4m3:row --B=e4m3:col --D=bf16:row \
        --scale-a=$recipe --scale-b=$recipe --providers=tessera,cublas --hold=2.5 \
        --output="$out/hold-fp8-$recipe.csv" > "$out/hold-fp8-$recipe.log" 2>&1
    echo "hold $recipe rc=$?"; grep -v '^#' "$out/hold-fp8-$recipe.log" | tail -4
done
