#!/usr/bin/env bash
# Issue 34's W4A16 (and the tensor-map cache of issue 32) on the GPU, in three calls of under
# 600 s on one machine (carry .peers for pytest's wheel):
#   bash dev/ab/w4a16_gpu.sh tests   the full build (INSTANCES: a lab build), unit_int4, gpu_device (with branch
#       map-cache merged: the tensor-map cache's bytes against fresh encodings), gpu_w4a16,
#       pytest test_int4.py
#   bash dev/ab/w4a16_gpu.sh kernels on that build: gpu_gemm, gpu_gemm_fp8 and gpu_grouped
#       (with map-cache merged, every kernel's tensor maps come from the thread's cache)
#   bash dev/ab/w4a16_gpu.sh bench   on that build: bench/w4a16.py (tessera's GEMV beside
#       tinygemm, tessera bf16 and the copy rate) into $OUT/h100-w4a16.csv (QUICK=1: --quick)
#   bash dev/ab/w4a16_gpu.sh lab     a lab build (one sm90 instance unless INSTANCES says;
#       the M = 4096 rows then slower than the product's), gpu_w4a16, then the bench
#   bash dev/ab/w4a16_gpu.sh moe     on that build (branch w4a16-masked): bench/w4a16_moe.py (the masked
#       GEMV over 64 experts beside tinygemm once per active expert) into $OUT/h100-w4a16-moe.csv
#   PATCH=file bash dev/ab/w4a16_gpu.sh ab   a lab build, gpu_w4a16, pytest test_int4 and the
#       decode rows of the bench (a), then the patch applied, rebuilt and the bench again (b):
#       $OUT/bench-{a,b}.log and h100-w4a16-{a,b}.csv
set -uo pipefail
. dev/ab/gpu_common.sh
decode_bench() { # $1: a name; the bench's decode rows into $OUT/bench-$1.log and h100-w4a16-$1.csv
    TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python \
        python3 bench/w4a16.py --decode --csv $OUT/h100-w4a16-$1.csv > $OUT/bench-$1.log 2>&1
    echo "bench $1 rc=$? ($SECONDS s)"
}
if [ "${1:-tests}" = ab ]; then
    INSTANCES=${INSTANCES:-'^f16_128x128_c1$'} gpu_build
    gpu_tests gpu_w4a16
    gpu_pytest python/tests/test_int4.py
    decode_bench a
    patch -p1 < "$PATCH" > /dev/null && cmake --build build -j 16 > $OUT/rebuild.log 2>&1 || { tail $OUT/rebuild.log; exit 1; }
    decode_bench b
    paste <(grep -E "w4a16|tinygemm" $OUT/bench-a.log | cut -c1-48) <(grep -E "w4a16|tinygemm" $OUT/bench-b.log | cut -c35-48)
elif [ "$1" = moe ]; then
    [ -f build/lib/libtessera.so ] || gpu_build
    TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python timeout $((570 - SECONDS)) \
        python3 bench/w4a16_moe.py --csv $OUT/h100-w4a16-moe.csv > $OUT/moe.log 2>&1
    echo "moe bench rc=$? ($SECONDS s)"
    grep -E "tessera|tinygemm|FAIL|Error" $OUT/moe.log | head -40
elif [ "${1:-tests}" = lab ]; then
    INSTANCES=${INSTANCES:-'^f16_128x128_c1$'} gpu_build
    gpu_tests gpu_w4a16
    exec bash dev/ab/w4a16_gpu.sh bench
elif [ "$1" = tests ]; then
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
