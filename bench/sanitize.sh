#!/usr/bin/env bash
# compute-sanitizer over the GPU tests (issue 6 asks for a clean grouped GEMM):
# memcheck, racecheck and synccheck on gpu_grouped, memcheck on gpu_gemm and
# gpu_gemm_fp8, each with fewer random trials (TESS_TRIALS, default 12: the
# sanitizer runs kernels 10-100x slower) and a time limit (SAN_SECONDS per
# run, default 240), logs in OUT. Prints one line per run: the test's own
# verdict and the sanitizer's error summary. Builds BUILD first if it holds
# no build.
#   bash bench/sanitize.sh OUT [BUILD]
set -uo pipefail
out=${1:?usage: sanitize.sh OUT [BUILD]}
build=${2:-build}
mkdir -p "$out"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$san" ] || { echo "no compute-sanitizer on this machine"; exit 1; }
if [ ! -x "$build/bin/tessera" ]; then
    { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j "$(nproc)"; } \
        > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
export TESS_TRIALS=${TESS_TRIALS:-12}
for run in gpu_grouped:memcheck gpu_grouped:racecheck gpu_grouped:synccheck gpu_gemm:memcheck gpu_gemm_fp8:memcheck; do
    test=${run%%:*} tool=${run##*:}
    log="$out/$test.$tool.log"
    timeout "${SAN_SECONDS:-240}" "$san" --tool "$tool" --error-exitcode 99 "$build/tests/$test" > "$log" 2>&1
    echo "$test $tool rc=$? | $(grep -E '^[a-z_0-9]+: [0-9]+ checks' "$log" | tail -1) | $(grep -m1 'ERROR SUMMARY' "$log")"
done
