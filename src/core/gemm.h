/* Internal: validation and planning of GEMM problems, separated from the
 * launch so that the CPU tests can check every refusal without a GPU. */
#ifndef TESS_CORE_GEMM_H
#define TESS_CORE_GEMM_H

#include "kernels/common/sched.h"
#include "kernels/sm90/gemm_kernels.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks `desc` and the pointers against every rule of tess_gemm, for a
 * device described by `info` (NULL: skip the device checks). */
tess_status tess_gemm_validate(const tess_device_info *info, const tess_gemm_desc *desc, const void *a, const void *b,
                               const void *c, const void *d);

/* How kernel `kernel` would run `desc`: the grid, the work split and the
 * workspace, data-parallel or stream-K. Returns 0 where that mode does not
 * apply (stream-K: the tiles fill whole waves, or the tail is too thin). */
typedef struct tess_gemm_launch {
    tess_work_split split;
    int grid;
    size_t workspace;
} tess_gemm_launch;
int tess_gemm_split(const tess_device_info *info, const tess_gemm_desc *desc, int kernel, int stream_k,
                    tess_gemm_launch *x);

/* The plans that can run `desc` on `info`'s device with at most
 * `workspace_limit` bytes of workspace, best first; returns how many there
 * are (up to capacity are written). */
int tess_gemm_candidates(const tess_device_info *info, const tess_gemm_desc *desc, size_t workspace_limit,
                         tess_plan *plans, int capacity);

#ifdef __cplusplus
}
#endif

#endif
