/* Status names and the thread-local last-error sentence. */
#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"

/* Long enough for a sentence naming a constraint, two values and a remedy. */
#define TESS_ERROR_CAPACITY 512

static _Thread_local char last_error[TESS_ERROR_CAPACITY];

TESS_API const char *tess_last_error(void) { return last_error; }

tess_status tess_fail(tess_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
    return status;
}

TESS_API const char *tess_status_name(tess_status status) {
    switch (status) {
    case TESS_STATUS_SUCCESS: return "TESS_STATUS_SUCCESS";
    case TESS_STATUS_NOT_INITIALIZED: return "TESS_STATUS_NOT_INITIALIZED";
    case TESS_STATUS_ALLOC_FAILED: return "TESS_STATUS_ALLOC_FAILED";
    case TESS_STATUS_INVALID_VALUE: return "TESS_STATUS_INVALID_VALUE";
    case TESS_STATUS_ARCH_MISMATCH: return "TESS_STATUS_ARCH_MISMATCH";
    case TESS_STATUS_EXECUTION_FAILED: return "TESS_STATUS_EXECUTION_FAILED";
    case TESS_STATUS_INTERNAL_ERROR: return "TESS_STATUS_INTERNAL_ERROR";
    case TESS_STATUS_NOT_SUPPORTED: return "TESS_STATUS_NOT_SUPPORTED";
    case TESS_STATUS_INSUFFICIENT_WORKSPACE: return "TESS_STATUS_INSUFFICIENT_WORKSPACE";
    case TESS_STATUS_NO_DEVICE: return "TESS_STATUS_NO_DEVICE";
    }
    return "TESS_STATUS_UNKNOWN";
}

TESS_API const char *tess_status_string(tess_status status) {
    switch (status) {
    case TESS_STATUS_SUCCESS: return "success";
    case TESS_STATUS_NOT_INITIALIZED: return "the handle is null or was destroyed";
    case TESS_STATUS_ALLOC_FAILED: return "a host allocation failed";
    case TESS_STATUS_INVALID_VALUE: return "an argument breaks a stated rule";
    case TESS_STATUS_ARCH_MISMATCH: return "the device lacks a feature the call needs";
    case TESS_STATUS_EXECUTION_FAILED: return "a CUDA call failed";
    case TESS_STATUS_INTERNAL_ERROR: return "internal error in tessera";
    case TESS_STATUS_NOT_SUPPORTED: return "valid, but no kernel in this build supports it";
    case TESS_STATUS_INSUFFICIENT_WORKSPACE: return "the workspace is smaller than the plan needs";
    case TESS_STATUS_NO_DEVICE: return "no CUDA driver or no such device";
    }
    return "unknown status";
}
