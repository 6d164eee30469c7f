#!/usr/bin/env bash
# TF32 and INT8 (issue 34) on the device in one call: the build, the GPU tests
# named in TESTS, pytest, bench/quantized.py (against torch) and the TF32
# suite through `tessera bench gemm` (against cuBLASLt's TF32, f32 D).
# CSVs and logs under $OUT; a short table last.
#   bash dev/ab/quantized_gpu.sh    (TESTS="gpu_gemm_fp8 gpu_grouped", PYTESTS=python/tests, BENCH=0)
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 16; } > $OUT/build.log 2>&1 ||
    { grep -B2 -A6 "error" $OUT/build.log | head -60; exit 1; }
echo "built $SECONDS s"
for t in ${TESTS:-gpu_gemm_fp8 gpu_gemm}; do
    timeout 240 build/tests/$t > $OUT/$t.log 2>&1
    echo "$t rc=$? $(tail -1 $OUT/$t.log) ($SECONDS s)"
done
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links .peers/wheels pytest > /dev/null 2>&1
timeout 240 python3 -m pytest -q -rs ${PYTESTS:-python/tests} > $OUT/pytest.log 2>&1
echo "pytest rc=$?: $(tail -1 $OUT/pytest.log) ($SECONDS s)"; grep -E "^FAILED|^E " $OUT/pytest.log | head -20
[ "${BENCH:-1}" = 0 ] && exit 0
timeout 240 python3 bench/quantized.py --csv $OUT/h100-quantized.csv > $OUT/quantized.log 2>&1
echo "quantized rc=$? ($SECONDS s)"
timeout 240 build/bin/tessera bench gemm --suite=bench/suites/tf32.txt --A=f32:row --B=f32:col --D=f32:row \
    --output=$OUT/h100-tf32.csv > $OUT/tf32.log 2>&1
echo "tf32 suite rc=$? ($SECONDS s)"
grep -v "^device" $OUT/quantized.log | cut -c1-110
awk '{print $1, $3, $4, $5, $7, $15}' $OUT/tf32.log
