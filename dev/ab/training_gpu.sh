#!/usr/bin/env bash
# Training pieces (issue 35) on the device in one call: the build, the CPU
# planner test, the GPU tests of the utilities (cast-transpose) and of FP8
# (operands staged K-major), the Python FP8-training and GEMM tests, and
# bench/training.py. Logs and the CSV under $OUT; a short table last.
#   bash dev/ab/training_gpu.sh    (BENCH=0 skips the bench, QUICK=1 runs it --quick, PARTS=cast its parts;
#                                   TESTS="gpu_utilities ...", PYTESTS="python/tests/...")
set -uo pipefail
. "$(dirname "$0")/gpu_common.sh"
gpu_build
gpu_tests "${TESTS:-unit_gemm_plan gpu_utilities gpu_gemm_fp8}"
gpu_pytest "${PYTESTS:-python/tests/test_fp8_training.py python/tests/test_gemm.py}"
if [ "${BENCH:-1}" != 0 ]; then
    timeout 300 python3 bench/training.py ${QUICK:+--quick} --parts ${PARTS:-cast,bf16,fp8} --csv $OUT/training.csv \
        > $OUT/bench.log 2>&1
    echo "bench rc=$? ($SECONDS s)"; cat $OUT/bench.log | tail -40
fi
