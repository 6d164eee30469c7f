/* The SM clock and board power of one GPU during a timed section, read
 * through NVML: libnvidia-ml.so.1, which the driver installs, is loaded at
 * run time (never linked), so the tool runs where it is missing and then
 * reports NaN. A sampler thread reads the clock and the power every
 * ENERGY_PERIOD_MS while a window is open; the energy is the difference of
 * the board's energy counter where it has one and the window is long enough
 * for it, else the sampled mean power times the window's length. */
#ifndef TESS_TOOLS_ENERGY_H
#define TESS_TOOLS_ENERGY_H

/* Milliseconds between two samples of the sampler thread. */
#define ENERGY_PERIOD_MS 10
/* Shortest window whose energy comes from the energy counter: below it the
 * counter's millijoule steps and update period (tens of milliseconds) would
 * dominate, and the sampled power is used instead. */
#define ENERGY_COUNTER_MIN_SECONDS 0.1

typedef struct energy_meter energy_meter;

/* What a window measured; every figure is NaN where nothing was measured. */
typedef struct energy_window {
    double mean_sm_mhz;  /* mean of the SM clock samples (MHz) */
    double mean_board_w; /* joules / seconds: the window's mean board power (W) */
    double joules;       /* energy the board drew during the window (J) */
    double seconds;      /* host wall time from start to stop (s) */
    int samples;         /* clock and power samples taken (one at start, one at stop, the thread's between) */
    int from_counter;    /* 1 if joules came from the energy counter, 0 if from the sampled power */
} energy_window;

/* Opens the NVML device of CUDA device `cuda_device` (found by its PCI bus
 * id, so CUDA_VISIBLE_DEVICES is respected). Returns a meter even where NVML
 * or the device is missing (it then measures NaN; energy_why says why);
 * NULL only when out of memory. Every function here accepts NULL. */
energy_meter *energy_open(int cuda_device);
/* energy_open with NVML loaded from `library` (a path or soname): for tests. */
energy_meter *energy_open_library(const char *library, int cuda_device);
/* Whether the meter reads a device (1) or reports NaN (0). */
int energy_available(const energy_meter *m);
/* Why the meter reports NaN; "" where it is available. */
const char *energy_why(const energy_meter *m);
/* The board's enforced power limit (the cap) in W; NaN if unknown. */
double energy_power_limit_w(const energy_meter *m);
/* Opens a window: takes a first sample and starts the sampler thread.
 * Returns 0, or -1 where the meter is unavailable or a window is open. */
int energy_start(energy_meter *m);
/* Closes the window energy_start opened (a last sample after stopping the
 * thread) and fills *out; without an open window, *out is all NaN. */
void energy_stop(energy_meter *m, energy_window *out);
/* Closes an open window, shuts NVML down and frees the meter. */
void energy_close(energy_meter *m);

/* Adds window `w` to the running total `sum` (a zeroed window is empty):
 * seconds, joules and samples add up, the clock is the samples' mean, the
 * power joules / seconds; a NaN window makes the total NaN. */
void energy_window_merge(energy_window *sum, const energy_window *w);

#endif
