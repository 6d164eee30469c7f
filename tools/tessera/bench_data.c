/* `tessera bench gemm`'s random inputs (bench_data.h). */
#include "tools/tessera/bench_data.h"

#include <stdlib.h>

#include <cuda_runtime_api.h>

/* Elements staged on the host at a time: 4 Mi (at most 16 MiB). */
#define BENCH_FILL_CHUNK ((int64_t)1 << 22)

void bench_fill_normal(void *dev, tess_dtype t, int64_t count, double stddev, tess_rng *r) {
    const size_t es = tess_dtype_size(t);
    void *h = malloc((size_t)BENCH_FILL_CHUNK * es);
    for (int64_t at = 0; at < count; at += BENCH_FILL_CHUNK) {
        const int64_t n = count - at < BENCH_FILL_CHUNK ? count - at : BENCH_FILL_CHUNK;
        tess_fill_normal(h, t, n, stddev, r);
        cudaMemcpy((char *)dev + at * (int64_t)es, h, (size_t)n * es, cudaMemcpyHostToDevice);
    }
    free(h);
}

void bench_fill_bytes(void *dev, int64_t bytes, int lo, int hi, tess_rng *r) {
    unsigned char *h = malloc((size_t)BENCH_FILL_CHUNK);
    for (int64_t at = 0; at < bytes; at += BENCH_FILL_CHUNK) {
        const int64_t n = bytes - at < BENCH_FILL_CHUNK ? bytes - at : BENCH_FILL_CHUNK;
        for (int64_t i = 0; i < n; i++)
            h[i] = (unsigned char)tess_rng_range(r, lo, hi);
        cudaMemcpy((char *)dev + at, h, (size_t)n, cudaMemcpyHostToDevice);
    }
    free(h);
}

int bench_set_count(const tess_device_info *info, size_t set_bytes) {
    const int64_t sets = (int64_t)((2 * info->l2_bytes + set_bytes - 1) / set_bytes);
    return sets < 1 ? 1 : sets > BENCH_MAX_SETS ? BENCH_MAX_SETS : (int)sets;
}
