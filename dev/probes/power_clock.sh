#!/usr/bin/env bash
# Probe (issue 5, 2026-11-25, session 19): what the GPU draws and how fast
# it clocks while the large FP8 GEMMs run, ours and cuBLASLt's, read with
# nvidia-smi every 100 ms (nothing is set: the clocks and power limit stay
# as found). Each case runs one provider alone for ~6 s; the table gives
# TFLOP/s, the median power and SM clock over the samples taken while it
# ran at more than half the power limit, and the clock-event reasons seen.
#   OUT=... bash dev/probes/power_clock.sh   (from the repository root)
set -u
bash dev/ensure_build.sh $OUT build || exit 1
nvidia-smi --query-gpu=name,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem --format=csv | tee $OUT/gpu.txt
reasons=clocks_event_reasons.active
nvidia-smi --query-gpu=$reasons --format=csv,noheader > /dev/null 2>&1 || reasons=clocks_throttle_reasons.active
blk="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=block1x128 --scale-b=block128x128"
ten="--A=e4m3:row --B=e4m3:col --D=bf16:row --scale-a=tensor --scale-b=tensor"
bf="--A=bf16:row --B=bf16:col --D=bf16:row"
sq="--m=8192 --n=8192 --k=8192"
long="--m=4096 --n=7168 --k=16384"
printf "%-34s %9s %7s %7s  %s\n" case TFLOP/s W MHz reasons > $OUT/table.txt
while read -r name provider its args; do
  nvidia-smi --query-gpu=power.draw,clocks.sm,$reasons --format=csv,noheader,nounits -lms 100 > $OUT/smi_$name.csv &
  smi=$!
  sleep 0.5
  build/bin/tessera bench gemm ${args//@/ } --providers=$provider --rounds=1 --warmup-iterations=50 \
    --profiling-iterations=$its > $OUT/run_$name.txt 2>&1
  kill $smi; wait $smi 2>/dev/null
  tf=$(grep " $provider " $OUT/run_$name.txt | sed -E 's/  +/ /g' |
       awk '{for (i = 1; i <= NF; i++) if ($i == "TFLOP/s") print $(i - 1)}' | head -1)
  limit=$(awk -F, 'NR == 2 {print $2 + 0}' $OUT/gpu.txt)
  python3 - "$name" "$tf" "$limit" $OUT/smi_$name.csv >> $OUT/table.txt <<'PY'
import collections, statistics, sys
name, tf, limit, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
rows = [l.split(", ") for l in open(path) if l.count(",") >= 2]
busy = [r for r in rows if float(r[0]) > limit / 2]
w = statistics.median(float(r[0]) for r in busy) if busy else 0
mhz = statistics.median(float(r[1]) for r in busy) if busy else 0
reasons = collections.Counter(r[2].strip() for r in busy)
print(f"{name:34s} {tf:>9s} {w:7.0f} {mhz:7.0f}  {len(busy)} samples; " + " ".join(f"{k}x{v}" for k, v in reasons.items()))
PY
done <<CASES
fp8_block_8192_cublas cublas 6000 ${sq// /@}@${blk// /@}
fp8_block_8192_tessera tessera 6000 ${sq// /@}@${blk// /@}
fp8_tensor_8192_cublas cublas 6000 ${sq// /@}@${ten// /@}
fp8_tensor_8192_tessera tessera 6000 ${sq// /@}@${ten// /@}
fp8_fast_8192_cublas cublas 6000 ${sq// /@}@${ten// /@}@--fast-accum=1
fp8_fast_8192_tessera tessera 6000 ${sq// /@}@${ten// /@}@--fast-accum=1
fp8_block_long_tessera tessera 6000 ${long// /@}@${blk// /@}
fp8_tensor_long_tessera tessera 6000 ${long// /@}@${ten// /@}
bf16_8192_cublas cublas 3000 ${sq// /@}@${bf// /@}
bf16_8192_tessera tessera 3000 ${sq// /@}@${bf// /@}
CASES
cat $OUT/table.txt
