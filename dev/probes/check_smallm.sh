#!/usr/bin/env bash
# A session's check of issue 7's work in one call: every GPU test, the
# small-M suite (single calls and --chain=8, with the copy rate measured
# right after), and every plan (--plan=all) of a few problems: the lines of
# $PLAN_PROBLEMS (`tessera bench gemm` flags, one problem a line; default
# the FP8 block-scaled M = 64 rows). All output in $OUT/check.tgz.
#   OUT=... bash dev/probes/check_smallm.sh BUILD
set -u
b=${1:-build}
mkdir -p /tmp/fc
TEST_SECONDS=${TEST_SECONDS:-150} bash dev/device_session.sh /tmp/fc $b smallm > /tmp/fc/session.txt 2>&1
tail -12 /tmp/fc/session.txt | head -9
cp bench/results/h200-smallm.* /tmp/fc/ 2>/dev/null
# (The chained suite takes ~90 s on an H200; 60 s cut it short in session 17.)
timeout 240 $b/bin/tessera bench gemm --A=bf16:row --B=bf16:col --D=bf16:row --suite=bench/suites/smallm.txt \
    --chain=8 --output=/tmp/fc/h200-smallm-chain8.csv > /tmp/fc/chain8.txt 2>&1
$b/bin/tessera bench copy >> /tmp/fc/chain8.txt 2>&1
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
problems=${PLAN_PROBLEMS:-"--m=64 --n=7168 --k=2048 $f8
--m=64 --n=32768 --k=512 $f8"}
while read -r flags; do
  [ -n "$flags" ] && timeout 60 $b/bin/tessera bench gemm --plan=all --rounds=2 --warmup-iterations=5 \
      --profiling-iterations=30 $flags >> /tmp/fc/plans.txt 2>&1
done <<< "$problems"
tar czf $OUT/check.tgz -C /tmp fc
