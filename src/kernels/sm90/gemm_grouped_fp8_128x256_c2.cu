// Grouped sm90 FP8 GEMM kernels (Mixture-of-Experts), e4m3 x e4m3, 128 x 256 tiles, 4 stages, clusters of
// 2 along M: promoted per-tensor, and block-scaled (1x128 x 128x128), each K block promoted in two 128-wide
// halves (kernels/sm90/mainloop.cuh). The two CTAs take adjacent tile rows of one group and multicast its
// weight tile (why: gemm_grouped_f16_128x256_c2.cu).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_grouped_sm90_fp8_128x256_c2[TESS_GROUPED_KERNELS_PER_TILE] = {
    TESS_GROUPED_ENTRY(128, 256, 4, 2, TESS_MMA_E4M3_E4M3, TESS_SCALING_PROMOTE),
    TESS_GROUPED_ENTRY(128, 256, 4, 2, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS)};
