/* The sm90 GEMM kernels this build holds, as a table the host code plans
 * over: one entry per (tile, stages, input type, operand major-ness). */
#ifndef TESS_KERNELS_SM90_GEMM_KERNELS_H
#define TESS_KERNELS_SM90_GEMM_KERNELS_H

#include "kernels/sm90/gemm_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef tess_status (*tess_gemm_launch_fn)(const tess_gemm_params *p, int grid, void *stream);

typedef struct tess_gemm_kernel {
    int tile_m, tile_n, tile_k, stages;
    tess_dtype input;     /* TESS_DTYPE_BF16 or TESS_DTYPE_F16, for A and B */
    int a_mn_major;       /* 1: A is M-contiguous (column-major) */
    int b_mn_major;       /* 1: B is N-contiguous (row-major) */
    int smem_bytes, threads;
    tess_gemm_launch_fn launch;
} tess_gemm_kernel;

extern const tess_gemm_kernel tess_gemm_sm90_kernels[];
extern const int tess_gemm_sm90_kernel_count;

#ifdef __cplusplus
}
#endif

#endif
