/* The CPU reference GEMM against hand-computed products and against an
 * independent element-by-element formula written here, on random problems of
 * every dtype, layout, batch stride, alpha/beta and scale recipe. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/matrix.h"
#include "problem.h"
#include "ref/convert.h"

/* Element (i, j) of a rows x cols matrix, written from the definition of row-
 * and column-major storage rather than through the library's helpers. */
static double element(tess_matrix_desc d, const void *data, int64_t b, int64_t i, int64_t j) {
    int64_t at = b * d.batch_stride + (d.order == TESS_ORDER_ROW ? i * d.ld + j : j * d.ld + i);
    return tess_load_as_f32(d.dtype, data, at);
}

/* Factor for operand element (outer index x, inner index k), from the recipe's definition. */
static double factor(tess_scale_operand op, int64_t b, int64_t x, int64_t k) {
    if (!op.data)
        return 1.0;
    const tess_scale_desc s = op.layout;
    const float *base = op.data + b * s.batch_stride;
    switch (s.mode) {
    case TESS_SCALE_TENSOR: return base[0];
    case TESS_SCALE_OUTER_VEC: return base[x * s.stride_mn];
    case TESS_SCALE_BLOCK_1x128: return base[x * s.stride_mn + (k >> 7) * s.stride_k];
    case TESS_SCALE_BLOCK_128x128: return base[(x >> 7) * s.stride_mn + (k >> 7) * s.stride_k];
    }
    return NAN;
}

static double naive(const tess_ref_gemm *p, int64_t b, int64_t i, int64_t j) {
    double acc = 0.0;
    for (int64_t k = 0; k < p->k; k++)
        acc += element(p->a, p->a_data, b, i, k) * factor(p->a_scale, b, i, k) * element(p->b, p->b_data, b, k, j) *
               factor(p->b_scale, b, j, k);
    double v = p->alpha * acc;
    if (p->beta != 0.0)
        v += p->beta * element(p->c, p->c_data, b, i, j);
    return v;
}

static void test_known_product(void) {
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8}, c[] = {1, 1, 1, 1};
    tess_ref_gemm p;
    memset(&p, 0, sizeof p);
    p.m = p.n = p.k = 2;
    p.batch = 1;
    p.alpha = 2.0;
    p.beta = 1.0;
    tess_matrix_desc row = {TESS_DTYPE_F32, TESS_ORDER_ROW, 2, 2, 2, 0};
    p.a = p.b = p.c = p.d = row;
    p.a_data = a;
    p.b_data = b;
    p.c_data = c;
    double out[4];
    CHECK_STATUS(tess_ref_gemm_cpu(&p, out), TESS_STATUS_SUCCESS);
    /* [[1,2],[3,4]] [[5,6],[7,8]] = [[19,22],[43,50]]; times 2, plus 1. */
    CHECK(out[0] == 39 && out[1] == 45 && out[2] == 87 && out[3] == 101);
    /* B column-major reads the same memory as B transposed: [[5,7],[6,8]]. */
    p.b.order = TESS_ORDER_COL;
    p.beta = 0.0;
    p.alpha = 1.0;
    CHECK_STATUS(tess_ref_gemm_cpu(&p, out), TESS_STATUS_SUCCESS);
    CHECK(out[0] == 17 && out[1] == 23 && out[2] == 39 && out[3] == 53);
    /* Per-tensor scales multiply the product. */
    const float sa = 0.5f, sb = 3.0f;
    p.a_scale.layout.mode = p.b_scale.layout.mode = TESS_SCALE_TENSOR;
    p.a_scale.data = &sa;
    p.b_scale.data = &sb;
    CHECK_STATUS(tess_ref_gemm_cpu(&p, out), TESS_STATUS_SUCCESS);
    CHECK(out[0] == 17 * 1.5 && out[3] == 53 * 1.5);
}

static void test_random_against_naive(tess_rng *r) {
    for (int trial = 0; trial < 60; trial++) {
        test_problem t;
        test_problem_random(&t, r, 300);
        const tess_ref_gemm *p = &t.p;
        size_t count = (size_t)(p->batch * p->m * p->n);
        double *out = malloc(sizeof(double) * count);
        CHECK_STATUS(tess_ref_gemm_cpu(p, out), TESS_STATUS_SUCCESS);
        double worst = 0.0;
        int64_t not_close = 0;
        for (int64_t b = 0; b < p->batch; b++)
            for (int64_t i = 0; i < p->m; i++)
                for (int64_t j = 0; j < p->n; j++) {
                    double want = naive(p, b, i, j), got = out[(b * p->m + i) * p->n + j];
                    /* Both sum float64 products of the same values; only the order of
                     * the scale multiplications differs: 1e-12 of the sum of magnitudes
                     * is far above that and far below any indexing mistake. */
                    double err = fabs(got - want);
                    if (!(err <= 1e-12 * (fabs(want) + 1.0)))
                        not_close++;
                    if (err > worst)
                        worst = err;
                }
        CHECKF(not_close == 0, "%lld elements differ (max abs diff %g) on %s", (long long)not_close, worst, t.text);
        free(out);
        test_problem_free(&t);
    }
}

/* beta = 0 must not read C: C full of NaN changes nothing, and C may be NULL. */
static void test_beta_zero_ignores_c(tess_rng *r) {
    test_problem t;
    memset(&t, 0, sizeof t);
    do {
        test_problem_free(&t);
        test_problem_random(&t, r, 64);
    } while (t.p.beta != 0.0);
    size_t count = (size_t)(t.p.batch * t.p.m * t.p.n);
    double *out = malloc(sizeof(double) * count);
    memset(t.c, 0xff, t.c_bytes); /* NaN in every dtype */
    CHECK_STATUS(tess_ref_gemm_cpu(&t.p, out), TESS_STATUS_SUCCESS);
    int finite = 1;
    for (size_t i = 0; i < count; i++)
        finite &= isfinite(out[i]) != 0;
    CHECKF(finite, "beta=0 read C on %s", t.text);
    t.p.c_data = NULL;
    CHECK_STATUS(tess_ref_gemm_cpu(&t.p, out), TESS_STATUS_SUCCESS);
    free(out);
    test_problem_free(&t);
}

/* tess_ref_store rounds into D's type and layout; tess_ref_rel_error sees the
 * rounding, touches only the M x N elements, and turns any NaN into NaN. */
static void test_store_and_error(tess_rng *r) {
    for (int trial = 0; trial < 20; trial++) {
        test_problem t;
        test_problem_random(&t, r, 96);
        size_t count = (size_t)(t.p.batch * t.p.m * t.p.n);
        double *out = malloc(sizeof(double) * count);
        unsigned char *d = malloc(t.d_bytes);
        memset(d, 0xff, t.d_bytes);
        CHECK_STATUS(tess_ref_gemm_cpu(&t.p, out), TESS_STATUS_SUCCESS);
        CHECK_STATUS(tess_ref_store(&t.p, out, d), TESS_STATUS_SUCCESS);
        /* Each stored element is the reference rounded once to D's type (via
         * float32): within half a unit in the last place, or saturated. */
        dtype_rounding fmt = test_dtype_rounding(t.p.d.dtype);
        int64_t wrong = 0;
        double diff2 = 0.0, ref2 = 0.0;
        for (int64_t b = 0; b < t.p.batch; b++)
            for (int64_t i = 0; i < t.p.m; i++)
                for (int64_t j = 0; j < t.p.n; j++) {
                    double want = out[(b * t.p.m + i) * t.p.n + j];
                    double got = element(t.p.d, d, b, i, j);
                    double ok_err = fabs(want) > fmt.max ? fabs(want) - fmt.max
                                                         : (fmt.unit + 0x1p-24) * fabs(want) + fmt.tiny;
                    wrong += !(fabs(got - want) <= ok_err);
                    diff2 += (got - want) * (got - want);
                    ref2 += want * want;
                }
        CHECKF(wrong == 0, "%lld elements rounded wrongly into %s on %s", (long long)wrong,
               tess_dtype_name(t.p.d.dtype), t.text);
        int64_t bad = -1;
        double err = tess_ref_rel_error(&t.p, out, d, &bad);
        double want_err = sqrt(diff2 / ref2);
        CHECKF(bad == 0 && fabs(err - want_err) <= 1e-12 * want_err + 1e-300, "rel error %g, expected %g", err,
               want_err);
        /* Padding of D keeps its poison: exactly M x N x batch elements were written. */
        size_t esize = tess_dtype_size(t.p.d.dtype), untouched = 0;
        for (size_t i = 0; i < t.d_bytes; i += esize) {
            int all_ff = 1;
            for (size_t j = 0; j < esize; j++)
                all_ff &= d[i + j] == 0xff;
            untouched += (size_t)all_ff;
        }
        CHECKF(t.d_bytes / esize - untouched <= count, "wrote %zu elements, expected at most %zu",
               t.d_bytes / esize - untouched, count);
        /* A NaN anywhere is reported. */
        tess_store_from_f32(t.p.d.dtype, d, tess_matrix_offset(&t.p.d, t.p.batch - 1, t.p.m - 1, t.p.n - 1), NAN);
        err = tess_ref_rel_error(&t.p, out, d, &bad);
        CHECK(isnan(err) && bad == 1);
        free(out);
        free(d);
        test_problem_free(&t);
    }
}

static void test_rejections(tess_rng *r) {
    test_problem t;
    test_problem_random(&t, r, 32);
    double *out = malloc(sizeof(double) * (size_t)(t.p.batch * t.p.m * t.p.n));
    tess_ref_gemm bad = t.p;
    bad.a.cols += 1;
    bad.a.ld += 1;
    CHECK_STATUS(tess_ref_gemm_cpu(&bad, out), TESS_STATUS_INVALID_VALUE);
    CHECKF(strstr(tess_last_error(), "A is") && strstr(tess_last_error(), "M x K"), "%s", tess_last_error());
    bad = t.p;
    bad.b_data = NULL;
    CHECK_STATUS(tess_ref_gemm_cpu(&bad, out), TESS_STATUS_INVALID_VALUE);
    bad = t.p;
    bad.beta = 1.0;
    bad.c_data = NULL;
    CHECK_STATUS(tess_ref_gemm_cpu(&bad, out), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "C is NULL") != NULL);
    bad = t.p;
    bad.a_scale.layout.mode = (tess_scale_mode)2;
    CHECK_STATUS(tess_ref_gemm_cpu(&bad, out), TESS_STATUS_INVALID_VALUE);
    bad = t.p;
    bad.k = 0;
    CHECK_STATUS(tess_ref_gemm_cpu(&bad, out), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_ref_gemm_cpu(&t.p, NULL), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_ref_gemm_cpu(NULL, out), TESS_STATUS_INVALID_VALUE);
    free(out);
    test_problem_free(&t);
}

/* A gate against its definition by hand: [[1,2],[3,4]] [[5,6,1,0],[7,8,0,1]]
 * = [[19,22,1,2],[43,50,3,4]]; with a bias (1, 0, -1, 0) and no activation
 * D = [[20 * 22, 0 * 2], [44 * 50, 2 * 4]]; clamped at 21, gate 20 stays and
 * up 22 becomes 21; ReLU of the gate 0 gives 0. D is M x N/2. */
static void test_gate(void) {
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 1, 0, 7, 8, 0, 1}, bias[] = {1, 0, -1, 0};
    tess_ref_gemm p;
    memset(&p, 0, sizeof p);
    p.m = 2, p.n = 4, p.k = 2, p.batch = 1, p.alpha = 1.0;
    p.a = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_ROW, 2, 2, 2, 0};
    p.b = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_ROW, 2, 4, 4, 0};
    p.d = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_ROW, 2, 2, 2, 0};
    p.a_data = a, p.b_data = b, p.bias_data = bias;
    p.epilogue.bias = TESS_BIAS_COLUMNS, p.epilogue.bias_type = TESS_DTYPE_F32;
    p.gate = TESS_GATE_INTERLEAVED;
    double out[4];
    CHECK_STATUS(tess_ref_gemm_cpu(&p, out), TESS_STATUS_SUCCESS);
    CHECK(out[0] == 20 * 22 && out[1] == 0 && out[2] == 44 * 50 && out[3] == 8);
    p.gate_limit = 21;
    CHECK_STATUS(tess_ref_gemm_cpu(&p, out), TESS_STATUS_SUCCESS);
    CHECK(out[0] == 20 * 21 && out[2] == 21 * 21 && out[3] == 8);
    p.gate_limit = 0, p.epilogue.activation = TESS_ACT_RELU;
    CHECK_STATUS(tess_ref_gemm_cpu(&p, out), TESS_STATUS_SUCCESS);
    CHECK(out[1] == 0 && out[3] == 8);
    p.d.cols = 4; /* D must be M x N/2 */
    CHECK_STATUS(tess_ref_gemm_cpu(&p, out), TESS_STATUS_INVALID_VALUE);
}

int main(void) {
    tess_rng r;
    tess_rng_seed(&r, check_seed());
    test_known_product();
    test_gate();
    test_random_against_naive(&r);
    test_beta_zero_ignores_c(&r);
    test_store_and_error(&r);
    test_rejections(&r);
    return check_finish("unit_ref_gemm");
}
