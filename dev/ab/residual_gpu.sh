#!/usr/bin/env bash
# The residual epilogue (issue 33) on the device in one call: the build, the
# unit and GPU tests named in TESTS, pytest (PYTESTS), then `tessera bench
# gemm` of each problem plain and with --residual (bf16, a fused bias + SiLU,
# decode-sized, FP8 block-scaled), against cuBLASLt (which runs a residual
# without activation as C with beta 1). Logs and $OUT/residual.csv; a short table last.
#   bash dev/ab/residual_gpu.sh    (TESTS="unit_plan_cache gpu_gemm", PYTESTS=python/tests, BENCH=0)
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 16; } > $OUT/build.log 2>&1 ||
    { grep -B2 -A6 "error" $OUT/build.log | head -60; exit 1; }
echo "built $SECONDS s"
for t in ${TESTS:-unit_plan_cache unit_gemm_plan gpu_gemm}; do
    timeout 240 build/tests/$t > $OUT/$t.log 2>&1
    echo "$t rc=$? $(tail -1 $OUT/$t.log) ($SECONDS s)"
    grep -m6 "check failed" -A1 $OUT/$t.log
done
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links .peers/wheels pytest > /dev/null 2>&1
timeout 240 python3 -m pytest -q -rs ${PYTESTS:-python/tests} > $OUT/pytest.log 2>&1
echo "pytest rc=$?: $(tail -1 $OUT/pytest.log) ($SECONDS s)"; grep -E "^FAILED|^E " $OUT/pytest.log | head -20
[ "${BENCH:-1}" = 0 ] && exit 0
FP8="--A=e4m3:row --B=e4m3:col --scale-a=block1x128 --scale-b=block128x128"
while read -r line; do
    for r in "" --residual; do
        timeout 120 build/bin/tessera bench gemm $line $r --output=$OUT/residual_$([ -n "$r" ] && echo on || echo off).csv
    done
done > $OUT/residual.log 2>&1 <<LINES
--m=4096 --n=4096 --k=4096
--m=8192 --n=8192 --k=8192
--m=4096 --n=14336 --k=4096 --bias=columns --act=silu
--m=16 --n=7168 --k=2048
--m=4096 --n=7168 --k=16384 $FP8
LINES
echo "bench ($SECONDS s)"
grep -v "^tessera bench" $OUT/residual.log | sed "s/  */ /g" | cut -c1-160
