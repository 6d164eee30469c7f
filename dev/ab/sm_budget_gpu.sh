#!/usr/bin/env bash
# The SM budget (issue 36) on the device in one call: the build, gpu_gemm (its test_sm_budget among
# the rest), the Python test, and the scaling target: large GEMMs at every SM and at 112/132 of
# them (and half), bf16 and FP8, into $OUT/sm-budget.csv; a short table last.
#   bash dev/ab/sm_budget_gpu.sh
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 16; } > $OUT/build.log 2>&1 ||
    { grep -B2 -A6 "error" $OUT/build.log | head -40; exit 1; }
echo "built $SECONDS s"
timeout 240 build/tests/gpu_gemm > $OUT/gpu_gemm.log 2>&1; echo "gpu_gemm rc=$? $(tail -1 $OUT/gpu_gemm.log) ($SECONDS s)"
grep -m5 -i "budget" $OUT/gpu_gemm.log
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links .peers/wheels pytest > /dev/null 2>&1
timeout 120 python3 -m pytest -q python/tests/test_gemm.py -k sm_budget > $OUT/pytest.log 2>&1
echo "pytest rc=$?: $(tail -1 $OUT/pytest.log)"
sms=$(build/bin/tessera info | sed -n 's/.*multiprocessors *\([0-9]*\).*/\1/p' | head -1)
sms=${sms:-132}
fp8="--A=e4m3:row --B=e4m3:col --scale-a=block1x128 --scale-b=block128x128"
{
    for budget in 0 $((sms * 112 / 132)) $((sms / 2)); do
        build/bin/tessera bench gemm --providers=tessera --sms=$budget --m=8192 --n=8192 --k=8192 --output=/dev/stdout
        build/bin/tessera bench gemm --providers=tessera --sms=$budget --m=8192 --n=8192 --k=8192 $fp8 --output=/dev/stdout
    done
} 2>&1 | grep -v "^#" | grep -v "^m,n,k" | grep "," > $OUT/sm-budget.csv
python3 - "$OUT/sm-budget.csv" <<'PY'
import csv, sys
cols = "m,n,k,batch,a_type,a_order,b_type,b_order,c_type,c_order,d_type,d_order,alpha,beta,scale_a,scale_b,fast_accum,bias,bias_type,activation,provider,kernel,ms,tflops,gbs,speedup_vs_cublas,rel_error,host_us,sm_mhz,board_w,tflops_per_ghz,tflop_per_j,best_tflops,hold_s,sm_budget".split(",")
rows = [dict(zip(cols, line)) for line in csv.reader(open(sys.argv[1])) if len(line) == len(cols)]
full = {r["a_type"]: float(r["tflops"]) for r in rows if int(r["sm_budget"]) == max(int(x["sm_budget"]) for x in rows)}
for r in rows:
    share = float(r["tflops"]) / full[r["a_type"]]
    print(f'{r["a_type"]:5} {r["sm_budget"]:>4} SMs {float(r["tflops"]):7.1f} TF/s  {share:.3f} of all  {r["kernel"]}')
PY
