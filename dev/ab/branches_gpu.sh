#!/usr/bin/env bash
# The merged branches (gated transposed plans, INT8 narrow tiles) on the device in
# one call: build with -k 0 (every spill listed), the GPU tests run side by side
# (they check values, not times), pytest's epilogue/gemm/grouped tests, the gated
# probe, and INT8 at decode sizes against torch._int_mm. Logs under $OUT.
#   bash dev/ab/branches_gpu.sh
set -uo pipefail
# the build and the GPU tests: kernels_gpu.sh's
TESTS=${TESTS:-gpu_gemm gpu_grouped gpu_gemm_fp8} TEST_TIMEOUT_S=400 bash "$(dirname "$0")/kernels_gpu.sh" || exit 1
. "$(dirname "$0")/gpu_common.sh"
gpu_pytest "python/tests/test_epilogue.py python/tests/test_gemm.py python/tests/test_grouped.py"
PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so timeout 120 python3 dev/probes/gated_vs_unfused.py \
    --csv "$OUT/gated_vs_unfused.csv" 2>&1 | tail -8
PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so timeout 120 python3 bench/quantized.py --kinds int8 \
    --shapes 32x7168x2048,64x7168x2048,32x4096x4096,64x2112x7168,32x14336x4096,128x7168x2048 \
    --csv "$OUT/int8-decode.csv" 2>&1 | tail -14
echo "done $SECONDS s"
