#!/usr/bin/env bash
# Issue 32: host time of prepared calls with the thread's tensor-map cache (src/core/tensor_map.c)
# and without it (its lookup switched off by sed), in one device call: two partial builds
# (INSTANCES, about a minute each), then dev/probes/host_time.py on each, twice in turn. The
# cache's correctness is the full GPU tests' (dev/ab/w4a16_gpu.sh tests).
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
inst=${INSTANCES:-'^(fp8|f16)_128x(64|128)'}
build() { # build DIR
    { cmake -S . -B $1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESS_INSTANCES="$inst" &&
      cmake --build $1 -j 16 --target tessera; } > $OUT/build-$1.log 2>&1 ||
        { grep -B2 -A6 error $OUT/build-$1.log | head -30; exit 1; }
    echo "built $1 ($SECONDS s)"
}
build cached
cp src/core/tensor_map.c /tmp/tensor_map.c.keep
sed -i 's/    if (cached_map(map, &key))/    if (0 \&\& cached_map(map, \&key))/' src/core/tensor_map.c
grep -c "0 && cached_map" src/core/tensor_map.c
build uncached
cp /tmp/tensor_map.c.keep src/core/tensor_map.c
for b in uncached cached uncached cached; do
    echo "== $b"
    PYTHONPATH=python TESSERA_LIBRARY=$PWD/$b/lib/libtessera.so timeout 100 python3 dev/probes/host_time.py \
        > $OUT/host-$b.txt 2>&1
    grep -iE "us a call|per call|tessera|torch" $OUT/host-$b.txt | head -8
done
