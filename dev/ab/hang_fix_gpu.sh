#!/usr/bin/env bash
# The grouped hang's fix on the GPU (dev/NOTES.md, twelfth session), in two
# calls of under 600 s:
#   bash dev/ab/hang_fix_gpu.sh probe   the 16-bit grouped kernels built alone
#       with the fix and without it (consumer_follow_ring's barrier taken
#       out), dev/probes/grouped_hang.c's token-tile plans over SEEDS on each:
#       the build without the fix should hang where the fix does not.
#   bash dev/ab/hang_fix_gpu.sh tests   the full build, gpu_grouped (its
#       test_skip_after_compute first), gpu_gemm and gpu_gemm_fp8 (every
#       kernel's skip path changed).
# Logs under $OUT.
set -uo pipefail
. dev/ab/gpu_common.sh
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
if [ "${1:-probe}" = tests ]; then
    gpu_build
    build/tests/unit_gemm_plan > "$OUT/unit_gemm_plan.log" 2>&1; echo "unit_gemm_plan rc=$? $(tail -1 "$OUT/unit_gemm_plan.log")"
    for t in gpu_grouped gpu_gemm_fp8 gpu_gemm; do # each given what is left of 580 s
        left=$((580 - SECONDS))
        [ $left -lt 30 ] && { echo "$t: no time left"; continue; }
        timeout $left build/tests/$t > $OUT/$t.log 2>&1
        echo "$t rc=$? $(tail -1 $OUT/$t.log) ($SECONDS s)"
        grep -m8 "check failed" -A1 $OUT/$t.log
    done
    grep -E "^skip after compute|^every plan|^random cases" $OUT/gpu_grouped.log
    exit 0
fi
grouped_build() { # grouped_build DIR: the 16-bit grouped kernels and the probe against them
    (cmake -S . -B $1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESS_INSTANCES='^grouped_f16' &&
        cmake --build $1 -j 16 --target tessera_static tessera_ref) > $OUT/build-$1.log 2>&1 ||
        { tail -20 $OUT/build-$1.log; return 1; }
    gcc -std=c11 -O1 -Iinclude -Isrc -Itests -I$1/include -I$1/generated -I/usr/local/cuda/include \
        dev/probes/grouped_hang.c tests/problem.c -o /tmp/gh-$1 $(find $1 -name libtessera_ref.a | head -1) \
        $1/lib/libtessera.a -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt
    echo "built $1 ($SECONDS s)"
}
probe() { # probe DIR: gpu_grouped's test_skip_after_compute, then the hang probe over SEEDS, token-tile plans only
    CASES=0 SKIP_CASE=1 timeout 60 /tmp/gh-$1 > $OUT/skip-case-$1.log 2>&1
    echo "$1 test_skip_after_compute: rc=$? ($SECONDS s) $(grep -E "check failed|checks" $OUT/skip-case-$1.log | head -3 | tr '\n' ' ' | cut -c1-300)"
    for seed in ${SEEDS:-1 2 3 4}; do
        [ $SECONDS -gt 520 ] && { echo "$1: out of time before seed $seed"; break; }
        TESS_SEED=$seed CASES=${CASES:-11} REPS=8 BURST=4 PLAN_MATCH=_swap timeout 50 /tmp/gh-$1 > $OUT/probe-$1-$seed.log 2>&1
        echo "$1 seed $seed: rc=$? ($SECONDS s) $(grep -E "HANG|no hang" $OUT/probe-$1-$seed.log | cut -c1-220)"
    done
}
cp src/kernels/sm90/mainloop.cuh /tmp/mainloop.cuh.fix
sed -i '/^        named_barrier_sync(barrier, 128);$/d' src/kernels/sm90/mainloop.cuh
echo "barriers left in consumer_follow_ring: $(grep -c 'named_barrier_sync(barrier, 128)' src/kernels/sm90/mainloop.cuh)"
grouped_build nofix && probe nofix
cp /tmp/mainloop.cuh.fix src/kernels/sm90/mainloop.cuh
grouped_build fix && probe fix
