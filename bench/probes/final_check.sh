#!/usr/bin/env bash
# Session 16's closing device call: check_smallm.sh (every GPU test, the
# small-M suite single and chained) with every plan of the shapes the
# fill-mode planner terms were not fitted on (held out; plan_all.sh times
# them too since session 17). All output in $OUT/check.tgz.
#   OUT=... bash bench/probes/final_check.sh BUILD
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
problems=""
for mnk in "--m=128 --n=8192 --k=8192" "--m=256 --n=2048 --k=7168" "--m=768 --n=4096 --k=4096" \
    "--m=96 --n=4096 --k=7168" "--m=32 --n=7168 --k=4096"; do
  problems+="$mnk $bf"$'\n'"$mnk $f8"$'\n'
done
PLAN_PROBLEMS="$problems" bash bench/probes/check_smallm.sh "${1:-build}"
