#!/usr/bin/env bash
# Issue 34: the W4A16 GEMV's L2 prefetch window (W4A16_PREFETCH_QUADS) in one device call, on a
# lab build (one sm90 instance): gpu_w4a16 at the default window, then bench/w4a16.py's rows for
# windows 8 (default; all rows, M = 4096 too), 16, 4 and 0 (none), each beside tinygemm, tessera's
# bf16 and the copy. Each into $OUT/bench-P.log and h100-w4a16-pP.csv; a table of the decode rows' us last.
set -uo pipefail
. dev/ab/gpu_common.sh
INSTANCES=${INSTANCES:-'^f16_128x128_c1$'} gpu_build
gpu_tests "gpu_w4a16 unit_int4"
bench() { # $1: the window, $2: the bench's rows (default --decode)

    sed -i "s/^#define W4A16_PREFETCH_QUADS .*/#define W4A16_PREFETCH_QUADS $1/" src/kernels/int4/w4a16_gemv.cu
    cmake --build build -j 16 > $OUT/rebuild-$1.log 2>&1 || { tail $OUT/rebuild-$1.log; return; }
    TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python \
        python3 bench/w4a16.py ${2:---decode} --csv $OUT/h100-w4a16-p$1.csv > $OUT/bench-$1.log 2>&1
    echo "bench P=$1 rc=$? ($SECONDS s)"
}
bench 8 --rounds=3
for w in 16 4 0; do bench $w; done
names="8 16 4 0"
echo "shape m: tinygemm | P = $names (us)"
grep -E "torch tinygemm" $OUT/bench-0.log | while read -r line; do
    key=$(echo "$line" | cut -c1-18)
    row="$key: $(echo "$line" | awk '{print $6}') |"
    for n in $names; do
        row="$row $(grep -F "$key" $OUT/bench-$n.log | grep "tessera w4a16" | awk '{print $6}')"
    done
    echo "$row"
done
grep -E "m=4096" $OUT/bench-8.log | grep -v tinygemm
