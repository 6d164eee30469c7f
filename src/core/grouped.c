/* The grouped GEMM entry points (Mixture-of-Experts): validation, planning
 * over the table's grouped kernels, and the launch. A grouped problem runs
 * on the dense machinery as a batch with one batch per group (core/gemm.c
 * makes its tensor maps and factor maps), plus the group sizes the kernel
 * reads on the device (kernels/sm90/grouped.cuh). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "core/matrix.h"
#include "core/scale.h"
#include "kernels/common/sched.h"

/* Expected tile rows per group from which the planner takes the BANDED
 * order (its L2 reuse pays once a group spans several tile rows; measured
 * in bench/NOTES.md, "Grouped GEMM"); below, N_FASTEST. */
#define TESS_GROUPED_BANDED_MIN_TILE_ROWS 2

TESS_API tess_status tess_grouped_gemm_desc_init(tess_grouped_gemm_desc *desc) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm_desc_init: desc is NULL");
    memset(desc, 0, sizeof *desc);
    desc->struct_size = sizeof *desc;
    desc->groups = 1;
    return TESS_STATUS_SUCCESS;
}

static int is16(tess_dtype t) { return t == TESS_DTYPE_BF16 || t == TESS_DTYPE_F16; }

/* The dense-GEMM view of a grouped problem: batch = groups, A = X, B = W,
 * D = Y. A contiguous layout's X, Y and X's per-row factors are one matrix
 * shared by every group (batch stride 0; groups differ by their rows). */
static tess_gemm_desc dense_view(const tess_grouped_gemm_desc *g) {
    tess_gemm_desc d;
    tess_gemm_desc_init(&d);
    d.m = g->m, d.n = g->n, d.k = g->k, d.batch = g->groups;
    d.a = g->x, d.b = g->w, d.d = g->y;
    d.a_scale = g->x_scale, d.b_scale = g->w_scale;
    d.fast_accum = g->fast_accum;
    if (g->layout == TESS_GROUP_CONTIGUOUS) {
        d.a.batch_stride = 0, d.d.batch_stride = 0;
        if (d.a_scale.mode != TESS_SCALE_TENSOR)
            d.a_scale.batch_stride = 0;
    }
    return d;
}

/* Whether kernel k is a token tile (a grouped GEMM run transposed). */
static int is_token_tile(const tess_gemm_kernel *k) { return k->grouped == TESS_GROUPED_TOKENS; }

/* The problem kernel k runs: the dense view, or for a token-tile kernel
 * its transpose (W is the kernel's A, X's rows its B's columns). */
static tess_gemm_desc kernel_view(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *g) {
    const tess_gemm_desc d = dense_view(g);
    return is_token_tile(k) ? tess_gemm_transposed_problem(&d) : d;
}

/* Tile rows a grouped problem can have at most, for tiles of `tile_m` rows
 * (tokens): a contiguous X's, plus one partial tile per group; a masked
 * layout's groups' batches each whole. */
static int64_t max_tile_rows(const tess_grouped_gemm_desc *d, int tile_m) {
    const int64_t per_batch = (d->m + tile_m - 1) / tile_m;
    return d->layout == TESS_GROUP_MASKED ? per_batch * d->groups : per_batch + d->groups;
}

/* The kernels count rows in 32-bit ints, up to a tile past a group's last
 * row: with clusters of 2, the first row of a cluster's second tile lies up
 * to 127 rows past it and that tile's rows 127 more, so M stays 256 below 2^31. */
#define TESS_GROUPED_MAX_M ((int64_t)INT32_MAX - 256)

/* Every rule of tess_grouped_gemm, for a device described by `info` (NULL: skip the device checks). */
static tess_status grouped_validate(const tess_device_info *info, const tess_grouped_gemm_desc *desc, const void *x,
                                    const float *xs, const void *w, const float *ws, const int32_t *rows,
                                    const void *y) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: desc is NULL");
    if (desc->struct_size < sizeof(tess_grouped_gemm_desc))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: desc->struct_size=%u; initialise the descriptor with "
                         "tess_grouped_gemm_desc_init",
                         desc->struct_size);
    if (desc->layout != TESS_GROUP_CONTIGUOUS && desc->layout != TESS_GROUP_MASKED)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: layout=%d is not a tess_group_layout (CONTIGUOUS 0, MASKED 1)",
                         (int)desc->layout);
    if (desc->groups < 1 || desc->groups > TESS_GROUPED_MAX_GROUPS)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: groups=%" PRId64 " must be 1 to %d",
                         desc->groups, TESS_GROUPED_MAX_GROUPS);
    const int64_t m = desc->m, n = desc->n, k = desc->k, g = desc->groups;
    if (m < 1 || n < 1 || k < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 ": all must be >= 1", m, n, k);
    if (m > TESS_GROUPED_MAX_M || n > INT32_MAX || k > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 ": M must be at most 2^31 - 257 "
                         "and N and K below 2^31",
                         m, n, k);
    if (desc->expected_m < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: expected_m=%" PRId64 " must be >= 0 (0: unknown)",
                         desc->expected_m);
    if (!x || !w || !y || !rows)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: X, W, Y and group_rows must not be NULL");
    if ((uintptr_t)rows % sizeof(int32_t))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: group_rows=%p is not 4-byte aligned int32",
                         (const void *)rows);
    const int masked = desc->layout == TESS_GROUP_MASKED;
    const int64_t xy_batch = masked ? g : 1;
    tess_status s;
    if ((s = tess_matrix_check(&desc->x, xy_batch, "X")) || (s = tess_matrix_check(&desc->w, g, "W")) ||
        (s = tess_matrix_check(&desc->y, xy_batch, "Y")) ||
        (s = tess_matrix_check_shape(&desc->x, m, k, "X", "M x K")) ||
        (s = tess_matrix_check_shape(&desc->w, k, n, "W", "K x N (each expert's N x K weight, K-major)")) ||
        (s = tess_matrix_check_shape(&desc->y, m, n, "Y", "M x N")))
        return s;
    if (desc->x.order != TESS_ORDER_ROW || desc->y.order != TESS_ORDER_ROW)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: X and Y must be row-major (tokens by features); X is %s-major, Y %s-major",
                         desc->x.order == TESS_ORDER_ROW ? "row" : "column",
                         desc->y.order == TESS_ORDER_ROW ? "row" : "column");
    if (desc->w.order != TESS_ORDER_COL)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: W must be K-major (the [G, N, K] layout: each expert's weight as a "
                         "column-major K x N operand); an N-major W needs a K-major copy (tess_transpose)");
    if (masked && g > 1 && desc->y.batch_stride < tess_matrix_span(&desc->y, 1))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "Y: batch_stride=%" PRId64 " makes the groups' outputs overlap; it must be at least %" PRId64,
                         desc->y.batch_stride, tess_matrix_span(&desc->y, 1));
    const tess_dtype tx = desc->x.dtype, tw = desc->w.dtype, ty = desc->y.dtype;
    const int fp8 = tx == TESS_DTYPE_E4M3 && tw == TESS_DTYPE_E4M3;
    if (!fp8 && !(is16(tx) && tx == tw))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: X is %s and W %s; grouped kernels multiply bf16 x bf16, f16 x f16 or "
                         "e4m3 x e4m3",
                         tess_dtype_name(tx), tess_dtype_name(tw));
    if (ty != TESS_DTYPE_F32 && !is16(ty))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_grouped_gemm: Y of type %s; Y must be bf16, f16 or f32",
                         tess_dtype_name(ty));
    if (fp8 && desc->fast_accum)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: no grouped kernel of this build accumulates FP8 in the tensor cores "
                         "only; set fast_accum = 0 (promotion every 128 K)");
    const tess_gemm_desc view = dense_view(desc);
    if ((s = tess_gemm_check_tma(&view.a, x, xy_batch, "X")) || (s = tess_gemm_check_tma(&view.b, w, g, "W")) ||
        (s = tess_gemm_check_scales(&view, xs, ws)))
        return s;
    if (tess_scale_is_block(view.a_scale.mode) &&
        (view.a_scale.mode != TESS_SCALE_BLOCK_1x128 || view.b_scale.mode != TESS_SCALE_BLOCK_128x128))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: grouped block scaling is 1x128 for X with 128x128 for W (DeepSeek-V3's "
                         "recipe); other block pairs run only in tess_gemm_scaled");
    if ((uintptr_t)y % tess_dtype_size(ty) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "Y=%p is not aligned to its %s elements", y, tess_dtype_name(ty));
    /* Work items are ints in the kernels: bound them for the narrowest tile (128 x 128). */
    if (max_tile_rows(desc, 128) * ((n + 127) / 128) > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: more than 2^31 output tiles");
    if (info && info->cc_major != 9)
        return tess_fail(TESS_STATUS_ARCH_MISMATCH,
                         "tess_grouped_gemm: device %d (%s) is compute capability %d.%d; tessera's grouped kernels "
                         "need 9.0 (Hopper: H100, H200)",
                         info->device, info->name, info->cc_major, info->cc_minor);
    if (info && !info->has_native_code)
        return tess_fail(TESS_STATUS_ARCH_MISMATCH,
                         "tess_grouped_gemm: this build holds no sm_90a code (TESS_CUDA_ARCHS)");
    return TESS_STATUS_SUCCESS;
}

/* Rows per group the planner assumes: the hint, else an even split. */
static int64_t expected_rows(const tess_grouped_gemm_desc *d) {
    int64_t e = d->expected_m > 0                       ? d->expected_m
                : d->layout == TESS_GROUP_CONTIGUOUS ? (d->m + d->groups - 1) / d->groups
                                                       : d->m;
    return e > 0 ? e : 1;
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
    return max_tile_rows(d, (int)work_item_rows(k)) * cross_tiles(k, d);
}

/* Whether kernel k is a grouped kernel that can run problem d: it serves the
 * problem's view, and its work items fit the kernels' ints. */
static int grouped_kernel_runs(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d) {
    const tess_gemm_desc view = kernel_view(k, d);
    return k->grouped && tess_gemm_kernel_serves(k, &view) && max_items(k, d) <= INT32_MAX;
}

/* The planner's order for kernel k: groups of several tile rows walk in
 * L2-friendly bands; one-tile-row groups (decode) scan N fastest, reading
 * each group's few X rows once while its W streams. Token tiles walk each
 * group in one band (tess_grouped_gemm sets group_m to hold a group's token
 * tiles): all of a weight tile's token tiles run side by side, so a large
 * group streams its weights once while its tokens stay in L2, where N
 * fastest would stream them once per token tile (measured on an H200,
 * 2026-11-25: skewed G=256 x 16 tokens bf16 4096x7168, 4.32 ms N fastest
 * against 2.85 for 128x256 tiles; one-tile groups walk alike in both). */
static int preferred_order(const tess_gemm_kernel *k, const tess_grouped_gemm_desc *d) {
    if (is_token_tile(k))
        return TESS_GROUP_ORDER_BANDED;
    return expected_rows(d) >= TESS_GROUPED_BANDED_MIN_TILE_ROWS * work_item_rows(k) ? TESS_GROUP_ORDER_BANDED
                                                                                      : TESS_GROUP_ORDER_N_FASTEST;
}

/* What a cluster of 2 gains where its rows are used: its CTAs stay in step
 * and read each weight tile from L2 once for both (multicast). Without it,
 * long runs of 128x256 tiles lose their L2 reuse (H100, 2026-11-24, bench/NOTES.md:
 * 256 groups of 4096 tokens, 4096x7168 bf16, 274 TFLOP/s; dense
 * 262144x4096x7168 402 TFLOP/s without clusters, 686 with). Counted
 * small, as the gain shows only past a few waves of tiles. */
#define TESS_GROUPED_CLUSTER_GAIN 1.05

/* How well a tile feeds the tensor cores, relative to 128x256 (core/gemm.c's
 * estimate for dense tiles). Token tiles narrower than 64 are memory-bound,
 * where their rate only breaks ties (fewer padded tokens win); taken lower
 * as they narrow, as each wgmma reads the whole 64-row A for fewer columns
 * (not measured). */
static double tile_efficiency(const tess_gemm_kernel *k) {
    const double width = k->tile_n >= 64 ? tess_tile_width_efficiency(k->tile_n) : k->tile_n >= 32 ? 0.45 : 0.3;
    return width * (k->cluster_m > 1 ? TESS_GROUPED_CLUSTER_GAIN : 1.0);
}

/* Work items of kernel k a group of about e tokens takes (*split of them
 * split tails, each reading two weight tiles). For 128-row tiles, as if
 * every group had e (the policy the suite pins were measured on). Token
 * tiles are where uneven routings cost most: a large group takes many
 * narrow tiles, each re-reading the weight tile from L2. There a group's
 * last tile row is taken as half full on average (e / rows + 1/2, at least
 * one): measured on an H200 (2026-11-25, 4096x7168, G=256, 16 tokens a
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

/* Estimated run time of kernel k (`ctas` resident) in seconds, for the
 * expected group sizes: its tensor-core time (waves of work items, one per
 * cluster, each tile row cluster_m tiles or a token tile; each wave one
 * tile's work over its efficiency) overlapped with its traffic: the
 * weights of every group, X and Y once from memory, and each work item's
 * tiles of W and X from L2 into the SMs (a weight tile once per tile row
 * of its group; a cluster's CTAs share theirs by multicast), whichever
 * takes longer. */
static double grouped_estimate(const tess_device_info *info, const tess_gemm_kernel *k,
                               const tess_grouped_gemm_desc *d, int ctas) {
    const int64_t e = expected_rows(d);
    double split;
    const double items = (double)d->groups * expected_group_items(k, d, e, &split);
    const int units = ctas / k->cluster_m;
    const double waves = ceil(items / units);
    const int64_t k_padded = (d->k + k->tile_k - 1) / k->tile_k * k->tile_k;
    const double tile_flops = (double)k->tile_m * k->tile_n * 2.0 * (double)k_padded / tile_efficiency(k);
    const double compute = waves * tess_sm_compute_seconds(info, k->input >= TESS_MMA_E4M3_E4M3, tile_flops);
    const double tokens = (double)e * d->groups;
    const double wb = (double)tess_dtype_size(d->w.dtype), xb = (double)tess_dtype_size(d->x.dtype);
    const double yb = (double)tess_dtype_size(d->y.dtype);
    const double bytes = (double)d->groups * d->n * d->k * wb + tokens * ((double)d->k * xb + (double)d->n * yb);
    const double w_rows = is_token_tile(k) ? k->tile_m : k->tile_n; /* per work item: a cluster shares its W tile */
    const double x_rows = is_token_tile(k) ? k->tile_n : k->tile_m * k->cluster_m;
    /* A split tail's CTAs each read their own W tile: one more per split item. */
    const double l2_bytes =
        (items * (w_rows * wb + x_rows * xb) + (double)d->groups * split * w_rows * wb) * (double)d->k;
    const double memory = tess_memory_seconds(info, bytes), l2 = tess_l2_read_seconds(info, l2_bytes);
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
    const tess_gemm_kernel *k = tess_gemm_sm90_kernel(index);
    const int64_t items = max_items(k, d);
    const int units = tess_gemm_resident_ctas(index, info) / k->cluster_m;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->kernel = index;
    p->tile_m = k->tile_m, p->tile_n = k->tile_n, p->tile_k = k->tile_k, p->stages = k->stages;
    p->cluster_m = k->cluster_m, p->cluster_n = 1;
    p->tiles = (int32_t)(items * k->cluster_m);
    p->grid = (int32_t)((items < units ? items : units) * k->cluster_m);
    p->group_order = order;
    static const char *const accumulation[] = {"", "_pr", "_blk", "_blkc"};
    char cluster[16] = "";
    if (k->cluster_m > 1)
        snprintf(cluster, sizeof cluster, "_c%dx1", k->cluster_m);
    /* _swap: a token-tile kernel (weights by tokens, run transposed) */
    snprintf(p->name, sizeof p->name, "sm90_%s_grouped_%dx%dx%d_s%d%s%s%s_%s",
             k->input >= TESS_MMA_E4M3_E4M3 ? "e4m3e4m3" : tess_dtype_name(d->x.dtype), k->tile_m, k->tile_n,
             k->tile_k, k->stages, cluster, accumulation[k->scaling], is_token_tile(k) ? "_swap" : "",
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
    for (int i = 0; i < tess_gemm_sm90_kernel_count(); i++) {
        const tess_gemm_kernel *k = tess_gemm_sm90_kernel(i);
        if (is_token_tile(k) || !grouped_kernel_runs(k, d))
            continue;
        const double c = grouped_estimate(info, k, &large, tess_gemm_resident_ctas(i, info));
        if (best < 0 || c < best_cost)
            best = i, best_cost = c, *order = preferred_order(k, &large);
    }
    return best;
}

/* Groups a mixed plan of token tiles `tile_n` wide leaves to its 128-row
 * kernel: those of more than two token tiles. Such a group would re-read
 * each weight tile from L2 three times or more, where a 128-row tile reads
 * it once (H200, 2026-11-25, skewed G=256 x 16 tokens: 32-wide token tiles
 * 3.32 ms, 128x256 tiles 2.85-2.95; with even groups 3.51 against 3.64). */
static int mixed_min_rows(const tess_gemm_kernel *token) { return 2 * token->tile_n + 1; }

/* What a mixed plan's second launch costs where no group is large (its
 * CTAs read the group sizes and exit), in seconds: H200, 2026-11-25, even
 * groups of 16 tokens, mixed against token tiles alone, 4 us at G=256
 * (3.460 ms against 3.456) and 5 at G=64 (0.873 against 0.868). */
#define TESS_GROUPED_SECOND_LAUNCH_SECONDS 5e-6

/* A routing's skew is unknown to the planner (the sizes stay on the
 * device): a mixed plan is preferred to its one-launch twin where the second
 * launch costs at most this share of the estimate, and ranked behind it
 * elsewhere. */
#define TESS_GROUPED_MIXED_MAX_OVERHEAD 0.02

/* Plan p (token tiles) made mixed: groups of large_min_rows rows or more to kernel `large` in `order`. */
static void mixed_describe(const tess_device_info *info, const tess_grouped_gemm_desc *d, int large, int order,
                           tess_plan *p) {
    tess_plan second;
    grouped_describe(info, d, large, order, &second);
    p->large_min_rows = mixed_min_rows(tess_gemm_sm90_kernel(p->kernel));
    p->large_kernel = large, p->large_order = order, p->large_grid = second.grid;
    const size_t len = strlen(p->name);
    snprintf(p->name + len, sizeof p->name - len, "_mix%d", (int)p->large_min_rows);
}

int tess_grouped_candidates(const tess_device_info *info, const tess_grouped_gemm_desc *d, tess_plan *plans,
                            int capacity) {
    enum { MAX_CANDIDATES = 4 * TESS_GEMM_MAX_KERNELS }; /* each kernel in three orders, token tiles mixed too */
    double cost[MAX_CANDIDATES];
    int n = 0, large_order = TESS_GROUP_ORDER_N_FASTEST;
    const int large = large_groups_kernel(info, d, &large_order);
    for (int i = 0; i < tess_gemm_sm90_kernel_count(); i++) {
        const tess_gemm_kernel *k = tess_gemm_sm90_kernel(i);
        if (!grouped_kernel_runs(k, d))
            continue;
        const double base = grouped_estimate(info, k, d, tess_gemm_resident_ctas(i, info));
        const int preferred = preferred_order(k, d);
        for (int order = TESS_GROUP_ORDER_N_FASTEST; order <= TESS_GROUP_ORDER_BANDED && n < MAX_CANDIDATES; order++) {
            /* the other orders rank just behind the preferred one (for autotuning) */
            const int at = tess_plan_rank_slot(plans, cost, n, capacity, base * (order == preferred ? 1.0 : 1.01));
            if (at >= 0)
                grouped_describe(info, d, i, order, &plans[at]);
            n++;
        }
        if (is_token_tile(k) && large >= 0 && n < MAX_CANDIDATES) { /* mixed, in the preferred order */
            /* insured: ranked just ahead of its one-launch twin (0.1% less) */
            const int insured = TESS_GROUPED_SECOND_LAUNCH_SECONDS <= TESS_GROUPED_MIXED_MAX_OVERHEAD * base;
            const int at = tess_plan_rank_slot(plans, cost, n, capacity,
                                               insured ? base * 0.999 : base + TESS_GROUPED_SECOND_LAUNCH_SECONDS);
            if (at >= 0) {
                grouped_describe(info, d, i, preferred, &plans[at]);
                mixed_describe(info, d, large, large_order, &plans[at]);
            }
            n++;
        }
    }
    return n;
}

/* Handle and descriptor checks shared by the plan queries (with stand-in pointers). */
static tess_status grouped_prepare(tess_handle h, const tess_grouped_gemm_desc *desc, const char *caller) {
    tess_status s = tess_handle_check(h, caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    static const _Alignas(16) char stand_in[16];
    return grouped_validate(&h->info, desc, stand_in, (const float *)stand_in, stand_in, (const float *)stand_in,
                            (const int32_t *)stand_in, stand_in);
}

/* The sentence for a valid problem no grouped kernel runs. */
static tess_status no_grouped_kernel(const char *caller) {
    return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                     "%s: no grouped kernel of this build runs this problem (grouped recipes: bf16 or f16 with "
                     "optional TENSOR/OUTER_VEC factors; e4m3 with TENSOR or OUTER_VEC factors, or 1x128 X with "
                     "128x128 W factors)",
                     caller);
}

TESS_API tess_status tess_grouped_gemm_plans(tess_handle handle, const tess_grouped_gemm_desc *desc,
                                             tess_plan *plans, int capacity, int *count) {
    tess_status s = grouped_prepare(handle, desc, "tess_grouped_gemm_plans");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!count || (capacity > 0 && !plans) || capacity < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm_plans: count must not be NULL, nor plans when capacity > 0");
    *count = tess_grouped_candidates(&handle->info, desc, plans, capacity);
    return *count ? TESS_STATUS_SUCCESS : no_grouped_kernel("tess_grouped_gemm_plans");
}

TESS_API tess_status tess_grouped_gemm_plan(tess_handle handle, const tess_grouped_gemm_desc *desc, tess_plan *plan) {
    int count = 0;
    if (!plan)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm_plan: plan is NULL");
    return tess_grouped_gemm_plans(handle, desc, plan, 1, &count);
}

/* The device pointers of one grouped GEMM call. */
typedef struct grouped_operands {
    const void *x;
    const float *x_scale;
    const void *w;
    const float *w_scale;
    const int32_t *group_rows;
    void *y;
} grouped_operands;

/* Queues kernel `index` in `order` on `grid` CTAs for the groups of
 * min_rows to max_rows rows (the others are another launch's). */
static tess_status grouped_launch(tess_handle handle, const tess_grouped_gemm_desc *desc, int index, int order,
                                  int grid, int min_rows, int max_rows, const grouped_operands *o) {
    const tess_gemm_kernel *k = tess_gemm_sm90_kernel(index);
    const tess_gemm_desc view = kernel_view(k, desc);
    const int tokens_as_b = is_token_tile(k); /* the kernel's A is W */
    tess_gemm_params p;
    const void *a = tokens_as_b ? o->w : o->x, *b = tokens_as_b ? o->x : o->w;
    const float *a_scale = tokens_as_b ? o->w_scale : o->x_scale, *b_scale = tokens_as_b ? o->x_scale : o->w_scale;
    tess_status s = tess_gemm_params_init(&p, k, &view, a, a_scale, b, b_scale, NULL, o->y);
    if (s)
        return s;
    p.groups = (int)desc->groups;
    if (tokens_as_b && order == TESS_GROUP_ORDER_BANDED) /* one band per group (preferred_order) */
        p.group_m = (int)max_tile_rows(desc, (int)work_item_rows(k)); /* times the weight tiles: max_items */
    p.group_layout = desc->layout;
    p.group_order = order;
    p.group_rows = o->group_rows;
    p.group_split_tails = splits_tails(k, desc, order);
    p.group_min_rows = min_rows, p.group_max_rows = max_rows;
    p.split.units = grid / k->cluster_m; /* clusters */
    p.split.k_blocks = (int)((desc->k + k->tile_k - 1) / k->tile_k);
    return k->launch(&p, grid, handle->stream);
}

TESS_API tess_status tess_grouped_gemm(tess_handle handle, const tess_grouped_gemm_desc *desc, const tess_plan *plan,
                                       const void *x, const float *x_scale, const void *w, const float *w_scale,
                                       const int32_t *group_rows, void *y) {
    tess_status s = tess_handle_check(handle, "tess_grouped_gemm");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if ((s = grouped_validate(&handle->info, desc, x, x_scale, w, w_scale, group_rows, y)))
        return s;
    tess_plan chosen;
    if (!plan) {
        if (tess_grouped_candidates(&handle->info, desc, &chosen, 1) == 0)
            return no_grouped_kernel("tess_grouped_gemm");
        plan = &chosen;
    }
    const tess_gemm_kernel *k =
        plan->struct_size >= sizeof(tess_plan) && plan->kernel >= 0 && plan->kernel < tess_gemm_sm90_kernel_count()
            ? tess_gemm_sm90_kernel(plan->kernel)
            : NULL;
    if (!k || !k->grouped || plan->group_order < TESS_GROUP_ORDER_N_FASTEST ||
        plan->group_order > TESS_GROUP_ORDER_BANDED)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: the plan was not made by tess_grouped_gemm_plan(s)");
    tess_plan expected;
    grouped_describe(&handle->info, desc, plan->kernel, plan->group_order, &expected);
    if (!grouped_kernel_runs(k, desc) || plan->grid != expected.grid)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: plan %s was made for another problem or device",
                         plan->name);

    if (plan->large_min_rows) { /* a mixed plan: its second launch as tess_grouped_candidates makes it */
        tess_plan want = expected;
        int order = TESS_GROUP_ORDER_N_FASTEST;
        const int large = large_groups_kernel(&handle->info, desc, &order);
        if (large >= 0 && is_token_tile(k))
            mixed_describe(&handle->info, desc, large, order, &want);
        if (!want.large_min_rows || plan->large_min_rows != want.large_min_rows ||
            plan->large_kernel != want.large_kernel || plan->large_order != want.large_order ||
            plan->large_grid != want.large_grid)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "tess_grouped_gemm: plan %s's second launch (large_* fields) is not the one "
                             "tess_grouped_gemm_plans makes for this problem",
                             plan->name);
    }
    const grouped_operands ops = {x, x_scale, w, w_scale, group_rows, y};
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    /* Every group, or a mixed plan's smaller ones and then its larger ones. */
    const int first_max_rows = plan->large_min_rows ? plan->large_min_rows - 1 : INT32_MAX;
    s = grouped_launch(handle, desc, plan->kernel, plan->group_order, plan->grid, 0, first_max_rows, &ops);
    if (!s && plan->large_min_rows)
        s = grouped_launch(handle, desc, plan->large_kernel, plan->large_order, plan->large_grid,
                           plan->large_min_rows, INT32_MAX, &ops);
    tess_handle_leave(handle, previous);
    return s;
}
