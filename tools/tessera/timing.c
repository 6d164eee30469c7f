/* Event timing with a median over iterations; see timing.h. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "tools/tessera/hold.h"
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

/* Seconds on a monotonic clock. */
static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int time_median_ms(timed_fn fn, void *ctx, void *stream, int warmup, int iterations, double *median_ms,
                   double *host_us, energy_meter *meter, energy_window *energy) {
    cudaStream_t s = (cudaStream_t)stream;
    double *times = calloc((size_t)iterations, sizeof *times), *host = calloc((size_t)iterations, sizeof *host);
    stream_hold *hold = stream_hold_create();
    cudaEvent_t start = NULL, stop = NULL;
    int rc = times && host && hold ? 0 : -1, timed_out = 0;
    if (rc != 0)
        fprintf(stderr, "tessera bench: out of host or pinned memory for timing\n");
    cudaError_t err = cudaSuccess;
    if (rc == 0 && ((err = cudaEventCreate(&start)) != cudaSuccess || (err = cudaEventCreate(&stop)) != cudaSuccess))
        rc = cuda_failed(err, "cudaEventCreate");
    /* At least one warm-up: a first call may load modules, which can wait
     * for the device, i.e. for the hold. */
    for (int i = 0; i < (warmup > 1 ? warmup : 1) && rc == 0; i++)
        rc = fn(ctx, stream);
    if (energy && rc == 0 && (err = cudaStreamSynchronize(s)) != cudaSuccess)
        rc = cuda_failed(err, "warm-up"); /* the window holds the timed runs only */
    if (energy)
        energy_start(meter);
    for (int i = 0; i < iterations && rc == 0; i++) {
        /* The hold keeps the GPU from reaching `start` until fn has queued
         * its work, so the events bracket GPU time only; fn's host time is
         * reported on its own. */
        float ms = 0.0f;
        if ((err = (cudaError_t)stream_hold_begin(hold, stream)) != cudaSuccess) {
            rc = cuda_failed(err, "holding the stream");
            break;
        }
        cudaEventRecord(start, s);
        const double t0 = now_seconds();
        rc = fn(ctx, stream);
        host[i] = (now_seconds() - t0) * 1e6;
        cudaEventRecord(stop, s);
        stream_hold_release(hold);
        if ((err = cudaEventSynchronize(stop)) != cudaSuccess || (err = cudaEventElapsedTime(&ms, start, stop)))
            rc = cuda_failed(err, "timing events");
        times[i] = ms;
        if (rc == 0 && stream_hold_timed_out(hold))
            timed_out++;
    }
    if (energy)
        energy_stop(meter, energy);
    if (timed_out)
        fprintf(stderr, "tessera bench: %d of %d holds ran out of time before the work was queued (host time counted)\n",
                timed_out, iterations);
    if (rc == 0) {
        *median_ms = median_of(times, iterations);
        if (host_us)
            *host_us = median_of(host, iterations);
    }
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    stream_hold_destroy(hold);
    free(times);
    free(host);
    return rc;
}

/* Queues `fn` back to back for `seconds` of host time (at least once),
 * counting the calls in *calls; every HELD_SYNC_CALLS calls it records one
 * of the two `marks` and waits for the other, recorded HELD_SYNC_CALLS calls
 * earlier. Returns 0, or -1 after printing why. */
static int run_back_to_back(timed_fn fn, void *ctx, void *stream, double seconds, cudaEvent_t marks[2],
                            long *calls) {
    const double end = now_seconds() + seconds;
    int k = 0;
    do {
        if (fn(ctx, stream) != 0)
            return -1;
        if (++*calls % HELD_SYNC_CALLS == 0) {
            cudaError_t err = cudaEventRecord(marks[k], (cudaStream_t)stream);
            k ^= 1;
            if (err != cudaSuccess || (err = cudaEventSynchronize(marks[k])) != cudaSuccess)
                return cuda_failed(err, "bounding the queue");
        }
    } while (now_seconds() < end);
    return 0;
}

int time_held(timed_fn fn, void *ctx, void *stream, double warm_s, double seconds, energy_meter *meter,
              held_result *out) {
    cudaStream_t s = (cudaStream_t)stream;
    cudaEvent_t events[4] = {NULL, NULL, NULL, NULL}; /* start, stop, and the two queue marks */
    cudaError_t err = cudaSuccess;
    int rc = 0;
    out->ms_per_call = NAN;
    out->calls = 0;
    for (int i = 0; i < 4 && rc == 0; i++)
        if ((err = cudaEventCreate(&events[i])) != cudaSuccess)
            rc = cuda_failed(err, "cudaEventCreate");
    long warm_calls = 0;
    if (rc == 0)
        rc = run_back_to_back(fn, ctx, stream, warm_s, events + 2, &warm_calls);
    if (rc == 0 && (err = cudaStreamSynchronize(s)) != cudaSuccess)
        rc = cuda_failed(err, "warm-up");
    if (rc == 0) {
        energy_start(meter);
        cudaEventRecord(events[0], s);
        rc = run_back_to_back(fn, ctx, stream, seconds, events + 2, &out->calls);
        cudaEventRecord(events[1], s);
        float ms = 0.0f;
        if ((err = cudaEventSynchronize(events[1])) != cudaSuccess ||
            (err = cudaEventElapsedTime(&ms, events[0], events[1])) != cudaSuccess)
            rc = cuda_failed(err, "timing events");
        energy_stop(meter, &out->energy);
        if (rc == 0)
            out->ms_per_call = ms / (double)out->calls;
    } else {
        energy_stop(NULL, &out->energy);
    }
    for (int i = 0; i < 4; i++)
        if (events[i])
            cudaEventDestroy(events[i]);
    return rc;
}
