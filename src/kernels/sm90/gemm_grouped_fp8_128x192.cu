// Grouped sm90 FP8 GEMM kernels (Mixture-of-Experts), e4m3 x e4m3, 128 x 192 tiles, 4 stages (5 leave
// no room for the group table): promoted per-tensor, and block-scaled (1x128 x 128x128).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_grouped_sm90_fp8_128x192[TESS_GROUPED_KERNELS_PER_TILE] = {
    TESS_GROUPED_ENTRY(128, 192, 4, 1, TESS_MMA_E4M3_E4M3, TESS_SCALING_PROMOTE),
    TESS_GROUPED_ENTRY(128, 192, 4, 1, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS)};
