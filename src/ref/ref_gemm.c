/* The CPU reference GEMM (float64) and its validation; see ref_gemm.h. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/matrix.h"
#include "ref/convert.h"
#include "ref/ref_gemm.h"

static tess_status check_scale(const tess_scale_operand *op, const char *name) {
    const tess_scale_desc *s = &op->layout;
    switch (s->mode) {
    case TESS_SCALE_TENSOR:
    case TESS_SCALE_OUTER_VEC:
    case TESS_SCALE_BLOCK_1x128:
    case TESS_SCALE_BLOCK_128x128: break;
    default:
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s scale: mode %d is not a tess_scale_mode", name,
                         (int)s->mode);
    }
    if (s->stride_mn < 0 || s->stride_k < 0 || s->batch_stride < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s scale: strides must be >= 0", name);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_ref_gemm_check(const tess_ref_gemm *p) {
    if (!p)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "reference GEMM: the problem is NULL");
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "reference GEMM: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " batch=%" PRId64
                         ": all must be >= 1",
                         p->m, p->n, p->k, p->batch);
    tess_status s;
    if ((s = tess_matrix_check(&p->a, p->batch, "A")) || (s = tess_matrix_check(&p->b, p->batch, "B")) ||
        (s = tess_matrix_check(&p->d, p->batch, "D")) ||
        (s = tess_matrix_check_shape(&p->a, p->m, p->k, "A", "M x K")) ||
        (s = tess_matrix_check_shape(&p->b, p->k, p->n, "B", "K x N")) ||
        (s = tess_matrix_check_shape(&p->d, p->m, tess_ref_out_cols(p), "D", p->gate ? "M x N/2" : "M x N")) ||
        (s = check_scale(&p->a_scale, "A")) || (s = check_scale(&p->b_scale, "B")))
        return s;
    if (!p->a_data || !p->b_data)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "reference GEMM: A and B data must not be NULL");
    if (p->epilogue.bias != TESS_BIAS_NONE && !p->bias_data)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "reference GEMM: the epilogue adds a bias, but bias_data is NULL");
    if (p->residual_data && ((s = tess_matrix_check(&p->residual, p->batch, "residual")) ||
                             (s = tess_matrix_check_shape(&p->residual, p->m, tess_ref_out_cols(p), "residual",
                                                          "D's shape"))))
        return s;
    if ((p->aux.rows || p->aux.cols) && ((s = tess_matrix_check(&p->aux, p->batch, "aux")) ||
                                         (s = tess_matrix_check_shape(&p->aux, p->m, p->n, "aux", "M x N"))))
        return s;
    if (p->gate && (p->gate != TESS_GATE_INTERLEAVED || p->n % 2 != 0 || p->beta != 0.0))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "reference GEMM: a gate must be TESS_GATE_INTERLEAVED, over an even N, without C");
    if (p->beta != 0.0) {
        if (!p->c_data)
            return tess_fail(TESS_STATUS_INVALID_VALUE, "reference GEMM: beta=%g reads C, but C is NULL", p->beta);
        if ((s = tess_matrix_check(&p->c, p->batch, "C")) ||
            (s = tess_matrix_check_shape(&p->c, p->m, p->n, "C", "M x N")))
            return s;
    }
    return TESS_STATUS_SUCCESS;
}

tess_ref_gemm tess_ref_aux_problem(const tess_ref_gemm *p) {
    tess_ref_gemm x = *p;
    const tess_matrix_desc none = {TESS_DTYPE_F32, TESS_ORDER_COL, 0, 0, 0, 0};
    x.d = p->aux;
    x.epilogue.activation = TESS_ACT_NONE;
    x.residual = none, x.residual_data = NULL;
    x.gate = 0, x.gate_limit = 0.0;
    x.aux = none;
    return x;
}

/* Dequantizes operand X of batch b into `out`, `outer` rows of K values (K
 * contiguous): row i is row i of A, or column i of B. */
static void dequantize_k_major(const tess_matrix_desc *x, const void *data, const tess_scale_operand *scale,
                               int is_b, int64_t b, int64_t outer, int64_t k, double *out) {
    for (int64_t i = 0; i < outer; i++) {
        for (int64_t kk = 0; kk < k; kk++) {
            int64_t at = is_b ? tess_matrix_offset(x, b, kk, i) : tess_matrix_offset(x, b, i, kk);
            double v = tess_load_as_f32(x->dtype, data, at);
            out[i * k + kk] = v * tess_ref_scale_at(scale, b, i, kk);
        }
    }
}

tess_status tess_ref_gemm_cpu(const tess_ref_gemm *p, double *out) {
    tess_status s = tess_ref_gemm_check(p);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!out)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "reference GEMM: the output buffer is NULL");
    double *a = malloc(sizeof(double) * (size_t)(p->m * p->k));
    double *bt = malloc(sizeof(double) * (size_t)(p->n * p->k));
    double *row = malloc(sizeof(double) * (size_t)p->n); /* one row's values before the activation */
    if (!a || !bt || !row) {
        free(a);
        free(bt);
        free(row);
        return tess_fail(TESS_STATUS_ALLOC_FAILED, "reference GEMM: out of host memory for %" PRId64 " x %" PRId64
                         " x %" PRId64, p->m, p->n, p->k);
    }
    for (int64_t b = 0; b < p->batch; b++) {
        dequantize_k_major(&p->a, p->a_data, &p->a_scale, 0, b, p->m, p->k, a);
        dequantize_k_major(&p->b, p->b_data, &p->b_scale, 1, b, p->n, p->k, bt);
        for (int64_t i = 0; i < p->m; i++) {
            for (int64_t j = 0; j < p->n; j++) {
                const double *ar = a + i * p->k, *br = bt + j * p->k;
                double acc = 0.0;
                for (int64_t kk = 0; kk < p->k; kk++)
                    acc += ar[kk] * br[kk];
                double v = p->alpha * acc;
                if (p->beta != 0.0)
                    v += p->beta * tess_load_as_f32(p->c.dtype, p->c_data, tess_matrix_offset(&p->c, b, i, j));
                if (p->gate) { /* the bias here, the activation below on the pairs */
                    tess_epilogue_desc bias_only = p->epilogue;
                    bias_only.activation = TESS_ACT_NONE;
                    row[j] = tess_ref_epilogue_of(bias_only, p->bias_data, v, b, i, j);
                } else {
                    out[(b * p->m + i) * p->n + j] = tess_ref_epilogue(p, v, b, i, j);
                }
            }
            const int64_t cols = tess_ref_out_cols(p);
            for (int64_t j = 0; p->gate && j < cols; j++)
                out[(b * p->m + i) * cols + j] = tess_ref_glu(p->epilogue.activation, p->gate_limit, row[2 * j],
                                                              row[2 * j + 1]) +
                                                 tess_ref_residual(p, b, i, j);
        }
    }
    free(a);
    free(bt);
    free(row);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_ref_store(const tess_ref_gemm *p, const double *out, void *d_data) {
    tess_status s = tess_matrix_check(&p->d, p->batch, "D");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    const int64_t cols = tess_ref_out_cols(p);
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t i = 0; i < p->m; i++)
            for (int64_t j = 0; j < cols; j++)
                tess_store_from_f32(p->d.dtype, d_data, tess_matrix_offset(&p->d, b, i, j),
                                    (float)out[(b * p->m + i) * cols + j]);
    return TESS_STATUS_SUCCESS;
}

/* The end of both measures: NaN when any output was not finite, else ||diff|| / ||want||. */
static double rel_error_of(double diff2, double want2, int64_t bad, int64_t *nonfinite) {
    if (nonfinite)
        *nonfinite = bad;
    if (bad)
        return NAN;
    return want2 > 0.0 ? sqrt(diff2 / want2) : sqrt(diff2);
}

double tess_ref_rel_error_matrix(int64_t batch, const tess_matrix_desc *got_desc, const void *got,
                                 const tess_matrix_desc *want_desc, const void *want, int64_t *nonfinite) {
    double diff2 = 0.0, want2 = 0.0;
    int64_t bad = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < got_desc->cols; j++)
            for (int64_t i = 0; i < got_desc->rows; i++) {
                double g = tess_load_as_f32(got_desc->dtype, got, tess_matrix_offset(got_desc, b, i, j));
                double w = tess_load_as_f32(want_desc->dtype, want, tess_matrix_offset(want_desc, b, i, j));
                bad += !isfinite(g);
                diff2 += (g - w) * (g - w);
                want2 += w * w;
            }
    return rel_error_of(diff2, want2, bad, nonfinite);
}

double tess_ref_rel_error(const tess_ref_gemm *p, const double *ref, const void *d_data, int64_t *nonfinite) {
    double diff2 = 0.0, ref2 = 0.0;
    int64_t bad = 0;
    const int64_t cols = tess_ref_out_cols(p);
    for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t i = 0; i < p->m; i++) {
            for (int64_t j = 0; j < cols; j++) {
                double got = tess_load_as_f32(p->d.dtype, d_data, tess_matrix_offset(&p->d, b, i, j));
                double want = ref[(b * p->m + i) * cols + j];
                if (!isfinite(got))
                    bad++;
                diff2 += (got - want) * (got - want);
                ref2 += want * want;
            }
        }
    }
    return rel_error_of(diff2, ref2, bad, nonfinite);
}
