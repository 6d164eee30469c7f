#!/usr/bin/env bash
# One device call (~8 min): the k-grouped weight gradient (issue 35, dev/ab/kgrouped_wgrad.patch,
# applied by the caller first: git apply dev/ab/kgrouped_wgrad.patch). A lab build of the
# k-grouped instances and the dense/grouped ones the Python tests use, then gpu_wgrad,
# unit_wgrad, pytest's wgrad and ops tests, and bench/moe_train.py (the layer's step and the
# weight gradient alone beside torch). Logs and the CSV under $OUT.
#   git apply dev/ab/kgrouped_wgrad.patch && bash dev/ab/wgrad_gpu.sh
set -uo pipefail
rm -rf build
. dev/ab/gpu_common.sh
INSTANCES='^(f16_kgrouped_128x256|f16_kgrouped_128x128|f16_128x128_c1|f16_128x256_c2|grouped_f16_128x256_c2|grouped_f16_128x256|grouped_f16_128x128|grouped_f16_tokens64)$' gpu_build
gpu_tests "unit_wgrad gpu_wgrad"
gpu_pytest "python/tests/test_wgrad.py python/tests/test_ops.py"
PYTHONPATH=$PWD/python TESSERA_LIBRARY=$PWD/build/lib/libtessera.so timeout 240 \
    python3 bench/moe_train.py --csv $OUT/h100-moe-train.csv 2>&1 | tail -12
echo "done $SECONDS s"
