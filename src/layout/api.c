/* The public C API of the layout algebra (tessera/layout.h): each value is one
 * allocation holding its tree in preorder; each call unpacks its arguments
 * into an arena, runs the operation and packs the result. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "layout/value.h"

/* One tree node in preorder. */
typedef struct packed_node {
    int32_t kind, rank, basis, pad;
    int64_t value, stride;
} packed_node;

struct tess_layout {
    tess_layout_kind kind;
    int bits, base, shift;
    int64_t offset;
    int32_t count; /* nodes; 0 for a swizzle */
    packed_node node[];
};

static int count_nodes(const tl_node *x) {
    if (!x)
        return 0;
    int n = 1;
    if (x->kind == TL_TUPLE || x->kind == TL_TILER)
        for (int i = 0; i < x->rank; i++)
            n += count_nodes(x->child[i]);
    return n;
}

static void pack_into(const tl_node *x, packed_node *out, int *at) {
    packed_node *p = &out[(*at)++];
    memset(p, 0, sizeof *p);
    p->kind = (int32_t)x->kind;
    p->rank = x->rank;
    p->value = x->value;
    p->stride = x->stride.value;
    p->basis = x->stride.basis;
    if (x->kind == TL_TUPLE || x->kind == TL_TILER)
        for (int i = 0; i < x->rank; i++)
            pack_into(x->child[i], out, at);
}

static tess_layout *pack(const tl_value *v) {
    int n = count_nodes(v->node);
    tess_layout *x = malloc(sizeof *x + sizeof(packed_node) * (size_t)n);
    if (!x)
        return NULL;
    x->kind = v->kind;
    x->bits = v->bits, x->base = v->base, x->shift = v->shift;
    x->offset = v->offset;
    x->count = n;
    int at = 0;
    if (v->node)
        pack_into(v->node, x->node, &at);
    return x;
}

static tl_node *unpack_at(tl_ctx *c, const packed_node *p, int count, int *at) {
    if (*at >= count)
        return tl_fail(c, "internal: a damaged layout value");
    const packed_node *q = &p[(*at)++];
    tl_stride d = {q->stride, q->basis};
    switch (q->kind) {
    case TL_INT: return tl_leaf(c, q->value, d);
    case TL_UNDER: return tl_under(c);
    default: break;
    }
    tl_list l = {0};
    for (int i = 0; i < q->rank; i++)
        tl_push(c, &l, unpack_at(c, p, count, at));
    if (c->status)
        return NULL;
    return q->kind == TL_TILER ? tl_tiler(c, l.n, l.item) : tl_tuple(c, l.n, l.item);
}

int tv_unpack(tl_ctx *c, const tess_layout *x, tl_value *v, const char *fn, const char *arg) {
    if (!x) {
        tl_fail(c, "%s: %s is NULL", fn, arg);
        return 0;
    }
    memset(v, 0, sizeof *v);
    v->kind = x->kind;
    v->bits = x->bits, v->base = x->base, v->shift = x->shift;
    v->offset = x->offset;
    if (x->count == 0)
        return 1;
    int at = 0;
    v->node = unpack_at(c, x->node, x->count, &at);
    return v->node != NULL;
}

/* Packs `v` into *out when the context succeeded; releases the context either way. */
static tess_status finish(tl_ctx *c, int good, const tl_value *v, tess_layout **out) {
    tess_status s = c->status;
    if (good && s == TESS_STATUS_SUCCESS && out) {
        *out = pack(v);
        if (!*out)
            s = tess_fail(TESS_STATUS_ALLOC_FAILED, "layout algebra: out of host memory for the result");
    } else if (s == TESS_STATUS_SUCCESS && !good) {
        s = tess_fail(TESS_STATUS_INTERNAL_ERROR, "layout algebra: an operation failed without saying why");
    }
    tl_release(c);
    return s;
}

static tess_status null_out(const void *out, const char *fn) {
    return out ? TESS_STATUS_SUCCESS : tess_fail(TESS_STATUS_INVALID_VALUE, "%s: the output pointer is NULL", fn);
}

/* Opens the context of a call that writes *out; 0 where out is NULL, the
 * context then holding null_out's sentence for finish to return. */
static int open_call(tl_ctx *c, const void *out, const char *fn) {
    tl_init(c);
    c->status = null_out(out, fn);
    return out != NULL;
}

/* ---- making, printing, freeing ---- */

TESS_API tess_status tess_layout_parse(const char *text, tess_layout **out) {
    if (null_out(out, "tess_layout_parse"))
        return TESS_STATUS_INVALID_VALUE;
    *out = NULL;
    if (!text)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_parse: the text is NULL");
    tl_ctx c;
    tl_init(&c);
    tl_value v;
    int good = tv_parse_text(&c, text, &v);
    return finish(&c, good, &v, out);
}

TESS_API size_t tess_layout_print(const tess_layout *x, char *buf, size_t cap) {
    if (cap && buf)
        buf[0] = '\0';
    if (!x)
        return 0;
    tl_ctx c;
    tl_init(&c);
    tl_value v;
    tl_text t = {0};
    t.ctx = &c;
    size_t n = 0;
    int good = tv_unpack(&c, x, &v, "tess_layout_print", "the value");
    if (good)
        tv_print(&t, &v);
    tv_emit(&c, good, &t, buf, cap, &n);
    return n;
}

TESS_API tess_layout_kind tess_layout_kind_of(const tess_layout *x) { return x ? x->kind : TESS_LAYOUT_TUPLE; }

TESS_API tess_status tess_layout_copy(const tess_layout *x, tess_layout **out) {
    if (null_out(out, "tess_layout_copy"))
        return TESS_STATUS_INVALID_VALUE;
    if (!x)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_copy: the value is NULL");
    size_t bytes = sizeof *x + sizeof(packed_node) * (size_t)x->count;
    *out = malloc(bytes);
    if (!*out)
        return tess_fail(TESS_STATUS_ALLOC_FAILED, "tess_layout_copy: out of host memory");
    memcpy(*out, x, bytes);
    return TESS_STATUS_SUCCESS;
}

TESS_API void tess_layout_free(tess_layout *x) { free(x); }

TESS_API int tess_layout_equal(const tess_layout *a, const tess_layout *b) {
    if (!a || !b || a->kind != b->kind || a->count != b->count || a->bits != b->bits || a->base != b->base ||
        a->shift != b->shift || a->offset != b->offset)
        return 0;
    for (int i = 0; i < a->count; i++) {
        const packed_node *p = &a->node[i], *q = &b->node[i];
        if (p->kind != q->kind || p->rank != q->rank || p->value != q->value || p->stride != q->stride ||
            (p->stride != 0 && p->basis != q->basis))
            return 0;
    }
    return 1;
}

/* ---- generic call shapes ---- */

static tess_status call_unary(const tess_layout *x, tess_layout **out, tv_unary fn, const char *name) {
    if (null_out(out, name))
        return TESS_STATUS_INVALID_VALUE;
    *out = NULL;
    tl_ctx c;
    tl_init(&c);
    tl_value a, r;
    int good = tv_unpack(&c, x, &a, name, "the value") && fn(&c, &a, &r);
    return finish(&c, good, &r, out);
}

/* `optional_b` lets b be NULL (then fn sees NULL). */
static tess_status call_binary(const tess_layout *x, const tess_layout *y, int optional_b, tess_layout **out,
                               tv_binary fn, const char *name) {
    if (null_out(out, name))
        return TESS_STATUS_INVALID_VALUE;
    *out = NULL;
    tl_ctx c;
    tl_init(&c);
    tl_value a, b, r;
    int have_b = y != NULL || !optional_b;
    int good = tv_unpack(&c, x, &a, name, "the first argument") &&
               (!have_b || tv_unpack(&c, y, &b, name, "the second argument")) && fn(&c, &a, have_b ? &b : NULL, &r);
    return finish(&c, good, &r, out);
}

static tess_status call_query(const tess_layout *x, int64_t *out, tv_query fn, const char *name) {
    tl_ctx c;
    tl_value a;
    int good = open_call(&c, out, name) && tv_unpack(&c, x, &a, name, "the value") && fn(&c, &a, out);
    return finish(&c, good, NULL, NULL);
}

/* A query whose answer is small (a rank, a depth), for an int output. */
static tess_status call_int_query(const tess_layout *x, int *out, tv_query fn, const char *name) {
    int64_t v = 0;
    tess_status s = call_query(x, out ? &v : NULL, fn, name);
    if (s == TESS_STATUS_SUCCESS)
        *out = (int)v;
    return s;
}

/* ---- making ---- */

TESS_API tess_status tess_layout_make(const tess_layout *shape, const tess_layout *stride, tess_layout **out) {
    return call_binary(shape, stride, 1, out, tv_make_layout, "tess_layout_make");
}

TESS_API tess_status tess_layout_make_identity(const tess_layout *shape, tess_layout **out) {
    return call_unary(shape, out, tv_identity, "tess_layout_make_identity");
}

TESS_API tess_status tess_layout_make_int(int64_t value, tess_layout **out) {
    tl_ctx c;
    tl_value v = {0};
    if (open_call(&c, out, "tess_layout_make_int"))
        v = tv_int(&c, value);
    return finish(&c, v.node != NULL, &v, out);
}

TESS_API tess_status tess_layout_make_swizzle(int bits, int base, int shift, tess_layout **out) {
    tl_ctx c;
    tl_value v;
    int good = open_call(&c, out, "tess_layout_make_swizzle") && tv_make_swizzle(&c, bits, base, shift, &v);
    return finish(&c, good, &v, out);
}

TESS_API tess_status tess_layout_make_swizzled(const tess_layout *swizzle, int64_t offset, const tess_layout *layout,
                                               tess_layout **out) {
    tl_ctx c;
    tl_value sw, l, r;
    int good = open_call(&c, out, "tess_layout_make_swizzled") &&
               tv_unpack(&c, swizzle, &sw, "tess_layout_make_swizzled", "the swizzle") &&
               tv_unpack(&c, layout, &l, "tess_layout_make_swizzled", "the layout");
    if (good && sw.kind != TESS_LAYOUT_SWIZZLE)
        good = tl_fail(&c, "tess_layout_make_swizzled: the first argument is not a swizzle") != NULL;
    if (good && (good = tv_composition(&c, &sw, &l, &r)))
        r.offset = offset;
    return finish(&c, good, &r, out);
}

/* Opens a call on an array of values and unpacks them into the context,
 * NULL entries becoming '_' when allowed; NULL on failure. */
static tl_value *open_array_call(tl_ctx *c, const void *out, const tess_layout *const *xs, int count, int allow_null,
                                 const char *fn) {
    if (!open_call(c, out, fn))
        return NULL;
    tl_value *vs = tl_alloc(c, sizeof(tl_value) * (size_t)(count > 0 ? count : 1));
    if (!vs)
        return NULL;
    if (!xs || count < 1 || count > TL_MAX_RANK)
        return tl_fail(c, "%s: between 1 and %d values are needed", fn, TL_MAX_RANK);
    for (int i = 0; i < count; i++) {
        if (!xs[i] && allow_null)
            vs[i] = tv_of(TESS_LAYOUT_TUPLE, tl_under(c));
        else if (!tv_unpack(c, xs[i], &vs[i], fn, "a mode"))
            return NULL;
    }
    return vs;
}

TESS_API tess_status tess_layout_concat(const tess_layout *const *modes, int count, tess_layout **out) {
    tl_ctx c;
    tl_value r, *vs = open_array_call(&c, out, modes, count, 0, "tess_layout_concat");
    int good = vs && tv_concat(&c, vs, count, &r);
    return finish(&c, good, &r, out);
}

TESS_API tess_status tess_layout_make_tiler(const tess_layout *const *modes, int count, tess_layout **out) {
    tl_ctx c;
    tl_value r, *vs = open_array_call(&c, out, modes, count, 1, "tess_layout_make_tiler");
    int good = vs != NULL;
    tl_list l = {0};
    for (int i = 0; good && i < count; i++)
        tl_push(&c, &l, tv_tiler(&c, &vs[i], "tess_layout_make_tiler"));
    if (good && c.status == TESS_STATUS_SUCCESS)
        r = tv_of(TESS_LAYOUT_TILER, tl_tiler(&c, l.n, l.item));
    return finish(&c, good && c.status == TESS_STATUS_SUCCESS, &r, out);
}

/* ---- queries ---- */

TESS_API tess_status tess_layout_size(const tess_layout *x, int64_t *out) {
    return call_query(x, out, tv_size, "tess_layout_size");
}
TESS_API tess_status tess_layout_cosize(const tess_layout *x, int64_t *out) {
    return call_query(x, out, tv_cosize, "tess_layout_cosize");
}

TESS_API tess_status tess_layout_rank(const tess_layout *x, int *out) {
    return call_int_query(x, out, tv_rank, "tess_layout_rank");
}
TESS_API tess_status tess_layout_depth(const tess_layout *x, int *out) {
    return call_int_query(x, out, tv_depth, "tess_layout_depth");
}

TESS_API tess_status tess_layout_shape(const tess_layout *x, tess_layout **out) {
    return call_unary(x, out, tv_shape, "tess_layout_shape");
}
TESS_API tess_status tess_layout_stride(const tess_layout *x, tess_layout **out) {
    return call_unary(x, out, tv_stride, "tess_layout_stride");
}

TESS_API tess_status tess_layout_mode(const tess_layout *x, int i, tess_layout **out) {
    tl_ctx c;
    tl_value a, r;
    int good = open_call(&c, out, "tess_layout_mode") && tv_unpack(&c, x, &a, "tess_layout_mode", "the value") &&
               tv_mode(&c, &a, i, &r);
    return finish(&c, good, &r, out);
}

/* Opens a call that writes *out, unpacks x (and coord, when given) and
 * evaluates at coord or at idx. */
static int eval_at(tl_ctx *c, const void *out, const tess_layout *x, const tess_layout *coord, int64_t idx,
                   tl_value *r, const char *name) {
    tl_value a, k;
    return open_call(c, out, name) && tv_unpack(c, x, &a, name, "the layout") &&
           (!coord || tv_unpack(c, coord, &k, name, "the coordinate")) && tv_eval(c, &a, coord ? &k : NULL, idx, r);
}

TESS_API tess_status tess_layout_eval_value(const tess_layout *x, const tess_layout *coord, int64_t idx,
                                            tess_layout **out) {
    tl_ctx c;
    tl_value r;
    int good = eval_at(&c, out, x, coord, idx, &r, "tess_layout_eval_value");
    return finish(&c, good, &r, out);
}

/* Evaluates to an integer (refusing coordinate-valued results). */
static tess_status eval_int(const tess_layout *x, const tess_layout *coord, int64_t idx, int64_t *out,
                            const char *name) {
    tl_ctx c;
    tl_value r;
    int good = eval_at(&c, out, x, coord, idx, &r, name);
    if (good && r.node->kind != TL_INT)
        good = tl_fail(&c, "%s: the layout is coordinate-valued; use tess_layout_eval_value", name) != NULL;
    if (good)
        *out = r.node->value;
    return finish(&c, good, NULL, NULL);
}

TESS_API tess_status tess_layout_eval(const tess_layout *x, int64_t idx, int64_t *out) {
    return eval_int(x, NULL, idx, out, "tess_layout_eval");
}

TESS_API tess_status tess_layout_eval_coord(const tess_layout *x, const tess_layout *coord, int64_t *out) {
    if (!coord)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_eval_coord: the coordinate is NULL");
    return eval_int(x, coord, 0, out, "tess_layout_eval_coord");
}

TESS_API tess_status tess_layout_slice(const tess_layout *x, const tess_layout *coord, tess_layout **out,
                                       int64_t *offset) {
    if (null_out(out, "tess_layout_slice") || null_out(offset, "tess_layout_slice"))
        return TESS_STATUS_INVALID_VALUE;
    tl_ctx c;
    tl_init(&c);
    tl_value a, k, r;
    int good = tv_unpack(&c, x, &a, "tess_layout_slice", "the layout") &&
               tv_unpack(&c, coord, &k, "tess_layout_slice", "the coordinate") && tv_slice(&c, &a, &k, &r, offset);
    return finish(&c, good, &r, out);
}

/* ---- the algebra ---- */

TESS_API tess_status tess_layout_coalesce(const tess_layout *x, const tess_layout *profile, tess_layout **out) {
    return call_binary(x, profile, 1, out, tv_coalesce, "tess_layout_coalesce");
}
TESS_API tess_status tess_layout_filter(const tess_layout *x, const tess_layout *profile, tess_layout **out) {
    return call_binary(x, profile, 1, out, tv_filter, "tess_layout_filter");
}
TESS_API tess_status tess_layout_composition(const tess_layout *a, const tess_layout *b, tess_layout **out) {
    return call_binary(a, b, 0, out, tv_composition, "tess_layout_composition");
}
TESS_API tess_status tess_layout_complement(const tess_layout *x, const tess_layout *cotarget, tess_layout **out) {
    return call_binary(x, cotarget, 1, out, tv_complement, "tess_layout_complement");
}
TESS_API tess_status tess_layout_right_inverse(const tess_layout *x, tess_layout **out) {
    return call_unary(x, out, tv_right_inverse, "tess_layout_right_inverse");
}
TESS_API tess_status tess_layout_left_inverse(const tess_layout *x, tess_layout **out) {
    return call_unary(x, out, tv_left_inverse, "tess_layout_left_inverse");
}

/* Each public divide and product with an arrangement (TL_ARRANGED). */
#define ARRANGED_API(name, op, how)                                                                           \
    TESS_API tess_status tess_layout_##name(const tess_layout *a, const tess_layout *tiler, tess_layout **out) { \
        return call_binary(a, tiler, 0, out, tv_##name, "tess_layout_" #name);                                \
    }
TL_ARRANGED(ARRANGED_API)
#undef ARRANGED_API

TESS_API tess_status tess_layout_blocked_product(const tess_layout *a, const tess_layout *b, tess_layout **out) {
    return call_binary(a, b, 0, out, tv_blocked_product, "tess_layout_blocked_product");
}
TESS_API tess_status tess_layout_raked_product(const tess_layout *a, const tess_layout *b, tess_layout **out) {
    return call_binary(a, b, 0, out, tv_raked_product, "tess_layout_raked_product");
}

TESS_API tess_status tess_layout_max_common_vector(const tess_layout *a, const tess_layout *b, int64_t *out) {
    tl_ctx c;
    tl_value x, y;
    int good = open_call(&c, out, "tess_layout_max_common_vector") &&
               tv_unpack(&c, a, &x, "tess_layout_max_common_vector", "the first layout") &&
               tv_unpack(&c, b, &y, "tess_layout_max_common_vector", "the second layout") &&
               tv_max_common_vector(&c, &x, &y, out);
    return finish(&c, good, NULL, NULL);
}

/* ---- integer tuples ---- */

TESS_API tess_status tess_layout_flatten(const tess_layout *x, tess_layout **out) {
    return call_unary(x, out, tv_flatten, "tess_layout_flatten");
}
TESS_API tess_status tess_layout_prefix_product(const tess_layout *x, tess_layout **out) {
    return call_unary(x, out, tv_prefix_product, "tess_layout_prefix_product");
}
TESS_API tess_status tess_layout_shape_div(const tess_layout *a, const tess_layout *b, tess_layout **out) {
    return call_binary(a, b, 0, out, tv_shape_div, "tess_layout_shape_div");
}

TESS_API tess_status tess_layout_idx2crd(int64_t idx, const tess_layout *shape, const tess_layout *stride,
                                         tess_layout **out) {
    tl_ctx c;
    tl_value s, d, r;
    int good = open_call(&c, out, "tess_layout_idx2crd") &&
               tv_unpack(&c, shape, &s, "tess_layout_idx2crd", "the shape") &&
               (!stride || tv_unpack(&c, stride, &d, "tess_layout_idx2crd", "the stride")) &&
               tv_idx2crd(&c, idx, &s, stride ? &d : NULL, &r);
    return finish(&c, good, &r, out);
}

TESS_API tess_status tess_layout_crd2idx(const tess_layout *coord, const tess_layout *shape,
                                         const tess_layout *stride, int64_t *out) {
    tl_ctx c;
    tl_value k, s, d;
    int good = open_call(&c, out, "tess_layout_crd2idx") &&
               tv_unpack(&c, coord, &k, "tess_layout_crd2idx", "the coordinate") &&
               tv_unpack(&c, shape, &s, "tess_layout_crd2idx", "the shape") &&
               (!stride || tv_unpack(&c, stride, &d, "tess_layout_crd2idx", "the stride")) &&
               tv_crd2idx(&c, &k, &s, stride ? &d : NULL, out);
    return finish(&c, good, NULL, NULL);
}

TESS_API int tess_layout_congruent(const tess_layout *a, const tess_layout *b) {
    tl_ctx c;
    tl_init(&c);
    tl_value x, y;
    int r = tv_unpack(&c, a, &x, "tess_layout_congruent", "a") && tv_unpack(&c, b, &y, "tess_layout_congruent", "b") &&
            x.node && y.node && tl_congruent(x.node, y.node);
    tl_release(&c);
    return r;
}
