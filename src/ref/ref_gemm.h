/* The reference GEMM, the specification every tessera kernel is tested against:
 *
 *   D[b] = alpha * (sa . A[b]) (sb . B[b]) + beta * C[b]      for b < batch
 *
 * A is M x K, B is K x N, C and D are M x N, each in any tess_dtype and either
 * order, with leading dimensions and batch strides (tess_matrix_desc). sa and
 * sb are float32 dequantization factors multiplied into A and B element-wise,
 * looked up by a tess_scale_desc recipe (tess_ref_scale_at). The CPU version
 * accumulates in float64 and returns the unrounded result; the GPU version
 * accumulates in float32 and rounds into D, for shapes too large for the CPU.
 * beta = 0 never reads C. A fused epilogue (tess_epilogue_desc) then adds
 * the bias and applies the activation, and a residual is added last, in
 * float64 (tess_ref_epilogue). An aux output (the value before the
 * activation and the residual) is the D of tess_ref_aux_problem.
 */
#ifndef TESS_REF_REF_GEMM_H
#define TESS_REF_REF_GEMM_H

#include <math.h>

#include "core/hd.h"
#include "core/matrix.h"
#include "core/scale.h"
#include "ref/convert.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One GEMM problem, pointers included (host pointers for the CPU version,
 * device pointers for the GPU version). */
typedef struct tess_ref_gemm {
    int64_t m, n, k, batch;
    double alpha, beta;
    tess_matrix_desc a, b, c, d;
    const void *a_data, *b_data, *c_data; /* c_data may be NULL when beta == 0 */
    tess_scale_operand a_scale, b_scale;
    tess_epilogue_desc epilogue; /* zero: none */
    const void *bias_data;       /* the bias vectors where epilogue.bias says so */
    tess_matrix_desc residual;   /* added after the activation where residual_data is not NULL (D's shape) */
    const void *residual_data;
    /* A gated activation (tess_gate): D (and the residual) M x N/2, D[:, j]
     * = activation(v[:, 2j]) * v[:, 2j + 1] with v after the bias, each
     * clamped first where gate_limit > 0 (tess_ref_glu). */
    int gate;
    double gate_limit;
    /* The aux output (tess_gemm_desc.aux), M x N: the D of
     * tess_ref_aux_problem. rows = cols = 0: none. */
    tess_matrix_desc aux;
} tess_ref_gemm;

/* D's columns: N, or N / 2 with a gate. */
TESS_HD int64_t tess_ref_out_cols(const tess_ref_gemm *p) { return p->gate ? p->n / 2 : p->n; }

/* The activation `act` (tess_activation) of v in float64: the specification
 * of the kernels' float32 tess_activate. */
TESS_HD double tess_ref_activate(int act, double v) {
    switch (act) {
    case TESS_ACT_RELU: return v < 0.0 ? 0.0 : v;
    case TESS_ACT_GELU_TANH: return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    case TESS_ACT_GELU_ERF: return 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
    case TESS_ACT_SILU: return v / (1.0 + exp(-v));
    default: return v;
    }
}

/* A gated activation's value from its gate and up values (after the bias):
 * both clamped where limit > 0 (gate <= limit, |up| <= limit, as GPT-OSS),
 * then activation(gate) * up. */
TESS_HD double tess_ref_glu(int act, double limit, double gate, double up) {
    if (limit > 0.0) {
        gate = gate > limit ? limit : gate;
        up = up > limit ? limit : up < -limit ? -limit : up;
    }
    return tess_ref_activate(act, gate) * up;
}

/* D's element (m, n) of batch b from v = alpha * sum + beta * C: the bias of
 * that batch (per column: element n, per row: element m, batch stride
 * apart), then the activation. */
TESS_HD double tess_ref_epilogue_of(tess_epilogue_desc e, const void *bias, double v, int64_t b, int64_t m,
                                    int64_t n) {
    if (e.bias != TESS_BIAS_NONE && bias)
        v += tess_load_as_f32(e.bias_type, bias, b * e.bias_batch_stride + (e.bias == TESS_BIAS_COLUMNS ? n : m));
    return tess_ref_activate(e.activation, v);
}

/* The residual's element (m, n) of batch b, 0 without one. */
TESS_HD double tess_ref_residual(const tess_ref_gemm *p, int64_t b, int64_t m, int64_t n) {
    return p->residual_data ? tess_load_as_f32(p->residual.dtype, p->residual_data, tess_matrix_offset(&p->residual, b, m, n))
                            : 0.0;
}

/* tess_ref_epilogue_of with the problem's epilogue and bias, then its residual. */
TESS_HD double tess_ref_epilogue(const tess_ref_gemm *p, double v, int64_t b, int64_t m, int64_t n) {
    return tess_ref_epilogue_of(p->epilogue, p->bias_data, v, b, m, n) + tess_ref_residual(p, b, m, n);
}

/* The factor for element (mn, k) of batch `batch`. */
TESS_HD float tess_ref_scale_at(const tess_scale_operand *s, int64_t batch, int64_t mn, int64_t k) {
    return s->data ? s->data[tess_scale_offset(&s->layout, batch, mn, k / TESS_SCALE_BLOCK)] : 1.0f;
}

/* The problem whose D is p's aux output, v = alpha * sum + beta * C + bias
 * (before the activation and the residual): p with aux as D, activation
 * NONE, no residual and no gate (so M x N values), for either reference
 * (tess_ref_gemm_cpu, tess_ref_gemm_gpu) to compute and tess_ref_store to
 * round once into aux's type. Its own aux is none. */
tess_ref_gemm tess_ref_aux_problem(const tess_ref_gemm *p);

/* Validates a problem: shapes agree, descriptors are sound, pointers are
 * present, scale modes are known and their strides non-negative. */
tess_status tess_ref_gemm_check(const tess_ref_gemm *p);

/* Computes the problem on the CPU in float64 into `out`, batch x M x N
 * (N/2 with a gate), row-major and unrounded (so that errors of D can be measured against it). */
tess_status tess_ref_gemm_cpu(const tess_ref_gemm *p, double *out);

/* Rounds a tess_ref_gemm_cpu result into D's type and layout at `d_data`
 * (host memory); elements of D's storage outside the M x N matrices are untouched. */
tess_status tess_ref_store(const tess_ref_gemm *p, const double *out, void *d_data);

/* Computes the problem on the GPU (float32 accumulation) into D at `d_data`,
 * queued on `stream` (a cudaStream_t). All pointers are device pointers. */
tess_status tess_ref_gemm_gpu(const tess_ref_gemm *p, void *d_data, void *stream);

/* ||D - ref|| / ||ref|| (Frobenius, over every batch) of D at `d_data` (host
 * memory) against a tess_ref_gemm_cpu result. Returns NaN if any element of D
 * is not finite, and stores the number of such elements in *nonfinite. */
double tess_ref_rel_error(const tess_ref_gemm *p, const double *ref, const void *d_data, int64_t *nonfinite);

/* The same measure between two batches of matrices of got_desc's shape in host memory, each in
 * its own type and layout (e.g. a kernel's D against tess_ref_gemm_gpu's f32
 * result): ||got - want|| / ||want||, NaN if any element of `got` is not
 * finite (their count in *nonfinite, which may be NULL). */
double tess_ref_rel_error_matrix(int64_t batch, const tess_matrix_desc *got_desc, const void *got,
                                 const tess_matrix_desc *want_desc, const void *want, int64_t *nonfinite);

#ifdef __cplusplus
}
#endif

#endif
