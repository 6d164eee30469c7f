#!/usr/bin/env bash
# Probe (issue 5, 2026-11-25, session 19): do the promoting FP8 kernels
# need their consumer warpgroups to take turns issuing wgmmas? Builds the
# tree twice in one device call: A as given (turns), B with
# -DTESS_PROBE_NO_TURNS (mma_turn_wait / mma_turn_pass compiled out, every
# warp releasing its stages of block-scaled kernels, as DeepGEMM's
# sm90_fp8_gemm_1d2d does without turns). Runs gpu_gemm_fp8 and
# gpu_grouped on B, then times forced plans with both binaries,
# alternating, 3 rounds each, and the grouped FP8 G=8 x 4096 cases.
# The switch is gone from the tree (tie for block scaling, turns ahead for
# per-tensor: bench/NOTES.md, session 19); to repeat, check out 708dd4f.
#   OUT=... bash bench/probes/turns_ab.sh   (SKIP_CHECKS=1: the timed plans only)
set -u
bash bench/ensure_build.sh $OUT build || exit 1
# B's grouped 128x256 kernel spills 8 bytes without the turns: allowed here (ptxas warnings are errors otherwise).
[ -x build_nt/bin/tessera ] || { cmake -S . -B build_nt -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS=-DTESS_PROBE_NO_TURNS &&
  sed -i 's/--Werror=all-warnings//g' build_nt/build.ninja && cmake --build build_nt -j "$(nproc)"; } > $OUT/build_nt.log 2>&1 || { tail -30 $OUT/build_nt.log; exit 1; }
if [ -z "${SKIP_CHECKS:-}" ]; then
timeout 150 build_nt/tests/gpu_gemm_fp8 > $OUT/fp8_nt.log 2>&1; echo "gpu_gemm_fp8 (B) rc=$? $(tail -1 $OUT/fp8_nt.log)"
TESS_TRIALS=10 timeout 100 build_nt/tests/gpu_grouped > $OUT/grouped_nt.log 2>&1
echo "gpu_grouped (B) rc=$? $(tail -1 $OUT/grouped_nt.log)"
fi
blk="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
ten="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=tensor --scale-b=tensor"
while read -r recipe mnk; do
  for round in 1 2 3; do
    for v in a b; do
      bin=$([ $v = a ] && echo build/bin/tessera || echo build_nt/bin/tessera)
      $bin bench gemm ${mnk//@/ } --providers=tessera --rounds=2 2>&1 | grep " tessera " | sed -E 's/  +/ /g' |
        awk -v v=$v -v p="$recipe" '{for (i = 1; i <= NF; i++) if ($i == "TFLOP/s") f = $(i - 1); print v, $1 "|" p, f}'
    done
  done
done > $OUT/ab.txt <<CASES
blk --m=4096 --n=7168 --k=16384 --plan=128x256x128_s4_c2x1_blk ${blk// /@}
blk --m=8192 --n=8192 --k=8192 --plan=128x256x128_s4_c2x1_blk_sk ${blk// /@}
blk --m=4096 --n=4096 --k=7168 --plan=128x256x128_s4_c2x1_blk ${blk// /@}
blk --m=4096 --n=7168 --k=2048 --plan=128x256x128_s4_c2x1_blk ${blk// /@}
blk --m=4096 --n=2112 --k=7168 --plan=128x192x128_s5_c2x1_blk ${blk// /@}
ten --m=8192 --n=8192 --k=8192 --plan=128x256x128_s4_c2x1_pr_sk ${ten// /@}
ten --m=4096 --n=7168 --k=16384 --plan=128x256x128_s4_c2x1_pr ${ten// /@}
CASES
[ -n "${SKIP_CHECKS:-}" ] || bash bench/probes/grouped_fp8_libs.sh $OUT build/lib/libtessera.so build_nt/lib/libtessera.so 6
echo "== TFLOP/s per round, A (turns) vs B (no turns)"
awk '{k = $2; v[$1, k] = v[$1, k] " " $3; keys[k] = 1} END {for (k in keys) print k, "A:" v["a", k], " B:" v["b", k]}' $OUT/ab.txt
