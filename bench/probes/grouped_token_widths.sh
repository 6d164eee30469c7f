#!/usr/bin/env bash
# Probe (issue 6): the grouped token tiles' widths on small-group moe cases.
# Builds into build/ unless it holds one, then runs bench/grouped.py with
# the plan forced to the 32- and 64-wide token tiles (16-wide is what
# bench/grouped_tokens_check.sh measured first), bf16 and FP8, on four
# cases; CSVs packed into $OUT/widths.tgz, one line per tessera row printed.
#   OUT=/tmp/out bash bench/probes/grouped_token_widths.sh
set -u
export PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so
bash bench/ensure_build.sh $OUT build || exit 1
w=$(mktemp -d)
for f in "4096 7168 256 16" "4096 7168 64 16" "4096 7168 8 16" "4096 7168 32 128"; do
  for o in 128x32x64_s10_swap 128x64x64_s9_swap; do
    python3 bench/grouped.py --filter "$f" --dtype bf16 --reps 20 --order $o --csv "$w/b_${f// /_}_$o.csv" > /dev/null 2>&1
  done
  for o in 128x32x128_s10 128x64x128_s8; do
    python3 bench/grouped.py --filter "$f" --dtype fp8 --reps 20 --order $o --csv "$w/f_${f// /_}_$o.csv" > /dev/null 2>&1
  done
done
tar czf $OUT/widths.tgz -C $w .
for c in $w/*.csv; do grep -v '^#' $c | awk -F, '$9=="tessera" {print $1"x"$2, "G="$3, "t="$4, $5, $10, $12, $15, $11}'; done
