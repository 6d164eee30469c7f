#!/usr/bin/env bash
# Probe (issue 7, 2026-11-25): A/B of the block-scaled e4m3 tensor-core GEMV
# factor prefetch (5a198fe, backed out by 67f4f41, brought back after this
# run) in one device call: build A (without it), keep its tessera binary,
# patch it in, rebuild B, gpu_gemm_fp8 on B, then every plan of five FP8
# decode shapes with both binaries (the two fastest rows and the GEMV rows).
# Run on a tree without the prefetch (67f4f41). OUT=... bash this
set -u
. bench/plan_table.sh
bash bench/ensure_build.sh $OUT build || exit 1
mkdir -p /tmp/a && cp build/bin/tessera /tmp/a/ && cp -a build/lib /tmp/a/
git show 67f4f41 | patch -p1 -R > /dev/null || exit 1 # the prefetch (5a198fe) on top of its back-out
cmake --build build -j 16 > $OUT/b.log 2>&1 || { tail $OUT/b.log; exit 1; }
timeout 200 build/tests/gpu_gemm_fp8 > $OUT/fp8.log 2>&1; echo "gpu_gemm_fp8 (prefetch) rc=$? $(tail -1 $OUT/fp8.log)"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
for mnk in "--m=4 --n=4096 --k=7168" "--m=8 --n=2112 --k=7168" "--m=16 --n=4096 --k=7168" "--m=4 --n=7168 --k=2048" "--m=1 --n=4096 --k=7168"; do
  for v in a b; do
    bin=$([ $v = a ] && echo "env LD_LIBRARY_PATH=/tmp/a/lib /tmp/a/tessera" || echo build/bin/tessera)
    $bin bench gemm $mnk $f8 --plan=all --rounds=3 --profiling-iterations=50 > $OUT/p.txt 2>&1
    echo "[$v]"; plan_table $OUT/p.txt 2 'gemv_e4m3.*blk_mma'
  done
done
