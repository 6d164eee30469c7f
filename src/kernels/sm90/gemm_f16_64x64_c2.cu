// sm90 16-bit GEMM kernels with 64 x 64 tiles (small M), 13 stages, clusters of 2 along M sharing B (each
// CTA multicasts 32 of its 64 rows: K-major B only), both input types, A K-major or M-major.
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_64x64_c2[TESS_GEMM_TOKEN_KERNELS_PER_TILE] = {
    TESS_GEMM_B_K_TILE(64, 64, 13, 2)};
