// Grouped sm90 GEMM token-tile kernels, e4m3 x e4m3 (promoted per-tensor or
// per-row factors, and block-scaled: 128x128 weight factors on A's rows,
// 1x128 token factors on B's columns): small groups run transposed, 128
// weight rows by 16, 32 or 64 tokens of one group. Stages: the most that fit
// the 227 KiB with the 8 KiB group table and the block factors' area
// (11 x 18.6 KiB, 10 x 20.8 KiB, 8 x 24.9 KiB).
#include "kernels/sm90/gemm_sm90.cuh"

// One token width's two entries (promoted, block-scaled).
#define TESS_GROUPED_FP8_TOKEN_TILE(BN, ST)                                                                        \
    TESS_GROUPED_TOKEN_ENTRY(128, BN, ST, TESS_MMA_E4M3_E4M3, TESS_SCALING_PROMOTE),                               \
        TESS_GROUPED_TOKEN_ENTRY(128, BN, ST, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS_COLS)

extern "C" const tess_gemm_kernel tess_grouped_sm90_fp8_tokens[TESS_GROUPED_TOKEN_KERNELS] = {
    TESS_GROUPED_FP8_TOKEN_TILE(16, 11), TESS_GROUPED_FP8_TOKEN_TILE(32, 10), TESS_GROUPED_FP8_TOKEN_TILE(64, 8)};
