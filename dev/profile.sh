#!/usr/bin/env bash
# Nsight Compute on one tessera GEMM plan: warp stall reasons, scheduler
# issue rates, memory throughput and the source-level hot spots of the
# gemm_sm90 kernel (or the kernel whose name matches $KERNEL, e.g. gemv),
# for a problem given as `tessera bench gemm` flags.
#   bash dev/profile.sh OUT BUILD [bench gemm flags...]
#   e.g. bash dev/profile.sh "$OUT" build --m=1 --n=4096 --k=7168 \
#        --A=e4m3:row --B=e4m3:col --scale-a=block1x128 --scale-b=block128x128 --plan=s12_c1x1_blkc_swap
# Writes OUT/profile.ncu-rep (open in Nsight Compute) and prints the
# sections as text. `--clock-control none`: ncu would otherwise lock the GPU's
# clocks to base for the measurement, and we never change the GPU's clocks. ncu must be allowed to read the GPU's counters; where it
# is not (ERR_NVGPUCTRPERM), the script says so and stops.
set -uo pipefail
out=${1:?usage: profile.sh OUT BUILD [bench gemm flags...]}
build=${2:?usage: profile.sh OUT BUILD [bench gemm flags...]}
shift 2
mkdir -p "$out"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
[ -x "$ncu" ] || { echo "profile.sh: ncu not found"; exit 1; }
# One profiled launch after the warm-up runs (the tool's 3 warm-ups, then
# the first timed one): tessera only, a single round. ncu serializes the
# launch it profiles, so the timing's stream hold (hold.h) waits out its
# ~1 s limit first and the tool reports a timed-out hold: expected here.
"$ncu" --clock-control none --kernel-name "regex:${KERNEL:-gemm_sm90}" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section LaunchStats --section SourceCounters \
    --export "$out/profile" --force-overwrite \
    "$build/bin/tessera" bench gemm --providers=tessera --verify=false --rounds=1 \
    --warmup-iterations=3 --profiling-iterations=1 "$@" > "$out/profile.log" 2>&1
rc=$?
if grep -q ERR_NVGPUCTRPERM "$out/profile.log"; then
    echo "profile.sh: ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM)"
    exit 1
fi
tail -20 "$out/profile.log"
# The report's sections as text, and its per-instruction SASS counters
# (stall samples by reason) as CSV beside it.
"$ncu" --import "$out/profile.ncu-rep" --page details > "$out/details.txt" 2>&1
"$ncu" --import "$out/profile.ncu-rep" --page source --csv --print-source sass > "$out/source_sass.csv" 2>&1
cat "$out/details.txt"
exit $rc
