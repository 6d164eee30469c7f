// Grouped sm90 GEMM kernels (Mixture-of-Experts), 16-bit, 128 x 256 tiles, 4
// stages, clusters of 2 along M (bf16, f16): the two CTAs take adjacent tile
// rows of one group and multicast its weight tile, each loading half. On long
// runs this keeps pairs in step and halves the weight reads from L2: the
// cluster-free kernel fell to 274 TFLOP/s on 256 groups of 4096 tokens
// (H100, 2026-11-24, bench/NOTES.md), as a dense 128x256 tile without
// clusters does at M=262144 (402 against 686 TFLOP/s).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_grouped_sm90_128x256_c2[TESS_GROUPED_KERNELS_PER_TILE] = {
    TESS_GROUPED_ENTRY(128, 256, 4, 2, TESS_MMA_BF16, TESS_SCALING_PLAIN),
    TESS_GROUPED_ENTRY(128, 256, 4, 2, TESS_MMA_F16, TESS_SCALING_PLAIN)};
