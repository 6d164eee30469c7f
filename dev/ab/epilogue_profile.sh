#!/usr/bin/env bash
# Nsight Compute on the fused epilogue (issue 33): one bf16 GEMM (default 4096^3) plain and with a
# fused bias + ReLU, the same plan; speed-of-light, warp states and per-instruction stall samples
# (dev/ncu_stalls.py) of each under $OUT.   bash dev/ab/epilogue_profile.sh [M N K]
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
m=${1:-4096} n=${2:-4096} k=${3:-4096}
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 16 --target tessera_cli; } \
    > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "built $SECONDS s"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters)
for v in plain fused; do
    flags=(); [ $v = fused ] && flags=(--bias=columns --act=relu)
    # --clock-control none: the GPU's clocks stay as found.
    "$ncu" --clock-control none --kernel-name regex:gemm_sm90 --launch-skip 3 --launch-count 1 "${sections[@]}" \
        --export /tmp/ep-$v --force-overwrite build/bin/tessera bench gemm --providers=tessera --warmup-iterations=2 \
        --profiling-iterations=2 --rounds=1 --m=$m --n=$n --k=$k "${flags[@]}" > $OUT/ncu-$v.log 2>&1
    "$ncu" --import /tmp/ep-$v.ncu-rep --page details > $OUT/$v-details.txt 2>&1
    "$ncu" --import /tmp/ep-$v.ncu-rep --page source --csv --print-source sass > /tmp/ep-$v-sass.csv 2>&1
    gzip -c /tmp/ep-$v-sass.csv > $OUT/$v-sass.csv.gz
    python3 dev/ncu_stalls.py /tmp/ep-$v-sass.csv --top 40 > $OUT/$v-stalls.txt 2>&1
    echo "== $v ($SECONDS s)"; grep -E "Duration|Issued Warp|No Eligible" $OUT/$v-details.txt; head -3 $OUT/$v-stalls.txt
done
sed -n 3,42p $OUT/fused-stalls.txt
