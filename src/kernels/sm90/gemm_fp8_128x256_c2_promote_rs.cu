// sm90 FP8 GEMM kernels with 128 x 256 tiles, 4 stages, clusters of 2; promotion every 128 K in two 128-wide halves with A from registers, factors per tensor or per row/column (the four type pairs).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_promote_rs[TESS_GEMM_FP8_PAIRS] = {
    TESS_GEMM_FP8_TILE_RS(128, 256, 4, 2, TESS_SCALING_PROMOTE)};
