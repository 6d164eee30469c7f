#!/usr/bin/env bash
# Every tessera plan of chosen fp8.py cases beside DeepGEMM, in one device call
# (dev/probes/fp8_every_plan.py), after this tree's FP8 GPU tests. Needs .peers
# (a copy of ../shared/peers).
#   bash dev/ab/every_plan.sh OUT "CASE" ["CASE" ...]
#   env: GPU_TESTS (default "gpu_gemm_fp8 gpu_grouped"), LIMIT (plans per case, 24),
#        BUILD (build folder, build-dev)
set -uo pipefail
out=${1:?usage: every_plan.sh OUT CASE...}
shift
here=$(pwd) peers=$(pwd)/.peers logs=/tmp/plan-logs build=${BUILD:-build-dev}
[ -f "$peers/fp8.py" ] || { echo "no .peers: copy ../shared/peers there (its README)"; exit 2; }
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PATH=/usr/local/cuda/bin:$PATH
export DG_JIT_CACHE_DIR=${DG_JIT_CACHE_DIR:-/tmp/dg_jit_cache} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export TESSERA_ROOT=$here PYTHONPATH=$peers/deepgemm:$here/python
mkdir -p "$out" "$logs" "$DG_JIT_CACHE_DIR"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader | tee "$out/device.txt"
bash "$peers/build_deepgemm.sh" > "$logs/build_deepgemm.log" 2>&1 &
dg=$!
tests=${GPU_TESTS-gpu_gemm_fp8 gpu_grouped}
{ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$build" -j 16 --target tessera $tests; } > "$logs/build.log" 2>&1 ||
    { echo "build failed:"; tail -20 "$logs/build.log"; exit 1; }
wait $dg || { echo "DeepGEMM's build failed"; tail -8 "$logs/build_deepgemm.log"; exit 1; }
echo "== builds done ($SECONDS s)"
filters=()
for c in "$@"; do filters+=(--filter "$c"); done
for i in 0 1 2 3 4 5 6 7; do
    timeout 200 python3 "$peers/fp8.py" --warmup-only --shard "$i/8" --masked-cross "${filters[@]}" \
        > "$logs/warm_$i.log" 2>&1 &
done
for t in $tests; do
    TESS_TRIALS=${TESS_TRIALS:-2} timeout 150 "$build/tests/$t" > "$logs/$t.log" 2>&1
    echo "$t rc=$? $(tail -1 "$logs/$t.log") ($SECONDS s)"
done | tee "$out/tests.txt"
wait
echo "== JIT warm ($SECONDS s): $(cat "$logs"/warm_*.log | grep -c '^warm ok') ok"
cases=()
for c in "$@"; do cases+=(--case "$c"); done
TESSERA_LIBRARY=$here/$build/lib/libtessera.so timeout 400 python3 dev/probes/fp8_every_plan.py \
    --peers "$peers" --csv "$out/every-plan.csv" --limit "${LIMIT:-24}" "${cases[@]}" 2>&1 | tee "$out/every-plan.txt"
