/* Internal: the decode family's planner, for the CPU tests. */
#ifndef TESS_KERNELS_DECODE_DECODE_H
#define TESS_KERNELS_DECODE_DECODE_H

#include "kernels/decode/gemv_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GEMV kernel of the plan named plan->name for problem d (among those
 * offered for it), or NULL. */
const tess_gemv_kernel *tess_decode_plan_kernel(const tess_gemm_desc *d, const tess_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
