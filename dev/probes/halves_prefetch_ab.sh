#!/usr/bin/env bash
# Probe (issue 5, 2026-11-25): A/B of the block-scaled 128x256 promoted
# kernels reading the next K block's factors while a block's second half
# runs (consumer_mma_tile_promoted_halves) in one device call. Build B (the
# tree as given), run gpu_gemm_fp8 and gpu_grouped on it, keep its
# binaries, then rebuild the tree as A with mainloop.cuh from A_MAINLOOP (a
# copy of the file before the change, e.g. `git show
# 0ed8fe3:src/kernels/sm90/mainloop.cuh`, carried as an untracked file: the
# device's git history may be stale), restore the file, and time the same
# forced plans with both binaries, alternating, 3 rounds. The tried
# change is d9ee59c (backed out by dcc1609): to repeat, `git revert dcc1609`
# and `git show dcc1609:src/kernels/sm90/mainloop.cuh > mainloop_a.cuh`.
# Result (H200, 2026-11-25): B 1-3% slower (dev/NOTES.md).
#   OUT=... A_MAINLOOP=mainloop_a.cuh bash this
set -u
bash dev/ensure_build.sh $OUT build || exit 1
timeout 200 build/tests/gpu_gemm_fp8 > $OUT/fp8.log 2>&1; echo "gpu_gemm_fp8 (B) rc=$? $(tail -1 $OUT/fp8.log)"
TESS_TRIALS=20 timeout 200 build/tests/gpu_grouped > $OUT/grouped.log 2>&1
echo "gpu_grouped (B) rc=$? $(tail -1 $OUT/grouped.log)"
mkdir -p /tmp/b && cp build/bin/tessera /tmp/b/ && cp -a build/lib /tmp/b/
cp src/kernels/sm90/mainloop.cuh /tmp/mainloop_b.cuh
cp "${A_MAINLOOP:?}" src/kernels/sm90/mainloop.cuh || exit 1
cmake --build build -j 16 > $OUT/a.log 2>&1
rc=$?
cp /tmp/mainloop_b.cuh src/kernels/sm90/mainloop.cuh
[ $rc = 0 ] || { tail $OUT/a.log; exit 1; }
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
for mnk in "--m=4096 --n=7168 --k=16384 --plan=128x256x128_s4_c2x1_blk" \
           "--m=8192 --n=8192 --k=8192 --plan=128x256x128_s4_c2x1_blk_sk" \
           "--m=4096 --n=4096 --k=7168 --plan=128x256x128_s4_c2x1_blk" \
           "--m=4096 --n=7168 --k=2048 --plan=128x256x128_s3_c2x1_blk" \
           "--m=4096 --n=24576 --k=1536 --plan=128x256x128_s3_c2x1_blk"; do
  for round in 1 2 3; do
    for v in a b; do
      bin=$([ $v = a ] && echo build/bin/tessera || echo "env LD_LIBRARY_PATH=/tmp/b/lib /tmp/b/tessera")
      $bin bench gemm $mnk $f8 --providers=tessera --rounds=2 2>&1 | grep " tessera " | sed -E 's/  +/ /g' |
        awk -v v=$v '{for (i = 1; i <= NF; i++) if ($i == "TFLOP/s") f = $(i - 1); print v, $1, f}'
    done
  done
done > $OUT/ab.txt
# Grouped FP8, G=8 x 4096 tokens (issue 6's target shape), both builds.
bash dev/probes/grouped_fp8_libs.sh $OUT build/lib/libtessera.so /tmp/b/lib/libtessera.so 8
echo "== TFLOP/s per round, A (factors read at the block's top) vs B (read ahead)"
awk '{k = $2; v[$1, k] = v[$1, k] " " $3; keys[k] = 1} END {for (k in keys) print k, "A:" v["a", k], " B:" v["b", k]}' $OUT/ab.txt
