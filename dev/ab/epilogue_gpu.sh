#!/usr/bin/env bash
# Fused epilogues (issue 33) on the device in one call: the build (and each
# instance's compile time), the C GPU tests (random epilogues on every plan
# they run), the Python epilogue tests, and the epilogue suite against
# cuBLASLt. Logs and CSVs under $OUT; a short table last.
#   bash dev/ab/epilogue_gpu.sh     (PYTEST=0 skips the Python tests, BENCH=0 the suite; TESTS="gpu_gemm ...")
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 16; } > $OUT/build.log 2>&1 ||
    { grep -B2 -A6 "error" $OUT/build.log | head -60; exit 1; }
echo "built $SECONDS s"
for t in ${TESTS:-gpu_gemm gpu_gemm_fp8 gpu_grouped gpu_graph}; do
    timeout 240 build/tests/$t > $OUT/$t.log 2>&1
    echo "$t rc=$? $(tail -1 $OUT/$t.log) ($SECONDS s)"
    grep -m5 -i "fail" $OUT/$t.log | grep -v " 0 failed"
done
if [ "${BENCH:-1}" != 0 ]; then
    bash bench/run build epilogue > $OUT/bench.log 2>&1; echo "bench rc=$? ($SECONDS s)"
    cp bench/results/*-epilogue.csv $OUT/ 2>/dev/null
fi
if [ "${PYTEST:-1}" != 0 ]; then
    export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
    python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links .peers/wheels pytest > /dev/null 2>&1
    timeout 200 python3 -m pytest -q -rs python/tests/test_epilogue.py python/tests/test_gemm.py > $OUT/pytest.log 2>&1
    echo "pytest rc=$?: $(tail -1 $OUT/pytest.log) ($SECONDS s)"; grep -E "^FAILED|Error" $OUT/pytest.log | head
fi
[ -f $OUT/bench.log ] && grep -v "^#" $OUT/bench.log | tail -24
