/* A kernel that writes its output late, having let the next kernel launch
 * early: the test of a dependent kernel's griddepcontrol.wait (test_graph.c). */
#ifndef TESS_TESTS_GPU_LATE_WRITER_H
#define TESS_TESTS_GPU_LATE_WRITER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Queues on `stream` a one-CTA kernel that first allows the next kernel in
 * the stream to launch (griddepcontrol.launch_dependents), then spins about
 * 65 us, then copies `bytes` (a multiple of 16, 16-byte aligned) from src to
 * dst. A next kernel launched with programmatic stream serialization that
 * read dst without waiting for this one would read what dst held before.
 * Returns the launch's cudaError_t (0: success). */
int late_copy(const void *src, void *dst, size_t bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif
