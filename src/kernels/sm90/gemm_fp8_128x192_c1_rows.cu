// sm90 FP8 GEMM kernels with 128 x 192 tiles, 5 stages, clusters of 1; block scales: per row of A, 128x128 B (two B factors per tile) (the four type pairs).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_fp8_128x192_c1_rows[TESS_GEMM_FP8_PAIRS] = {
    TESS_GEMM_FP8_TILE(128, 192, 5, 1, TESS_SCALING_BLOCK_ROWS)};
