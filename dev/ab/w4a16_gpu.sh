#!/usr/bin/env bash
# Issue 34's W4A16 (and the tensor-map cache of issue 32) on the GPU, in three calls of under
# 600 s on one machine (carry .peers for pytest's wheel):
#   bash dev/ab/w4a16_gpu.sh tests   the full build, unit_int4, gpu_device (with branch
#       map-cache merged: the tensor-map cache's bytes against fresh encodings), gpu_w4a16,
#       pytest test_int4.py
#   bash dev/ab/w4a16_gpu.sh kernels on that build: gpu_gemm, gpu_gemm_fp8 and gpu_grouped
#       (with map-cache merged, every kernel's tensor maps come from the thread's cache)
#   bash dev/ab/w4a16_gpu.sh bench   on that build: bench/w4a16.py (tessera's GEMV beside
#       tinygemm, tessera bf16 and the copy rate) into $OUT/h100-w4a16.csv (QUICK=1: --quick)
set -uo pipefail
. dev/ab/gpu_common.sh
if [ "${1:-tests}" = tests ]; then
    gpu_build
    gpu_tests "unit_int4 gpu_device gpu_w4a16"
    gpu_pytest python/tests/test_int4.py
elif [ "$1" = kernels ]; then
    [ -f build/lib/libtessera.so ] || gpu_build
    gpu_tests "gpu_gemm gpu_gemm_fp8 gpu_grouped"
else
    export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
    [ -f build/lib/libtessera.so ] || gpu_build
    timeout $((570 - SECONDS)) python3 bench/w4a16.py --csv $OUT/h100-w4a16.csv ${QUICK:+--quick} > $OUT/bench.log 2>&1
    echo "bench rc=$? ($SECONDS s)"
    grep -E "w4a16|tinygemm|FAIL|Error" $OUT/bench.log | head -40
fi
