/* Internal: recording failures as a status plus a sentence for tess_last_error(). */
#ifndef TESS_CORE_ERROR_H
#define TESS_CORE_ERROR_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TESS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TESS_PRINTF(f, a)
#endif

/* Records `fmt` as this thread's last-error sentence and returns `status`, so
 * that validation reads `return tess_fail(TESS_STATUS_INVALID_VALUE, "...")`. */
tess_status tess_fail(tess_status status, const char *fmt, ...) TESS_PRINTF(2, 3);

/* Returns SUCCESS when `err` (a cudaError_t) is cudaSuccess; otherwise records
 * "<what>: <CUDA's error string>" and returns EXECUTION_FAILED (or NO_DEVICE
 * for the errors that mean there is no usable driver or device). */
tess_status tess_cuda_status(int err, const char *what);

#ifdef __cplusplus
}
#endif

#endif
