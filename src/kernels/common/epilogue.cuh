// The epilogue's arithmetic on one element, shared by every family's store
// path (kernels/common/epilogue.h says what the descriptor holds).
#pragma once

#include "core/matrix.h"
#include "core/scale.h"
#include "kernels/common/epilogue.h"
#include "kernels/common/ptx.cuh"
#include "ref/convert.h"

// C's element (m, n) of batch b as a float; 0 outside C (tiles compute
// elements past the matrix's edges, which are never stored).
TESS_DEVICE float tess_epilogue_c(const tess_epilogue &e, int b, int m, int n) {
    if (m >= e.c_layout.rows || n >= e.c_layout.cols)
        return 0.0f;
    return tess_load_as_f32(e.c_layout.dtype, e.c, tess_matrix_offset(&e.c_layout, b, m, n));
}

// Stores D's element (m, n) of batch b in D's type and order.
TESS_DEVICE void tess_epilogue_put(const tess_epilogue &e, int b, int m, int n, float v) {
    tess_store_from_f32(e.d_layout.dtype, e.d, tess_matrix_offset(&e.d_layout, b, m, n), v);
}

// The same two, called rather than inlined: a kernel that unrolls its
// stores over a whole tile (the sm90 epilogue) keeps the paths that read C
// compact this way, one call per element, off its hot path (no C). A
// kernel that stores a few elements a thread (the decode GEMVs) inlines
// them: a call there cost registers and ran its short kernels 1-5% slower
// (dev/results/arch-ab-h100/base-smallm.csv against new-smallm.csv).
static __device__ __noinline__ float tess_epilogue_c_call(const tess_epilogue &e, int b, int m, int n) {
    return tess_epilogue_c(e, b, m, n);
}
static __device__ __noinline__ void tess_epilogue_put_call(const tess_epilogue &e, int b, int m, int n, float v) {
    tess_epilogue_put(e, b, m, n, v);
}

// D's value at (b, m, n) from its finished sum: alpha * sum, plus beta * C
// when the caller decided (once, for straight-line loops) that C is read;
// CALLS: C's element by tess_epilogue_c_call, else inline.
template <bool WITH_C, bool CALLS>
TESS_DEVICE float tess_epilogue_value(const tess_epilogue &e, float sum, int b, int m, int n) {
    float v = e.alpha * sum;
    if (WITH_C)
        v += e.beta * (CALLS ? tess_epilogue_c_call(e, b, m, n) : tess_epilogue_c(e, b, m, n));
    return v;
}

// The factor of row (of A) or column (of B) `mn` of batch b for an operand
// whose factors do not vary along K; 1 where there are none or they are
// block factors (applied per K block instead).
TESS_DEVICE float tess_outer_factor(const tess_scale_operand &s, int b, int mn) {
    if (!s.data || tess_scale_is_block(s.layout.mode))
        return 1.0f;
    return __ldg(s.data + tess_scale_offset(&s.layout, b, mn, 0));
}
