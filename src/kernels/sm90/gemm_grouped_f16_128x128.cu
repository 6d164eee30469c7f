// Grouped sm90 GEMM kernels (Mixture-of-Experts), 16-bit, 128 x 128 tiles, 6 stages (bf16, f16).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_grouped_sm90_128x128[TESS_GROUPED_KERNELS_PER_TILE] = {
    TESS_GROUPED_ENTRY(128, 128, 6, 1, TESS_MMA_BF16, TESS_SCALING_PLAIN),
    TESS_GROUPED_ENTRY(128, 128, 6, 1, TESS_MMA_F16, TESS_SCALING_PLAIN)};
