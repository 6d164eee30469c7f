// The stream hold of hold.h: a kernel polling a flag in mapped host memory.
#include <cuda_runtime.h>
#include <stdlib.h>

#include "tools/tessera/hold.h"

struct stream_hold {
    volatile int *flag; // host view: flag[0] the release, flag[1] set by a hold that timed out
    int *device_flag;   // the same ints, as the GPU sees them
};

// Spins until flag[0] is nonzero or `max_cycles` have passed; in the latter
// case sets flag[1]. The sleep keeps the polling from flooding PCIe; 1 us of
// extra latency is below what a release costs the host anyway.
__global__ void wait_for_release(volatile int *flag, long long max_cycles) {
    const long long start = clock64();
    while (flag[0] == 0) {
        if (clock64() - start >= max_cycles) {
            flag[1] = 1;
            return;
        }
        __nanosleep(1000);
    }
}

extern "C" stream_hold *stream_hold_create(void) {
    stream_hold *h = (stream_hold *)calloc(1, sizeof *h);
    void *host = NULL;
    if (!h || cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
        free(h);
        return NULL;
    }
    h->flag = (volatile int *)host;
    if (cudaHostGetDevicePointer((void **)&h->device_flag, host, 0) != cudaSuccess) {
        cudaFreeHost(host);
        free(h);
        return NULL;
    }
    return h;
}

extern "C" int stream_hold_begin(stream_hold *h, void *stream) {
    // 2^31 cycles: about a second at Hopper's 1.5-2 GHz SM clock.
    const long long max_cycles = 1LL << 31;
    h->flag[0] = h->flag[1] = 0;
    wait_for_release<<<1, 1, 0, (cudaStream_t)stream>>>(h->device_flag, max_cycles);
    return (int)cudaGetLastError();
}

extern "C" int stream_hold_timed_out(const stream_hold *h) { return h->flag[1] != 0; }

extern "C" void stream_hold_release(stream_hold *h) {
    __atomic_store_n((int *)h->flag, 1, __ATOMIC_RELEASE);
}

extern "C" void stream_hold_destroy(stream_hold *h) {
    if (!h)
        return;
    cudaFreeHost((void *)h->flag);
    free(h);
}
