#!/usr/bin/env bash
# Issue 34's W4A16 on the GPU in one call (about 8 minutes; carry .peers for pytest's wheel):
# the full build, unit_int4, gpu_w4a16, gpu_gemm (the decode GEMV's load moved to ptx.cuh),
# pytest test_int4.py, then bench/w4a16.py (tessera's GEMV beside tinygemm, bf16 and the copy rate)
# into $OUT/h100-w4a16.csv. BENCH=0 skips the benchmark; QUICK=1 runs its --quick form.
set -uo pipefail
. dev/ab/gpu_common.sh
gpu_build
gpu_tests "unit_int4 gpu_w4a16 gpu_gemm"
gpu_pytest python/tests/test_int4.py
if [ "${BENCH:-1}" = 1 ]; then
    timeout $((570 - SECONDS)) python3 bench/w4a16.py --csv $OUT/h100-w4a16.csv ${QUICK:+--quick} > $OUT/bench.log 2>&1
    echo "bench rc=$? ($SECONDS s)"
    grep -E "w4a16|tinygemm|FAIL" $OUT/bench.log | head -40
fi
