/* tess_scale_layout_query: the packed layout of each scale recipe. */
#include <inttypes.h>

#include "core/error.h"
#include "core/scale.h"

static int64_t blocks(int64_t x) { return (x + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK; }

TESS_API tess_status tess_scale_layout_query(tess_scale_mode mode, int64_t mn, int64_t k, tess_scale_desc *layout,
                                             int64_t shape[2], size_t *bytes, size_t *alignment) {
    if (mn < 1 || k < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_scale_layout_query: mn=%" PRId64 " and k=%" PRId64 " must be >= 1", mn, k);
    tess_scale_desc s = {mode, 0, 0, 0};
    int64_t rows, cols; /* mn-extent x K-blocks */
    switch (mode) {
    case TESS_SCALE_TENSOR: rows = 1, cols = 1; break;
    case TESS_SCALE_OUTER_VEC: rows = mn, cols = 1, s.stride_mn = 1; break;
    case TESS_SCALE_BLOCK_1x128: /* mn contiguous: one K block's factors are one coalesced read */
        rows = mn, cols = blocks(k), s.stride_mn = 1, s.stride_k = mn;
        break;
    case TESS_SCALE_BLOCK_128x128: /* K blocks contiguous, as DeepGEMM's weight scales */
        rows = blocks(mn), cols = blocks(k), s.stride_mn = cols, s.stride_k = 1;
        break;
    default:
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_scale_layout_query: mode %d is not a tess_scale_mode (TENSOR 0, OUTER_VEC 3, "
                         "BLOCK_1x128 4, BLOCK_128x128 5)",
                         (int)mode);
    }
    s.batch_stride = rows * cols;
    if (layout)
        *layout = s;
    if (shape)
        shape[0] = rows, shape[1] = cols;
    if (bytes)
        *bytes = (size_t)(rows * cols) * sizeof(float);
    if (alignment)
        *alignment = sizeof(float);
    return TESS_STATUS_SUCCESS;
}
