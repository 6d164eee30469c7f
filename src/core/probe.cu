// A kernel that does nothing, compiled like every tessera kernel, so that the
// host can ask the runtime whether this build holds machine code for a device.
#include <cuda_runtime.h>

#include "core/probe.h"

__global__ void tess_probe_kernel(void) {}

extern "C" int tess_probe_native_arch(int device) {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess)
        return 0;
    if (cudaSetDevice(device) != cudaSuccess)
        return 0;
    cudaFuncAttributes attributes;
    cudaError_t err = cudaFuncGetAttributes(&attributes, tess_probe_kernel);
    cudaSetDevice(previous);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();  // a missing image must not poison later calls
        return 0;
    }
    return attributes.binaryVersion;
}
