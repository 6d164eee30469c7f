// sm90 16-bit token-tile kernels, 128 x 32 (small M run transposed: 128 weight rows x 32 tokens), 11 stages
// (the most that fit: 11 x (16 KiB + 4 KiB) of ring), clusters of 1.
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_128x32_c1[TESS_GEMM_TOKEN_KERNELS_PER_TILE] = {
    TESS_GEMM_TOKEN_TILE(128, 32, 11)};
