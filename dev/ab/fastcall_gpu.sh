#!/usr/bin/env bash
# Issue 32, one device call (~8 min): the prepared calls through tessera._fastcall. A full build
# (it makes build/lib/_fastcall.abi3.so beside the library), pytest over python/tests (the module
# on: every prepared call goes through it), then the host time per call with the module on and off
# (bench/python_overhead.py, dev/probes/host_time.py) beside the C library's own host time for the
# same decode GEMM (tessera bench gemm's host_us). Logs and CSVs under $OUT; a table last.
set -uo pipefail
rm -rf build  # a warm machine keeps the last call's objects, newer than this tree's sources
. dev/ab/gpu_common.sh
gpu_build
ls build/lib/_fastcall*.so || { echo "no _fastcall module built"; exit 1; }
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
timeout 200 python3 -m pytest -q -rs python/tests > $OUT/pytest.log 2>&1
echo "pytest rc=$?: $(tail -1 $OUT/pytest.log) ($SECONDS s)"; grep -E "^FAILED|^E " $OUT/pytest.log | head -20
for v in 1 0 1 0; do
    TESSERA_FASTCALL=$v timeout 60 python3 bench/python_overhead.py --m 1 --n 4096 --k 4096 --csv $OUT/python-overhead-fastcall$v.csv > $OUT/po$v.log 2>&1
    echo "TESSERA_FASTCALL=$v"; grep "tessera\|torch" $OUT/po$v.log
done
for v in 1 0; do TESSERA_FASTCALL=$v timeout 60 python3 dev/probes/host_time.py > $OUT/host_time-fastcall$v.txt 2>&1; echo "host_time TESSERA_FASTCALL=$v"; sed -n 2,5p $OUT/host_time-fastcall$v.txt; done
build/bin/tessera bench gemm --m=1 --n=4096 --k=4096 --A=bf16:row --B=bf16:col --D=bf16:row --output=$OUT/c-host.csv > $OUT/c-host.log 2>&1
python3 - $OUT/c-host.csv <<'PY'
import csv, sys
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    print(f"C library {r['provider']}: host_us {r['host_us']} ms {r['ms']}")
PY
echo "done $SECONDS s"
