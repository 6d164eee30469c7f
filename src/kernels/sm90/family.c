/* The sm90 kernel family (Hopper, sm_90a): persistent warp-specialized
 * TMA + wgmma GEMMs, dense, grouped and k-grouped (weight gradients), 16-bit, FP8, TF32 and INT8, with stream-K and
 * transposed small-M plans. Its registration, and what its planners share:
 * which kernel serves a problem, how many of its CTAs fit, the transposed
 * problem. */
#include <stdio.h>
#include <string.h>

#include "core/cost.h"
#include "core/dtype.h"
#include "core/scale.h"
#include "kernels/sm90/sm90.h"

/* The kernels' input pair (enum tess_mma_input) for operand types ta, tb; -1 if none. */
static int mma_input(tess_dtype ta, tess_dtype tb) {
    if (ta == TESS_DTYPE_BF16 && tb == TESS_DTYPE_BF16)
        return TESS_MMA_BF16;
    if (ta == TESS_DTYPE_F16 && tb == TESS_DTYPE_F16)
        return TESS_MMA_F16;
    if (tess_dtype_is_fp8(ta) && tess_dtype_is_fp8(tb))
        return TESS_MMA_E4M3_E4M3 + 2 * (ta == TESS_DTYPE_E5M2) + (tb == TESS_DTYPE_E5M2);
    if (ta == TESS_DTYPE_F32 && tb == TESS_DTYPE_F32) /* validated: the descriptor allows TF32 */
        return TESS_MMA_TF32;
    if (ta == TESS_DTYPE_S8 && tb == TESS_DTYPE_S8)
        return TESS_MMA_S8;
    return -1;
}

/* The scaling kind (enum tess_scaling) a problem needs: block scales promote
 * with their factors, FP8 otherwise promotes unless fast_accum. */
static int needed_scaling(const tess_gemm_desc *d) {
    if (!tess_dtype_is_fp8(d->a.dtype))
        return TESS_SCALING_PLAIN;
    if (tess_scale_is_block(d->a_scale.mode))
        return d->b_scale.mode == TESS_SCALE_BLOCK_1x128 ? TESS_SCALING_BLOCK_ROWS_COLS : TESS_SCALING_BLOCK_ROWS;
    return d->fast_accum ? TESS_SCALING_PLAIN : TESS_SCALING_PROMOTE;
}

/* MN-major: A column-major, B row-major (the M or N index contiguous). A
 * kernel with per-column B factors also serves 128x128 B (its producer
 * spreads each block's factor over the block's columns). */
int tess_sm90_kernel_serves(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
    /* An FP8 D: only kernels that write one (k->fp8_out), with fused steps
     * those that also run them; its 1x128 factors: each row's 128-column
     * blocks inside one tile row of one consumer warpgroup (whole 128-column
     * tiles, not the token tiles, whose rows are D's columns). */
    const int fp8_out = tess_epilogue_fp8_form(d);
    if ((fp8_out != TESS_EPI_FP8_NONE && k->fp8_out < (tess_epilogue_has_steps(d) ? 2 : 1)) ||
        (fp8_out == TESS_EPI_FP8_BLOCK && (k->tile_n % TESS_SCALE_BLOCK != 0 || k->grouped == TESS_GROUPED_TOKENS)))
        return 0;
    const int scaling = needed_scaling(d);
    const int serves = k->scaling == scaling ||
                       (scaling == TESS_SCALING_BLOCK_ROWS && k->scaling == TESS_SCALING_BLOCK_ROWS_COLS);
    return k->input == mma_input(d->a.dtype, d->b.dtype) && serves &&
           k->a_mn_major == (d->a.order == TESS_ORDER_COL) &&
           k->b_mn_major == (d->b.order == TESS_ORDER_ROW);
}

/* CTAs of clusters of 4 an H100 SXM holds at once (cudaOccupancyMaxActiveClusters: 30 clusters,
 * as measured by the 128x256 c4 kernels; bench/results/h100-dense.csv's 120-CTA grids), for the
 * planners' stand-in device. */
#define TESS_SM90_STAND_IN_C4_CTAS 120

/* One per SM, in whole clusters (clusters must fit in one GPC, so not every
 * SM may be usable), within info's sm_count (a handle's SM budget). The
 * runtime's count is asked once per kernel and device; sm_count when no
 * device answers (the stand-in H100: 132 SMs, clusters of 4 on 120 of them). */
int tess_sm90_resident_ctas(int index, const tess_device_info *info) {
    static int cached[TESS_SM90_KERNEL_SLOTS][2]; /* [kernel][device + 1, CTAs the runtime places] */
    const tess_gemm_kernel *k = tess_sm90_kernel(index);
    const int sms = tess_device_sms(info), whole = sms / k->cluster_m * k->cluster_m;
    if (!info && k->cluster_m == 4)
        return TESS_SM90_STAND_IN_C4_CTAS;
    if (!info || index >= TESS_SM90_KERNEL_SLOTS)
        return whole;
    if (cached[index][0] != info->device + 1) {
        cached[index][1] = k->max_clusters() * k->cluster_m;
        cached[index][0] = info->device + 1;
    }
    const int placed = cached[index][1];
    return placed > 0 && placed < whole ? placed : whole;
}

/* A matrix read the other way: X^T over the same memory. */
static tess_matrix_desc transposed_matrix(const tess_matrix_desc *x) {
    tess_matrix_desc t = *x;
    t.rows = x->cols, t.cols = x->rows;
    t.order = x->order == TESS_ORDER_ROW ? TESS_ORDER_COL : TESS_ORDER_ROW;
    return t;
}

/* The problem a transposed plan's kernel runs (and a grouped token tile's):
 * D^T = B^T A^T (+ beta C^T), with the operands' roles, their factors and M
 * and N swapped (per-row factors of A become per-column factors of the new
 * B, and so on; a bias per column of D is one per row of D^T). For small M
 * this puts B's N columns (the weights) on the kernels' 128-row side and the
 * M tokens in a narrow N tile, so no wgmma row is padding. */
tess_gemm_desc tess_sm90_transposed_problem(const tess_gemm_desc *d) {
    tess_gemm_desc t = *d;
    t.m = d->n, t.n = d->m;
    t.a = transposed_matrix(&d->b), t.b = transposed_matrix(&d->a);
    t.c = transposed_matrix(&d->c), t.d = transposed_matrix(&d->d);
    if (d->residual.rows > 0)
        t.residual = transposed_matrix(&d->residual);
    if (d->aux.rows > 0)
        t.aux = transposed_matrix(&d->aux);
    t.a_scale = d->b_scale, t.b_scale = d->a_scale;
    if (d->epilogue.bias != TESS_BIAS_NONE) /* D's columns are D^T's rows */
        t.epilogue.bias = d->epilogue.bias == TESS_BIAS_COLUMNS ? TESS_BIAS_ROWS : TESS_BIAS_COLUMNS;
    return t;
}

const char *tess_sm90_scaling_suffix(int scaling) {
    static const char *const suffix[] = {"", "_pr", "_blk", "_blkc"};
    return scaling >= 0 && scaling < 4 ? suffix[scaling] : "_?";
}

void tess_sm90_plan_begin(tess_plan *p, const tess_gemm_kernel *k, int64_t tiles, int64_t grid) {
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->tile_m = k->tile_m, p->tile_n = k->tile_n, p->tile_k = k->tile_k, p->stages = k->stages;
    p->cluster_m = k->cluster_m;
    p->tiles = (int32_t)tiles;
    p->grid = (int32_t)grid;
}

const char *tess_sm90_cluster_suffix(const tess_gemm_kernel *k, char buf[16]) {
    buf[0] = '\0';
    if (k->cluster_m > 1)
        snprintf(buf, 16, "_c%dx1", k->cluster_m);
    return buf;
}

/* The compute capabilities this build compiled the family for (CMake:
 * family.cmake's ARCHS within TESS_CUDA_ARCHS, e.g. 90 for sm_90a). */
static const int built_ccs[] = {TESS_FAMILY_CCS};

static int runs_on(const tess_device_info *info) {
    return tess_family_cc_built(info, built_ccs, (int)(sizeof built_ccs / sizeof built_ccs[0]));
}

static void plans(const tess_device_info *info, const tess_problem *problem, size_t workspace_limit,
                  tess_plan_list *out) {
    if (problem->gemm)
        tess_sm90_dense_plans(info, problem->gemm, workspace_limit, out);
    else if (problem->wgrad)
        tess_sm90_wgrad_plans(info, problem->wgrad, out);
    else
        tess_sm90_grouped_plans(info, problem->grouped, out);
}

static tess_status run(tess_handle handle, const tess_problem *problem, const tess_plan *plan,
                       const tess_operands *operands) {
    if (problem->wgrad)
        return tess_sm90_wgrad_run(handle, problem->wgrad, plan, operands);
    return problem->gemm ? tess_sm90_dense_run(handle, problem->gemm, plan, operands)
                         : tess_sm90_grouped_run(handle, problem->grouped, plan, operands);
}

const tess_family tess_family_sm90 = {
    "sm90",
    TESS_FAMILY_DENSE_16BIT | TESS_FAMILY_DENSE_FP8 | TESS_FAMILY_GROUPED | TESS_FAMILY_SMALL_M,
    "compute capability 9.0 (sm_90a: H100, H200)",
    runs_on,
    plans,
    run,
};
