#!/usr/bin/env bash
# First GPU run of the e4m3 tensor-core GEMV (GPU-pending commit): the GEMM
# GPU tests (the 16-bit tensor-core GEMV's code generation changed with the
# template, so gpu_gemm too), then every plan of the FP8 decode shapes and
# of the bf16 ones the tensor-core GEMV serves, fastest three and every
# GEMV per problem. Builds BUILD first if it holds no build.
#   bash dev/gemv_mma_check.sh OUT [BUILD]
set -uo pipefail
out=${1:?usage: gemv_mma_check.sh OUT [BUILD]}
build=${2:-build}
mkdir -p "$out"
. dev/plan_table.sh
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$out/device.txt"
bash dev/ensure_build.sh "$out" "$build" || exit 1
for t in gpu_gemm gpu_gemm_fp8; do
    timeout 300 stdbuf -oL "$build/tests/$t" > "$out/$t.log" 2>&1
    echo "$t rc=$? $(tail -1 "$out/$t.log")"
    grep -m6 -A1 "check failed" "$out/$t.log" | cut -c1-220
done
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row"
run() { # problem flags...: the three fastest plans and every GEMV
    "$build/bin/tessera" bench gemm "$@" --plan=all --rounds=2 --profiling-iterations=30 > "$out/p.txt" 2>&1
    cat "$out/p.txt" >> "$out/plans.txt"
    plan_table "$out/p.txt" 3 'gemv|cublas'
}
for m in 1 4 8 16; do
    for nk in "--n=4096 --k=7168" "--n=2112 --k=7168" "--n=7168 --k=2048"; do
        run --m=$m $nk $f8 --scale-a=block1x128 --scale-b=block128x128
    done
    run --m=$m --n=4096 --k=7168 $f8 --scale-a=tensor --scale-b=tensor
done
for mnk in "--m=8 --n=4096 --k=7168" "--m=16 --n=4096 --k=7168" "--m=4 --n=7168 --k=2048" "--m=16 --n=2112 --k=7168"; do
    run $mnk $bf
done
