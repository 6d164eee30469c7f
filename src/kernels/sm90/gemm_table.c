/* The table of sm90 GEMM kernels: the per-configuration tables of
 * gemm_f16_*.cu, gemm_fp8_*.cu and gemm_grouped_*.cu, in the order the planner lists them when
 * costs tie. */
#include "kernels/sm90/gemm_kernels.h"

extern const tess_gemm_kernel tess_gemm_sm90_128x256_c4[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x256_c2[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x256_c1[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x128_c2[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x128_c1[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x64_c1[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x32_c1[TESS_GEMM_TOKEN_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x16_c1[TESS_GEMM_TOKEN_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x64_c1_tokens[TESS_GEMM_FP8_TOKEN_KERNELS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x32_c1_tokens[TESS_GEMM_FP8_TOKEN_KERNELS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x16_c1_tokens[TESS_GEMM_FP8_TOKEN_KERNELS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c2_promote[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c1_promote[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c2_rows[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c1_rows[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c2_rows_cols[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x128_c1_rows_cols[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_plain[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_promote[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_rows[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_promote_s3[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c2_rows_s3[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x192_c2_promote[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x192_c1_promote[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x192_c2_rows[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x192_c1_rows[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x192_c2_rows_cols[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x192_c1_rows_cols[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_gemm_sm90_fp8_128x256_c1_plain[TESS_GEMM_FP8_PAIRS];
extern const tess_gemm_kernel tess_grouped_sm90_128x256[TESS_GROUPED_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_grouped_sm90_128x256_c2[TESS_GROUPED_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_grouped_sm90_128x128[TESS_GROUPED_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_grouped_sm90_fp8_128x192[TESS_GROUPED_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_grouped_sm90_fp8_128x256_c2[TESS_GROUPED_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_grouped_sm90_fp8_128x192_c2[TESS_GROUPED_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_grouped_sm90_fp8_128x128[TESS_GROUPED_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_grouped_sm90_tokens[TESS_GROUPED_TOKEN_KERNELS];
extern const tess_gemm_kernel tess_grouped_sm90_fp8_tokens[TESS_GROUPED_TOKEN_KERNELS];

typedef struct table_part {
    const tess_gemm_kernel *kernels;
    int count;
} table_part;

#define WHOLE_TILE(t) {t, TESS_GEMM_KERNELS_PER_TILE}
#define FP8_PAIRS(t) {t, TESS_GEMM_FP8_PAIRS}
#define GROUPED(t) {t, TESS_GROUPED_KERNELS_PER_TILE}
#define TOKEN_TILE(t) {t, TESS_GEMM_TOKEN_KERNELS_PER_TILE}
#define FP8_TOKEN_TILE(t) {t, TESS_GEMM_FP8_TOKEN_KERNELS}
#define GROUPED_TOKENS(t) {t, TESS_GROUPED_TOKEN_KERNELS}

static const table_part parts[] = {
    FP8_PAIRS(tess_gemm_sm90_fp8_128x192_c2_promote), FP8_PAIRS(tess_gemm_sm90_fp8_128x192_c1_promote),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x192_c2_rows), FP8_PAIRS(tess_gemm_sm90_fp8_128x192_c1_rows),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x192_c2_rows_cols), FP8_PAIRS(tess_gemm_sm90_fp8_128x192_c1_rows_cols),
    WHOLE_TILE(tess_gemm_sm90_128x256_c2), WHOLE_TILE(tess_gemm_sm90_128x256_c4),
    WHOLE_TILE(tess_gemm_sm90_128x256_c1), WHOLE_TILE(tess_gemm_sm90_128x128_c2),
    WHOLE_TILE(tess_gemm_sm90_128x128_c1), WHOLE_TILE(tess_gemm_sm90_128x64_c1),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x128_c2_promote), FP8_PAIRS(tess_gemm_sm90_fp8_128x128_c1_promote),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x128_c2_rows), FP8_PAIRS(tess_gemm_sm90_fp8_128x128_c1_rows),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x128_c2_rows_cols), FP8_PAIRS(tess_gemm_sm90_fp8_128x128_c1_rows_cols),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x256_c2_plain), FP8_PAIRS(tess_gemm_sm90_fp8_128x256_c1_plain),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x256_c2_promote), FP8_PAIRS(tess_gemm_sm90_fp8_128x256_c2_rows),
    FP8_PAIRS(tess_gemm_sm90_fp8_128x256_c2_promote_s3), FP8_PAIRS(tess_gemm_sm90_fp8_128x256_c2_rows_s3),
    TOKEN_TILE(tess_gemm_sm90_128x32_c1), TOKEN_TILE(tess_gemm_sm90_128x16_c1),
    FP8_TOKEN_TILE(tess_gemm_sm90_fp8_128x64_c1_tokens), FP8_TOKEN_TILE(tess_gemm_sm90_fp8_128x32_c1_tokens),
    FP8_TOKEN_TILE(tess_gemm_sm90_fp8_128x16_c1_tokens),
    GROUPED(tess_grouped_sm90_128x256_c2), GROUPED(tess_grouped_sm90_128x256), GROUPED(tess_grouped_sm90_128x128),
    GROUPED(tess_grouped_sm90_fp8_128x256_c2), GROUPED(tess_grouped_sm90_fp8_128x192_c2),
    GROUPED(tess_grouped_sm90_fp8_128x192),
    GROUPED(tess_grouped_sm90_fp8_128x128), GROUPED_TOKENS(tess_grouped_sm90_tokens),
    GROUPED_TOKENS(tess_grouped_sm90_fp8_tokens)};

#define PART_COUNT ((int)(sizeof parts / sizeof parts[0]))
_Static_assert(6 * TESS_GEMM_KERNELS_PER_TILE + 18 * TESS_GEMM_FP8_PAIRS + 7 * TESS_GROUPED_KERNELS_PER_TILE +
                       2 * TESS_GEMM_TOKEN_KERNELS_PER_TILE + 3 * TESS_GEMM_FP8_TOKEN_KERNELS +
                       2 * TESS_GROUPED_TOKEN_KERNELS <=
                   TESS_GEMM_MAX_KERNELS,
               "raise TESS_GEMM_MAX_KERNELS");

int tess_gemm_sm90_kernel_count(void) {
    int n = 0;
    for (int i = 0; i < PART_COUNT; i++)
        n += parts[i].count;
    return n;
}

const tess_gemm_kernel *tess_gemm_sm90_kernel(int i) {
    for (int p = 0; p < PART_COUNT && i >= 0; p++) {
        if (i < parts[p].count)
            return &parts[p].kernels[i];
        i -= parts[p].count;
    }
    return 0;
}
