// sm90 16-bit GEMM kernels with 128 x 64 tiles, 8 stages, clusters of 1 (both input types, all operand majors).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_128x64_c1[TESS_GEMM_KERNELS_PER_TILE] = {TESS_GEMM_TILE(128, 64, 8, 1)};
