/* Reproducible random inputs for tests and benchmarks (xoshiro256**, normal by Box-Muller). */
#ifndef TESS_REF_RANDOM_H
#define TESS_REF_RANDOM_H

#include <stdint.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tess_rng {
    uint64_t s[4];
} tess_rng;

/* Seeds the generator; any 64-bit seed (0 included) gives a full-period state. */
void tess_rng_seed(tess_rng *r, uint64_t seed);
uint64_t tess_rng_next(tess_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double tess_rng_uniform(tess_rng *r);
/* Standard normal. */
double tess_rng_normal(tess_rng *r);
/* Uniform integer in [lo, hi]. */
int64_t tess_rng_range(tess_rng *r, int64_t lo, int64_t hi);
/* Fills `count` elements of `dtype` at `dst` with normal(0, stddev) values rounded to the type. */
void tess_fill_normal(void *dst, tess_dtype dtype, int64_t count, double stddev, tess_rng *r);

#ifdef __cplusplus
}
#endif

#endif
