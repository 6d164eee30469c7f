/* The grouped weight gradient's entry points (Mixture-of-Experts training:
 * dW[g] = alpha * dY_g^T X_g + beta * C[g]): descriptor, validation, plan
 * queries and the run call. Plans come from the kernel families
 * (core/family.h); a family runs the problem as its dense batched view
 * (tess_grouped_wgrad_as_batch) plus the token offsets its k-grouped
 * kernels read on the device. */
#include <inttypes.h>
#include <stdint.h>

#include "core/abi.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/family.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "core/matrix.h"

/* The kernels count tokens in 32-bit ints, up to a K block (64 tokens) past
 * a group's last one: T stays 256 below 2^31, as a grouped GEMM's M. */
#define TESS_WGRAD_MAX_TOKENS ((int64_t)INT32_MAX - 256)

/* The narrowest k-grouped tile (128 x 128): the work items' bound. */
#define TESS_WGRAD_MIN_TILE 128

/* n elements of `t` rounded up to whole 16 bytes (TMA's granule): a leading dimension TMA accepts. */
static int64_t whole_16_bytes(int64_t n, tess_dtype t) {
    const int64_t per = 16 / (int64_t)tess_dtype_size(t);
    return (n + per - 1) / per * per;
}

TESS_API tess_status tess_grouped_wgrad_desc_init(tess_grouped_wgrad_desc *desc) {
    const tess_status s = tess_struct_init(desc, sizeof *desc, "tess_grouped_wgrad_desc_init: desc");
    if (s == TESS_STATUS_SUCCESS)
        desc->groups = 1, desc->alpha = 1.0f;
    return s;
}

tess_gemm_desc tess_grouped_wgrad_as_batch(const tess_grouped_wgrad_desc *w) {
    tess_gemm_desc d;
    tess_gemm_desc_init(&d);
    const int none = w->tokens == 0;
    d.m = w->n, d.n = w->k, d.k = none ? 1 : w->tokens, d.batch = w->groups;
    d.alpha = w->alpha, d.beta = w->beta;
    const tess_dtype t = w->dy.dtype;
    d.a = (tess_matrix_desc){t, TESS_ORDER_COL, w->n, d.k, none ? whole_16_bytes(w->n, t) : w->dy.ld, 0};
    d.b = (tess_matrix_desc){w->x.dtype, TESS_ORDER_ROW, d.k, w->k, none ? whole_16_bytes(w->k, t) : w->x.ld, 0};
    d.c = w->c, d.d = w->dw;
    return d;
}

tess_status tess_grouped_wgrad_accept(const tess_grouped_wgrad_desc *desc, tess_grouped_wgrad_desc *full) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_wgrad: desc is NULL");
    return tess_struct_in(full, sizeof *full, desc, TESS_GROUPED_WGRAD_DESC_SIZE_V1, "tess_grouped_wgrad: desc",
                          "tess_grouped_wgrad_desc_init");
}

/* The sizes: groups, tokens, n, k and the hint. */
static tess_status check_sizes(const tess_grouped_wgrad_desc *d) {
    if (d->groups < 1 || d->groups > TESS_GROUPED_MAX_GROUPS)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_wgrad: groups=%" PRId64 " must be 1 to %d",
                         d->groups, TESS_GROUPED_MAX_GROUPS);
    if (d->tokens < 0 || d->tokens > TESS_WGRAD_MAX_TOKENS)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: tokens=%" PRId64 " must be 0 to 2^31 - 257 (the kernels count tokens "
                         "in 32-bit ints, a K block past a group's end)",
                         d->tokens);
    if (d->n < 1 || d->k < 1 || d->n > INT32_MAX || d->k > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: n=%" PRId64 " k=%" PRId64 ": both must be 1 to 2^31 - 1", d->n, d->k);
    if (d->expected_tokens < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: expected_tokens=%" PRId64 " must be >= 0 (0: tokens / groups)",
                         d->expected_tokens);
    const int64_t tiles = (d->n + TESS_WGRAD_MIN_TILE - 1) / TESS_WGRAD_MIN_TILE *
                          ((d->k + TESS_WGRAD_MIN_TILE - 1) / TESS_WGRAD_MIN_TILE);
    if (tiles > INT32_MAX / d->groups)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: %" PRId64 " groups of %" PRId64 " x %" PRId64
                         " are more than 2^31 output tiles of 128 x 128",
                         d->groups, d->n, d->k);
    return TESS_STATUS_SUCCESS;
}

/* A token operand (dY or X): T x cols, row-major, checked as one matrix
 * (its batch_stride ignored; with T = 0, as one row: only its ld is kept). */
static tess_status check_tokens(const tess_matrix_desc *x, int64_t tokens, int64_t cols, const char *name,
                                const char *shape) {
    tess_status s = tess_matrix_check_shape(x, tokens, cols, name, shape);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    tess_matrix_desc one = *x;
    one.batch_stride = 0;
    if (one.rows == 0)
        one.rows = 1;
    if ((s = tess_matrix_check(&one, 1, name)))
        return s;
    if (x->order != TESS_ORDER_ROW)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_wgrad: %s must be row-major (tokens by features, the forward pass's layout); "
                         "it is column-major",
                         name);
    return TESS_STATUS_SUCCESS;
}

/* The types: dY and X one 16-bit type, dW and C (where read) bf16, f16 or f32. */
static tess_status check_types(const tess_grouped_wgrad_desc *d) {
    const tess_dtype ty = d->dy.dtype, tx = d->x.dtype, tw = d->dw.dtype;
    if (!tess_dtype_is_16bit(ty) || tx != ty)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_grouped_wgrad: dY is %s and X %s; the k-grouped kernels multiply bf16 x bf16 or "
                         "f16 x f16",
                         tess_dtype_name(ty), tess_dtype_name(tx));
    if (tw != TESS_DTYPE_F32 && !tess_dtype_is_16bit(tw))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_grouped_wgrad: dW of type %s; dW must be bf16, f16 or f32",
                         tess_dtype_name(tw));
    if (d->beta != 0.0f && d->c.dtype != TESS_DTYPE_F32 && !tess_dtype_is_16bit(d->c.dtype))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_grouped_wgrad: C of type %s; C must be bf16, f16 or f32",
                         tess_dtype_name(d->c.dtype));
    return TESS_STATUS_SUCCESS;
}

/* Whether two matrix descriptors lay their elements out alike. */
static int same_layout(const tess_matrix_desc *a, const tess_matrix_desc *b) {
    return a->dtype == b->dtype && a->order == b->order && a->rows == b->rows && a->cols == b->cols &&
           a->ld == b->ld && a->batch_stride == b->batch_stride;
}

/* dW, which the kernels write while they read offs, dY and X, shares no
 * byte with any of them (dY and X where there are tokens to read). */
static tess_status check_apart_from_tokens(const tess_grouped_wgrad_desc *d, const tess_operands *o) {
    /* offs too: every CTA reads its group's offsets while others write dW */
    const uintptr_t offs = (uintptr_t)o->group_rows, dw = (uintptr_t)o->d;
    if (offs < dw + tess_matrix_bytes(&d->dw, d->groups) && dw < offs + (uintptr_t)d->groups * sizeof(int32_t))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: dW's storage overlaps offs, which the call reads while it writes dW");
    if (d->tokens == 0)
        return TESS_STATUS_SUCCESS;
    const struct {
        const tess_matrix_desc *desc;
        const void *ptr;
        const char *name;
    } inputs[2] = {{&d->dy, o->a, "dY"}, {&d->x, o->b, "X"}};
    for (int i = 0; i < 2; i++) {
        tess_matrix_desc one = *inputs[i].desc; /* one matrix: its batch_stride is not read */
        one.batch_stride = 0;
        if (tess_matrix_spans_overlap(&one, inputs[i].ptr, &d->dw, o->d, d->groups))
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "tess_grouped_wgrad: dW's storage overlaps %s's, which the call reads while it writes dW",
                             inputs[i].name);
    }
    return TESS_STATUS_SUCCESS;
}

/* The outputs: dW (and C where beta != 0) n x k per group, dW's groups
 * apart; with the call's pointers (not the stand-ins), C either dW itself
 * in dW's layout or apart from it, both aligned to their elements. */
static tess_status check_outputs(const tess_grouped_wgrad_desc *d, const tess_operands *o) {
    const int64_t g = d->groups;
    const tess_operand_shape dw = {&d->dw, g, d->n, d->k, "dW", "n x k (per group)"};
    tess_status s = tess_gemm_check_matrices(&dw, 1);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if ((s = tess_check_batches_apart(&d->dw, g, NULL, "dW", "groups' gradients")))
        return s;
    const int reads_c = d->beta != 0.0f;
    if (reads_c) {
        if (!o->c)
            return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_wgrad: beta=%g reads C, but C is NULL",
                             d->beta);
        const tess_operand_shape c = {&d->c, g, d->n, d->k, "C", "n x k (per group)"};
        if ((s = tess_gemm_check_matrices(&c, 1)))
            return s;
    }
    if ((s = check_types(d)))
        return s;
    if (o == &tess_stand_ins)
        return TESS_STATUS_SUCCESS;
    if ((uintptr_t)o->d % tess_dtype_size(d->dw.dtype) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "dW=%p is not aligned to its %s elements", o->d,
                         tess_dtype_name(d->dw.dtype));
    if ((s = check_apart_from_tokens(d, o)))
        return s;
    if (!reads_c)
        return TESS_STATUS_SUCCESS;
    if ((uintptr_t)o->c % tess_dtype_size(d->c.dtype) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "C=%p is not aligned to its %s elements", o->c,
                         tess_dtype_name(d->c.dtype));
    if (o->c == o->d && !same_layout(&d->c, &d->dw))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: C is dW's memory in another layout (dtype, order, ld or batch_stride "
                         "differ); accumulating in place needs C described exactly as dW");
    if (o->c != o->d && tess_matrix_spans_overlap(&d->c, o->c, &d->dw, o->d, g))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: C's storage overlaps dW's without being it; pass C == dW (same pointer "
                         "and layout) to accumulate in place, or a C of its own");
    return TESS_STATUS_SUCCESS;
}

tess_status tess_grouped_wgrad_validate(const tess_device_info *info, const tess_grouped_wgrad_desc *d,
                                        const tess_operands *o) {
    tess_status s = check_sizes(d);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    const int reads = d->tokens > 0;
    if (!o->d || !o->group_rows || (reads && (!o->a || !o->b)))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: dW and offs must not be NULL, nor dY and X where tokens > 0");
    if ((uintptr_t)o->group_rows % sizeof(int32_t))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_wgrad: offs=%p is not 4-byte aligned int32",
                         (const void *)o->group_rows);
    if ((s = check_tokens(&d->dy, d->tokens, d->n, "dY", "T x n")) ||
        (s = check_tokens(&d->x, d->tokens, d->k, "X", "T x k")) || (s = check_outputs(d, o)))
        return s;
    /* TMA reads dY (as dY^T, M-major) and X where there are tokens. */
    if (reads && ((s = tess_gemm_check_tma(&d->dy, o->a, 1, "dY")) || (s = tess_gemm_check_tma(&d->x, o->b, 1, "X"))))
        return s;
    if (info)
        return tess_family_check_device(info, "tess_grouped_wgrad");
    return TESS_STATUS_SUCCESS;
}

int tess_grouped_wgrad_candidates(const tess_device_info *info, const tess_grouped_wgrad_desc *desc,
                                  tess_plan *plans, int capacity) {
    const tess_problem problem = {NULL, NULL, desc};
    return tess_family_plans(info, &problem, SIZE_MAX, plans, capacity);
}

/* The checks every weight-gradient call makes first: the handle, then the
 * caller's descriptor read into `full` and validated with the call's
 * pointers (tess_stand_ins for the plan queries). */
static tess_status wgrad_prepare(tess_handle h, const tess_grouped_wgrad_desc *desc, const tess_operands *o,
                                 tess_grouped_wgrad_desc *full, const char *caller) {
    tess_status s = tess_handle_check(h, caller);
    if (s != TESS_STATUS_SUCCESS || (s = tess_grouped_wgrad_accept(desc, full)))
        return s;
    return tess_grouped_wgrad_validate(&h->info, full, o);
}

/* Weight-gradient plans need no workspace: every plan is ranked, whatever
 * the handle holds (workspace limit SIZE_MAX). */
TESS_API tess_status tess_grouped_wgrad_plans(tess_handle handle, const tess_grouped_wgrad_desc *desc,
                                              tess_plan *plans, int capacity, int *count) {
    tess_grouped_wgrad_desc full;
    const tess_problem problem = {NULL, NULL, &full};
    tess_status s = wgrad_prepare(handle, desc, &tess_stand_ins, &full, "tess_grouped_wgrad_plans");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    return tess_family_query(handle, &problem, SIZE_MAX, plans, capacity, count, "tess_grouped_wgrad_plans");
}

TESS_API tess_status tess_grouped_wgrad_plan(tess_handle handle, const tess_grouped_wgrad_desc *desc,
                                             tess_plan *plan) {
    int count = 0;
    if (!plan)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_grouped_wgrad_plan: plan is NULL");
    return tess_grouped_wgrad_plans(handle, desc, plan, 1, &count);
}

TESS_API tess_status tess_grouped_wgrad(tess_handle handle, const tess_grouped_wgrad_desc *desc,
                                        const tess_plan *plan, const void *dy, const void *x, const int32_t *offs,
                                        const void *c, void *dw) {
    const tess_operands operands = {dy, NULL, x, NULL, c, dw, offs, NULL, NULL, NULL, NULL, NULL, NULL};
    tess_grouped_wgrad_desc full;
    const tess_problem problem = {NULL, NULL, &full};
    tess_status s = wgrad_prepare(handle, desc, &operands, &full, "tess_grouped_wgrad");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    return tess_family_run(handle, &problem, plan, SIZE_MAX, &operands, NULL, "tess_grouped_wgrad");
}
