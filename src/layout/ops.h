/* Internal: the operations of the layout algebra on trees, with CuTe's (C++)
 * semantics: results match C++ CuTe with every integer known (static), and
 * operations whose result would not be what it claims (a composition that
 * does not evaluate as A(B(i)), a complement of a non-injective layout, ...)
 * fail with a sentence instead. A layout is a tree whose leaves carry
 * (shape, stride); an integer tuple is a tree whose leaves carry values. */
#ifndef TESS_LAYOUT_OPS_H
#define TESS_LAYOUT_OPS_H

#include "layout/tree.h"

/* ---- integer tuples ---- */
/* CuTe's shape_div: a tuple divided by an integer folds left to right; each
 * integer step needs one operand to divide the other. */
tl_node *tl_shape_div(tl_ctx *c, const tl_node *a, const tl_node *b);
/* ceil_div of a shape by an integer, folded mode by mode as CuTe does. */
tl_node *tl_ceil_div_shape(tl_ctx *c, const tl_node *a, int64_t b);
/* Exclusive prefix product, congruent to `a` (starting at 1). */
tl_node *tl_prefix_product(tl_ctx *c, const tl_node *a);
/* The natural (colexicographic) coordinate of `idx` in `shape`, with strides
 * `stride` (NULL: compact column-major). */
tl_node *tl_idx2crd(tl_ctx *c, int64_t idx, const tl_node *shape, const tl_node *stride);
/* The value of a layout at coordinate `crd` (an integer or a tuple, at any
 * level; '_' counts as 0), added to *out. An integer coordinate for a tuple
 * mode is split colexicographically and the last mode is not reduced, so
 * indices past the end extend the layout along its last mode. */
void tl_crd2vec(tl_ctx *c, const tl_node *crd, const tl_node *layout, tl_vec *out);
/* The same for integer-valued layouts (fails on coordinate-valued ones). */
int64_t tl_crd2idx(tl_ctx *c, const tl_node *crd, const tl_node *layout);

/* ---- layouts: queries ---- */
int64_t tl_size(tl_ctx *c, const tl_node *layout);
/* C++'s cosize: sum over leaves of (shape - 1) * |stride|, plus 1 (per basis for coordinate layouts). */
int64_t tl_cosize(tl_ctx *c, const tl_node *layout);
/* Evaluation at an index (past the end extends the last mode). Integer strides only. */

/* ---- layouts: the algebra ---- */
tl_node *tl_coalesce(tl_ctx *c, const tl_node *layout);
/* Coalesces each mode the profile names (a tuple profile goes mode by mode). */
tl_node *tl_coalesce_profile(tl_ctx *c, const tl_node *layout, const tl_node *profile);
tl_node *tl_filter(tl_ctx *c, const tl_node *layout);
tl_node *tl_filter_profile(tl_ctx *c, const tl_node *layout, const tl_node *profile);
/* A o B for a layout B (distributes over B's modes). */
tl_node *tl_composition(tl_ctx *c, const tl_node *a, const tl_node *b);
/* A o tiler: a tiler is a layout, an integer n (n:1), '_' (A unchanged) or a
 * tuple of tilers applied mode by mode (A's other modes are dropped, as in C++). */
tl_node *tl_composition_tiler(tl_ctx *c, const tl_node *a, const tl_node *tiler);
/* complement(L, cotarget); cotarget NULL means cosize(filter(L)). */
tl_node *tl_complement(tl_ctx *c, const tl_node *layout, const tl_node *cotarget);
tl_node *tl_right_inverse(tl_ctx *c, const tl_node *layout);
tl_node *tl_left_inverse(tl_ctx *c, const tl_node *layout);

typedef enum { TL_LOGICAL, TL_ZIPPED, TL_TILED, TL_FLAT } tl_arrangement;

/* The eight divides and products that differ only in how they arrange the
 * result's modes, as X(name, operation, arrangement): one list that the
 * operations (layout/value.h), the public API and the calculator expand. */
#define TL_ARRANGED(X)                      \
    X(logical_divide, divide, TL_LOGICAL)   \
    X(zipped_divide, divide, TL_ZIPPED)     \
    X(tiled_divide, divide, TL_TILED)       \
    X(flat_divide, divide, TL_FLAT)         \
    X(logical_product, product, TL_LOGICAL) \
    X(zipped_product, product, TL_ZIPPED)   \
    X(tiled_product, product, TL_TILED)     \
    X(flat_product, product, TL_FLAT)

tl_node *tl_divide(tl_ctx *c, const tl_node *a, const tl_node *tiler, tl_arrangement how);
tl_node *tl_product_op(tl_ctx *c, const tl_node *a, const tl_node *tiler, tl_arrangement how);
/* C++ blocked_product (raked = 0) or raked_product (raked = 1). */
tl_node *tl_rank_product(tl_ctx *c, const tl_node *a, const tl_node *b, int raked);
/* Slices a layout at a coordinate holding '_': the kept modes, and the offset
 * of the fixed ones (integer strides). */
tl_node *tl_slice(tl_ctx *c, const tl_node *layout, const tl_node *crd, int64_t *offset);
int64_t tl_max_common_vector(tl_ctx *c, const tl_node *a, const tl_node *b);
/* The identity layout of `shape`: mode i maps to e_i (nested modes count
 * column-major within their top-level mode). */
tl_node *tl_identity(tl_ctx *c, const tl_node *shape);

/* ---- tilers ---- */
/* A tiler from an integer tuple: integers become n:1, '_' stays, tuples go mode by mode. */
tl_node *tl_tiler_from_tuple(tl_ctx *c, const tl_node *t);

#endif
