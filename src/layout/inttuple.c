/* Integer-tuple arithmetic of the layout algebra: shape_div, ceil_div,
 * prefix products and the coordinate <-> index maps. */
#include "layout/ops.h"
#include "layout/parse.h"

/* One integer step of shape_div: exact when either operand divides the other. */
static int64_t shape_div_int(tl_ctx *c, int64_t a, int64_t b) {
    if (a == 0 || b == 0) {
        tl_fail(c, "shape_div(%lld, %lld): division involving 0", (long long)a, (long long)b);
        return 0;
    }
    if (a % b != 0 && b % a != 0) {
        tl_fail(c, "shape_div(%lld, %lld): neither divides the other", (long long)a, (long long)b);
        return 0;
    }
    if (a % b == 0)
        return a / b;
    return (a < 0) != (b < 0) ? -1 : 1; /* |a| < |b|: rounds away from zero to +-1 */
}

tl_node *tl_shape_div(tl_ctx *c, const tl_node *a, const tl_node *b) {
    if (a->kind == TL_UNDER || b->kind == TL_UNDER)
        return tl_fail(c, "shape_div: '_' is not a number");
    if (tl_is_tuple(a)) {
        tl_list l = {0};
        if (tl_is_tuple(b)) {
            if (a->rank != b->rank)
                return tl_fail(c, "shape_div: ranks %d and %d differ", a->rank, b->rank);
            for (int i = 0; i < a->rank; i++)
                tl_push(c, &l, tl_shape_div(c, a->child[i], b->child[i]));
            return tl_list_tuple(c, &l);
        }
        int64_t rest = b->value;
        for (int i = 0; i < a->rank && c->status == TESS_STATUS_SUCCESS; i++) {
            tl_push(c, &l, tl_shape_div(c, a->child[i], tl_int(c, rest)));
            rest = shape_div_int(c, rest, tl_product(c, a->child[i]));
        }
        return tl_list_tuple(c, &l);
    }
    int64_t bv = tl_is_tuple(b) ? tl_product(c, b) : b->value;
    int64_t r = shape_div_int(c, a->value, bv);
    return c->status ? NULL : tl_int(c, r);
}

tl_node *tl_ceil_div_shape(tl_ctx *c, const tl_node *a, int64_t b) {
    if (!tl_is_tuple(a))
        return tl_int(c, tl_ceil_div(a->value, b));
    tl_list l = {0};
    int64_t rest = b;
    for (int i = 0; i < a->rank; i++) {
        tl_push(c, &l, tl_ceil_div_shape(c, a->child[i], rest));
        const int64_t size = tl_product(c, a->child[i]);
        if (c->status != TESS_STATUS_SUCCESS) /* the product overflowed (reported): no 0 to divide by */
            return NULL;
        rest = tl_ceil_div(rest, size);
    }
    return tl_list_tuple(c, &l);
}

static tl_node *prefix_at(tl_ctx *c, const tl_node *a, int64_t *running) {
    if (a->kind == TL_UNDER)
        return tl_fail(c, "prefix_product: '_' is not a number");
    if (!tl_is_tuple(a)) {
        tl_node *x = tl_int(c, *running);
        *running = tl_mul(c, *running, a->value);
        return x;
    }
    tl_list l = {0};
    for (int i = 0; i < a->rank; i++)
        tl_push(c, &l, prefix_at(c, a->child[i], running));
    return tl_list_tuple(c, &l);
}

tl_node *tl_prefix_product(tl_ctx *c, const tl_node *a) {
    int64_t running = 1;
    return prefix_at(c, a, &running);
}

static tl_node *idx2crd_at(tl_ctx *c, int64_t idx, const tl_node *shape, const tl_node *stride) {
    if (tl_is_tuple(shape)) {
        if (!tl_is_tuple(stride) || stride->rank != shape->rank)
            return tl_fail(c, "idx2crd: shape and stride are not congruent");
        tl_list l = {0};
        for (int i = 0; i < shape->rank; i++)
            tl_push(c, &l, idx2crd_at(c, idx, shape->child[i], stride->child[i]));
        return tl_list_tuple(c, &l);
    }
    if (tl_is_tuple(stride))
        return tl_fail(c, "idx2crd: shape and stride are not congruent");
    if (shape->value < 1 || stride->value == 0)
        return tl_fail(c, "idx2crd: shape %lld with stride %lld", (long long)shape->value, (long long)stride->value);
    return tl_int(c, tl_floor_mod(tl_floor_div(idx, stride->value), shape->value));
}

tl_node *tl_idx2crd(tl_ctx *c, int64_t idx, const tl_node *shape, const tl_node *stride) {
    if (tl_has_under(shape) || (stride && tl_has_under(stride)))
        return tl_fail(c, "idx2crd: '_' is not a number");
    if (!stride)
        stride = tl_prefix_product(c, shape);
    return stride ? idx2crd_at(c, idx, shape, stride) : NULL;
}

void tl_crd2vec(tl_ctx *c, const tl_node *crd, const tl_node *x, tl_vec *out) {
    if (c->status)
        return;
    if (tl_is_tuple(crd)) {
        if (!tl_is_tuple(x) || x->rank != crd->rank) {
            tl_fail(c, "the coordinate has %d modes where the layout has %d", crd->rank, tl_rank(x));
            return;
        }
        for (int i = 0; i < crd->rank; i++)
            tl_crd2vec(c, crd->child[i], x->child[i], out);
        return;
    }
    int64_t k = crd->kind == TL_UNDER ? 0 : crd->value;
    if (!tl_is_tuple(x)) {
        tl_vec_add(c, out, x->stride, k);
        return;
    }
    /* An integer for a tuple mode: split colexicographically; the last mode takes the rest. */
    for (int i = 0; i + 1 < x->rank; i++) {
        int64_t n = tl_product(c, x->child[i]);
        tl_node *part = tl_int(c, tl_floor_mod(k, n));
        if (!part)
            return;
        tl_crd2vec(c, part, x->child[i], out);
        k = tl_floor_div(k, n);
    }
    tl_node *last = tl_int(c, k);
    if (last)
        tl_crd2vec(c, last, x->child[x->rank - 1], out);
}

int64_t tl_crd2idx(tl_ctx *c, const tl_node *crd, const tl_node *layout) {
    tl_vec v = {0};
    tl_crd2vec(c, crd, layout, &v);
    for (int i = 0; i < TL_MAX_BASIS && !c->status; i++)
        if (v.e[i] != 0)
            tl_fail(c, "this layout is coordinate-valued: its values are coordinates, not integers");
    return v.plain;
}
