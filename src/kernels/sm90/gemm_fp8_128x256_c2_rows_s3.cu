// sm90 FP8 GEMM kernels with 128 x 256 tiles, 3 stages (room to stage the whole tile's epilogue at once), clusters of 2; block scales: per row of A, 128x128 B, promoted in two 128-wide halves (the four type pairs).
#include "kernels/sm90/gemm_sm90.cuh"

extern "C" const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_rows_s3[TESS_GEMM_FP8_PAIRS] = {
    TESS_GEMM_FP8_TILE(128, 256, 3, 2, TESS_SCALING_BLOCK_ROWS)};
