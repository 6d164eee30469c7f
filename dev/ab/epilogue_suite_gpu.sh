#!/usr/bin/env bash
# Issue 33, one device call (~8 min): a full build of this tree, gpu_gemm, gpu_gemm_fp8, gpu_grouped (the
# fused epilogue's random problems on every plan), then the whole epilogue suite against cuBLASLt
# (bench/run's command: bursts, 4 rounds, the same process) into $OUT/h100-epilogue.csv. Logs under
# $OUT; the bench table last.
set -uo pipefail
rm -rf build  # a warm machine keeps the last call's objects, newer than this tree's sources
TESTS="gpu_gemm gpu_gemm_fp8 gpu_grouped" bash dev/ab/kernels_gpu.sh || exit 1
build/bin/tessera bench gemm --suite=bench/suites/epilogue.txt --output=$OUT/h100-epilogue.csv > $OUT/epilogue.log 2>&1
echo "bench rc=$? ($SECONDS s)"
python3 - $OUT/h100-epilogue.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
for r in rows:
    extra = " ".join(x for x in [r["bias"] != "none" and "bias", r["activation"] != "none" and r["activation"],
                                 r.get("residual") == "1" and "residual", r.get("gate", "none") != "none" and "gate",
                                 r.get("aux") == "1" and "aux"] if x)
    print(f"{r['m']}x{r['n']}x{r['k']} {r['a_type']} {extra or 'plain'} {r['provider']}: {r['ms']} ms")
PY
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
