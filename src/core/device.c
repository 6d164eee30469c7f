/* Device queries: what the GPU is, and which kernel families this build runs on it. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "core/family.h"
#include "core/handle.h"
#include "core/names.h"
#include "core/probe.h"

/* Each tess_kernel_family bit's name. */
static const tess_named kernel_family_names[] = {
    {TESS_FAMILY_DENSE_16BIT, "dense-16bit"},
    {TESS_FAMILY_DENSE_FP8, "dense-fp8"},
    {TESS_FAMILY_GROUPED, "grouped"},
    {TESS_FAMILY_SMALL_M, "small-m"},
};

/* The tess_kernel_family bits of the families this build holds that run on
 * `info`'s device (core/family.h). */
static uint32_t families_available(const tess_device_info *info) {
    uint32_t families = 0;
    for (int i = 0; i < tess_family_count(); i++)
        if (tess_family_at(i)->runs_on(info))
            families |= tess_family_at(i)->kernel_families;
    return families;
}

tess_status tess_device_query(int device, tess_device_info *info) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorInsufficientDriver) {
        (void)cudaGetLastError();
        return tess_fail(TESS_STATUS_NO_DEVICE,
                         "no usable CUDA driver: libcuda is missing or older than this build's CUDA runtime (%d.%d)",
                         CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    }
    tess_status s = tess_cuda_status(err, "no usable CUDA device: cudaGetDeviceCount");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (device < 0 || device >= count)
        return tess_fail(TESS_STATUS_NO_DEVICE, "device %d does not exist: %d CUDA device(s) found (0..%d)", device,
                         count, count - 1);
    struct cudaDeviceProp prop;
    s = tess_cuda_status(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    info->device = device;
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->smem_per_block_optin = prop.sharedMemPerBlockOptin;
    info->smem_per_sm = prop.sharedMemPerMultiprocessor;
    info->l2_bytes = (size_t)prop.l2CacheSize;
    info->global_mem_bytes = prop.totalGlobalMem;
    info->mem_bus_width_bits = prop.memoryBusWidth;
    /* Clock rates left cudaDeviceProp in CUDA 13; they remain device attributes. */
    cudaDeviceGetAttribute(&info->sm_clock_khz, cudaDevAttrClockRate, device);
    cudaDeviceGetAttribute(&info->mem_clock_khz, cudaDevAttrMemoryClockRate, device);
    cudaDriverGetVersion(&info->driver_version);
    cudaRuntimeGetVersion(&info->runtime_version);
    info->has_native_code = tess_probe_native_arch(device) != 0;
    info->kernel_families = families_available(info);
    return TESS_STATUS_SUCCESS;
}

TESS_API const char *tess_kernel_family_name(tess_kernel_family family) {
    return TESS_NAME_OF(kernel_family_names, family, "invalid");
}
