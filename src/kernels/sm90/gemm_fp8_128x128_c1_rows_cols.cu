// sm90 FP8 GEMM kernels with 128 x 128 tiles, 6 stages, clusters of 1; block scales: per row of A, 1x128 B (the four type pairs).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c1_rows_cols[TESS_GEMM_FP8_PAIRS] = {
    TESS_GEMM_FP8_TILE(128, 128, 6, 1, TESS_SCALING_BLOCK_ROWS_COLS)};
