/* FP8 operands that are not K-major. Hopper's FP8 tensor cores read only
 * K-major operands (A row-major, B column-major), so tess_gemm stages a
 * K-major copy of any other FP8 operand in the handle's workspace (its last
 * bytes; the GEMM's own plan gets the rest) and runs the TN problem on it.
 * The dequantization factors describe the logical operand, so they apply to
 * the copy unchanged. */
#ifndef TESS_CORE_FP8_STAGING_H
#define TESS_CORE_FP8_STAGING_H

#include <stddef.h>

#include "core/family.h"
#include "tessera.h"

/* Whether tess_gemm stages a K-major copy of `desc`'s A (an FP8 A that is
 * M-major) or of its B (an FP8 B that is N-major). */
int tess_fp8_stages_a(const tess_gemm_desc *desc);
int tess_fp8_stages_b(const tess_gemm_desc *desc);

/* Bytes of workspace the K-major copies of `desc`'s operands take (0: a TN
 * or 16-bit problem, nothing staged). */
size_t tess_fp8_staging_bytes(const tess_gemm_desc *desc);

/* The problem the kernels see: `desc` with its FP8 operands K-major, as
 * tess_fp8_stage lays them out. */
void tess_fp8_staged_desc(const tess_gemm_desc *desc, tess_gemm_desc *staged);

/* Workspace a call needs for a plan of plan_bytes: those, then (for FP8
 * operands that are not K-major) the copies from the next staging boundary;
 * enough at any 256-byte aligned workspace (tess_set_workspace's rule). */
size_t tess_fp8_workspace_need(const tess_gemm_desc *desc, size_t plan_bytes);

/* Workspace bytes left to the GEMM's plan: the handle's, less the copies
 * (and the bytes before them that align them to 256). */
size_t tess_fp8_gemm_workspace(tess_handle handle, const tess_gemm_desc *desc);

/* Refuses, with a sentence, a handle whose workspace cannot hold the
 * copies; `caller` names the call. */
tess_status tess_fp8_staging_fits(tess_handle handle, const tess_gemm_desc *desc, const char *caller);

/* Queues the transposes of the operands that are not K-major into the end
 * of the handle's workspace (the handle entered) and points operands->a / b
 * at the copies; `desc` is the caller's tess_gemm_desc (a tess_run_prelude's
 * queue: tess_gemm runs it once the plan has passed every check). */
tess_status tess_fp8_stage(tess_handle handle, const void *desc, tess_operands *operands);

#endif
