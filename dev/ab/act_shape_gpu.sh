#!/usr/bin/env bash
# Issue 33, branch act-shape: the inline 16-bit fused store compiled once per activation shape
# (no branches over the other shapes' code in its unrolled blocks), against main's run-time
# choice. One device call (~8 min), a lab build of the tiles the planner takes for the epilogue
# suite's large shapes: gpu_gemm and gpu_gemm_fp8 on the branch, then the suite's plain, bias and
# activation lines (no residual, aux or gate) timed new / main / new (dev/ab/act_shape.patch
# reversed for main), tessera alone, bursts. TESTS="" skips the tests (a lab build lacks the
# tiles for many of their problems: those report 'no kernel in this build', not failures). Logs and CSVs under $OUT; a table last.
set -uo pipefail
. dev/ab/gpu_common.sh
INSTANCES=${INSTANCES:-'^(f16_128x256_c2|fp8_128x256_c2_rows|fp8_128x256_c2_promote)$'} gpu_build
[ -n "${TESTS-gpu_gemm gpu_gemm_fp8}" ] && gpu_tests "${TESTS-gpu_gemm gpu_gemm_fp8}"
grep -E "^--" bench/suites/epilogue.txt | grep -vE -- "--(residual|aux|gate|D=|out-scale)" > $OUT/suite.txt
bench() { # $1: the CSV's name
    build/bin/tessera bench gemm --providers=tessera --suite=$OUT/suite.txt --output=$OUT/$1.csv > $OUT/bench-$1.log 2>&1
    echo "bench $1 rc=$? ($SECONDS s)"
}
rebuild() { cmake --build build -j 16 > $OUT/rebuild-$1.log 2>&1 || { tail $OUT/rebuild-$1.log; exit 1; }; }
bench new1
git apply -R dev/ab/act_shape.patch && rebuild main && bench main
git apply dev/ab/act_shape.patch && rebuild new && bench new2
python3 - $OUT <<'PY'
import csv, os, sys
def rows(name):
    lines = [l for l in open(os.path.join(sys.argv[1], name + ".csv")) if not l.startswith("#")]
    return [r for r in csv.DictReader(lines)]
runs = {n: rows(n) for n in ["new1", "main", "new2"]}
print("problem: main ms | new1 new2 ms | new/main")
for i, r in enumerate(runs["main"]):
    a = r["a_type"]; label = f"{r['m']}x{r['n']}x{r['k']} {a} {r['bias']} {r['activation']}"
    mn, n1, n2 = float(r["ms"]), float(runs["new1"][i]["ms"]), float(runs["new2"][i]["ms"])
    print(f"{label}: {mn:.4f} | {n1:.4f} {n2:.4f} | {min(n1, n2) / mn:.3f}")
PY
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
