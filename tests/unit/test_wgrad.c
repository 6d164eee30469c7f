/* The grouped weight gradient (tess_grouped_wgrad), without a GPU:
 *  - validation: a valid problem passes (T = 0 and C == dW included); each
 *    broken rule is refused with its status and a sentence naming it;
 *  - plans (a 132-SM Hopper assumed): one per k-grouped kernel of the
 *    types, each found again by its name, data-parallel, within the
 *    resident CTAs; the dense and grouped planners never offer k-grouped
 *    kernels; the plan cache tells weight gradients apart;
 *  - the reference: clamped offsets, and each group's sums against the
 *    dense reference of that group. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/abi.h"
#include "core/family.h"
#include "core/gemm.h"
#include "core/plan_cache.h"
#include "kernels/sm90/sm90.h"
#include "problem.h"
#include "ref/random.h"
#include "ref/ref_gemm.h"
#include "ref/ref_wgrad.h"

#define MAX_PLANS 16

static tess_rng rng;

/* Host memory the checks point into (never read or written): each operand
 * at its own 64 KiB offset, aligned for every check. */
static _Alignas(256) char arena[8 << 16];
#define AT(i) ((void *)(arena + ((size_t)(i) << 16)))

/* A valid bf16 problem: G groups, T tokens, dW n x k f32 [G, n, k]. */
static tess_grouped_wgrad_desc problem(int64_t groups, int64_t tokens, int64_t n, int64_t k) {
    tess_grouped_wgrad_desc d;
    tess_grouped_wgrad_desc_init(&d);
    d.groups = groups, d.tokens = tokens, d.n = n, d.k = k;
    d.dy = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, tokens, n, n, 0};
    d.x = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, tokens, k, k, 0};
    d.dw = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_ROW, n, k, k, n * k};
    d.c = d.dw;
    return d;
}

/* Pointers of a call (dY, X, C, dW, offs), each in its own part of the arena. */
static tess_operands operands(void) {
    tess_operands o;
    memset(&o, 0, sizeof o);
    o.a = AT(0), o.b = AT(1), o.c = AT(2), o.d = AT(3), o.group_rows = (const int32_t *)AT(4);
    return o;
}

/* The checks of a run call: the descriptor read, then validated. */
static tess_status check_call(const tess_grouped_wgrad_desc *d, const tess_operands *o) {
    tess_grouped_wgrad_desc full;
    tess_status s = tess_grouped_wgrad_accept(d, &full);
    return s ? s : tess_grouped_wgrad_validate(NULL, &full, o);
}

/* Expects `want` and a sentence holding `words` for problem d with pointers o. */
static void refused(const tess_grouped_wgrad_desc *d, const tess_operands *o, tess_status want, const char *words,
                    const char *what) {
    const tess_status s = check_call(d, o);
    CHECKF(s == want && strstr(tess_last_error(), words) != NULL, "%s: %s (\"%s\"), wanted %s with \"%s\"", what,
           tess_status_name(s), tess_last_error(), tess_status_name(want), words);
}

static void test_validation(void) {
    const tess_grouped_wgrad_desc ok = problem(4, 1000, 64, 32); /* dW: 32 KiB, apart from C */
    tess_operands o = operands();
    CHECK_STATUS(check_call(&ok, &o), TESS_STATUS_SUCCESS);
    CHECK_STATUS(check_call(&ok, &tess_stand_ins), TESS_STATUS_SUCCESS);
    tess_grouped_wgrad_desc d = ok;
    /* beta: C read, and C may be dW itself */
    d.beta = 1.0f;
    CHECK_STATUS(check_call(&d, &o), TESS_STATUS_SUCCESS);
    o.c = o.d;
    CHECK_STATUS(check_call(&d, &o), TESS_STATUS_SUCCESS);
    d.c.dtype = TESS_DTYPE_BF16;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "another layout", "C == dW, another dtype");
    d = ok, o = operands(), o.group_rows = (const int32_t *)((char *)o.d + 1024); /* offs inside dW */
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "overlaps offs", "dW over offs");
    d = ok, d.beta = 1.0f;
    o = operands(), o.c = (const char *)o.d + 4 * 64; /* inside dW's storage */
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "overlaps dW", "C partly over dW");
    o = operands(), o.c = NULL;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "C is NULL", "beta without C");
    /* dW written over what the call reads: dY's or X's tokens */
    d = ok, o = operands(), o.d = (char *)o.a + 64;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "overlaps dY", "dW over dY");
    o = operands(), o.d = (char *)o.b + 1000 * 32 * 2 - 256; /* over X's last 256 bytes, past dY's end */
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "overlaps X", "dW over X");
    d = ok, d.beta = 1.0f;
    o = operands();
    d.c.dtype = TESS_DTYPE_E4M3;
    refused(&d, &o, TESS_STATUS_NOT_SUPPORTED, "C must be", "FP8 C");
    d = ok, d.beta = 1.0f, d.c.rows = 3;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "C is 3 x 32", "C's shape");
    /* T = 0: dW = beta * C; dY and X unread, their pointers and alignment free */
    d = problem(4, 0, 100, 36);
    o = operands(), o.a = NULL, o.b = (const char *)AT(1) + 2;
    d.dy.ld = 100, d.x.ld = 36;
    CHECK_STATUS(check_call(&d, &o), TESS_STATUS_SUCCESS);
    o = operands();
    /* sizes */
    d = ok, d.groups = 0;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "groups=0", "no groups");
    d.groups = TESS_GROUPED_MAX_GROUPS + 1;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "groups=1025", "too many groups");
    d = ok, d.tokens = -1;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "tokens=-1", "negative T");
    d.tokens = (int64_t)INT32_MAX - 255;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "2^31 - 257", "T past the kernels' ints");
    d = ok, d.n = 0;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "n=0", "n = 0");
    d = ok, d.k = (int64_t)INT32_MAX + 1;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "2^31 - 1", "k too large");
    d = ok, d.expected_tokens = -3;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "expected_tokens=-3", "negative hint");
    d = ok, d.groups = 1024, d.n = d.k = (int64_t)1 << 20;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "2^31 output tiles", "too many tiles");
    /* pointers */
    d = ok;
    o.d = NULL;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "must not be NULL", "no dW");
    o = operands(), o.group_rows = NULL;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "must not be NULL", "no offs");
    o = operands(), o.a = NULL;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "must not be NULL", "no dY");
    o = operands(), o.group_rows = (const int32_t *)((const char *)AT(4) + 2);
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "4-byte aligned", "offs misaligned");
    o = operands(), o.b = (const char *)AT(1) + 8;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "16-byte aligned", "X misaligned");
    o = operands(), o.d = (char *)AT(3) + 2;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "not aligned to its f32", "dW misaligned");
    o = operands();
    /* the token operands */
    d = ok, d.dy.rows = 999;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "must be T x n", "dY's rows");
    d = ok, d.x.cols = 100;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "must be T x k", "X's columns");
    d = ok, d.dy.order = TESS_ORDER_COL, d.dy.ld = d.tokens;
    refused(&d, &o, TESS_STATUS_NOT_SUPPORTED, "row-major", "column-major dY");
    d = ok, d.x.ld = 16;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "ld=16 is smaller", "X's ld");
    d = ok, d.x.ld = 36;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "not a multiple of 8", "X's ld off TMA's rule");
    d = ok, d.dy.dtype = d.x.dtype = TESS_DTYPE_E4M3;
    refused(&d, &o, TESS_STATUS_NOT_SUPPORTED, "bf16 x bf16", "FP8 operands");
    d = ok, d.x.dtype = TESS_DTYPE_F16;
    refused(&d, &o, TESS_STATUS_NOT_SUPPORTED, "bf16 x bf16", "mixed 16-bit types");
    d = ok, d.dy.dtype = (tess_dtype)99;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "not a tess_dtype", "unknown dtype");
    /* dW */
    d = ok, d.dw.batch_stride = d.n * d.k - 1;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "overlap", "dW's groups overlapping");
    d = ok, d.dw.dtype = TESS_DTYPE_E4M3;
    refused(&d, &o, TESS_STATUS_NOT_SUPPORTED, "dW must be", "FP8 dW");
    d = ok, d.dw.rows = d.k, d.dw.cols = d.n, d.dw.ld = d.n;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "n x k", "dW transposed");
    d = ok, d.dw.order = TESS_ORDER_COL, d.dw.ld = d.n;
    CHECK_STATUS(check_call(&d, &o), TESS_STATUS_SUCCESS); /* either order */
    /* versions */
    d = ok, d.struct_size = 8;
    refused(&d, &o, TESS_STATUS_INVALID_VALUE, "struct_size=8", "struct_size below the first version");
    refused(NULL, &o, TESS_STATUS_INVALID_VALUE, "desc is NULL", "no descriptor");
    CHECK_STATUS(tess_grouped_wgrad_desc_init(NULL), TESS_STATUS_INVALID_VALUE);
    tess_grouped_wgrad_desc init;
    memset(&init, 0x5a, sizeof init);
    CHECK_STATUS(tess_grouped_wgrad_desc_init(&init), TESS_STATUS_SUCCESS);
    CHECK(init.struct_size == sizeof init && init.groups == 1 && init.alpha == 1.0f && init.beta == 0.0f &&
          init.tokens == 0 && init.dw.rows == 0);
}

/* k-grouped kernels of this build that multiply `t`. */
static int kgrouped_kernels(tess_dtype t) {
    int n = 0;
    for (int i = 0; i < tess_sm90_kernel_count(); i++) {
        const tess_gemm_kernel *k = tess_sm90_kernel(i);
        n += k->grouped == TESS_GROUPED_K && k->input == (t == TESS_DTYPE_BF16 ? TESS_MMA_BF16 : TESS_MMA_F16);
    }
    return n;
}

static void test_plans(void) {
    for (int trial = 0; trial < 100; trial++) {
        const tess_dtype t = trial % 2 ? TESS_DTYPE_F16 : TESS_DTYPE_BF16;
        const int64_t groups = tess_rng_range(&rng, 1, 256);
        const int64_t tokens = tess_rng_range(&rng, 0, 3) ? tess_rng_range(&rng, 0, 200000) : 0;
        tess_grouped_wgrad_desc d =
            problem(groups, tokens, 8 * tess_rng_range(&rng, 1, 1000), 8 * tess_rng_range(&rng, 1, 1000));
        d.dy.dtype = d.x.dtype = t;
        if (tess_rng_range(&rng, 0, 1))
            d.expected_tokens = tess_rng_range(&rng, 1, 5000);
        CHECK_STATUS(tess_grouped_wgrad_validate(NULL, &d, &tess_stand_ins), TESS_STATUS_SUCCESS);
        tess_plan plans[MAX_PLANS];
        const int count = tess_grouped_wgrad_candidates(NULL, &d, plans, MAX_PLANS);
        CHECKF(count == kgrouped_kernels(t), "G=%lld T=%lld %s: %d plans, %d k-grouped kernels", (long long)groups,
               (long long)tokens, tess_dtype_name(t), count, kgrouped_kernels(t));
        for (int p = 0; p < count && p < MAX_PLANS; p++) {
            const tess_plan *x = &plans[p];
            const int kernel = tess_sm90_wgrad_plan_kernel(NULL, &d, x);
            const tess_gemm_kernel *k = tess_sm90_kernel(kernel);
            const int64_t tiles = groups * ((d.n + x->tile_m - 1) / x->tile_m) * ((d.k + x->tile_n - 1) / x->tile_n);
            CHECKF(k && k->grouped == TESS_GROUPED_K && k->tile_m == x->tile_m && k->tile_n == x->tile_n &&
                       k->stages == x->stages && strstr(x->name, "_wgrad_") && strstr(x->name, tess_dtype_name(t)) &&
                       !x->stream_k && x->workspace_bytes == 0 && x->grid > 0 && x->grid <= 132 &&
                       x->tiles == tiles && x->grid <= x->tiles,
                   "%s: kernel %d, grid %d, tiles %d (want %lld)", x->name, kernel, x->grid, x->tiles,
                   (long long)tiles);
        }
    }
    /* The grouped GEMM's and dense GEMM's planners keep to their own kernels. */
    tess_grouped_gemm_desc g;
    tess_grouped_gemm_desc_init(&g);
    g.groups = 8, g.m = 4096, g.n = 512, g.k = 512;
    g.x = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, g.m, g.k, g.k, 0};
    g.w = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_COL, g.k, g.n, g.k, g.k * g.n};
    g.y = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, g.m, g.n, g.n, 0};
    tess_plan plans[64];
    int count = tess_grouped_candidates(NULL, &g, plans, 64);
    for (int p = 0; p < count && p < 64; p++) {
        const tess_gemm_kernel *k = tess_sm90_kernel(tess_sm90_grouped_plan_kernel(NULL, &g, &plans[p]));
        CHECKF(k && k->grouped != TESS_GROUPED_K, "grouped plan %s runs a k-grouped kernel", plans[p].name);
    }
    /* The dense view of a weight gradient, as a dense problem: no k-grouped kernel. */
    const tess_grouped_wgrad_desc w = problem(8, 4096, 512, 512);
    const tess_gemm_desc view = tess_grouped_wgrad_as_batch(&w);
    count = tess_gemm_candidates(NULL, &view, SIZE_MAX, plans, 64);
    for (int p = 0; p < count && p < 64; p++)
        CHECKF(strstr(plans[p].name, "_wgrad_") == NULL, "dense plan %s", plans[p].name);
    /* The handle's plan cache tells weight gradients apart, and from a grouped GEMM. */
    tess_grouped_wgrad_desc w2 = w;
    w2.tokens = 4095, w2.dy.rows = w2.x.rows = 4095;
    const tess_problem p1 = {NULL, NULL, &w}, p2 = {NULL, NULL, &w2}, p3 = {NULL, &g, NULL};
    tess_plan_key k1, k2, k3, k1b;
    tess_plan_key_of(&p1, SIZE_MAX, &k1), tess_plan_key_of(&p2, SIZE_MAX, &k2);
    tess_plan_key_of(&p3, SIZE_MAX, &k3), tess_plan_key_of(&p1, SIZE_MAX, &k1b);
    CHECK(k1.count == k1b.count && !memcmp(k1.word, k1b.word, sizeof(int64_t) * (size_t)k1.count));
    CHECK(k1.count != k2.count || memcmp(k1.word, k2.word, sizeof(int64_t) * (size_t)k1.count));
    CHECK(k1.count != k3.count || memcmp(k1.word, k3.word, sizeof(int64_t) * (size_t)k1.count));
    CHECK(k1.count < TESS_PLAN_KEY_WORDS);
    /* T = 0 maps one token of stand-in operands whose rows meet TMA's rules. */
    const tess_grouped_wgrad_desc none = problem(3, 0, 100, 36);
    const tess_gemm_desc v0 = tess_grouped_wgrad_as_batch(&none);
    CHECK(v0.k == 1 && v0.a.cols == 1 && v0.b.rows == 1 && v0.a.ld % 8 == 0 && v0.b.ld % 8 == 0 &&
          v0.a.ld >= 100 && v0.b.ld >= 36 && v0.batch == 3 && v0.a.order == TESS_ORDER_COL &&
          v0.b.order == TESS_ORDER_ROW && v0.a.batch_stride == 0 && v0.b.batch_stride == 0);
}

static void test_reference(void) {
    /* clamping: decreasing, past T, negative */
    const int32_t offs[6] = {100, 50, 7, 1 << 30, -5, 3};
    static const int64_t want_first[6] = {0, 100, 50, 7, 300, 0}, want_count[6] = {100, 0, 0, 293, 0, 3};
    for (int g = 0; g < 6; g++) {
        int64_t first, count;
        tess_ref_wgrad_span(offs, g, 300, &first, &count);
        CHECKF(first == want_first[g] && count == want_count[g], "group %d: [%lld, +%lld)", g, (long long)first,
               (long long)count);
    }
    /* each group's sums against the dense reference of dY_g^T X_g, with beta C */
    tess_grouped_wgrad_desc d = problem(4, 37, 5, 9);
    d.alpha = 0.5f, d.beta = -1.5f;
    d.dw.dtype = d.c.dtype = TESS_DTYPE_BF16;
    const int32_t ends[4] = {10, 10, 11, 37};
    size_t bytes;
    void *dy = test_matrix_random(&d.dy, 1, &rng, &bytes), *x = test_matrix_random(&d.x, 1, &rng, &bytes);
    void *c = test_matrix_random(&d.c, 4, &rng, &bytes);
    double *out = malloc(sizeof(double) * 4 * 5 * 9), *want = malloc(sizeof(double) * 5 * 9);
    CHECK_STATUS(tess_ref_grouped_wgrad(&d, dy, x, ends, c, out), TESS_STATUS_SUCCESS);
    double worst = 0;
    for (int g = 0; g < 4; g++) {
        int64_t first, count;
        tess_ref_wgrad_span(ends, g, d.tokens, &first, &count);
        for (int64_t i = 0; i < 5 * 9; i++)
            want[i] = d.beta * tess_load_as_f32(d.c.dtype, c, g * d.c.batch_stride + i);
        if (count > 0) {
            tess_ref_gemm r;
            memset(&r, 0, sizeof r);
            r.m = 5, r.n = 9, r.k = count, r.batch = 1, r.alpha = d.alpha, r.beta = d.beta;
            r.a = (tess_matrix_desc){d.dy.dtype, TESS_ORDER_COL, 5, count, d.dy.ld, 0};
            r.b = (tess_matrix_desc){d.x.dtype, TESS_ORDER_ROW, count, 9, d.x.ld, 0};
            r.c = d.c, r.c.batch_stride = 0, r.d = r.c;
            r.a_data = (const char *)dy + first * d.dy.ld * 2, r.b_data = (const char *)x + first * d.x.ld * 2;
            r.c_data = (const char *)c + g * d.c.batch_stride * 2;
            CHECK_STATUS(tess_ref_gemm_cpu(&r, want), TESS_STATUS_SUCCESS);
        }
        for (int64_t i = 0; i < 5 * 9; i++)
            worst = fmax(worst, fabs(out[g * 45 + i] - want[i]));
    }
    CHECKF(worst < 1e-12, "reference against the dense one per group: %g", worst);
    free(dy), free(x), free(c), free(out), free(want);
}

int main(void) {
    tess_rng_seed(&rng, check_seed());
    test_validation();
    test_plans();
    test_reference();
    return check_finish("unit_wgrad");
}
