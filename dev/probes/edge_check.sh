#!/usr/bin/env bash
# Probe (issues 7 and 5, session 17): tiles whose rows end inside them load
# only the rows that exist (tma_a_edge / tma_b_edge). The dense GPU tests,
# then every plan of the padded small-M problems, raw output in
# $OUT/plans.txt, the best few of each printed.
#   OUT=... bash dev/probes/edge_check.sh BUILD
set -u
b=${1:-build}
bash dev/ensure_build.sh $OUT $b || exit 1
for t in gpu_gemm gpu_gemm_fp8; do
  timeout 300 stdbuf -oL $b/tests/$t > $OUT/$t.log 2>&1
  echo "$t rc=$? $(grep -c 'check failed' $OUT/$t.log) failed; $(tail -1 $OUT/$t.log)"
done
t="$b/bin/tessera bench gemm --plan=all --rounds=2 --warmup-iterations=5 --profiling-iterations=30"
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
: > $OUT/plans.txt
while read -r flags; do
  $t $flags > $OUT/one.txt 2>&1
  cat $OUT/one.txt >> $OUT/plans.txt
  echo "== $flags"
  grep tessera $OUT/one.txt | head -1 | awk '{print "   planner pick:", $5, $(NF-2), $NF}'
  grep tessera $OUT/one.txt | sort -k5 -n | head -4 | awk '{print "   ", $5, $(NF-2), $NF}'
  grep cublas $OUT/one.txt | awk '{print "    cublas", $5}'
done <<LIST
--m=64 --n=4096 --k=7168 $bf
--m=64 --n=2112 --k=7168 $bf
--m=128 --n=2112 --k=7168 $bf
--m=4 --n=4096 --k=7168 $bf
--m=64 --n=7168 --k=2048 $f8
--m=64 --n=2112 --k=7168 $f8
--m=96 --n=4096 --k=7168 $bf
LIST
