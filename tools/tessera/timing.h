/* Timing device work with CUDA events: warm-up, then the median of many
 * short runs (bursts), or the mean over seconds of back-to-back runs (held
 * at the board's power cap); either with an energy window (energy.h). */
#ifndef TESS_TOOLS_TIMING_H
#define TESS_TOOLS_TIMING_H

#include "tools/tessera/energy.h"

/* Work to time: queues one run on `stream`; returns 0 on success. */
typedef int (*timed_fn)(void *ctx, void *stream);

/* The median of `count` values (sorts them in place; the mean of the middle two for even counts). */
double median_of(double *values, int count);

/* Runs `fn` `warmup` times, then `iterations` times each between two events
 * on a held stream (hold.h: the GPU starts the work only once it is all
 * queued), and stores the median GPU time in *median_ms and, if host_us is
 * not NULL, the median host time fn took to queue its work in *host_us.
 * Where `energy` is not NULL it gets `meter`'s window of the timed loop
 * (every iteration, its hold and synchronization included: the mean power
 * of the loop, a little below that of the runs alone; NaN without a meter).
 * Returns 0, or -1 after printing why. */
int time_median_ms(timed_fn fn, void *ctx, void *stream, int warmup, int iterations, double *median_ms,
                   double *host_us, energy_meter *meter, energy_window *energy);

/* Calls between the queue-bounding synchronizations of time_held. */
#define HELD_SYNC_CALLS 50

/* What time_held measured. */
typedef struct held_result {
    double ms_per_call; /* GPU time between the two events / calls */
    long calls;
    energy_window energy; /* the timed part's window */
} held_result;

/* Runs `fn` back to back on `stream` for `warm_s` seconds untimed (the
 * clocks settle at the power cap), then for `seconds` seconds between two
 * CUDA events inside an energy window of `meter` (NaN where NULL). The queue is
 * kept between HELD_SYNC_CALLS and twice as many calls deep (the host waits
 * for the call HELD_SYNC_CALLS back), so the GPU never idles for want of
 * work. Returns 0, or -1 after printing why. */
int time_held(timed_fn fn, void *ctx, void *stream, double warm_s, double seconds, energy_meter *meter,
              held_result *out);

#endif
