#!/usr/bin/env bash
# ncu counters (time, DRAM and L2 bytes, L2 hit rate, SM active cycles min/avg/max, tensor pipe) of
# the gate_up weight gradient (dev/probes/wgrad_once.py) at G = 8 and 32 experts, on the build in
# ./build; TESS_LAB_* switches pass through.   bash dev/probes/ncu_wgrad.sh
export PYTHONPATH=$PWD/python TESSERA_LIBRARY=$PWD/build/lib/libtessera.so
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
m=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min
for g in 8 32; do
  timeout 200 $ncu --clock-control none --kernel-name regex:gemm_sm90 --launch-skip 2 --launch-count 1 --metrics $m python3 dev/probes/wgrad_once.py $g 2>&1 | grep -E "^ +(gpu__|lts__|dram__|sm__)|==ERR" 
  echo "--- G=$g done"
done
