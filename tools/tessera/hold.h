/* Holding a stream until the host has queued the work to time: the GPU
 * then runs that work back to back, so event timing measures the GPU's time
 * and not the host's time to enqueue it (which, for a 20-microsecond decode
 * GEMM, can be a large part of an unheld measurement). */
#ifndef TESS_TOOLS_HOLD_H
#define TESS_TOOLS_HOLD_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stream_hold stream_hold;

/* Allocates the host-mapped release flag; NULL if that fails. */
stream_hold *stream_hold_create(void);
/* Queues on `stream` a one-thread kernel that waits until stream_hold_release
 * (or about a second, so that a lost release cannot hang the benchmark).
 * Returns the launch's cudaError_t (0: cudaSuccess). */
int stream_hold_begin(stream_hold *h, void *stream);
/* Whether the last hold ran out of time before its release (the work it held
 * then started before it was all queued: the timing is not of GPU time
 * alone). Valid once the held work has finished. */
int stream_hold_timed_out(const stream_hold *h);
/* Lets the waiting kernel finish. */
void stream_hold_release(stream_hold *h);
void stream_hold_destroy(stream_hold *h);

#ifdef __cplusplus
}
#endif

#endif
