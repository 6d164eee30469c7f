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

// A per-column bias's length: D's columns, or the product's (twice D's) with a gate whose pairs are columns.
TESS_DEVICE int64_t tess_bias_columns(const tess_epilogue &e) {
    return (e.gate && !e.gate_rows ? 2 : 1) * e.d_layout.cols;
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
    const bool rows_doubled = e.gate && e.gate_rows; // a transposed plan's pairs are rows
    if (i >= (per_column ? tess_bias_columns(e) : (rows_doubled ? 2 : 1) * e.d_layout.rows))
        return 0.0f;
    return tess_load_as_f32(e.bias_type, e.bias, bb * e.bias_batch_stride + i);
}

// A bias vector read element by element with no branch, so that a tile's
// bias loads issue together and their latency is paid once: the type's
// tests are made once (as bit masks); each element is one predicated load
// of its width into one register (ld_nc_b32_or_u16) at a uniform offset from
// the thread's first column, converted by masks (tess_bias_value), not by
// a branch that would wait for each load in turn. Elements past the
// vector's end give 0, as does a reader of no bias (length 0).
struct tess_bias_reader {
    const char *at;     // the thread's first column's element (of this bias batch)
    int left;           // elements of the vector from there on
    int size;           // bytes an element: 4 (float32) or 2
    uint32_t f32, f16;  // all ones where the bias is float32 (f16); else bf16
};

// The per-column bias of bias batch bb from column `first` on, or none.
TESS_DEVICE tess_bias_reader tess_column_bias_reader(const tess_epilogue &e, int bb, int first) {
    const bool f32 = e.bias_type == TESS_DTYPE_F32;
    const int size = f32 ? 4 : 2;
    tess_bias_reader r = {(const char *)e.bias, 0, size, f32 ? ~0u : 0u, e.bias_type == TESS_DTYPE_F16 ? ~0u : 0u};
    if (e.bias && e.bias_mode == TESS_BIAS_COLUMNS)
        r.at += (bb * e.bias_batch_stride + first) * size, r.left = tess_bias_columns(e) - first;
    return r;
}

// The raw bits of element `first + k` of the vector r reads (k a
// compile-time constant in an unrolled loop: its offset is uniform).
TESS_DEVICE uint32_t tess_bias_load(const tess_bias_reader &r, int k) {
    return ld_nc_b32_or_u16(r.at + k * r.size, k < r.left, r.size == 4);
}

// Raw bits from tess_bias_load as float32 (0 stays 0).
TESS_DEVICE float tess_bias_value(const tess_bias_reader &r, uint32_t bits) {
    const uint32_t from_f16 = __float_as_uint(__half2float(__ushort_as_half((unsigned short)bits)));
    const uint32_t narrow = (from_f16 & r.f16) | ((bits << 16) & ~r.f16);
    return __uint_as_float((bits & r.f32) | (narrow & ~r.f32));
}

// sqrt(2 / pi) and the cubic term's weight of GELU's tanh form (Hendrycks
// and Gimpel; cuBLASLt's and PyTorch's approximate="tanh"), and 1 / sqrt(2)
// of the erf form.
#define TESS_GELU_TANH_SCALE 0.7978845608028654f
#define TESS_GELU_TANH_CUBIC 0.044715f
#define TESS_RSQRT2 0.7071067811865476f

// log2(e): exp(-z) = 2^(-z log2 e).
#define TESS_LOG2E 1.4426950408889634f

// x / (1 + exp(-z)), with the hardware's approximate exp2 and reciprocal
// (ptx.cuh) and no range fix-ups (ftz, which the activations tolerate: five
// instructions, no branch; relative error a few 1e-7 plus exp's argument
// rounding, about 1e-6 at |z| = 16: well inside a 16-bit D's rounding and
// the f32 tests' allowance); 0 where exp(-z) overflows (x finite).
TESS_DEVICE float tess_times_sigmoid(float x, float z) {
    return x * rcp_approx_ftz(1.0f + ex2_approx_ftz(z * -TESS_LOG2E));
}

// An activation as coefficients, so that a loop applies any of them with
// the same instructions (selects, no branch per element): out = v * gate,
// gate = sigmoid(k1 v + k3 v^3) where `sigmoid` (SiLU: k1 = 1; GELU's tanh
// form, v sigmoid(2u) = 0.5 v (1 + tanh u): k1 = 2 sqrt(2/pi), k3 = k1 *
// 0.044715), else 1; then ReLU's clamp at 0. GELU's erf form has no such
// shape: `erf` says to take it instead.
struct tess_act_form {
    float k1, k3;
    bool sigmoid, relu, erf;
};

TESS_DEVICE tess_act_form tess_act_form_of(int act) {
    tess_act_form f = {0.0f, 0.0f, false, act == TESS_ACT_RELU, act == TESS_ACT_GELU_ERF};
    if (act == TESS_ACT_SILU)
        f.k1 = 1.0f, f.sigmoid = true;
    if (act == TESS_ACT_GELU_TANH)
        f.k1 = 2.0f * TESS_GELU_TANH_SCALE, f.k3 = 2.0f * TESS_GELU_TANH_SCALE * TESS_GELU_TANH_CUBIC, f.sigmoid = true;
    return f;
}

// The activation's shape, for kernels that compile one copy of an unrolled
// tile loop per shape (a template argument) so that its per-block code has
// no branches: the branches over the shapes' code made the inline bias +
// activation epilogue wait on instruction fetch (Nsight's no_instruction
// stall, dev/NOTES.md "Fused epilogues"). tess_act_form still gives the
// sigmoid shape's constants. TESS_SHAPE_ANY: decided at run time, for
// loops whose registers cannot take the branch-free copies' scheduling.
enum tess_act_shape { TESS_SHAPE_NONE, TESS_SHAPE_SIGMOID, TESS_SHAPE_ERF, TESS_SHAPE_RELU, TESS_SHAPE_ANY };

TESS_DEVICE tess_act_shape tess_act_shape_of(const tess_act_form &f) {
    return f.sigmoid ? TESS_SHAPE_SIGMOID : f.erf ? TESS_SHAPE_ERF : f.relu ? TESS_SHAPE_RELU : TESS_SHAPE_NONE;
}

// Abramowitz and Stegun 7.1.26: erfc(a) ~ t (A1 + t (A2 + t (A3 + t (A4 + t
// A5)))) exp(-a^2), t = 1 / (1 + P a), for a >= 0, absolute error at most
// 1.5e-7 (Handbook of Mathematical Functions, 1964, p. 299).
#define TESS_ERFC_P 0.3275911f
#define TESS_ERFC_A1 0.254829592f
#define TESS_ERFC_A2 -0.284496736f
#define TESS_ERFC_A3 1.421413741f
#define TESS_ERFC_A4 -1.453152027f
#define TESS_ERFC_A5 1.061405429f

// GELU's erf form, 0.5 v (1 + erf(v / sqrt 2)), with no branch: for u = v /
// sqrt 2, 1 + erf(u) is erfc(|u|) where u < 0 (no cancellation) and 2 -
// erfc(u) elsewhere, erfc by A&S 7.1.26 (~14 instructions, two of them
// MUFU, against libdevice erff's branches); NaN stays NaN.
TESS_DEVICE float tess_gelu_erf(float v) {
    const float u = v * TESS_RSQRT2, a = fabsf(u);
    const float t = rcp_approx_ftz(fmaf(TESS_ERFC_P, a, 1.0f));
    const float poly =
        t * fmaf(t, fmaf(t, fmaf(t, fmaf(t, TESS_ERFC_A5, TESS_ERFC_A4), TESS_ERFC_A3), TESS_ERFC_A2), TESS_ERFC_A1);
    const float erfc_a = poly * ex2_approx_ftz(-a * a * TESS_LOG2E);
    return 0.5f * v * (u < 0.0f ? erfc_a : 2.0f - erfc_a);
}

// The activation of v described by f, other than GELU's erf form (the
// caller branches on f.erf, once for many elements). NaN stays NaN (v < 0
// is false for it).
TESS_DEVICE float tess_activate_form(const tess_act_form &f, float v) {
    const float z = v * (f.k1 + f.k3 * v * v);
    const float out = f.sigmoid ? tess_times_sigmoid(v, z) : v;
    return f.relu && out < 0.0f ? 0.0f : out;
}

// The activation `act` (tess_activation) of v in float32: short forms, as
// every element of a tile inlines them (tess_act_form).
TESS_DEVICE float tess_activate(int act, float v) {
    const tess_act_form f = tess_act_form_of(act);
    return f.erf ? tess_gelu_erf(v) : tess_activate_form(f, v);
}

// The residual's element (m, n) of batch b as a float; 0 without one and
// outside it (tiles compute elements past D's edges, which are never stored).
TESS_DEVICE float tess_epilogue_residual(const tess_epilogue &e, int b, int m, int n) {
    if (!e.residual || m >= e.residual_layout.rows || n >= e.residual_layout.cols)
        return 0.0f;
    return tess_load_as_f32(e.residual_layout.dtype, e.residual, tess_matrix_offset(&e.residual_layout, b, m, n));
}

// The same, called: for kernels that store a tile from registers, where the
// residual's addressing inlined into each unrolled element would cost
// registers that the grouped token tiles do not have (ptxas spills them).
static __device__ __noinline__ float tess_epilogue_residual_call(const tess_epilogue &e, int b, int m, int n) {
    return tess_epilogue_residual(e, b, m, n);
}

// Stores aux's element (m, n) of batch b (the value before the activation)
// in aux's type and order; nothing without aux or outside it (tiles
// compute elements past D's edges, which are never stored).
TESS_DEVICE void tess_epilogue_put_aux(const tess_epilogue &e, int b, int m, int n, float v) {
    if (e.aux && m < e.aux_layout.rows && n < e.aux_layout.cols)
        tess_store_from_f32(e.aux_layout.dtype, e.aux, tess_matrix_offset(&e.aux_layout, b, m, n), v);
}

// The fused steps after alpha * sum + beta * C (v) of element (m, n) of
// batch b: the bias of bias batch bb, the sum so far into aux (where asked
// for; AUX false: a kernel whose API refuses aux, which then costs it no
// registers), then the activation. The residual is added by the caller
// (dense kernels only: the grouped ones have none).
template <bool AUX = true>
TESS_DEVICE float tess_epilogue_fused(const tess_epilogue &e, float v, int b, int bb, int m, int n) {
    const float pre = v + tess_epilogue_bias(e, bb, m, n);
    if (AUX)
        tess_epilogue_put_aux(e, b, m, n, pre);
    return tess_activate(e.activation, pre);
}

// D's value at (m, n) of batch b with every step of the epilogue but the
// residual: alpha * sum + beta * C (read when beta != 0), then the fused
// steps with the bias of bias batch bb (and aux, as tess_epilogue_fused).
// For the fused paths, where each element's arithmetic runs in a loop (or a
// call) rather than unrolled over a tile.
template <bool AUX = true>
TESS_DEVICE float tess_epilogue_final(const tess_epilogue &e, float sum, int b, int bb, int m, int n) {
    float v = e.alpha * sum;
    if (e.beta != 0.0f)
        v += e.beta * tess_epilogue_c(e, b, m, n);
    return tess_epilogue_fused<AUX>(e, v, b, bb, m, n);
}

// The same, called: for kernels that store a few elements a thread from
// registers, where inlining every activation into each unrolled element
// multiplies compile time and code size.
static __device__ __noinline__ float tess_epilogue_final_call(const tess_epilogue &e, float sum, int b, int bb, int m,
                                                              int n) {
    return tess_epilogue_final(e, sum, b, bb, m, n);
}

// A gated activation's output from its gate and up values (after alpha and
// the bias): both clamped where limit > 0 (tess_gate_clamp: gate <= limit,
// |up| <= limit; NaN stays NaN), then activation(gate) * up (tess_gate):
// tess_glu_of with the activation's form decided by the caller, once per
// loop; tess_epilogue_glu from the epilogue's activation, per call.
TESS_DEVICE void tess_gate_clamp(float limit, float &gate, float &up) {
    if (limit > 0.0f) {
        gate = gate > limit ? limit : gate;
        up = up > limit ? limit : up < -limit ? -limit : up;
    }
}
TESS_DEVICE float tess_glu_of(const tess_act_form &act, float limit, float gate, float up) {
    tess_gate_clamp(limit, gate, up);
    return (act.erf ? tess_gelu_erf(gate) : tess_activate_form(act, gate)) * up;
}
TESS_DEVICE float tess_epilogue_glu(const tess_epilogue &e, float gate, float up) {
    tess_gate_clamp(e.gate_limit, gate, up);
    return tess_activate(e.activation, gate) * up;
}

// A gated output from the sums of its gate at (m, n) of the kernel's tile
// and its up beside it (column n + 1, or row m + 1 with gate_rows): alpha
// times each, their biases (bias batch bb), then tess_epilogue_glu; called,
// for the register paths' few elements a thread.
static __device__ __noinline__ float tess_epilogue_gated_call(const tess_epilogue &e, float gate_sum, float up_sum,
                                                              int bb, int m, int n) {
    const int rows = e.gate_rows != 0;
    return tess_epilogue_glu(e, e.alpha * gate_sum + tess_epilogue_bias(e, bb, m, n),
                             e.alpha * up_sum + tess_epilogue_bias(e, bb, m + rows, n + 1 - rows));
}

// The factor of row (of A) or column (of B) `mn` of batch b for an operand
// whose factors do not vary along K; 1 where there are none or they are
// block factors (applied per K block instead).
TESS_DEVICE float tess_outer_factor(const tess_scale_operand &s, int b, int mn) {
    if (!s.data || tess_scale_is_block(s.layout.mode))
        return 1.0f;
    return __ldg(s.data + tess_scale_offset(&s.layout, b, mn, 0));
}
