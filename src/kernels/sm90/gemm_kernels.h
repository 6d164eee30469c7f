/* The sm90 GEMM kernels this build holds, as a table the host code plans
 * over: one entry per (tile, stages, input types, scaling kind, operand
 * major-ness). */
#ifndef TESS_KERNELS_SM90_GEMM_KERNELS_H
#define TESS_KERNELS_SM90_GEMM_KERNELS_H

#include "kernels/sm90/gemm_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef tess_status (*tess_gemm_launch_fn)(const tess_gemm_params *p, int grid, void *stream);
/* How many of the kernel's clusters fit on the current device at once (0 on error). */
typedef int (*tess_gemm_occupancy_fn)(void);

typedef struct tess_gemm_kernel {
    int tile_m, tile_n, tile_k, stages;
    int cluster_m;        /* CTAs per cluster along M (sharing B by multicast) */
    int input;            /* the operand types: enum tess_mma_input */
    int scaling;          /* accumulation and block scaling: enum tess_scaling */
    int a_mn_major;       /* 1: A is M-contiguous (column-major) */
    int b_mn_major;       /* 1: B is N-contiguous (row-major) */
    int grouped;          /* enum tess_grouped_kind: 0 dense, else a grouped GEMM (tess_grouped_gemm) */
    int epi_rounds;       /* rounds in which the epilogue stages a 16-bit D tile through shared memory */
    int skips_empty_rows; /* 1: a consumer warpgroup whose 64 rows lie past M computes nothing (gemm_cfg.cuh) */
    tess_gemm_launch_fn launch;
    tess_gemm_occupancy_fn max_clusters;
} tess_gemm_kernel;

/* Kernels per 16-bit tile configuration: 2 input types x 4 operand majors. */
#define TESS_GEMM_KERNELS_PER_TILE 8
/* Kernels per token tile (narrow tiles for small M, run transposed): 2
 * 16-bit input types x A K- or M-major (B K-major); FP8: e4m3 x e4m3 in
 * 3 scaling kinds (promoted, block per-row x 128x128, block per-row x per-column). */
#define TESS_GEMM_TOKEN_KERNELS_PER_TILE 4
#define TESS_GEMM_FP8_TOKEN_KERNELS 3
/* Kernels per FP8 tile configuration and scaling kind: the 4 (A, B) type pairs. */
#define TESS_GEMM_FP8_PAIRS 4
/* Kernels per grouped 16-bit tile configuration (bf16, f16) and per grouped
 * FP8 one (e4m3 x e4m3: the promoted per-tensor kind and the block-scaled
 * one); the same for the grouped token tiles (a grouped GEMM run transposed). */
#define TESS_GROUPED_KERNELS_PER_TILE 2
/* Grouped token-tile kernels per family (16-bit; FP8): 3 token widths (16, 32, 64) x 2. */
#define TESS_GROUPED_TOKEN_KERNELS 6
/* At most this many kernels in a build (the planner sizes its caches by it). */
#define TESS_GEMM_MAX_KERNELS 192

/* The kernels of this build: index i from 0 to tess_gemm_sm90_kernel_count() - 1. */
int tess_gemm_sm90_kernel_count(void);
const tess_gemm_kernel *tess_gemm_sm90_kernel(int i);

#ifdef __cplusplus
}
#endif

#endif
