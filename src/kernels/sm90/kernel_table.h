/* The sm90 GEMM kernels this build holds, as a table the family's planner
 * walks: one entry per (tile, stages, cluster, input types, scaling kind,
 * operand majors, grouped kind), instantiated from instances.list. */
#ifndef TESS_KERNELS_SM90_KERNEL_TABLE_H
#define TESS_KERNELS_SM90_KERNEL_TABLE_H

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
    int pingpong;         /* 1: each consumer warpgroup owns whole tiles, mainloops in turn (gemm_cfg.cuh);
                             data-parallel only */
    int gates;            /* 1: its epilogue pairs (gate, up) columns (tess_gate; gemm_cfg.cuh GATES) */
    int registers;        /* 1: it stores D from registers (STORES_FROM_REGISTERS), which can also pair rows */
    int fp8_out;          /* an FP8 D: 0 not written, 1 without fused steps, 2 with them too (gemm_cfg.cuh
                             WRITES_FP8, FUSES_FP8) */
    tess_gemm_launch_fn launch;
    tess_gemm_occupancy_fn max_clusters;
} tess_gemm_kernel;

/* The kernels of this build: index i from 0 to tess_sm90_kernel_count() - 1. */
int tess_sm90_kernel_count(void);
const tess_gemm_kernel *tess_sm90_kernel(int i);

#ifdef __cplusplus
}
#endif

#endif
