/* Internal: addressing and validation of tess_matrix_desc, shared by the
 * API checks, the reference GEMM and (through TESS_HD) kernels. */
#ifndef TESS_CORE_MATRIX_H
#define TESS_CORE_MATRIX_H

#include "core/hd.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element offset of (row, col) of matrix `batch` in a batch. */
TESS_HD int64_t tess_matrix_offset(const tess_matrix_desc *d, int64_t batch, int64_t row, int64_t col) {
    int64_t within = d->order == TESS_ORDER_ROW ? row * d->ld + col : row + col * d->ld;
    return batch * d->batch_stride + within;
}

/* Elements along the contiguous dimension (columns of a row-major matrix, rows of a column-major one). */
TESS_HD int64_t tess_matrix_inner(const tess_matrix_desc *d) { return d->order == TESS_ORDER_ROW ? d->cols : d->rows; }

/* Lines of the matrix: its extent along the other dimension, each ld elements apart. */
TESS_HD int64_t tess_matrix_outer(const tess_matrix_desc *d) { return d->order == TESS_ORDER_ROW ? d->rows : d->cols; }

/* Validates one matrix of a batch of `batch` matrices: known dtype and order,
 * rows and cols >= 1, ld >= the contiguous extent, batch_stride >= 0, and an
 * addressed span that fits in int64. `name` ("A", "B", ...) starts the sentence. */
tess_status tess_matrix_check(const tess_matrix_desc *d, int64_t batch, const char *name);

/* Elements from the first to one past the last addressed element, over the
 * whole batch (valid after tess_matrix_check succeeded). */
int64_t tess_matrix_span(const tess_matrix_desc *d, int64_t batch);

/* The span in bytes: the storage a batch of `d` needs. */
size_t tess_matrix_bytes(const tess_matrix_desc *d, int64_t batch);

/* Whether the storage of two validated batches (x at px, y at py, each of
 * `batch` matrices: from its first to one past its last addressed byte)
 * overlaps. Conservative: two matrices interleaved in one buffer (say
 * alternate columns) overlap by this measure. */
int tess_matrix_spans_overlap(const tess_matrix_desc *x, const void *px, const tess_matrix_desc *y, const void *py,
                              int64_t batch);

/* Checks that `d` is rows x cols as the problem requires ("A must be M x K = 64 x 128"). */
tess_status tess_matrix_check_shape(const tess_matrix_desc *d, int64_t rows, int64_t cols,
                                    const char *name, const char *shape_names);

#ifdef __cplusplus
}
#endif

#endif
