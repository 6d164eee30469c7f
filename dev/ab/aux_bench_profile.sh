#!/usr/bin/env bash
# Issue 33, one device call (~7 min): a full build of main with aux, pytest's aux and gradient tests, the
# epilogue suite's aux lines beside the same lines without aux (bursts, cuBLASLt's GELU_AUX_BIAS in the
# same process), then Nsight Compute on the bias line against plain at 4096^3 (epilogue_profile.sh).
# Logs, the CSV and the profile under $OUT; the bench log's table last.
set -uo pipefail
. dev/ab/gpu_common.sh
gpu_build
PYTEST_ADDOPTS="-k 'aux or fp8_matches or gradient'" gpu_pytest "python/tests/test_epilogue.py python/tests/test_ops.py"
grep -E -h -- "--aux$" bench/suites/epilogue.txt | sed 's/ --aux$//' > $OUT/aux-suite.txt
grep -E -h -- "--aux$" bench/suites/epilogue.txt >> $OUT/aux-suite.txt
build/bin/tessera bench gemm --suite=$OUT/aux-suite.txt --output=$OUT/h100-aux.csv > $OUT/aux-bench.log 2>&1
echo "bench rc=$? ($SECONDS s)"
mkdir -p $OUT/prof
OUT=$OUT/prof bash dev/ab/epilogue_profile.sh 4096 4096 4096 > $OUT/prof.txt 2>&1
echo "profile ($SECONDS s)"
head -40 $OUT/prof.txt
grep -vE "^#" $OUT/aux-bench.log | tail -30
cd $OUT && tar czf logs.tgz *.log prof && rm -rf *.log prof
