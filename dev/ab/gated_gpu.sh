#!/usr/bin/env bash
# Gated epilogues (issue 33: SwiGLU, GeGLU) on the device in one call: the
# library and the tests below built with -k 0 (every spill listed), the
# unit and GPU tests, pytest's epilogue tests, then `tessera bench gemm` of
# a few FFN shapes plain (N columns out) and gated (N/2 out, SiLU).
#   bash dev/ab/gated_gpu.sh    (BENCH=0: tests only)
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH CUDA_HOME=/usr/local/cuda
mkdir -p "$OUT"
T="${TESTS:-unit_gemm_plan unit_ref_gemm unit_grouped_plan unit_plan_cache gpu_ref_gemm gpu_gemm gpu_grouped gpu_gemm_fp8}"
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j 16 -- -k 0; } \
    > "$OUT/build.log" 2>&1 || { grep -E "FAILED|spilled|error" "$OUT/build.log" | cut -c1-220 | head -30; exit 1; }
echo "built $SECONDS s"
. "$(dirname "$0")/gpu_common.sh"
gpu_tests "$T"
gpu_pytest "python/tests/test_epilogue.py python/tests/test_gemm.py python/tests/test_grouped.py"
[ "${BENCH:-1}" = 0 ] && exit 0
FP8="--A=e4m3:row --B=e4m3:col --scale-a=block1x128 --scale-b=block128x128"
while read -r line; do
    for g in "" "--gate=interleaved"; do
        timeout 120 build/bin/tessera bench gemm $line --act=silu $g --output="$OUT/gated.csv"
    done
done > "$OUT/gated.log" 2>&1 <<LINES
--m=4096 --n=28672 --k=4096
--m=8192 --n=8192 --k=8192
--m=4096 --n=4096 --k=7168 $FP8
--m=128 --n=4096 --k=7168 $FP8
LINES
echo "bench ($SECONDS s)"
grep -v "^tessera bench" "$OUT/gated.log" | sed "s/  */ /g" | cut -c1-170
PYTHONPATH=python TESSERA_LIBRARY=build/lib/libtessera.so python3 dev/probes/gated_vs_unfused.py --csv "$OUT/gated_vs_unfused.csv" 2>&1 | tail -8
