/* K-major copies of FP8 and TF32 operands in the workspace (see fp8_staging.h). */
#include <inttypes.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/fp8_staging.h"
#include "core/handle.h"
#include "kernels/util/util_kernels.h"

/* Copies start at multiples of 256 bytes (TMA wants 16; 256 keeps every
 * copy on its own cache lines). */
#define STAGING_ALIGN 256
/* A K-major row is a multiple of 16 bytes (TMA's row rule). */
#define STAGED_LD_ALIGN 16

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/* Types the tensor cores read only K-major: FP8, f32 read as TF32, and int8. */
static int k_major_only(tess_dtype t) { return tess_dtype_is_fp8(t) || t == TESS_DTYPE_F32 || t == TESS_DTYPE_S8; }

int tess_fp8_stages_a(const tess_gemm_desc *d) { return k_major_only(d->a.dtype) && d->a.order != TESS_ORDER_ROW; }

int tess_fp8_stages_b(const tess_gemm_desc *d) { return k_major_only(d->b.dtype) && d->b.order != TESS_ORDER_COL; }

/* Matrices an operand's copy holds: one per batch, or one shared by every
 * batch where the operand's batch_stride is 0. */
static int64_t copies(const tess_gemm_desc *d, const tess_matrix_desc *x) {
    return d->batch > 1 && x->batch_stride != 0 ? d->batch : 1;
}

/* Elements of a K-major row: K padded to 16 bytes. */
static int64_t staged_ld(const tess_gemm_desc *d, const tess_matrix_desc *x) {
    return round_up(d->k, STAGED_LD_ALIGN / (int64_t)tess_dtype_size(x->dtype));
}

/* Bytes of one operand's copy: its matrices of mn K-major rows. */
static size_t copy_bytes(const tess_gemm_desc *d, const tess_matrix_desc *x, int64_t mn) {
    return (size_t)round_up(copies(d, x) * mn * staged_ld(d, x) * (int64_t)tess_dtype_size(x->dtype), STAGING_ALIGN);
}

size_t tess_fp8_staging_bytes(const tess_gemm_desc *d) {
    return (tess_fp8_stages_a(d) ? copy_bytes(d, &d->a, d->m) : 0) +
           (tess_fp8_stages_b(d) ? copy_bytes(d, &d->b, d->n) : 0);
}

size_t tess_fp8_workspace_need(const tess_gemm_desc *d, size_t plan_bytes) {
    const size_t staging = tess_fp8_staging_bytes(d);
    return staging == 0 ? plan_bytes : (size_t)round_up((int64_t)plan_bytes, STAGING_ALIGN) + staging;
}

/* Where the copies start in the handle's workspace: the last
 * tess_fp8_staging_bytes of it, moved down to a multiple of STAGING_ALIGN;
 * 0 where they do not fit (else 1, *offset set; the whole workspace when
 * nothing is staged). */
static int staging_offset(tess_handle handle, const tess_gemm_desc *d, size_t *offset) {
    const size_t need = tess_fp8_staging_bytes(d), have = handle->workspace_bytes;
    *offset = have;
    if (need == 0)
        return 1;
    if (need > have)
        return 0;
    const uintptr_t base = (uintptr_t)handle->workspace, end = base + have - need;
    const uintptr_t start = end - end % STAGING_ALIGN;
    if (start < base)
        return 0;
    *offset = (size_t)(start - base);
    return 1;
}

void tess_fp8_staged_desc(const tess_gemm_desc *desc, tess_gemm_desc *staged) {
    *staged = *desc;
    if (tess_fp8_stages_a(desc)) {
        const int64_t ld = staged_ld(desc, &desc->a);
        staged->a.order = TESS_ORDER_ROW, staged->a.ld = ld;
        staged->a.batch_stride = copies(desc, &desc->a) > 1 ? desc->m * ld : 0;
    }
    if (tess_fp8_stages_b(desc)) {
        const int64_t ld = staged_ld(desc, &desc->b);
        staged->b.order = TESS_ORDER_COL, staged->b.ld = ld;
        staged->b.batch_stride = copies(desc, &desc->b) > 1 ? desc->n * ld : 0;
    }
}

tess_status tess_fp8_staging_fits(tess_handle handle, const tess_gemm_desc *desc, const char *caller) {
    size_t offset;
    if (staging_offset(handle, desc, &offset))
        return TESS_STATUS_SUCCESS;
    const size_t need = tess_fp8_staging_bytes(desc);
    const int a = tess_fp8_stages_a(desc), b = tess_fp8_stages_b(desc);
    return tess_fail(TESS_STATUS_INSUFFICIENT_WORKSPACE,
                     "%s: %s %s%s%s; Hopper's tensor cores read FP8, TF32 and INT8 operands only K-major, so tessera "
                     "stages K-major copies (%zu bytes, at a 256-byte boundary) in the workspace, and the handle has "
                     "%zu bytes. Give it more with tess_set_workspace, or pass K-major operands (A row-major, B "
                     "column-major: tess_quantize_fp8_transposed or tess_transpose make them)",
                     caller, tess_dtype_is_fp8(desc->a.dtype) ? "FP8" : desc->a.dtype == TESS_DTYPE_S8 ? "INT8" : "TF32",
                     a ? "A is M-major" : "",
                     a && b ? " and " : "", b ? "B is N-major" : "", need,
                     handle->workspace_bytes);
}

size_t tess_fp8_gemm_workspace(tess_handle handle, const tess_gemm_desc *desc) {
    size_t offset;
    return staging_offset(handle, desc, &offset) ? offset : 0;
}

tess_status tess_fp8_stage(tess_handle handle, const void *context, tess_operands *operands) {
    const tess_gemm_desc *desc = (const tess_gemm_desc *)context;
    char *at = (char *)handle->workspace + tess_fp8_gemm_workspace(handle, desc);
    tess_status s = TESS_STATUS_SUCCESS;
    /* An M-major A (column-major M x K) is K rows of M: its transpose is the
     * row-major M x K copy; an N-major B (row-major K x N) likewise gives the
     * N x K copy, i.e. column-major B. */
    if (tess_fp8_stages_a(desc)) {
        const int64_t ld = staged_ld(desc, &desc->a);
        s = tess_launch_transpose((int)tess_dtype_size(desc->a.dtype), copies(desc, &desc->a), desc->k, desc->m,
                                  operands->a, desc->a.ld, desc->a.batch_stride, at, ld, desc->m * ld, handle->stream);
        operands->a = at;
        at += copy_bytes(desc, &desc->a, desc->m);
    }
    if (s == TESS_STATUS_SUCCESS && tess_fp8_stages_b(desc)) {
        const int64_t ld = staged_ld(desc, &desc->b);
        s = tess_launch_transpose((int)tess_dtype_size(desc->b.dtype), copies(desc, &desc->b), desc->k, desc->n,
                                  operands->b, desc->b.ld, desc->b.batch_stride, at, ld, desc->n * ld, handle->stream);
        operands->b = at;
    }
    return s;
}
