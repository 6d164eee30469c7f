/* The sm90 family's grouped GEMM planner (Mixture-of-Experts): which
 * grouped kernels run a problem, in which tile orders, with their estimated
 * times; mixed plans (token tiles plus a 128-row launch for large groups);
 * and the launch. A grouped problem runs on the dense machinery as its
 * batch view (tess_grouped_as_batch), plus the group sizes the kernel reads
 * on the device (grouped.cuh). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/cost.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "kernels/common/sched.h"
#include "kernels/sm90/sm90.h"

/* Expected tile rows per group from which the planner takes the BANDED
 * order (its L2 reuse pays once a group spans several tile rows; measured
 * in dev/NOTES.md, "Grouped GEMM"); below, N_FASTEST. */
#define TESS_GROUPED_BANDED_MIN_TILE_ROWS 2

/* Whether kernel k is a token tile (a grouped GEMM run transposed). */
static int is_token_tile(const tess_gemm_kernel *k) { return k->grouped == TESS_GROUPED_TOKENS; }

/* The problem kernel k runs: the dense view, or for a token-tile kernel
 * its transpose (W is the kernel's A, X's rows its B's columns). */
static tess_gemm_desc kernel_view(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *g) {
    const tess_gemm_desc d = tess_grouped_as_batch(g);
    return is_token_tile(k) ? tess_sm90_transposed_problem(&d) : d;
}


/* Rows per group the planner assumes: the hint, else an even split; at
 * least 1 and at most 2^30 (a hint may be any size: a masked draw of 1.3
 * times it must still fit the int counts of sched.h). */
static int64_t expected_rows(const tess_grouped_gemm_desc *d) {
    const int64_t most = (int64_t)1 << 30;
    int64_t e = d->expected_m > 0                       ? d->expected_m
                : d->layout == TESS_GROUP_CONTIGUOUS ? (d->m + d->groups - 1) / d->groups
                                                       : d->m;
    return e < 1 ? 1 : e > most ? most : e;
}

/* Tokens of one work item of kernel k: a tile per CTA of its cluster,
 * stacked along M, or a token tile's width. */
static int64_t work_item_rows(const tess_gemm_kernel *k) {
    return is_token_tile(k) ? k->tile_n : (int64_t)k->tile_m * k->cluster_m;
}

/* Tiles of kernel k across the weight's N columns. */
static int64_t cross_tiles(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d) {
    const int64_t tile = is_token_tile(k) ? k->tile_m : k->tile_n;
    return (d->n + tile - 1) / tile;
}

/* Whether kernel k splits groups' short last tile rows along N in order
 * `order` (kernels/common/sched.h, split tails): clusters of 2 along M, an
 * even number of n tiles (a pair per split item), not M_FASTEST. */
static int splits_tails(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d, int order) {
    return !is_token_tile(k) && k->cluster_m == 2 && cross_tiles(k, d) % 2 == 0 &&
           order != TESS_GROUP_ORDER_M_FASTEST;
}

/* Work items kernel k may walk at most (ints in the kernels). */
static int64_t max_items(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d) {
    return tess_grouped_max_tile_rows(d, (int)work_item_rows(k)) * cross_tiles(k, d);
}

/* Whether kernel k is a grouped kernel that can run problem d: it serves the
 * problem's view, and its work items fit the kernels' ints. A gate needs
 * the gated epilogue (k->gates), and in a token tile (run transposed: its
 * pairs become rows) one that stores from registers. */
static int grouped_kernel_runs(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d) {
    const tess_gemm_desc view = kernel_view(k, d);
    const int grouped = k->grouped == TESS_GROUPED_ROWS || k->grouped == TESS_GROUPED_TOKENS; /* not k-grouped */
    return grouped && tess_sm90_kernel_serves(k, &view) && max_items(k, d) <= INT32_MAX &&
           !(d->gate != TESS_GATE_NONE && (!k->gates || (is_token_tile(k) && !k->registers)));
}

/* The planner's order for kernel k: groups of several tile rows walk in
 * L2-friendly bands; one-tile-row groups (decode) scan N fastest, reading
 * each group's few X rows once while its W streams. Token tiles walk each
 * group in one band (tess_grouped_gemm sets group_m to hold a group's token
 * tiles): all of a weight tile's token tiles run side by side, so a large
 * group streams its weights once while its tokens stay in L2, where N
 * fastest would stream them once per token tile (measured on an H200,
 * bench/results/h200-moe.csv: skewed G=256 x 16 tokens bf16 4096x7168, 4.32 ms N fastest
 * against 2.85 for 128x256 tiles; one-tile groups walk alike in both). */
static int preferred_order(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d) {
    if (is_token_tile(k))
        return TESS_GROUP_ORDER_BANDED;
    /* Masked: N fastest at every size (H100, FP8, G x E = 1 x 1024, 2 x 512,
     * 4 x 256, N 7168 / 4096, 8 draws of the sizes each: N fastest beat the
     * bands by 3-8% kernel for kernel; dev/results/masked-plans-h100/masked-plans.csv). */
    if (d->layout == TESS_GROUP_MASKED)
        return TESS_GROUP_ORDER_N_FASTEST;
    return expected_rows(d) >= TESS_GROUPED_BANDED_MIN_TILE_ROWS * work_item_rows(k) ? TESS_GROUP_ORDER_BANDED
                                                                                      : TESS_GROUP_ORDER_N_FASTEST;
}

/* What a cluster of 2 gains where its rows are used: its CTAs stay in step
 * and read each weight tile from L2 once for both (multicast). Without it,
 * long runs of 128x256 tiles lose their L2 reuse (H100, dev/NOTES.md "Grouped GEMM":
 * 256 groups of 4096 tokens, 4096x7168 bf16, 274 TFLOP/s; dense
 * 262144x4096x7168 402 TFLOP/s without clusters, 686 with). Counted
 * small, as the gain shows only past a few waves of tiles. */
#define TESS_GROUPED_CLUSTER_GAIN 1.05

/* How well a tile feeds the tensor cores, relative to 128x256 (core/gemm.c's
 * estimate for dense tiles). Token tiles narrower than 64 are memory-bound,
 * where their rate only breaks ties (fewer padded tokens win); taken lower
 * as they narrow, as each wgmma reads the whole 64-row A for fewer columns
 * (not measured). */
static double tile_efficiency(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d) {
    const double width = k->tile_n >= 64 ? tess_sm90_tile_width_efficiency(k->tile_n) : k->tile_n >= 32 ? 0.45 : 0.3;
    /* (Masked problems run a wave or two: no gain measured, see l2 in grouped_estimate.) */
    const int gains = k->cluster_m > 1 && d->layout != TESS_GROUP_MASKED;
    return width * (gains ? TESS_GROUPED_CLUSTER_GAIN : 1.0);
}

/* Work items of kernel k a group of about e tokens takes (*split of them
 * split tails, each reading two weight tiles). For 128-row tiles, as if
 * every group had e (the policy the suite pins were measured on). Token
 * tiles are where uneven routings cost most: a large group takes many
 * narrow tiles, each re-reading the weight tile from L2. There a group's
 * last tile row is taken as half full on average (e / rows + 1/2, at least
 * one): measured on an H200 (bench/results/h200-moe.csv: 4096x7168, G=256, 16 tokens a
 * group on average, bf16), 16-wide token tiles 4.04 ms, 32-wide 3.32,
 * 64-wide 3.07 with skewed groups; 3.49, 3.51 and 3.56 with 16 tokens in
 * every group. */
static double expected_group_items(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d, int64_t e,
                                   double *split) {
    const double cross = (double)cross_tiles(k, d);
    const int64_t rows = work_item_rows(k);
    *split = 0.0;
    if (is_token_tile(k)) {
        const double t = (double)e / (double)rows + 0.5;
        return (t > 1.0 ? t : 1.0) * cross;
    }
    if (splits_tails(k, d, preferred_order(k, d))) { /* e < 2^31 (TESS_GROUPED_MAX_M) */
        const int units = tess_group_row_units((int)e, k->tile_m, k->cluster_m, 1);
        *split = (double)(units % 2) * cross / 2.0;
        return (double)units * cross / 2.0;
    }
    return (double)((e + rows - 1) / rows) * cross;
}

/* A masked problem's group sizes are drawn around expected_m: the planner
 * averages its waves over rows e (0.7 + 0.6 (q + 1/2) / Q) for q < Q, the
 * spread of DeepGEMM's masked tests (expected_m x U(0.7, 1.3)). A tile
 * chosen at e exactly can take a whole extra wave on half the draws
 * (H100, FP8, 8 draws each: 1 x 1024 rows, N 7168, K 2048, 128x256 tiles in
 * clusters of 2 (2.5 waves on average) 47.2 us, 128x192 (3 waves of
 * smaller tiles) 41.8; dev/results/masked-plans-h100/masked-plans.csv). */
#define TESS_MASKED_DRAWS 8
#define TESS_MASKED_SPREAD_LOW 0.7
#define TESS_MASKED_SPREAD 0.6

/* What each tile of a masked problem costs beyond its K blocks (the
 * pipeline's fill and the epilogue, exposed where a CTA runs only a tile or
 * two), in K blocks of the tile's own mainloop: 128x256 block-scaled FP8
 * tiles in clusters of 2 (H100) take 17.4 us a wave at K = 2048 (16 K blocks)
 * and 114 at K = 16384 (128), 0.86 us a K block plus 3.6 us a tile, about
 * 4 K blocks (dense 4096x7168, bench/results/h100-fp8-deepgemm.csv). */
#define TESS_MASKED_TILE_OVERHEAD_BLOCKS 4.0

/* The least whole number at or above x >= 0, without libm (the library
 * links no math library: cmake/tessera.pc.in). */
static double ceil_nonneg(double x) {
    const double whole = (double)(int64_t)x;
    return whole < x ? whole + 1.0 : whole;
}

/* Work items of kernel k over all groups, and its waves on `units`
 * clusters, for the expected group sizes (*split: split-tail items);
 * averaged over the draws where masked. */
static double expected_waves(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d, int units, double *items,
                             double *split) {
    const int64_t e = expected_rows(d);
    if (d->layout != TESS_GROUP_MASKED) {
        *items = (double)d->groups * expected_group_items(k, d, e, split);
        *split *= (double)d->groups;
        return ceil_nonneg(*items / units);
    }
    double waves = 0.0, sum_items = 0.0, sum_split = 0.0;
    for (int q = 0; q < TESS_MASKED_DRAWS; q++) {
        const double share = TESS_MASKED_SPREAD_LOW + TESS_MASKED_SPREAD * (q + 0.5) / TESS_MASKED_DRAWS;
        /* (Not clamped to the m rows a group can hold: where m is close to
         * expected_m, as a buffer sized to the draw, draws at m would favour
         * 128x256 tiles, which measured slower on such draws, e.g. 1 x 1111
         * rows of at most 1152, N 4096: 96 us against 86 for 128x128 tiles,
         * dev/results/fp8-plans-h100/every-plan.csv.) */
        const int64_t rows = (int64_t)ceil_nonneg(share * (double)e);
        double s;
        const double draw = (double)d->groups * expected_group_items(k, d, rows > 0 ? rows : 1, &s);
        waves += ceil_nonneg(draw / units), sum_items += draw, sum_split += (double)d->groups * s;
    }
    *items = sum_items / TESS_MASKED_DRAWS, *split = sum_split / TESS_MASKED_DRAWS;
    return waves / TESS_MASKED_DRAWS;
}

/* Estimated run time of kernel k (`ctas` resident) in seconds, for the
 * expected group sizes: its tensor-core time (waves of work items, one per
 * cluster, each tile row cluster_m tiles or a token tile; each wave one
 * tile's work over its efficiency) overlapped with its traffic: the
 * weights of every group, X and Y once from memory, and each work item's
 * tiles of W and X from L2 into the SMs (a weight tile once per tile row
 * of its group; a cluster's CTAs share theirs by multicast), whichever
 * takes longer.
 * Epilogue rounds count for the contiguous layout only. Its CTAs run many
 * tiles each, and a tile staged in one round overlaps its stores with the
 * next mainloop (H100, FP8 block factors, every plan timed in one process:
 * contiguous 4 x 8192 rows, 7168x2048, 128x256 tiles in clusters of 2 with
 * 3 stages and one round 769 us, 4 stages and 4 rounds 795; 8 x 4096 rows,
 * 4096x7168, 1511 against 1537: dev/results/fp8-plans-h100/every-plan.csv).
 * A masked (decode) problem's CTAs run a tile or two, where the deeper ring
 * matters more (masked 2 x 512 and 4 x 256 rows, 7168x2048: 3 stages 0.873
 * and 0.896 of DeepGEMM, 4 stages 0.905 and 0.921: fp8-new-run1.csv against
 * fp8-base-run1.csv in dev/results/fp8-ab-h100/stages-fence-factors). */
static double grouped_estimate(const tess_device_info *info, const tess_gemm_kernel *k,
                               const tess_grouped_gemm_desc *d, int ctas) {
    const int64_t e = expected_rows(d);
    double items, split;
    const int units = ctas / k->cluster_m;
    const double waves = expected_waves(k, d, units, &items, &split);
    const int64_t k_blocks = (d->k + k->tile_k - 1) / k->tile_k;
    const double epilogue = d->layout == TESS_GROUP_CONTIGUOUS ? tess_sm90_epilogue_factor(k, k_blocks)
                            : 1.0 + TESS_MASKED_TILE_OVERHEAD_BLOCKS / (double)(k_blocks > 0 ? k_blocks : 1);
    const double tile_flops =
        (double)k->tile_m * k->tile_n * 2.0 * (double)(k_blocks * k->tile_k) * epilogue / tile_efficiency(k, d);
    const double compute = waves * tess_sm90_compute_seconds(info, k->input, tile_flops);
    const double tokens = (double)e * d->groups;
    const double wb = (double)tess_dtype_size(d->w.dtype), xb = (double)tess_dtype_size(d->x.dtype);
    const double yb = (double)tess_dtype_size(d->y.dtype);
    const double bytes = (double)d->groups * d->n * d->k * wb + tokens * ((double)d->k * xb + (double)d->n * yb);
    const double w_rows = is_token_tile(k) ? k->tile_m : k->tile_n; /* per work item: a cluster shares its W tile */
    const double x_rows = is_token_tile(k) ? k->tile_n : k->tile_m * k->cluster_m;
    /* A split tail's CTAs each read their own W tile: one more per split item. */
    const double l2_bytes = (items * (w_rows * wb + x_rows * xb) + split * w_rows * wb) * (double)d->k;
    /* Masked problems are not L2-bound at the H100's rate: clusters of 1 ran
     * as fast as clusters of 2, which read half the weight tiles (8 draws of
     * six shapes, dev/results/masked-plans-h100/masked-plans.csv). */
    const double memory = tess_memory_seconds(info, bytes),
                 l2 = d->layout == TESS_GROUP_MASKED ? 0.0 : tess_l2_read_seconds(info, l2_bytes);
    return tess_overlapped_seconds(compute, memory > l2 ? memory : l2);
}

static const char *order_name(int order) {
    switch (order) {
    case TESS_GROUP_ORDER_N_FASTEST: return "nfast";
    case TESS_GROUP_ORDER_M_FASTEST: return "mfast";
    case TESS_GROUP_ORDER_BANDED: return "band";
    }
    return "?";
}

/* The plan of kernel `index` in `order` for a problem. */
static void grouped_describe(const tess_device_info *info, const tess_grouped_gemm_desc *d, int index, int order,
                             tess_plan *p) {
    const tess_gemm_kernel *k = tess_sm90_kernel(index);
    const int64_t items = max_items(k, d);
    const int units = tess_sm90_resident_ctas(index, info) / k->cluster_m;
    tess_sm90_plan_begin(p, k, items * k->cluster_m, (items < units ? items : units) * k->cluster_m);
    p->group_order = order;
    char cluster[16];
    /* _swap: a token-tile kernel (weights by tokens, run transposed) */
    snprintf(p->name, sizeof p->name, "sm90_%s_grouped_%dx%dx%d_s%d%s%s%s_%s",
             tess_mma_input_is_fp8(k->input) ? "e4m3e4m3" : tess_dtype_name(d->x.dtype), k->tile_m, k->tile_n,
             k->tile_k, k->stages, tess_sm90_cluster_suffix(k, cluster), tess_sm90_scaling_suffix(k->scaling), is_token_tile(k) ? "_swap" : "",
             order_name(order));
}

/* The 128-row kernel and order that take a mixed plan's large groups: the
 * planner's choice for groups of TESS_GROUPED_LARGE_ROWS rows (-1: none).
 * 256 rows, two 128-row tiles, stands for "a large group" (those sent there
 * have more than two token tiles, 33 to 129 rows and up): a representative
 * size chosen, not fitted. */
#define TESS_GROUPED_LARGE_ROWS 256
static int large_groups_kernel(const tess_device_info *info, const tess_grouped_gemm_desc *d, int *order) {
    tess_grouped_gemm_desc large = *d;
    large.expected_m = TESS_GROUPED_LARGE_ROWS;
    int best = -1;
    double best_cost = 0.0;
    for (int i = 0; i < tess_sm90_kernel_count(); i++) {
        const tess_gemm_kernel *k = tess_sm90_kernel(i);
        if (is_token_tile(k) || !grouped_kernel_runs(k, d) || tess_sm90_resident_ctas(i, info) == 0)
            continue;
        const double c = grouped_estimate(info, k, &large, tess_sm90_resident_ctas(i, info));
        if (best < 0 || c < best_cost)
            best = i, best_cost = c, *order = preferred_order(k, &large);
    }
    return best;
}

/* Groups a mixed plan of token tiles `tile_n` wide leaves to its 128-row
 * kernel: those of more than two token tiles. Such a group would re-read
 * each weight tile from L2 three times or more, where a 128-row tile reads
 * it once (H200, bench/results/h200-moe.csv, skewed G=256 x 16 tokens: 32-wide token tiles
 * 3.32 ms, 128x256 tiles 2.85-2.95; with even groups 3.51 against 3.64). */
static int mixed_min_rows(const tess_gemm_kernel *token) { return 2 * token->tile_n + 1; }

/* What a mixed plan's second launch costs where no group is large (its
 * CTAs read the group sizes and exit), in seconds: H200 (dev/probes/grouped_ab.sh), even
 * groups of 16 tokens, mixed against token tiles alone, 4 us at G=256
 * (3.460 ms against 3.456) and 5 at G=64 (0.873 against 0.868). */
#define TESS_GROUPED_SECOND_LAUNCH_SECONDS 5e-6

/* A routing's skew is unknown to the planner (the sizes stay on the
 * device): a mixed plan is preferred to its one-launch twin where the second
 * launch costs at most this share of the estimate, and ranked behind it
 * elsewhere. */
#define TESS_GROUPED_MIXED_MAX_OVERHEAD 0.02

/* Plan p of token-tile kernel `token` made mixed: groups of large_min_rows
 * rows or more to kernel `large` in `order`. */
static void mixed_describe(const tess_device_info *info, const tess_grouped_gemm_desc *d, int token, int large,
                           int order, tess_plan *p) {
    tess_plan second;
    grouped_describe(info, d, large, order, &second);
    p->large_min_rows = mixed_min_rows(tess_sm90_kernel(token));
    p->large_order = order, p->large_grid = second.grid;
    const size_t len = strlen(p->name);
    snprintf(p->name + len, sizeof p->name - len, "_mix%d", (int)p->large_min_rows);
}

void tess_sm90_grouped_plans(const tess_device_info *info, const tess_grouped_gemm_desc *d, tess_plan_list *out) {
    int large_order = TESS_GROUP_ORDER_N_FASTEST;
    const int large = large_groups_kernel(info, d, &large_order);
    for (int i = 0; i < tess_sm90_kernel_count(); i++) {
        const tess_gemm_kernel *k = tess_sm90_kernel(i);
        if (!grouped_kernel_runs(k, d) || tess_sm90_resident_ctas(i, info) == 0) // clusters wider than an SM budget
            continue;
        const double base = grouped_estimate(info, k, d, tess_sm90_resident_ctas(i, info));
        const int preferred = preferred_order(k, d);
        for (int order = TESS_GROUP_ORDER_N_FASTEST; order <= TESS_GROUP_ORDER_BANDED; order++) {
            /* the other orders rank just behind the preferred one (for autotuning) */
            tess_plan *p = tess_plan_list_offer(out, base * (order == preferred ? 1.0 : 1.01));
            if (p)
                grouped_describe(info, d, i, order, p);
        }
        if (is_token_tile(k) && large >= 0) { /* mixed, in the preferred order */
            /* insured: ranked just ahead of its one-launch twin (0.1% less) */
            const int insured = TESS_GROUPED_SECOND_LAUNCH_SECONDS <= TESS_GROUPED_MIXED_MAX_OVERHEAD * base;
            tess_plan *p =
                tess_plan_list_offer(out, insured ? base * 0.999 : base + TESS_GROUPED_SECOND_LAUNCH_SECONDS);
            if (p) {
                grouped_describe(info, d, i, preferred, p);
                mixed_describe(info, d, i, large, large_order, p);
            }
        }
    }
}

/* Queues kernel `index` in `order` on `grid` CTAs for the groups of
 * min_rows to max_rows rows (the others are another launch's). */
static tess_status grouped_launch(tess_handle handle, const tess_grouped_gemm_desc *desc, int index, int order,
                                  int grid, int min_rows, int max_rows, const tess_operands *o) {
    const tess_gemm_kernel *k = tess_sm90_kernel(index);
    const tess_gemm_desc view = kernel_view(k, desc);
    const int tokens_as_b = is_token_tile(k); /* the kernel's A is W */
    tess_gemm_params p;
    const void *a = tokens_as_b ? o->b : o->a, *b = tokens_as_b ? o->a : o->b;
    const float *a_scale = tokens_as_b ? o->b_scale : o->a_scale, *b_scale = tokens_as_b ? o->a_scale : o->b_scale;
    tess_status s = tess_sm90_params_init(&p, k, &view, a, a_scale, b, b_scale, NULL, o->d, o->bias, NULL);
    if (s)
        return s;
    p.epi.gate_rows = tokens_as_b && desc->gate != TESS_GATE_NONE; /* Y^T's pairs are rows */
    tess_epilogue_set_fp8(&p.epi, &view, o->d_scale, o->d_amax, o->d_scale_out);
    p.groups = (int)desc->groups;
    if (tokens_as_b && order == TESS_GROUP_ORDER_BANDED) /* one band per group (preferred_order) */
        p.group_m = (int)tess_grouped_max_tile_rows(desc, (int)work_item_rows(k)); /* x weight tiles: max_items */
    p.group_layout = desc->layout;
    p.group_order = order;
    p.group_rows = o->group_rows;
    p.group_split_tails = splits_tails(k, desc, order);
    p.group_min_rows = min_rows, p.group_max_rows = max_rows;
    p.split.units = grid / k->cluster_m; /* clusters */
    p.split.k_blocks = (int)((desc->k + k->tile_k - 1) / k->tile_k);
    p.early_launch = tess_handle_early_launch(handle);
    return k->launch(&p, grid, handle->stream);
}

/* Kernel index of the grouped plan named plan->name for problem d (in the
 * plan's tile order), or -1: the kernels whose tile, stages and cluster
 * the plan describes are tried first, then every grouped kernel. */
static int resolve(const tess_device_info *info, const tess_grouped_gemm_desc *d, const tess_plan *plan) {
    const int order = plan->group_order;
    if (order < TESS_GROUP_ORDER_N_FASTEST || order > TESS_GROUP_ORDER_BANDED)
        return -1;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < tess_sm90_kernel_count(); i++) {
            const tess_gemm_kernel *k = tess_sm90_kernel(i);
            const int described = k->tile_m == plan->tile_m && k->tile_n == plan->tile_n &&
                                  k->stages == plan->stages && k->cluster_m == plan->cluster_m;
            if ((pass == 0) != described || !grouped_kernel_runs(k, d))
                continue;
            tess_plan made;
            grouped_describe(info, d, i, order, &made);
            const size_t len = strlen(made.name);
            const char *rest = plan->name + len; /* nothing, or a mixed plan's "_mixR" */
            if (strncmp(made.name, plan->name, len) == 0 && (*rest == 0 || !strncmp(rest, "_mix", 4)))
                return i;
        }
    }
    return -1;
}

int tess_sm90_grouped_plan_kernel(const tess_device_info *info, const tess_grouped_gemm_desc *d,
                                  const tess_plan *plan) {
    return resolve(info, d, plan);
}

tess_status tess_sm90_grouped_run(tess_handle h, const tess_grouped_gemm_desc *d, const tess_plan *plan,
                                  const tess_operands *o) {
    const int index = resolve(&h->info, d, plan);
    if (index < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: plan %s is none of the plans tess_grouped_gemm_plans makes for this "
                         "problem on this device",
                         plan->name);
    tess_plan want;
    grouped_describe(&h->info, d, index, plan->group_order, &want);
    int large = -1; /* a mixed plan's 128-row kernel, in want.large_order */
    if (strcmp(want.name, plan->name) != 0) { /* mixed: its second launch, as tess_sm90_grouped_plans makes it */
        int order = TESS_GROUP_ORDER_N_FASTEST;
        large = large_groups_kernel(&h->info, d, &order);
        if (large >= 0 && is_token_tile(tess_sm90_kernel(index)))
            mixed_describe(&h->info, d, index, large, order, &want);
        if (strcmp(want.name, plan->name) != 0 || !want.large_min_rows)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "tess_grouped_gemm: plan %s's second launch is not the one tess_grouped_gemm_plans makes "
                             "for this problem",
                             plan->name);
    }
    if (plan->grid != want.grid || plan->large_min_rows != want.large_min_rows ||
        plan->large_order != want.large_order || plan->large_grid != want.large_grid)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: plan %s was made for another problem, device or SM budget (its grid "
                         "or second launch differ)",
                         plan->name);
    /* Every group, or a mixed plan's smaller ones and then its larger ones. */
    const int first_max_rows = want.large_min_rows ? want.large_min_rows - 1 : INT32_MAX;
    /* An FP8 Y's amax: the CTAs' maxima (of both launches) land by atomic max on the float's bits, over a zero. */
    if (tess_dtype_is_fp8(d->y.dtype) && d->y_scale.mode == TESS_SCALE_TENSOR && o->d_amax) {
        const tess_status z = tess_cuda_status(cudaMemsetAsync(o->d_amax, 0, sizeof(float), h->stream),
                                               "tess_grouped_gemm: zeroing d_amax");
        if (z != TESS_STATUS_SUCCESS)
            return z;
    }
    tess_status s = grouped_launch(h, d, index, want.group_order, want.grid, 0, first_max_rows, o);
    if (!s && want.large_min_rows)
        s = grouped_launch(h, d, large, want.large_order, want.large_grid, want.large_min_rows, INT32_MAX, o);
    return s;
}
