// sm90 16-bit GEMM kernels with 128 x 128 tiles, 6 stages, clusters of 2 (both input types, all operand majors).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_128x128_c2[TESS_GEMM_KERNELS_PER_TILE] = {TESS_GEMM_TILE(128, 128, 6, 2)};
