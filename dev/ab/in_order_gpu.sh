#!/usr/bin/env bash
# One device call (~3 min), dev/ab/in_order.patch applied: the in-order tile scheduler (in_order.cuh) of the
# k-grouped weight gradient. A lab build of the k-grouped instances, unit_wgrad and gpu_wgrad
# (values; the handle's counter must come back to zero after every launch, or the next call's
# tiles go missing), pytest's wgrad tests, then dev/probes/wgrad_plans.py (every plan beside
# torch._grouped_mm at G = 8 and 32, uniform and skewed).
# With dev/ab/fp8_wgrad.patch applied too, the same call proves the FP8 k-grouped kernel (in order).
#   git apply dev/ab/in_order.patch dev/ab/fp8_wgrad.patch && bash dev/ab/in_order_gpu.sh
set -uo pipefail
. dev/ab/gpu_common.sh
INSTANCES='^(f16_kgrouped_.*|fp8_kgrouped_.*|f16_128x128_c1)$' gpu_build  # (fp8_kgrouped: with fp8_wgrad.patch)
gpu_tests "unit_wgrad gpu_wgrad"
gpu_pytest python/tests/test_wgrad.py
export PYTHONPATH=$PWD/python TESSERA_LIBRARY=$PWD/build/lib/libtessera.so
timeout 150 python3 dev/probes/wgrad_plans.py > $OUT/wgrad_plans.txt 2>&1; echo "wgrad_plans rc=$?"
cat $OUT/wgrad_plans.txt
echo "done $SECONDS s"
