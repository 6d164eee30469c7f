/* `tessera bench gemm`'s timing of one provider: a round in bursts or held
 * at the power cap, as the options ask, and the figures a row reports from
 * the rounds. Shared by the GEMM problems and the 4-bit weight ones. */
#ifndef TESS_TOOLS_BENCH_TIMING_H
#define TESS_TOOLS_BENCH_TIMING_H

#include "tools/tessera/bench_options.h"
#include "tools/tessera/energy.h"
#include "tools/tessera/timing.h"

/* --hold: the untimed warm-up before the timed part (s). */
#define BENCH_HOLD_WARM_SECONDS 1.0
/* --hold: rounds per provider, the second in reverse order (round 2 reported). */
#define BENCH_HOLD_ROUNDS 2

/* The rounds a provider runs: --rounds in bursts, BENCH_HOLD_ROUNDS with --hold. */
int bench_rounds(const bench_options *o);

/* Round `round` of `fn` (one call on ctx, each on the next input set):
 * o->chain calls back to back a timed run (--chain: as a decode step queues
 * its layers; a launch may overlap the previous call's end), in bursts
 * (time_median_ms; the round's energy window merged into *energy) or held
 * (time_held; *energy is the last round's window, host time NaN). *ms and
 * *host_us are per call. 0, or -1 after printing why. */
int bench_time_round(timed_fn fn, void *ctx, const bench_options *o, energy_meter *meter, int round, double *ms,
                     double *host_us, energy_window *energy);

/* The row's time from the rounds' (the median in bursts, round 2 held) and the best round's. */
double bench_reported_ms(const bench_options *o, double *ms, int rounds, double *best_ms);

#endif
