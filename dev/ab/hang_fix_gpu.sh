#!/usr/bin/env bash
# The grouped hang's fix on the GPU in one call (dev/NOTES.md, twelfth
# session): the full build and gpu_grouped twice (its test_skip_after_compute
# first), then dev/probes/grouped_hang.c over SEEDS on the fix, then the same
# probe on the 16-bit grouped kernels built without the fix (the barrier in
# consumer_follow_ring taken out), which should hang where the fix does not.
#   bash dev/ab/hang_fix_gpu.sh        (logs under $OUT)
set -uo pipefail
. dev/ab/gpu_common.sh
gpu_build
for i in 1 2; do
    timeout 240 build/tests/gpu_grouped > $OUT/gpu_grouped-$i.log 2>&1
    echo "gpu_grouped run $i rc=$? ($SECONDS s): $(grep -E "^skip after compute|gpu_grouped:" $OUT/gpu_grouped-$i.log | tr '\n' ' ')"
    grep -m5 "check failed" -A1 $OUT/gpu_grouped-$i.log
done
probe() { # probe BUILD_DIR TAG: the hang probe over SEEDS, token-tile plans only
    gcc -std=c11 -O1 -Iinclude -Isrc -Itests -I$1/include -I$1/generated -I/usr/local/cuda/include \
        dev/probes/grouped_hang.c tests/problem.c -o /tmp/gh-$2 $(find $1 -name libtessera_ref.a | head -1) \
        $1/lib/libtessera.a -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt || return
    for seed in ${SEEDS:-1 2 3 4 5 6}; do
        TESS_SEED=$seed CASES=${CASES:-11} REPS=8 BURST=4 PLAN_MATCH=_swap timeout 120 /tmp/gh-$2 > $OUT/probe-$2-$seed.log 2>&1
        echo "$2 seed $seed: rc=$? ($SECONDS s) $(grep -E "HANG|no hang" $OUT/probe-$2-$seed.log | cut -c1-200)"
    done
}
probe build fix
cp src/kernels/sm90/mainloop.cuh /tmp/mainloop.cuh.fix
sed -i '/^        named_barrier_sync(barrier, 128);$/d' src/kernels/sm90/mainloop.cuh
grep -c "named_barrier_sync(barrier, 128)" src/kernels/sm90/mainloop.cuh
(cmake -S . -B build-nofix -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESS_INSTANCES='^grouped_f16' &&
    cmake --build build-nofix -j 16 --target tessera_static tessera_ref) > $OUT/build-nofix.log 2>&1 || tail -20 $OUT/build-nofix.log
cp /tmp/mainloop.cuh.fix src/kernels/sm90/mainloop.cuh
probe build-nofix nofix
