#!/usr/bin/env bash
# Split tails A/B (grouped clusters of 2: a group's last tile row of at most
# 128 rows split along N, kernels/common/sched.h): build (unless BUILD holds
# one), gpu_grouped, then bench/grouped.py on the cases matching each of
# FILTERS with split tails and without (TESS_AB_NO_SPLIT_TAILS=1: a switch
# that 4a275c3's core/grouped.c read, removed once measured), and for bf16 with FORCE (a plan-name piece,
# e.g. the clusters-of-1 kernel's) where given. Logs and CSVs in OUT/ab.tgz.
#   bash bench/probes/split_tails_ab.sh OUT BUILD
set -uo pipefail
out=${1:?usage: split_tails_ab.sh OUT BUILD} build=${2:?usage: split_tails_ab.sh OUT BUILD}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$work/device.txt"
bash bench/ensure_build.sh "$work" "$build" || exit 1
if [ "${TESTS:-1}" != 0 ]; then
    timeout "${TEST_SECONDS:-240}" stdbuf -oL -eL "$build/tests/gpu_grouped" > "$work/gpu_grouped.log" 2>&1
    echo "gpu_grouped rc=$? $(grep -c 'check failed' "$work/gpu_grouped.log") failed; $(tail -1 "$work/gpu_grouped.log")"
    grep -A1 'check failed' "$work/gpu_grouped.log" | head -12
fi
export PYTHONPATH=python TESSERA_LIBRARY="$build/lib/libtessera.so"
IFS='|' read -ra filters <<< "${FILTERS:-256 skewed|256 uniform}"
i=0
for f in "${filters[@]}"; do
    for dtype in ${DTYPES:-bf16}; do
        common=(--filter "$f" --dtype "$dtype" --reps "${REPS:-20}" --check-groups 4)
        python3 bench/grouped.py "${common[@]}" --csv "$work/split_$i$dtype.csv" > "$work/split_$i$dtype.log" 2>&1
        TESS_AB_NO_SPLIT_TAILS=1 python3 bench/grouped.py "${common[@]}" --csv "$work/idle_$i$dtype.csv" \
            > "$work/idle_$i$dtype.log" 2>&1
        if [ -n "${FORCE:-}" ] && [ "$dtype" = bf16 ]; then
            python3 bench/grouped.py "${common[@]}" --order "$FORCE" --csv "$work/force_$i$dtype.csv" \
                > "$work/force_$i$dtype.log" 2>&1
        fi
    done
    i=$((i + 1))
done
tar czf "$out/ab.tgz" -C "$work" .
echo "== case dtype/recipe: split ms, idle ms, [forced ms], torch ms; split vs torch; plans"
python3 - "$work" <<'PY'
import csv, glob, os, sys
def load(path):
    if not os.path.exists(path): return {}
    rows = [r for r in csv.DictReader(l for l in open(path) if not l.startswith("#"))]
    return {(r["n"], r["k"], r["groups"], r["tokens_per_group"], r["split"], r["dtype"], r["provider"], r["recipe"]): r for r in rows}
work = sys.argv[1]
for sp in sorted(glob.glob(f"{work}/split_*.csv")):
    tag = os.path.basename(sp)[len("split_"):]
    a, b, c = load(sp), load(f"{work}/idle_{tag}"), load(f"{work}/force_{tag}")
    for key, r in a.items():
        if r["provider"] != "tessera" or not r["ms"]: continue
        tkey = key[:6] + ("torch", "none" if key[5] == "bf16" else "rowwise")
        t = a.get(tkey, {}).get("ms", "")
        idle, forced = b.get(key, {}), c.get(key, {})
        print(f'{r["n"]}x{r["k"]} G={r["groups"]} t={r["tokens_per_group"]} {r["split"]} {r["dtype"]}/{r["recipe"]}: '
              f'{r["ms"]} {idle.get("ms", "-")} {forced.get("ms", "-")} torch {t}; {r["vs_torch"]}x; '
              f'{r["plan"]} | {forced.get("plan", "")} | err {r["rel_error"]}')
PY
