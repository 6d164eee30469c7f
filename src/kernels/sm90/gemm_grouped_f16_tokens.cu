// Grouped sm90 GEMM token-tile kernels, 16-bit (bf16, f16): small groups run
// transposed, 128 weight rows by 16, 32 or 64 tokens of one group, so a group
// of a few tokens does not pay for 128-row wgmmas. Stages: the most that fit
// the 227 KiB with the 8 KiB group table (12 x 18 KiB, 10 x 20 KiB, 9 x 24 KiB).
#include "kernels/sm90/gemm_sm90.cuh"

// One token width's two entries (bf16, f16).
#define TESS_GROUPED_F16_TOKEN_TILE(BN, ST)                                                                        \
    TESS_GROUPED_TOKEN_ENTRY(128, BN, ST, TESS_MMA_BF16, TESS_SCALING_PLAIN),                                      \
        TESS_GROUPED_TOKEN_ENTRY(128, BN, ST, TESS_MMA_F16, TESS_SCALING_PLAIN)

extern "C" const tess_gemm_kernel tess_grouped_sm90_tokens[TESS_GROUPED_TOKEN_KERNELS] = {
    TESS_GROUPED_F16_TOKEN_TILE(16, 12), TESS_GROUPED_F16_TOKEN_TILE(32, 10), TESS_GROUPED_F16_TOKEN_TILE(64, 9)};
