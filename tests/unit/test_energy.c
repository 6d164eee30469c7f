/* The energy meter of `tessera bench` (tools/tessera/energy.c) without a GPU:
 * a missing NVML gives a meter that measures NaN and never crashes, stop
 * without start is safe, and with a stand-in NVML (fake_nvml.c, its path the
 * first argument) the windows report its clock and power, from the energy
 * counter or from the samples. Merging windows weighs them by time and samples.
 *   unit_energy [PATH_OF_FAKE_NVML] */
#define _POSIX_C_SOURCE 200809L /* nanosleep, setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "tools/tessera/energy.h"

static void sleep_ms(long ms) {
    const struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Whether every figure of *w says "not measured". */
static int all_nan(const energy_window *w) {
    return isnan(w->mean_sm_mhz) && isnan(w->mean_board_w) && isnan(w->joules) && w->samples == 0;
}

/* NVML missing, and a NULL meter: NaN everywhere, every call safe. */
static void test_without_nvml(void) {
    energy_meter *m = energy_open_library("/nonexistent/libnvidia-ml.so.1", 0);
    CHECK(m != NULL);
    CHECK(!energy_available(m));
    CHECKF(energy_why(m)[0] != '\0', "why is empty");
    CHECK(isnan(energy_power_limit_w(m)));
    energy_window w = {1, 1, 1, 1, 1, 1};
    energy_stop(m, &w); /* stop without start */
    CHECK(all_nan(&w));
    CHECK(energy_start(m) == -1);
    energy_stop(m, &w);
    CHECK(all_nan(&w));
    energy_close(m);

    energy_window v = {1, 1, 1, 1, 1, 1};
    CHECK(energy_start(NULL) == -1);
    energy_stop(NULL, &v);
    CHECK(all_nan(&v));
    CHECK(!energy_available(NULL) && isnan(energy_power_limit_w(NULL)));
    energy_close(NULL);
}

/* The system's NVML, whatever this machine has: no crash; a window measures or is NaN. */
static void test_system_nvml(void) {
    energy_meter *m = energy_open(0);
    CHECK(m != NULL);
    energy_window w;
    energy_stop(m, &w);
    CHECK(all_nan(&w));
    if (energy_start(m) == 0) {
        sleep_ms(30);
        energy_stop(m, &w);
        CHECKF(w.samples >= 2 && w.mean_sm_mhz > 0 && w.mean_board_w > 0, "samples %d, %g MHz, %g W", w.samples,
               w.mean_sm_mhz, w.mean_board_w);
        printf("system NVML: %g MHz, %g W over %d samples\n", w.mean_sm_mhz, w.mean_board_w, w.samples);
    } else {
        printf("system NVML unavailable: %s\n", energy_why(m));
    }
    energy_close(m);
}

/* The stand-in NVML at `path`: 1500 MHz, 400 W, a 700 W cap. */
static void test_fake_nvml(const char *path) {
    energy_meter *m = energy_open_library(path, 0);
    CHECKF(energy_available(m), "%s: %s", path, energy_why(m));
    if (!energy_available(m)) {
        energy_close(m);
        return;
    }
    CHECK(fabs(energy_power_limit_w(m) - 700.0) < 1e-9);
    energy_window w;
    energy_stop(m, &w); /* stop without start */
    CHECK(all_nan(&w));

    CHECK(energy_start(m) == 0);
    CHECK(energy_start(m) == -1); /* one window at a time */
    energy_stop(m, &w);          /* shorter than a period: the first and last samples */
    CHECKF(w.samples >= 2 && w.mean_sm_mhz == 1500.0 && fabs(w.mean_board_w - 400.0) < 1e-6 && !w.from_counter,
           "immediate stop: %d samples, %g MHz, %g W, counter %d", w.samples, w.mean_sm_mhz, w.mean_board_w,
           w.from_counter);
    CHECK(w.seconds >= 0 && w.seconds < 0.05);

    energy_start(m); /* 50 ms: below the counter's minimum, sampled */
    sleep_ms(50);
    energy_stop(m, &w);
    CHECKF(w.samples >= 3 && w.mean_sm_mhz == 1500.0 && fabs(w.mean_board_w - 400.0) < 1e-6 && !w.from_counter,
           "50 ms: %d samples, %g MHz, %g W, counter %d", w.samples, w.mean_sm_mhz, w.mean_board_w, w.from_counter);
    CHECK(fabs(w.joules - 400.0 * w.seconds) < 1e-6);

    energy_start(m); /* 200 ms: from the counter */
    sleep_ms(200);
    energy_stop(m, &w);
    CHECKF(w.from_counter && fabs(w.mean_board_w - 400.0) < 8.0 && w.samples >= 10,
           "200 ms: %d samples, %g W, counter %d", w.samples, w.mean_board_w, w.from_counter);
    CHECK(w.seconds >= 0.2 && fabs(w.joules - w.mean_board_w * w.seconds) < 1e-9);

    setenv("FAKE_NVML_NO_ENERGY", "1", 1); /* a board without the counter */
    energy_start(m);
    sleep_ms(120);
    energy_stop(m, &w);
    unsetenv("FAKE_NVML_NO_ENERGY");
    CHECKF(!w.from_counter && fabs(w.mean_board_w - 400.0) < 1e-6, "no counter: %g W, counter %d", w.mean_board_w,
           w.from_counter);

    energy_start(m); /* closing with a window open stops its thread */
    energy_close(m);
}

/* energy_window_merge: empty totals copy, times and samples weigh, NaN spreads. */
static void test_merge(void) {
    energy_window sum = {0}, a = {1000, 300, 30, 0.1, 10, 1}, b = {2000, 600, 180, 0.3, 30, 1};
    energy_window_merge(&sum, &a);
    CHECK(sum.mean_sm_mhz == 1000 && sum.joules == 30 && sum.samples == 10 && sum.from_counter);
    energy_window_merge(&sum, &b);
    CHECKF(fabs(sum.mean_sm_mhz - 1750) < 1e-9 && fabs(sum.joules - 210) < 1e-9 && fabs(sum.seconds - 0.4) < 1e-12 &&
               fabs(sum.mean_board_w - 525) < 1e-9 && sum.samples == 40,
           "%g MHz %g J %g s %g W %d samples", sum.mean_sm_mhz, sum.joules, sum.seconds, sum.mean_board_w,
           sum.samples);
    energy_window c = {2000, 600, 60, 0.1, 10, 0};
    energy_window_merge(&sum, &c);
    CHECK(!sum.from_counter);
    energy_window none = {NAN, NAN, NAN, NAN, 0, 0};
    energy_window_merge(&sum, &none);
    CHECK(isnan(sum.mean_sm_mhz) && isnan(sum.mean_board_w) && isnan(sum.joules));
    energy_window total = {0};
    energy_window_merge(&total, &none);
    energy_window_merge(&total, &a);
    CHECK(isnan(total.mean_sm_mhz) && isnan(total.mean_board_w));
}

int main(int argc, char **argv) {
    test_without_nvml();
    test_system_nvml();
    if (argc > 1)
        test_fake_nvml(argv[1]);
    test_merge();
    return check_finish("unit_energy");
}
