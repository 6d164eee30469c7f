#!/usr/bin/env bash
# The ring-reuse race (release_stage's proxy fence) on the device: builds this
# tree and a copy without the fence (dev/ab/no_stage_fence.patch), then
# dev/probes/wrong_tiles.py with each library on the shape that shows it.
#   bash dev/ab/race_check.sh   (on the device; logs under $OUT)
set -uo pipefail
here=$(pwd)
rm -rf /tmp/rc-nofence && mkdir -p /tmp/rc-nofence &&
    tar -C . --exclude=./build --exclude='./build-*' --exclude=./.peers -cf - . | tar -xf - -C /tmp/rc-nofence &&
    (cd /tmp/rc-nofence && patch -p1 -s < "$here/dev/ab/no_stage_fence.patch") || exit 1
for v in "$here" /tmp/rc-nofence; do
    { cmake -S "$v" -B "$v/build-rc" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$v/build-rc" -j 16 --target tessera; } \
        > "$v.rc-build.log" 2>&1 &
done
wait
export PYTHONPATH=$here/python
for v in "$here" /tmp/rc-nofence; do
    for shape in "--n 32768 --k 512" "--n 32768 --k 1024"; do
        echo "### $v $shape"
        TESSERA_LIBRARY=$v/build-rc/lib/libtessera.so python3 dev/probes/wrong_tiles.py --m 4096 $shape \
            --plan 128x32x128_s10_c1x1_blk --show 2 2>&1 | grep -E "^run|runs|plan" 
    done
done
