// sm90 FP8 kernels for small M, 128 x 128 (the tokens in A's 128 rows), 6 stages (as the same tile in
// clusters of 1), clusters of 2 along N that share the token tile by multicast; e4m3 x e4m3, promoted and block-scaled.
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c1x2[TESS_GEMM_FP8_TOKEN_KERNELS] = {
    TESS_GEMM_FP8_TOKEN_TILE(128, 128, 6, 2)};
