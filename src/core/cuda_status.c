/* Turning CUDA runtime errors into tessera statuses and sentences. */
#include <cuda_runtime_api.h>

#include "core/error.h"

tess_status tess_cuda_status(int err, const char *what) {
    if (err == cudaSuccess)
        return TESS_STATUS_SUCCESS;
    cudaError_t e = (cudaError_t)err;
    tess_status status = TESS_STATUS_EXECUTION_FAILED;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice ||
        e == cudaErrorCallRequiresNewerDriver || e == cudaErrorSystemDriverMismatch)
        status = TESS_STATUS_NO_DEVICE;
    return tess_fail(status, "%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
