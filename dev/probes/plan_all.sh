#!/usr/bin/env bash
# Probe (issues 7 and 5, session 16): every plan of every small-M suite
# problem (and a few mid-sized fill-mode shapes), timed on the device, in the
# planner's ranking order (`tessera bench gemm --plan=all` lists plans
# best-ranked first), so that the planner's fill-mode terms can be fitted on
# this machine offline. Raw tool output in $OUT/plans.txt.
#   OUT=... bash dev/probes/plan_all.sh BUILD
set -u
b=${1:-build}
bash dev/ensure_build.sh $OUT $b || exit 1
t="$b/bin/tessera bench gemm --plan=all --rounds=2 --warmup-iterations=5 --profiling-iterations=30"
defaults=$(sed -n 's/^#! *//p' bench/suites/smallm.txt)
grep -v '^#' bench/suites/smallm.txt | grep -v '^ *$' | sed 's/--m=1,4,16/--m=4,16/; s/--m=1,16/--m=16/' > /tmp/smallm_plans.txt
$t $defaults --suite=/tmp/smallm_plans.txt > $OUT/plans.txt 2>&1
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
# (then the 5 held out from session 16's fit, fitted with the rest since session 17)
for mnk in "--m=256 --n=4096 --k=7168" "--m=512 --n=2048 --k=8192" "--m=256 --n=7168 --k=2048" "--m=1024 --n=1024 --k=8192" \
    "--m=128 --n=8192 --k=8192" "--m=256 --n=2048 --k=7168" "--m=768 --n=4096 --k=4096" "--m=96 --n=4096 --k=7168" "--m=32 --n=7168 --k=4096"; do
  $t $mnk $bf >> $OUT/plans.txt 2>&1
  $t $mnk $f8 >> $OUT/plans.txt 2>&1
done
