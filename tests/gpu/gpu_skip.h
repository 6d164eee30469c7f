/* What the GPU tests share: they skip themselves (exit 77, ctest's
 * SKIP_RETURN_CODE) where no compute capability 9.x device is present, e.g.
 * on CI; device buffers; a handle with the full GEMM workspace. */
#ifndef TESS_TESTS_GPU_SKIP_H
#define TESS_TESTS_GPU_SKIP_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "ref/random.h"
#include "tessera.h"

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

/* Bytes after an output buffer that a kernel must leave alone (a write
 * there is a write outside the output). */
#define GPU_GUARD_BYTES 4096

/* A device buffer of `bytes` (at least 1), holding a copy of `host` when given. */
static inline void *gpu_upload(const void *host, size_t bytes) {
    void *dev = NULL;
    cudaMalloc(&dev, bytes ? bytes : 1);
    if (host && bytes)
        cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    return dev;
}

/* The poison of output buffers: 0xff bytes, NaN in every float type. */
#define GPU_POISON 0xff

/* An output buffer of `bytes` followed by GPU_GUARD_BYTES, all poisoned. */
static inline unsigned char *gpu_poisoned(size_t bytes) {
    unsigned char *dev = (unsigned char *)gpu_upload(NULL, bytes + GPU_GUARD_BYTES);
    cudaMemset(dev, GPU_POISON, bytes + GPU_GUARD_BYTES);
    return dev;
}

/* Guard bytes no longer poisoned in a host copy of a gpu_poisoned buffer of `bytes`. */
static inline int64_t gpu_guard_touched(const unsigned char *copy, size_t bytes) {
    int64_t touched = 0;
    for (size_t i = bytes; i < bytes + GPU_GUARD_BYTES; i++)
        touched += copy[i] != GPU_POISON;
    return touched;
}

/* Plan `index` of the `count` listed (NULL, the heuristic's choice, for an
 * index out of range), its name (or the heuristic's) written to name[64]. */
static inline const tess_plan *gpu_pick_plan(const tess_plan *plans, int count, int index, char *name) {
    const tess_plan *plan = index >= 0 && index < count ? &plans[index] : NULL;
    snprintf(name, 64, "%s", plan ? plan->name : count ? plans[0].name : "?");
    if (getenv("TESS_TEST_TRACE")) { /* names each plan before it runs: the last one named is where a run hung */
        printf("  plan %s\n", name);
        fflush(stdout);
    }
    return plan;
}

/* Overwrites the handle's whole workspace, as another library sharing it
 * between calls might: tessera must keep no state there. */
static inline void gpu_scribble_workspace(tess_handle h) {
    void *ws = NULL;
    size_t bytes = 0;
    tess_get_workspace(h, &ws, &bytes);
    if (ws)
        cudaMemset(ws, 0xff, bytes);
}

/* A handle on device 0 with TESS_GEMM_WORKSPACE_BYTES of workspace (every
 * plan runs), which *workspace holds (cudaFree it after tess_destroy). */
static inline tess_handle gpu_gemm_handle(void **workspace) {
    tess_handle h = NULL;
    CHECK_STATUS(tess_create(&h, 0), TESS_STATUS_SUCCESS);
    *workspace = NULL;
    CHECK(cudaMalloc(workspace, TESS_GEMM_WORKSPACE_BYTES) == cudaSuccess);
    CHECK_STATUS(tess_set_workspace(h, *workspace, TESS_GEMM_WORKSPACE_BYTES), TESS_STATUS_SUCCESS);
    return h;
}

/* The start of a GEMM test's main: returns NULL with *skip = GPU_SKIP where
 * no Hopper GPU is found; else seeds `rng` (check_seed) and returns
 * gpu_gemm_handle's handle, its workspace in *workspace. */
static inline tess_handle gpu_test_start(tess_rng *rng, void **workspace, int *skip) {
    *workspace = NULL;
    /* Line-buffered, so that a run killed for its time (a hang) shows the
     * last part, case or plan it reached. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((*skip = gpu_require_sm90()) != 0)
        return NULL;
    tess_rng_seed(rng, check_seed());
    return gpu_gemm_handle(workspace);
}

/* A random extent up to `max` (at least 128) that visits the edges: 1..17,
 * a multiple of 128 give or take 3, or anything in 1..max. */
static inline int64_t gpu_pick_dim(tess_rng *rng, int64_t max) {
    switch (tess_rng_range(rng, 0, 4)) {
    case 0: return tess_rng_range(rng, 1, 17);
    case 1: {
        const int64_t tiles = tess_rng_range(rng, 1, max < 256 ? 1 : max / 128); /* drawn first, in every build */
        return 128 * tiles + tess_rng_range(rng, -3, 3);
    }
    default: return tess_rng_range(rng, 1, max);
    }
}

/* Wall-clock seconds (C11's timespec_get: enough for seconds). */
static inline double gpu_wall_seconds(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits up to `seconds` for the work queued on the default stream: 1 if it
 * finished without error, 0 if it failed or is still running (a hung
 * kernel, which only ending the process clears). */
static inline int gpu_finished_within(double seconds) {
    const double t0 = gpu_wall_seconds();
    cudaError_t e;
    while ((e = cudaStreamQuery(0)) == cudaErrorNotReady && gpu_wall_seconds() - t0 < seconds)
        ;
    return e == cudaSuccess;
}

/* Runs one part of a test, fn(h), and prints how long it took: where a
 * test's time goes shows in its log (the device time every run spends). */
static inline void gpu_timed(const char *name, void (*fn)(tess_handle), tess_handle h) {
    printf("%s ...\n", name);
    const double t0 = gpu_wall_seconds();
    fn(h);
    printf("%s: %.1f s\n", name, gpu_wall_seconds() - t0);
}

/* Opens a GEMM test's main with gpu_test_start: declares the handle `h` and
 * its `workspace`, seeding the file's `rng`, and returns GPU_SKIP from main
 * where there is no Hopper GPU. */
#define GPU_TEST_MAIN_START(h, workspace)                                                                          \
    void *workspace = NULL;                                                                                        \
    int gpu_skip_code = 0;                                                                                         \
    tess_handle h = gpu_test_start(&rng, &workspace, &gpu_skip_code);                                              \
    if (gpu_skip_code)                                                                                             \
    return gpu_skip_code

/* Closes a main that GPU_TEST_MAIN_START opened: releases `h` and its
 * `workspace`, then returns check_finish(name)'s exit code. */
#define GPU_TEST_MAIN_END(h, workspace, name)                                                                      \
    tess_destroy(h);                                                                                               \
    cudaFree(workspace);                                                                                           \
    return check_finish(name)

#endif
