#!/usr/bin/env bash
# The whole build, the C GPU tests, the Python tests and the Python call overhead in one device
# call (logs and CSVs under $OUT; pytest from .peers/wheels where the device has none).
#   bash dev/ab/package_gpu.sh      (C_TESTS=0: the Python side only)
set -uo pipefail
export CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j 16; } > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "built $SECONDS s"
[ "${C_TESTS:-1}" = 0 ] || for t in gpu_gemm gpu_gemm_fp8 gpu_graph gpu_grouped; do timeout 240 build/tests/$t > $OUT/$t.log 2>&1; echo "$t rc=$? $(tail -1 $OUT/$t.log) ($SECONDS s)"; done
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
python3 -c "import pytest" 2>/dev/null || pip install -q --no-index --find-links .peers/wheels pytest > /dev/null 2>&1
timeout 300 python3 -m pytest -q -rs python/tests > $OUT/pytest.log 2>&1; echo "pytest rc=$?: $(tail -1 $OUT/pytest.log) ($SECONDS s)"; grep -E "^FAILED|Error" $OUT/pytest.log | head
timeout 90 python3 bench/python_overhead.py --m 1 --n 4096 --k 4096 --csv $OUT/python_overhead.csv > $OUT/python_overhead.log 2>&1; echo "overhead rc=$?"; tail -8 $OUT/python_overhead.log
