#!/usr/bin/env bash
# One device call (~3 min), dev/ab/fp8_wgrad.patch applied (with or without in_order.patch): the
# FP8 k-grouped weight gradient. A lab build of the k-grouped instances and the one dense kernel the
# tests' refusals plan with, unit_wgrad (its FP8 refusals and plans) and gpu_wgrad (its FP8 cases:
# column-major e4m3 dY and X, 1x128 factors along the tokens, groups of whole 128-token blocks,
# every plan against the dequantized reference; and the 16-bit cases, unchanged), then pytest's
# wgrad tests (tessera.grouped_mm_wgrad_fp8 on quantize_fp8_transposed's copies, its refusals).
#   git apply dev/ab/fp8_wgrad.patch && bash dev/ab/fp8_wgrad_gpu.sh
set -uo pipefail
. dev/ab/gpu_common.sh
INSTANCES='^(f16_kgrouped_.*|fp8_kgrouped_.*|f16_128x128_c1)$' gpu_build
gpu_tests "unit_wgrad gpu_wgrad"
gpu_pytest python/tests/test_wgrad.py
grep -E "FP8|seed" $OUT/gpu_wgrad.log | head -12
echo "done $SECONDS s"
