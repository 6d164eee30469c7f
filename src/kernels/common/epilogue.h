/* The epilogue descriptor: what a kernel does with its finished float32
 * sums, carried from the API into every family's kernel parameters:
 * D = activation(alpha * sum + beta * C + bias) + residual, stored in D's
 * type and order, where `sum` is the accumulator after the operands'
 * dequantization factors (tess_scale_operand, applied by the family: per
 * block in the mainloop, or per row and column by tess_outer_factor). A fused epilogue
 * (bias, activation, residual, FP8 output) is a field here, its arithmetic
 * one step of tess_epilogue_value (epilogue.cuh), and a rule in the API's
 * validation; each family's store path calls that function, so it reaches
 * every kernel. */
#ifndef TESS_KERNELS_COMMON_EPILOGUE_H
#define TESS_KERNELS_COMMON_EPILOGUE_H

#include "tessera.h"

typedef struct tess_epilogue {
    float alpha, beta;
    /* C, read element by element when beta != 0 (any type and order); NULL otherwise. */
    const void *c;
    void *d;
    tess_matrix_desc c_layout, d_layout;
    /* The fused steps (tess_epilogue_desc) in the kernel's own rows and
     * columns (a transposed plan's bias mode is already swapped): `fused`
     * says whether there are any, so that a kernel decides once per tile. */
    int32_t fused;
    int32_t bias_mode, activation; /* tess_bias_mode, tess_activation */
    tess_dtype bias_type;
    int64_t bias_batch_stride;
    const void *bias;
    /* A dense GEMM's residual, added after the activation (NULL: none), in the kernel's rows and columns as D. */
    const void *residual;
    tess_matrix_desc residual_layout;
    /* A dense GEMM's aux output (tess_gemm_desc.aux; NULL: none): the value
     * before the activation and the residual, in the kernel's rows and
     * columns as D, its type and order D's. */
    void *aux;
    tess_matrix_desc aux_layout;
    /* A gated activation (tess_gate; D has half the kernel's columns, or with
     * gate_rows half its rows: a transposed plan's pairs) and its clamp (0: none). */
    int32_t gate, gate_rows;
    float gate_limit;
    /* An FP8 D (tess_gemm_desc.d_scale): TESS_EPI_FP8_NONE for other types,
     * else the form, its pointers (tess_epilogue_ptrs) and the block
     * factors' layout. */
    int32_t d_fp8;
    const float *d_scale;
    float *d_amax, *d_scale_out;
    tess_scale_desc d_scale_layout;
} tess_epilogue;

/* tess_epilogue.d_fp8: no FP8 D, one factor for D (and its amax), or a
 * factor per row and 128 columns written beside D. */
enum { TESS_EPI_FP8_NONE = 0, TESS_EPI_FP8_TENSOR = 1, TESS_EPI_FP8_BLOCK = 2 };

/* The FP8 form of a problem's D (tess_epilogue.d_fp8). */
static inline int tess_epilogue_fp8_form(const tess_gemm_desc *desc) {
    if (desc->d.dtype != TESS_DTYPE_E4M3 && desc->d.dtype != TESS_DTYPE_E5M2)
        return TESS_EPI_FP8_NONE;
    return desc->d_scale.mode == TESS_SCALE_BLOCK_1x128 ? TESS_EPI_FP8_BLOCK : TESS_EPI_FP8_TENSOR;
}

/* Whether a problem's epilogue does more than alpha * sum: C (beta != 0),
 * a bias, an activation, a residual or a gate. */
static inline int tess_epilogue_has_steps(const tess_gemm_desc *desc) {
    return desc->beta != 0.0f || desc->epilogue.bias != TESS_BIAS_NONE || desc->epilogue.activation != TESS_ACT_NONE ||
           desc->residual.rows != 0 || desc->residual.cols != 0 || desc->gate != TESS_GATE_NONE;
}

/* Sets e's FP8 D from a validated problem and the pointers of its
 * tess_epilogue_ptrs (the sm90 epilogue takes its own path for it). */
static inline void tess_epilogue_set_fp8(tess_epilogue *e, const tess_gemm_desc *desc, const float *d_scale,
                                         float *d_amax, float *d_scale_out) {
    e->d_fp8 = tess_epilogue_fp8_form(desc);
    e->d_scale = e->d_fp8 == TESS_EPI_FP8_TENSOR ? d_scale : NULL;
    e->d_amax = e->d_fp8 == TESS_EPI_FP8_TENSOR ? d_amax : NULL;
    e->d_scale_out = e->d_fp8 == TESS_EPI_FP8_BLOCK ? d_scale_out : NULL;
    e->d_scale_layout = desc->d_scale;
}

/* Sets e's aux output from a validated problem (its layout in the kernel's
 * rows and columns: a transposed plan passes the transposed problem) and
 * the pointer of its tess_epilogue_ptrs; none where desc has no aux. */
static inline void tess_epilogue_set_aux(tess_epilogue *e, const tess_gemm_desc *desc, void *aux) {
    const int has = desc->aux.rows > 0 && desc->aux.cols > 0;
    e->aux = has ? aux : NULL;
    e->aux_layout = desc->aux;
    e->fused = e->fused || e->aux != NULL;
}

/* The epilogue of a validated problem `desc` with C at c, D at d, the
 * fused epilogue's bias at bias and the residual at residual. */
static inline tess_epilogue tess_epilogue_of(const tess_gemm_desc *desc, const void *c, void *d, const void *bias,
                                             const void *residual) {
    tess_epilogue e;
    e.alpha = desc->alpha, e.beta = desc->beta;
    e.c = desc->beta != 0.0f ? c : NULL;
    e.d = d;
    e.c_layout = desc->c, e.d_layout = desc->d;
    e.bias_mode = desc->epilogue.bias, e.activation = desc->epilogue.activation;
    e.bias_type = desc->epilogue.bias_type;
    e.bias_batch_stride = desc->epilogue.bias_batch_stride;
    e.bias = e.bias_mode != TESS_BIAS_NONE ? bias : NULL;
    e.residual_layout = desc->residual;
    e.residual = desc->residual.rows > 0 ? residual : NULL;
    e.gate = desc->gate, e.gate_limit = desc->gate_limit;
    e.gate_rows = 0; /* the family sets it for a kernel that runs the problem transposed */
    e.fused = e.bias != NULL || e.activation != TESS_ACT_NONE || e.residual != NULL || e.gate != TESS_GATE_NONE;
    tess_epilogue_set_fp8(&e, desc, NULL, NULL, NULL);
    tess_epilogue_set_aux(&e, desc, NULL);
    return e;
}

#endif
