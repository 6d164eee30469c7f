// sm90 FP8 GEMM kernels with 128 x 256 tiles, 3 stages (room to stage the whole tile's epilogue at once), clusters of 2; promotion every 128 K in two 128-wide halves, factors per tensor or per row/column (the four type pairs).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_promote_s3[TESS_GEMM_FP8_PAIRS] = {
    TESS_GEMM_FP8_TILE(128, 256, 3, 2, TESS_SCALING_PROMOTE)};
