// sm90 16-bit kernels for small M, 128 x 32 (the tokens in A's 128 rows, 32 weight rows a tile, all of K),
// 11 stages (as the 128 x 32 token tiles), clusters of 2 along N that share the token tile by multicast.
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_128x32_c1x2[TESS_GEMM_TOKEN_KERNELS_PER_TILE] = {
    TESS_GEMM_TOKEN_TILE(128, 32, 11, 2)};
