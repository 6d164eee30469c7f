#!/usr/bin/env bash
# The masked grouped planner on the device in one call (needs .peers): the
# library and DeepGEMM built side by side, the planner's ranking of the peers'
# masked cases (dev/plan_rank.c), gpu_grouped, every plan over draws of the
# group sizes (dev/probes/masked_plans.py), then fp8.py's masked section.
#   bash dev/ab/masked_gpu.sh    (DRAWS=4 by default; GPU_TESTS="" skips the test)
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH DG_JIT_CACHE_DIR=/tmp/dg_jit_cache
export PYTHONPATH=$PWD/.peers/deepgemm:$PWD/python TESSERA_ROOT=$PWD TESSERA_LIBRARY=$PWD/build/lib/libtessera.so
mkdir -p "$OUT"
bash .peers/build_deepgemm.sh > "$OUT/dg_build.log" 2>&1 &
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j 16; } > "$OUT/build.log" 2>&1 ||
    { grep -E "FAILED|error" "$OUT/build.log" | head -20; exit 1; }
wait
echo "built $SECONDS s"
cc -std=c11 -Iinclude -Isrc -Ibuild/generated dev/plan_rank.c build/lib/libtessera.a -L/usr/local/cuda/lib64 \
    -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt -o /tmp/plan_rank &&
    /tmp/plan_rank 3 masked:1,1024,7168,2048 masked:1,1024,4096,7168 masked:2,512,7168,2048 masked:2,512,4096,7168 \
        masked:4,256,7168,2048 masked:4,256,4096,7168 masked:32,64,4096,7168 masked:32,64,7168,2048 | tee "$OUT/plan_rank.txt"
for t in ${GPU_TESTS-gpu_grouped}; do
    timeout 300 build/tests/$t > "$OUT/$t.log" 2>&1; echo "$t rc=$? $(tail -1 "$OUT/$t.log") ($SECONDS s)"
done
timeout 260 python3 dev/probes/masked_plans.py --peers .peers --csv "$OUT/masked-plans.csv" --draws "${DRAWS:-4}" \
    --limit 6 --shape 1x1024x7168x2048 --shape 1x1024x4096x7168 --shape 2x512x7168x2048 --shape 2x512x4096x7168 \
    --shape 4x256x7168x2048 --shape 4x256x4096x7168 --shape 32x64x7168x2048 --shape 32x64x4096x7168 2>&1 | grep -v -i warn | grep -E "==|deepgemm|pick|WRONG"
echo "draws done ($SECONDS s)"
timeout 200 python3 .peers/fp8.py --filter masked --csv "$OUT/fp8-masked.csv" 2>&1 | grep -E "^masked|SUMMARY|geomean" | cut -c1-160
echo "done $SECONDS s"
