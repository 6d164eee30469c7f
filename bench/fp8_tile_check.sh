#!/usr/bin/env bash
# The FP8 tiles of the large-problem plans, side by side: gpu_gemm_fp8 first
# (every plan of the packed-factor shapes, random cases), then every plan of
# a few FP8 suite problems (block-scaled 1x128 x 128x128, per-tensor, fast
# accumulation), printing the five fastest plans and cuBLASLt per problem.
# Builds BUILD first if it holds no build.
#   bash bench/fp8_tile_check.sh OUT [BUILD]
set -uo pipefail
out=${1:?usage: fp8_tile_check.sh OUT [BUILD]}
build=${2:-build}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/device.txt"
bash bench/ensure_build.sh "$out" "$build" || exit 1
timeout "${TEST_SECONDS:-240}" stdbuf -oL "$build/tests/gpu_gemm_fp8" > "$out/gpu_gemm_fp8.log" 2>&1
echo "gpu_gemm_fp8 rc=$? $(tail -1 "$out/gpu_gemm_fp8.log")"
grep -m6 -A1 "check failed" "$out/gpu_gemm_fp8.log" | cut -c1-220
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row"
run() { # problem flags...: the five fastest plans and cuBLASLt
    "$build/bin/tessera" bench gemm "$@" --plan=all --rounds="${ROUNDS:-2}" --profiling-iterations=30 > "$out/p.txt" 2>&1
    { echo "== $*"; cat "$out/p.txt"; } >> "$out/plans.txt"
    echo "== $*"
    grep -E " (cublas|tessera) " "$out/p.txt" | sed -E 's/  +/ /g' |
        awk '{n = ""; for (i = 1; i <= NF; i++) { if ($i == "ms") t = $(i - 1); if ($i == "TFLOP/s") f = $(i - 1);
              if ($i ~ /^x[0-9.]/) x = $i; if ($i ~ /^(sm90|gemv|cublasLt)/) n = $i }; print $1, t, f, x, n}' |
        sort -k2n | awk '{c++; if (c <= 5 || $5 ~ /cublas/) print}'
}
blk="--scale-a=block1x128 --scale-b=block128x128"
for mnk in "--m=8192 --n=8192 --k=8192" "--m=4096 --n=7168 --k=16384" "--m=4096 --n=7168 --k=2048" \
           "--m=4096 --n=4096 --k=7168" "--m=4096 --n=24576 --k=1536"; do
    run $mnk $f8 $blk
done
run --m=8192 --n=8192 --k=8192 $f8 --scale-a=tensor --scale-b=tensor
run --m=4096 --n=7168 --k=16384 $f8 --scale-a=tensor --scale-b=tensor
run --m=8192 --n=8192 --k=8192 $f8 --scale-a=tensor --scale-b=tensor --fast-accum
