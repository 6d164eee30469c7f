#!/usr/bin/env bash
# DeepGEMM's and tessera's block-scaled FP8 kernels under Nsight Compute on
# the same problem, in one device call: the same sections for both (speed
# of light, compute pipes, scheduler, warp states, per-instruction stall
# samples), and dev/ncu_stalls.py's summary of each. Needs .peers (a copy
# of ../shared/peers, see its README) carried with the call.
#   bash dev/ab/fp8_profile_pair.sh OUT [M N K]      (default 4096 7168 16384)
# OUT gets, per kernel (dg, tessera): NAME-details.txt, NAME-sass.csv.gz,
# NAME-raw.csv (all metrics of the profiled launch). `--clock-control none`:
# we never change the GPU's clocks.
set -uo pipefail
out=${1:?usage: fp8_profile_pair.sh OUT [M N K]}
m=${2:-4096} n=${3:-7168} k=${4:-16384}
here=$(pwd)
peers=$here/.peers
[ -f "$peers/fp8.py" ] || { echo "no .peers: copy ../shared/peers there (its README)"; exit 2; }
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PATH=/usr/local/cuda/bin:$PATH
export DG_JIT_CACHE_DIR=${DG_JIT_CACHE_DIR:-/tmp/dg_jit_cache} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export TESSERA_ROOT=$here PYTHONPATH=$peers/deepgemm:$here/python
logs=/tmp/profile-logs
mkdir -p "$out" "$logs"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/device.txt"

bash "$peers/build_deepgemm.sh" > "$logs/build_deepgemm.log" 2>&1 &
dg_pid=$!
{ cmake -S . -B build-prof -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build-prof -j 16 --target tessera_cli; } \
    > "$logs/build.log" 2>&1 || { echo "tessera build failed:"; tail -20 "$logs/build.log"; exit 1; }
wait $dg_pid || { echo "DeepGEMM's build failed:"; tail -8 "$logs/build_deepgemm.log"; exit 1; }
case_label="dense m=$m n=$n k=$k"
python3 "$peers/fp8.py" --warmup-only --filter "$case_label" > "$logs/warm.log" 2>&1
echo "== built and warm ($SECONDS s): $(grep -c '^warm ok' "$logs/warm.log") case"

sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
          --section SchedulerStats --section WarpStateStats --section SourceCounters)
# DeepGEMM: fp8.py's timing loop on the one case, DeepGEMM only; the third launch of its kernel.
"$ncu" --clock-control none --kernel-name regex:sm90_fp8_gemm --launch-skip 2 --launch-count 1 "${sections[@]}" \
    --export "$logs/dg" --force-overwrite \
    python3 "$peers/fp8.py" --filter "$case_label" --no-torch --no-tessera --reps 3 --warmup 2 > "$logs/ncu-dg.log" 2>&1
echo "ncu dg rc=$? ($SECONDS s)"
# tessera: its planner's choice, through the bench tool (three warm-ups, then the profiled call).
"$ncu" --clock-control none --kernel-name regex:gemm_sm90 --launch-skip 3 --launch-count 1 "${sections[@]}" \
    --export "$logs/tessera" --force-overwrite \
    build-prof/bin/tessera bench gemm --providers=tessera --verify=false --rounds=1 --warmup-iterations=3 \
    --profiling-iterations=1 --A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128 \
    --m="$m" --n="$n" --k="$k" > "$logs/ncu-tessera.log" 2>&1
echo "ncu tessera rc=$? ($SECONDS s)"
for who in dg tessera; do
    [ -f "$logs/$who.ncu-rep" ] || { echo "$who: no report"; tail -5 "$logs/ncu-$who.log"; continue; }
    "$ncu" --import "$logs/$who.ncu-rep" --page details > "$out/$who-details.txt" 2>&1
    "$ncu" --import "$logs/$who.ncu-rep" --page raw --csv > "$out/$who-raw.csv" 2>&1
    "$ncu" --import "$logs/$who.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip > "$out/$who-sass.csv.gz"
    grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|Issued Warp Per Scheduler|Executed Ipc Active" \
        "$out/$who-details.txt" | sed "s/^/$who /"
    python3 dev/ncu_stalls.py "$out/$who-sass.csv.gz" --top 12
done
