/* Launchers of the utility kernels (FP8 quantization, transpose), called by
 * the API in core/quantize.c after it has validated the arguments. */
#ifndef TESS_KERNELS_UTIL_UTIL_KERNELS_H
#define TESS_KERNELS_UTIL_UTIL_KERNELS_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA's limit on gridDim.y; kernels with more rows of tiles walk the rest
 * with the same CTAs (a grid-stride loop over blockIdx.y). */
#define TESS_MAX_GRID_Y 65535

/* The grid's y extent for `tiles` rows of tiles. */
static inline unsigned tess_grid_rows(int64_t tiles) {
    return (unsigned)(tiles < TESS_MAX_GRID_Y ? tiles : TESS_MAX_GRID_Y);
}

/* Quantizes rows x cols row-major x into q with factors at `scales` (see
 * tess_quantize_fp8), queued on `stream`. */
tess_status tess_launch_quantize_fp8(int64_t rows, int64_t cols, tess_dtype x_type, const void *x, int64_t ld_x,
                                     tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                     const tess_scale_desc *layout, void *stream);

/* Quantizes rows x cols row-major x into q (q NULL: skipped) and into
 * qt = x^T in one read, with 1x128 factors along each copy's rows or one
 * 128x128 factor per block (layout_t's mode; see
 * tess_quantize_fp8_transposed), queued on `stream`. */
tess_status tess_launch_cast_transpose(int64_t rows, int64_t cols, tess_dtype x_type, const void *x, int64_t ld_x,
                                       tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                       const tess_scale_desc *layout, void *qt, int64_t ld_qt, float *scales_t,
                                       const tess_scale_desc *layout_t, void *stream);

/* dst (cols x rows) = src (rows x cols)^T for `batch` matrices (stride_src
 * and stride_dst elements apart), elements of `elem_bytes` (1, 2 or 4),
 * queued on `stream`. */
tess_status tess_launch_transpose(int elem_bytes, int64_t batch, int64_t rows, int64_t cols, const void *src,
                                  int64_t ld_src, int64_t stride_src, void *dst, int64_t ld_dst, int64_t stride_dst,
                                  void *stream);

#ifdef __cplusplus
}
#endif

#endif
