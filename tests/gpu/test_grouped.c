/* Grouped GEMM (Mixture-of-Experts) on the GPU:
 *  - tess_grouped_gemm on random problems, contiguous and masked layouts:
 *    group sizes with empty groups, groups of one row, ragged and whole
 *    tiles, up to 1024 groups; bf16/f16 with optional per-tensor and per-row
 *    factors, e4m3 with per-tensor (per group), per-row/column and 1x128 x
 *    128x128 block factors in random or packed layouts; bf16/f16/f32 Y with
 *    padded rows; every tile order; random fused epilogues (a bias per group
 *    or shared, each activation). Each group's rows against the GPU
 *    reference of that group's dense problem; every byte of Y outside the
 *    groups' rows (rows of no group, rows past masked_m, row padding) and a
 *    guard after Y must stay as poisoned;
 *  - group sizes that break the rules on the device (offs decreasing or past
 *    M, masked_m negative or past M): clamped, no fault, nothing written
 *    outside Y;
 *  - refusals of bad descriptors, each with its status. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/matrix.h"
#include "core/scale.h"
#include "gpu_skip.h"
#include "problem.h"
#include "ref/convert.h"

#define MAX_PLANS 64

static tess_rng rng;

/* Error allowances over Y's rounding, relative (Frobenius) to the GPU
 * reference's float32 sums: 16-bit inputs sum in another order (as in
 * gpu_gemm), FP8 blocks keep about 13 bits in the tensor cores before each
 * promotion (as in gpu_gemm_fp8), scattered more over few outputs. */
#define F16_ALLOWANCE 2e-5
#define FP8_ALLOWANCE 0x1p-12

/* One grouped problem with its host inputs and group sizes. */
typedef struct grouped_case {
    tess_grouped_gemm_desc g;
    int32_t *rows;         /* group_rows as passed: offs or masked_m */
    int64_t *first, *count; /* each group's first row (of X's rows, or of its batch) and its rows, as clamped */
    void *x, *w;
    float *xs, *ws;
    void *bias; /* the fused epilogue's [G, N] (or shared [N]) bias, or NULL */
    size_t x_bytes, w_bytes, xs_bytes, ws_bytes, y_bytes, bias_bytes;
    tess_scale_operand xs_op, ws_op;
} grouped_case;

/* Rows of one group: empty, one, a few, a ragged or whole number of 128-row tiles (1 to 3, 2 either side). */
static int64_t pick_group_rows(int64_t max) { return test_group_size(&rng, max, 128, 3, 2); }

/* Factors of `mode` for X (per row: x_rows rows in x_batches batches) or W
 * (per column, per expert), random layouts or packed; TENSOR ones one per group. */
static float *make_factors(tess_scale_operand *op, tess_scale_mode mode, int64_t outer, int64_t k, int64_t batches,
                           int packed, size_t *bytes) {
    if (mode == TESS_SCALE_TENSOR) { /* one per group */
        memset(op, 0, sizeof *op);
        op->layout.mode = TESS_SCALE_TENSOR, op->layout.batch_stride = 1;
        float *f = malloc(sizeof(float) * (size_t)batches);
        for (int64_t i = 0; i < batches; i++)
            f[i] = (float)(0.25 + 1.75 * tess_rng_uniform(&rng));
        *bytes = sizeof(float) * (size_t)batches;
        return (float *)(op->data = f);
    }
    return packed ? test_scale_packed(op, &rng, mode, outer, k, batches, bytes)
                  : test_scale_random(op, &rng, mode, outer, k, batches, 0, bytes);
}

/* Scale recipes (X, W) of the grouped kernels; -1 rows: no factors. */
static const int recipes[][2] = {{-1, -1},
                                 {TESS_SCALE_TENSOR, TESS_SCALE_TENSOR},
                                 {TESS_SCALE_OUTER_VEC, TESS_SCALE_OUTER_VEC},
                                 {TESS_SCALE_BLOCK_1x128, TESS_SCALE_BLOCK_128x128}};

static void make_case(grouped_case *c, tess_group_layout layout, int64_t groups, int64_t n, int64_t k,
                      tess_dtype in, int recipe, tess_dtype out, int packed) {
    memset(c, 0, sizeof *c);
    tess_grouped_gemm_desc *g = &c->g;
    tess_grouped_gemm_desc_init(g);
    g->layout = layout, g->groups = groups, g->n = n, g->k = k;
    const int masked = layout == TESS_GROUP_MASKED;
    c->rows = malloc(sizeof(int32_t) * (size_t)groups);
    c->first = malloc(sizeof(int64_t) * (size_t)groups);
    c->count = malloc(sizeof(int64_t) * (size_t)groups);
    const int64_t max_rows = groups > 64 ? 40 : 600;
    int64_t total = 0, most = 0;
    for (int64_t i = 0; i < groups; i++) {
        c->count[i] = pick_group_rows(max_rows);
        c->first[i] = masked ? 0 : total;
        total += c->count[i];
        most = c->count[i] > most ? c->count[i] : most;
        c->rows[i] = (int32_t)(masked ? c->count[i] : total);
    }
    /* Rows no group owns: past the last group (contiguous) or past masked_m (masked). */
    const int64_t spare_rows = tess_rng_range(&rng, 0, 2);
    g->m = (masked ? most : total) + spare_rows * tess_rng_range(&rng, 1, 40);
    if (g->m == 0)
        g->m = 1;
    g->expected_m = tess_rng_range(&rng, 0, 1) ? 0 : (total + groups - 1) / groups;
    const int64_t es = (int64_t)tess_dtype_size(in), align = 16 / es;
    const int64_t ldx = (k + align - 1) / align * align + align * tess_rng_range(&rng, 0, 1);
    const int64_t ldw = (k + align - 1) / align * align;
    g->x = (tess_matrix_desc){in, TESS_ORDER_ROW, g->m, k, ldx, masked ? g->m * ldx + align * tess_rng_range(&rng, 0, 2) : 0};
    g->w = (tess_matrix_desc){in, TESS_ORDER_COL, k, n, ldw, n * ldw};
    const int64_t ldy = n + (tess_rng_range(&rng, 0, 2) ? 8 * tess_rng_range(&rng, 0, 1) : tess_rng_range(&rng, 1, 3));
    g->y = (tess_matrix_desc){out, TESS_ORDER_ROW, g->m, n, ldy, masked ? g->m * ldy + 8 * tess_rng_range(&rng, 0, 1) : 0};
    const int64_t xy_batches = masked ? groups : 1;
    c->x = test_matrix_random(&g->x, xy_batches, &rng, &c->x_bytes);
    c->w = test_matrix_random(&g->w, groups, &rng, &c->w_bytes);
    c->y_bytes = tess_matrix_bytes(&g->y, xy_batches);
    if (recipes[recipe][0] >= 0) {
        const tess_scale_mode xm = (tess_scale_mode)recipes[recipe][0], wm = (tess_scale_mode)recipes[recipe][1];
        c->xs = make_factors(&c->xs_op, xm, g->m, k, xm == TESS_SCALE_TENSOR ? groups : xy_batches, packed,
                             &c->xs_bytes);
        c->ws = make_factors(&c->ws_op, wm, n, k, groups, packed, &c->ws_bytes);
        g->x_scale = c->xs_op.layout, g->w_scale = c->ws_op.layout;
    }
    test_epilogue_random(&g->epilogue, &rng, g->m, n, groups, 1);
    c->bias = test_bias_random(&g->epilogue, &rng, g->m, n, groups, &c->bias_bytes);
}

/* Gives case c a gated epilogue (N even): Y N / 2 wide, its ld and bytes unchanged, sometimes clamped. */
static void make_gated(grouped_case *c) {
    c->g.gate = TESS_GATE_INTERLEAVED;
    c->g.gate_limit = tess_rng_range(&rng, 0, 1) ? 0.0f : 3.0f;
    c->g.y.cols = c->g.n / 2;
}

/* Gives case c N-major weights (each expert's K x N stored row-major: W [G, K, N]; 16-bit
 * only: the grouped_f16_nmajor kernels), drawn again, rows padded or not. */
static void make_n_major(grouped_case *c) {
    tess_grouped_gemm_desc *g = &c->g;
    const int64_t align = 16 / (int64_t)tess_dtype_size(g->w.dtype);
    const int64_t ldw = (g->n + align - 1) / align * align + align * tess_rng_range(&rng, 0, 1);
    g->w = (tess_matrix_desc){g->w.dtype, TESS_ORDER_ROW, g->k, g->n, ldw, g->k * ldw};
    free(c->w);
    c->w = test_matrix_random(&g->w, g->groups, &rng, &c->w_bytes);
}

static void free_case(grouped_case *c) {
    free(c->rows), free(c->first), free(c->count), free(c->x), free(c->w), free(c->xs), free(c->ws), free(c->bias);
}

/* A factor operand seen from group gi's dense problem: its data moved to
 * the group's batch (or, for a contiguous X's per-row factors, its first row). */
static tess_scale_operand group_factors(const tess_scale_operand *op, const float *dev, int64_t gi, int64_t first_row,
                                        int per_row_shared) {
    tess_scale_operand s = *op;
    s.data = dev;
    if (!dev)
        return s;
    if (per_row_shared && op->layout.mode != TESS_SCALE_TENSOR)
        s.data = dev + first_row * op->layout.stride_mn;
    else
        s.data = dev + gi * op->layout.batch_stride;
    s.layout.batch_stride = 0;
    return s;
}

/* A case's inputs uploaded to the device and its Y poisoned (gpu_poisoned). */
typedef struct case_device {
    void *x, *w, *bias;
    float *xs, *ws;
    int32_t *rows;
    unsigned char *y;
} case_device;

static case_device case_upload(const grouped_case *c) {
    case_device d;
    d.x = gpu_upload(c->x, c->x_bytes), d.w = gpu_upload(c->w, c->w_bytes);
    d.xs = c->xs ? gpu_upload(c->xs, c->xs_bytes) : NULL, d.ws = c->ws ? gpu_upload(c->ws, c->ws_bytes) : NULL;
    d.rows = gpu_upload(c->rows, sizeof(int32_t) * (size_t)c->g.groups);
    d.bias = c->bias ? gpu_upload(c->bias, c->bias_bytes) : NULL;
    d.y = gpu_poisoned(c->y_bytes);
    return d;
}

static void case_device_free(case_device *d) {
    cudaFree(d->x), cudaFree(d->w), cudaFree(d->xs), cudaFree(d->ws), cudaFree(d->rows), cudaFree(d->y),
        cudaFree(d->bias);
}

/* Queues case c on the device (d) with `plan` (NULL: the heuristic's). */
static tess_status case_launch(tess_handle h, const grouped_case *c, const tess_plan *plan, const case_device *d) {
    const tess_epilogue_ptrs ep = {.struct_size = sizeof ep, .bias = d->bias};
    return tess_grouped_gemm_fused(h, &c->g, plan, d->x, d->xs, d->w, d->ws, d->rows, d->y, &ep);
}

/* Runs a case with plan `plan_index` (< 0: the heuristic's) and checks it:
 * each group's rows against the reference, every other byte of Y untouched.
 * Returns the relative error, -1 if the run failed. */
static double run_case(tess_handle h, grouped_case *c, int plan_index, char *plan_name) {
    tess_grouped_gemm_desc *g = &c->g;
    const int masked = g->layout == TESS_GROUP_MASKED;
    case_device dev = case_upload(c);
    tess_plan plans[MAX_PLANS];
    int count = 0;
    double rel = -1.0;
    CHECK_STATUS(tess_grouped_gemm_plans(h, g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
    const tess_plan *plan = gpu_pick_plan(plans, count, plan_index, plan_name);
    tess_status s = case_launch(h, c, plan, &dev);
    cudaError_t err = cudaDeviceSynchronize();
    CHECKF(s == TESS_STATUS_SUCCESS && err == cudaSuccess, "%s: status %s, %s (%s)", plan_name, tess_status_name(s),
           cudaGetErrorString(err), tess_last_error());
    if (s != TESS_STATUS_SUCCESS || err != cudaSuccess)
        goto done;
    /* The reference: each non-empty group's dense problem into a float Y. */
    const int64_t xy_batches = masked ? g->groups : 1, rows_all = g->m * xy_batches;
    const int64_t yc = g->y.cols; /* N, or N / 2 with a gate */
    float *dref = gpu_upload(NULL, sizeof(float) * (size_t)(rows_all * yc));
    const int64_t es = (int64_t)tess_dtype_size(g->x.dtype);
    for (int64_t gi = 0; gi < g->groups; gi++) {
        if (c->count[gi] == 0)
            continue;
        const int64_t row0 = (masked ? gi * g->m : 0) + c->first[gi]; /* first row of the group in dref */
        tess_ref_gemm ref;
        memset(&ref, 0, sizeof ref);
        ref.m = c->count[gi], ref.n = g->n, ref.k = g->k, ref.batch = 1, ref.alpha = 1.0, ref.beta = 0.0;
        ref.a = g->x, ref.a.rows = c->count[gi], ref.a.batch_stride = 0;
        ref.b = g->w, ref.b.batch_stride = 0;
        ref.a_data = (const char *)dev.x + ((masked ? gi * g->x.batch_stride : 0) + c->first[gi] * g->x.ld) * es;
        ref.b_data = (const char *)dev.w + gi * g->w.batch_stride * es;
        ref.a_scale = group_factors(&c->xs_op, dev.xs, masked ? gi : (c->xs_op.layout.mode == TESS_SCALE_TENSOR ? gi : 0),
                                    c->first[gi], !masked);
        ref.b_scale = group_factors(&c->ws_op, dev.ws, gi, 0, 0);
        ref.epilogue = g->epilogue; /* the group's bias vector, as a batch of one */
        if (dev.bias)
            ref.bias_data = (const char *)dev.bias + gi * g->epilogue.bias_batch_stride * (int64_t)tess_dtype_size(g->epilogue.bias_type);
        ref.gate = g->gate, ref.gate_limit = g->gate_limit;
        ref.d = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_ROW, c->count[gi], yc, yc, 0};
        ref.c = ref.d;
        CHECK_STATUS(tess_ref_gemm_gpu(&ref, dref + row0 * yc, NULL), TESS_STATUS_SUCCESS);
    }
    float *want = malloc(sizeof(float) * (size_t)(rows_all * yc));
    unsigned char *got = malloc(c->y_bytes + GPU_GUARD_BYTES);
    cudaMemcpy(want, dref, sizeof(float) * (size_t)(rows_all * yc), cudaMemcpyDeviceToHost);
    cudaMemcpy(got, dev.y, c->y_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost);
    /* Which rows of each batch belong to a group. */
    char *owned = calloc((size_t)rows_all, 1);
    for (int64_t gi = 0; gi < g->groups; gi++)
        for (int64_t r = 0; r < c->count[gi]; r++)
            owned[(masked ? gi * g->m : 0) + c->first[gi] + r] = 1;
    double err2 = 0, ref2 = 0;
    int64_t nonfinite = 0, touched = 0, guard = 0;
    const size_t ye = tess_dtype_size(g->y.dtype);
    /* f16's largest finite value: a sum past it rounds to an infinity of its sign (FP8 inputs with
     * per-row and per-column factors reach 8e4 at K = 768). */
    const double y_top = g->y.dtype == TESS_DTYPE_F16 ? 65504.0 : INFINITY;
    for (int64_t b = 0; b < xy_batches; b++) {
        for (int64_t r = 0; r < g->m; r++) {
            const int64_t row = b * g->m + r;
            for (int64_t col = 0; col < g->y.ld; col++) {
                const int64_t at = b * g->y.batch_stride + r * g->y.ld + col;
                if (owned[row] && col < yc) {
                    const double y = tess_load_as_f32(g->y.dtype, got, at), w = want[row * yc + col];
                    if (fabs(w) > y_top && fabs(y) >= y_top && (y > 0) == (w > 0))
                        continue; /* overflowed as it must (or rounded down to the largest finite value) */
                    if (!isfinite(y) && nonfinite < 4) /* where: the first few */
                        printf("    %s: Y[%lld][%lld][%lld] = %g, reference %g (group rows %lld)\n", plan_name,
                               (long long)b, (long long)r, (long long)col, y, w,
                               (long long)(masked ? c->count[b] : -1));
                    nonfinite += !isfinite(y);
                    err2 += (y - w) * (y - w), ref2 += w * w;
                } else if ((size_t)at * ye < c->y_bytes) { /* rows of no group, padding: still poisoned */
                    for (size_t i = 0; i < ye; i++)
                        touched += got[(size_t)at * ye + i] != GPU_POISON;
                }
            }
        }
    }
    guard = gpu_guard_touched(got, c->y_bytes);
    rel = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
    CHECKF(nonfinite == 0, "%s: %lld elements of Y not finite (unwritten?)", plan_name, (long long)nonfinite);
    CHECKF(touched == 0 && guard == 0, "%s: %lld bytes written outside the groups' rows, %lld after Y", plan_name,
           (long long)touched, (long long)guard);
    if (nonfinite)
        rel = 1e30;
    free(owned), free(want), free(got);
    cudaFree(dref);
done:
    case_device_free(&dev);
    return rel;
}

static double allowance(const grouped_case *c) {
    int64_t outputs = 0;
    for (int64_t gi = 0; gi < c->g.groups; gi++)
        outputs += c->count[gi] * c->g.n;
    const double scatter = outputs > 0 && outputs < 256 ? sqrt(256.0 / (double)outputs) : 1.0;
    /* An activation may shrink the reference's norm while the sums' error stays: twice their allowance. */
    const double act = (c->g.epilogue.activation != TESS_ACT_NONE ? 2.0 : 1.0) + (c->g.gate ? 2.0 : 0.0);
    return test_dtype_rounding(c->g.y.dtype).unit +
           act * (c->g.x.dtype == TESS_DTYPE_E4M3 ? FP8_ALLOWANCE * scatter : F16_ALLOWANCE);
}

/* Random case `trial` of test_random (its draws, in order): the case, its
 * scale recipe and the plan index it is run with (-1: the heuristic's).
 * dev/probes/grouped_trial.c and grouped_hang.c draw with it too (the
 * test's cases only where they first make the draws of its earlier parts). */
static void draw_random_case(grouped_case *c, int trial, int *recipe, int *plan_index) {
    static const tess_dtype ins[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_E4M3};
    static const tess_dtype outs[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    const tess_dtype in = ins[trial % 3];
    /* 16-bit inputs take per-tensor and per-row factors; FP8 every recipe */
    *recipe = (int)tess_rng_range(&rng, 0, in == TESS_DTYPE_E4M3 ? 3 : 2);
    const int64_t groups = trial % 10 == 0 ? (trial % 20 ? 300 : 1024) : tess_rng_range(&rng, 1, 40);
    const int64_t n = tess_rng_range(&rng, 0, 2) ? tess_rng_range(&rng, 1, 700) : 128 * tess_rng_range(&rng, 1, 4);
    const int64_t k = tess_rng_range(&rng, 0, 2) ? tess_rng_range(&rng, 1, 900) : 128 * tess_rng_range(&rng, 1, 6);
    /* drawn one statement at a time: the order a call's arguments are evaluated in is the compiler's */
    const tess_group_layout layout = (tess_group_layout)tess_rng_range(&rng, 0, 1);
    const tess_dtype out = outs[tess_rng_range(&rng, 0, 4) < 3 ? 0 : tess_rng_range(&rng, 1, 2)];
    const int packed = (int)tess_rng_range(&rng, 0, 1);
    make_case(c, layout, groups, n, k, in, *recipe, out, packed);
    if (n % 2 == 0 && tess_rng_range(&rng, 0, 3) == 0)
        make_gated(c);
    if (in != TESS_DTYPE_E4M3 && tess_rng_range(&rng, 0, 2) == 0)
        make_n_major(c);
    *plan_index = (int)tess_rng_range(&rng, -1, 8);
}

/* A case in one line: layout, sizes, types, factors, Y, gate and activation. */
static void describe_case(const grouped_case *c, int recipe, char *out, size_t size) {
    const tess_grouped_gemm_desc *g = &c->g;
    snprintf(out, size, "%s G=%lld m=%lld n=%lld k=%lld %s (W %s-major), scales %d x %d, Y %s ld %lld, gate %d, act %d, expected_m %lld",
             g->layout == TESS_GROUP_MASKED ? "masked" : "contiguous", (long long)g->groups, (long long)g->m,
             (long long)g->n, (long long)g->k, tess_dtype_name(g->x.dtype), g->w.order == TESS_ORDER_ROW ? "N" : "K",
             recipes[recipe][0], recipes[recipe][1],
             tess_dtype_name(g->y.dtype), (long long)g->y.ld, (int)g->gate, (int)g->epilogue.activation,
             (long long)g->expected_m);
}

static void test_random(tess_handle h) {
    int runs = 0, failures = 0;
    for (int trial = 0, trials = check_trials(120); trial < trials; trial++) {
        grouped_case c;
        int recipe, plan_index;
        draw_random_case(&c, trial, &recipe, &plan_index);
        char plan[64], what[256];
        describe_case(&c, recipe, what, sizeof what);
        if (getenv("TESS_TEST_TRACE"))
            printf("  case %d: %s\n", trial, what);
        const int before = check_failed;
        const double t0 = gpu_wall_seconds();
        const double rel = run_case(h, &c, plan_index, plan), bound = allowance(&c);
        const double took = gpu_wall_seconds() - t0;
        if (took > 5.0) /* the suite's whole run takes about a minute: name a case that takes a tenth of it */
            printf("  slow case %d (%.1f s): %s, plan %s\n", trial, took, what, plan);
        CHECKF(rel >= 0 && rel <= bound, "%s, plan %s: rel error %.3g (bound %.3g)", what, plan, rel, bound);
        runs++;
        failures += check_failed > before;
        free_case(&c);
    }
    printf("grouped random cases: %d run, %d failed\n", runs, failures);
}

/* Every plan (kernel x tile order, 128-row tiles and token tiles run
 * transposed) of a few problems: bf16 without factors and with per-row
 * ones, FP8 block-scaled and per-tensor, and many groups of a few tokens
 * (decode), contiguous and masked, bf16 and f32 Y. */
static void test_every_plan(tess_handle h) {
    static const struct {
        int64_t groups, n;
        tess_dtype in;
        int recipe;
        tess_dtype out;
    } cases[] = {{1, 384, TESS_DTYPE_BF16, 0, TESS_DTYPE_BF16},   {8, 448, TESS_DTYPE_BF16, 0, TESS_DTYPE_BF16},
                 {15, 512, TESS_DTYPE_E4M3, 3, TESS_DTYPE_BF16},  {22, 576, TESS_DTYPE_E4M3, 3, TESS_DTYPE_BF16},
                 {12, 320, TESS_DTYPE_E4M3, 1, TESS_DTYPE_F32},   {9, 200, TESS_DTYPE_BF16, 2, TESS_DTYPE_F32},
                 {100, 256, TESS_DTYPE_E4M3, 3, TESS_DTYPE_BF16}, {130, 384, TESS_DTYPE_BF16, 0, TESS_DTYPE_BF16}};
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        grouped_case c;
        make_case(&c, (tess_group_layout)(i % 2), cases[i].groups, cases[i].n, 640, cases[i].in, cases[i].recipe,
                  cases[i].out, 1);
        const int gated = i == 1 || i == 2; /* bf16 and FP8 block-scaled, with a gate (token tiles pair rows) */
        if (gated)
            make_gated(&c);
        tess_plan plans[MAX_PLANS];
        int count = 0, token_plans = 0;
        CHECK_STATUS(tess_grouped_gemm_plans(h, &c.g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        /* 3 kernels (128x256 or 128x192 in clusters of 1 and 2, 128x128) and
         * 3 token tiles (16, 32, 64 tokens), each in 3 orders */
        CHECKF(count >= 18, "%d plans for case %d", count, i);
        for (int p = 0; p < count && p < MAX_PLANS; p++) {
            char plan[64];
            const double rel = run_case(h, &c, p, plan);
            token_plans += strstr(plan, "_swap") != NULL;
            CHECKF(rel >= 0 && rel <= allowance(&c), "every plan, case %d, %s: rel error %.3g", i, plan, rel);
        }
        CHECKF(token_plans >= 9, "case %d: %d token-tile plans%s", i, token_plans, gated ? " (gated)" : "");
        free_case(&c);
    }
    /* N-major weights (bf16, contiguous and masked, one gated): the grouped_f16_nmajor kernels'
     * 128x256 c2 and 128x128 tiles in 3 orders each; no token tiles (they read K-major weights) */
    for (int i = 0; i < 3; i++) {
        grouped_case c;
        make_case(&c, (tess_group_layout)(i % 2), 9 + 7 * i, 448, 576, i == 2 ? TESS_DTYPE_F16 : TESS_DTYPE_BF16, 0,
                  i == 1 ? TESS_DTYPE_F32 : TESS_DTYPE_BF16, 1);
        make_n_major(&c);
        if (i == 2)
            make_gated(&c);
        tess_plan plans[MAX_PLANS];
        int count = 0;
        CHECK_STATUS(tess_grouped_gemm_plans(h, &c.g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        CHECKF(count >= 6, "%d plans for N-major case %d", count, i);
        for (int p = 0; p < count && p < MAX_PLANS; p++) {
            char plan[64];
            const double rel = run_case(h, &c, p, plan);
            CHECKF(strstr(plan, "_swap") == NULL, "N-major case %d: a token-tile plan %s", i, plan);
            CHECKF(rel >= 0 && rel <= allowance(&c), "every plan, N-major case %d, %s: rel error %.3g", i, plan, rel);
        }
        free_case(&c);
    }
}

/* Token tiles whose consumer warpgroup computes one tile and skips the next
 * (its 64 weight rows past N: N = 390 on 128-row weight tiles, walked in
 * bands so that a CTA's tiles change rows) after an epilogue from registers
 * long enough for its warps to drift apart (gate, SiLU, factors): every
 * warp must see each stage's fill before the warpgroup releases it, or the
 * kernel hangs (consumer_follow_ring). Each token-tile plan, mixed ones
 * included, runs 24 times in bursts of 4, each burst given 10 s: a hang
 * fails the test (a race: likely, not certain, to show in 24 launches). */
static void test_skip_after_compute(tess_handle h) {
    grouped_case c;
    const tess_rng saved = rng; /* one fixed case, whatever the seed; the seed's own draws go on after it */
    tess_rng_seed(&rng, 2);
    make_case(&c, TESS_GROUP_CONTIGUOUS, 1024, 390, 709, TESS_DTYPE_BF16, 2, TESS_DTYPE_BF16, 1);
    make_gated(&c);
    rng = saved;
    c.g.epilogue.activation = TESS_ACT_SILU;
    case_device dev = case_upload(&c);
    tess_plan plans[MAX_PLANS];
    int count = 0, token_plans = 0;
    CHECK_STATUS(tess_grouped_gemm_plans(h, &c.g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
    for (int p = 0; p < count; p++) {
        if (!strstr(plans[p].name, "_swap"))
            continue;
        token_plans++;
        for (int burst = 0; burst < 6; burst++) {
            for (int i = 0; i < 4; i++)
                CHECK_STATUS(case_launch(h, &c, &plans[p], &dev), TESS_STATUS_SUCCESS);
            if (!gpu_finished_within(10.0)) {
                CHECKF(0, "skip after compute, %s: burst %d did not finish in 10 s (%s)", plans[p].name, burst,
                       cudaGetErrorString(cudaStreamQuery(0)));
                check_finish("gpu_grouped");
                _Exit(1); /* a hung kernel holds the GPU until the process ends */
            }
        }
    }
    CHECKF(token_plans >= 9, "%d token-tile plans", token_plans);
    case_device_free(&dev);
    free_case(&c);
}

/* Group sizes that break the rules on the device are clamped: no plan (the
 * clustered ones included, whose two CTAs must walk the same items) faults,
 * hangs or writes outside Y (the guard after it stays poisoned). */
static void test_bad_sizes(tess_handle h) {
    for (int masked = 0; masked <= 1; masked++) {
        grouped_case c;
        make_case(&c, (tess_group_layout)masked, 6, 256, 256, TESS_DTYPE_BF16, 0, TESS_DTYPE_BF16, 0);
        c.g.epilogue = (tess_epilogue_desc){0}; /* tess_grouped_gemm takes no bias */
        const int32_t bad_offs[6] = {100, 50, 7, 1 << 30, -5, 3};
        const int32_t bad_masked[6] = {-1, 1 << 30, 5, 0, 2, -100};
        int32_t *drows = gpu_upload(masked ? bad_masked : bad_offs, sizeof bad_offs);
        void *dx = gpu_upload(c.x, c.x_bytes), *dw = gpu_upload(c.w, c.w_bytes);
        tess_plan plans[MAX_PLANS];
        int count = 0;
        CHECK_STATUS(tess_grouped_gemm_plans(h, &c.g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        for (int p = 0; p < count && p < MAX_PLANS; p++) {
            unsigned char *dy = gpu_poisoned(c.y_bytes);
            tess_status s = tess_grouped_gemm(h, &c.g, &plans[p], dx, NULL, dw, NULL, drows, dy);
            cudaError_t err = cudaDeviceSynchronize();
            CHECKF(s == TESS_STATUS_SUCCESS && err == cudaSuccess, "bad sizes (%s), %s: %s, %s",
                   masked ? "masked" : "offs", plans[p].name, tess_status_name(s), cudaGetErrorString(err));
            unsigned char *got = malloc(c.y_bytes + GPU_GUARD_BYTES);
            cudaMemcpy(got, dy, c.y_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost);
            const int64_t touched = gpu_guard_touched(got, c.y_bytes);
            CHECKF(touched == 0, "bad sizes (%s), %s: %lld bytes written after Y", masked ? "masked" : "offs",
                   plans[p].name, (long long)touched);
            free(got);
            cudaFree(dy);
        }
        cudaFree(drows), cudaFree(dx), cudaFree(dw);
        free_case(&c);
    }
}

/* Descriptors the API refuses, each with its status. */
static void test_refusals(tess_handle h) {
    grouped_case c;
    make_case(&c, TESS_GROUP_CONTIGUOUS, 4, 256, 256, TESS_DTYPE_BF16, 0, TESS_DTYPE_BF16, 0);
    c.g.epilogue = (tess_epilogue_desc){0}; /* each refusal below is for its own reason, not a missing bias */
    static const _Alignas(16) char p[64];
    const int32_t *rows = (const int32_t *)p;
    tess_grouped_gemm_desc d = c.g;
    tess_plan plan;
    CHECK_STATUS(tess_grouped_gemm_plan(h, &d, &plan), TESS_STATUS_SUCCESS);
    d.groups = 0;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_INVALID_VALUE);
    d.groups = TESS_GROUPED_MAX_GROUPS + 1;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_INVALID_VALUE);
    d = c.g;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, NULL, (void *)p), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p + 2, NULL, p, NULL, rows, (void *)p), TESS_STATUS_INVALID_VALUE);
    d.w.order = TESS_ORDER_ROW, d.w.ld = d.n; /* N-major weights: 16-bit only */
    d.x.dtype = d.w.dtype = TESS_DTYPE_E4M3;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_NOT_SUPPORTED);
    CHECKF(strstr(tess_last_error(), "K-major") != NULL, "FP8 N-major W: %s", tess_last_error());
    d = c.g;
    d.x.dtype = d.w.dtype = TESS_DTYPE_E5M2;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_NOT_SUPPORTED);
    d = c.g;
    d.m = (int64_t)INT32_MAX - 255; /* rows past a group's end must stay below 2^31 in the kernels */
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_INVALID_VALUE);
    CHECKF(strstr(tess_last_error(), "2^31 - 257") != NULL, "M past the grouped bound: %s", tess_last_error());
    d = c.g;
    d.layout = (tess_group_layout)7;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_INVALID_VALUE);
    d = c.g;
    d.x_scale.mode = TESS_SCALE_BLOCK_1x128, d.w_scale.mode = TESS_SCALE_BLOCK_128x128;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, (const float *)p, p, (const float *)p, rows, (void *)p),
                 TESS_STATUS_NOT_SUPPORTED); /* block factors need FP8 */
    d = c.g;
    d.struct_size = 4;
    CHECK_STATUS(tess_grouped_gemm(h, &d, NULL, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_INVALID_VALUE);
    /* A dense plan is not a grouped one. */
    tess_gemm_desc dense;
    tess_gemm_desc_init(&dense);
    dense.m = dense.n = dense.k = 256;
    dense.a = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, 256, 256, 256, 0};
    dense.b = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_COL, 256, 256, 256, 0};
    dense.c = dense.d = dense.a;
    tess_plan dense_plan;
    CHECK_STATUS(tess_gemm_plan(h, &dense, &dense_plan), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_grouped_gemm(h, &c.g, &dense_plan, p, NULL, p, NULL, rows, (void *)p), TESS_STATUS_INVALID_VALUE);
    free_case(&c);
}

int main(void) {
    GPU_TEST_MAIN_START(h, workspace);
    gpu_timed("refusals", test_refusals, h);
    gpu_timed("every plan", test_every_plan, h);
    gpu_timed("skip after compute", test_skip_after_compute, h);
    gpu_timed("random cases", test_random, h);
    gpu_timed("bad sizes", test_bad_sizes, h);
    GPU_TEST_MAIN_END(h, workspace, "gpu_grouped");
}
