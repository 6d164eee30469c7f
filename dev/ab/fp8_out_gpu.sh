#!/usr/bin/env bash
# The FP8 D (issue 33) in one device call: the build, the C GPU tests that
# write FP8 D's (TESTS, default gpu_gemm_fp8 gpu_gemm), the Python FP8 tests
# (grouped FP8 Y, the fused epilogue's FP8 D), bench/fp8_out.py (fused
# against bf16 + tessera.quantize_fp8 and cuBLASLt's FP8 D) and the epilogue
# suite's FP8-D lines with their bf16-D neighbours. Logs and CSVs under $OUT.
#   bash dev/ab/fp8_out_gpu.sh          (BENCH=0: the tests only)
set -uo pipefail
. dev/ab/gpu_common.sh
gpu_build
build/tests/unit_gemm_plan > "$OUT/unit_gemm_plan.log" 2>&1; echo "unit_gemm_plan rc=$? $(tail -1 "$OUT/unit_gemm_plan.log")"
gpu_tests "${TESTS:-gpu_gemm_fp8 gpu_gemm}"
gpu_pytest "python/tests/test_grouped.py python/tests/test_epilogue.py python/tests/test_scales.py -k fp8"
[ "${BENCH:-1}" = 0 ] && exit 0
timeout 200 python3 bench/fp8_out.py --csv "$OUT/h100-fp8-out.csv" > "$OUT/fp8_out.log" 2>&1
echo "fp8_out rc=$? ($SECONDS s)"
suite=/tmp/fp8-d-suite.txt
grep -E "^--.*e4m3:row --B" bench/suites/epilogue.txt | grep -E "k=16384 .*block128x128( --D|$)|n=4096 --k=4096 .*128x128( --D|$)" > $suite
build/bin/tessera bench gemm --suite=$suite --output="$OUT/fp8-d-suite.csv" > "$OUT/suite.log" 2>&1
echo "suite rc=$? ($SECONDS s)"
grep " tessera " "$OUT/suite.log" | sed "s/  */ /g" | cut -c1-190
grep -v "^device" "$OUT/fp8_out.log" | cut -c1-110 | tail -36
