/* Internal: checking that a result of the algebra is the function it claims
 * to be, by evaluating it. CuTe checks its admissibility conditions only
 * where integers are static and can return a wrong layout otherwise; tessera
 * checks the defining property itself. Domains up to TL_VERIFY_EXHAUSTIVE
 * elements are checked at every index; larger ones at a deterministic spread
 * of TL_VERIFY_SAMPLES indices that includes both ends. */
#ifndef TESS_LAYOUT_VERIFY_H
#define TESS_LAYOUT_VERIFY_H

#include "layout/tree.h"

#define TL_VERIFY_EXHAUSTIVE (INT64_C(1) << 22)
#define TL_VERIFY_SAMPLES (INT64_C(1) << 16)

/* A layout flattened to its leaves, for fast evaluation. */
typedef struct tl_flat {
    int n;
    int64_t *shape;
    tl_stride *stride;
} tl_flat;

int tl_flat_of(tl_ctx *c, const tl_node *layout, tl_flat *f);
/* Value at index `idx` (past the end extends the last mode); 0 on overflow. */
int tl_flat_eval(const tl_flat *f, int64_t idx, tl_vec *out);

/* The indices of [0, n) a check visits, in order: all of them, or a spread. */
typedef struct tl_walk {
    int64_t n, step_count, k;
} tl_walk;
void tl_walk_start(tl_walk *w, int64_t n);
int tl_walk_next(tl_walk *w, int64_t *i);

/* R(i) == A(B(i)) for i < size(B); otherwise records a sentence naming the first failing i. */
int tl_verify_composition(tl_ctx *c, const tl_node *a, const tl_node *b, const tl_node *r);
/* Whether L(R(L(i))) == L(i) for all i < size(L), and, when L is injective, R(L(i)) == i. */
int tl_is_left_inverse(tl_ctx *c, const tl_node *l, const tl_node *r);

#endif
