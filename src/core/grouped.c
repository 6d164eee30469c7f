/* The grouped GEMM entry points (Mixture-of-Experts): descriptors,
 * validation, plan queries and the run call. Plans come from the kernel
 * families (core/family.h); a family runs a grouped problem as its dense
 * view (tess_grouped_as_batch) plus the group sizes its kernels read on the
 * device. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/abi.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/family.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "core/matrix.h"
#include "core/scale.h"

TESS_API tess_status tess_grouped_gemm_desc_init(tess_grouped_gemm_desc *desc) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm_desc_init: desc is NULL");
    memset(desc, 0, sizeof *desc);
    desc->struct_size = sizeof *desc;
    desc->groups = 1;
    return TESS_STATUS_SUCCESS;
}


tess_gemm_desc tess_grouped_as_batch(const tess_grouped_gemm_desc *g) {
    tess_gemm_desc d;
    tess_gemm_desc_init(&d);
    d.m = g->m, d.n = g->n, d.k = g->k, d.batch = g->groups;
    d.a = g->x, d.b = g->w, d.d = g->y;
    d.a_scale = g->x_scale, d.b_scale = g->w_scale;
    if (g->layout == TESS_GROUP_CONTIGUOUS) {
        d.a.batch_stride = 0, d.d.batch_stride = 0;
        if (d.a_scale.mode != TESS_SCALE_TENSOR)
            d.a_scale.batch_stride = 0;
    }
    return d;
}

/* Tile rows a grouped problem can have at most, for tiles of `tile_m` rows
 * (tokens): a contiguous X's, plus one partial tile per group; a masked
 * layout's groups' batches each whole. */
int64_t tess_grouped_max_tile_rows(const tess_grouped_gemm_desc *d, int tile_m) {
    const int64_t per_batch = (d->m + tile_m - 1) / tile_m;
    return d->layout == TESS_GROUP_MASKED ? per_batch * d->groups : per_batch + d->groups;
}

/* The kernels count rows in 32-bit ints, up to a tile past a group's last
 * row: with clusters of 2, the first row of a cluster's second tile lies up
 * to 127 rows past it and that tile's rows 127 more, so M stays 256 below 2^31. */
#define TESS_GROUPED_MAX_M ((int64_t)INT32_MAX - 256)

tess_status tess_grouped_gemm_accept(const tess_grouped_gemm_desc *desc, tess_grouped_gemm_desc *full) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: desc is NULL");
    return tess_struct_in(full, sizeof *full, desc, TESS_GROUPED_GEMM_DESC_SIZE_V1, "tess_grouped_gemm: desc",
                          "tess_grouped_gemm_desc_init");
}

/* Every rule of tess_grouped_gemm for an accepted descriptor, for a device
 * described by `info` (NULL: skip the device checks). */
static tess_status grouped_validate(const tess_device_info *info, const tess_grouped_gemm_desc *desc, const void *x,
                                    const float *xs, const void *w, const float *ws, const int32_t *rows,
                                    const void *y) {
    if (desc->layout != TESS_GROUP_CONTIGUOUS && desc->layout != TESS_GROUP_MASKED)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: layout=%d is not a tess_group_layout (CONTIGUOUS 0, MASKED 1)",
                         (int)desc->layout);
    if (desc->groups < 1 || desc->groups > TESS_GROUPED_MAX_GROUPS)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: groups=%" PRId64 " must be 1 to %d",
                         desc->groups, TESS_GROUPED_MAX_GROUPS);
    const int64_t m = desc->m, n = desc->n, k = desc->k, g = desc->groups;
    if (m < 1 || n < 1 || k < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 ": all must be >= 1", m, n, k);
    if (m > TESS_GROUPED_MAX_M || n > INT32_MAX || k > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 ": M must be at most 2^31 - 257 "
                         "and N and K below 2^31",
                         m, n, k);
    if (desc->expected_m < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: expected_m=%" PRId64 " must be >= 0 (0: unknown)",
                         desc->expected_m);
    if (!x || !w || !y || !rows)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: X, W, Y and group_rows must not be NULL");
    if ((uintptr_t)rows % sizeof(int32_t))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: group_rows=%p is not 4-byte aligned int32",
                         (const void *)rows);
    const int masked = desc->layout == TESS_GROUP_MASKED;
    const int64_t xy_batch = masked ? g : 1;
    tess_status s;
    if ((s = tess_matrix_check(&desc->x, xy_batch, "X")) || (s = tess_matrix_check(&desc->w, g, "W")) ||
        (s = tess_matrix_check(&desc->y, xy_batch, "Y")) ||
        (s = tess_matrix_check_shape(&desc->x, m, k, "X", "M x K")) ||
        (s = tess_matrix_check_shape(&desc->w, k, n, "W", "K x N (each expert's N x K weight, K-major)")) ||
        (s = tess_matrix_check_shape(&desc->y, m, n, "Y", "M x N")))
        return s;
    if (desc->x.order != TESS_ORDER_ROW || desc->y.order != TESS_ORDER_ROW)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: X and Y must be row-major (tokens by features); X is %s-major, Y %s-major",
                         desc->x.order == TESS_ORDER_ROW ? "row" : "column",
                         desc->y.order == TESS_ORDER_ROW ? "row" : "column");
    if (desc->w.order != TESS_ORDER_COL)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: W must be K-major (the [G, N, K] layout: each expert's weight as a "
                         "column-major K x N operand); an N-major W needs a K-major copy (tess_transpose)");
    if (masked && g > 1 && desc->y.batch_stride < tess_matrix_span(&desc->y, 1))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "Y: batch_stride=%" PRId64 " makes the groups' outputs overlap; it must be at least %" PRId64,
                         desc->y.batch_stride, tess_matrix_span(&desc->y, 1));
    const tess_dtype tx = desc->x.dtype, tw = desc->w.dtype, ty = desc->y.dtype;
    const int fp8 = tx == TESS_DTYPE_E4M3 && tw == TESS_DTYPE_E4M3;
    if (!fp8 && !(tess_dtype_is_16bit(tx) && tx == tw))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: X is %s and W %s; grouped kernels multiply bf16 x bf16, f16 x f16 or "
                         "e4m3 x e4m3",
                         tess_dtype_name(tx), tess_dtype_name(tw));
    if (ty != TESS_DTYPE_F32 && !tess_dtype_is_16bit(ty))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_grouped_gemm: Y of type %s; Y must be bf16, f16 or f32",
                         tess_dtype_name(ty));
    const tess_gemm_desc view = tess_grouped_as_batch(desc);
    if ((s = tess_gemm_check_tma(&view.a, x, xy_batch, "X")) || (s = tess_gemm_check_tma(&view.b, w, g, "W")) ||
        (s = tess_gemm_check_scales(&view, xs, ws)))
        return s;
    if (tess_scale_is_block(view.a_scale.mode) &&
        (view.a_scale.mode != TESS_SCALE_BLOCK_1x128 || view.b_scale.mode != TESS_SCALE_BLOCK_128x128))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: grouped block scaling is 1x128 for X with 128x128 for W (DeepSeek-V3's "
                         "recipe); other block pairs run only in tess_gemm_scaled");
    if ((uintptr_t)y % tess_dtype_size(ty) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "Y=%p is not aligned to its %s elements", y, tess_dtype_name(ty));
    /* Work items are ints in the kernels: bound them for the narrowest tile (128 x 128). */
    if (tess_grouped_max_tile_rows(desc, 128) * ((n + 127) / 128) > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm: more than 2^31 output tiles");
    if (info)
        return tess_family_check_device(info, "tess_grouped_gemm");
    return TESS_STATUS_SUCCESS;
}

int tess_grouped_candidates(const tess_device_info *info, const tess_grouped_gemm_desc *desc, tess_plan *plans,
                            int capacity) {
    const tess_problem problem = {NULL, desc};
    return tess_family_plans(info, &problem, SIZE_MAX, plans, capacity);
}

/* Handle and descriptor checks shared by the plan queries: the descriptor
 * read into `full` and validated with stand-in pointers. */
static tess_status grouped_prepare(tess_handle h, const tess_grouped_gemm_desc *desc, tess_grouped_gemm_desc *full,
                                   const char *caller) {
    tess_status s = tess_handle_check(h, caller);
    if (s != TESS_STATUS_SUCCESS || (s = tess_grouped_gemm_accept(desc, full)))
        return s;
    static const _Alignas(16) char stand_in[16];
    return grouped_validate(&h->info, full, stand_in, (const float *)stand_in, stand_in, (const float *)stand_in,
                            (const int32_t *)stand_in, stand_in);
}

/* The sentence for a valid problem no grouped kernel runs. */
static tess_status no_grouped_kernel(const char *caller) {
    return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                     "%s: no grouped kernel of this build runs this problem (grouped recipes: bf16 or f16 with "
                     "optional TENSOR/OUTER_VEC factors; e4m3 with TENSOR or OUTER_VEC factors, or 1x128 X with "
                     "128x128 W factors)",
                     caller);
}

TESS_API tess_status tess_grouped_gemm_plans(tess_handle handle, const tess_grouped_gemm_desc *desc,
                                             tess_plan *plans, int capacity, int *count) {
    tess_grouped_gemm_desc full;
    tess_status s = grouped_prepare(handle, desc, &full, "tess_grouped_gemm_plans");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!count || (capacity > 0 && !plans) || capacity < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_gemm_plans: count must not be NULL, nor plans when capacity > 0");
    *count = tess_grouped_candidates(&handle->info, &full, plans, capacity);
    return *count ? TESS_STATUS_SUCCESS : no_grouped_kernel("tess_grouped_gemm_plans");
}

TESS_API tess_status tess_grouped_gemm_plan(tess_handle handle, const tess_grouped_gemm_desc *desc, tess_plan *plan) {
    int count = 0;
    if (!plan)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_gemm_plan: plan is NULL");
    return tess_grouped_gemm_plans(handle, desc, plan, 1, &count);
}

TESS_API tess_status tess_grouped_gemm(tess_handle handle, const tess_grouped_gemm_desc *desc, const tess_plan *plan,
                                       const void *x, const float *x_scale, const void *w, const float *w_scale,
                                       const int32_t *group_rows, void *y) {
    tess_status s = tess_handle_check(handle, "tess_grouped_gemm");
    tess_grouped_gemm_desc full;
    if (s != TESS_STATUS_SUCCESS || (s = tess_grouped_gemm_accept(desc, &full)) ||
        (s = grouped_validate(&handle->info, &full, x, x_scale, w, w_scale, group_rows, y)))
        return s;
    tess_plan chosen;
    if (!plan) {
        if (tess_grouped_candidates(&handle->info, &full, &chosen, 1) == 0)
            return no_grouped_kernel("tess_grouped_gemm");
    } else if ((s = tess_plan_accept(plan, &chosen, "tess_grouped_gemm"))) {
        return s;
    }
    const tess_problem problem = {NULL, &full};
    const tess_operands operands = {x, x_scale, w, w_scale, NULL, y, group_rows};
    return tess_family_run(handle, &problem, &chosen, &operands, "tess_grouped_gemm");
}
