/* A small check helper for tessera's tests: plain executables run by ctest.
 * CHECK records a failure and continues, so one run reports every broken
 * property; check_finish prints a summary and gives the exit code. */
#ifndef TESS_TESTS_CHECK_H
#define TESS_TESTS_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tessera.h"

static int check_total, check_failed;

/* Records one check; prints where it failed. Returns `ok`. */
static inline int check_record(int ok, const char *file, int line, const char *expr) {
    check_total++;
    if (!ok) {
        check_failed++;
        if (check_failed <= 50)
            fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
    }
    return ok;
}

#define CHECK(cond) check_record(!!(cond), __FILE__, __LINE__, #cond)

/* CHECK with a printf-style explanation printed on failure. */
#define CHECKF(cond, ...)                                                       \
    do {                                                                        \
        if (!check_record(!!(cond), __FILE__, __LINE__, #cond) && check_failed <= 50) { \
            fprintf(stderr, "    ");                                            \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

/* Checks that `expr` returns status `want`; on failure shows both names and the sentence. */
#define CHECK_STATUS(expr, want)                                                              \
    do {                                                                                      \
        tess_status got_ = (expr);                                                            \
        CHECKF(got_ == (want), "%s returned %s, expected %s (last error: %s)", #expr,         \
               tess_status_name(got_), tess_status_name(want), tess_last_error());            \
    } while (0)

/* A seed for this run: $TESS_SEED if set, else fresh. Printed so a failure can be repeated. */
static inline uint64_t check_seed(void) {
    const char *env = getenv("TESS_SEED");
    uint64_t seed;
    int local;
    if (env)
        seed = strtoull(env, NULL, 0);
    else
        seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&local ^ (uint64_t)clock();
    printf("seed %" PRIu64 " (set TESS_SEED=%" PRIu64 " to repeat)\n", seed, seed);
    fflush(stdout); /* under ctest stdout is a pipe: a crash would lose the seed still in the buffer */
    return seed;
}

/* The random trials a test runs: `usual`, or fewer where $TESS_TRIALS says so
 * (a positive number; e.g. under compute-sanitizer, which runs kernels 10-100x
 * slower). Never more than `usual`: the test's fixed cases stay as they are. */
static inline int check_trials(int usual) {
    const char *env = getenv("TESS_TRIALS");
    const long n = env ? strtol(env, NULL, 10) : 0;
    return n > 0 && n < usual ? (int)n : usual;
}

/* Prints "<name>: N checks, F failed" and returns the process exit code. */
static inline int check_finish(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_total, check_failed);
    if (check_total == 0) {
        printf("%s: no checks ran, which is itself a failure\n", name);
        return 1;
    }
    return check_failed ? 1 : 0;
}

#endif
