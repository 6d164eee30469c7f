/* The utility API: tess_quantize_fp8, its cast-transpose form and
 * tess_transpose (validation; the kernels are in kernels/util). */
#include <inttypes.h>

#include "core/error.h"
#include "core/handle.h"
#include "core/scale.h"
#include "kernels/util/util_kernels.h"

/* What every utility call checks first: a live handle and a matrix extent of at least 1 x 1. */
static tess_status check_call(tess_handle handle, const char *caller, int64_t rows, int64_t cols) {
    tess_status s = tess_handle_check(handle, caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (rows < 1 || cols < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: rows=%" PRId64 " and cols=%" PRId64 " must be >= 1", caller,
                         rows, cols);
    return TESS_STATUS_SUCCESS;
}

/* A rows x cols row-major matrix at p with leading dimension ld:
 * p present and aligned to its elements, ld >= cols, the extent within 64 bits. */
static tess_status check_rows(const char *caller, const char *name, int64_t rows, int64_t cols, const void *p,
                              int64_t ld, size_t elem) {
    if (!p)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s is NULL", caller, name);
    if ((uintptr_t)p % elem)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s=%p is not aligned to its %zu-byte elements", caller, name,
                         p, elem);
    if (ld < cols)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: ld of %s is %" PRId64 ", less than its %" PRId64 " columns",
                         caller, name, ld, cols);
    if (ld > INT64_MAX / rows)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s's extent overflows 64 bits", caller, name);
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_transpose(tess_handle handle, tess_dtype dtype, int64_t rows, int64_t cols, const void *src,
                                    int64_t ld_src, void *dst, int64_t ld_dst) {
    const char *caller = "tess_transpose";
    tess_status s = check_call(handle, caller, rows, cols);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    size_t es = tess_dtype_size(dtype);
    if (es == 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: dtype %d is not a tess_dtype", caller, (int)dtype);
    if ((s = check_rows(caller, "src", rows, cols, src, ld_src, es)) ||
        (s = check_rows(caller, "dst", cols, rows, dst, ld_dst, es)))
        return s;
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = tess_launch_transpose((int)es, 1, rows, cols, src, ld_src, 0, dst, ld_dst, 0, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}

/* The input type of every quantization: f32, f16 or bf16. */
static tess_status check_x_type(const char *caller, tess_dtype x_type) {
    if (x_type != TESS_DTYPE_F32 && x_type != TESS_DTYPE_F16 && x_type != TESS_DTYPE_BF16)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: x is %s; it quantizes f32, f16 or bf16", caller,
                         tess_dtype_name(x_type));
    return TESS_STATUS_SUCCESS;
}

/* The input and output types of the FP8 quantizations. */
static tess_status check_types(const char *caller, tess_dtype x_type, tess_dtype q_type) {
    const tess_status s = check_x_type(caller, x_type);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (q_type != TESS_DTYPE_E4M3 && q_type != TESS_DTYPE_E5M2)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: q is %s; it produces e4m3 or e5m2", caller,
                         tess_dtype_name(q_type));
    return TESS_STATUS_SUCCESS;
}

/* A factor array and its layout: both present, float-aligned, strides >= 0. */
static tess_status check_factors(const char *caller, const char *name, const float *scales,
                                 const tess_scale_desc *layout) {
    if (!scales || !layout)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s and its layout must not be NULL", caller, name);
    if ((uintptr_t)scales % sizeof(float))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s must be 4-byte aligned float32", caller, name);
    if (layout->stride_mn < 0 || layout->stride_k < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: %s's strides must be >= 0", caller, name);
    return TESS_STATUS_SUCCESS;
}

/* The checks tess_quantize_fp8 and tess_quantize_int8 share after their
 * types': x, q and the factors, then the launch. `modes_ok` says whether
 * the factor mode is one the caller makes (its sentence names them). */
static tess_status quantize_checked(tess_handle handle, const char *caller, int64_t rows, int64_t cols,
                                    tess_dtype x_type, const void *x, int64_t ld_x, tess_dtype q_type, void *q,
                                    int64_t ld_q, float *scales, const tess_scale_desc *scale_layout, int modes_ok,
                                    const char *modes) {
    tess_status s;
    if ((s = check_rows(caller, "x", rows, cols, x, ld_x, tess_dtype_size(x_type))) ||
        (s = check_rows(caller, "q", rows, cols, q, ld_q, 1)) ||
        (s = check_factors(caller, "scales", scales, scale_layout)))
        return s;
    if (!modes_ok)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: scale mode %d; it makes %s factors", caller,
                         (int)scale_layout->mode, modes);
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = tess_launch_quantize_fp8(rows, cols, x_type, x, ld_x, q_type, q, ld_q, scales, scale_layout, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}

TESS_API tess_status tess_quantize_fp8(tess_handle handle, int64_t rows, int64_t cols, tess_dtype x_type, const void *x,
                                       int64_t ld_x, tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                       const tess_scale_desc *scale_layout) {
    const char *caller = "tess_quantize_fp8";
    tess_status s = check_call(handle, caller, rows, cols);
    if (s || (s = check_types(caller, x_type, q_type)))
        return s;
    const int modes_ok = scale_layout && (scale_layout->mode == TESS_SCALE_TENSOR ||
                                          scale_layout->mode == TESS_SCALE_OUTER_VEC ||
                                          tess_scale_is_block(scale_layout->mode));
    return quantize_checked(handle, caller, rows, cols, x_type, x, ld_x, q_type, q, ld_q, scales, scale_layout,
                            modes_ok, "TENSOR (0), OUTER_VEC (3: per row), BLOCK_1x128 (4) or BLOCK_128x128 (5)");
}

TESS_API tess_status tess_quantize_int8(tess_handle handle, int64_t rows, int64_t cols, tess_dtype x_type,
                                        const void *x, int64_t ld_x, void *q, int64_t ld_q, float *scales,
                                        const tess_scale_desc *scale_layout) {
    const char *caller = "tess_quantize_int8";
    tess_status s = check_call(handle, caller, rows, cols);
    if (s || (s = check_x_type(caller, x_type)))
        return s;
    const int modes_ok = scale_layout && (scale_layout->mode == TESS_SCALE_TENSOR ||
                                          scale_layout->mode == TESS_SCALE_OUTER_VEC);
    return quantize_checked(handle, caller, rows, cols, x_type, x, ld_x, TESS_DTYPE_S8, q, ld_q, scales,
                            scale_layout, modes_ok, "TENSOR (0) or OUTER_VEC (3: per row, i.e. per token)");
}

TESS_API tess_status tess_quantize_fp8_transposed(tess_handle handle, int64_t rows, int64_t cols, tess_dtype x_type,
                                                  const void *x, int64_t ld_x, tess_dtype q_type, void *q, int64_t ld_q,
                                                  float *scales, const tess_scale_desc *scale_layout, void *qt,
                                                  int64_t ld_qt, float *scales_t,
                                                  const tess_scale_desc *scale_layout_t) {
    const char *caller = "tess_quantize_fp8_transposed";
    tess_status s = check_call(handle, caller, rows, cols);
    if (s || (s = check_types(caller, x_type, q_type)))
        return s;
    if ((s = check_rows(caller, "x", rows, cols, x, ld_x, tess_dtype_size(x_type))) ||
        (s = check_rows(caller, "qt", cols, rows, qt, ld_qt, 1)) ||
        (s = check_factors(caller, "scales_t", scales_t, scale_layout_t)))
        return s;
    const tess_scale_mode mode = scale_layout_t->mode;
    if (mode != TESS_SCALE_BLOCK_1x128 && mode != TESS_SCALE_BLOCK_128x128)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: scale_layout_t's mode is %d; the cast-transpose makes BLOCK_1x128 (4) or BLOCK_128x128 "
                         "(5) factors (tess_quantize_fp8 makes per-tensor ones)",
                         caller, (int)mode);
    if (q || scales || scale_layout) { /* the row-wise copy too, in the same mode */
        if ((s = check_rows(caller, "q", rows, cols, q, ld_q, 1)) ||
            (s = check_factors(caller, "scales", scales, scale_layout)))
            return s;
        if (scale_layout->mode != mode)
            return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                             "%s: scale_layout's mode is %d and scale_layout_t's %d; both copies get factors of one "
                             "recipe, BLOCK_1x128 (4) or BLOCK_128x128 (5)",
                             caller, (int)scale_layout->mode, (int)mode);
    }
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = tess_launch_cast_transpose(rows, cols, x_type, x, ld_x, q_type, q, ld_q, scales, scale_layout, qt, ld_qt,
                                   scales_t, scale_layout_t, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}
