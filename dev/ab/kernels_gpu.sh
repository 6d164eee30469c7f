#!/usr/bin/env bash
# A kernel change on the device in one call: build with -k 0 (every failure and
# spill listed), the plan unit test, then the GPU tests side by side (they check
# values, not times). Logs under $OUT.
#   TESTS="gpu_gemm gpu_gemm_fp8" bash dev/ab/kernels_gpu.sh
# BUILD_DIR (default build): where it builds (fp8_ab.sh's /tmp/ab-build-new
# lets a later fp8_ab.sh in the same call reuse the build).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDA_HOME=/usr/local/cuda
mkdir -p "$OUT"
bd=${BUILD_DIR:-build}
{ cmake -S . -B "$bd" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build "$bd" -j 16 -- -k 0; } \
    > "$OUT/build.log" 2>&1 || { grep -E "FAILED|spilled|error|ptxas_guard" "$OUT/build.log" | cut -c1-220 | head -30; exit 1; }
echo "built $SECONDS s"
"$bd/tests/unit_gemm_plan" > "$OUT/unit_gemm_plan.log" 2>&1; echo "unit_gemm_plan rc=$? $(tail -1 "$OUT/unit_gemm_plan.log")"
for t in ${TESTS:-gpu_gemm gpu_grouped gpu_gemm_fp8 gpu_graph gpu_utilities}; do
    ( timeout ${TEST_TIMEOUT_S:-330} "$bd/tests/$t" > "$OUT/$t.log" 2>&1; echo "$t rc=$? $(tail -1 "$OUT/$t.log") ($SECONDS s)";
      grep -m8 "check failed" -A1 "$OUT/$t.log" ) &
done
wait
echo "done $SECONDS s"
