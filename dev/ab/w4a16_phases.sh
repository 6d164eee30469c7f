#!/usr/bin/env bash
# Issue 34: the W4A16 GEMV's fixed phases (dev/probes/w4a16_timeline.py: stage, main loop, cluster
# barrier, tail) before and after dev/ab/w4a16_stage.patch (the first scale batch in flight with X's
# loads; the cluster's partials loaded all at once, padding tokens skipped), on a lab build:
# gpu_w4a16 and unit_int4 on the working tree, its decode rows and timeline, then the rows with the
# patch reversed. Logs under $OUT; a table of the decode rows' us last.
set -uo pipefail
. dev/ab/gpu_common.sh
INSTANCES=${INSTANCES:-'^f16_128x128_c1$'} gpu_build
gpu_tests "gpu_w4a16 unit_int4"
run() { # $1: the name of the kernel built now
    TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python \
        python3 bench/w4a16.py --decode --csv $OUT/h100-w4a16-$1.csv > $OUT/bench-$1.log 2>&1
    echo "bench $1 rc=$? ($SECONDS s)"
}
rebuild() { cmake --build build -j 16 > $OUT/rebuild.log 2>&1 || { tail $OUT/rebuild.log; exit 1; }; }
run new
patch -p1 < dev/ab/w4a16_timeline.patch > /dev/null && rebuild &&
    TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python \
        python3 dev/probes/w4a16_timeline.py --m 1,16 > $OUT/timeline-new.txt 2>&1
patch -R -p1 < dev/ab/w4a16_timeline.patch > /dev/null
patch -R -p1 < dev/ab/w4a16_stage.patch > /dev/null && rebuild && run old
cat $OUT/timeline-new.txt
echo "shape m: tinygemm copy | new old (us)"
grep -E "torch tinygemm" $OUT/bench-old.log | while read -r line; do
    key=$(echo "$line" | cut -c1-18)
    row="$key: $(echo "$line" | awk '{print $6}') $(grep -F "$key" $OUT/bench-old.log | grep -E "m=[0-9]+ +copy " | awk '{print $5}') |"
    for n in new old; do
        row="$row $(grep -F "$key" $OUT/bench-$n.log | grep "tessera w4a16" | awk '{print $6}')"
    done
    echo "$row"
done
