/* Launchers of the utility kernels (FP8 quantization, transpose), called by
 * the API in core/quantize.c after it has validated the arguments. */
#ifndef TESS_KERNELS_UTIL_UTIL_KERNELS_H
#define TESS_KERNELS_UTIL_UTIL_KERNELS_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Quantizes rows x cols row-major x into q with factors at `scales` (see
 * tess_quantize_fp8), queued on `stream`. */
tess_status tess_launch_quantize_fp8(int64_t rows, int64_t cols, tess_dtype x_type, const void *x, int64_t ld_x,
                                     tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                     const tess_scale_desc *layout, void *stream);

/* dst (cols x rows) = src (rows x cols)^T, elements of `elem_bytes` (1, 2 or 4), queued on `stream`. */
tess_status tess_launch_transpose(int elem_bytes, int64_t rows, int64_t cols, const void *src, int64_t ld_src,
                                  void *dst, int64_t ld_dst, void *stream);

#ifdef __cplusplus
}
#endif

#endif
