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

#ifdef __cplusplus
}
#endif

#endif
