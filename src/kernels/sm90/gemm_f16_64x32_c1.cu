// sm90 16-bit token-tile kernels, 64 x 32 (small M: up to 64 tokens as A, 32 weight rows), 18 stages (the
// most that fit: 18 x (8 KiB + 4 KiB) of ring, 72 KiB of weights in flight where 128 x 32 holds 44),
// clusters of 1.
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_64x32_c1[TESS_GEMM_TOKEN_KERNELS_PER_TILE] = {
    TESS_GEMM_TOKEN_TILE(64, 32, 18)};
