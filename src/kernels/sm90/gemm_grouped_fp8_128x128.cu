// Grouped sm90 FP8 GEMM kernels (Mixture-of-Experts), e4m3 x e4m3, 128 x 128 tiles, 6 stages: promoted
// with per-tensor (per group) or per-row/column factors, and block-scaled (1x128 x 128x128).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_grouped_sm90_fp8_128x128[TESS_GROUPED_KERNELS_PER_TILE] = {
    TESS_GROUPED_ENTRY(128, 128, 6, 1, TESS_MMA_E4M3_E4M3, TESS_SCALING_PROMOTE),
    TESS_GROUPED_ENTRY(128, 128, 6, 1, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS)};
