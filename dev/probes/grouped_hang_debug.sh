#!/usr/bin/env bash
# One device call: the 16-bit grouped kernels built with TESS_DEBUG_HANG
# (every mbarrier wait over 2 s prints its barrier and traps; the ptxas
# guard and --Werror dropped, as the printf spills), then the hang probe
# (grouped_hang.c) over seeds until one hangs. Barrier offsets: full[s] at
# STAGES * (A + B stage bytes) + EPI_BYTES + scale bytes (dynamic shared memory from 0).
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
sed -i -e 's/ --Werror=all-warnings//' -e '/list(PREPEND CMAKE_CUDA_COMPILER_LAUNCHER/d' CMakeLists.txt
(cmake -S . -B build-debug -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESS_INSTANCES="${INSTANCES:-^grouped_f16}" \
    -DCMAKE_CUDA_FLAGS=-DTESS_DEBUG_HANG && cmake --build build-debug -j 16 --target tessera_static tessera_ref) \
    > $OUT/build-debug.log 2>&1 || { tail -30 $OUT/build-debug.log; exit 1; }
b=build-debug
gcc -std=c11 -O1 -Iinclude -Isrc -Itests -I$b/include -I$b/generated -I/usr/local/cuda/include dev/probes/grouped_hang.c \
    tests/problem.c -o /tmp/gh-debug $(find $b -name libtessera_ref.a | head -1) $b/lib/libtessera.a \
    -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt || exit 1
echo "built $SECONDS s"
for seed in ${SEEDS:-1 2 3 4 5 6 7 8}; do # until one hangs, within the call's 600 s
    [ $SECONDS -gt 480 ] && { echo "out of time before seed $seed"; break; }
    TESS_SEED=$seed CASES=${CASES:-11} REPS=8 BURST=4 WATCH_S=10 PLAN_MATCH=${PLAN_MATCH:-_swap} \
        timeout 90 /tmp/gh-debug > $OUT/debug-$seed.log 2>&1
    rc=$?
    echo "seed $seed: rc=$rc ($SECONDS s) $(grep -E "HANG|no hang" $OUT/debug-$seed.log | cut -c1-300)"
    if grep -q "hang:" $OUT/debug-$seed.log; then
        grep "hang:" $OUT/debug-$seed.log | sort -t" " -k3n | head -60
        grep -c "hang:" $OUT/debug-$seed.log
        break
    fi
done
