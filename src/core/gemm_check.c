/* Validation of dense GEMM problems: every rule of tess_gemm_scaled, each
 * refusal a sentence that names the rule broken and what would satisfy it.
 * Shared with the grouped GEMM's checks (core/grouped.c). */
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/abi.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/fp8_staging.h"
#include "core/family.h"
#include "core/gemm.h"
#include "core/matrix.h"
#include "core/names.h"
#include "core/scale.h"

/* The deepest int8 GEMM: K products of magnitude at most 128 x 128 = 16384
 * (-128 x -128, the largest int8 product) sum within the tensor cores'
 * int32 accumulators for K up to 2147483647 / 16384 = 131071. */
#define TESS_INT8_MAX_K 131071

/* TMA's rules for a matrix it loads or stores: 16-byte aligned base, and row
 * and batch strides multiples of 16 bytes. */
#define TESS_TMA_ALIGN 16

/* The memory behind tess_stand_ins: aligned for every check, never read or written. */
static _Alignas(TESS_TMA_ALIGN) char stand_in[TESS_TMA_ALIGN];
const tess_operands tess_stand_ins = {
    stand_in, (const float *)stand_in, stand_in, (const float *)stand_in, stand_in, stand_in, (const int32_t *)stand_in,
    stand_in, stand_in, (const float *)stand_in, (float *)stand_in, (float *)stand_in, stand_in,
};

/* Each scale mode as the sentences name it. */
static const tess_named scale_mode_names[] = {
    {TESS_SCALE_TENSOR, "TENSOR"},
    {TESS_SCALE_OUTER_VEC, "OUTER_VEC"},
    {TESS_SCALE_BLOCK_1x128, "BLOCK_1x128"},
    {TESS_SCALE_BLOCK_128x128, "BLOCK_128x128"},
};

/* One operand's scale layout: a known mode and non-negative strides. */
static tess_status check_scale_desc(const tess_scale_desc *s, const char *name) {
    if (s->mode != TESS_SCALE_TENSOR && s->mode != TESS_SCALE_OUTER_VEC && !tess_scale_is_block(s->mode))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: %s_scale.mode=%d is not a tess_scale_mode (TENSOR 0, OUTER_VEC 3, BLOCK_1x128 4, "
                         "BLOCK_128x128 5)",
                         name, (int)s->mode);
    if (s->stride_mn < 0 || s->stride_k < 0 || s->batch_stride < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: %s_scale strides must be >= 0", name);
    return TESS_STATUS_SUCCESS;
}

/* The scale recipes of a problem: each mode sound, block modes only for FP8
 * and only in pairs, factors present where blocks need them, 4-byte aligned. */
tess_status tess_gemm_check_scales(const tess_gemm_desc *desc, const float *sa, const float *sb) {
    tess_status s;
    if ((s = check_scale_desc(&desc->a_scale, "a")) || (s = check_scale_desc(&desc->b_scale, "b")))
        return s;
    const int ba = tess_scale_is_block(desc->a_scale.mode), bb = tess_scale_is_block(desc->b_scale.mode);
    if (ba != bb)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A's scales are %s but B's are %s; block scales (1x128, 128x128) pair only with "
                         "block scales (e.g. A 1x128 with B 128x128, the DeepSeek-V3 recipe)",
                         TESS_NAME_OF(scale_mode_names, desc->a_scale.mode, "invalid"),
                         TESS_NAME_OF(scale_mode_names, desc->b_scale.mode, "invalid"));
    if (ba && !tess_dtype_is_fp8(desc->a.dtype))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: block scales need FP8 operands; %s operands take TENSOR or OUTER_VEC factors",
                         tess_dtype_name(desc->a.dtype));
    if (ba && (!sa || !sb))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: block scales need both factor arrays (a_scale and "
                                                    "b_scale must not be NULL)");
    if ((uintptr_t)sa % sizeof(float) || (uintptr_t)sb % sizeof(float))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: scale arrays must be 4-byte aligned float32");
    return TESS_STATUS_SUCCESS;
}

int tess_scale_factors_overlap(const tess_scale_desc *x, int64_t mn, int64_t blocks) {
    const double smn = (double)x->stride_mn, sk = (double)x->stride_k;
    return (mn > 1 && smn == 0) || (blocks > 1 && sk == 0) ||
           (mn > 1 && blocks > 1 && smn < (double)blocks * sk && sk < (double)mn * smn);
}

tess_status tess_gemm_check_d_scale(const tess_gemm_desc *desc, const char *caller, const char *field) {
    const tess_scale_desc *x = &desc->d_scale;
    const int zero = x->mode == TESS_SCALE_TENSOR && x->stride_mn == 0 && x->stride_k == 0 && x->batch_stride == 0;
    if (!tess_dtype_is_fp8(desc->d.dtype)) {
        if (!zero)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "%s: %s is set but the output is %s; %s describes an FP8 output only (leave it zero)",
                             caller, field, tess_dtype_name(desc->d.dtype), field);
        return TESS_STATUS_SUCCESS;
    }
    if (x->mode != TESS_SCALE_TENSOR && x->mode != TESS_SCALE_BLOCK_1x128)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: %s.mode is %s; an FP8 output is scaled per tensor (TENSOR 0) or per row and 128 "
                         "columns (BLOCK_1x128 4)",
                         caller, field, TESS_NAME_OF(scale_mode_names, x->mode, "not a tess_scale_mode"));
    if (x->stride_mn < 0 || x->stride_k < 0 || x->batch_stride < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s strides must be >= 0", caller, field);
    if (desc->gate != TESS_GATE_NONE)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: an FP8 output with a gate (tess_gate) is not supported; write it in bf16 and quantize "
                         "it with tess_quantize_fp8",
                         caller);
    if (tess_scale_is_block(desc->a_scale.mode) && desc->b_scale.mode == TESS_SCALE_BLOCK_1x128)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: an FP8 output with 1x128 factors for the weights (B) is not supported; use 128x128 "
                         "weight factors (DeepSeek-V3's recipe) or a bf16 output",
                         caller);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_gemm_check_fp8_out(const tess_gemm_desc *desc, const float *d_scale, const float *d_amax,
                                    const float *d_scale_out, const char *caller) {
    if (!tess_dtype_is_fp8(desc->d.dtype)) {
        if (d_scale || d_amax || d_scale_out)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "%s: ep's d_scale, d_amax or d_scale_out is set but D is %s; they belong to an FP8 D",
                             caller, tess_dtype_name(desc->d.dtype));
        return TESS_STATUS_SUCCESS;
    }
    if ((uintptr_t)d_scale % sizeof(float) || (uintptr_t)d_amax % sizeof(float) ||
        (uintptr_t)d_scale_out % sizeof(float))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: d_scale, d_amax and d_scale_out must be 4-byte aligned float32", caller);
    if (desc->d_scale.mode == TESS_SCALE_TENSOR) {
        if (d_scale_out)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "%s: d_scale_out is set but d_scale.mode is TENSOR; block factors are written only with "
                             "BLOCK_1x128",
                             caller);
        return TESS_STATUS_SUCCESS;
    }
    if (!d_scale_out)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: d_scale.mode is BLOCK_1x128 but d_scale_out is NULL (pass the factor array in "
                         "tess_epilogue_ptrs to the _fused call)",
                         caller);
    if (d_scale || d_amax)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: d_scale and d_amax belong to a TENSOR-scaled FP8 D; BLOCK_1x128 writes d_scale_out only",
                         caller);
    const int64_t blocks = (desc->n + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK, m = desc->m;
    const tess_scale_desc *x = &desc->d_scale;
    /* The factors written must not overlap (tess_scale_factors_overlap);
     * batches past one batch's last factor. */
    const double smn = (double)x->stride_mn, sk = (double)x->stride_k;
    if (tess_scale_factors_overlap(x, m, blocks))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: d_scale strides (stride_mn %" PRId64 ", stride_k %" PRId64
                         ") make D's %" PRId64 " x %" PRId64 " block factors overlap; tess_scale_layout_query("
                         "BLOCK_1x128, M, N) gives stride_mn 1, stride_k M",
                         caller, x->stride_mn, x->stride_k, desc->m, blocks);
    const double span = (double)(m - 1) * smn + (double)(blocks - 1) * sk + 1;
    if (desc->batch > 1 && (double)x->batch_stride < span)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: d_scale.batch_stride=%" PRId64 " makes the %" PRId64 " batches' block factors overlap; "
                         "it must be at least %.0f (one batch's span)",
                         caller, x->batch_stride, desc->batch, span);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_check_batches_apart(const tess_matrix_desc *x, int64_t batches, const char *caller, const char *name,
                                     const char *what) {
    const int64_t span = tess_matrix_span(x, 1);
    if (batches > 1 && x->batch_stride < span)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s%s%s: batch_stride=%" PRId64 " makes the %" PRId64 " %s overlap; it must be at least %" PRId64
                         " (one matrix's span)",
                         caller ? caller : "", caller ? ": " : "", name, x->batch_stride, batches, what, span);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_gemm_check_matrices(const tess_operand_shape *x, int n) {
    tess_status s;
    for (int i = 0; i < n; i++)
        if ((s = tess_matrix_check(x[i].desc, x[i].batch, x[i].name)))
            return s;
    for (int i = 0; i < n; i++)
        if ((s = tess_matrix_check_shape(x[i].desc, x[i].rows, x[i].cols, x[i].name, x[i].shape)))
            return s;
    return TESS_STATUS_SUCCESS;
}

/* TMA alignment of one operand: base address, leading dimension, batch stride. */
tess_status tess_gemm_check_tma(const tess_matrix_desc *x, const void *ptr, int64_t batch, const char *name) {
    size_t es = tess_dtype_size(x->dtype);
    int64_t per = TESS_TMA_ALIGN / (int64_t)es; /* elements per 16 bytes */
    if ((uintptr_t)ptr % TESS_TMA_ALIGN != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s=%p is not 16-byte aligned (TMA needs 16-byte aligned matrices)",
                         name, ptr);
    if (x->ld % per != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: ld=%" PRId64 " is not a multiple of %" PRId64 " elements (16 bytes of %s, TMA's row "
                         "stride rule); pad the leading dimension to %" PRId64,
                         name, x->ld, per, tess_dtype_name(x->dtype), (x->ld + per - 1) / per * per);
    if (batch > 1 && x->batch_stride % per != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: batch_stride=%" PRId64 " is not a multiple of %" PRId64 " elements (16 bytes)", name,
                         x->batch_stride, per);
    /* TMA strides must stay below 2^40 bytes. */
    if ((x->ld * (int64_t)es) >> 40 || (x->batch_stride * (int64_t)es) >> 40)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: a stride of 2^40 bytes or more is beyond TMA", name);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_gemm_accept(const tess_gemm_desc *desc, tess_gemm_desc *full) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: desc is NULL");
    return tess_struct_in(full, sizeof *full, desc, TESS_GEMM_DESC_SIZE_V1, "tess_gemm: desc", "tess_gemm_desc_init");
}

tess_status tess_gemm_validate(const tess_device_info *info, const tess_gemm_desc *user, const void *a,
                               const float *sa, const void *b, const float *sb, const void *c, const void *d) {
    tess_gemm_desc full;
    tess_status s = tess_gemm_accept(user, &full);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    const tess_gemm_desc *desc = &full;
    const int64_t m = desc->m, n = desc->n, k = desc->k, batch = desc->batch;
    if (m < 1 || n < 1 || k < 1 || batch < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " batch=%" PRId64 ": all must be >= 1",
                         m, n, k, batch);
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || batch > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: M, N, K and batch must each be below 2^31");
    if (!a || !b || !d)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: A, B and D must not be NULL");
    if ((s = tess_gemm_check_gate(desc->gate, desc->gate_limit, n, desc->beta, "tess_gemm")))
        return s;
    const tess_operand_shape abd[] = {{&desc->a, batch, m, k, "A", "M x K"},
                                      {&desc->b, batch, k, n, "B", "K x N"},
                                      {&desc->d, batch, m, tess_gemm_out_cols(desc->gate, n), "D",
                                       tess_gemm_out_shape(desc->gate)}};
    if ((s = tess_gemm_check_matrices(abd, 3)))
        return s;
    /* Every batch needs its own D: batches of D may not overlap. */
    if ((s = tess_check_batches_apart(&desc->d, batch, NULL, "D", "output matrices")))
        return s;
    const int reads_c = desc->beta != 0.0f;
    if (reads_c) {
        if (!c)
            return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: beta=%g reads C, but C is NULL", desc->beta);
        const tess_operand_shape c_shape = {&desc->c, batch, m, n, "C", "M x N"};
        if ((s = tess_gemm_check_matrices(&c_shape, 1)))
            return s;
        if (desc->c.dtype != TESS_DTYPE_F32 && !tess_dtype_is_16bit(desc->c.dtype))
            return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_gemm: C of type %s; C must be f32, f16 or bf16",
                             tess_dtype_name(desc->c.dtype));
    }
    tess_dtype ta = desc->a.dtype, tb = desc->b.dtype, td = desc->d.dtype;
    if (tess_dtype_is_fp8(ta) != tess_dtype_is_fp8(tb))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s but B is %s; FP8 operands multiply only FP8 operands (quantize the other "
                         "with tess_quantize_fp8)",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if ((ta == TESS_DTYPE_F32) != (tb == TESS_DTYPE_F32))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s but B is %s; f32 operands multiply only f32 operands (as TF32)",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if (ta == TESS_DTYPE_F32 && !desc->allow_tf32)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A and B are f32; tessera multiplies them as TF32 (10 mantissa bits) only when "
                         "desc.allow_tf32 = 1 (Python: allow_tf32=True); otherwise convert them to bf16 or f16");
    if ((ta == TESS_DTYPE_S8) != (tb == TESS_DTYPE_S8))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s but B is %s; int8 operands multiply only int8 operands",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if (ta == TESS_DTYPE_S8 && k > TESS_INT8_MAX_K)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: K=%" PRId64 " is beyond int8's %d: the tensor cores sum int8 products in int32, "
                         "and K products of -128 x -128 overflow it past that; split K into GEMMs accumulating with beta",
                         k, TESS_INT8_MAX_K);
    if (!tess_dtype_is_fp8(ta) && ta != TESS_DTYPE_F32 && ta != TESS_DTYPE_S8 &&
        (!tess_dtype_is_16bit(ta) || !tess_dtype_is_16bit(tb)))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s and B is %s; tessera multiplies bf16, f16, FP8 (e4m3, e5m2), int8 or, "
                         "with allow_tf32, f32 operands",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if (tess_dtype_is_16bit(ta) && ta != tb)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s but B is %s; the tensor cores need both operands of one 16-bit type",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if (td != TESS_DTYPE_F32 && !tess_dtype_is_16bit(td) && !tess_dtype_is_fp8(td))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: D of type %s; D must be bf16, f16, f32 or FP8 (e4m3, e5m2: "
                         "tess_gemm_desc.d_scale)",
                         tess_dtype_name(td));
    if ((s = tess_gemm_check_d_scale(desc, "tess_gemm", "d_scale")))
        return s;
    /* An operand staged K-major is read by the copy kernel (any alignment); its copy meets TMA's rules. */
    if ((!tess_fp8_stages_a(desc) && (s = tess_gemm_check_tma(&desc->a, a, batch, "A"))) ||
        (!tess_fp8_stages_b(desc) && (s = tess_gemm_check_tma(&desc->b, b, batch, "B"))) ||
        (s = tess_gemm_check_scales(desc, sa, sb)))
        return s;
    if ((uintptr_t)d % tess_dtype_size(td) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "D=%p is not aligned to its %s elements", d, tess_dtype_name(td));
    /* Tile indices are ints in the kernels: a bound in the smallest table
     * tile, 64 x 16 (clusters of 1; a transposed plan's tiles, M <= 64
     * wide, are fewer). */
    int64_t tiles = ((m + 63) / 64) * ((n + 15) / 16) * batch;
    if (tiles > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: %" PRId64 " output tiles are more than 2^31", tiles);
    if (info)
        return tess_family_check_device(info, "tess_gemm");
    return TESS_STATUS_SUCCESS;
}


tess_status tess_gemm_check_epilogue(const tess_epilogue_desc *e, const void *bias, int64_t m, int64_t n,
                                     int64_t batch, int grouped, const char *caller) {
    if (e->activation < TESS_ACT_NONE || e->activation > TESS_ACT_SILU)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: epilogue.activation=%d is not a tess_activation (NONE 0, RELU 1, GELU_TANH 2, GELU_ERF 3, "
                         "SILU 4)",
                         caller, (int)e->activation);
    if (e->bias == TESS_BIAS_NONE)
        return TESS_STATUS_SUCCESS;
    if (e->bias != TESS_BIAS_COLUMNS && e->bias != TESS_BIAS_ROWS)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: epilogue.bias=%d is not a tess_bias_mode (NONE 0, COLUMNS 1, ROWS 2)", caller,
                         (int)e->bias);
    if (grouped && e->bias != TESS_BIAS_COLUMNS)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: a grouped GEMM's bias is per column (TESS_BIAS_COLUMNS: one vector of N per group); "
                         "per-row bias would span the groups' tokens",
                         caller);
    if (e->bias_type != TESS_DTYPE_F32 && !tess_dtype_is_16bit(e->bias_type))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: epilogue.bias_type is %s; a bias is bf16, f16 or f32", caller,
                         tess_dtype_name(e->bias_type));
    if (e->bias_batch_stride < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: epilogue.bias_batch_stride=%" PRId64 " must be >= 0", caller,
                         e->bias_batch_stride);
    const int64_t length = e->bias == TESS_BIAS_COLUMNS ? n : m;
    if (batch > 1 && e->bias_batch_stride != 0 && e->bias_batch_stride < length)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: epilogue.bias_batch_stride=%" PRId64 " is shorter than one %s vector of %" PRId64
                         " (use 0 to share one vector)",
                         caller, e->bias_batch_stride, grouped ? "group's" : "batch's", length);
    if (!bias)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: epilogue.bias is %s but the bias pointer is NULL (pass it in tess_epilogue_ptrs to the "
                         "_fused call)",
                         caller, e->bias == TESS_BIAS_COLUMNS ? "COLUMNS" : "ROWS");
    if ((uintptr_t)bias % tess_dtype_size(e->bias_type) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: bias=%p is not aligned to its %s elements", caller, bias,
                         tess_dtype_name(e->bias_type));
    return TESS_STATUS_SUCCESS;
}

tess_status tess_gemm_check_gate(int gate, float limit, int64_t n, float beta, const char *caller) {
    if (gate == TESS_GATE_NONE) {
        if (limit != 0.0f)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "%s: gate_limit=%g clamps a gate's inputs, but gate is TESS_GATE_NONE (set "
                             "TESS_GATE_INTERLEAVED, or leave gate_limit 0)",
                             caller, limit);
        return TESS_STATUS_SUCCESS;
    }
    if (gate != TESS_GATE_INTERLEAVED)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: gate=%d is not a tess_gate (NONE 0, INTERLEAVED 1)", caller,
                         gate);
    if (n % 2 != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: a gated epilogue pairs the product's columns (gate, up), so N must be even; N=%" PRId64,
                         caller, n);
    if (beta != 0.0f)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: beta=%g with a gate; a gated epilogue reads no C (add C as the residual, after the "
                         "gate, or before the GEMM)",
                         caller, beta);
    if (!(limit >= 0.0f) || limit > FLT_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: gate_limit=%g must be finite and >= 0 (0: no clamp)", caller,
                         limit);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_gemm_check_residual(const tess_gemm_desc *desc, const void *residual, const char *caller) {
    const tess_matrix_desc *r = &desc->residual;
    if (r->rows == 0 && r->cols == 0)
        return TESS_STATUS_SUCCESS;
    const tess_operand_shape shape = {r, desc->batch, desc->m, tess_gemm_out_cols(desc->gate, desc->n), "residual",
                                      desc->gate != TESS_GATE_NONE ? "M x N/2, as D" : "M x N, as D"};
    tess_status s = tess_gemm_check_matrices(&shape, 1);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (r->dtype != TESS_DTYPE_F32 && !tess_dtype_is_16bit(r->dtype))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: residual of type %s; a residual is bf16, f16 or f32", caller,
                         tess_dtype_name(r->dtype));
    if (!residual)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: desc.residual is %" PRId64 " x %" PRId64 " but the residual pointer is NULL (pass it in "
                         "tess_epilogue_ptrs to tess_gemm_fused)",
                         caller, r->rows, r->cols);
    if ((uintptr_t)residual % tess_dtype_size(r->dtype) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: residual=%p is not aligned to its %s elements", caller,
                         residual, tess_dtype_name(r->dtype));
    return TESS_STATUS_SUCCESS;
}

/* The epilogue's combinations aux does not serve: a gate, an FP8 D, no activation. */
static tess_status check_aux_epilogue(const tess_gemm_desc *desc, const char *caller) {
    if (desc->gate != TESS_GATE_NONE)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: desc.aux with a gate (tess_gate) is not supported; aux holds the M x N values before "
                         "the activation, and a gated D is M x N/2 (run the product without the gate to keep them)",
                         caller);
    if (tess_dtype_is_fp8(desc->d.dtype))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: desc.aux with an FP8 D (%s) is not supported; aux takes D's type, so write D in bf16, "
                         "f16 or f32",
                         caller, tess_dtype_name(desc->d.dtype));
    if (desc->epilogue.activation == TESS_ACT_NONE)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: desc.aux with activation NONE is not supported; aux keeps the values before an "
                         "activation (set epilogue.activation, or drop aux: it would repeat D before the residual)",
                         caller);
    return TESS_STATUS_SUCCESS;
}

/* The aux pointer against the call's other matrices: aligned to its
 * elements, its storage apart from D's, C's (where read), the residual's and
 * the operands' (all read while aux is written). */
static tess_status check_aux_pointer(const tess_gemm_desc *desc, const tess_operands *o, const char *caller) {
    const tess_matrix_desc *x = &desc->aux;
    const int64_t batch = desc->batch;
    if (!o->aux)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: desc.aux is %" PRId64 " x %" PRId64 " but the aux pointer is NULL (pass it in "
                         "tess_epilogue_ptrs to tess_gemm_fused)",
                         caller, x->rows, x->cols);
    if ((uintptr_t)o->aux % tess_dtype_size(x->dtype) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: aux=%p is not aligned to its %s elements", caller, o->aux,
                         tess_dtype_name(x->dtype));
    const char *other = NULL;
    if (tess_matrix_spans_overlap(x, o->aux, &desc->d, o->d, batch))
        other = "D";
    else if (desc->beta != 0.0f && o->c && tess_matrix_spans_overlap(x, o->aux, &desc->c, o->c, batch))
        other = "C";
    else if ((desc->residual.rows || desc->residual.cols) && o->residual &&
             tess_matrix_spans_overlap(x, o->aux, &desc->residual, o->residual, batch))
        other = "the residual";
    else if (o->a && tess_matrix_spans_overlap(x, o->aux, &desc->a, o->a, batch))
        other = "A";
    else if (o->b && tess_matrix_spans_overlap(x, o->aux, &desc->b, o->b, batch))
        other = "B";
    if (other)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: aux's storage overlaps %s's (each from its first to its last element); aux is written "
                         "beside them, so give it a buffer of its own",
                         caller, other);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_gemm_check_aux(const tess_gemm_desc *desc, const tess_operands *o, const char *caller) {
    const int pointers = o != &tess_stand_ins;
    if (!tess_gemm_has_aux(desc)) {
        if (pointers && o->aux)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "%s: ep's aux is set but desc.aux describes none (rows = cols = 0); describe it (M x N, "
                             "D's dtype and order) or leave the pointer NULL",
                             caller);
        return TESS_STATUS_SUCCESS;
    }
    tess_status s = check_aux_epilogue(desc, caller);
    const tess_operand_shape shape = {&desc->aux, desc->batch, desc->m, desc->n, "aux", "M x N, as D"};
    if (s != TESS_STATUS_SUCCESS || (s = tess_gemm_check_matrices(&shape, 1)))
        return s;
    const tess_matrix_desc *x = &desc->aux, *d = &desc->d;
    if (x->dtype != d->dtype || x->order != d->order)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: aux is %s %s-major but D is %s %s-major; aux takes D's dtype and order (cuBLASLt's "
                         "rule)",
                         caller, tess_dtype_name(x->dtype), x->order == TESS_ORDER_ROW ? "row" : "column",
                         tess_dtype_name(d->dtype), d->order == TESS_ORDER_ROW ? "row" : "column");
    if ((s = tess_check_batches_apart(x, desc->batch, caller, "aux", "aux matrices")))
        return s;
    return pointers ? check_aux_pointer(desc, o, caller) : TESS_STATUS_SUCCESS;
}
