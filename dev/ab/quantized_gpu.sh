#!/usr/bin/env bash
# TF32 and INT8 (issue 34) on the device in one call: the build, the GPU tests
# named in TESTS, pytest, bench/quantized.py (against torch) and the TF32
# suite through `tessera bench gemm` (against cuBLASLt's TF32, f32 D).
# CSVs and logs under $OUT; a short table last.
#   bash dev/ab/quantized_gpu.sh    (TESTS="gpu_gemm_fp8 gpu_grouped", PYTESTS=python/tests, BENCH=0)
set -uo pipefail
. "$(dirname "$0")/gpu_common.sh"
gpu_build
gpu_tests "${TESTS:-gpu_gemm_fp8 gpu_gemm}"
gpu_pytest "${PYTESTS:-python/tests}"
[ "${BENCH:-1}" = 0 ] && exit 0
timeout 240 python3 bench/quantized.py --csv $OUT/h100-quantized.csv > $OUT/quantized.log 2>&1
echo "quantized rc=$? ($SECONDS s)"
timeout 240 build/bin/tessera bench gemm --suite=bench/suites/tf32.txt --A=f32:row --B=f32:col --D=f32:row \
    --output=$OUT/h100-tf32.csv > $OUT/tf32.log 2>&1
echo "tf32 suite rc=$? ($SECONDS s)"
grep -v "^device" $OUT/quantized.log | cut -c1-110
awk '{print $1, $3, $4, $5, $7, $15}' $OUT/tf32.log
