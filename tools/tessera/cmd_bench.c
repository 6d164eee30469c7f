/* `tessera bench`: benchmarks run on the GPU. `copy` measures the device-to-
 * device copy bandwidth, the ceiling memory-bound kernels are judged against. */
#include <limits.h>
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

/* bench copy's settings. */
typedef struct copy_options {
    long long bytes;
    int iterations, device;
} copy_options;

static const cli_option copy_options_table[] = {
    {"bytes", CLI_VALUE, "SIZE", "bytes per buffer, with K, M or G (binary) after it; default 1G"},
    {"iterations", CLI_VALUE, "N", "timed copies (their median); default 50"},
    {"device", CLI_VALUE, "N", "the CUDA device; default 0"},
    {NULL, 0, NULL, NULL},
};

const cli_command bench_copy_command = {
    "tessera bench copy",
    "[--bytes=SIZE] [--iterations=N] [--device=N]\n"
    "Device-to-device copy bandwidth (bytes read + written), the ceiling that\n"
    "memory-bound kernels are measured against.",
    copy_options_table,
    NULL,
};

/* cli_apply_fn of `tessera bench copy`. */
static int apply_copy(void *ctx, int index, const char *value) {
    copy_options *o = ctx;
    long long v;
    switch (index) {
    case 0: return (o->bytes = parse_size(value)) > 0;
    case 1: return cli_int(value, 1, INT_MAX, &v) ? (o->iterations = (int)v), 1 : 0;
    case 2: return cli_int(value, 0, INT_MAX, &v) ? (o->device = (int)v), 1 : 0;
    default: return 0;
    }
}

/* `tessera bench copy`: the median rate of copying one buffer into another. */
static int bench_copy(int argc, char **argv) {
    /* 1 GiB per buffer: many times any L2, so the copy measures DRAM. */
    copy_options o = {1ll << 30, 50, 0};
    const int parsed = cli_parse(&bench_copy_command, argc, argv, apply_copy, &o);
    if (parsed != CLI_OK)
        return parsed == CLI_HELP ? 0 : 2;
    const long long bytes = o.bytes;
    const int iterations = o.iterations, device = o.device;
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

/* `tessera bench`: hands the words from the benchmark's name on to it. */
int cmd_bench(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "copy") == 0)
        return bench_copy(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "gemm") == 0)
        return bench_gemm(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: tessera bench copy|gemm [options]\n\n");
        cli_print_help(stdout, &bench_copy_command);
        printf("\n");
        cli_print_help(stdout, &bench_gemm_command);
        return 0;
    }
    fprintf(stderr, "tessera bench: expected a benchmark name, copy or gemm%s%s%s (tessera bench --help)\n",
            argc >= 2 ? ", not '" : "", argc >= 2 ? argv[1] : "", argc >= 2 ? "'" : "");
    return 2;
}
