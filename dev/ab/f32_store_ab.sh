#!/usr/bin/env bash
# A/B of the register-stored epilogue (f32 D, row-major): this tree against
# the same tree with src/kernels/sm90/epilogue.cuh from $BASE (default HEAD),
# in one call: both built, gpu_gemm on this tree, then `tessera bench gemm`
# of TF32, bf16 and FP8 problems with f32 D from each build, alternating.
#   bash dev/ab/f32_store_ab.sh        (BASE=<commit> or BASE_FILE=<path>; TESTS="gpu_gemm gpu_grouped ..." or TESTS=0)
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
rm -rf /tmp/base && mkdir -p /tmp/base && cp -r $(git ls-files | cut -d/ -f1 | sort -u) /tmp/base/ 2>/dev/null
# The device's copy of .git may be older than the tree: BASE_FILE (a file in the tree) beats BASE.
if [ -n "${BASE_FILE:-}" ]; then cp "$BASE_FILE" /tmp/base/src/kernels/sm90/epilogue.cuh
else git show ${BASE:-HEAD}:src/kernels/sm90/epilogue.cuh > /tmp/base/src/kernels/sm90/epilogue.cuh; fi
for t in . /tmp/base; do
    { cmake -S $t -B $t/build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build $t/build -j 16; } > $OUT/build_$(basename $t).log 2>&1 ||
        { grep -B2 -A6 error $OUT/build_$(basename $t).log | head -40; exit 1; }
done
echo "built $SECONDS s"
for t in ${TESTS:-gpu_gemm}; do
    [ "$t" = 0 ] && break
    timeout 240 build/tests/$t > $OUT/$t.log 2>&1; echo "$t rc=$? $(tail -1 $OUT/$t.log)"
done
B="--rounds=3 --profiling-iterations=30 --providers=tessera"
for s in "--A=f32:row --B=f32:col --D=f32:row --m=8192 --n=8192 --k=8192,1024" "--A=f32:row --B=f32:col --D=f32:row --m=4096,2048 --n=4096,2048 --k=4096" \
         "--A=bf16:row --B=bf16:col --D=f32:row --m=8192 --n=8192 --k=1024,8192" "--A=bf16:row --B=bf16:col --D=bf16:row --m=16,64 --n=7168 --k=2048" \
         "--A=e4m3:row --B=e4m3:col --D=f32:row --scale-a=block1x128 --scale-b=block128x128 --m=8192 --n=8192 --k=1024,8192"; do
    for t in /tmp/base .; do
        timeout 120 $t/build/bin/tessera bench gemm $s $B --output=$OUT/ab_$([ $t = . ] && echo new || echo base).csv 2>&1 | sed "s|^|$([ $t = . ] && echo new || echo base) |"
    done
done > $OUT/ab.log
awk '{print $1, $2, $4, $6, $8, $10}' $OUT/ab.log
