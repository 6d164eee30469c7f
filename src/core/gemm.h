/* Internal: validation and planning of GEMM problems, separated from the
 * launch so that the CPU tests can check every refusal without a GPU. */
#ifndef TESS_CORE_GEMM_H
#define TESS_CORE_GEMM_H

#include "kernels/sm90/gemm_kernels.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks `desc` and the pointers (sa, sb: the scale arrays) against every rule of tess_gemm_scaled, for a
 * device described by `info` (NULL: skip the device checks). */
tess_status tess_gemm_validate(const tess_device_info *info, const tess_gemm_desc *desc, const void *a,
                               const float *sa, const void *b, const float *sb, const void *c, const void *d);

/* The plans that can run `desc` on `info`'s device with at most
 * `workspace_limit` bytes of workspace, best first; returns how many there
 * are (up to capacity are written). */
int tess_gemm_candidates(const tess_device_info *info, const tess_gemm_desc *desc, size_t workspace_limit,
                         tess_plan *plans, int capacity);

/* The plans of a grouped problem (already validated) on `info`'s device
 * (NULL: 132 SMs), best first; returns how many there are (up to capacity
 * are written). core/grouped.c; the CPU tests check its choices. */
int tess_grouped_candidates(const tess_device_info *info, const tess_grouped_gemm_desc *desc, tess_plan *plans,
                            int capacity);

/* Helpers the grouped GEMM (core/grouped.c) shares with the dense one. */

/* Ranks a candidate plan of cost c among the n seen so far, of which the
 * cheapest min(n, capacity) are kept in plans/cost (ties in arrival order):
 * moves the costlier ones down and returns the slot to describe it in, or
 * -1 when it ranks past capacity. */
int tess_plan_rank_slot(tess_plan *plans, double *cost, int n, int capacity, double c);

/* TMA's rules for operand `name` (16-byte aligned base, rows and batch stride of whole 16 bytes). */
tess_status tess_gemm_check_tma(const tess_matrix_desc *x, const void *ptr, int64_t batch, const char *name);
/* The scale recipes of a problem and the factor pointers' alignment. */
tess_status tess_gemm_check_scales(const tess_gemm_desc *desc, const float *sa, const float *sb);
/* Whether kernel k multiplies the problem's types, majors and scaling (dense or grouped). */
int tess_gemm_kernel_serves(const tess_gemm_kernel *k, const tess_gemm_desc *d);
/* CTAs of kernel `index` resident at once on `info`'s device (NULL: 132 SMs). */
int tess_gemm_resident_ctas(int index, const tess_device_info *info);
/* A kernel's parameters (tensor maps, shapes, scales) for a validated problem; not the work split. */
tess_status tess_gemm_params_init(tess_gemm_params *p, const tess_gemm_kernel *k, const tess_gemm_desc *desc,
                                  const void *a, const float *a_scale, const void *b, const float *b_scale,
                                  const void *c, void *d);

/* D^T = B^T A^T: the problem with A and B (and their factors), M and N, swapped. */
tess_gemm_desc tess_gemm_transposed_problem(const tess_gemm_desc *d);
/* How well a tile of tile_n columns feeds the tensor cores, relative to
 * 128x256 (measured for 64 columns and more; core/gemm.c's tile_work). */
double tess_tile_width_efficiency(int tile_n);
/* Seconds one SM's tensor cores on `info`'s device (NULL: an H100's) take
 * for `flops` at their sustained rate (16-bit, or FP8 when fp8). */
double tess_sm_compute_seconds(const tess_device_info *info, int fp8, double flops);
/* Seconds to move `bytes` through memory at the sustained copy rate. */
double tess_memory_seconds(const tess_device_info *info, double bytes);
/* Seconds for the SMs to read `bytes` from L2 (tile loads that hit). */
double tess_l2_read_seconds(const tess_device_info *info, double bytes);
/* The time of compute and memory work that overlap: the longer, plus the
 * part of the shorter that does not hide under it. */
double tess_overlapped_seconds(double compute, double memory);

#ifdef __cplusplus
}
#endif

#endif
