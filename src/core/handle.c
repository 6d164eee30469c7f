/* Handle lifetime, stream and workspace. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/abi.h"
#include "core/error.h"
#include "core/handle.h"

/* Workspace must be aligned like a cudaMalloc result so kernels can place TMA
 * descriptors and vector accesses in it. */
#define TESS_WORKSPACE_ALIGNMENT 256

tess_status tess_handle_check(tess_handle h, const char *caller) {
    if (!h)
        return tess_fail(TESS_STATUS_NOT_INITIALIZED, "%s: the handle is NULL; create one with tess_create", caller);
    if (h->magic != TESS_HANDLE_MAGIC)
        return tess_fail(TESS_STATUS_NOT_INITIALIZED,
                         "%s: the handle is not live (destroyed, or never created by tess_create)", caller);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_handle_enter(tess_handle h, int *previous) {
    tess_status s = tess_cuda_status(cudaGetDevice(previous), "cudaGetDevice");
    if (s == TESS_STATUS_SUCCESS && *previous != h->device)
        s = tess_cuda_status(cudaSetDevice(h->device), "cudaSetDevice");
    return s;
}

void tess_handle_leave(tess_handle h, int previous) {
    if (previous != h->device)
        cudaSetDevice(previous);
}

/* The handle's stream-K ready flags: device memory of its own, not the
 * user's workspace, which callers may share with other libraries between
 * calls. Zeroed on a private stream and waited for (work on any stream then
 * finds them down) without synchronizing other streams. */
static tess_status alloc_stream_k_flags(struct tess_handle_s *h) {
    int previous = -1;
    tess_status s = tess_handle_enter(h, &previous);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    void *flags = NULL;
    if (cudaMalloc(&flags, TESS_HANDLE_FLAG_BYTES) != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it */
        s = tess_fail(TESS_STATUS_ALLOC_FAILED, "tess_create: no device memory for %d bytes of stream-K flags",
                      TESS_HANDLE_FLAG_BYTES);
    } else {
        cudaStream_t own = NULL;
        if (!(s = tess_cuda_status(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), "tess_create: a stream")) &&
            !(s = tess_cuda_status(cudaMemsetAsync(flags, 0, TESS_HANDLE_FLAG_BYTES, own), "tess_create: zeroing flags")))
            s = tess_cuda_status(cudaStreamSynchronize(own), "tess_create: zeroing the flags");
        if (own)
            cudaStreamDestroy(own);
        if (s != TESS_STATUS_SUCCESS) {
            cudaFree(flags);
            flags = NULL;
        }
    }
    h->sk_flags = flags;
    tess_handle_leave(h, previous);
    return s;
}

TESS_API tess_status tess_create(tess_handle *handle, int device) {
    if (!handle)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_create: the output pointer is NULL");
    *handle = NULL;
    struct tess_handle_s *h = calloc(1, sizeof *h);
    if (!h)
        return tess_fail(TESS_STATUS_ALLOC_FAILED, "tess_create: out of host memory for the handle");
    tess_status s = tess_device_query(device, &h->info);
    if (s != TESS_STATUS_SUCCESS) {
        free(h);
        return s;
    }
    h->magic = TESS_HANDLE_MAGIC;
    h->device = device;
    h->device_sms = h->info.sm_count;
    if ((s = alloc_stream_k_flags(h))) {
        free(h);
        return s;
    }
    *handle = h;
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_destroy(tess_handle handle) {
    if (!handle)
        return TESS_STATUS_SUCCESS;
    tess_status s = tess_handle_check(handle, "tess_destroy");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    handle->magic = 0;
    int previous = -1;
    const int entered = tess_handle_enter(handle, &previous) == TESS_STATUS_SUCCESS;
    cudaFree(handle->sk_flags); /* freed even where the device could not be made current */
    if (entered)
        tess_handle_leave(handle, previous);
    free(handle);
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_set_stream(tess_handle handle, void *stream) {
    tess_status s = tess_handle_check(handle, "tess_set_stream");
    if (s == TESS_STATUS_SUCCESS)
        handle->stream = stream;
    return s;
}

TESS_API tess_status tess_get_stream(tess_handle handle, void **stream) {
    tess_status s = tess_handle_check(handle, "tess_get_stream");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!stream)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_get_stream: the output pointer is NULL");
    *stream = handle->stream;
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_set_workspace(tess_handle handle, void *ptr, size_t bytes) {
    tess_status s = tess_handle_check(handle, "tess_set_workspace");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if ((ptr == NULL) != (bytes == 0))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_set_workspace: ptr=%p with bytes=%zu; pass both or neither (NULL, 0 removes it)",
                         ptr, bytes);
    if ((uintptr_t)ptr % TESS_WORKSPACE_ALIGNMENT != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_set_workspace: ptr=%p is not %d-byte aligned (cudaMalloc returns such pointers)",
                         ptr, TESS_WORKSPACE_ALIGNMENT);
    handle->workspace = ptr;
    handle->workspace_bytes = bytes;
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_get_workspace(tess_handle handle, void **ptr, size_t *bytes) {
    tess_status s = tess_handle_check(handle, "tess_get_workspace");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!ptr || !bytes)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_get_workspace: the output pointers must not be NULL");
    *ptr = handle->workspace;
    *bytes = handle->workspace_bytes;
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_get_device_info(tess_handle handle, tess_device_info *info) {
    tess_status s = tess_handle_check(handle, "tess_get_device_info");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!info)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_get_device_info: info is NULL");
    /* A caller built against an older header passes a smaller struct: it
     * gets the fields its version has (core/abi.h). */
    if (info->struct_size < TESS_DEVICE_INFO_SIZE_V1)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_get_device_info: info->struct_size=%u is smaller than any version of the struct (at "
                         "least %zu); set it to sizeof(tess_device_info)",
                         info->struct_size, (size_t)TESS_DEVICE_INFO_SIZE_V1);
    const uint32_t caller_size = info->struct_size;
    tess_device_info device = handle->info;
    device.sm_count = handle->device_sms; /* the device's, whatever the budget */
    memcpy(info, &device, caller_size < sizeof(tess_device_info) ? caller_size : sizeof(tess_device_info));
    info->struct_size = caller_size;
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_set_sm_budget(tess_handle handle, int sms) {
    tess_status s = tess_handle_check(handle, "tess_set_sm_budget");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (sms < 0 || sms > handle->device_sms)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_set_sm_budget: sms=%d; the budget is 1 to the device's %d streaming multiprocessors, "
                         "or 0 for all of them",
                         sms, handle->device_sms);
    handle->info.sm_count = sms ? sms : handle->device_sms;
    tess_plan_cache_clear(&handle->plans); /* its plans were sized for the old budget */
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_get_sm_budget(tess_handle handle, int *sms) {
    tess_status s = tess_handle_check(handle, "tess_get_sm_budget");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!sms)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_get_sm_budget: sms is NULL");
    *sms = handle->info.sm_count;
    return TESS_STATUS_SUCCESS;
}
