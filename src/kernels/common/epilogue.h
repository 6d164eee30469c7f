/* The epilogue descriptor: what a kernel does with its finished float32
 * sums, carried from the API into every family's kernel parameters.
 * Today's epilogue is D = alpha * sum + beta * C, stored in D's type and
 * order, where `sum` is the accumulator after the operands' dequantization
 * factors (tess_scale_operand, applied by the family: per block in the
 * mainloop, or per row and column by tess_outer_factor). A fused epilogue
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
} tess_epilogue;

/* The epilogue of a validated problem `desc` with C at c and D at d. */
static inline tess_epilogue tess_epilogue_of(const tess_gemm_desc *desc, const void *c, void *d) {
    tess_epilogue e;
    e.alpha = desc->alpha, e.beta = desc->beta;
    e.c = desc->beta != 0.0f ? c : NULL;
    e.d = d;
    e.c_layout = desc->c, e.d_layout = desc->d;
    return e;
}

#endif
