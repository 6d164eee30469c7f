/* `tessera bench gemm`'s random inputs, generated on the host with the
 * session's generator (the same inputs every run) and copied to the device. */
#ifndef TESS_TOOLS_BENCH_DATA_H
#define TESS_TOOLS_BENCH_DATA_H

#include <stdint.h>

#include "ref/random.h"
#include "tessera.h"

/* Fills `count` elements of type `t` at device address `dev` with normal(0, stddev) values. */
void bench_fill_normal(void *dev, tess_dtype t, int64_t count, double stddev, tess_rng *r);

/* Fills `bytes` bytes at device address `dev` with uniform values in [lo, hi] (0 <= lo <= hi <= 255). */
void bench_fill_bytes(void *dev, int64_t bytes, int lo, int hi, tess_rng *r);

#endif
