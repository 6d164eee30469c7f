#!/usr/bin/env bash
# gpu_grouped on one seed, each plan named before it runs (TESS_TEST_TRACE),
# on this tree and on a baseline (.peers/base.tar): where a run hangs.
#   TESS_SEED=... bash dev/ab/grouped_hang.sh
set -uo pipefail
rm -rf /tmp/gh-base && mkdir -p /tmp/gh-base && tar -xf .peers/base.tar -C /tmp/gh-base
cp tests/gpu/gpu_skip.h /tmp/gh-base/tests/gpu/gpu_skip.h
for v in "$PWD" /tmp/gh-base; do
    { cmake -S "$v" -B "$v/build-gh" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$v/build-gh" -j 16 --target gpu_grouped; } \
        > "$v.gh-build.log" 2>&1 &
done
wait
for v in "$PWD" /tmp/gh-base; do
    TESS_TEST_TRACE=1 timeout 60 "$v/build-gh/tests/gpu_grouped" > "$OUT/$(basename "$v").log" 2>&1
    echo "== $v rc=$?"; tail -4 "$OUT/$(basename "$v").log"
done
