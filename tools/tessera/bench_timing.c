/* `tessera bench gemm`'s timing of one provider (bench_timing.h). */
#include "tools/tessera/bench_timing.h"

#include <math.h>

int bench_rounds(const bench_options *o) { return o->hold > 0 ? BENCH_HOLD_ROUNDS : o->rounds; }

/* `calls` calls of fn back to back, as one timed run. */
typedef struct chained {
    timed_fn fn;
    void *ctx;
    int calls;
} chained;

static int run_chained(void *ctx, void *stream) {
    chained *c = ctx;
    int rc = 0;
    for (int i = 0; i < c->calls && rc == 0; i++)
        rc = c->fn(c->ctx, stream);
    return rc;
}

int bench_time_round(timed_fn fn, void *ctx, const bench_options *o, energy_meter *meter, int round, double *ms,
                     double *host_us, energy_window *energy) {
    chained c = {fn, ctx, o->chain};
    int rc;
    if (o->hold > 0) {
        held_result held;
        rc = time_held(run_chained, &c, NULL, BENCH_HOLD_WARM_SECONDS, o->hold, meter, &held);
        *ms = held.ms_per_call, *host_us = NAN;
        if (round == BENCH_HOLD_ROUNDS - 1)
            *energy = held.energy;
    } else {
        energy_window w;
        rc = time_median_ms(run_chained, &c, NULL, o->warmup, o->iterations, ms, host_us, meter, &w);
        energy_window_merge(energy, &w);
    }
    *ms /= o->chain, *host_us /= o->chain;
    return rc;
}

double bench_reported_ms(const bench_options *o, double *ms, int rounds, double *best_ms) {
    *best_ms = ms[0];
    for (int r = 1; r < rounds; r++)
        *best_ms = ms[r] < *best_ms ? ms[r] : *best_ms;
    return o->hold > 0 ? ms[BENCH_HOLD_ROUNDS - 1] : median_of(ms, rounds);
}
