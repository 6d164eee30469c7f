#!/usr/bin/env bash
# Issue 34, branch w4a16-kpack: four W4A16 GEMVs in one device call, on a lab build:
#   kpack      the branch: nothing staged, K split across a CTA's warps, and a quad's k order that gives
#              each lane 16 consecutive columns (X's fragments two 16-byte loads a token row; the
#              dequantizer writes straight from registers)
#   occ        kpack with dev/ab/w4a16_occupancy.patch: X loaded at its quad (not a quad ahead) and one
#              codes buffer, so the 1-tile kernel fits 64 registers and 4 CTAs an SM (the grid may
#              then take more CTAs): more warps in flight, as tinygemm hides latency
#   warpsplit  the same kernel on the original k order (dev/ab/w4a16_kpack.patch reversed)
#   main       main's kernel: X and the scales staged, K slices across a cluster
#              (dev/ab/w4a16_warpsplit.patch reversed as well)
# gpu_w4a16 and unit_int4 on kpack, gpu_w4a16 on occ; bench/w4a16.py --decode and bench/w4a16_moe.py on each;
# the M = 4096 rows (the dequantizer) for kpack and main. Logs and CSVs under $OUT; tables last.
set -uo pipefail
. dev/ab/gpu_common.sh
INSTANCES=${INSTANCES:-'^f16_128x128_c1$'} gpu_build
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
rebuild() { cmake --build build -j 16 > $OUT/rebuild-$1.log 2>&1 || { tail $OUT/rebuild-$1.log; exit 1; }; }
run() { # $1: the kernel built now; $2: also the M = 4096 rows
    local rows=--decode
    [ -n "${2:-}" ] && rows=--rounds=2
    python3 bench/w4a16.py $rows --csv $OUT/h100-w4a16-$1.csv > $OUT/bench-$1.log 2>&1
    echo "bench $1 rc=$? ($SECONDS s)"
    python3 bench/w4a16_moe.py --csv $OUT/h100-w4a16-moe-$1.csv > $OUT/moe-$1.log 2>&1
    echo "moe $1 rc=$? ($SECONDS s)"
}
gpu_tests "gpu_w4a16 unit_int4"
run kpack all
patch -p1 < dev/ab/w4a16_occupancy.patch > /dev/null && rebuild occ && {
    cp $OUT/gpu_w4a16.log $OUT/gpu_w4a16-kpack.log; gpu_tests gpu_w4a16; run occ; }
patch -R -p1 < dev/ab/w4a16_occupancy.patch > /dev/null
patch -R -p1 < dev/ab/w4a16_kpack.patch > /dev/null && rebuild warpsplit && run warpsplit
patch -R -p1 < dev/ab/w4a16_warpsplit.patch > /dev/null && rebuild main && run main all
python3 - $OUT <<'PY'
import csv, os, sys
names = ["kpack", "occ", "warpsplit", "main"]
def rows(prefix, name, key):
    path = os.path.join(sys.argv[1], f"{prefix}{name}.csv")
    if not os.path.exists(path):
        return {}
    lines = [l for l in open(path) if not l.startswith("#")]
    return {key(r): r for r in csv.DictReader(lines)}
dec = {n: rows("h100-w4a16-", n, lambda r: (r["n"], r["k"], r["m"], r["provider"])) for n in names}
print("decode n x k m: tinygemm copy | " + " ".join(names) + " (us)")
for (n, k, m, prov), r in dec["main"].items():
    if prov == "torch tinygemm":
        copy = dec["main"].get((n, k, m, "copy"), {}).get("us", "-")
        ours = [dec[x].get((n, k, m, "tessera w4a16"), {}).get("us", "-") for x in names]
        print(f"{n}x{k} m {m}: {r['us']} {copy} | " + " ".join(ours))
moe = {n: rows("h100-w4a16-moe-", n, lambda r: (r["n"], r["k"], r["active"], r["m"], r["provider"])) for n in names}
print("MoE n x k active m: tinygemm loop | " + " ".join(names) + " (us)")
for (n, k, a, m, prov), r in moe["main"].items():
    if prov == "tinygemm loop":
        ours = [moe[x].get((n, k, a, m, "tessera masked"), {}).get("us", "-") for x in names]
        print(f"{n}x{k} active {a} m {m}: {r['us']} | " + " ".join(ours))
PY
