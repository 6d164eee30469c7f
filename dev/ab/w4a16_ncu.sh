#!/usr/bin/env bash
# Nsight Compute on the W4A16 GEMV beside tinygemm (dev/probes/w4a16_call.py), for a
# weight N x K and M tokens (env N, K, M; default 7168 x 7168, 1): launch, occupancy, memory
# and warp-stall sections as text under $OUT. With PATCH=file: the same again on a rebuild
# with that patch applied (an A/B of two kernels in one call). A lab build as w4a16_gpu.sh's.
set -uo pipefail
. dev/ab/gpu_common.sh
[ -f build/lib/libtessera.so ] || INSTANCES=${INSTANCES:-'^f16_128x128_c1$'} gpu_build
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
profile() { # $1: name
    "$ncu" --clock-control none --kernel-name "regex:w4a16_gemv|tinygemm" --launch-skip 2 --launch-count 2 \
        --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
        --section MemoryWorkloadAnalysis --section SchedulerStats \
        --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,sm__cycles_active.avg" \
        python3 dev/probes/w4a16_call.py --n ${N:-7168} --k ${K:-7168} --m ${M:-1} > $OUT/ncu-$1.txt 2>&1
    echo "== $1 rc=$? ($SECONDS s)"
    grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|Memory Throughput|Registers Per|Waves Per SM|Achieved Occupancy|Theoretical Occupancy|Grid Size|Cluster Size|Dynamic Shared|Block Limit|Warp Cycles Per Issued|Issued Warp|No Eligible|Max Active Clusters|inst_executed.sum|cycles_active.avg" $OUT/ncu-$1.txt
    grep -E "issue_stalled" $OUT/ncu-$1.txt | awk '$NF+0 > 0.2 {print $1, $NF}' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -40
}
profile a
if [ -n "${PATCH:-}" ]; then
    patch -p1 < "$PATCH" > /dev/null && cmake --build build -j 16 > $OUT/rebuild.log 2>&1 || { tail $OUT/rebuild.log; exit 1; }
    profile b
fi
