#!/usr/bin/env bash
# One device call for the grouped token tiles (transposed MMA for small
# groups): build (unless BUILD holds one), gpu_grouped (every plan of its
# cases, token tiles included), then bench/grouped.py on the small-group
# cases of the moe suite matching each of FILTERS, twice: the heuristic's plan
# and the best-ranked 128-row plan (--order x64_s4_ for bf16, x128_s4_ for
# FP8: no token tile has 4 stages). Logs and CSVs packed into OUT/tokens.tgz.
#   bash bench/grouped_tokens_check.sh OUT BUILD
#   TESTS=0 skips the GPU test; FILTERS="4096 7168 256 16|..." picks cases.
set -uo pipefail
out=${1:?usage: grouped_tokens_check.sh OUT BUILD} build=${2:?usage: grouped_tokens_check.sh OUT BUILD}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$work/device.txt"
bash bench/ensure_build.sh "$work" "$build" || exit 1
if [ "${TESTS:-1}" != 0 ]; then
    timeout "${TEST_SECONDS:-300}" stdbuf -oL -eL "$build/tests/gpu_grouped" > "$work/gpu_grouped.log" 2>&1
    echo "gpu_grouped rc=$? $(grep -c 'check failed' "$work/gpu_grouped.log") failed; $(tail -1 "$work/gpu_grouped.log")"
    grep -A1 'check failed' "$work/gpu_grouped.log" | head -12
fi
export PYTHONPATH=python TESSERA_LIBRARY="$build/lib/libtessera.so"
IFS='|' read -ra filters <<< "${FILTERS:-4096 7168 256 16|4096 7168 8 16|7168 2048 64 16|4096 7168 32 128}"
i=0
for f in "${filters[@]}"; do
    for dtype in bf16 fp8; do
        old=$([ $dtype = bf16 ] && echo x64_s4_ || echo x128_s4_)
        python3 bench/grouped.py --filter "$f" --dtype $dtype --reps 20 --csv "$work/new_$i$dtype.csv" > "$work/new_$i$dtype.log" 2>&1
        python3 bench/grouped.py --filter "$f" --dtype $dtype --reps 20 --order $old --csv "$work/old_$i$dtype.csv" > "$work/old_$i$dtype.log" 2>&1
    done
    i=$((i + 1))
done
tar czf "$out/tokens.tgz" -C "$work" .
echo "== case, provider/recipe, ms, TFLOP/s, weight GB/s, of copy, plan (heuristic, then 128-row)"
for c in "$work"/new_*.csv "$work"/old_*.csv; do
    python3 - "$c" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
for r in rows:
    if r["provider"] == "tessera" or r["provider"] == "torch":
        print(f'{r["n"]}x{r["k"]} G={r["groups"]} t={r["tokens_per_group"]} {r["split"]} {r["provider"]}/{r["recipe"]} {r["ms"]} '
              f'{r["tflops"]} {r["weight_gbs"]} {r["weight_vs_copy"]} {r["plan"]}')
PY
done
