#!/usr/bin/env bash
# Probe (issue 5, session 17): which kernel cuBLASLt runs for the FP8 suite's
# large problems, and how it compares with tessera's on the same counters.
# Nsight Compute (clocks as found) on one launch per provider and problem:
# kernel name (cuBLASLt's names carry tile, cluster and schedule), grid,
# block, registers, shared memory, cluster size, duration, SM clock, tensor
# pipe and issue utilization. Raw reports in $OUT/peer/*.txt; a table last.
#   OUT=... bash dev/probes/peer_kernels.sh BUILD [CASES]
# CASES: a file of "label bench-gemm-flags" lines, instead of the list below.
set -u
b=${1:-build}
cases=${2:-}
bash dev/ensure_build.sh $OUT $b || exit 1
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p $OUT/peer
f8="--A=e4m3:row --B=e4m3:col --D=bf16:row"
blk="--scale-a=block1x128 --scale-b=block128x128"
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__inst_executed.avg.per_cycle_active,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__cluster_dim_x,launch__cluster_dim_y,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum
i=0
while read -r label flags; do
  for prov in cublas tessera; do
    i=$((i+1))
    # The tool runs 3 warm-ups then timed launches: profile the 4th and 5th GEMM-side
    # launches (not the tool's stream hold or input preparation).
    $ncu --clock-control none --kernel-name "regex:^(?!wait_for_release|tess_probe|quant|ref_gemm|transpose)" \
      --launch-skip 3 --launch-count 2 --metrics $metrics \
      $b/bin/tessera bench gemm --providers=$prov --verify=false --rounds=1 \
      --warmup-iterations=3 --profiling-iterations=1 $flags > $OUT/peer/$i-$label-$prov.txt 2>&1
  done
done < <(if [ -n "$cases" ]; then cat "$cases"; else cat <<LIST
blk8192 --m=8192 --n=8192 --k=8192 $f8 $blk
blk4096x7168x16384 --m=4096 --n=7168 --k=16384 $f8 $blk
blk4096x7168x2048 --m=4096 --n=7168 --k=2048 $f8 $blk
blk4096x32768x512 --m=4096 --n=32768 --k=512 $f8 $blk
pt8192 --m=8192 --n=8192 --k=8192 $f8 --scale-a=tensor --scale-b=tensor
fast8192 --m=8192 --n=8192 --k=8192 $f8 --scale-a=tensor --scale-b=tensor --fast-accum
LIST
fi)
# Table: file, kernel name, then each metric's value.
for f in $OUT/peer/*.txt; do
  echo "== $(basename $f .txt)"
  grep -E 'Context [0-9]+, Stream' "$f" | sed 's/^ */   /' | cut -c1-200
  grep -E '^\s+(gpu__time|sm__cycles|sm__pipe|sm__inst|launch__|dram__|lts__)' "$f" | awk '{printf "   %-70s %s %s\n", $1, $2, $3}'
done
