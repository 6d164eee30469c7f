#!/usr/bin/env bash
# The residual epilogue (issue 33) on the device in one call: the build, the
# unit and GPU tests named in TESTS, pytest (PYTESTS), then `tessera bench
# gemm` of each problem plain and with --residual (bf16, a fused bias + SiLU,
# decode-sized, FP8 block-scaled), against cuBLASLt (which runs a residual
# without activation as C with beta 1). Logs and $OUT/residual.csv; a short table last.
#   bash dev/ab/residual_gpu.sh    (TESTS="unit_plan_cache gpu_gemm", PYTESTS=python/tests, BENCH=0)
set -uo pipefail
. "$(dirname "$0")/gpu_common.sh"
gpu_build
gpu_tests "${TESTS:-unit_plan_cache unit_gemm_plan gpu_gemm}"
gpu_pytest "${PYTESTS:-python/tests}"
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
