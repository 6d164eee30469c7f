/* The CPU reference of the grouped weight gradient (float64); see ref_wgrad.h. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/matrix.h"
#include "ref/convert.h"
#include "ref/ref_wgrad.h"

void tess_ref_wgrad_span(const int32_t *offs, int64_t g, int64_t tokens, int64_t *first, int64_t *count) {
    int64_t start = g ? offs[g - 1] : 0;
    start = start < 0 ? 0 : start > tokens ? tokens : start;
    int64_t end = offs[g] < start ? start : offs[g];
    end = end > tokens ? tokens : end;
    *first = start, *count = end - start;
}

tess_status tess_ref_grouped_wgrad(const tess_grouped_wgrad_desc *d, const void *dy, const void *x,
                                   const int32_t *offs, const void *c, double *out) {
    if (!d || !offs || !out || (d->tokens > 0 && (!dy || !x)) || (d->beta != 0.0f && !c))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "reference weight gradient: a pointer it reads is NULL");
    const int64_t n = d->n, k = d->k;
    double *xs = malloc(sizeof(double) * (size_t)(k > 0 ? k : 1)); /* one token's X row */
    if (!xs)
        return tess_fail(TESS_STATUS_ALLOC_FAILED, "reference weight gradient: out of host memory");
    for (int64_t g = 0; g < d->groups; g++) {
        int64_t first, count;
        tess_ref_wgrad_span(offs, g, d->tokens, &first, &count);
        double *w = out + g * n * k;
        memset(w, 0, sizeof(double) * (size_t)(n * k));
        for (int64_t t = first; t < first + count; t++) {
            for (int64_t j = 0; j < k; j++)
                xs[j] = tess_load_as_f32(d->x.dtype, x, t * d->x.ld + j);
            for (int64_t i = 0; i < n; i++) {
                const double y = tess_load_as_f32(d->dy.dtype, dy, t * d->dy.ld + i);
                double *wi = w + i * k;
                for (int64_t j = 0; j < k; j++)
                    wi[j] += y * xs[j];
            }
        }
        for (int64_t i = 0; i < n; i++) {
            for (int64_t j = 0; j < k; j++) {
                w[i * k + j] *= (double)d->alpha;
                if (d->beta != 0.0f)
                    w[i * k + j] +=
                        (double)d->beta * tess_load_as_f32(d->c.dtype, c, tess_matrix_offset(&d->c, g, i, j));
            }
        }
    }
    free(xs);
    return TESS_STATUS_SUCCESS;
}
