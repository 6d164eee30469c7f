/* The grouped GEMM's planner, without a GPU (a 132-SM Hopper assumed):
 *  - every plan of random grouped problems (bf16 and e4m3, contiguous and
 *    masked) is consistent: its grid is whole clusters and at most the
 *    resident CTAs, its tiles are whole work items of cluster_m tiles, and
 *    its name says its cluster; groups of one tile row never get a cluster;
 *  - the heuristic's choices for the moe suite's shapes are the plans
 *    measured fastest there (H100), bf16 and e4m3. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/gemm.h"
#include "kernels/sm90/sm90.h"
#include "ref/random.h"

#define MAX_PLANS 64

static tess_rng rng;

/* A contiguous grouped problem: G groups of `tokens` rows each (expected_m
 * left to the planner's even split), W [G, N, K] K-major, of type t. */
static tess_grouped_gemm_desc grouped_problem(tess_dtype t, int64_t n, int64_t k, int64_t groups, int64_t tokens) {
    tess_grouped_gemm_desc d;
    tess_grouped_gemm_desc_init(&d);
    d.layout = TESS_GROUP_CONTIGUOUS;
    d.groups = groups, d.m = groups * tokens, d.n = n, d.k = k;
    d.x = (tess_matrix_desc){t, TESS_ORDER_ROW, d.m, k, k, 0};
    d.w = (tess_matrix_desc){t, TESS_ORDER_COL, k, n, k, k * n};
    d.y = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, n, n, 0};
    return d;
}

static void test_plans_consistent(void) {
    for (int trial = 0; trial < 200; trial++) {
        const int64_t groups = tess_rng_range(&rng, 1, 300), tokens = tess_rng_range(&rng, 1, 5000);
        const tess_dtype in = trial % 2 ? TESS_DTYPE_E4M3 : TESS_DTYPE_BF16;
        tess_grouped_gemm_desc d = grouped_problem(in, 128 * tess_rng_range(&rng, 1, 60),
                                                   128 * tess_rng_range(&rng, 1, 60), groups, tokens);
        if (tess_rng_range(&rng, 0, 1))
            d.expected_m = tess_rng_range(&rng, 1, 5000);
        if (trial % 4 >= 2)
            d.layout = TESS_GROUP_MASKED, d.m = tokens, d.x.rows = d.y.rows = tokens;
        tess_plan plans[MAX_PLANS];
        const int count = tess_grouped_candidates(NULL, &d, plans, MAX_PLANS);
        CHECKF(count >= 18, "G=%lld m=%lld: %d plans (3 kernels and 3 token tiles x 3 orders)", (long long)groups,
               (long long)d.m, count);
        /* One tile row a group (128 rows or fewer expected) never pays for a
         * cluster's second, empty tile: a cluster of 2 is chosen there only
         * where it splits such rows along N (an even number of n tiles). */
        const int64_t expected =
            d.expected_m ? d.expected_m : d.layout == TESS_GROUP_MASKED ? d.m : (d.m + groups - 1) / groups;
        if (count > 0 && expected <= 128 && plans[0].cluster_m == 2)
            CHECKF((d.n + plans[0].tile_n - 1) / plans[0].tile_n % 2 == 0,
                   "G=%lld, %lld rows expected a group, N=%lld: chose %s", (long long)groups, (long long)expected,
                   (long long)d.n, plans[0].name);
        /* Groups of a few tokens run on token tiles (no padded wgmma rows);
         * groups of two 128-row tiles or more never do where 128 x 256
         * tiles fill a wave (with fewer, e.g. one group and N = 128, more
         * token tiles keep more SMs busy). */
        const int token_tile = count > 0 && strstr(plans[0].name, "_swap") != NULL;
        if (count > 0 && expected <= 32)
            CHECKF(token_tile, "G=%lld, %lld rows expected a group: chose %s", (long long)groups, (long long)expected,
                   plans[0].name);
        const int64_t row_tiles = groups * ((expected + 127) / 128) * ((d.n + 255) / 256);
        if (count > 0 && expected >= 256 && row_tiles >= 132)
            CHECKF(!token_tile, "G=%lld, %lld rows expected a group, N=%lld, K=%lld: chose %s", (long long)groups,
                   (long long)expected, (long long)d.n, (long long)d.k, plans[0].name);
        int mixed_plans = 0;
        for (int p = 0; p < count && p < MAX_PLANS; p++) {
            const tess_plan *x = &plans[p];
            const int clustered = strstr(x->name, "_c2x1_") != NULL;
            CHECKF(x->cluster_m >= 1 && x->grid % x->cluster_m == 0 && x->grid <= 132 && x->grid > 0 &&
                       x->tiles % x->cluster_m == 0 && x->grid <= x->tiles && clustered == (x->cluster_m == 2),
                   "%s: cluster %d, grid %d, tiles %d", x->name, x->cluster_m, x->grid, x->tiles);
            /* A mixed plan: token tiles for groups of up to two token tiles, the larger ones
             * on a 128-row kernel's grid (a second launch); named so. */
            const int mixed = strstr(x->name, "_mix") != NULL, swap = strstr(x->name, "_swap") != NULL;
            CHECKF(mixed == (x->large_min_rows > 0) &&
                       (!mixed || (swap && x->large_min_rows == 2 * x->tile_n + 1 &&
                                   x->large_grid > 0 && x->large_grid <= 132 &&
                                   x->large_order >= TESS_GROUP_ORDER_N_FASTEST &&
                                   x->large_order <= TESS_GROUP_ORDER_BANDED)),
                   "%s: large groups from %d rows, grid %d, order %d", x->name, x->large_min_rows,
                   x->large_grid, x->large_order);
            /* Its name finds its kernel again, as tess_grouped_gemm does. */
            const int kernel = tess_sm90_grouped_plan_kernel(NULL, &d, x);
            const tess_gemm_kernel *k = tess_sm90_kernel(kernel);
            CHECKF(k && k->tile_m == x->tile_m && k->tile_n == x->tile_n && k->stages == x->stages &&
                       k->cluster_m == x->cluster_m,
                   "%s: found again as kernel %d", x->name, kernel);
            mixed_plans += mixed;
        }
        CHECKF(count > MAX_PLANS || mixed_plans == 3, "G=%lld m=%lld: %d mixed plans (one per token tile width)",
               (long long)groups, (long long)d.m, mixed_plans);
    }
}

static void test_suite_choices(void) {
    static const struct {
        int64_t n, k, groups, tokens;
        const char *want; /* the chosen plan's name starts with this */
        tess_dtype in;    /* bf16, or e4m3 with one factor per group */
    } shapes[] = {
        /* Clusters of 2 from two tile rows per group (H100, 2026-11-24, bf16):
         * 256 x 4096 tokens 665 TFLOP/s (band) against 275 without clusters;
         * 8 x 4096 782 (nfast) against 580; 256 x 256 648 against 339. */
        {4096, 7168, 256, 4096, "sm90_bf16_grouped_128x256x64_s4_c2x1_band", TESS_DTYPE_BF16},
        {4096, 7168, 8, 4096, "sm90_bf16_grouped_128x256x64_s4_c2x1_", TESS_DTYPE_BF16},
        {4096, 7168, 256, 256, "sm90_bf16_grouped_128x256x64_s4_c2x1_nfast", TESS_DTYPE_BF16},
        /* One tile row a group: clusters of 2 split it along N (H200,
         * 2026-11-25: 4.09 ms against 4.24 without clusters and 5.09 with
         * the second CTA idle; FP8 block G=8 x 128 0.072 ms against 0.103
         * idle and 0.093 for 128x192 tiles without clusters). */
        {4096, 7168, 256, 128, "sm90_bf16_grouped_128x256x64_s4_c2x1_nfast", TESS_DTYPE_BF16},
        {4096, 7168, 8, 128, "sm90_e4m3e4m3_grouped_128x256x128_s3_c2x1_pr_nfast", TESS_DTYPE_E4M3},
        /* Decode: token tiles 32 wide, walked one group a band (H200,
         * 2026-11-25: 3.51 ms, 1.02 of the copy rate, against 3.64-3.82 for
         * 128x256 tiles; skewed groups 3.32 against 4.04 for 16-wide tiles). */
        {4096, 7168, 256, 16, "sm90_bf16_grouped_128x32x64_s10_swap_band", TESS_DTYPE_BF16},
        /* FP8: tiles in clusters of 2 for large groups (H100, 2026-11-24,
         * moe suite, block factors, 128x192: G=256 x 4096 900 TFLOP/s
         * against 773 without), 256 wide since they promote in halves
         * (H200, 2026-11-24, against 128x192 c2: G=8 x 4096 block 1165 vs
         * 1091, per group 1317 vs 1275; G=64 x 4096 block 1033 vs 918; G=32
         * x 256 block 1157 vs 1069), without clusters for decode; 3 stages,
         * whose epilogue stages the tile in one round (H100, 2026-11-26,
         * block factors, every plan in one process: G=4 x 8192, 7168x2048
         * 769 us against 795 for 4 stages and 4 rounds; G=8 x 4096,
         * 4096x7168 1511 against 1537; dev/results/fp8-plans-h100). */
        {4096, 7168, 8, 4096, "sm90_e4m3e4m3_grouped_128x256x128_s3_c2x1_pr_band", TESS_DTYPE_E4M3},
        {4096, 7168, 256, 4096, "sm90_e4m3e4m3_grouped_128x256x128_s3_c2x1_pr_band", TESS_DTYPE_E4M3},
        {4096, 7168, 32, 256, "sm90_e4m3e4m3_grouped_128x256x128_s3_c2x1_pr_", TESS_DTYPE_E4M3},
        /* Decode (H200, 2026-11-25, one factor per group): 1.78 ms against
         * 2.00-2.05 for 128x192 tiles; skewed 1.65 against 1.95 for 16-wide. */
        {4096, 7168, 256, 16, "sm90_e4m3e4m3_grouped_128x32x128_s10_pr_swap_band", TESS_DTYPE_E4M3},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        tess_grouped_gemm_desc d =
            grouped_problem(shapes[i].in, shapes[i].n, shapes[i].k, shapes[i].groups, shapes[i].tokens);
        tess_plan plan;
        const int count = tess_grouped_candidates(NULL, &d, &plan, 1);
        printf("  %lldx%lld G=%lld x %lld tokens: %s (grid %d)\n", (long long)d.n, (long long)d.k,
               (long long)d.groups, (long long)shapes[i].tokens, count ? plan.name : "none", count ? plan.grid : 0);
        CHECKF(count > 0 && strncmp(plan.name, shapes[i].want, strlen(shapes[i].want)) == 0,
               "G=%lld x %lld tokens: chose %s, measured best %s", (long long)d.groups, (long long)shapes[i].tokens,
               count ? plan.name : "none", shapes[i].want);
    }
}

/* An FP8 Y: the batch view carries y_scale (a contiguous layout's factors
 * are one array: no batch stride); per-tensor Y keeps token-tile plans, a
 * 1x128-scaled Y gets only 128-row tiles of whole 128 columns. */
static void test_fp8_out_plans(void) {
    for (int block = 0; block < 2; block++) {
        for (int tokens = 16; tokens <= 4096; tokens *= 16) {
            tess_grouped_gemm_desc d = grouped_problem(TESS_DTYPE_E4M3, 2048, 1024, 8, tokens);
            tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, d.m, d.k, &d.x_scale, NULL, NULL, NULL);
            tess_scale_layout_query(TESS_SCALE_BLOCK_128x128, d.n, d.k, &d.w_scale, NULL, NULL, NULL);
            d.w_scale.batch_stride = 16 * 8; /* per expert */
            d.y.dtype = TESS_DTYPE_E4M3;
            if (block)
                tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, d.m, d.n, &d.y_scale, NULL, NULL, NULL);
            const tess_gemm_desc view = tess_grouped_as_batch(&d);
            CHECK(view.d_scale.mode == d.y_scale.mode && view.d_scale.stride_k == d.y_scale.stride_k &&
                  view.d_scale.batch_stride == 0);
            tess_plan plans[MAX_PLANS];
            const int count = tess_grouped_candidates(NULL, &d, plans, MAX_PLANS);
            int token_tiles = 0;
            CHECKF(count > 0, "FP8 Y (block %d), %d tokens a group: no plan", block, tokens);
            for (int i = 0; i < count && i < MAX_PLANS; i++) {
                token_tiles += strstr(plans[i].name, "_swap") != NULL;
                if (block)
                    CHECKF(plans[i].tile_n % 128 == 0 && plans[i].tile_m == 128 && !plans[i].large_min_rows,
                           "block FP8 Y: plan %s", plans[i].name);
            }
            if (block)
                CHECKF(token_tiles == 0, "block FP8 Y, %d tokens: %d token-tile plans", tokens, token_tiles);
        }
    }
}

int main(void) {
    tess_rng_seed(&rng, check_seed());
    test_plans_consistent();
    test_suite_choices();
    test_fp8_out_plans();
    return check_finish("unit_grouped_plan");
}
