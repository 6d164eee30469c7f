/* `tessera bench gemm`'s result rows: the console line and the CSV's line
 * of one provider on one problem, and the CSV's header; shared by the GEMM
 * problems (bench_gemm.c) and the 4-bit weight ones (bench_w4a16.c). */
#ifndef TESS_TOOLS_BENCH_ROWS_H
#define TESS_TOOLS_BENCH_ROWS_H

#include <stdio.h>

#include "tessera.h"
#include "tools/tessera/bench_options.h"
#include "tools/tessera/energy.h"

/* One provider's result on one problem. */
typedef struct bench_row {
    const bench_options *o;  /* the run's settings: scales, epilogue, gate, residual, --hold */
    const tess_gemm_desc *g; /* the problem as a GEMM: sizes, types, orders, alpha, beta, bias type */
    const char *b_type;      /* B's type as the CSV names it: tess_dtype_name's, or a 4-bit B's "int4gG[z]" */
    const char *problem;     /* bench_problem_label's */
    int tessera;             /* 1: tessera's row, 0: cuBLAS's */
    const char *kernel;      /* the plan or kernel's name */
    double ms, tflops, gbs, ratio, err, host_us, best_tflops;
    const energy_window *energy;
    int budget; /* tessera's SM budget (0 in cuBLAS's rows) */
} bench_row;

/* Prints the row's console line and, with `csv`, its CSV line. */
void bench_row_write(const bench_row *r, FILE *csv);

/* Writes the CSV's header: the device, what the columns mean, their names. */
void bench_csv_header(FILE *csv, const tess_device_info *info, energy_meter *meter);

#endif
