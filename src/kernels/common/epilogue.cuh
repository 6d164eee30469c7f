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

// The fused epilogue's bias at (m, n) of bias batch bb (a dense batch, or a
// grouped GEMM's group): the vector's element n (per column) or m (per
// row); 0 without a bias and past the vector's end (tiles compute elements
// past D's edges, which are never stored).
TESS_DEVICE float tess_epilogue_bias(const tess_epilogue &e, int bb, int m, int n) {
    if (!e.bias)
        return 0.0f;
    const bool per_column = e.bias_mode == TESS_BIAS_COLUMNS;
    const int i = per_column ? n : m;
    if (i >= (per_column ? e.d_layout.cols : e.d_layout.rows))
        return 0.0f;
    return tess_load_as_f32(e.bias_type, e.bias, bb * e.bias_batch_stride + i);
}

// sqrt(2 / pi) and the cubic term's weight of GELU's tanh form (Hendrycks
// and Gimpel; cuBLASLt's and PyTorch's approximate="tanh"), and 1 / sqrt(2)
// of the erf form.
#define TESS_GELU_TANH_SCALE 0.7978845608028654f
#define TESS_GELU_TANH_CUBIC 0.044715f
#define TESS_RSQRT2 0.7071067811865476f

// x / (1 + exp(-z)), with the hardware's exp2 and approximate division (a
// few instructions, relative error a few 1e-7 plus exp's argument rounding,
// about 1e-6 at |z| = 16: well inside a 16-bit D's rounding and the f32
// tests' allowance); 0 where exp(-z) passes 2^126.
TESS_DEVICE float tess_times_sigmoid(float x, float z) { return __fdividef(x, 1.0f + __expf(-z)); }

// The activation `act` (tess_activation) of v in float32. Short forms, as
// every element of a tile inlines them: GELU's tanh form as v sigmoid(2u)
// (the same function: 0.5 (1 + tanh u) = sigmoid(2u)), SiLU as v sigmoid(v);
// GELU's erf form with libdevice's erff. NaN stays NaN (v < 0 is false for it).
TESS_DEVICE float tess_activate(int act, float v) {
    switch (act) {
    case TESS_ACT_RELU:
        return v < 0.0f ? 0.0f : v;
    case TESS_ACT_GELU_TANH:
        return tess_times_sigmoid(v, 2.0f * TESS_GELU_TANH_SCALE * (v + TESS_GELU_TANH_CUBIC * v * v * v));
    case TESS_ACT_GELU_ERF:
        return 0.5f * v * (1.0f + erff(v * TESS_RSQRT2));
    case TESS_ACT_SILU:
        return tess_times_sigmoid(v, v);
    default:
        return v;
    }
}

// The fused steps after alpha * sum + beta * C (v): the bias of bias batch
// bb, then the activation.
TESS_DEVICE float tess_epilogue_fused(const tess_epilogue &e, float v, int bb, int m, int n) {
    return tess_activate(e.activation, v + tess_epilogue_bias(e, bb, m, n));
}

// D's value at (m, n) of batch b with every step of the epilogue: alpha *
// sum + beta * C (read when beta != 0), then the fused steps with the bias
// of bias batch bb. For the fused paths, where each element's arithmetic
// runs in a loop (or a call) rather than unrolled over a tile.
TESS_DEVICE float tess_epilogue_final(const tess_epilogue &e, float sum, int b, int bb, int m, int n) {
    float v = e.alpha * sum;
    if (e.beta != 0.0f)
        v += e.beta * tess_epilogue_c(e, b, m, n);
    return tess_epilogue_fused(e, v, bb, m, n);
}

// The same, called: for kernels that store a few elements a thread from
// registers, where inlining every activation into each unrolled element
// multiplies compile time and code size.
static __device__ __noinline__ float tess_epilogue_final_call(const tess_epilogue &e, float sum, int b, int bb, int m,
                                                              int n) {
    return tess_epilogue_final(e, sum, b, bb, m, n);
}

// The factor of row (of A) or column (of B) `mn` of batch b for an operand
// whose factors do not vary along K; 1 where there are none or they are
// block factors (applied per K block instead).
TESS_DEVICE float tess_outer_factor(const tess_scale_operand &s, int b, int mn) {
    if (!s.data || tess_scale_is_block(s.layout.mode))
        return 1.0f;
    return __ldg(s.data + tess_scale_offset(&s.layout, b, mn, 0));
}
