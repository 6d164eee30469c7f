// What the TMA streaming probes (stream_patterns.cu, tma_oob.cu) share: a
// CUDA error check that exits, the kernel that holds the stream while the
// host queues a timed launch, and the driver's tensor-map encoder.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                           \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// Timed runs per case (the median is reported) and untimed ones before
// them (first-touch and clock ramp).
#define PROBE_REPS 31
#define PROBE_WARMUPS 2
// Clocks hold() spins before each timed launch: ~40 us at 1.98 GHz, longer
// than the host takes to queue the launch and its events.
#define PROBE_HOLD_CYCLES 80000

// Spins `cycles` clocks so that the timed work queues behind it and the
// events measure GPU time only.
__global__ void hold(long long cycles) {
    const long long t = clock64();
    while (clock64() - t < cycles) {
    }
}

// cuTensorMapEncodeTiled through the runtime (no -lcuda).
static PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult q;
        CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    return encode;
}
