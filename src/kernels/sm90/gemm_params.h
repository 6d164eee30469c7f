/* The parameter block of the sm90 GEMM kernels, shared by the host code that
 * fills it and the kernels that read it (passed by value, __grid_constant__). */
#ifndef TESS_KERNELS_SM90_GEMM_PARAMS_H
#define TESS_KERNELS_SM90_GEMM_PARAMS_H

#include <cuda.h>
#include <stdint.h>

#include "tessera.h"

typedef struct tess_gemm_params {
    CUtensorMap tma_a; /* A: K-major (box 64 x BM) or M-major (box 64 x 64) */
    CUtensorMap tma_b; /* B: K-major (box 64 x BN) or N-major (box 64 x 64) */
    CUtensorMap tma_d; /* 16-bit D stored by TMA: 64 x 64 boxes, 128-byte swizzle */
    int m, n, k, batch;
    int m_tiles, n_tiles, k_blocks;
    int group_m;
    /* The work split (kernels/common/sched.h) over gridDim.x / cluster units:
     * the first dp_items items (cluster tiles) whole, the last sk_items stream-K. */
    int dp_items, sk_items;
    /* Stream-K workspace (sk_items > 0): one BM x BN float slot of partial
     * sums per CTA (kernels/common/stream_k.cuh), and one ready flag per
     * consumer warpgroup of each CTA, zeroed before the launch. */
    float *partials;
    int *flags;
    int a_batch_shared, b_batch_shared; /* 1: batch stride 0, every batch reads matrix 0 */
    float alpha, beta;
    /* C is read element by element when beta != 0; an f32 D is written from registers. */
    const void *c;
    void *d;
    int64_t ldc, c_batch_stride, ldd, d_batch_stride;
    int c_dtype, d_dtype; /* tess_dtype */
    int c_col_major, d_col_major;
    /* 1: D is written from registers (f32 D, or a 16-bit D that TMA cannot
     * store exactly: TMA clips stores at 16-byte granularity, so D's
     * contiguous extent must be a multiple of 8 elements, and D aligned). */
    int d_direct;
} tess_gemm_params;

#endif
