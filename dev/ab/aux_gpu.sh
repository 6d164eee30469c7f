#!/usr/bin/env bash
# Issue 33, the aux output: in one device call (~9 min), a full build from scratch (every instance:
# the ptxas guard refuses spills), gpu_gemm (its random problems write aux a third of the time when
# they have an activation, a third of those with an odd ld that TMA cannot store, checked against
# the GPU reference stopped before the activation) with gpu_gemm_fp8, gpu_grouped, gpu_graph,
# gpu_utilities and unit_aux beside it, pytest's aux tests (values, f32 and column-major aux, every plan) and
# the gradients through fused activations (dense and grouped),
# then the epilogue suite's aux lines beside the same lines without aux (bursts, cuBLASLt's GELU_AUX_BIAS
# in the same process). Logs and the CSV under $OUT; a table last.
set -uo pipefail
rm -rf build  # a warm machine keeps the last call's objects, newer than this tree's sources
TESTS="gpu_gemm gpu_gemm_fp8 gpu_grouped gpu_graph gpu_utilities" TEST_TIMEOUT_S=200 bash dev/ab/kernels_gpu.sh || exit 1
build/tests/unit_aux > $OUT/unit_aux.log 2>&1; echo "unit_aux rc=$? $(tail -1 $OUT/unit_aux.log)"
. dev/ab/gpu_common.sh
PYTEST_ADDOPTS="-k 'aux or fp8_matches or gradient'" gpu_pytest "python/tests/test_epilogue.py python/tests/test_ops.py"
grep -E -h -- "--aux$" bench/suites/epilogue.txt | sed 's/ --aux$//' > $OUT/aux-suite.txt
grep -E -h -- "--aux$" bench/suites/epilogue.txt >> $OUT/aux-suite.txt
build/bin/tessera bench gemm --suite=$OUT/aux-suite.txt --output=$OUT/h100-aux.csv > $OUT/aux-bench.log 2>&1
echo "bench rc=$? ($SECONDS s)"
grep -E " (tessera|cublas) " $OUT/aux-bench.log | sed -E 's/ +/ /g' | cut -d' ' -f1-12
