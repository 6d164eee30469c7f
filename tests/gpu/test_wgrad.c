/* The grouped weight gradient (tess_grouped_wgrad) on the GPU:
 *  - fixed cases: ragged unaligned groups (1, 63, 64, 65, 127, 200, 0,
 *    1000 tokens), all groups empty, one token a group, T = 0, G = 1;
 *    bf16 and f16 operands; dW f32, bf16, f16, row- or column-major, with
 *    padded rows and batches; beta 0, beta with its own C, and beta 1 with
 *    C == dW (gradient accumulation); then random cases. Every plan of
 *    each case (and the heuristic's) against the float64 reference
 *    (ref/ref_wgrad.h): every element of dW, an empty group's exactly
 *    beta * C; every byte of dW's buffer outside the groups' matrices, and a
 *    guard after it, left as it was;
 *  - Inf and NaN planted in every token no group owns (past offs[G-1], or
 *    between clamped groups) and in the rows' padding never reach dW;
 *  - offsets that break the rules (decreasing, past T, negative) are
 *    clamped as the reference clamps them: no fault, the clamped result;
 *  - plans refused by the run call (another problem's, a dense one's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/matrix.h"
#include "gpu_skip.h"
#include "problem.h"
#include "ref/convert.h"
#include "ref/ref_wgrad.h"

#define MAX_PLANS 16

static tess_rng rng;

/* The sums' error allowance over dW's rounding, relative (Frobenius) to the
 * float64 reference: 16-bit products summed in float32 in another order
 * (as gpu_grouped's 16-bit allowance). */
#define SUM_ALLOWANCE 2e-5

/* How C is given: not read (beta 0), its own matrix, or dW itself (accumulation). */
enum c_mode { C_NONE, C_OWN, C_IN_PLACE };

/* One weight-gradient problem with its host inputs. */
typedef struct wgrad_case {
    tess_grouped_wgrad_desc d;
    int32_t *offs;
    void *dy, *x, *c;           /* host; dy and x NULL where T = 0; c the C image (C_IN_PLACE: dW's initial bytes) */
    size_t dy_bytes, x_bytes, c_bytes, dw_bytes;
    int c_mode;
    double *want;               /* the reference, G x n x k */
    char text[200];
} wgrad_case;

/* Tokens of one group: empty, one, a few, a ragged or whole number of 64-token K blocks (1 to 4, 1 either side). */
static int64_t pick_tokens(int64_t max) { return test_group_size(&rng, max, 64, 4, 1); }

/* Element `i` of a 16-bit or f32 array set to NaN (odd i) or Inf. */
static void plant(tess_dtype t, void *base, int64_t i) {
    tess_store_from_f32(t, base, i, i % 2 ? NAN : (i % 4 ? INFINITY : -INFINITY));
}

/* A token operand (dY or X, T x cols row-major, padded rows) of random
 * values; tokens that no group owns (owned[t] = 0) and the rows' padding
 * hold Inf and NaN. NULL where T = 0. */
static void *token_operand(tess_matrix_desc *m, tess_dtype t, int64_t tokens, int64_t cols, const char *owned,
                           size_t *bytes) {
    const int64_t ld = (cols + 7) / 8 * 8 + 8 * tess_rng_range(&rng, 0, 1);
    *m = (tess_matrix_desc){t, TESS_ORDER_ROW, tokens, cols, ld, 0};
    *bytes = 0;
    if (tokens == 0)
        return NULL;
    void *p = test_matrix_random(m, 1, &rng, bytes);
    for (int64_t r = 0; r < tokens; r++)
        for (int64_t c = owned[r] ? cols : 0; c < (r + 1 < tokens ? ld : cols); c++)
            plant(t, p, r * ld + c);
    return p;
}

/* Builds case w: `groups` groups of sizes[g] tokens (NULL: drawn), `spare`
 * tokens past the last group, offsets `bad` (NULL: the sizes' cumulative
 * ends) clamped into the T tokens, n x k gradients of `out` in `order`. */
static void make_case(wgrad_case *w, int64_t groups, const int64_t *sizes, int64_t spare, const int32_t *bad,
                      int64_t bad_tokens, int64_t n, int64_t k, tess_dtype in, tess_dtype out, tess_order order,
                      int c_mode) {
    memset(w, 0, sizeof *w);
    tess_grouped_wgrad_desc *d = &w->d;
    tess_grouped_wgrad_desc_init(d);
    d->groups = groups, d->n = n, d->k = k;
    w->offs = malloc(sizeof(int32_t) * (size_t)groups);
    int64_t total = 0;
    for (int64_t g = 0; g < groups; g++) {
        total += sizes ? sizes[g] : pick_tokens(groups > 64 ? 40 : 300);
        w->offs[g] = bad ? bad[g] : (int32_t)total;
    }
    d->tokens = bad ? bad_tokens : total + spare;
    d->expected_tokens = tess_rng_range(&rng, 0, 1) ? 0 : (total + groups - 1) / groups;
    /* the tokens some group owns, as the offsets are clamped */
    char *owned = calloc((size_t)d->tokens + 1, 1);
    for (int64_t g = 0; g < groups; g++) {
        int64_t first, count;
        tess_ref_wgrad_span(w->offs, g, d->tokens, &first, &count);
        memset(owned + first, 1, (size_t)count);
    }
    w->dy = token_operand(&d->dy, in, d->tokens, n, owned, &w->dy_bytes);
    w->x = token_operand(&d->x, in, d->tokens, k, owned, &w->x_bytes);
    free(owned);
    const int64_t inner = order == TESS_ORDER_ROW ? k : n, outer = order == TESS_ORDER_ROW ? n : k;
    const int64_t ld = inner + (tess_rng_range(&rng, 0, 1) ? 0 : tess_rng_range(&rng, 1, 9));
    d->dw = (tess_matrix_desc){out, order, n, k, ld, outer * ld + tess_rng_range(&rng, 0, 1) * 8};
    w->dw_bytes = tess_matrix_bytes(&d->dw, groups);
    w->c_mode = c_mode;
    if (c_mode == C_IN_PLACE) {
        d->beta = 1.0f, d->c = d->dw;
        w->c = test_matrix_random(&d->c, groups, &rng, &w->c_bytes);
    } else if (c_mode == C_OWN) {
        static const tess_dtype types[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
        d->beta = (float)tess_rng_normal(&rng);
        d->c = (tess_matrix_desc){types[tess_rng_range(&rng, 0, 2)], TESS_ORDER_ROW, n, k, k + 3, n * (k + 3)};
        w->c = test_matrix_random(&d->c, groups, &rng, &w->c_bytes);
    }
    if (tess_rng_range(&rng, 0, 2) == 0)
        d->alpha = (float)tess_rng_normal(&rng);
    w->want = malloc(sizeof(double) * (size_t)(groups * n * k));
    CHECK_STATUS(tess_ref_grouped_wgrad(d, w->dy, w->x, w->offs, w->c, w->want), TESS_STATUS_SUCCESS);
    snprintf(w->text, sizeof w->text, "G=%lld T=%lld n=%lld k=%lld %s, dW %s %s ld %lld, C %d, alpha %g beta %g",
             (long long)groups, (long long)d->tokens, (long long)n, (long long)k, tess_dtype_name(in),
             tess_dtype_name(out), order == TESS_ORDER_ROW ? "row" : "col", (long long)ld, c_mode, d->alpha, d->beta);
}

static void free_case(wgrad_case *w) { free(w->offs), free(w->dy), free(w->x), free(w->c), free(w->want); }

/* Runs case w with `plan` (NULL: the heuristic's) on fresh device buffers
 * and checks dW; returns the relative error (-1 where the run failed). */
static double run_case(tess_handle h, const wgrad_case *w, const tess_plan *plan, const char *name) {
    const tess_grouped_wgrad_desc *d = &w->d;
    const int64_t g_n = d->groups, n = d->n, k = d->k;
    void *ddy = w->dy ? gpu_upload(w->dy, w->dy_bytes) : NULL, *dx = w->x ? gpu_upload(w->x, w->x_bytes) : NULL;
    int32_t *doffs = gpu_upload(w->offs, sizeof(int32_t) * (size_t)g_n);
    unsigned char *ddw = gpu_poisoned(w->dw_bytes);
    void *dc = NULL;
    /* dW's bytes before the run: poison, or C's image where C is dW */
    unsigned char *before = malloc(w->dw_bytes + GPU_GUARD_BYTES);
    memset(before, GPU_POISON, w->dw_bytes + GPU_GUARD_BYTES);
    if (w->c_mode == C_IN_PLACE) {
        memcpy(before, w->c, w->dw_bytes);
        cudaMemcpy(ddw, w->c, w->dw_bytes, cudaMemcpyHostToDevice);
        dc = ddw;
    } else if (w->c_mode == C_OWN) {
        dc = gpu_upload(w->c, w->c_bytes);
    }
    const tess_status s = tess_grouped_wgrad(h, d, plan, ddy, dx, doffs, dc, ddw);
    const cudaError_t err = cudaDeviceSynchronize();
    CHECKF(s == TESS_STATUS_SUCCESS && err == cudaSuccess, "%s, %s: %s, %s (%s)", w->text, name,
           tess_status_name(s), cudaGetErrorString(err), tess_last_error());
    double rel = -1.0;
    if (s == TESS_STATUS_SUCCESS && err == cudaSuccess) {
        unsigned char *got = malloc(w->dw_bytes + GPU_GUARD_BYTES);
        char *mine = calloc(w->dw_bytes, 1); /* bytes of the groups' matrices */
        cudaMemcpy(got, ddw, w->dw_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost);
        const size_t es = tess_dtype_size(d->dw.dtype);
        double err2 = 0, ref2 = 0;
        int64_t nonfinite = 0, empty_nonzero = 0, touched = 0;
        for (int64_t g = 0; g < g_n; g++) {
            int64_t first, count;
            tess_ref_wgrad_span(w->offs, g, d->tokens, &first, &count);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < k; j++) {
                    const int64_t at = tess_matrix_offset(&d->dw, g, i, j);
                    memset(mine + at * (int64_t)es, 1, es);
                    const double y = tess_load_as_f32(d->dw.dtype, got, at), r = w->want[(g * n + i) * k + j];
                    nonfinite += !isfinite(y);
                    empty_nonzero += count == 0 && d->beta == 0.0f && y != 0.0;
                    err2 += (y - r) * (y - r), ref2 += r * r;
                }
        }
        for (size_t b = 0; b < w->dw_bytes; b++)
            touched += !mine[b] && got[b] != before[b];
        const int64_t guard = gpu_guard_touched(got, w->dw_bytes);
        rel = nonfinite ? 1e30 : ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
        CHECKF(nonfinite == 0, "%s, %s: %lld elements of dW not finite", w->text, name, (long long)nonfinite);
        CHECKF(empty_nonzero == 0, "%s, %s: %lld elements of empty groups not 0", w->text, name,
               (long long)empty_nonzero);
        CHECKF(touched == 0 && guard == 0, "%s, %s: %lld bytes written between the groups' matrices, %lld after dW",
               w->text, name, (long long)touched, (long long)guard);
        free(got), free(mine);
    }
    free(before);
    cudaFree(ddy), cudaFree(dx), cudaFree(doffs), cudaFree(ddw);
    if (w->c_mode == C_OWN)
        cudaFree(dc);
    return rel;
}

static double allowance(const wgrad_case *w) { return test_dtype_rounding(w->d.dw.dtype).unit + SUM_ALLOWANCE; }

/* Runs case w with every plan and with the heuristic's; returns the plans run. */
static int run_every_plan(tess_handle h, const wgrad_case *w) {
    tess_plan plans[MAX_PLANS];
    int count = 0;
    CHECK_STATUS(tess_grouped_wgrad_plans(h, &w->d, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
    CHECKF(count >= 1, "%s: no plans", w->text);
    for (int p = -1; p < count && p < MAX_PLANS; p++) {
        const char *name = p < 0 ? "(heuristic)" : plans[p].name;
        const double rel = run_case(h, w, p < 0 ? NULL : &plans[p], name);
        CHECKF(rel >= 0 && rel <= allowance(w), "%s, %s: rel error %.3g (bound %.3g)", w->text, name, rel,
               allowance(w));
    }
    return count;
}

static void test_fixed(tess_handle h) {
    static const int64_t ragged[8] = {1, 63, 64, 65, 127, 200, 0, 1000};
    static const int64_t empty[5] = {0, 0, 0, 0, 0};
    static const int64_t ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const int64_t one_group[1] = {777};
    static const int64_t none[3] = {0, 0, 0};
    const struct {
        int64_t groups;
        const int64_t *sizes;
        int64_t spare, n, k;
        tess_dtype in, out;
        tess_order order;
        int c_mode;
    } cases[] = {
        {8, ragged, 70, 256, 192, TESS_DTYPE_BF16, TESS_DTYPE_F32, TESS_ORDER_ROW, C_NONE},
        {8, ragged, 0, 256, 192, TESS_DTYPE_F16, TESS_DTYPE_BF16, TESS_ORDER_ROW, C_IN_PLACE},
        {8, ragged, 5, 200, 136, TESS_DTYPE_BF16, TESS_DTYPE_F32, TESS_ORDER_ROW, C_IN_PLACE},
        {8, ragged, 1, 130, 264, TESS_DTYPE_BF16, TESS_DTYPE_F32, TESS_ORDER_COL, C_OWN},
        {5, empty, 90, 128, 128, TESS_DTYPE_BF16, TESS_DTYPE_BF16, TESS_ORDER_ROW, C_NONE},
        {5, empty, 90, 128, 128, TESS_DTYPE_F16, TESS_DTYPE_F32, TESS_ORDER_ROW, C_IN_PLACE},
        {16, ones, 3, 130, 264, TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_ORDER_ROW, C_NONE},
        {3, none, 0, 100, 40, TESS_DTYPE_BF16, TESS_DTYPE_F32, TESS_ORDER_ROW, C_OWN},
        {3, none, 0, 100, 40, TESS_DTYPE_F16, TESS_DTYPE_BF16, TESS_ORDER_ROW, C_NONE},
        {1, one_group, 0, 100, 72, TESS_DTYPE_BF16, TESS_DTYPE_BF16, TESS_ORDER_ROW, C_NONE},
        {1, one_group, 33, 512, 384, TESS_DTYPE_F16, TESS_DTYPE_F32, TESS_ORDER_ROW, C_IN_PLACE},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        wgrad_case w;
        make_case(&w, cases[i].groups, cases[i].sizes, cases[i].spare, NULL, 0, cases[i].n, cases[i].k, cases[i].in,
                  cases[i].out, cases[i].order, cases[i].c_mode);
        run_every_plan(h, &w);
        free_case(&w);
    }
}

/* Offsets that break the rules: decreasing, past T, negative; Inf and NaN
 * in the tokens no clamped group owns. */
static void test_bad_offsets(tess_handle h) {
    static const int32_t bad[6] = {100, 50, 7, 1 << 30, -5, 3};
    static const int32_t past[3] = {40, 1 << 20, INT32_MAX};
    for (int i = 0; i < 4; i++) {
        wgrad_case w;
        const int first = i < 2;
        make_case(&w, first ? 6 : 3, NULL, 0, first ? bad : past, first ? 300 : 200, 192, 128,
                  i % 2 ? TESS_DTYPE_F16 : TESS_DTYPE_BF16, i % 2 ? TESS_DTYPE_F32 : TESS_DTYPE_BF16, TESS_ORDER_ROW,
                  i % 2 ? C_IN_PLACE : C_NONE);
        run_every_plan(h, &w);
        free_case(&w);
    }
}

static void test_random(tess_handle h) {
    static const tess_dtype outs[3] = {TESS_DTYPE_F32, TESS_DTYPE_BF16, TESS_DTYPE_F16};
    for (int trial = 0, trials = check_trials(24); trial < trials; trial++) {
        const int64_t groups = trial % 8 == 7 ? tess_rng_range(&rng, 100, 300) : tess_rng_range(&rng, 1, 40);
        const int64_t spare = tess_rng_range(&rng, 0, 1) ? tess_rng_range(&rng, 1, 100) : 0;
        const int64_t n = 8 * tess_rng_range(&rng, 1, 80), k = 8 * tess_rng_range(&rng, 1, 80);
        const tess_dtype in = tess_rng_range(&rng, 0, 1) ? TESS_DTYPE_F16 : TESS_DTYPE_BF16;
        const tess_dtype out = outs[tess_rng_range(&rng, 0, 2)];
        const tess_order order = tess_rng_range(&rng, 0, 3) ? TESS_ORDER_ROW : TESS_ORDER_COL;
        const int c_mode = (int)tess_rng_range(&rng, 0, 2);
        wgrad_case w;
        make_case(&w, groups, NULL, spare, NULL, 0, n, k, in, out, order, c_mode);
        tess_plan plans[MAX_PLANS];
        int count = 0;
        CHECK_STATUS(tess_grouped_wgrad_plans(h, &w.d, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        const int p = (int)tess_rng_range(&rng, -1, count - 1);
        const char *name = p < 0 ? "(heuristic)" : plans[p].name;
        const double rel = run_case(h, &w, p < 0 ? NULL : &plans[p], name);
        CHECKF(rel >= 0 && rel <= allowance(&w), "random %d: %s, %s: rel error %.3g", trial, w.text, name, rel);
        free_case(&w);
    }
}

/* Plans the run call refuses: another problem's, a dense GEMM's. */
static void test_refusals(tess_handle h) {
    static const int64_t sizes[2] = {100, 28};
    wgrad_case w;
    make_case(&w, 2, sizes, 0, NULL, 0, 256, 128, TESS_DTYPE_BF16, TESS_DTYPE_F32, TESS_ORDER_ROW, C_NONE);
    /* Separate device buffers, so that the call gets past validation (no
     * overlap) to the plan check it is meant to reach. */
    void *dy = gpu_upload(w.dy, w.dy_bytes), *x = gpu_upload(w.x, w.x_bytes), *dw = gpu_poisoned(w.dw_bytes);
    const int32_t *offs = gpu_upload(w.offs, sizeof(int32_t) * 2);
    tess_plan plan;
    CHECK_STATUS(tess_grouped_wgrad_plan(h, &w.d, &plan), TESS_STATUS_SUCCESS);
    tess_grouped_wgrad_desc f16 = w.d;
    f16.dy.dtype = f16.x.dtype = TESS_DTYPE_F16;
    CHECK_STATUS(tess_grouped_wgrad(h, &f16, &plan, dy, x, offs, NULL, dw), TESS_STATUS_INVALID_VALUE);
    CHECKF(strstr(tess_last_error(), "none of the plans") != NULL, "f16 with a bf16 plan: %s", tess_last_error());
    tess_plan wide = plan;
    wide.grid += 1;
    CHECK_STATUS(tess_grouped_wgrad(h, &w.d, &wide, dy, x, offs, NULL, dw), TESS_STATUS_INVALID_VALUE);
    CHECKF(strstr(tess_last_error(), "grid differs") != NULL, "a wider grid: %s", tess_last_error());
    tess_gemm_desc dense;
    tess_gemm_desc_init(&dense);
    dense.m = dense.n = dense.k = 256;
    dense.a = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, 256, 256, 256, 0};
    dense.b = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_COL, 256, 256, 256, 0};
    dense.c = dense.d = dense.a;
    tess_plan dense_plan;
    CHECK_STATUS(tess_gemm_plan(h, &dense, &dense_plan), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_grouped_wgrad(h, &w.d, &dense_plan, dy, x, offs, NULL, dw), TESS_STATUS_INVALID_VALUE);
    CHECKF(strstr(tess_last_error(), "none of the") != NULL, "a dense plan: %s", tess_last_error());
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaFree(dy), cudaFree(x), cudaFree((void *)offs), cudaFree(dw);
    int count = 0;
    CHECK_STATUS(tess_grouped_wgrad_plans(h, &w.d, NULL, 0, &count), TESS_STATUS_SUCCESS);
    CHECK(count >= 1);
    CHECK_STATUS(tess_grouped_wgrad_plans(h, &w.d, NULL, 1, &count), TESS_STATUS_INVALID_VALUE);
    free_case(&w);
}

int main(void) {
    GPU_TEST_MAIN_START(h, workspace);
    gpu_timed("refusals", test_refusals, h);
    gpu_timed("fixed cases", test_fixed, h);
    gpu_timed("bad offsets", test_bad_offsets, h);
    gpu_timed("random cases", test_random, h);
    GPU_TEST_MAIN_END(h, workspace, "gpu_wgrad");
}
