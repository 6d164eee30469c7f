#!/usr/bin/env bash
# First GPU run of the decode GEMV (88831f6): its GPU tests, then
# every plan of the decode shapes, with the GEMV's time against the best
# sm90 plan's and cuBLAS's, then the two experiments that came with it.
# Builds BUILD first if it holds no build.
#   bash bench/gemv_check.sh OUT [BUILD]
set -uo pipefail
out=${1:?usage: gemv_check.sh OUT [BUILD]}
build=${2:-build}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$out/device.txt"
if [ ! -x "$build/bin/tessera" ]; then
    { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$(nproc)"; } \
        > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
for t in gpu_gemm gpu_gemm_fp8; do
    timeout 300 stdbuf -oL "$build/tests/$t" > "$out/$t.log" 2>&1
    echo "$t rc=$? $(grep -c 'check failed' "$out/$t.log") failed checks; $(tail -1 "$out/$t.log")"
    grep -m5 "gemv" "$out/$t.log" | grep -i "fail\|error" | cut -c1-200
done
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row"
{
    for mnk in "--m=1 --n=4096 --k=7168" "--m=4 --n=4096 --k=7168" "--m=8 --n=4096 --k=7168" "--m=1 --n=7168 --k=2048" \
        "--m=4 --n=2112 --k=7168" "--m=1 --n=2112 --k=7168" "--m=1 --n=128 --k=128" "--m=1 --n=256 --k=7168"; do
        "$build/bin/tessera" bench gemm $mnk $bf --plan=all --rounds=3
    done
    for mnk in "--m=1 --n=4096 --k=7168" "--m=4 --n=2112 --k=7168" "--m=1 --n=7168 --k=2048"; do
        "$build/bin/tessera" bench gemm $mnk $f8 --scale-a=block1x128 --scale-b=block128x128 --plan=all --rounds=3
        "$build/bin/tessera" bench gemm $mnk $f8 --scale-a=tensor --scale-b=tensor --plan=all --rounds=3
    done
    "$build/bin/tessera" bench copy
} > "$out/plans.txt" 2>&1
# Per problem: cuBLAS, the best sm90 plan, the GEMV (ms and GB/s).
awk '/ (cublas|tessera) / {
        key = $1 " " $3 " " ($4 ~ /^s:/ ? $4 : "");
        ms = ""; gbs = "";
        for (i = 1; i < NF; i++) { if ($(i+1) == "ms") ms = $i; if ($(i+1) == "GB/s") gbs = $i }
        name = ""; for (i = 1; i <= NF; i++) if ($i ~ /^(sm90_|gemv_|cublasLt)/) name = $i;
        if ($0 ~ / cublas /) cub[key] = ms " " gbs;
        else if (name ~ /^gemv_/) gv[key] = ms " " gbs " " name;
        else if (!(key in best) || ms + 0 < bestms[key]) { best[key] = ms " " gbs " " name; bestms[key] = ms + 0 }
        keys[key] = 1 }
     END { printf "%-50s | %-18s | %-60s | %s\n", "problem", "cuBLAS ms GB/s", "best sm90", "GEMV";
           for (k in keys) printf "%-50s | %-18s | %-60s | %s\n", k, cub[k], best[k], gv[k] }' "$out/plans.txt" | sort
grep "bandwidth=" "$out/plans.txt"
# The two experiments that travel with the GEMV (TESS_EXPERIMENT, TESS_TRACE;
# see their commits): block-scaled token tiles without their factor loads,
# then where one launch's time goes. Timing-only: the first gives wrong
# results (--verify=false), the second synchronizes inside each call (a
# held stream waits out its 1 s hold per call).
short() { grep -E " tessera " | sed -E 's/  +/ /g' | cut -c1-200; }
blk="--scale-a=block1x128 --plan=128x16x128_s12_c1x1_blkc_swap --providers=tessera --verify=false --rounds=3"
for e in 0 1; do
    echo "TESS_EXPERIMENT=$e"
    TESS_EXPERIMENT=$e "$build/bin/tessera" bench gemm --m=1 --n=4096 --k=7168 $f8 --scale-b=block128x128 $blk | short
    TESS_EXPERIMENT=$e "$build/bin/tessera" bench gemm --m=16 --n=4096 --k=7168 $f8 --scale-b=block1x128 $blk | short
done
"$build/bin/tessera" bench gemm --m=1 --n=4096 --k=7168 $f8 --scale-a=tensor --scale-b=tensor \
    --plan=128x16x128_s12_c1x1_pr_swap --providers=tessera --rounds=3 | short
for mnk in "--m=1 --n=128 --k=128" "--m=1 --n=4096 --k=7168" "--m=1 --n=2112 --k=7168"; do
    TESS_TRACE=1 "$build/bin/tessera" bench gemm $mnk $bf --providers=tessera --rounds=1 --warmup-iterations=1 \
        --profiling-iterations=2 2>&1 | grep "^trace" | tail -3
done
