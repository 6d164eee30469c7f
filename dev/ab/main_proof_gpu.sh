#!/usr/bin/env bash
# One device call (~9 min): main's whole GPU proof after a kernel change. A full build from scratch
# (every instance: the ptxas guard refuses spills), every GPU test binary side by side (they check
# values, not times), unit_aux, then pytest over python/tests on this build with the call's
# remaining time. Logs under $OUT; a line per step.
#   bash dev/ab/main_proof_gpu.sh
set -uo pipefail
rm -rf build  # a warm machine keeps the last call's objects, newer than this tree's sources
TESTS="gpu_gemm gpu_gemm_fp8 gpu_grouped gpu_w4a16 gpu_graph gpu_utilities gpu_device gpu_convert gpu_ref_gemm" \
    TEST_TIMEOUT_S=${TEST_TIMEOUT_S:-240} bash dev/ab/kernels_gpu.sh || exit 1
build/tests/unit_aux > $OUT/unit_aux.log 2>&1; echo "unit_aux rc=$? $(tail -1 $OUT/unit_aux.log)"
export TESSERA_LIBRARY=$PWD/build/lib/libtessera.so PYTHONPATH=$PWD/python
left=$((575 - SECONDS))
timeout $left python3 -m pytest -q -x -rs python/tests > $OUT/pytest.log 2>&1
echo "pytest rc=$? (limit $left s): $(tail -1 $OUT/pytest.log) ($SECONDS s)"
grep -E "^FAILED|^E " $OUT/pytest.log | head -20
