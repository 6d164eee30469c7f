/* Validation of matrix descriptors, shared by every entry point that takes one. */
#include <inttypes.h>

#include "core/error.h"
#include "core/matrix.h"

/* Returns 1 if a * b + c overflows int64 for non-negative a, b, c. */
static int mul_add_overflows(int64_t a, int64_t b, int64_t c) {
    if (a != 0 && b > (INT64_MAX - c) / a)
        return 1;
    return 0;
}

tess_status tess_matrix_check(const tess_matrix_desc *d, int64_t batch, const char *name) {
    if (!d)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: the matrix descriptor is NULL", name);
    if (tess_dtype_size(d->dtype) == 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: dtype %d is not a tess_dtype (use TESS_DTYPE_F32, F16, BF16, E4M3 or E5M2)",
                         name, (int)d->dtype);
    if (d->order != TESS_ORDER_ROW && d->order != TESS_ORDER_COL)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: order %d is neither TESS_ORDER_ROW (1) nor TESS_ORDER_COL (0)", name,
                         (int)d->order);
    if (d->rows < 1 || d->cols < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: rows=%" PRId64 " cols=%" PRId64 ": both must be >= 1",
                         name, d->rows, d->cols);
    int64_t inner = tess_matrix_inner(d), outer = tess_matrix_outer(d);
    if (d->ld < inner)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: ld=%" PRId64 " is smaller than the %s (%" PRId64 ") of a %s-major matrix; "
                         "ld must be >= %" PRId64,
                         name, d->ld, d->order == TESS_ORDER_ROW ? "column count" : "row count", inner,
                         d->order == TESS_ORDER_ROW ? "row" : "column", inner);
    if (batch < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: batch count %" PRId64 " must be >= 1", name, batch);
    if (d->batch_stride < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: batch_stride=%" PRId64 " must be >= 0", name,
                         d->batch_stride);
    if (mul_add_overflows(outer - 1, d->ld, inner) ||
        mul_add_overflows(batch - 1, d->batch_stride, (outer - 1) * d->ld + inner))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: the addressed span (%" PRId64 " x ld=%" PRId64 ", %" PRId64
                         " batches of stride %" PRId64 ") overflows 64-bit offsets",
                         name, outer, d->ld, batch, d->batch_stride);
    return TESS_STATUS_SUCCESS;
}

int64_t tess_matrix_span(const tess_matrix_desc *d, int64_t batch) {
    return (batch - 1) * d->batch_stride + (tess_matrix_outer(d) - 1) * d->ld + tess_matrix_inner(d);
}

size_t tess_matrix_bytes(const tess_matrix_desc *d, int64_t batch) {
    return (size_t)tess_matrix_span(d, batch) * tess_dtype_size(d->dtype);
}

int tess_matrix_spans_overlap(const tess_matrix_desc *x, const void *px, const tess_matrix_desc *y, const void *py,
                              int64_t batch) {
    const uintptr_t x0 = (uintptr_t)px, y0 = (uintptr_t)py;
    return x0 < y0 + tess_matrix_bytes(y, batch) && y0 < x0 + tess_matrix_bytes(x, batch);
}

tess_status tess_matrix_check_shape(const tess_matrix_desc *d, int64_t rows, int64_t cols,
                                    const char *name, const char *shape_names) {
    if (d->rows != rows || d->cols != cols)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s is %" PRId64 " x %" PRId64 " but must be %s = %" PRId64 " x %" PRId64, name,
                         d->rows, d->cols, shape_names, rows, cols);
    return TESS_STATUS_SUCCESS;
}
