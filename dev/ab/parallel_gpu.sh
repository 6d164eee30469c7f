#!/usr/bin/env bash
# The parallel layers (issue 36) on a machine of N GPUs in one call: the build, each example's
# --check on a small layer, then the timings at DeepSeek-V3 sizes (EP MoE bf16 and FP8, all
# SMs and a budget; the TP pair at 1, 2 and 4 chunks) into $OUT/ep_moe.csv and tp_pair.csv.
#   bash dev/ab/parallel_gpu.sh        (BUDGET=112 ITERS=20; QUICK=1: the targets' four runs only;
#                                       PROFILE=1: torch.profiler traces instead, summarised by
#                                       dev/probes/trace_overlap.py into $OUT/overlap.txt, the EP
#                                       overlapped step's rank-0 trace kept gzipped;
#                                       INSTANCES: a TESS_INSTANCES regex for a shorter build)
#   CE=1 bash dev/ab/parallel_gpu.sh   no build: dev/probes/ce_allgather.py (an all-gather by the copy
#                                       engines beside NCCL's, alone and under a GEMM) at two sizes
#   HANG=1 bash dev/ab/parallel_gpu.sh   the EP layer with copies on all SMs (which hung once) up to
#                                       four times, 90 s each; a run still going then gets SIGUSR1
#                                       (every rank prints its Python stacks) before it is killed
#   COPY_ENGINE=1 bash dev/ab/parallel_gpu.sh   both layers with --transport copy_engine: their
#                                       --check (EP bf16 and FP8), the TP pair at 2 and 4 chunks on all
#                                       SMs and 4 chunks on 124, the EP layer bf16 on all SMs and 112,
#                                       FP8 on all, each beside NCCL's usual run (TP 4 chunks, EP bf16,
#                                       112 SMs); INSTANCES='^(f16|grouped)' builds what they use
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
if [ "${CE:-0}" = 1 ]; then
    n=$(nvidia-smi -L | wc -l)
    for rows in 4096 16384; do
        timeout 200 torchrun --nproc-per-node=$n dev/probes/ce_allgather.py --rows $rows > $OUT/ce-$rows.log 2>&1
        echo "rc=$? rows $rows ($SECONDS s)"; grep -v "^W\|^\[W" $OUT/ce-$rows.log | tail -9
    done
    exit 0
fi
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESS_INSTANCES="${INSTANCES:-}" && cmake --build build -j 32; } > $OUT/build.log 2>&1 ||
    { grep -B2 -A6 "error" $OUT/build.log | head -40; exit 1; }
echo "built $SECONDS s"
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so
n=$(nvidia-smi -L | wc -l); budget=${BUDGET:-112}; iters=${ITERS:-20}
run() { timeout ${RUN_TIMEOUT:-240} torchrun --nproc-per-node=$n "$@" >> $OUT/run.log 2>&1; echo "rc=$? $* ($SECONDS s)"; }
if [ "${PROFILE:-0}" = 1 ]; then # torch.profiler traces of both steps, each rank (chrome://tracing)
    run examples/ep_moe.py --sm-budget $budget --iters 3 --warmup 2 --profile $OUT/profile-ep
    run examples/tp_pair.py --chunks 4 --sm-budget $budget --iters 3 --warmup 2 --profile $OUT/profile-tp
    python3 dev/probes/trace_overlap.py $OUT/profile-*/*.json > $OUT/overlap.txt 2>&1; cat $OUT/overlap.txt
    gzip -c $OUT/profile-ep/overlapped-rank0.json > $OUT/ep-overlapped-rank0.json.gz # the one trace kept
    mkdir -p /tmp/traces && for f in $OUT/profile-*/*.json $OUT/profile-*/*rank1.txt; do
        mv "$f" /tmp/traces/$(basename $(dirname "$f"))-$(basename "$f"); done # 8 files come back
elif [ "${HANG:-0}" = 1 ]; then # where the EP layer with copies on all SMs waits, if it hangs
    for i in 1 2 3 4; do
        torchrun --nproc-per-node=$n examples/ep_moe.py --sm-budget 0 --iters $iters --csv $OUT/ep_moe.csv \
            --transport copy_engine >> $OUT/run.log 2>&1 &
        pid=$! t=0
        while kill -0 $pid 2>/dev/null && [ $t -lt 90 ]; do sleep 1; t=$((t + 1)); done
        if kill -0 $pid 2>/dev/null; then
            echo "run $i hung after $t s: stacks in run.log"; pkill -USR1 -f examples/ep_moe.py; sleep 5
            nvidia-smi --query-gpu=index,utilization.gpu,power.draw --format=csv >> $OUT/run.log
            pkill -9 -f examples/ep_moe.py; kill -9 $pid 2>/dev/null; break
        fi
        wait $pid; echo "run $i rc=$? ($SECONDS s)"
    done
    grep -A40 "Thread 0x" $OUT/run.log | grep -E "File|Thread" | head -60
elif [ "${COPY_ENGINE:-0}" = 1 ]; then # both layers' collectives by the copy engines
    ce="--transport copy_engine"
    run examples/tp_pair.py --check --iters 0 $ce
    run examples/ep_moe.py --check --iters 0 $ce
    run examples/ep_moe.py --check --iters 0 --dtype fp8 $ce
    run examples/tp_pair.py --chunks 4 --sm-budget $budget --iters $iters --csv $OUT/tp_pair.csv
    for spec in "2 0" "4 0" "4 124"; do
        set -- $spec
        run examples/tp_pair.py --chunks $1 --sm-budget $2 --iters $iters --csv $OUT/tp_pair.csv $ce
    done
    run examples/ep_moe.py --sm-budget $budget --iters $iters --csv $OUT/ep_moe.csv
    for sms in 0 $budget; do
        run examples/ep_moe.py --sm-budget $sms --iters $iters --csv $OUT/ep_moe.csv $ce
    done
    run examples/ep_moe.py --dtype fp8 --sm-budget 0 --iters $iters --csv $OUT/ep_moe.csv $ce
elif [ "${QUICK:-0}" = 1 ]; then # the targets' runs only, for a short lease
    run examples/ep_moe.py --check --sm-budget $budget --iters $iters --csv $OUT/ep_moe.csv
    run examples/ep_moe.py --sm-budget 0 --iters $iters --csv $OUT/ep_moe.csv
    run examples/ep_moe.py --dtype fp8 --sm-budget $budget --iters $iters --csv $OUT/ep_moe.csv
    run examples/tp_pair.py --check --chunks 4 --sm-budget $budget --iters $iters --csv $OUT/tp_pair.csv
else
    run examples/ep_moe.py --check --iters 0
    run examples/ep_moe.py --check --iters 0 --dtype fp8
    run examples/tp_pair.py --check --iters 0
    for dtype in bf16 fp8; do
        for sms in 0 $budget; do
            run examples/ep_moe.py --dtype $dtype --sm-budget $sms --iters $iters --csv $OUT/ep_moe.csv
        done
    done
    for chunks in 1 2 4; do
        run examples/tp_pair.py --chunks $chunks --sm-budget $budget --iters $iters --csv $OUT/tp_pair.csv
    done
fi
grep -i -m5 "error\|traceback" $OUT/run.log
python3 - $OUT <<'PY'
import csv, os, sys
for name in ("ep_moe.csv", "tp_pair.csv"):
    path = os.path.join(sys.argv[1], name)
    if not os.path.exists(path):
        continue
    for r in csv.DictReader(open(path)):
        keys = [k for k in r if k.endswith("_ms") or k in ("dtype", "transport", "sm_budget", "chunks", "overlap", "speedup", "tokens_per_s_per_gpu")]
        print(name, " ".join(f"{k}={r[k][:7]}" for k in keys))
PY
