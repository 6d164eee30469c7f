#!/usr/bin/env bash
# One device call (~9 min): issue 35's MoE backward, written without a GPU: the k-grouped weight
# gradient (dev/ab/kgrouped_wgrad.patch) and grouped GEMMs reading N-major 16-bit weights, the
# grouped dgrad in place (dev/ab/grouped_nmajor.patch, which sits on the first). The caller
# applies both (git apply dev/ab/kgrouped_wgrad.patch dev/ab/grouped_nmajor.patch). A lab build
# of every grouped and k-grouped instance and the dense ones pytest uses; unit_wgrad, gpu_wgrad,
# gpu_grouped; pytest's wgrad, grouped and ops tests; dev/probes/grouped_dgrad.py (in place against
# a K-major copy and torch) and bench/moe_train.py (the layer's step and the weight gradient
# beside torch). Logs and the CSV under $OUT, the key lines last.
#   git apply dev/ab/kgrouped_wgrad.patch dev/ab/grouped_nmajor.patch && bash dev/ab/moe_backward_gpu.sh
set -uo pipefail
rm -rf build
. dev/ab/gpu_common.sh
INSTANCES='^(grouped_.*|f16_kgrouped_.*|f16_128x128_c1|f16_128x256_c2|fp8_128x128_c1_rows|fp8_128x128_c1_promote)$' gpu_build
gpu_tests "unit_wgrad gpu_wgrad gpu_grouped"
gpu_pytest "python/tests/test_wgrad.py python/tests/test_grouped.py python/tests/test_ops.py"
export PYTHONPATH=$PWD/python TESSERA_LIBRARY=$PWD/build/lib/libtessera.so
timeout 120 python3 dev/probes/grouped_dgrad.py > $OUT/grouped_dgrad.txt 2>&1; echo "grouped_dgrad rc=$?"
timeout 240 python3 bench/moe_train.py --csv $OUT/h100-moe-train.csv > $OUT/moe_train.txt 2>&1; echo "moe_train rc=$?"
cat $OUT/grouped_dgrad.txt; tail -8 $OUT/moe_train.txt
echo "done $SECONDS s"
