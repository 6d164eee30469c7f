/* The grouped GEMM entry points (Mixture-of-Experts): descriptors,
 * validation, plan queries and the run call. Plans come from the kernel
 * families (core/family.h); a family runs a grouped problem as its dense
 * view (tess_grouped_as_batch) plus the group sizes its kernels read on the
 * device. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "core/abi.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/family.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "core/matrix.h"
#include "core/scale.h"

TESS_API tess_status tess_grouped_gemm_desc_init(tess_grouped_gemm_desc *desc) {
    const tess_status s = tess_struct_init(desc, sizeof *desc, "tess_grouped_gemm_desc_init: desc");
    if (s == TESS_STATUS_SUCCESS)
        desc->groups = 1;
    return s;
}


tess_gemm_desc tess_grouped_as_batch(const tess_grouped_gemm_desc *g) {
    tess_gemm_desc d;
    tess_gemm_desc_init(&d);
    d.m = g->m, d.n = g->n, d.k = g->k, d.batch = g->groups;
    d.a = g->x, d.b = g->w, d.d = g->y;
    d.a_scale = g->x_scale, d.b_scale = g->w_scale;
    d.epilogue = g->epilogue; /* its bias batch is the group (the kernels' tile.group) */
    d.gate = g->gate, d.gate_limit = g->gate_limit;
    d.d_scale = g->y_scale;
    if (g->layout == TESS_GROUP_CONTIGUOUS) {
        d.a.batch_stride = 0, d.d.batch_stride = 0, d.d_scale.batch_stride = 0;
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

/* Every rule of tess_grouped_gemm for an accepted descriptor and the call's
 * pointers (X, W and Y as a, b and d), for a device described by `info`
 * (NULL: skip the device checks). */
static tess_status grouped_validate(const tess_device_info *info, const tess_grouped_gemm_desc *desc,
                                    const tess_operands *o) {
    const void *x = o->a, *w = o->b, *y = o->d;
    const int32_t *rows = o->group_rows;
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
    tess_status s = tess_gemm_check_gate(desc->gate, desc->gate_limit, n, 0.0f, "tess_grouped_gemm");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    const tess_operand_shape xwy[] = {
        {&desc->x, xy_batch, m, k, "X", "M x K"},
        {&desc->w, g, k, n, "W", "K x N (each expert's weight)"},
        {&desc->y, xy_batch, m, tess_gemm_out_cols(desc->gate, n), "Y", tess_gemm_out_shape(desc->gate)},
    };
    if ((s = tess_gemm_check_matrices(xwy, 3)))
        return s;
    if (desc->x.order != TESS_ORDER_ROW || desc->y.order != TESS_ORDER_ROW)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: X and Y must be row-major (tokens by features); X is %s-major, Y %s-major",
                         desc->x.order == TESS_ORDER_ROW ? "row" : "column",
                         desc->y.order == TESS_ORDER_ROW ? "row" : "column");
    /* 16-bit weights may be N-major too (W [G, K, N]: the grouped_f16_nmajor kernels) */
    if (desc->w.order != TESS_ORDER_COL && !tess_dtype_is_16bit(desc->w.dtype))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: an FP8 W must be K-major (the [G, N, K] layout: each expert's weight "
                         "as a column-major K x N operand); an N-major one needs a K-major copy (tess_transpose)");
    if (masked && (s = tess_check_batches_apart(&desc->y, g, NULL, "Y", "groups' outputs")))
        return s;
    const tess_dtype tx = desc->x.dtype, tw = desc->w.dtype, ty = desc->y.dtype;
    const int fp8 = tx == TESS_DTYPE_E4M3 && tw == TESS_DTYPE_E4M3;
    if (!fp8 && !(tess_dtype_is_16bit(tx) && tx == tw))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: X is %s and W %s; grouped kernels multiply bf16 x bf16, f16 x f16 or "
                         "e4m3 x e4m3",
                         tess_dtype_name(tx), tess_dtype_name(tw));
    if (ty != TESS_DTYPE_F32 && !tess_dtype_is_16bit(ty) && !tess_dtype_is_fp8(ty))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_gemm: Y of type %s; Y must be bf16, f16, f32 or FP8 (e4m3, e5m2: "
                         "tess_grouped_gemm_desc.y_scale)",
                         tess_dtype_name(ty));
    const tess_gemm_desc view = tess_grouped_as_batch(desc);
    if ((s = tess_gemm_check_d_scale(&view, "tess_grouped_gemm", "y_scale")))
        return s;
    /* A contiguous Y's block factors are one array of rows, the groups' one after another. */
    tess_gemm_desc y_view = view;
    if (desc->layout == TESS_GROUP_CONTIGUOUS)
        y_view.batch = 1;
    if (o != &tess_stand_ins &&
        (s = tess_gemm_check_fp8_out(&y_view, o->d_scale, o->d_amax, o->d_scale_out, "tess_grouped_gemm")))
        return s;
    if ((s = tess_gemm_check_tma(&view.a, x, xy_batch, "X")) || (s = tess_gemm_check_tma(&view.b, w, g, "W")) ||
        (s = tess_gemm_check_scales(&view, o->a_scale, o->b_scale)))
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
    if ((s = tess_gemm_check_epilogue(&desc->epilogue, o->bias, m, n, g, 1, "tess_grouped_gemm")))
        return s;
    if (info)
        return tess_family_check_device(info, "tess_grouped_gemm");
    return TESS_STATUS_SUCCESS;
}

int tess_grouped_candidates(const tess_device_info *info, const tess_grouped_gemm_desc *desc, tess_plan *plans,
                            int capacity) {
    const tess_problem problem = {NULL, desc, NULL};
    return tess_family_plans(info, &problem, SIZE_MAX, plans, capacity);
}

/* The checks every grouped call makes first: the handle, then the caller's
 * descriptor read into `full` and validated with the call's pointers
 * (tess_stand_ins for the plan queries). */
static tess_status grouped_prepare(tess_handle h, const tess_grouped_gemm_desc *desc, const tess_operands *o,
                                   tess_grouped_gemm_desc *full, const char *caller) {
    tess_status s = tess_handle_check(h, caller);
    if (s != TESS_STATUS_SUCCESS || (s = tess_grouped_gemm_accept(desc, full)))
        return s;
    return grouped_validate(&h->info, full, o);
}

/* Grouped plans need no workspace: this query and tess_grouped_gemm rank
 * them all, whatever the handle holds (workspace limit SIZE_MAX). */
TESS_API tess_status tess_grouped_gemm_plans(tess_handle handle, const tess_grouped_gemm_desc *desc,
                                             tess_plan *plans, int capacity, int *count) {
    tess_grouped_gemm_desc full;
    const tess_problem problem = {NULL, &full, NULL};
    tess_status s = grouped_prepare(handle, desc, &tess_stand_ins, &full, "tess_grouped_gemm_plans");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    return tess_family_query(handle, &problem, SIZE_MAX, plans, capacity, count, "tess_grouped_gemm_plans");
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
    return tess_grouped_gemm_fused(handle, desc, plan, x, x_scale, w, w_scale, group_rows, y, NULL);
}

TESS_API tess_status tess_grouped_gemm_fused(tess_handle handle, const tess_grouped_gemm_desc *desc,
                                             const tess_plan *plan, const void *x, const float *x_scale, const void *w,
                                             const float *w_scale, const int32_t *group_rows, void *y,
                                             const tess_epilogue_ptrs *ep) {
    tess_epilogue_ptrs pointers;
    tess_status s = tess_epilogue_ptrs_in(ep, &pointers, "tess_grouped_gemm");
    if (s != TESS_STATUS_SUCCESS || (s = tess_epilogue_ptrs_no_aux(&pointers, "tess_grouped_gemm")))
        return s;
    const tess_operands operands = {x,    x_scale,         w,    w_scale,          NULL,
                                    y,    group_rows,      pointers.bias, NULL,    pointers.d_scale,
                                    pointers.d_amax, pointers.d_scale_out, NULL};
    tess_grouped_gemm_desc full;
    const tess_problem problem = {NULL, &full, NULL};
    s = grouped_prepare(handle, desc, &operands, &full, "tess_grouped_gemm");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    return tess_family_run(handle, &problem, plan, SIZE_MAX, &operands, NULL, "tess_grouped_gemm");
}
