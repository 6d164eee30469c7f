// sm90 FP8 token-tile kernels, 128 x 32 (small M run transposed: 128 weight rows x 32 tokens), 10 stages
// (the most that fit the 227 KiB), clusters of 1, e4m3 x e4m3 (promoted and block-scaled).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_fp8_128x32_c1_tokens[TESS_GEMM_FP8_TOKEN_KERNELS] = {
    TESS_GEMM_FP8_TOKEN_TILE(128, 32, 10)};
