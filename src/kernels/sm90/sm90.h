/* Internal: what the sm90 family's host files share (the .c files of kernels/sm90):
 * which kernel serves a problem, how many CTAs of it fit, its parameters
 * for a problem, its cost terms, and the dense, grouped and weight-gradient
 * planners and launches that family.c registers. */
#ifndef TESS_KERNELS_SM90_SM90_H
#define TESS_KERNELS_SM90_SM90_H

#include "core/family.h"
#include "kernels/sm90/kernel_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows of tiles walked together for L2 reuse (kernels/common/sched.h):
 * measured at 8192^3 on an H200, 8 rows 744 TFLOP/s, 16 rows 733, 32 rows
 * 703 (dev/NOTES.md, "issue 4"). */
#define TESS_SM90_GROUP_M 8

/* Kernels the family's per-kernel caches hold (kernel_table.c checks the
 * generated table fits). */
#define TESS_SM90_KERNEL_SLOTS 256

/* Problems of at most this many rows are also planned transposed: M then
 * fits one token tile of at most 64 columns. */
#define TESS_SM90_TRANSPOSED_MAX_M 64

/* Kernels of 64-row cooperative tiles (one consumer warpgroup) run
 * problems of TESS_SM90_SHORT_TILE_MIN_M to TESS_SM90_SHORT_TILE_MAX_M
 * rows: there they fill the SMs with whole tiles where 128-row tiles would
 * split K and pay stream-K's fixup (65 to 128 rows is the range meant).
 * Larger problems keep the 128-row tiles, whose two consumers hide each
 * other's promotion, and smaller ones the transposed token tiles and GEMVs
 * measured best there. TESS_SM90_OFFERS_PINGPONG: whether the planner
 * offers pingpong plans (gemm_cfg::PINGPONG). Both stay closed until their
 * kernels have passed the GPU tests (dev/ab/new_kernels.patch opens them,
 * down to one row, for that run). */
#define TESS_SM90_SHORT_TILE_MIN_M 65
#define TESS_SM90_SHORT_TILE_MAX_M 64
#define TESS_SM90_OFFERS_PINGPONG 0

/* Whether kernel k multiplies the problem's input types in its operand
 * majors and scaling, dense or grouped alike. */
int tess_sm90_kernel_serves(const tess_gemm_kernel *k, const tess_gemm_desc *d);
/* CTAs of kernel `index` resident at once on `info`'s device (NULL: 132 SMs). */
int tess_sm90_resident_ctas(int index, const tess_device_info *info);
/* Whether operand x, A (R x K) or B when of_b (K x N), has K contiguous. */
int tess_sm90_operand_k_major(const tess_matrix_desc *x, int of_b);
/* Whether a dense kernel loads just the rows that exist of operand A (B
 * when of_b) in the tile where the operand's rows end (params.c's edge maps). */
int tess_sm90_loads_edge_rows_only(const tess_gemm_kernel *k, const tess_gemm_desc *d, int of_b);
/* Whether block-scaled kernel k can load the problem's factors by TMA as
 * far as their layouts say (params.c). */
int tess_sm90_factor_layouts_by_tma(const tess_gemm_kernel *k, const tess_gemm_desc *d);

/* A kernel's parameters (tensor maps, shapes, scales, epilogue) for a
 * validated problem; not the work split. */
tess_status tess_sm90_params_init(tess_gemm_params *p, const tess_gemm_kernel *k, const tess_gemm_desc *desc,
                                  const void *a, const float *a_scale, const void *b, const float *b_scale,
                                  const void *c, void *d, const void *bias, const void *residual);
/* tma_aux for a dense problem's aux output, where TMA can store it (params.c). */
void tess_sm90_params_set_aux(tess_gemm_params *p, const tess_gemm_desc *desc, void *aux);

/* D^T = B^T A^T: the problem with A and B (and their factors), M and N, swapped. */
tess_gemm_desc tess_sm90_transposed_problem(const tess_gemm_desc *d);
/* How well a tile of tile_n columns feeds the tensor cores, relative to 128x256. */
double tess_sm90_tile_width_efficiency(int tile_n);
/* A tile's time with its epilogue rounds over its time without, for tiles
 * of k_blocks K blocks (cost_dense.c). */
double tess_sm90_epilogue_factor(const tess_gemm_kernel *k, int64_t k_blocks);
/* Seconds one SM's tensor cores on `info`'s device take for `flops` at
 * their sustained rate for a kernel input (enum tess_mma_input: 16-bit,
 * FP8 and INT8 at twice that rate, TF32 at half). */
double tess_sm90_compute_seconds(const tess_device_info *info, int input, double flops);
/* The suffix of a plan name for a kernel's scaling kind ("", "_pr", "_blk", "_blkc"). */
const char *tess_sm90_scaling_suffix(int scaling);
/* Starts plan p for kernel k: zeroed, then the fields every sm90 plan
 * shares (struct_size, the tile, stages, cluster, tiles and grid). */
void tess_sm90_plan_begin(tess_plan *p, const tess_gemm_kernel *k, int64_t tiles, int64_t grid);
/* The cluster part of a grouped or weight-gradient plan's name: "_cNx1",
 * or "" for clusters of 1; written into buf (16 bytes). */
const char *tess_sm90_cluster_suffix(const tess_gemm_kernel *k, char buf[16]);

/* How a kernel runs a dense problem: its work split, grid and workspace. */
typedef struct tess_sm90_launch {
    tess_work_split split;
    int grid;
    size_t workspace;
} tess_sm90_launch;

/* Tiles kernel k walks for problem d, counted in whole clusters along M. */
int64_t tess_sm90_work_tiles(const tess_gemm_kernel *k, const tess_gemm_desc *d);
/* How kernel `kernel` would run problem d, data-parallel or stream-K; 0
 * where that mode does not apply (cost_dense.c). */
int tess_sm90_dense_launch(const tess_device_info *info, const tess_gemm_desc *d, int kernel, int stream_k,
                           tess_sm90_launch *x);
/* Estimated seconds of kernel k running problem d as launch x says
 * (transposed: d is a small-M problem's transpose; cost_dense.c). */
double tess_sm90_dense_estimate(const tess_device_info *info, const tess_gemm_kernel *k, const tess_gemm_desc *d,
                                const tess_sm90_launch *x, int transposed);

/* Offers the dense plans of a problem (plan_dense.c). */
void tess_sm90_dense_plans(const tess_device_info *info, const tess_gemm_desc *d, size_t workspace_limit,
                           tess_plan_list *out);
/* The kernel index of the dense plan named plan->name for problem d (found
 * again among the plans tess_sm90_dense_plans makes), or -1. */
int tess_sm90_dense_plan_kernel(const tess_device_info *info, const tess_gemm_desc *d, const tess_plan *plan);
/* Queues a dense plan made by tess_sm90_dense_plans (found again by name). */
tess_status tess_sm90_dense_run(tess_handle h, const tess_gemm_desc *d, const tess_plan *plan,
                                const tess_operands *o);
/* Offers the grouped plans of a problem (plan_grouped.c). */
void tess_sm90_grouped_plans(const tess_device_info *info, const tess_grouped_gemm_desc *d, tess_plan_list *out);
/* The kernel index of the grouped plan named plan->name for problem d, or -1. */
int tess_sm90_grouped_plan_kernel(const tess_device_info *info, const tess_grouped_gemm_desc *d,
                                  const tess_plan *plan);
/* Queues a grouped plan made by tess_sm90_grouped_plans (found again by name). */
tess_status tess_sm90_grouped_run(tess_handle h, const tess_grouped_gemm_desc *d, const tess_plan *plan,
                                  const tess_operands *o);
/* Offers the k-grouped plans of a grouped weight gradient (plan_wgrad.c). */
void tess_sm90_wgrad_plans(const tess_device_info *info, const tess_grouped_wgrad_desc *d, tess_plan_list *out);
/* The kernel index of the weight-gradient plan named plan->name for problem d, or -1. */
int tess_sm90_wgrad_plan_kernel(const tess_device_info *info, const tess_grouped_wgrad_desc *d,
                                const tess_plan *plan);
/* Queues a weight-gradient plan made by tess_sm90_wgrad_plans (found again by name). */
tess_status tess_sm90_wgrad_run(tess_handle h, const tess_grouped_wgrad_desc *d, const tess_plan *plan,
                                const tess_operands *o);

#ifdef __cplusplus
}
#endif

#endif
