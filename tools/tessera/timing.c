/* Event timing with a median over iterations; see timing.h. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "tools/tessera/timing.h"

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(double *values, int count) {
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

/* Prints a failed CUDA call and returns -1. */
static int cuda_failed(cudaError_t err, const char *what) {
    fprintf(stderr, "tessera bench: %s: %s\n", what, cudaGetErrorString(err));
    return -1;
}

int time_median_ms(timed_fn fn, void *ctx, void *stream, int warmup, int iterations, double *median_ms) {
    cudaStream_t s = (cudaStream_t)stream;
    double *times = calloc((size_t)iterations, sizeof *times);
    cudaEvent_t start, stop;
    if (!times)
        return -1;
    cudaError_t err = cudaEventCreate(&start);
    if (err == cudaSuccess)
        err = cudaEventCreate(&stop);
    if (err != cudaSuccess) {
        free(times);
        return cuda_failed(err, "cudaEventCreate");
    }
    int rc = 0;
    for (int i = 0; i < warmup && rc == 0; i++)
        rc = fn(ctx, stream);
    for (int i = 0; i < iterations && rc == 0; i++) {
        float ms = 0.0f;
        cudaEventRecord(start, s);
        rc = fn(ctx, stream);
        cudaEventRecord(stop, s);
        if ((err = cudaEventSynchronize(stop)) != cudaSuccess || (err = cudaEventElapsedTime(&ms, start, stop)))
            rc = cuda_failed(err, "timing events");
        times[i] = ms;
    }
    if (rc == 0)
        *median_ms = median_of(times, iterations);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    free(times);
    return rc;
}
