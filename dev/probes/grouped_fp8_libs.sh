#!/usr/bin/env bash
# The grouped FP8 G=8 x 4096 tokens cases of the moe suite (issue 6's target
# shape) with two builds of the library, for the A/B probes that compare
# builds (halves_prefetch_ab.sh; turns_ab.sh, since removed): each one's
# table tail printed under [a] and [b], full logs in OUT/grouped_a.txt and
# grouped_b.txt.
#   bash dev/probes/grouped_fp8_libs.sh OUT LIB_A LIB_B [TAIL_LINES]
out=${1:?usage: grouped_fp8_libs.sh OUT LIB_A LIB_B} lib_a=${2:?} lib_b=${3:?}
for v in a b; do
  lib=$([ $v = a ] && echo "$lib_a" || echo "$lib_b")
  PYTHONPATH=python TESSERA_LIBRARY=$lib python3 bench/grouped.py --suite bench/suites/moe.txt \
    --filter "4096 7168 8 4096" --reps 20 --rounds 2 > "$out/grouped_$v.txt" 2>&1
  echo "[$v]"; tail -"${4:-8}" "$out/grouped_$v.txt"
done
