/* Timing device work with CUDA events: warm-up, then the median of many runs. */
#ifndef TESS_TOOLS_TIMING_H
#define TESS_TOOLS_TIMING_H

/* Work to time: queues one run on `stream`; returns 0 on success. */
typedef int (*timed_fn)(void *ctx, void *stream);

/* The median of `count` values (sorts them in place; the mean of the middle two for even counts). */
double median_of(double *values, int count);

/* Runs `fn` `warmup` times, then `iterations` times each between two events
 * on a held stream (hold.h: the GPU starts the work only once it is all
 * queued), and stores the median GPU time in *median_ms and, if host_us is
 * not NULL, the median host time fn took to queue its work in *host_us.
 * Returns 0, or -1 after printing why. */
int time_median_ms(timed_fn fn, void *ctx, void *stream, int warmup, int iterations, double *median_ms,
                   double *host_us);

#endif
