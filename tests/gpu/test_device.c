/* On a Hopper GPU: the handle reports the device truthfully, this build holds
 * code for it, streams round-trip, and the driver's tensor-map encoder is
 * reachable without linking libcuda and validates its inputs. */
#include <string.h>

#include "check.h"
#include "core/driver.h"
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

int main(void) {
    int skip = gpu_require_sm90();
    if (skip)
        return skip;
    test_handle_and_info();
    test_tensor_map_encoder();
    return check_finish("gpu_device");
}
