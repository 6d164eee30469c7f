/* `tessera bench gemm --B=int4:col`: the 4-bit weight (W4A16) problems. */
#ifndef TESS_TOOLS_BENCH_W4A16_H
#define TESS_TOOLS_BENCH_W4A16_H

#include <stdint.h>
#include <stdio.h>

#include "ref/random.h"
#include "tessera.h"
#include "tools/tessera/bench_options.h"
#include "tools/tessera/energy.h"

/* Times tess_gemm_w4a16 on the m x n x k problem of `o` (A's type for x and
 * the scales, --group-size, --zeros, the epilogue) and writes its row
 * (`problem`: its label) to stdout and `csv`; a setting a 4-bit B cannot
 * take, and the API's refusals, are said in its place. 0, or 1 where the
 * device ran out of memory. */
int bench_w4a16_one(tess_handle h, const tess_device_info *info, const bench_options *o, int64_t m, int64_t n, int64_t k,
                    FILE *csv, tess_rng *rng, energy_meter *meter, const char *problem);

#endif
