#!/usr/bin/env bash
# Issue 34, branch w4a16-warpsplit: the W4A16 GEMV with nothing staged (X and the factors through L1,
# K split across a CTA's warps and summed in shared memory, no cluster) against main's kernel (staged X
# and scales, K slices across a cluster; dev/ab/w4a16_warpsplit.patch reversed), on a lab build:
# gpu_w4a16 and unit_int4 on the branch, then bench/w4a16.py --decode and bench/w4a16_moe.py for
# each kernel. Logs and CSVs under $OUT; a table of the decode and MoE rows' us last.
set -uo pipefail
. dev/ab/gpu_common.sh
INSTANCES=${INSTANCES:-'^f16_128x128_c1$'} gpu_build
gpu_tests "gpu_w4a16 unit_int4"
run() { # $1: the name of the kernel built now
    export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
    python3 bench/w4a16.py --decode --csv $OUT/h100-w4a16-$1.csv > $OUT/bench-$1.log 2>&1
    echo "bench $1 rc=$? ($SECONDS s)"
    python3 bench/w4a16_moe.py --csv $OUT/h100-w4a16-moe-$1.csv > $OUT/moe-$1.log 2>&1
    echo "moe $1 rc=$? ($SECONDS s)"
}
run new
patch -R -p1 < dev/ab/w4a16_warpsplit.patch > /dev/null &&
    { cmake --build build -j 16 > $OUT/rebuild.log 2>&1 || { tail $OUT/rebuild.log; exit 1; }; } && run main
echo "shape m: tinygemm copy | new main (us)"
grep -E "torch tinygemm" $OUT/bench-main.log | while read -r line; do
    key=$(echo "$line" | cut -c1-18)
    row="$key: $(echo "$line" | awk '{print $6}') $(grep -F "$key" $OUT/bench-main.log | grep -E "m=[0-9]+ +copy " | awk '{print $5}') |"
    for n in new main; do row="$row $(grep -F "$key" $OUT/bench-$n.log | grep "tessera w4a16" | awk '{print $6}')"; done
    echo "$row"
done
python3 - $OUT <<'PY'
import csv, os, sys
def rows(name):
    path = os.path.join(sys.argv[1], f"h100-w4a16-moe-{name}.csv")
    if not os.path.exists(path):
        return {}
    lines = [l for l in open(path) if not l.startswith("#")]
    return {(r["n"], r["k"], r["active"], r["m"], r["provider"]): r["us"] for r in csv.DictReader(lines)}
new, main = rows("new"), rows("main")
print("MoE n x k, active, m: tinygemm loop | new main (us)")
for (n, k, a, m, prov), us in main.items():
    if prov == "tinygemm loop":
        key = (n, k, a, m, "tessera masked")
        print(f"{n}x{k} active {a} m {m}: {us} | {new.get(key, '-')} {main.get(key, '-')}")
PY
