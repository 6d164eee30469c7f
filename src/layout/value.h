/* Internal: values of the layout algebra (the kinds of tessera/layout.h) as
 * trees in an arena, with the operations on them. The public API and the
 * calculator both go through these functions, so each operation decides
 * once how it treats tuples, tilers and swizzled layouts. */
#ifndef TESS_LAYOUT_VALUE_H
#define TESS_LAYOUT_VALUE_H

#include "layout/ops.h"
#include "layout/parse.h"
#include "tessera/layout.h"

typedef struct tl_value {
    tess_layout_kind kind;
    tl_node *node;          /* the tuple, layout, tiler, or a swizzled layout's inner layout */
    int bits, base, shift;  /* SWIZZLE and SWIZZLED */
    int64_t offset;         /* SWIZZLED */
} tl_value;

tl_value tv_of(tess_layout_kind kind, tl_node *node);
/* An integer as a TUPLE value. */
tl_value tv_int(tl_ctx *c, int64_t v);

/* Reads one value (see tess_layout_parse) at the cursor. */
int tv_parse(tl_ctx *c, tl_scan *s, tl_value *out);
/* Parses a whole text as one value. */
int tv_parse_text(tl_ctx *c, const char *text, tl_value *out);
void tv_print(tl_text *t, const tl_value *v);
/* Reads a public value into the context; `fn` and `arg` name it in the sentence if it is NULL. */
int tv_unpack(tl_ctx *c, const tess_layout *x, tl_value *v, const char *fn, const char *arg);

/* The value as a layout (a TUPLE S means make_layout(S)), a tiler, or a tuple. */
tl_node *tv_layout(tl_ctx *c, const tl_value *v, const char *what);
tl_node *tv_tiler(tl_ctx *c, const tl_value *v, const char *what);
tl_node *tv_tuple(tl_ctx *c, const tl_value *v, const char *what);
/* A layout, or a swizzled layout's inner one. */
tl_node *tv_base_layout(tl_ctx *c, const tl_value *v, const char *what);

/* Applies a swizzle to an offset. */
int64_t tv_swizzle(int bits, int base, int shift, int64_t x);
int tv_make_swizzle(tl_ctx *c, int bits, int base, int shift, tl_value *out);

/* Copies a text result into a caller's buffer (snprintf-style, full length in
 * *length), turns the context's outcome into a status, and releases the context. */
tess_status tv_emit(tl_ctx *c, int good, const tl_text *t, char *buf, size_t cap, size_t *length);

/* ---- operations (1 on success; on failure the context holds the sentence) ---- */
/* The shapes most operations share, so that the public API and the
 * calculator call them alike. A binary operation's b may be NULL where it
 * is optional (a profile, a cotarget, a stride). */
typedef int (*tv_unary)(tl_ctx *c, const tl_value *x, tl_value *out);
typedef int (*tv_binary)(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out);
typedef int (*tv_query)(tl_ctx *c, const tl_value *x, int64_t *out);

int tv_size(tl_ctx *c, const tl_value *x, int64_t *out);
int tv_cosize(tl_ctx *c, const tl_value *x, int64_t *out);
int tv_rank(tl_ctx *c, const tl_value *x, int64_t *out);
int tv_depth(tl_ctx *c, const tl_value *x, int64_t *out);
int tv_shape(tl_ctx *c, const tl_value *x, tl_value *out);
int tv_stride(tl_ctx *c, const tl_value *x, tl_value *out);
int tv_mode(tl_ctx *c, const tl_value *x, int i, tl_value *out);
/* Value at a coordinate (NULL: at index idx), as a TUPLE (an integer or a coordinate). */
int tv_eval(tl_ctx *c, const tl_value *x, const tl_value *coord, int64_t idx, tl_value *out);
int tv_slice(tl_ctx *c, const tl_value *x, const tl_value *coord, tl_value *out, int64_t *offset);
int tv_coalesce(tl_ctx *c, const tl_value *x, const tl_value *profile, tl_value *out);
int tv_filter(tl_ctx *c, const tl_value *x, const tl_value *profile, tl_value *out);
int tv_composition(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out);
int tv_complement(tl_ctx *c, const tl_value *x, const tl_value *cotarget, tl_value *out);
int tv_right_inverse(tl_ctx *c, const tl_value *x, tl_value *out);
int tv_left_inverse(tl_ctx *c, const tl_value *x, tl_value *out);
/* tv_logical_divide, tv_zipped_divide, ..., tv_flat_product (TL_ARRANGED). */
#define TV_ARRANGED_DECLARE(name, op, how) \
    int tv_##name(tl_ctx *c, const tl_value *a, const tl_value *tiler, tl_value *out);
TL_ARRANGED(TV_ARRANGED_DECLARE)
#undef TV_ARRANGED_DECLARE
int tv_blocked_product(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out);
int tv_raked_product(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out);
int tv_max_common_vector(tl_ctx *c, const tl_value *a, const tl_value *b, int64_t *out);
int tv_make_layout(tl_ctx *c, const tl_value *shape, const tl_value *stride, tl_value *out);
int tv_concat(tl_ctx *c, const tl_value *modes, int count, tl_value *out);
int tv_identity(tl_ctx *c, const tl_value *shape, tl_value *out);
int tv_flatten(tl_ctx *c, const tl_value *x, tl_value *out);
int tv_prefix_product(tl_ctx *c, const tl_value *x, tl_value *out);
int tv_shape_div(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out);
int tv_idx2crd(tl_ctx *c, int64_t idx, const tl_value *shape, const tl_value *stride, tl_value *out);
int tv_crd2idx(tl_ctx *c, const tl_value *coord, const tl_value *shape, const tl_value *stride, int64_t *out);

#endif
