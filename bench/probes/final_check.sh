#!/usr/bin/env bash
# Session 16's closing device call: every GPU test, the small-M suite
# (single calls and --chain=8), and every plan of shapes the fill-mode
# planner terms were not fitted on (held out), in one call. All output in
# $OUT/final.tgz. OUT=... bash bench/probes/final_check.sh BUILD
set -u
b=${1:-build}
mkdir -p /tmp/fc
TEST_SECONDS=${TEST_SECONDS:-150} bash bench/device_session.sh /tmp/fc $b smallm > /tmp/fc/session.txt 2>&1
tail -12 /tmp/fc/session.txt
cp bench/results/h200-smallm.* /tmp/fc/ 2>/dev/null
timeout 60 $b/bin/tessera bench gemm --A=bf16:row --B=bf16:col --D=bf16:row --suite=bench/suites/smallm.txt --chain=8 --output=/tmp/fc/h200-smallm-chain8.csv > /tmp/fc/chain8.txt 2>&1
$b/bin/tessera bench copy >> /tmp/fc/chain8.txt 2>&1
t="$b/bin/tessera bench gemm --plan=all --rounds=2 --warmup-iterations=5 --profiling-iterations=30"
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
for mnk in "--m=128 --n=8192 --k=8192" "--m=256 --n=2048 --k=7168" "--m=768 --n=4096 --k=4096" "--m=96 --n=4096 --k=7168" "--m=32 --n=7168 --k=4096"; do
  timeout 40 $t $mnk $bf >> /tmp/fc/heldout.txt 2>&1
  timeout 40 $t $mnk $f8 >> /tmp/fc/heldout.txt 2>&1
done
tar czf $OUT/final.tgz -C /tmp fc
