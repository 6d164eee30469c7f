/* The aux output (tess_gemm_desc.aux, the epilogue's value before the
 * activation and the residual), without a GPU:
 *  - validation: a valid aux passes; each broken rule is refused with its
 *    status and sentence; an older struct_size (descriptor or pointers)
 *    reads aux as absent; the grouped and W4A16 calls refuse an aux pointer;
 *  - a valid aux problem has the plans of the problem without aux (every
 *    dense kernel writes it);
 *  - the reference: tess_ref_aux_problem's D is alpha * sum + beta * C +
 *    bias (not the activation's value, no residual), against a direct
 *    float64 computation, rounded once into aux's type by tess_ref_store. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/abi.h"
#include "core/family.h"
#include "core/gemm.h"
#include "core/matrix.h"
#include "ref/convert.h"
#include "ref/random.h"
#include "ref/ref_gemm.h"

static tess_rng rng;

/* Host memory the checks point into (never read or written): each operand
 * at its own 64 KiB offset, aligned for every check. */
static _Alignas(256) char arena[8 << 16];
#define AT(i) ((void *)(arena + ((size_t)(i) << 16)))

static tess_matrix_desc mat(tess_dtype t, tess_order order, int64_t rows, int64_t cols) {
    tess_matrix_desc d = {t, order, rows, cols, order == TESS_ORDER_ROW ? cols : rows, 0};
    return d;
}

/* A valid bf16 problem of 64 x 128 x 64 with C, a bias, GELU and an aux like D. */
static tess_gemm_desc aux_problem(void) {
    tess_gemm_desc g;
    tess_gemm_desc_init(&g);
    g.m = 64, g.n = 128, g.k = 64, g.beta = 1.0f;
    g.a = mat(TESS_DTYPE_BF16, TESS_ORDER_ROW, 64, 64);
    g.b = mat(TESS_DTYPE_BF16, TESS_ORDER_COL, 64, 128);
    g.c = g.d = g.aux = mat(TESS_DTYPE_BF16, TESS_ORDER_ROW, 64, 128);
    g.epilogue.bias = TESS_BIAS_COLUMNS, g.epilogue.bias_type = TESS_DTYPE_F32;
    g.epilogue.activation = TESS_ACT_GELU_TANH;
    return g;
}

/* Pointers of a call to aux_problem, each in its own part of the arena. */
static tess_operands operands(void) {
    tess_operands o;
    memset(&o, 0, sizeof o);
    o.a = AT(0), o.b = AT(1), o.c = AT(2), o.d = AT(3), o.bias = AT(4), o.residual = AT(5), o.aux = AT(6);
    return o;
}

/* The dense checks of a run call, in tess_gemm_fused's order (core/gemm.c). */
static tess_status check_call(const tess_gemm_desc *g, const tess_operands *o) {
    tess_status s = tess_gemm_validate(NULL, g, o->a, NULL, o->b, NULL, o->c, o->d);
    if (s == TESS_STATUS_SUCCESS)
        s = tess_gemm_check_epilogue(&g->epilogue, o->bias, g->m, g->n, g->batch, 0, "tess_gemm");
    if (s == TESS_STATUS_SUCCESS)
        s = tess_gemm_check_residual(g, o->residual, "tess_gemm");
    if (s == TESS_STATUS_SUCCESS)
        s = tess_gemm_check_aux(g, o, "tess_gemm");
    return s;
}

/* Expects tess_gemm_check_aux to refuse with `want` and a sentence holding `words`. */
static void expect_aux_refusal(const tess_gemm_desc *g, const tess_operands *o, tess_status want, const char *words) {
    CHECK_STATUS(tess_gemm_check_aux(g, o, "tess_gemm"), want);
    CHECKF(strstr(tess_last_error(), words) != NULL, "sentence \"%s\" lacks \"%s\"", tess_last_error(), words);
}

/* A valid aux passes the run call's checks and the plan queries' (stand-ins). */
static void test_valid(void) {
    tess_gemm_desc g = aux_problem();
    tess_operands o = operands();
    CHECK_STATUS(check_call(&g, &o), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_gemm_check_aux(&g, &tess_stand_ins, "tess_gemm_plans"), TESS_STATUS_SUCCESS);
    g.residual = g.d; /* with a residual, and in column-major order */
    CHECK_STATUS(check_call(&g, &o), TESS_STATUS_SUCCESS);
    tess_gemm_desc x = g;
    x.d = x.c = x.residual = x.aux = mat(TESS_DTYPE_F16, TESS_ORDER_COL, 64, 128);
    x.a.dtype = x.b.dtype = TESS_DTYPE_F16;
    CHECK_STATUS(check_call(&x, &o), TESS_STATUS_SUCCESS);
    x = g, x.d = x.aux = mat(TESS_DTYPE_F32, TESS_ORDER_ROW, 64, 128); /* f32 D and aux */
    CHECK_STATUS(check_call(&x, &o), TESS_STATUS_SUCCESS);
    x = g, x.beta = 0.0f; /* C not read: aux may take its place */
    o.aux = (void *)o.c;
    CHECK_STATUS(check_call(&x, &o), TESS_STATUS_SUCCESS);
    x = aux_problem(), x.batch = 3, x.a.batch_stride = 64 * 64, x.b.batch_stride = 64 * 128;
    x.c.batch_stride = x.d.batch_stride = x.aux.batch_stride = 64 * 128;
    o = operands();
    CHECK_STATUS(check_call(&x, &o), TESS_STATUS_SUCCESS);
    g = aux_problem(), g.aux = mat(TESS_DTYPE_F32, TESS_ORDER_COL, 0, 0); /* none: no pointer either */
    o.aux = NULL;
    CHECK_STATUS(check_call(&g, &o), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_gemm_check_aux(&g, &tess_stand_ins, "tess_gemm_plans"), TESS_STATUS_SUCCESS);
}

/* Each rule of aux broken alone, refused with its status and sentence. */
static void test_refusals(void) {
    const tess_gemm_desc g = aux_problem();
    const tess_operands o0 = operands();
    tess_gemm_desc x = g;
    tess_operands o = o0;
    x.aux = mat(TESS_DTYPE_F32, TESS_ORDER_COL, 0, 0); /* a pointer without a descriptor */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "describes none");
    x = g, o.aux = NULL; /* a descriptor without a pointer */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "aux pointer is NULL");
    o = o0;
    x = g, x.gate = TESS_GATE_INTERLEAVED, x.beta = 0.0f, x.d = mat(TESS_DTYPE_BF16, TESS_ORDER_ROW, 64, 64);
    CHECK_STATUS(tess_gemm_validate(NULL, &x, o.a, NULL, o.b, NULL, o.c, o.d), TESS_STATUS_SUCCESS);
    expect_aux_refusal(&x, &o, TESS_STATUS_NOT_SUPPORTED, "with a gate");
    x = g, x.d.dtype = TESS_DTYPE_E4M3, x.aux.dtype = TESS_DTYPE_E4M3;
    expect_aux_refusal(&x, &o, TESS_STATUS_NOT_SUPPORTED, "FP8 D");
    x = g, x.epilogue.activation = TESS_ACT_NONE;
    expect_aux_refusal(&x, &o, TESS_STATUS_NOT_SUPPORTED, "activation NONE");
    x = g, x.aux.rows = 63;
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "M x N, as D");
    x = g, x.aux.cols = 0; /* one of rows and cols set: described, but not M x N */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "aux");
    x = g, x.aux.ld = 100;
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "ld=100");
    x = g, x.aux.dtype = (tess_dtype)99;
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "not a tess_dtype");
    x = g, x.aux.dtype = TESS_DTYPE_F16;
    expect_aux_refusal(&x, &o, TESS_STATUS_NOT_SUPPORTED, "D's dtype and order");
    x = g, x.aux = mat(TESS_DTYPE_BF16, TESS_ORDER_COL, 64, 128);
    expect_aux_refusal(&x, &o, TESS_STATUS_NOT_SUPPORTED, "D's dtype and order");
    x = g, x.batch = 3, x.d.batch_stride = 64 * 128, x.aux.batch_stride = 0; /* one aux for three batches */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "aux matrices overlap");
    x.aux.batch_stride = 64 * 128 - 1;
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "aux matrices overlap");
    x = g, o.aux = (char *)o0.aux + 1;
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "not aligned");
    o.aux = o0.d; /* aux over D, whole or in part */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "overlaps D");
    o.aux = (char *)o0.d + 64 * 128 * 2 - 2;
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "overlaps D");
    o.aux = (char *)o0.d + 64 * 128 * 2; /* just past D */
    CHECK_STATUS(tess_gemm_check_aux(&x, &o, "tess_gemm"), TESS_STATUS_SUCCESS);
    o.aux = (char *)o0.c + 256; /* over C, which beta != 0 reads */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "overlaps C");
    x.residual = x.d, o.aux = AT(5); /* the residual's pointer */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "overlaps the residual");
    x.residual = mat(TESS_DTYPE_F32, TESS_ORDER_COL, 0, 0); /* no residual: its pointer is not read */
    CHECK_STATUS(tess_gemm_check_aux(&x, &o, "tess_gemm"), TESS_STATUS_SUCCESS);
    o.aux = (void *)o0.a; /* over the operands, read while aux is written */
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "overlaps A");
    o.aux = (char *)o0.b + 64;
    expect_aux_refusal(&x, &o, TESS_STATUS_INVALID_VALUE, "overlaps B");
}

/* A caller built against an earlier header: its descriptor ends at
 * d_scale and its pointers at d_scale_out, so aux reads as absent whatever
 * lies past them; the grouped and W4A16 calls refuse an aux pointer. */
static void test_versions(void) {
    tess_gemm_desc old = aux_problem(), full;
    old.struct_size = (uint32_t)offsetof(tess_gemm_desc, aux);
    CHECK_STATUS(tess_gemm_accept(&old, &full), TESS_STATUS_SUCCESS);
    CHECK(full.aux.rows == 0 && full.aux.cols == 0 && full.aux.ld == 0 && full.aux.dtype == TESS_DTYPE_F32);
    CHECK(!tess_gemm_has_aux(&full));
    tess_operands o = operands();
    o.aux = NULL;
    CHECK_STATUS(check_call(&full, &o), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_gemm_validate(NULL, &old, o.a, NULL, o.b, NULL, o.c, o.d), TESS_STATUS_SUCCESS);
    tess_gemm_desc now = aux_problem();
    CHECK_STATUS(tess_gemm_accept(&now, &full), TESS_STATUS_SUCCESS);
    CHECK(tess_gemm_has_aux(&full) && full.aux.rows == 64 && full.aux.cols == 128);

    tess_epilogue_ptrs ep, read;
    memset(&ep, 0, sizeof ep);
    ep.struct_size = (uint32_t)offsetof(tess_epilogue_ptrs, aux);
    ep.bias = AT(4), ep.aux = AT(6);
    CHECK_STATUS(tess_epilogue_ptrs_in(&ep, &read, "tess_gemm"), TESS_STATUS_SUCCESS);
    CHECK(read.aux == NULL && read.bias == AT(4));
    ep.struct_size = sizeof ep;
    CHECK_STATUS(tess_epilogue_ptrs_in(&ep, &read, "tess_gemm"), TESS_STATUS_SUCCESS);
    CHECK(read.aux == AT(6));
    CHECK_STATUS(tess_epilogue_ptrs_no_aux(&read, "tess_grouped_gemm"), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "only a dense GEMM") != NULL);
    read.aux = NULL;
    CHECK_STATUS(tess_epilogue_ptrs_no_aux(&read, "tess_gemm_w4a16"), TESS_STATUS_SUCCESS);
}

/* A valid aux problem has the same plans as the problem without aux
 * (every dense kernel writes aux; only its store path differs), where this
 * build has any for it. */
static void test_plans(void) {
    tess_gemm_desc g = aux_problem();
    tess_plan with[64], without[64];
    const int n = tess_gemm_candidates(NULL, &g, SIZE_MAX, with, 64);
    g.aux = mat(TESS_DTYPE_F32, TESS_ORDER_COL, 0, 0);
    const int n0 = tess_gemm_candidates(NULL, &g, SIZE_MAX, without, 64);
    CHECK(n == n0);
    for (int i = 0; i < n && i < n0 && i < 64; i++)
        CHECK(strcmp(with[i].name, without[i].name) == 0);
}

/* One random problem of the reference: aux (tess_ref_aux_problem) against
 * v = alpha * sum + beta * C + bias computed here in float64, D against
 * GELU(v) + R, and aux rounded once into bf16 by tess_ref_store. */
static void test_reference(void) {
    const int64_t m = 1 + tess_rng_range(&rng, 0, 12), n = 1 + tess_rng_range(&rng, 0, 12);
    const int64_t k = 1 + tess_rng_range(&rng, 0, 40), batch = 2;
    tess_ref_gemm p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.batch = batch, p.alpha = 0.75, p.beta = -1.25;
    p.a = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, m, k, k + 3, m * (k + 3)};
    p.b = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_COL, k, n, k, k * n};
    p.c = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_COL, m, n, m, m * n};
    p.d = p.residual = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_ROW, m, n, n, m * n};
    p.aux = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, m, n, n + 1, m * (n + 1)};
    p.epilogue = (tess_epilogue_desc){TESS_BIAS_COLUMNS, TESS_DTYPE_F32, n, TESS_ACT_GELU_ERF};
    const int64_t na = batch * m * (k + 3), nb = batch * k * n, nmn = batch * m * n;
    uint16_t *a = malloc(sizeof *a * (size_t)na), *b = malloc(sizeof *b * (size_t)nb);
    uint16_t *aux = malloc(sizeof *aux * (size_t)(batch * m * (n + 1)));
    float *c = malloc(sizeof *c * (size_t)nmn), *r = malloc(sizeof *r * (size_t)nmn);
    float *bias = malloc(sizeof *bias * (size_t)(batch * n));
    double *d_ref = malloc(sizeof *d_ref * (size_t)nmn), *aux_ref = malloc(sizeof *aux_ref * (size_t)nmn);
    if (!a || !b || !aux || !c || !r || !bias || !d_ref || !aux_ref) {
        CHECKF(0, "out of host memory");
        goto done;
    }
    tess_fill_normal(a, TESS_DTYPE_BF16, na, 1.0, &rng);
    tess_fill_normal(b, TESS_DTYPE_BF16, nb, 1.0, &rng);
    tess_fill_normal(c, TESS_DTYPE_F32, nmn, 1.0, &rng);
    tess_fill_normal(r, TESS_DTYPE_F32, nmn, 1.0, &rng);
    tess_fill_normal(bias, TESS_DTYPE_F32, batch * n, 1.0, &rng);
    p.a_data = a, p.b_data = b, p.c_data = c, p.residual_data = r, p.bias_data = bias;
    CHECK_STATUS(tess_ref_gemm_cpu(&p, d_ref), TESS_STATUS_SUCCESS);
    const tess_ref_gemm x = tess_ref_aux_problem(&p);
    CHECK(x.residual_data == NULL && x.epilogue.activation == TESS_ACT_NONE && x.aux.rows == 0);
    CHECK(x.d.dtype == TESS_DTYPE_BF16 && x.d.ld == n + 1 && x.epilogue.bias == TESS_BIAS_COLUMNS);
    CHECK_STATUS(tess_ref_gemm_cpu(&x, aux_ref), TESS_STATUS_SUCCESS);
    memset(aux, 0xff, sizeof *aux * (size_t)(batch * m * (n + 1))); /* NaN: what the store leaves is padding */
    CHECK_STATUS(tess_ref_store(&x, aux_ref, aux), TESS_STATUS_SUCCESS);
    int64_t bad = 0, differs = 0;
    for (int64_t bt = 0; bt < batch; bt++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double sum = 0.0;
                for (int64_t kk = 0; kk < k; kk++)
                    sum += (double)tess_load_as_f32(TESS_DTYPE_BF16, a, bt * m * (k + 3) + i * (k + 3) + kk) *
                           (double)tess_load_as_f32(TESS_DTYPE_BF16, b, bt * k * n + j * k + kk);
                const double v = 0.75 * sum - 1.25 * (double)c[bt * m * n + j * m + i] + (double)bias[bt * n + j];
                const double want_d = 0.5 * v * (1.0 + erf(v / sqrt(2.0))) + (double)r[bt * m * n + i * n + j];
                const int64_t at = (bt * m + i) * n + j;
                bad += fabs(aux_ref[at] - v) > 1e-12 * (1.0 + fabs(v));
                bad += fabs(d_ref[at] - want_d) > 1e-12 * (1.0 + fabs(want_d));
                differs += fabs(aux_ref[at] - d_ref[at]) > 1e-6;
                const float stored = tess_load_as_f32(TESS_DTYPE_BF16, aux, bt * m * (n + 1) + i * (n + 1) + j);
                uint16_t once;
                tess_store_from_f32(TESS_DTYPE_BF16, &once, 0, (float)v);
                bad += stored != tess_load_as_f32(TESS_DTYPE_BF16, &once, 0);
            }
    CHECKF(bad == 0, "%" PRId64 " x %" PRId64 " x %" PRId64 ": %" PRId64 " wrong aux or D values", m, n, k, bad);
    CHECKF(differs > 0, "aux equals D everywhere: the activation and residual were not left out");
    for (int64_t bt = 0; bt < batch; bt++) /* the padding column is left as it was */
        for (int64_t i = 0; i < m; i++)
            bad += !isnan(tess_load_as_f32(TESS_DTYPE_BF16, aux, bt * m * (n + 1) + i * (n + 1) + n));
    CHECKF(bad == 0, "tess_ref_store wrote aux's padding");
    p.aux.rows = m + 1; /* the reference refuses an aux of the wrong shape */
    CHECK_STATUS(tess_ref_gemm_check(&p), TESS_STATUS_INVALID_VALUE);
done:
    free(a), free(b), free(aux), free(c), free(r), free(bias), free(d_ref), free(aux_ref);
}

int main(void) {
    tess_rng_seed(&rng, check_seed());
    test_valid();
    test_refusals();
    test_versions();
    test_plans();
    for (int t = 0; t < check_trials(20); t++)
        test_reference();
    return check_finish("unit_aux");
}
