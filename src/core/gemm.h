/* Internal: validation and planning of dense and grouped GEMM problems,
 * apart from the launch, so that the CPU tests can check every refusal and
 * every plan without a GPU. */
#ifndef TESS_CORE_GEMM_H
#define TESS_CORE_GEMM_H

#include "core/family.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Aligned stand-ins for every pointer of a call, to validate a problem
 * without its data (the plan queries: plans do not depend on pointers). */
extern const tess_operands tess_stand_ins;

/* Reads the caller's descriptor (any version's struct_size, core/abi.h)
 * into this version's `full`. */
tess_status tess_gemm_accept(const tess_gemm_desc *desc, tess_gemm_desc *full);
/* Checks `desc` and the pointers (sa, sb: the scale arrays) against every rule of tess_gemm_scaled, for a
 * device described by `info` (NULL: skip the device checks). */
tess_status tess_gemm_validate(const tess_device_info *info, const tess_gemm_desc *desc, const void *a,
                               const float *sa, const void *b, const float *sb, const void *c, const void *d);
/* One matrix of a product as the checks see it: its descriptor, the
 * matrices in its batch, the rows x cols the problem needs, its name and
 * the names of that shape ("A", "M x K"). */
typedef struct tess_operand_shape {
    const tess_matrix_desc *desc;
    int64_t batch, rows, cols;
    const char *name, *shape;
} tess_operand_shape;
/* Checks each of the n matrices (tess_matrix_check), then each one's shape
 * (tess_matrix_check_shape): the first refusal. */
tess_status tess_gemm_check_matrices(const tess_operand_shape *x, int n);
/* Whether a 1x128 factor layout x puts two of its mn x blocks factors in
 * one float: rows apart by stride_mn, blocks by stride_k, one nested in the
 * other's gap (in doubles: the strides are the caller's, any int64). */
int tess_scale_factors_overlap(const tess_scale_desc *x, int64_t mn, int64_t blocks);
/* Refuses `batches` output matrices shaped as x that overlap: a batch_stride
 * under one matrix's span, where batches > 1. The sentence names the
 * matrix ("caller: name", caller NULL: "name") and what overlaps ("output
 * matrices"). */
tess_status tess_check_batches_apart(const tess_matrix_desc *x, int64_t batches, const char *caller, const char *name,
                                     const char *what);
/* TMA's rules for operand `name` (16-byte aligned base, rows and batch stride of whole 16 bytes). */
tess_status tess_gemm_check_tma(const tess_matrix_desc *x, const void *ptr, int64_t batch, const char *name);
/* The scale recipes of a problem and the factor pointers' alignment. */
tess_status tess_gemm_check_scales(const tess_gemm_desc *desc, const float *sa, const float *sb);

/* A gated epilogue's rules (tess_gate) for a product of N columns: a known
 * gate, even N, no C (beta 0), a finite gate_limit >= 0; without a gate,
 * gate_limit 0. */
tess_status tess_gemm_check_gate(int gate, float limit, int64_t n, float beta, const char *caller);
/* The output's columns for a product of N columns: N, or N / 2 with a gate. */
static inline int64_t tess_gemm_out_cols(int gate, int64_t n) { return gate != TESS_GATE_NONE ? n / 2 : n; }
/* The name of that shape in sentences: "M x N", or "M x N/2 (...)" with a gate. */
static inline const char *tess_gemm_out_shape(int gate) {
    return gate != TESS_GATE_NONE ? "M x N/2 (a gated epilogue's)" : "M x N";
}
/* The residual of a dense problem (tess_gemm_desc.residual): none (rows =
 * cols = 0), or an M x N matrix (M x N/2 with a gate) of bf16, f16 or f32 valid for the batch, at
 * a non-NULL pointer aligned to its elements. */
tess_status tess_gemm_check_residual(const tess_gemm_desc *desc, const void *residual, const char *caller);
/* Whether a dense problem asks for the aux output (tess_gemm_desc.aux: rows or cols set). */
static inline int tess_gemm_has_aux(const tess_gemm_desc *desc) { return desc->aux.rows != 0 || desc->aux.cols != 0; }
/* The aux output of a validated problem (its D, C, epilogue and residual
 * checked) with the call's pointers `o` (tess_stand_ins: the plan queries,
 * whose pointers are not checked): none, and no aux pointer; or an M x N
 * matrix of D's dtype and order for D's batch, its batches apart, at an
 * aligned pointer whose storage overlaps neither D, nor C where C is read,
 * nor the residual; for a problem with an activation, no gate and a D that
 * is not FP8. */
tess_status tess_gemm_check_aux(const tess_gemm_desc *desc, const tess_operands *o, const char *caller);
/* An FP8 D's form (desc->d_scale, named `field` in sentences): TENSOR or
 * BLOCK_1x128 with non-negative strides, no gate; other D types leave it
 * zero. */
tess_status tess_gemm_check_d_scale(const tess_gemm_desc *desc, const char *caller, const char *field);
/* An FP8 D's pointers (tess_epilogue_ptrs) against its validated form
 * (tess_gemm_desc.d_scale): each where the form reads or writes it, NULL
 * where it does not, 4-byte aligned; block factors' strides that keep them
 * apart. For other D types, all NULL. */
tess_status tess_gemm_check_fp8_out(const tess_gemm_desc *desc, const float *d_scale, const float *d_amax,
                                    const float *d_scale_out, const char *caller);
/* A fused epilogue's rules (tess_epilogue_desc) for a problem of m x n
 * outputs in `batch` batches (grouped: groups), with the bias pointer of
 * the call (a stand-in for the plan queries): a known activation and bias
 * mode (grouped: per column only), a 16-bit or f32 bias, a batch stride of
 * 0 or at least one vector, and an aligned pointer where a bias is read. */
tess_status tess_gemm_check_epilogue(const tess_epilogue_desc *e, const void *bias, int64_t m, int64_t n,
                                     int64_t batch, int grouped, const char *caller);

/* The plans that can run a validated `desc` on `info`'s device (NULL: a
 * 132-SM H100) with at most `workspace_limit` bytes of workspace, every
 * family's, best first; returns how many there are (up to capacity are written). */
int tess_gemm_candidates(const tess_device_info *info, const tess_gemm_desc *desc, size_t workspace_limit,
                         tess_plan *plans, int capacity);

/* Reads the caller's grouped descriptor into this version's `full`. */
tess_status tess_grouped_gemm_accept(const tess_grouped_gemm_desc *desc, tess_grouped_gemm_desc *full);
/* The plans of a validated grouped problem on `info`'s device (NULL: a
 * 132-SM H100), best first; returns how many there are (up to capacity are written). */
int tess_grouped_candidates(const tess_device_info *info, const tess_grouped_gemm_desc *desc, tess_plan *plans,
                            int capacity);
/* The dense view of a grouped problem: batch = groups, A = X, B = W, D = Y;
 * a contiguous layout's X, Y and X's per-row factors are one matrix shared
 * by every group (batch stride 0; groups differ by their rows). */
tess_gemm_desc tess_grouped_as_batch(const tess_grouped_gemm_desc *g);
/* Tile rows a grouped problem can have at most, for tiles of `tile_m` rows
 * (tokens): a contiguous X's, plus one partial tile per group; a masked
 * layout's groups' batches each whole. */
int64_t tess_grouped_max_tile_rows(const tess_grouped_gemm_desc *d, int tile_m);

/* Reads the caller's weight-gradient descriptor into this version's `full`. */
tess_status tess_grouped_wgrad_accept(const tess_grouped_wgrad_desc *desc, tess_grouped_wgrad_desc *full);
/* Checks an accepted weight-gradient descriptor and the call's pointers
 * (dY, X, C, dW and offs as a, b, c, d and group_rows; tess_stand_ins for
 * the plan queries) against every rule of tess_grouped_wgrad, for a device
 * described by `info` (NULL: skip the device checks). */
tess_status tess_grouped_wgrad_validate(const tess_device_info *info, const tess_grouped_wgrad_desc *desc,
                                        const tess_operands *o);
/* The plans of a validated weight gradient on `info`'s device (NULL: a
 * 132-SM H100), best first; returns how many there are (up to capacity are written). */
int tess_grouped_wgrad_candidates(const tess_device_info *info, const tess_grouped_wgrad_desc *desc,
                                  tess_plan *plans, int capacity);
/* The dense batched view a k-grouped kernel runs: M = n, N = k, K = T
 * (at least 1, so that T = 0 still maps the operands), batch = groups; A =
 * dY^T (column-major n x T over dY's memory) and B = X, both shared by the
 * batch (stride 0); C and D = C and dW. With T = 0, A and B are stand-ins
 * of one token whose leading dimensions meet TMA's rules (never read). */
tess_gemm_desc tess_grouped_wgrad_as_batch(const tess_grouped_wgrad_desc *w);

#ifdef __cplusplus
}
#endif

#endif
