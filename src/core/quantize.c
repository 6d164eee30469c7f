/* The utility API: tess_quantize_fp8 and tess_transpose (validation; the
 * kernels are in kernels/util). */
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
    s = tess_launch_transpose((int)es, rows, cols, src, ld_src, dst, ld_dst, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}

TESS_API tess_status tess_quantize_fp8(tess_handle handle, int64_t rows, int64_t cols, tess_dtype x_type, const void *x,
                                       int64_t ld_x, tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                       const tess_scale_desc *scale_layout) {
    const char *caller = "tess_quantize_fp8";
    tess_status s = check_call(handle, caller, rows, cols);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (x_type != TESS_DTYPE_F32 && x_type != TESS_DTYPE_F16 && x_type != TESS_DTYPE_BF16)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: x is %s; it quantizes f32, f16 or bf16", caller,
                         tess_dtype_name(x_type));
    if (q_type != TESS_DTYPE_E4M3 && q_type != TESS_DTYPE_E5M2)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "%s: q is %s; it produces e4m3 or e5m2", caller,
                         tess_dtype_name(q_type));
    if ((s = check_rows(caller, "x", rows, cols, x, ld_x, tess_dtype_size(x_type))) ||
        (s = check_rows(caller, "q", rows, cols, q, ld_q, 1)))
        return s;
    if (!scales || !scale_layout)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: scales and scale_layout must not be NULL", caller);
    if ((uintptr_t)scales % sizeof(float))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: scales must be 4-byte aligned float32", caller);
    const tess_scale_mode mode = scale_layout->mode;
    if (mode != TESS_SCALE_TENSOR && !tess_scale_is_block(mode))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "%s: scale mode %d; it makes TENSOR (0), BLOCK_1x128 (4) or BLOCK_128x128 (5) factors", caller,
                         (int)mode);
    if (scale_layout->stride_mn < 0 || scale_layout->stride_k < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: scale strides must be >= 0", caller);
    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = tess_launch_quantize_fp8(rows, cols, x_type, x, ld_x, q_type, q, ld_q, scales, scale_layout, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}
