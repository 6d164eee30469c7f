/* TMA tensor maps for matrices; see tensor_map.h. */
#include <inttypes.h>

#include "core/driver.h"
#include "core/error.h"
#include "core/tensor_map.h"

static CUtensorMapDataType tma_type(tess_dtype dtype) {
    switch (dtype) {
    case TESS_DTYPE_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case TESS_DTYPE_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TESS_DTYPE_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TESS_DTYPE_E4M3:
    case TESS_DTYPE_E5M2:
    case TESS_DTYPE_S8: break;
    }
    return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* TMA moves bytes: the 8-bit types load as uint8 */
}

/* Encodes a 3-D map (inner x outer x batch elements) of `base`, read or
 * written in box_inner x box_outer boxes with the given swizzle; boxes that
 * reach past the tensor read zeros. */
static tess_status encode_map(CUtensorMap *map, tess_dtype dtype, const void *base, int64_t inner, int64_t outer,
                              int64_t ld, int64_t batch, int64_t batch_stride, int box_inner, int box_outer,
                              CUtensorMapSwizzle swizzle) {
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    tess_status s = tess_driver_tensor_map_encode_tiled(&encode);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    size_t es = tess_dtype_size(dtype);
    int64_t batches = batch_stride == 0 ? 1 : batch;
    /* The batch stride must be a valid (non-zero, whole 16 bytes) stride even for one matrix, whose
     * own stride is never used and may be anything the API accepts. */
    int64_t bstride = batches == 1 ? ld * outer : batch_stride;
    cuuint64_t dims[3] = {(cuuint64_t)inner, (cuuint64_t)outer, (cuuint64_t)batches};
    cuuint64_t strides[2] = {(cuuint64_t)(ld * (int64_t)es), (cuuint64_t)(bstride * (int64_t)es)};
    cuuint32_t box[3] = {(cuuint32_t)box_inner, (cuuint32_t)box_outer, 1};
    cuuint32_t elem_strides[3] = {1, 1, 1};
    CUresult r = encode(map, tma_type(dtype), 3, (void *)base, dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return tess_fail(TESS_STATUS_INTERNAL_ERROR,
                         "creating a TMA tensor map failed (CUresult %d) for a %" PRId64 " x %" PRId64 " x %" PRId64
                         " tensor of %s with ld=%" PRId64 ", batch stride %" PRId64 " and box %d x %d",
                         (int)r, inner, outer, batches, tess_dtype_name(dtype), ld, bstride, box_inner, box_outer);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_tensor_map_matrix(CUtensorMap *map, tess_dtype dtype, const void *base, int64_t inner, int64_t outer,
                                   int64_t ld, int64_t batch, int64_t batch_stride, int box_inner, int box_outer) {
    return encode_map(map, dtype, base, inner, outer, ld, batch, batch_stride, box_inner, box_outer,
                      CU_TENSOR_MAP_SWIZZLE_128B);
}

tess_status tess_tensor_map_matrix_sw64(CUtensorMap *map, tess_dtype dtype, const void *base, int64_t inner,
                                        int64_t outer, int64_t ld, int64_t batch, int64_t batch_stride, int box_inner,
                                        int box_outer) {
    return encode_map(map, dtype, base, inner, outer, ld, batch, batch_stride, box_inner, box_outer,
                      CU_TENSOR_MAP_SWIZZLE_64B);
}

tess_status tess_tensor_map_factors(CUtensorMap *map, const float *base, int64_t inner, int64_t outer, int64_t ld,
                                    int64_t batch, int64_t batch_stride, int box_inner, int box_outer) {
    return encode_map(map, TESS_DTYPE_F32, base, inner, outer, ld, batch, batch_stride, box_inner, box_outer,
                      CU_TENSOR_MAP_SWIZZLE_NONE);
}
