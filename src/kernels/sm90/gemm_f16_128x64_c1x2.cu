// sm90 16-bit kernels for small M, 128 x 64 (the tokens in A's 128 rows), 8 stages (as 128 x 64 in
// clusters of 1), clusters of 2 along N that share the token tile by multicast.
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_128x64_c1x2[TESS_GEMM_TOKEN_KERNELS_PER_TILE] = {
    TESS_GEMM_TOKEN_TILE(128, 64, 8, 2)};
