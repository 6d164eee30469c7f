#!/usr/bin/env bash
# Issue 33: the fused per-column bias prefetched into L1 before each tile's mainloop
# (dev/ab/bias_prefetch.patch: tess_bias_prefetch) against none, on a partial build of the
# 4096^3 plans: gpu_gemm's cases that this build runs (the rest report NOT_SUPPORTED: no kernel),
# then the epilogue lines at 4096^3 (plain, bias, bias + GELU tanh, float32 bias; FP8 plain and
# bias + GELU tanh; cuBLASLt beside) with the prefetch, without, and with it again.
set -uo pipefail
. dev/ab/gpu_common.sh
git apply dev/ab/bias_prefetch.patch || exit 1
INSTANCES=${INSTANCES:-'^(f16_128x256_c2|fp8_128x256_c2_rows)$'} gpu_build
gpu_tests "gpu_gemm"
echo "gpu_gemm wrong answers (not missing kernels): $(grep -A1 'check failed' $OUT/gpu_gemm.log | grep -c 'rel error [0-9]')"
suite=$OUT/bias.txt fp8="--A=e4m3:row --B=e4m3:col --scale-a=block1x128 --scale-b=block128x128"
for extra in "" "--bias=columns" "--bias=columns --act=gelu_tanh" "--bias=columns --bias-type=f32" \
             "$fp8" "$fp8 --bias=columns --act=gelu_tanh"; do
    echo "--m=4096 --n=4096 --k=4096 $extra"
done > $suite
lines() { # $1: the variant's name
    build/bin/tessera bench gemm --suite=$suite --verify=0 --output=$OUT/epi-$1.csv > $OUT/epi-$1.log 2>&1
    echo "lines $1 rc=$? ($SECONDS s)"
}
rebuild() { cmake --build build -j 16 > $OUT/rebuild.log 2>&1 || { tail $OUT/rebuild.log; exit 1; }; }
lines prefetch
patch -R -p1 < dev/ab/bias_prefetch.patch > /dev/null && rebuild && lines none
patch -p1 < dev/ab/bias_prefetch.patch > /dev/null && rebuild && lines prefetch2
for v in prefetch none prefetch2; do
    echo "== $v"; grep -E " (tessera|cublas) " $OUT/epi-$v.log | sed -E 's/ +/ /g' | cut -d' ' -f1-8
done
