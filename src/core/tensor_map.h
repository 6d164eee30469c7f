/* Internal: TMA tensor maps (CUtensorMap) for matrices, made through the
 * driver entry point of core/driver.h. A matrix (batch of matrices) is a 3-D
 * tensor: its contiguous dimension, its other dimension, and the batch. */
#ifndef TESS_CORE_TENSOR_MAP_H
#define TESS_CORE_TENSOR_MAP_H

#include <cuda.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Describes `base` as inner x outer x batch elements of `dtype` with row
 * stride `ld` and batch stride `batch_stride` (elements; batch_stride 0 means
 * one matrix shared by the batch, mapped with batch extent 1), read or written
 * in boxes of box_inner x box_outer with the 128-byte swizzle (box_inner *
 * element size must be 128 bytes at most). */
tess_status tess_tensor_map_matrix(CUtensorMap *map, tess_dtype dtype, const void *base, int64_t inner, int64_t outer,
                                   int64_t ld, int64_t batch, int64_t batch_stride, int box_inner, int box_outer);

/* The same with the 64-byte swizzle (box_inner * element size 64 bytes at
 * most): an FP8 D's 64 x 64 epilogue sub-tiles (kernels/common/fragment.h
 * tess_epi_fp8_offset). */
tess_status tess_tensor_map_matrix_sw64(CUtensorMap *map, tess_dtype dtype, const void *base, int64_t inner,
                                        int64_t outer, int64_t ld, int64_t batch, int64_t batch_stride, int box_inner,
                                        int box_outer);

/* The same for a float32 array of dequantization factors, unswizzled (box_inner
 * x 4 bytes a multiple of 16; factors past the array's edges read as 0). */
tess_status tess_tensor_map_factors(CUtensorMap *map, const float *base, int64_t inner, int64_t outer, int64_t ld,
                                    int64_t batch, int64_t batch_stride, int box_inner, int box_outer);

#ifdef __cplusplus
}
#endif

#endif
