/* The 4-bit weight API (W4A16): tess_pack_int4, tess_gemm_w4a16,
 * tess_gemm_w4a16_masked and tess_dequantize_int4 (validation here; the
 * kernels in kernels/int4). */
#include <inttypes.h>
#include <stdint.h>

#include "core/abi.h"
#include "core/error.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "core/int4.h"
#include "core/matrix.h"
#include "kernels/common/epilogue.h"
#include "kernels/int4/int4_kernels.h"

TESS_API tess_status tess_w4a16_desc_init(tess_w4a16_desc *desc) {
    const tess_status s = tess_struct_init(desc, sizeof *desc, "tess_w4a16_desc_init: desc");
    if (s == TESS_STATUS_SUCCESS)
        desc->group_size = 128;
    return s;
}

tess_status tess_w4a16_accept(const tess_w4a16_desc *desc, tess_w4a16_desc *full, const char *caller) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: desc is NULL", caller);
    return tess_struct_in(full, sizeof *full, desc, TESS_W4A16_DESC_SIZE_V1, "tess_w4a16_desc", "tess_w4a16_desc_init");
}

/* The largest n and k: the kernels index rows and k in int32 with a CTA's
 * rows (up to 256) or a stage's k (1024) added past the end. */
#define TESS_INT4_MAX_EXTENT ((int64_t)1 << 30)

/* n and k of a 4-bit weight: whole 16-row blocks and 64-k quads (the packed
 * layout's units), each at most TESS_INT4_MAX_EXTENT. */
static tess_status check_weight_shape(int64_t n, int64_t k, const char *caller) {
    if (n < TESS_INT4_ROW_BLOCK || n % TESS_INT4_ROW_BLOCK || n > TESS_INT4_MAX_EXTENT)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: n=%" PRId64 " must be a positive multiple of %d up to 2^30 (the packed layout's "
                         "16-row blocks)",
                         caller, n, TESS_INT4_ROW_BLOCK);
    if (k < TESS_INT4_QUAD_K || k % TESS_INT4_QUAD_K || k > TESS_INT4_MAX_EXTENT)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: k=%" PRId64 " must be a positive multiple of %d up to 2^30 (the packed layout's "
                         "64-k quads)",
                         caller, k, TESS_INT4_QUAD_K);
    return TESS_STATUS_SUCCESS;
}

/* A device pointer that must be present and aligned to `align` bytes. */
static tess_status check_pointer(const void *p, size_t align, const char *name, const char *caller) {
    if (!p)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s is NULL", caller, name);
    if ((uintptr_t)p % align)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s=%p is not %zu-byte aligned", caller, name, p, align);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_int4_pack_check(tess_int4_format format, int64_t n, int64_t k, const int32_t *src,
                                 const void *packed) {
    const char *caller = "tess_pack_int4";
    if (format != TESS_INT4_ROWS && format != TESS_INT4_GPTQ && format != TESS_INT4_AWQ)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: format %d is not a tess_int4_format (ROWS 0, GPTQ 1, AWQ 2)", caller, (int)format);
    tess_status s = check_weight_shape(n, k, caller);
    if (s == TESS_STATUS_SUCCESS)
        s = check_pointer(src, 4, "src", caller);
    if (s == TESS_STATUS_SUCCESS)
        s = check_pointer(packed, 16, "packed", caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    const uintptr_t bytes = (uintptr_t)(n * k / 2), from = (uintptr_t)src, to = (uintptr_t)packed;
    if (from < to + bytes && to < from + bytes)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: src and packed overlap; the packer reads codes from all over src while it writes "
                         "(pack into a separate buffer)",
                         caller);
    return s;
}

tess_status tess_int4_weight_check(const tess_w4a16_desc *desc, const void *w_packed, const void *scales,
                                   const uint8_t *zeros, const char *caller) {
    tess_status s = check_weight_shape(desc->n, desc->k, caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (desc->group_size != 64 && desc->group_size != 128)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: group_size=%" PRId64 "; the 4-bit kernels take 64 or 128",
                         caller, desc->group_size);
    if (desc->k % desc->group_size)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: group_size=%" PRId64 " does not divide k=%" PRId64, caller,
                         desc->group_size, desc->k);
    if (desc->scale_type != TESS_DTYPE_F32 && desc->scale_type != TESS_DTYPE_F16 &&
        desc->scale_type != TESS_DTYPE_BF16)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: scale_type is %s; scales are f32, f16 or bf16", caller,
                         tess_dtype_name(desc->scale_type));
    const int64_t groups = desc->k / desc->group_size;
    if (desc->ld_scales < desc->n || desc->ld_scales > INT64_MAX / groups)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: ld_scales=%" PRId64 " must be at least n=%" PRId64 " (scales are [k / group_size][n]) "
                         "and its span within 64 bits",
                         caller, desc->ld_scales, desc->n);
    if (desc->zero_points != 0 && desc->zero_points != 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: zero_points=%d must be 0 (symmetric: 8) or 1 (uint8 zeros)",
                         caller, (int)desc->zero_points);
    if (desc->zero_points && (desc->ld_zeros < desc->n || desc->ld_zeros > INT64_MAX / groups))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: ld_zeros=%" PRId64 " must be at least n=%" PRId64 " (zeros are [k / group_size][n])",
                         caller, desc->ld_zeros, desc->n);
    if ((s = check_pointer(w_packed, 16, "w_packed", caller)) ||
        (s = check_pointer(scales, tess_dtype_size(desc->scale_type), "scales", caller)))
        return s;
    if (desc->zero_points && !zeros)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: zero_points is 1 but zeros is NULL", caller);
    if (!desc->zero_points && zeros)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: zeros were given but zero_points is 0 (set it to 1, or pass NULL for zero points of 8)",
                         caller);
    return TESS_STATUS_SUCCESS;
}

/* Experts of a call: desc->groups, 0 read as 1. */
static int64_t experts_of(const tess_w4a16_desc *desc) { return desc->groups ? desc->groups : 1; }

/* The most experts a masked call takes (CUDA's limit on a grid's z extent). */
#define TESS_W4A16_MAX_GROUPS 65535

/* The experts' strides as the kernels step them, 0 read as back to back:
 * packed bytes, scale elements and zero-point elements (0 without zero
 * points). */
static void expert_strides(const tess_w4a16_desc *desc, int64_t strides[3]) {
    const int64_t groups = desc->k / desc->group_size;
    strides[0] = desc->w_group_stride ? desc->w_group_stride : desc->n * desc->k / 2;
    strides[1] = desc->scales_group_stride ? desc->scales_group_stride : groups * desc->ld_scales;
    strides[2] = !desc->zero_points ? 0 : desc->zeros_group_stride ? desc->zeros_group_stride : groups * desc->ld_zeros;
}

/* A masked call's experts (desc->groups, their weights' strides and
 * masked_m); the single call's desc must not name any. */
static tess_status check_experts(const tess_w4a16_desc *desc, const int32_t *masked_m, int masked, const char *caller) {
    const int64_t g = experts_of(desc);
    if (!masked) {
        if (g != 1)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "%s: groups=%" PRId64 "; one weight here (groups 0 or 1): experts go to "
                             "tess_gemm_w4a16_masked, and are dequantized one at a time",
                             caller, desc->groups);
        return TESS_STATUS_SUCCESS;
    }
    if (desc->groups < 0 || g > TESS_W4A16_MAX_GROUPS)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: groups=%" PRId64 " must be 1 to %d (0 reads as 1)", caller,
                         desc->groups, TESS_W4A16_MAX_GROUPS);
    if (desc->expected_groups < 0 || desc->expected_groups > g)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: expected_groups=%" PRId64 " must be 0 (all) to groups=%" PRId64,
                         caller, desc->expected_groups, g);
    tess_status s = check_pointer(masked_m, sizeof(int32_t), "masked_m", caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    const int64_t groups = desc->k / desc->group_size, packed = desc->n * desc->k / 2;
    const int64_t scale_span = (groups - 1) * desc->ld_scales + desc->n;
    const int64_t zero_span = desc->zero_points ? (groups - 1) * desc->ld_zeros + desc->n : 0;
    if (desc->w_group_stride != 0 && (desc->w_group_stride < packed || desc->w_group_stride % 16))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: w_group_stride=%" PRId64 " must be 0 (n k / 2) or a multiple of 16 of at least one "
                         "expert's packed bytes, %" PRId64,
                         caller, desc->w_group_stride, packed);
    if (desc->scales_group_stride != 0 && desc->scales_group_stride < scale_span)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: scales_group_stride=%" PRId64 " is shorter than one expert's scales (%" PRId64
                         " elements); 0 takes k / group_size * ld_scales",
                         caller, desc->scales_group_stride, scale_span);
    if (desc->zero_points && desc->zeros_group_stride != 0 && desc->zeros_group_stride < zero_span)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: zeros_group_stride=%" PRId64 " is shorter than one expert's zero points (%" PRId64
                         " elements); 0 takes k / group_size * ld_zeros",
                         caller, desc->zeros_group_stride, zero_span);
    int64_t strides[3];
    expert_strides(desc, strides);
    for (int i = 0; i < 3; i++)
        if (strides[i] > INT64_MAX / 8 / g)
            return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %" PRId64 " experts' weights span more than 64-bit offsets",
                             caller, g);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_w4a16_validate(const tess_w4a16_desc *desc, const int32_t *masked_m, int masked, const void *x,
                                const void *w_packed, const void *scales, const uint8_t *zeros, const void *d,
                                const void *bias) {
    const char *caller = masked ? "tess_gemm_w4a16_masked" : "tess_gemm_w4a16";
    tess_status s = tess_int4_weight_check(desc, w_packed, scales, zeros, caller);
    if (s == TESS_STATUS_SUCCESS)
        s = check_experts(desc, masked_m, masked, caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (desc->m < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: m=%" PRId64 " must be >= 1", caller, desc->m);
    if (desc->m > TESS_W4A16_MAX_M)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: m=%" PRId64 " is more than %d tokens: the W4A16 kernel is a decode GEMV; for larger m "
                         "dequantize the weight once (tess_dequantize_int4) and call tess_gemm_fused",
                         caller, desc->m, TESS_W4A16_MAX_M);
    const int64_t g = experts_of(desc);
    const tess_operand_shape shapes[2] = {{&desc->x, g, desc->m, desc->k, "x", "m x k"},
                                          {&desc->d, g, desc->m, desc->n, "d", "m x n"}};
    if ((s = tess_gemm_check_matrices(shapes, 2)))
        return s;
    if ((s = tess_check_batches_apart(&desc->d, g, caller, "d", "experts' outputs")))
        return s;
    if (desc->x.dtype != TESS_DTYPE_BF16 && desc->x.dtype != TESS_DTYPE_F16)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: x is %s; W4A16 takes bf16 or f16 activations", caller,
                         tess_dtype_name(desc->x.dtype));
    if (desc->x.order != TESS_ORDER_ROW)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: x must be row-major (K contiguous)", caller);
    if (desc->d.dtype != TESS_DTYPE_BF16 && desc->d.dtype != TESS_DTYPE_F16 && desc->d.dtype != TESS_DTYPE_F32)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: d is %s; W4A16 writes bf16, f16 or f32", caller,
                         tess_dtype_name(desc->d.dtype));
    if ((s = check_pointer(x, 16, "x", caller)) || (s = tess_gemm_check_tma(&desc->x, x, g, "x")))
        return s;
    if ((s = check_pointer(d, tess_dtype_size(desc->d.dtype), "d", caller)))
        return s;
    if (desc->epilogue.bias == TESS_BIAS_ROWS)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: a W4A16 bias is per column (TESS_BIAS_COLUMNS: one value per output feature)", caller);
    return tess_gemm_check_epilogue(&desc->epilogue, bias, desc->m, desc->n, g, masked, caller);
}

/* The kernels' parameters for a validated descriptor. */
static tess_w4a16_params params_of(const tess_w4a16_desc *desc, const void *x, const void *w_packed,
                                   const void *scales, const uint8_t *zeros) {
    tess_w4a16_params p = {0};
    p.x = x, p.ld_x = desc->x.ld, p.x_f16 = desc->x.dtype == TESS_DTYPE_F16;
    p.codes = w_packed;
    p.scales = scales, p.ld_scales = desc->ld_scales, p.scale_type = desc->scale_type;
    p.zeros = desc->zero_points ? zeros : NULL, p.ld_zeros = desc->ld_zeros;
    p.m = (int)desc->m, p.n = (int)desc->n, p.k = (int)desc->k, p.group = (int)desc->group_size;
    int64_t strides[3];
    expert_strides(desc, strides);
    p.groups = (int)experts_of(desc), p.expected_groups = (int)desc->expected_groups;
    p.x_group_stride = desc->x.batch_stride;
    p.codes_group_stride = strides[0], p.scales_group_stride = strides[1], p.zeros_group_stride = strides[2];
    return p;
}

/* The dense descriptor whose epilogue (tess_epilogue_of) is the W4A16
 * product's: D, its bias and activation, alpha 1, no C. */
static tess_gemm_desc epilogue_problem(const tess_w4a16_desc *desc) {
    tess_gemm_desc g;
    tess_gemm_desc_init(&g);
    g.m = desc->m, g.n = desc->n, g.k = desc->k, g.batch = experts_of(desc);
    g.d = desc->d;
    g.epilogue = desc->epilogue;
    return g;
}

/* The 4-bit kernels are built for sm_90a (griddepcontrol, the library's one architecture): compute
 * capability 9.0 or later. */
static tess_status check_device(tess_handle handle, const char *caller) {
    if (handle->info.cc_major < 9)
        return tess_fail(TESS_STATUS_ARCH_MISMATCH,
                         "%s: the 4-bit weight kernels need compute capability 9.0 or later (built for sm_90a); "
                         "device %d is %d.%d",
                         caller, handle->device, handle->info.cc_major, handle->info.cc_minor);
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_pack_int4(tess_handle handle, tess_int4_format format, int64_t n, int64_t k,
                                    const int32_t *src, void *packed) {
    tess_status s = tess_handle_check(handle, "tess_pack_int4");
    if (s == TESS_STATUS_SUCCESS)
        s = tess_int4_pack_check(format, n, k, src, packed);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = tess_launch_pack_int4((int)format, n, k, src, packed, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}

/* tess_gemm_w4a16 and tess_gemm_w4a16_masked (masked_m and experts when `masked`). */
static tess_status gemm_w4a16(tess_handle handle, const tess_w4a16_desc *desc, const int32_t *masked_m, int masked,
                              const void *x, const void *w_packed, const void *scales, const uint8_t *zeros, void *d,
                              const tess_epilogue_ptrs *ep) {
    const char *caller = masked ? "tess_gemm_w4a16_masked" : "tess_gemm_w4a16";
    tess_status s = tess_handle_check(handle, caller);
    tess_w4a16_desc full;
    tess_epilogue_ptrs ptrs;
    if (s == TESS_STATUS_SUCCESS)
        s = tess_w4a16_accept(desc, &full, caller);
    if (s == TESS_STATUS_SUCCESS)
        s = tess_epilogue_ptrs_in(ep, &ptrs, caller);
    if (s == TESS_STATUS_SUCCESS)
        s = tess_epilogue_ptrs_no_aux(&ptrs, caller);
    if (s == TESS_STATUS_SUCCESS)
        s = tess_w4a16_validate(&full, masked_m, masked, x, w_packed, scales, zeros, d, ptrs.bias);
    if (s == TESS_STATUS_SUCCESS)
        s = check_device(handle, caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    tess_w4a16_params p = params_of(&full, x, w_packed, scales, zeros);
    p.masked_m = masked ? masked_m : NULL;
    const tess_gemm_desc g = epilogue_problem(&full);
    p.epi = tess_epilogue_of(&g, NULL, d, ptrs.bias, NULL);
    p.early_launch = tess_handle_early_launch(handle);
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = tess_launch_w4a16_gemv(&p, handle->info.sm_count, tess_handle_budgeted(handle), handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}

TESS_API tess_status tess_gemm_w4a16(tess_handle handle, const tess_w4a16_desc *desc, const void *x,
                                     const void *w_packed, const void *scales, const uint8_t *zeros, void *d,
                                     const tess_epilogue_ptrs *ep) {
    return gemm_w4a16(handle, desc, NULL, 0, x, w_packed, scales, zeros, d, ep);
}

TESS_API tess_status tess_gemm_w4a16_masked(tess_handle handle, const tess_w4a16_desc *desc, const int32_t *masked_m,
                                            const void *x, const void *w_packed, const void *scales,
                                            const uint8_t *zeros, void *d, const tess_epilogue_ptrs *ep) {
    return gemm_w4a16(handle, desc, masked_m, 1, x, w_packed, scales, zeros, d, ep);
}

TESS_API tess_status tess_dequantize_int4(tess_handle handle, const tess_w4a16_desc *desc, const void *w_packed,
                                          const void *scales, const uint8_t *zeros, tess_dtype out_type, void *out,
                                          int64_t ld_out) {
    const char *caller = "tess_dequantize_int4";
    tess_status s = tess_handle_check(handle, caller);
    tess_w4a16_desc full;
    if (s == TESS_STATUS_SUCCESS)
        s = tess_w4a16_accept(desc, &full, caller);
    if (s == TESS_STATUS_SUCCESS)
        s = tess_int4_weight_check(&full, w_packed, scales, zeros, caller);
    if (s == TESS_STATUS_SUCCESS)
        s = check_experts(&full, NULL, 0, caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (full.x.dtype != TESS_DTYPE_BF16 && full.x.dtype != TESS_DTYPE_F16)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: x.dtype is %s; it names the rounding of the weight (bf16 or f16)", caller,
                         tess_dtype_name(full.x.dtype));
    if (out_type != TESS_DTYPE_BF16 && out_type != TESS_DTYPE_F16)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: out_type is %s; the weight is written as bf16 or f16", caller,
                         tess_dtype_name(out_type));
    if ((s = check_pointer(out, 2, "out", caller)))
        return s;
    if (ld_out < full.k || ld_out > INT64_MAX / full.n)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: ld_out=%" PRId64 " must be at least k=%" PRId64 " (out is n x k)", caller, ld_out,
                         full.k);
    const tess_w4a16_params p = params_of(&full, NULL, w_packed, scales, zeros);
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = tess_launch_dequantize_int4(&p, out_type, out, ld_out, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}
