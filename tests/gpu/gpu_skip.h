/* GPU tests skip themselves (exit 77, ctest's SKIP_RETURN_CODE) where no
 * compute capability 9.x device is present, e.g. on CI. */
#ifndef TESS_TESTS_GPU_SKIP_H
#define TESS_TESTS_GPU_SKIP_H

#include <stdio.h>

#include <cuda_runtime_api.h>

#define GPU_SKIP 77

/* Returns 0 if device 0 is a Hopper (9.x) GPU; otherwise says why and returns GPU_SKIP. */
static inline int gpu_require_sm90(void) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        printf("SKIP: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "count is 0");
        return GPU_SKIP;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    if (prop.major != 9) {
        printf("SKIP: device 0 (%s) is compute capability %d.%d, not 9.x\n", prop.name, prop.major, prop.minor);
        return GPU_SKIP;
    }
    printf("device 0: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
    return 0;
}

/* Evaluates a CUDA call; on failure prints it and returns 1 from the caller. */
#define CUDA_OR_FAIL(call)                                                                          \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

#endif
