/* Values of the layout algebra and the operations on them; see value.h. */
#include <ctype.h>
#include <string.h>

#include "core/error.h"
#include "core/names.h"
#include "layout/value.h"

/* Each kind of value as the sentences name it. */
static const tess_named kind_names[] = {
    {TESS_LAYOUT_TUPLE, "an integer tuple"},
    {TESS_LAYOUT_PLAIN, "a layout"},
    {TESS_LAYOUT_SWIZZLED, "a swizzled layout"},
    {TESS_LAYOUT_TILER, "a tiler"},
    {TESS_LAYOUT_SWIZZLE, "a swizzle"},
};

tl_value tv_of(tess_layout_kind kind, tl_node *node) {
    tl_value v;
    memset(&v, 0, sizeof v);
    v.kind = kind;
    v.node = node;
    return v;
}

tl_value tv_int(tl_ctx *c, int64_t x) { return tv_of(TESS_LAYOUT_TUPLE, tl_int(c, x)); }

static int ok(tl_ctx *c, tl_value *out, tess_layout_kind kind, tl_node *node) {
    if (!node)
        return 0;
    *out = tv_of(kind, node);
    return c->status == TESS_STATUS_SUCCESS;
}

/* ---- swizzles ---- */

int64_t tv_swizzle(int bits, int base, int shift, int64_t x) {
    if (bits == 0)
        return x; /* Sw<0,M,S> is the identity */
    int64_t mask = ((INT64_C(1) << bits) - 1) << (base + (shift > 0 ? shift : 0));
    int64_t moved = shift >= 0 ? (x & mask) >> shift : (x & mask) << -shift;
    return x ^ moved;
}

int tv_make_swizzle(tl_ctx *c, int bits, int base, int shift, tl_value *out) {
    int ashift = shift < 0 ? -shift : shift;
    /* 62: the mask 1 << (bits + base + |shift|) must stay a positive int64. */
    if (bits < 0 || base < 0 || (bits > 0 && ashift < bits) || bits + base + ashift > 62) {
        tl_fail(c, "Sw<%d,%d,%d>: a swizzle needs bits >= 0, base >= 0, |shift| >= bits and fewer than 63 bits in all",
                bits, base, shift);
        return 0;
    }
    *out = tv_of(TESS_LAYOUT_SWIZZLE, NULL);
    out->bits = bits, out->base = base, out->shift = shift;
    return 1;
}

/* ---- text ---- */

static int scan_small_int(tl_ctx *c, tl_scan *s, int *out) {
    tl_node *x = tl_parse_tuple(c, s, 0);
    /* +-64: beyond any valid swizzle field (see tv_make_swizzle), and safe to cast to int. */
    if (!x || x->kind != TL_INT || x->value < -64 || x->value > 64) {
        tl_scan_fail(c, s, "a small integer in Sw<B,M,S>");
        return 0;
    }
    *out = (int)x->value;
    return 1;
}

/* A tiler: '<' item (',' item)* '>' where items are tilers, '_' or layouts. */
static tl_node *parse_tiler(tl_ctx *c, tl_scan *s, int depth) {
    if (depth > TL_MAX_DEPTH)
        return tl_scan_fail(c, s, "tilers nested deeper than 32 levels");
    tl_list items = {0};
    do {
        tl_skip_space(s);
        if (*s->at == '<') {
            s->at++;
            tl_push(c, &items, parse_tiler(c, s, depth + 1));
            continue;
        }
        tl_node *shape = tl_parse_tuple(c, s, 0);
        if (!shape)
            return NULL;
        if (tl_accept(s, ':')) {
            tl_node *stride = tl_parse_tuple(c, s, 1);
            tl_push(c, &items, stride ? tl_zip_shape_stride(c, shape, stride) : NULL);
        } else {
            tl_push(c, &items, tl_tiler_from_tuple(c, shape)); /* n is n:1; a tuple goes mode by mode */
        }
    } while (c->status == TESS_STATUS_SUCCESS && tl_accept(s, ','));
    if (c->status)
        return NULL;
    if (!tl_accept(s, '>'))
        return tl_scan_fail(c, s, "expected ',' or '>' in a tiler");
    return tl_tiler(c, items.n, items.item);
}

/* Whether the cursor is at the composition operator " o ". */
static int at_compose(tl_scan *s) {
    tl_skip_space(s);
    return s->at[0] == 'o' && (s->at[1] == '\0' || isspace((unsigned char)s->at[1]) || s->at[1] == '(');
}

int tv_parse(tl_ctx *c, tl_scan *s, tl_value *out) {
    tl_skip_space(s);
    if (strncmp(s->at, "Sw<", 3) == 0) {
        s->at += 3;
        int b, m, sh;
        if (!scan_small_int(c, s, &b) || !tl_accept(s, ',') || !scan_small_int(c, s, &m) || !tl_accept(s, ',') ||
            !scan_small_int(c, s, &sh) || !tl_accept(s, '>')) {
            tl_scan_fail(c, s, "a swizzle written Sw<B,M,S>");
            return 0;
        }
        if (!tv_make_swizzle(c, b, m, sh, out))
            return 0;
        if (!at_compose(s))
            return 1;
        s->at++;
        tl_node *first = tl_parse_tuple(c, s, 0);
        if (!first)
            return 0;
        int64_t offset = 0;
        if (first->kind == TL_INT && at_compose(s)) { /* "Sw<..> o offset o layout" */
            offset = first->value;
            s->at++;
            first = tl_parse_tuple(c, s, 0);
            if (!first)
                return 0;
        }
        tl_node *layout = tl_accept(s, ':') ? tl_zip_shape_stride(c, first, tl_parse_tuple(c, s, 1))
                                            : tl_compact_col_major(c, first, tl_int_stride(1));
        if (!layout)
            return 0;
        if (tl_has_basis(layout)) {
            tl_fail(c, "a swizzle cannot act on a coordinate-valued layout");
            return 0;
        }
        out->kind = TESS_LAYOUT_SWIZZLED;
        out->node = layout;
        out->offset = offset;
        return 1;
    }
    if (*s->at == '<') {
        s->at++;
        return ok(c, out, TESS_LAYOUT_TILER, parse_tiler(c, s, 0));
    }
    tl_node *shape = tl_parse_tuple(c, s, 0);
    if (!shape)
        return 0;
    if (!tl_accept(s, ':'))
        return ok(c, out, TESS_LAYOUT_TUPLE, shape);
    tl_node *stride = tl_parse_tuple(c, s, 1);
    return stride && ok(c, out, TESS_LAYOUT_PLAIN, tl_zip_shape_stride(c, shape, stride));
}

int tv_parse_text(tl_ctx *c, const char *text, tl_value *out) {
    tl_scan s = {text, text};
    if (!tv_parse(c, &s, out))
        return 0;
    tl_skip_space(&s);
    if (*s.at) {
        tl_scan_fail(c, &s, "unexpected text after the value");
        return 0;
    }
    return 1;
}

void tv_print(tl_text *t, const tl_value *v) {
    switch (v->kind) {
    case TESS_LAYOUT_TUPLE: tl_print_shape(t, v->node); return;
    case TESS_LAYOUT_PLAIN: tl_print_layout(t, v->node); return;
    case TESS_LAYOUT_TILER: tl_print_tiler(t, v->node); return;
    case TESS_LAYOUT_SWIZZLE: tl_text_printf(t, "Sw<%d,%d,%d>", v->bits, v->base, v->shift); return;
    case TESS_LAYOUT_SWIZZLED:
        tl_text_printf(t, "Sw<%d,%d,%d> o %lld o ", v->bits, v->base, v->shift, (long long)v->offset);
        tl_print_layout(t, v->node);
        return;
    }
}

tess_status tv_emit(tl_ctx *c, int good, const tl_text *t, char *buf, size_t cap, size_t *length) {
    tess_status s = c->status;
    if (s == TESS_STATUS_SUCCESS && !good)
        s = tess_fail(TESS_STATUS_INTERNAL_ERROR, "layout algebra: an operation failed without saying why");
    if (s == TESS_STATUS_SUCCESS) {
        size_t n = t->s ? t->len : 0;
        if (length)
            *length = n;
        if (buf && cap) {
            size_t k = n < cap - 1 ? n : cap - 1;
            if (k)
                memcpy(buf, t->s, k);
            buf[k] = '\0';
        }
    }
    tl_release(c);
    return s;
}

/* ---- conversions ---- */

static const char *kind_name(tess_layout_kind k) { return TESS_NAME_OF(kind_names, k, "an unknown value"); }

tl_node *tv_layout(tl_ctx *c, const tl_value *v, const char *what) {
    if (v->kind == TESS_LAYOUT_PLAIN)
        return v->node;
    if (v->kind == TESS_LAYOUT_TUPLE) {
        if (tl_has_under(v->node))
            return tl_fail(c, "%s: a tuple holding '_' is not a shape", what);
        return tl_compact_col_major(c, v->node, tl_int_stride(1));
    }
    return tl_fail(c, "%s: expected a layout, got %s", what, kind_name(v->kind));
}

tl_node *tv_tiler(tl_ctx *c, const tl_value *v, const char *what) {
    switch (v->kind) {
    case TESS_LAYOUT_PLAIN:
    case TESS_LAYOUT_TILER: return v->node;
    case TESS_LAYOUT_TUPLE: return tl_tiler_from_tuple(c, v->node);
    default: return tl_fail(c, "%s: expected a layout or a tiler, got %s", what, kind_name(v->kind));
    }
}

tl_node *tv_tuple(tl_ctx *c, const tl_value *v, const char *what) {
    if (v->kind == TESS_LAYOUT_TUPLE)
        return v->node;
    return tl_fail(c, "%s: expected an integer tuple, got %s", what, kind_name(v->kind));
}

/* The layout a value is built on: a layout, or a swizzled layout's inner one. */
tl_node *tv_base_layout(tl_ctx *c, const tl_value *v, const char *what) {
    return v->kind == TESS_LAYOUT_SWIZZLED ? v->node : tv_layout(c, v, what);
}

/* The result of a layout operation on x's base layout, keeping x's swizzle. */
static int keep_swizzle(tl_ctx *c, const tl_value *x, tl_node *node, tl_value *out) {
    if (!node)
        return 0;
    *out = *x;
    if (x->kind != TESS_LAYOUT_SWIZZLED)
        out->kind = TESS_LAYOUT_PLAIN;
    out->node = node;
    return c->status == TESS_STATUS_SUCCESS;
}

/* ---- queries ---- */

int tv_size(tl_ctx *c, const tl_value *x, int64_t *out) {
    if (x->kind == TESS_LAYOUT_SWIZZLE) {
        *out = INT64_C(1) << (x->bits + x->base + (x->shift < 0 ? -x->shift : x->shift));
        return 1;
    }
    if (x->kind == TESS_LAYOUT_TILER) {
        tl_fail(c, "size: a tiler has no size of its own");
        return 0;
    }
    *out = tl_product(c, x->node);
    return c->status == TESS_STATUS_SUCCESS;
}

int tv_cosize(tl_ctx *c, const tl_value *x, int64_t *out) {
    if (x->kind == TESS_LAYOUT_SWIZZLE)
        return tv_size(c, x, out);
    tl_node *l = tv_base_layout(c, x, "cosize");
    if (!l)
        return 0;
    *out = tl_cosize(c, l);
    return c->status == TESS_STATUS_SUCCESS;
}

int tv_rank(tl_ctx *c, const tl_value *x, int64_t *out) {
    if (x->kind == TESS_LAYOUT_SWIZZLE) {
        tl_fail(c, "rank: a swizzle has no modes");
        return 0;
    }
    *out = tl_rank(x->node);
    return 1;
}

int tv_depth(tl_ctx *c, const tl_value *x, int64_t *out) {
    if (x->kind == TESS_LAYOUT_SWIZZLE) {
        tl_fail(c, "depth: a swizzle has no modes");
        return 0;
    }
    *out = tl_depth(x->node);
    return 1;
}

/* The shape or stride tree of a layout as a TUPLE (strides keep their basis). */
static tl_node *project(tl_ctx *c, const tl_node *x, int want_stride) {
    if (!tl_is_tuple(x))
        return want_stride ? tl_leaf(c, x->stride.value, x->stride) : tl_int(c, x->value);
    tl_list l = {0};
    for (int i = 0; i < x->rank; i++)
        tl_push(c, &l, project(c, x->child[i], want_stride));
    return tl_list_tuple(c, &l);
}

int tv_shape(tl_ctx *c, const tl_value *x, tl_value *out) {
    if (x->kind == TESS_LAYOUT_TUPLE)
        return ok(c, out, TESS_LAYOUT_TUPLE, x->node);
    tl_node *l = tv_base_layout(c, x, "shape");
    return l && ok(c, out, TESS_LAYOUT_TUPLE, project(c, l, 0));
}

int tv_stride(tl_ctx *c, const tl_value *x, tl_value *out) {
    tl_node *l = tv_base_layout(c, x, "stride");
    return l && ok(c, out, TESS_LAYOUT_TUPLE, project(c, l, 1));
}

int tv_mode(tl_ctx *c, const tl_value *x, int i, tl_value *out) {
    if (x->kind == TESS_LAYOUT_SWIZZLE || i < 0 || i >= tl_rank(x->node)) {
        tl_fail(c, "mode %d does not exist (rank %d)", i, x->kind == TESS_LAYOUT_SWIZZLE ? 0 : tl_rank(x->node));
        return 0;
    }
    *out = *x;
    out->node = tl_get(x->node, i);
    return 1;
}

/* A coordinate vector as a TUPLE: an integer, or (e0, e1, ...) up to the last basis used. */
static tl_node *vec_tuple(tl_ctx *c, const tl_vec *v, int basis_count) {
    if (basis_count == 0)
        return tl_int(c, v->plain);
    tl_list l = {0};
    for (int i = 0; i < basis_count; i++)
        tl_push(c, &l, tl_int(c, v->e[i]));
    return basis_count == 1 ? l.item[0] : tl_list_tuple(c, &l);
}

/* The number of basis vectors a layout's strides use (0 for integer layouts). */
static int basis_count(const tl_node *x) {
    if (!tl_is_tuple(x))
        return x->stride.basis >= 0 ? x->stride.basis + 1 : 0;
    int n = 0;
    for (int i = 0; i < x->rank; i++) {
        int k = basis_count(x->child[i]);
        if (k > n)
            n = k;
    }
    return n;
}

int tv_eval(tl_ctx *c, const tl_value *x, const tl_value *coord, int64_t idx, tl_value *out) {
    if (x->kind == TESS_LAYOUT_SWIZZLE) {
        if (coord && (coord->kind != TESS_LAYOUT_TUPLE || coord->node->kind != TL_INT)) {
            tl_fail(c, "a swizzle is evaluated at an integer");
            return 0;
        }
        *out = tv_int(c, tv_swizzle(x->bits, x->base, x->shift, coord ? coord->node->value : idx));
        return 1;
    }
    tl_node *l = tv_base_layout(c, x, "evaluation");
    tl_node *crd = coord ? tv_tuple(c, coord, "evaluation: the coordinate") : tl_int(c, idx);
    if (!l || !crd)
        return 0;
    if (tl_has_under(crd)) {
        tl_fail(c, "evaluation: the coordinate holds '_'; slice the layout instead");
        return 0;
    }
    tl_vec v = {0};
    tl_crd2vec(c, crd, l, &v);
    if (c->status)
        return 0;
    if (x->kind == TESS_LAYOUT_SWIZZLED)
        v.plain = tv_swizzle(x->bits, x->base, x->shift, tl_add(c, x->offset, v.plain));
    return ok(c, out, TESS_LAYOUT_TUPLE, vec_tuple(c, &v, basis_count(l)));
}

int tv_slice(tl_ctx *c, const tl_value *x, const tl_value *coord, tl_value *out, int64_t *offset) {
    tl_node *l = tv_base_layout(c, x, "slice"), *crd = tv_tuple(c, coord, "slice: the coordinate");
    if (!l || !crd)
        return 0;
    if (tl_has_basis(l)) {
        tl_fail(c, "slice: the layout is coordinate-valued; evaluate it instead");
        return 0;
    }
    tl_node *r = tl_slice(c, l, crd, offset);
    if (!keep_swizzle(c, x, r, out))
        return 0;
    if (x->kind == TESS_LAYOUT_SWIZZLED) { /* the swizzle applies after the whole offset */
        out->offset = tl_add(c, x->offset, *offset);
        *offset = 0;
    }
    return c->status == TESS_STATUS_SUCCESS;
}

/* ---- the algebra ---- */

int tv_coalesce(tl_ctx *c, const tl_value *x, const tl_value *profile, tl_value *out) {
    tl_node *l = tv_base_layout(c, x, "coalesce"), *p = profile ? tv_tuple(c, profile, "coalesce: the profile") : NULL;
    if (!l || (profile && !p))
        return 0;
    return keep_swizzle(c, x, tl_coalesce_profile(c, l, p), out);
}

int tv_filter(tl_ctx *c, const tl_value *x, const tl_value *profile, tl_value *out) {
    tl_node *l = tv_base_layout(c, x, "filter"), *p = profile ? tv_tuple(c, profile, "filter: the profile") : NULL;
    if (!l || (profile && !p))
        return 0;
    return keep_swizzle(c, x, tl_filter_profile(c, l, p), out);
}

int tv_composition(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out) {
    if (a->kind == TESS_LAYOUT_SWIZZLE) { /* Sw o B: a swizzled layout */
        tl_node *l = tv_layout(c, b, "composition: the right-hand side of a swizzle");
        if (!l || tl_has_basis(l))
            return l ? (tl_fail(c, "a swizzle cannot act on a coordinate-valued layout"), 0) : 0;
        *out = *a;
        out->kind = TESS_LAYOUT_SWIZZLED;
        out->node = l;
        out->offset = 0;
        return 1;
    }
    tl_node *l = tv_base_layout(c, a, "composition"), *t = tv_tiler(c, b, "composition: the right-hand side");
    if (!l || !t)
        return 0;
    return keep_swizzle(c, a, tl_composition_tiler(c, l, t), out);
}

int tv_complement(tl_ctx *c, const tl_value *x, const tl_value *cotarget, tl_value *out) {
    tl_node *l = tv_layout(c, x, "complement");
    tl_node *t = cotarget ? tv_tuple(c, cotarget, "complement: the cotarget") : NULL;
    if (!l || (cotarget && !t))
        return 0;
    return ok(c, out, TESS_LAYOUT_PLAIN, tl_complement(c, l, t));
}

int tv_right_inverse(tl_ctx *c, const tl_value *x, tl_value *out) {
    tl_node *l = tv_layout(c, x, "right_inverse");
    return l && ok(c, out, TESS_LAYOUT_PLAIN, tl_right_inverse(c, l));
}

int tv_left_inverse(tl_ctx *c, const tl_value *x, tl_value *out) {
    tl_node *l = tv_layout(c, x, "left_inverse");
    return l && ok(c, out, TESS_LAYOUT_PLAIN, tl_left_inverse(c, l));
}

static int tv_divide(tl_ctx *c, const tl_value *a, const tl_value *tiler, tl_arrangement how, tl_value *out) {
    tl_node *l = tv_base_layout(c, a, "divide"), *t = tv_tiler(c, tiler, "divide: the tiler");
    if (!l || !t)
        return 0;
    return keep_swizzle(c, a, tl_divide(c, l, t, how), out);
}

static int tv_product(tl_ctx *c, const tl_value *a, const tl_value *tiler, tl_arrangement how, tl_value *out) {
    tl_node *l = tv_layout(c, a, "product"), *t = tv_tiler(c, tiler, "product: the tiler");
    return l && t && ok(c, out, TESS_LAYOUT_PLAIN, tl_product_op(c, l, t, how));
}

/* Each arranged divide or product: tv_divide or tv_product with its arrangement. */
#define TV_ARRANGED_DEFINE(name, op, how)                                                    \
    int tv_##name(tl_ctx *c, const tl_value *a, const tl_value *tiler, tl_value *out) {       \
        return tv_##op(c, a, tiler, how, out);                                               \
    }
TL_ARRANGED(TV_ARRANGED_DEFINE)
#undef TV_ARRANGED_DEFINE

/* C++ blocked_product (raked 0) or raked_product (raked 1). */
static int rank_product(tl_ctx *c, const tl_value *a, const tl_value *b, int raked, tl_value *out) {
    const char *name = raked ? "raked_product" : "blocked_product";
    tl_node *l = tv_layout(c, a, name), *r = tv_layout(c, b, name);
    if (!l || !r)
        return 0;
    return ok(c, out, TESS_LAYOUT_PLAIN, tl_rank_product(c, l, r, raked));
}

int tv_blocked_product(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out) {
    return rank_product(c, a, b, 0, out);
}

int tv_raked_product(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out) {
    return rank_product(c, a, b, 1, out);
}

int tv_max_common_vector(tl_ctx *c, const tl_value *a, const tl_value *b, int64_t *out) {
    tl_node *l = tv_layout(c, a, "max_common_vector"), *r = tv_layout(c, b, "max_common_vector");
    if (!l || !r)
        return 0;
    *out = tl_max_common_vector(c, l, r);
    return c->status == TESS_STATUS_SUCCESS;
}

int tv_make_layout(tl_ctx *c, const tl_value *shape, const tl_value *stride, tl_value *out) {
    tl_node *s = tv_tuple(c, shape, "make_layout: the shape");
    if (!s)
        return 0;
    if (!stride)
        return ok(c, out, TESS_LAYOUT_PLAIN, tl_compact_col_major(c, s, tl_int_stride(1)));
    tl_node *d = tv_tuple(c, stride, "make_layout: the stride");
    return d && ok(c, out, TESS_LAYOUT_PLAIN, tl_zip_shape_stride(c, s, d));
}

int tv_concat(tl_ctx *c, const tl_value *modes, int count, tl_value *out) {
    if (count < 1 || count > TL_MAX_RANK) {
        tl_fail(c, "make_layout: between 1 and %d layouts", TL_MAX_RANK);
        return 0;
    }
    tl_list l = {0};
    for (int i = 0; i < count; i++)
        tl_push(c, &l, tv_layout(c, &modes[i], "make_layout"));
    return ok(c, out, TESS_LAYOUT_PLAIN, tl_list_tuple(c, &l));
}

int tv_identity(tl_ctx *c, const tl_value *shape, tl_value *out) {
    tl_node *s = tv_tuple(c, shape, "make_identity_layout: the shape");
    if (s && tl_has_under(s))
        s = tl_fail(c, "make_identity_layout: '_' is not a shape");
    return s && ok(c, out, TESS_LAYOUT_PLAIN, tl_identity(c, s));
}

int tv_flatten(tl_ctx *c, const tl_value *x, tl_value *out) {
    if (x->kind != TESS_LAYOUT_TUPLE && x->kind != TESS_LAYOUT_PLAIN) {
        tl_fail(c, "flatten: expected a tuple or a layout, got %s", kind_name(x->kind));
        return 0;
    }
    tl_node *f = tl_is_tuple(x->node) ? tl_flatten(c, x->node) : x->node;
    return ok(c, out, x->kind, f);
}

int tv_prefix_product(tl_ctx *c, const tl_value *x, tl_value *out) {
    tl_node *t = tv_tuple(c, x, "prefix_product");
    return t && ok(c, out, TESS_LAYOUT_TUPLE, tl_prefix_product(c, t));
}

int tv_shape_div(tl_ctx *c, const tl_value *a, const tl_value *b, tl_value *out) {
    tl_node *x = tv_tuple(c, a, "shape_div"), *y = tv_tuple(c, b, "shape_div");
    return x && y && ok(c, out, TESS_LAYOUT_TUPLE, tl_shape_div(c, x, y));
}

int tv_idx2crd(tl_ctx *c, int64_t idx, const tl_value *shape, const tl_value *stride, tl_value *out) {
    tl_node *s = tv_tuple(c, shape, "idx2crd: the shape");
    tl_node *d = stride ? tv_tuple(c, stride, "idx2crd: the stride") : NULL;
    if (!s || (stride && !d))
        return 0;
    return ok(c, out, TESS_LAYOUT_TUPLE, tl_idx2crd(c, idx, s, d));
}

int tv_crd2idx(tl_ctx *c, const tl_value *coord, const tl_value *shape, const tl_value *stride, int64_t *out) {
    tl_node *crd = tv_tuple(c, coord, "crd2idx: the coordinate"), *s = tv_tuple(c, shape, "crd2idx: the shape");
    tl_node *d = stride ? tv_tuple(c, stride, "crd2idx: the stride") : NULL;
    if (!crd || !s || (stride && !d))
        return 0;
    tl_node *layout = d ? tl_zip_shape_stride(c, s, d) : tl_compact_col_major(c, s, tl_int_stride(1));
    if (!layout)
        return 0;
    *out = tl_crd2idx(c, crd, layout);
    return c->status == TESS_STATUS_SUCCESS;
}
