/* `tessera bench gemm`'s random inputs, generated on the host with the
 * session's generator (the same inputs every run) and copied to the device. */
#ifndef TESS_TOOLS_BENCH_DATA_H
#define TESS_TOOLS_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "ref/random.h"
#include "tessera.h"

/* Input sets rotated through: enough to exceed twice the L2, at most this many. */
#define BENCH_MAX_SETS 16

/* The input sets of `set_bytes` each that a problem rotates through: past twice the L2 of `info`'s
 * device, so that each call reads its inputs from memory (1 to BENCH_MAX_SETS). */
int bench_set_count(const tess_device_info *info, size_t set_bytes);

/* Fills `count` elements of type `t` at device address `dev` with normal(0, stddev) values. */
void bench_fill_normal(void *dev, tess_dtype t, int64_t count, double stddev, tess_rng *r);

/* Fills `bytes` bytes at device address `dev` with uniform values in [lo, hi] (0 <= lo <= hi <= 255). */
void bench_fill_bytes(void *dev, int64_t bytes, int lo, int hi, tess_rng *r);

#endif
