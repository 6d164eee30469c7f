#!/usr/bin/env bash
# The FP8 tiles of the large-problem plans, side by side: gpu_gemm_fp8 and
# gpu_grouped first, then every plan of a few FP8 suite problems
# (block-scaled 1x128 x 128x128, per-tensor, fast accumulation), printing
# the five fastest plans and cuBLASLt per problem, then the grouped FP8
# kernels' tiles on a few moe cases (bench/grouped.py --order, one tile
# after the other). Builds BUILD first if it holds no build.
#   bash dev/fp8_tile_check.sh OUT [BUILD]
# TESTS (default gpu_gemm_fp8 gpu_grouped), GROUPED_CASES (';'-separated moe
# lines; empty: none) and GROUPED_TILES choose what runs; the logs end up in
# OUT/logs.tgz (the device tool returns at most 8 files).
set -uo pipefail
out=${1:?usage: fp8_tile_check.sh OUT [BUILD]}
build=${2:-build}
mkdir -p "$out"
. dev/plan_table.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/device.txt"
bash dev/ensure_build.sh "$out" "$build" || exit 1
for t in ${TESTS:-gpu_gemm_fp8 gpu_grouped}; do
    timeout "${TEST_SECONDS:-240}" stdbuf -oL "$build/tests/$t" > "$out/$t.log" 2>&1
    echo "$t rc=$? $(tail -1 "$out/$t.log")"
    grep -m6 -A1 "check failed" "$out/$t.log" | cut -c1-220
done
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row"
run() { # problem flags...: the five fastest plans and cuBLASLt
    "$build/bin/tessera" bench gemm "$@" --plan=all --rounds="${ROUNDS:-2}" --profiling-iterations=30 > "$out/p.txt" 2>&1
    { echo "== $*"; cat "$out/p.txt"; } >> "$out/plans.txt"
    echo "== $*"
    plan_table "$out/p.txt" 5 cublas
}
blk="--scale-a=block1x128 --scale-b=block128x128"
for mnk in "--m=8192 --n=8192 --k=8192" "--m=4096 --n=7168 --k=16384" "--m=4096 --n=7168 --k=2048" \
           "--m=4096 --n=4096 --k=7168" "--m=4096 --n=24576 --k=1536" "--m=4096 --n=32768 --k=512"; do
    run $mnk $f8 $blk
done
run --m=8192 --n=8192 --k=8192 $f8 --scale-a=tensor --scale-b=tensor
run --m=4096 --n=7168 --k=16384 $f8 --scale-a=tensor --scale-b=tensor
run --m=8192 --n=8192 --k=8192 $f8 --scale-a=tensor --scale-b=tensor --fast-accum
IFS=';' read -ra cases <<< "${GROUPED_CASES-4096 7168 8 4096 uniform;4096 7168 64 4096 uniform;4096 7168 32 256 uniform}"
for case in "${cases[@]}"; do
    for tile in ${GROUPED_TILES:-128x256x128_s4_c2x1 128x192x128_s4_c2x1}; do
        PYTHONPATH=python TESSERA_LIBRARY=$build/lib/libtessera.so python3 bench/grouped.py --dtype fp8 \
            --filter "$case" --order "$tile" --reps 20 --rounds 2 > "$out/g.txt" 2>&1
        { echo "== $case, tile $tile"; cat "$out/g.txt"; } >> "$out/grouped.txt"
        grep -E " fp8 .*sm90|FAIL" "$out/g.txt"
    done
done
(cd "$out" && tar czf logs.tgz --exclude=logs.tgz . && find . -type f ! -name logs.tgz -delete)
