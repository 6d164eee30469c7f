/* The parameter block of the decode GEMV kernels (kernels/decode/gemv.cu):
 * D = alpha * A B^T (+ beta C) for a few tokens, read straight from global
 * memory without tensor cores. Shared by the host code that fills it and the
 * kernels that read it (passed by value). */
#ifndef TESS_KERNELS_DECODE_GEMV_PARAMS_H
#define TESS_KERNELS_DECODE_GEMV_PARAMS_H

#include <stdint.h>

#include "core/scale.h"
#include "kernels/common/epilogue.h"
#include "tessera.h"

/* Weight rows (columns of D) one CTA computes, and its threads: four warps
 * that split each row's K between them. The tensor-core kernels take 16
 * rows a CTA (the m16 side of mma.sync), the others 4. */
#define TESS_GEMV_ROWS 4
#define TESS_GEMV_MMA_ROWS 16
#define TESS_GEMV_THREADS 128
/* The tensor-core kernels' K step: 64 bytes of each of a warp's 16 rows,
 * 16 of them per lane (the 4 lanes of a row's quad); 32 16-bit elements or
 * 64 e4m3. */
#define TESS_GEMV_MMA_STEP_BYTES 64
/* K steps of 32 elements (64 bytes of each of a warp's 16 rows) a thread of
 * the tensor-core kernels keeps in flight: 128 threads x 8 x 32 bytes =
 * 32 KB a CTA, so that one CTA per SM (N = 2112: 132 CTAs) holds as much
 * in flight as the copy rate needs over ~1.5 us of loaded latency (3 TB/s
 * x 1.5 us / 132 SMs = 34 KB). */
#define TESS_GEMV_MMA_DEPTH 8
/* e4m3 at 16 tokens keeps 6: its per-step factors and fresh accumulators
 * take the registers that 8 would need (ptxas spills at 8). */
#define TESS_GEMV_MMA_DEPTH_E4M3_16 6
#define TESS_GEMV_MMA_DEPTH_OF(e4m3, token_tiles) \
    ((e4m3) && (token_tiles) == 2 ? TESS_GEMV_MMA_DEPTH_E4M3_16 : TESS_GEMV_MMA_DEPTH)

typedef struct tess_gemv_params {
    /* A: the m tokens, row-major (K contiguous), rows lda elements apart.
     * B: the weights as n rows of K contiguous elements, ldb apart (B
     * column-major in tess_gemm_desc terms). Both 16-byte aligned, with
     * lda, ldb and k whole 16-byte chunks. */
    const void *a, *b;
    int64_t lda, ldb;
    int m, n, k;
    /* D = alpha * sum + beta * C (kernels/common/epilogue.h). */
    tess_epilogue epi;
    /* FP8 dequantization factors (data NULL: all 1): block factors are
     * applied per 128-K block, the others (per tensor, per row or column)
     * to the finished sums. */
    tess_scale_operand scale_a, scale_b;
    int early_launch; /* host only: launch with programmatic stream serialization (tess_handle_early_launch) */
} tess_gemv_params;

#endif
