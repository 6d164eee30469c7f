#!/usr/bin/env bash
# Builds tessera (Release, Ninja) into BUILD unless it already holds a build,
# logging to OUT/build.log; on failure prints the log's tail and exits 1. The
# device scripts of dev/ and dev/probes/ start with it, from the repository
# root.
#   bash dev/ensure_build.sh OUT BUILD
out=${1:?usage: ensure_build.sh OUT BUILD} build=${2:?usage: ensure_build.sh OUT BUILD}
[ -x "$build/bin/tessera" ] && exit 0
{ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$(nproc)"; } \
    > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
