/* The reference of the grouped weight gradient (tess_grouped_wgrad), the
 * specification its kernels are tested against:
 *
 *   dW[g] = alpha * dY_g^T X_g + beta * C[g]      for g < groups
 *
 * with dY_g, X_g the tokens [first, last) of group g, the offsets clamped as
 * the kernels clamp them (tess_ref_wgrad_span). Host memory, float64 sums. */
#ifndef TESS_REF_REF_WGRAD_H
#define TESS_REF_REF_WGRAD_H

#include <stdint.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Group g's tokens [*first, *first + *count) for cumulative ends `offs` and
 * T tokens: first = clamp(offs[g-1], 0, T) (0 for g = 0), its end
 * clamp(max(offs[g], first), 0, T), so that bad offsets never reach
 * outside the T tokens. */
void tess_ref_wgrad_span(const int32_t *offs, int64_t g, int64_t tokens, int64_t *first, int64_t *count);

/* Computes every dW[g] of `desc` (its dY, X and, where beta != 0, C in
 * host memory) into `out`, groups x n x k row-major float64, unrounded. */
tess_status tess_ref_grouped_wgrad(const tess_grouped_wgrad_desc *desc, const void *dy, const void *x,
                                   const int32_t *offs, const void *c, double *out);

#ifdef __cplusplus
}
#endif

#endif
