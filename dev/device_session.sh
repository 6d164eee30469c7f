#!/usr/bin/env bash
# One call on a GPU machine: build (unless BUILD holds a build), run every GPU
# test with a time limit (line-buffered logs, so a killed test still leaves
# its output), then the named benchmark suites (bench/run), and copy logs,
# CSVs and charts into OUT. Prints a short summary last.
#   bash dev/device_session.sh OUT [BUILD] [SUITE...]     e.g. ... "$OUT" build smallm
# Time limits: TEST_SECONDS per GPU test (default 240); TESTS picks some
# (a glob of test names, default gpu_*).
set -uo pipefail
out=${1:?usage: device_session.sh OUT [BUILD] [SUITE...]}
build=${2:-build}
shift 2 2>/dev/null || shift $#
suites=("$@")
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$out/device.txt"
git log -1 --format='commit %h %s' 2>/dev/null | tee -a "$out/device.txt"
bash dev/ensure_build.sh "$out" "$build" || exit 1
summary=()
for t in "$build"/tests/${TESTS:-gpu_*}; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    timeout "${TEST_SECONDS:-240}" stdbuf -oL -eL "$t" > "$out/$name.log" 2>&1
    rc=$?
    summary+=("$name rc=$rc $(grep -c 'check failed' "$out/$name.log") failed checks; $(tail -1 "$out/$name.log")")
done
if [ ${#suites[@]} -gt 0 ]; then
    bash bench/run "$build" "${suites[@]}" > "$out/bench.log" 2>&1
    summary+=("bench rc=$? ($(grep -m1 'bandwidth=' "$out/bench.log"))")
    for s in "${suites[@]}"; do cp bench/results/*-"$s".csv bench/results/*-"$s".png "$out/" 2>/dev/null; done
fi
echo "== summary"
printf '%s\n' "${summary[@]}"
for csv in "$out"/*.csv; do
    [ -f "$csv" ] || continue
    echo "== $(basename "$csv"): problem, provider, ms, TFLOP/s, GB/s, x cuBLAS, kernel"
    grep -v '^#' "$csv" | awk -F, 'NR > 1 {printf "%sx%sx%s %s %s %s %s %s %s\n", $1, $2, $3, $18, $20, $21, $22, $23, $19}'
done
