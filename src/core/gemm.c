/* The dense GEMM entry points: descriptors, plan queries and the run call.
 * Validation is core/gemm_check.c's; plans come from every kernel family
 * (core/family.h), ranked together by their estimates. */
#include <stdint.h>

#include "core/abi.h"
#include "core/error.h"
#include "core/family.h"
#include "core/fp8_staging.h"
#include "core/gemm.h"
#include "core/handle.h"

TESS_API tess_status tess_gemm_desc_init(tess_gemm_desc *desc) {
    const tess_status s = tess_struct_init(desc, sizeof *desc, "tess_gemm_desc_init: desc");
    if (s == TESS_STATUS_SUCCESS)
        desc->batch = 1, desc->alpha = 1.0f;
    return s;
}

int tess_gemm_candidates(const tess_device_info *info, const tess_gemm_desc *desc, size_t workspace_limit,
                         tess_plan *plans, int capacity) {
    const tess_problem problem = {desc, NULL, NULL};
    return tess_family_plans(info, &problem, workspace_limit, plans, capacity);
}

/* The checks every dense call makes first: the handle, then the caller's
 * descriptor read into `full` and validated with the call's pointers
 * (tess_stand_ins for the plan queries). */
static tess_status prepare(tess_handle h, const tess_gemm_desc *desc, const tess_operands *o, tess_gemm_desc *full,
                           const char *caller) {
    tess_status s = tess_handle_check(h, caller);
    if (s != TESS_STATUS_SUCCESS || (s = tess_gemm_accept(desc, full)))
        return s;
    if ((s = tess_gemm_validate(&h->info, full, o->a, o->a_scale, o->b, o->b_scale, o->c, o->d)))
        return s;
    if ((s = tess_gemm_check_epilogue(&full->epilogue, o->bias, full->m, full->n, full->batch, 0, caller)))
        return s;
    if ((s = tess_gemm_check_residual(full, o->residual, caller)) || (s = tess_gemm_check_aux(full, o, caller)) ||
        o == &tess_stand_ins)
        return s; /* the plan queries have no FP8 D pointers to check */
    return tess_gemm_check_fp8_out(full, o->d_scale, o->d_amax, o->d_scale_out, caller);
}

TESS_API tess_status tess_gemm_plans(tess_handle handle, const tess_gemm_desc *desc, tess_plan *plans, int capacity,
                                     int *count) {
    tess_gemm_desc full, staged;
    const tess_problem problem = {&staged, NULL, NULL};
    tess_status s = prepare(handle, desc, &tess_stand_ins, &full, "tess_gemm_plans");
    if (s != TESS_STATUS_SUCCESS || (s = tess_fp8_staging_fits(handle, &full, "tess_gemm_plans")))
        return s;
    /* FP8 operands that are not K-major: the plans of the K-major problem, in what the copies leave */
    tess_fp8_staged_desc(&full, &staged);
    return tess_family_query(handle, &problem, tess_fp8_gemm_workspace(handle, &full), plans, capacity, count,
                             "tess_gemm_plans");
}

TESS_API tess_status tess_gemm_plan(tess_handle handle, const tess_gemm_desc *desc, tess_plan *plan) {
    int count = 0;
    if (!plan)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_plan: plan is NULL");
    return tess_gemm_plans(handle, desc, plan, 1, &count);
}

TESS_API tess_status tess_gemm_workspace_size(tess_handle handle, const tess_gemm_desc *desc, size_t *bytes) {
    tess_gemm_desc full;
    tess_status s = prepare(handle, desc, &tess_stand_ins, &full, "tess_gemm_workspace_size");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!bytes)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_workspace_size: bytes is NULL");
    tess_plan best;
    int count = 0;
    tess_gemm_desc staged;
    tess_fp8_staged_desc(&full, &staged);
    const tess_problem problem = {&staged, NULL, NULL};
    /* The plan the heuristic would run with unlimited workspace, under the handle's SM budget. */
    if (tess_family_query(handle, &problem, SIZE_MAX, &best, 1, &count, "tess_gemm_workspace_size") !=
        TESS_STATUS_SUCCESS)
        count = 0;
    *bytes = tess_fp8_workspace_need(&full, count > 0 ? (size_t)best.workspace_bytes : 0);
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_gemm_fused(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan,
                                     const void *a, const float *a_scale, const void *b, const float *b_scale,
                                     const void *c, void *d, const tess_epilogue_ptrs *ep) {
    tess_epilogue_ptrs pointers;
    tess_status s = tess_epilogue_ptrs_in(ep, &pointers, "tess_gemm");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    /* C: read where beta != 0 (tess_epilogue_of) */
    const tess_operands operands = {a,    a_scale,           b,     b_scale,           c,
                                    d,    NULL,              pointers.bias, pointers.residual, pointers.d_scale,
                                    pointers.d_amax, pointers.d_scale_out, pointers.aux};
    tess_gemm_desc full, staged;
    const tess_problem problem = {&staged, NULL, NULL};
    s = prepare(handle, desc, &operands, &full, "tess_gemm");
    if (s != TESS_STATUS_SUCCESS || (s = tess_fp8_staging_fits(handle, &full, "tess_gemm")))
        return s;
    tess_fp8_staged_desc(&full, &staged);
    /* K-major copies of FP8 operands that are not, queued on the same stream once the plan has passed its checks */
    const tess_run_prelude stage = {tess_fp8_stage, &full};
    return tess_family_run(handle, &problem, plan, tess_fp8_gemm_workspace(handle, &full), &operands,
                           tess_fp8_staging_bytes(&full) > 0 ? &stage : NULL, "tess_gemm");
}

TESS_API tess_status tess_gemm_scaled(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan,
                                      const void *a, const float *a_scale, const void *b, const float *b_scale,
                                      const void *c, void *d) {
    return tess_gemm_fused(handle, desc, plan, a, a_scale, b, b_scale, c, d, NULL);
}

TESS_API tess_status tess_gemm(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan, const void *a,
                               const void *b, const void *c, void *d) {
    return tess_gemm_scaled(handle, desc, plan, a, NULL, b, NULL, c, d);
}

/* A cuBLAS column-major operand op(X) (rows x cols as it enters the product). */
static tess_matrix_desc cublas_operand(tess_op op, int64_t rows, int64_t cols, tess_dtype t, int64_t ld,
                                       int64_t stride) {
    tess_matrix_desc x = {t, op == TESS_OP_N ? TESS_ORDER_COL : TESS_ORDER_ROW, rows, cols, ld, stride};
    return x;
}

TESS_API tess_status tess_gemm_strided_batched_ex(tess_handle handle, tess_op transa, tess_op transb, int64_t m,
                                                  int64_t n, int64_t k, const float *alpha, const void *a,
                                                  tess_dtype a_type, int64_t lda, int64_t stride_a, const void *b,
                                                  tess_dtype b_type, int64_t ldb, int64_t stride_b,
                                                  const float *beta, void *c, tess_dtype c_type, int64_t ldc,
                                                  int64_t stride_c, int64_t batch) {
    if (!alpha || !beta)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_ex: alpha and beta must point to host floats");
    if ((transa != TESS_OP_N && transa != TESS_OP_T) || (transb != TESS_OP_N && transb != TESS_OP_T))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_ex: transa and transb are TESS_OP_N (0) or TESS_OP_T (1)");
    tess_gemm_desc desc;
    tess_gemm_desc_init(&desc);
    desc.m = m, desc.n = n, desc.k = k, desc.batch = batch;
    desc.alpha = *alpha, desc.beta = *beta;
    desc.a = cublas_operand(transa, m, k, a_type, lda, stride_a);
    desc.b = cublas_operand(transb, k, n, b_type, ldb, stride_b);
    desc.c = cublas_operand(TESS_OP_N, m, n, c_type, ldc, stride_c);
    desc.d = desc.c;
    return tess_gemm(handle, &desc, NULL, a, b, c, c);
}

TESS_API tess_status tess_gemm_ex(tess_handle handle, tess_op transa, tess_op transb, int64_t m, int64_t n,
                                  int64_t k, const float *alpha, const void *a, tess_dtype a_type, int64_t lda,
                                  const void *b, tess_dtype b_type, int64_t ldb, const float *beta, void *c,
                                  tess_dtype c_type, int64_t ldc) {
    return tess_gemm_strided_batched_ex(handle, transa, transb, m, n, k, alpha, a, a_type, lda, 0, b, b_type, ldb, 0,
                                        beta, c, c_type, ldc, 0, 1);
}
