#!/usr/bin/env bash
# Training pieces (issue 35) on the device in one call: the build, the CPU
# planner test, the GPU tests of the utilities (cast-transpose) and of FP8
# (operands staged K-major), the Python FP8-training and GEMM tests, and
# bench/training.py. Logs and the CSV under $OUT; a short table last.
#   bash dev/ab/training_gpu.sh    (BENCH=0 skips the bench, QUICK=1 runs it --quick, PARTS=cast its parts;
#                                   TESTS="gpu_utilities ...", PYTESTS="python/tests/...")
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 16; } > $OUT/build.log 2>&1 ||
    { grep -B2 -A6 "error" $OUT/build.log | head -60; exit 1; }
echo "built $SECONDS s"
for t in ${TESTS:-unit_gemm_plan gpu_utilities gpu_gemm_fp8}; do
    timeout 240 build/tests/$t > $OUT/$t.log 2>&1
    echo "$t rc=$? $(tail -1 $OUT/$t.log) ($SECONDS s)"
    grep -m8 -i "fail\|error" $OUT/$t.log | grep -v " 0 failed\|0 wrong"
done
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links .peers/wheels pytest > /dev/null 2>&1
timeout 240 python3 -m pytest -q -rs ${PYTESTS:-python/tests/test_fp8_training.py python/tests/test_gemm.py} > $OUT/pytest.log 2>&1
echo "pytest rc=$?: $(tail -1 $OUT/pytest.log) ($SECONDS s)"; grep -E "^FAILED|^E " $OUT/pytest.log | head -20
if [ "${BENCH:-1}" != 0 ]; then
    timeout 300 python3 bench/training.py ${QUICK:+--quick} --parts ${PARTS:-cast,bf16,fp8} --csv $OUT/training.csv \
        > $OUT/bench.log 2>&1
    echo "bench rc=$? ($SECONDS s)"; cat $OUT/bench.log | tail -40
fi
