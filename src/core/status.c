/* Status names and the thread-local last-error sentence. */
#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"
#include "core/names.h"

/* Each status's enum name, for tess_status_name. */
#define TESS_STATUS_NAMED(status) {status, #status}
static const tess_named status_names[] = {
    TESS_STATUS_NAMED(TESS_STATUS_SUCCESS),
    TESS_STATUS_NAMED(TESS_STATUS_NOT_INITIALIZED),
    TESS_STATUS_NAMED(TESS_STATUS_ALLOC_FAILED),
    TESS_STATUS_NAMED(TESS_STATUS_INVALID_VALUE),
    TESS_STATUS_NAMED(TESS_STATUS_ARCH_MISMATCH),
    TESS_STATUS_NAMED(TESS_STATUS_EXECUTION_FAILED),
    TESS_STATUS_NAMED(TESS_STATUS_INTERNAL_ERROR),
    TESS_STATUS_NAMED(TESS_STATUS_NOT_SUPPORTED),
    TESS_STATUS_NAMED(TESS_STATUS_INSUFFICIENT_WORKSPACE),
    TESS_STATUS_NAMED(TESS_STATUS_NO_DEVICE),
};

/* What each status means, for tess_status_string. */
static const tess_named status_meanings[] = {
    {TESS_STATUS_SUCCESS, "success"},
    {TESS_STATUS_NOT_INITIALIZED, "the handle is null or was destroyed"},
    {TESS_STATUS_ALLOC_FAILED, "a host allocation failed"},
    {TESS_STATUS_INVALID_VALUE, "an argument breaks a stated rule"},
    {TESS_STATUS_ARCH_MISMATCH, "the device lacks a feature the call needs"},
    {TESS_STATUS_EXECUTION_FAILED, "a CUDA call failed"},
    {TESS_STATUS_INTERNAL_ERROR, "internal error in tessera"},
    {TESS_STATUS_NOT_SUPPORTED, "valid, but no kernel in this build supports it"},
    {TESS_STATUS_INSUFFICIENT_WORKSPACE, "the workspace is smaller than the plan needs"},
    {TESS_STATUS_NO_DEVICE, "no CUDA driver or no such device"},
};

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
    return TESS_NAME_OF(status_names, status, "TESS_STATUS_UNKNOWN");
}

TESS_API const char *tess_status_string(tess_status status) {
    return TESS_NAME_OF(status_meanings, status, "unknown status");
}
