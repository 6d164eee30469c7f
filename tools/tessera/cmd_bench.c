/* `tessera bench`: benchmarks run on the GPU. `copy` measures the device-to-
 * device copy bandwidth, the ceiling memory-bound kernels are judged against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "tessera.h"
#include "tools/tessera/commands.h"
#include "tools/tessera/timing.h"

struct copy_job {
    void *dst, *src;
    size_t bytes;
};

static int run_copy(void *ctx, void *stream) {
    struct copy_job *job = ctx;
    cudaError_t err = cudaMemcpyAsync(job->dst, job->src, job->bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
    if (err != cudaSuccess) {
        fprintf(stderr, "tessera bench copy: cudaMemcpyAsync: %s\n", cudaGetErrorString(err));
        return -1;
    }
    return 0;
}

static int bench_copy(int argc, char **argv) {
    /* 1 GiB per buffer: many times any L2, so the copy measures DRAM. */
    long long bytes = 1ll << 30;
    int iterations = 50, device = 0;
    for (int i = 0; i < argc; i++) {
        const char *v;
        if ((v = option_value(argc, argv, &i, "--bytes")))
            bytes = parse_size(v);
        else if ((v = option_value(argc, argv, &i, "--iterations")))
            iterations = atoi(v);
        else if ((v = option_value(argc, argv, &i, "--device")))
            device = atoi(v);
        else {
            fprintf(stderr, "tessera bench copy: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (bytes <= 0 || iterations <= 0) {
        fprintf(stderr, "tessera bench copy: --bytes and --iterations must be positive\n");
        return 2;
    }
    tess_device_info info;
    if (query_device(device, &info, "tessera bench copy"))
        return 1;
    struct copy_job job = {NULL, NULL, (size_t)bytes};
    cudaSetDevice(device);
    if (cudaMalloc(&job.src, job.bytes) != cudaSuccess || cudaMalloc(&job.dst, job.bytes) != cudaSuccess) {
        fprintf(stderr, "tessera bench copy: cannot allocate 2 x %lld bytes on device %d\n", bytes, device);
        return 1;
    }
    /* Non-zero contents: never time on untouched memory. */
    cudaMemset(job.src, 0x5a, job.bytes);
    double ms = 0.0;
    int rc = time_median_ms(run_copy, &job, NULL, 5, iterations, &ms, NULL, NULL, NULL);
    if (rc == 0)
        printf("copy  device=%s  bytes=%lld  median=%.4f ms  bandwidth=%.1f GB/s (read + write)\n", info.name, bytes,
               ms, 2.0 * (double)bytes / (ms * 1e-3) / 1e9);
    cudaFree(job.src);
    cudaFree(job.dst);
    return rc == 0 ? 0 : 1;
}

int cmd_bench(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "copy") == 0)
        return bench_copy(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "gemm") == 0)
        return bench_gemm(argc - 1, argv + 1);
    fprintf(stderr, "tessera bench: expected a benchmark name: copy or gemm\n");
    return 2;
}
