#!/usr/bin/env bash
# Grouped plans side by side: build (unless BUILD holds one), gpu_grouped
# (TESTS=0 skips it), then bench/grouped.py on the moe-suite cases matching
# each of FILTERS, once per entry of PLANS (bench/grouped.py --order values,
# "heur" for the heuristic's plan; e.g. "heur|swap_band$|s4_c2x1"), for each
# of DTYPES. Logs and CSVs in OUT/ab.tgz; prints one line per case and
# recipe: each variant's ms and plan, then torch's ms.
#   FILTERS="16 skewed|16 uniform" PLANS="heur|swap_band$" bash dev/probes/grouped_ab.sh OUT BUILD
# Used for split tails (session 20; that A/B also ran a switch 4a275c3's
# core/grouped.c read, TESS_AB_NO_SPLIT_TAILS) and mixed plans. It also
# does what two earlier scripts did (the grouped token tiles' first runs):
#   grouped_tokens_check.sh, heuristic against 128-row tiles:
#     FILTERS="4096 7168 256 16|4096 7168 8 16|7168 2048 64 16|4096 7168 32 128" PLANS="heur|_s4_"
#   probes/grouped_token_widths.sh, 32- and 64-wide token tiles:
#     TESTS=0 FILTERS="4096 7168 256 16|4096 7168 64 16|4096 7168 8 16|4096 7168 32 128" \
#     PLANS="128x32x|128x64x"
set -uo pipefail
out=${1:?usage: grouped_ab.sh OUT BUILD} build=${2:?usage: grouped_ab.sh OUT BUILD}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$work/device.txt"
bash dev/ensure_build.sh "$work" "$build" || exit 1
if [ "${TESTS:-1}" != 0 ]; then
    timeout "${TEST_SECONDS:-240}" stdbuf -oL -eL "$build/tests/gpu_grouped" > "$work/gpu_grouped.log" 2>&1
    echo "gpu_grouped rc=$? $(grep -c 'check failed' "$work/gpu_grouped.log") failed; $(tail -1 "$work/gpu_grouped.log")"
    grep -A1 'check failed' "$work/gpu_grouped.log" | head -12
fi
export PYTHONPATH=python TESSERA_LIBRARY="$build/lib/libtessera.so"
IFS='|' read -ra filters <<< "${FILTERS:-16 skewed|16 uniform}"
IFS='|' read -ra plans <<< "${PLANS:-heur|swap_band\$}"
for i in "${!filters[@]}"; do
    for dtype in ${DTYPES:-bf16 fp8}; do
        for j in "${!plans[@]}"; do
            force=(); [ "${plans[$j]}" != heur ] && force=(--order "${plans[$j]}")
            python3 bench/grouped.py --filter "${filters[$i]}" --dtype "$dtype" --reps "${REPS:-20}" --check-groups 4 \
                "${force[@]}" --csv "$work/ab_${i}_${dtype}_$j.csv" > "$work/ab_${i}_${dtype}_$j.log" 2>&1 \
                || { echo "FAILED: ${filters[$i]} $dtype ${plans[$j]}"; tail -5 "$work/ab_${i}_${dtype}_$j.log"; }
        done
    done
done
tar czf "$out/ab.tgz" -C "$work" .
echo "== case dtype/recipe: ms (plan) per variant [${PLANS:-heur|swap_band\$}], torch ms"
python3 - "$work" "${#plans[@]}" <<'PY'
import csv, glob, os, sys
work, variants = sys.argv[1], int(sys.argv[2])
def load(path):
    if not os.path.exists(path): return {}
    rows = [r for r in csv.DictReader(l for l in open(path) if not l.startswith("#"))]
    return {(r["n"], r["k"], r["groups"], r["tokens_per_group"], r["split"], r["dtype"], r["provider"], r["recipe"]): r
            for r in rows}
for first in sorted(glob.glob(f"{work}/ab_*_0.csv")):
    stem = first[:-len("0.csv")]
    runs = [load(f"{stem}{j}.csv") for j in range(variants)]
    for key, r in runs[0].items():
        if r["provider"] != "tessera":
            continue
        torch_key = key[:6] + ("torch", "none" if key[5] == "bf16" else "rowwise")
        cells = []
        for run in runs:
            x = run.get(key, {})
            plan = x.get("plan", "").replace("sm90_", "").replace("_grouped", "")
            cells.append(f'{x.get("ms", "-") or "-"} ({plan}, err {x.get("rel_error", "-")})')
        print(f'{r["n"]}x{r["k"]} G={r["groups"]} t={r["tokens_per_group"]} {r["split"]} {r["dtype"]}/{r["recipe"]}: '
              + " | ".join(cells) + f' | torch {runs[0].get(torch_key, {}).get("ms", "-")}')
PY
