/* TMA tensor maps for matrices; see tensor_map.h. */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>

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

/* Every argument of an encoding that varies, and the device it was made
 * for: equal keys give equal maps (encode_map's other arguments are
 * constants: any that comes to vary must join the key). Built zeroed, so
 * that padding bytes (none on 64-bit targets) compare equal too. */
typedef struct map_key {
    const void *base;
    int64_t inner, outer, ld, batches, bstride;
    int32_t dtype, box_inner, box_outer, swizzle, device, unused;
} map_key;
_Static_assert(sizeof(map_key) == 72, "map_key without padding: memcmp compares every byte that matters");

/* Maps a thread encoded last, reused by the calls that follow: a run call
 * encodes 2-7 maps (operands, edge rows, D, factors), and each encoding is
 * a driver call of microseconds. An entry of the same key serves as it is;
 * one that differs only in its base address is copied and re-pointed
 * (cuTensorMapReplaceAddress), the common case of a layer called again on
 * new activations. 32 entries: the maps of a few problems in turn (a
 * model's layers of one shape share theirs). */
#define TESS_MAP_CACHE_ENTRIES 32
typedef struct map_entry {
    CUtensorMap map;
    map_key key;
    int used;
} map_entry;
static _Thread_local map_entry map_cache[TESS_MAP_CACHE_ENTRIES];
static _Thread_local unsigned map_cache_next; /* the slot a miss overwrites (round robin) */

/* Keeps a map in the thread's cache. */
static void remember_map(const CUtensorMap *map, const map_key *key) {
    map_entry *e = &map_cache[map_cache_next++ % TESS_MAP_CACHE_ENTRIES];
    e->map = *map, e->key = *key, e->used = 1;
}

/* Whether two keys differ in nothing but the base address. */
static int same_but_base(const map_key *a, const map_key *b) {
    map_key x = *a;
    x.base = b->base;
    return memcmp(&x, b, sizeof x) == 0;
}

/* *map from the thread's cache: 1 where an entry of the key was there, or
 * one of its shape, whose copy re-pointed at key->base is remembered beside
 * it (two maps of one shape in a call, A and B of a square problem, then
 * both stay); 0 where the caller must encode. */
static int cached_map(CUtensorMap *map, const map_key *key) {
    map_entry *shape_match = NULL;
    for (int i = 0; i < TESS_MAP_CACHE_ENTRIES; i++) {
        map_entry *e = &map_cache[i];
        if (!e->used)
            continue;
        if (memcmp(&e->key, key, sizeof *key) == 0) {
            *map = e->map;
            return 1;
        }
        if (!shape_match && same_but_base(&e->key, key))
            shape_match = e;
    }
    /* TMA's 16-byte base rule checked here, not left to the driver's replace:
     * a misaligned base goes to the encode, which refuses it with a sentence */
    PFN_cuTensorMapReplaceAddress_v12000 replace;
    if (!shape_match || (uintptr_t)key->base % 16 ||
        tess_driver_tensor_map_replace_address(&replace) != TESS_STATUS_SUCCESS)
        return 0;
    CUtensorMap moved = shape_match->map;
    if (replace(&moved, (void *)key->base) != CUDA_SUCCESS)
        return 0;
    remember_map(&moved, key);
    *map = moved;
    return 1;
}

/* Encodes a 3-D map (inner x outer x batch elements) of `base`, read or
 * written in box_inner x box_outer boxes with the given swizzle; boxes that
 * reach past the tensor read zeros. From the thread's cache where it holds
 * the map (cached_map). */
static tess_status encode_map(CUtensorMap *map, tess_dtype dtype, const void *base, int64_t inner, int64_t outer,
                              int64_t ld, int64_t batch, int64_t batch_stride, int box_inner, int box_outer,
                              CUtensorMapSwizzle swizzle) {
    size_t es = tess_dtype_size(dtype);
    int64_t batches = batch_stride == 0 ? 1 : batch;
    /* The batch stride must be a valid (non-zero, whole 16 bytes) stride even for one matrix, whose
     * own stride is never used and may be anything the API accepts. */
    int64_t bstride = batches == 1 ? ld * outer : batch_stride;
    map_key key;
    memset(&key, 0, sizeof key);
    key.base = base, key.inner = inner, key.outer = outer, key.ld = ld, key.batches = batches, key.bstride = bstride;
    key.dtype = (int32_t)dtype, key.box_inner = box_inner, key.box_outer = box_outer, key.swizzle = (int32_t)swizzle;
    if (cudaGetDevice(&key.device) != cudaSuccess) /* no device: no cache (the encode will say what is wrong) */
        (void)cudaGetLastError(), key.device = -1;
    if (key.device >= 0 && cached_map(map, &key))
        return TESS_STATUS_SUCCESS;
    PFN_cuTensorMapEncodeTiled_v12000 encode;
    tess_status s = tess_driver_tensor_map_encode_tiled(&encode);
    if (s != TESS_STATUS_SUCCESS)
        return s;
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
    if (key.device >= 0)
        remember_map(map, &key);
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
