// The epilogue's arithmetic on one element, shared by every family's store
// path (kernels/common/epilogue.h says what the descriptor holds).
#pragma once

#include "core/matrix.h"
#include "core/scale.h"
#include "kernels/common/epilogue.h"
#include "kernels/common/ptx.cuh"
#include "ref/convert.h"

// C's element (m, n) of batch b as a float; 0 outside C (tiles compute
// elements past the matrix's edges, which are never stored). Not inlined:
// the store loops stay compact, and this runs only where beta != 0.
static __device__ __noinline__ float tess_epilogue_load_c(const tess_epilogue &e, int b, int m, int n) {
    if (m >= e.c_layout.rows || n >= e.c_layout.cols)
        return 0.0f;
    return tess_load_as_f32(e.c_layout.dtype, e.c, tess_matrix_offset(&e.c_layout, b, m, n));
}

// D's value at (b, m, n) from its finished sum: alpha * sum, plus beta * C
// when the caller decided (once, for straight-line loops) that C is read.
template <bool WITH_C>
TESS_DEVICE float tess_epilogue_value(const tess_epilogue &e, float sum, int b, int m, int n) {
    float v = e.alpha * sum;
    if (WITH_C)
        v += e.beta * tess_epilogue_load_c(e, b, m, n);
    return v;
}

// Stores D's element (m, n) of batch b in D's type and order. Not inlined,
// as tess_epilogue_load_c: the paths that read C store this way, compactly;
// the hot paths (no C) store inline in the type they were compiled for.
static __device__ __noinline__ void tess_epilogue_store(const tess_epilogue &e, int b, int m, int n, float v) {
    tess_store_from_f32(e.d_layout.dtype, e.d, tess_matrix_offset(&e.d_layout, b, m, n), v);
}

// The factor of row (of A) or column (of B) `mn` for an operand whose
// factors do not vary along K; 1 where there are none or they are block
// factors (applied per K block instead). Rows past `extent` read the last
// one (their results are never stored). b: the batch of the factors.
TESS_DEVICE float tess_outer_factor(const tess_scale_operand &s, int b, int mn, int extent) {
    if (!s.data || tess_scale_is_block(s.layout.mode))
        return 1.0f;
    const int at = mn < extent ? mn : extent - 1;
    return __ldg(s.data + tess_scale_offset(&s.layout, b, at, 0));
}
