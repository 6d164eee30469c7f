/* The decode GEMV kernels of this build, as a table the planner ranks beside
 * the sm90 GEMM kernels (a plan's kernel index counts past that table's). */
#ifndef TESS_KERNELS_DECODE_GEMV_KERNELS_H
#define TESS_KERNELS_DECODE_GEMV_KERNELS_H

#include "kernels/decode/gemv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef tess_status (*tess_gemv_launch_fn)(const tess_gemv_params *p, void *stream);

typedef struct tess_gemv_kernel {
    tess_dtype input;  /* A's and B's type: bf16, f16 or e4m3 */
    int block_scaled;  /* 1: FP8 block factors on both operands, applied per 128-K block */
    int max_m;         /* tokens it computes at once (its accumulators: max_m per weight row) */
    int rows;          /* weight rows a CTA computes: TESS_GEMV_ROWS or, tensor cores, TESS_GEMV_MMA_ROWS */
    int tensor_cores;  /* 1: mma.sync (16-bit inputs), else float32 FMAs */
    int warps;         /* a CTA's warps: 4, or 8 for the tensor-core kernels meant for grids of one CTA per SM */
    int ctas_per_sm;   /* CTAs resident per SM, as its registers allow (the planner's wave count) */
    tess_gemv_launch_fn launch;
} tess_gemv_kernel;

/* The kernels: index i from 0 to tess_gemv_kernel_count() - 1. */
int tess_gemv_kernel_count(void);
const tess_gemv_kernel *tess_gemv_kernel_at(int i);

#ifdef __cplusplus
}
#endif

#endif
