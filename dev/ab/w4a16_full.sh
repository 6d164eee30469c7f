#!/usr/bin/env bash
# Issue 34's committed W4A16 results from a full build of the working tree, in one device call (~6 min):
# gpu_w4a16 and unit_int4, then bench/w4a16.py (decode and M = 4096 rows, beside tinygemm, tessera's bf16
# and the copy), bench/w4a16_moe.py (64 experts) and the CLI's 4-bit suite, with their charts; all under
# $OUT as bench/results names them (h100-w4a16.csv, h100-w4a16-moe.csv, h100-w4a16-cli.csv + PNGs).
set -uo pipefail
. dev/ab/gpu_common.sh
gpu_build
gpu_tests "gpu_w4a16 unit_int4"
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
python3 bench/w4a16.py --csv $OUT/h100-w4a16.csv > $OUT/w4a16.log 2>&1; echo "w4a16 rc=$? ($SECONDS s)"
python3 bench/w4a16_moe.py --csv $OUT/h100-w4a16-moe.csv > $OUT/moe.log 2>&1; echo "moe rc=$? ($SECONDS s)"
timeout 120 build/bin/tessera bench gemm --suite=bench/suites/w4a16.txt --output=$OUT/h100-w4a16-cli.csv \
    > $OUT/cli.log 2>&1; echo "cli rc=$? ($SECONDS s)"
for f in h100-w4a16 h100-w4a16-moe; do python3 bench/plot_w4a16.py $OUT/$f.csv > /dev/null 2>&1 || echo "no chart $f"; done
grep -E "tessera w4a16|torch tinygemm" $OUT/w4a16.log | grep -E "m=1 |m=4096" | head -20
grep -E "tessera masked" $OUT/moe.log | head -8
