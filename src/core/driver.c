/* Driver entry points looked up through the runtime; see driver.h for why. */
#include <stdatomic.h>

#include <cuda_runtime_api.h>

#include "core/driver.h"
#include "core/error.h"

/* The ABI version tessera is written against for each symbol: 12000 is CUDA
 * 12.0, where cuTensorMapEncodeTiled and cuTensorMapReplaceAddress appeared
 * with their present signatures. */
#define TESS_TENSOR_MAP_ABI 12000

/* Looks `symbol` up in the driver at ABI `version`. */
static tess_status driver_entry_point(const char *symbol, unsigned version, void **fn) {
    enum cudaDriverEntryPointQueryResult result = cudaDriverEntryPointSymbolNotFound;
    *fn = NULL;
    cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, fn, version, cudaEnableDefault, &result);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return tess_cuda_status(err, "looking up the CUDA driver (cudaGetDriverEntryPointByVersion)");
    }
    if (result != cudaDriverEntryPointSuccess || *fn == NULL)
        return tess_fail(TESS_STATUS_NO_DEVICE,
                         "the CUDA driver has no %s at ABI %u: %s; a driver for CUDA 12.0 or newer is needed",
                         symbol, version,
                         result == cudaDriverEntryPointVersionNotSufficent ? "the driver is too old"
                                                                           : "symbol not found");
    return TESS_STATUS_SUCCESS;
}

/* The entry point `symbol` at tessera's ABI, looked up once per process into
 * *cached (racing first callers both look the same pointer up; either store
 * wins). */
static tess_status cached_entry_point(const char *symbol, _Atomic(void *) *cached, void **fn) {
    void *p = atomic_load(cached);
    if (!p) {
        tess_status s = driver_entry_point(symbol, TESS_TENSOR_MAP_ABI, &p);
        if (s != TESS_STATUS_SUCCESS)
            return s;
        atomic_store(cached, p);
    }
    *fn = p;
    return TESS_STATUS_SUCCESS;
}

tess_status tess_driver_tensor_map_encode_tiled(PFN_cuTensorMapEncodeTiled_v12000 *fn) {
    static _Atomic(void *) cached = NULL;
    void *p = NULL;
    const tess_status s = cached_entry_point("cuTensorMapEncodeTiled", &cached, &p);
    *fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
    return s;
}

tess_status tess_driver_tensor_map_replace_address(PFN_cuTensorMapReplaceAddress_v12000 *fn) {
    static _Atomic(void *) cached = NULL;
    void *p = NULL;
    const tess_status s = cached_entry_point("cuTensorMapReplaceAddress", &cached, &p);
    *fn = (PFN_cuTensorMapReplaceAddress_v12000)p;
    return s;
}
