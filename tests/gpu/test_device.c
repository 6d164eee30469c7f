/* On a Hopper GPU: the handle reports the device truthfully, this build holds
 * code for it, streams round-trip, the driver's tensor-map encoder is
 * reachable without linking libcuda and validates its inputs, and the
 * thread's tensor-map cache gives the bytes of a fresh encoding. */
#include <string.h>

#include "check.h"
#include "core/driver.h"
#include "core/tensor_map.h"
#include "gpu_skip.h"

static void test_handle_and_info(void) {
    tess_handle h = NULL;
    CHECK_STATUS(tess_create(&h, 0), TESS_STATUS_SUCCESS);
    if (!h)
        return;
    tess_device_info info = {.struct_size = sizeof info};
    CHECK_STATUS(tess_get_device_info(h, &info), TESS_STATUS_SUCCESS);
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    CHECK(strcmp(info.name, prop.name) == 0);
    CHECK(info.cc_major == 9 && info.sm_count == prop.multiProcessorCount);
    /* Hopper (H100, H200): 227 KiB of opt-in shared memory per block and an L2 of 50 MB or more. */
    CHECKF(info.smem_per_block_optin == 227 * 1024, "opt-in shared memory %zu", info.smem_per_block_optin);
    CHECKF(info.l2_bytes >= (size_t)40 << 20, "L2 %zu", info.l2_bytes);
    CHECKF(info.sm_clock_khz > 1000000 && info.mem_clock_khz > 1000000, "clocks %d %d kHz", info.sm_clock_khz,
           info.mem_clock_khz);
    CHECK(info.driver_version >= 12000 && info.runtime_version >= 13000);
    CHECKF(info.has_native_code == 1, "this build holds no sm_90a code for %s", info.name);
    CHECK((info.kernel_families & ~(uint32_t)(TESS_FAMILY_DENSE_16BIT | TESS_FAMILY_DENSE_FP8 | TESS_FAMILY_GROUPED |
                                              TESS_FAMILY_SMALL_M)) == 0);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    void *got = NULL;
    CHECK_STATUS(tess_set_stream(h, stream), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_get_stream(h, &got), TESS_STATUS_SUCCESS);
    CHECK(got == (void *)stream);
    cudaStreamDestroy(stream);
    CHECK_STATUS(tess_destroy(h), TESS_STATUS_SUCCESS);
}

static void test_tensor_map_encoder(void) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    CHECK_STATUS(tess_driver_tensor_map_encode_tiled(&encode), TESS_STATUS_SUCCESS);
    if (!encode)
        return;
    void *buf = NULL;
    cudaMalloc(&buf, 256 * 256 * 2);
    /* A 256 x 256 bf16 row-major matrix in 64 x 64 boxes with the 128-byte swizzle. */
    CUtensorMap map;
    cuuint64_t dims[2] = {256, 256}, strides[1] = {256 * 2};
    cuuint32_t box[2] = {64, 64}, elem_strides[2] = {1, 1};
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, buf, dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    CHECKF(r == CUDA_SUCCESS, "encoding a valid tensor map returned %d", (int)r);
    /* TMA needs a 16-byte aligned base: the driver must refuse this one. */
    r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (char *)buf + 2, dims, strides, box, elem_strides,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    CHECKF(r != CUDA_SUCCESS, "a misaligned tensor map was accepted");
    cudaFree(buf);
}

/* A map as core/tensor_map.c encodes it (rank 3: inner x outer x 1 batch,
 * the same constants), straight from the driver: the cache's oracle. */
static CUtensorMap direct_map(CUtensorMapDataType type, size_t es, void *base, int64_t inner, int64_t outer, int box_inner,
                              int box_outer, CUtensorMapSwizzle swizzle) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    CUtensorMap map;
    memset(&map, 0, sizeof map);
    if (tess_driver_tensor_map_encode_tiled(&encode) != TESS_STATUS_SUCCESS)
        return map;
    cuuint64_t dims[3] = {(cuuint64_t)inner, (cuuint64_t)outer, 1};
    cuuint64_t strides[2] = {(cuuint64_t)inner * es, (cuuint64_t)(inner * outer) * es};
    cuuint32_t box[3] = {(cuuint32_t)box_inner, (cuuint32_t)box_outer, 1}, elem_strides[3] = {1, 1, 1};
    CHECK(encode(&map, type, 3, base, dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS);
    return map;
}

/* The thread's tensor-map cache (core/tensor_map.c) gives the bytes a fresh
 * encode gives: on the first encoding, an exact repeat, a map re-pointed at
 * another base, the first base again (both kept), for a swizzled bf16
 * matrix and unswizzled float32 factors; a misaligned base of a cached
 * shape is still refused. */
static void test_tensor_map_cache(void) {
    char *buf = NULL;
    cudaMalloc((void **)&buf, 1 << 20);
    char *bases[4] = {buf, buf + 4096, buf, buf + 65536};
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < 4; i++) {
            CUtensorMap got;
            memset(&got, 0, sizeof got);
            CUtensorMap want;
            if (kind == 0) {
                CHECK_STATUS(tess_tensor_map_matrix(&got, TESS_DTYPE_BF16, bases[i], 200, 96, 200, 1, 0, 64, 128),
                             TESS_STATUS_SUCCESS);
                want = direct_map(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, bases[i], 200, 96, 64, 128,
                                  CU_TENSOR_MAP_SWIZZLE_128B);
            } else {
                CHECK_STATUS(tess_tensor_map_factors(&got, (const float *)bases[i], 300, 56, 300, 1, 0, 4, 56),
                             TESS_STATUS_SUCCESS);
                want = direct_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, bases[i], 300, 56, 4, 56,
                                  CU_TENSOR_MAP_SWIZZLE_NONE);
            }
            CHECKF(memcmp(&got, &want, sizeof got) == 0, "map %d of kind %d differs from a fresh encoding", i, kind);
        }
    }
    CUtensorMap map;
    CHECK(tess_tensor_map_matrix(&map, TESS_DTYPE_BF16, buf + 2, 200, 96, 200, 1, 0, 64, 128) !=
          TESS_STATUS_SUCCESS);
    cudaFree(buf);
}

int main(void) {
    int skip = gpu_require_sm90();
    if (skip)
        return skip;
    test_handle_and_info();
    test_tensor_map_encoder();
    test_tensor_map_cache();
    return check_finish("gpu_device");
}
