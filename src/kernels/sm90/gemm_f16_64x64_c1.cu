// sm90 16-bit GEMM kernels with 64 x 64 tiles (small M), 13 stages (the most that fit with the 8 KiB
// epilogue sub-tile: 13 x (8 KiB + 8 KiB) of ring), clusters of 1 (both input types, all operand majors).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_64x64_c1[TESS_GEMM_KERNELS_PER_TILE] = {TESS_GEMM_TILE(64, 64, 13, 1)};
