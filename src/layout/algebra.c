/* The layout algebra with C++ CuTe's semantics (every integer static); see ops.h.
 * Comments name the C++ function each piece follows. */
#include <stdlib.h>
#include <string.h>

#include "layout/ops.h"
#include "layout/parse.h"
#include "layout/verify.h"

/* ---- small helpers ---- */

static int64_t iabs64(int64_t x) { return x < 0 ? -x : x; }

/* Whether s * d equals e, without failing on overflow (then they differ). */
static int scaled_equals(int64_t s, tl_stride d, tl_stride e) {
    int64_t v;
    if (__builtin_mul_overflow(s, d.value, &v))
        return 0;
    d.value = v;
    return tl_stride_eq(d, e);
}

/* The modes of x: its children, or x itself for a leaf. */
static void modes_of(tl_ctx *c, const tl_node *x, tl_list *out) {
    if (x->kind == TL_TUPLE) {
        for (int i = 0; i < x->rank; i++)
            tl_push(c, out, x->child[i]);
    } else {
        tl_push(c, out, (tl_node *)x);
    }
}

/* A layout from parallel lists of leaf shapes and strides: one leaf, or a flat tuple. */
static tl_node *flat_layout(tl_ctx *c, int n, const int64_t *s, const tl_stride *d) {
    if (n == 1)
        return tl_leaf(c, s[0], d[0]);
    tl_list l = {0};
    for (int i = 0; i < n; i++)
        tl_push(c, &l, tl_leaf(c, s[i], d[i]));
    return tl_list_tuple(c, &l);
}

int64_t tl_size(tl_ctx *c, const tl_node *layout) { return tl_product(c, layout); }

int64_t tl_cosize(tl_ctx *c, const tl_node *layout) {
    tl_list leaves = {0};
    tl_flatten_into(c, layout, &leaves);
    int64_t extent[TL_MAX_BASIS + 1] = {0}; /* slot 0: plain integers; 1 + i: basis e_i */
    int any_basis = 0;
    for (int i = 0; i < leaves.n; i++) {
        const tl_node *x = leaves.item[i];
        int slot = x->stride.basis < 0 ? 0 : 1 + x->stride.basis;
        any_basis |= slot > 0 && x->stride.value != 0;
        extent[slot] = tl_add(c, extent[slot], tl_mul(c, x->value - 1, iabs64(x->stride.value)));
    }
    if (!any_basis)
        return tl_add(c, extent[0], 1);
    int64_t p = 1; /* the size of the coordinate shape reached */
    for (int i = 1; i <= TL_MAX_BASIS; i++)
        p = tl_mul(c, p, extent[i] + 1);
    return p;
}


/* ---- coalesce and filter (C++ bw_coalesce) ---- */

/* Coalesces the leaves of `layout` back to front. keep_last makes the last mode's
 * stride survive even when its shape is 1 (C++ coalesce_x, used by composition). */
static tl_node *coalesce_leaves(tl_ctx *c, const tl_node *layout, int keep_last) {
    tl_list leaves = {0};
    tl_flatten_into(c, layout, &leaves);
    if (c->status)
        return NULL;
    int n = leaves.n, k = n; /* the result is built in s[k..n), front first */
    int64_t *s = tl_alloc(c, sizeof(int64_t) * (size_t)n);
    tl_stride *d = tl_alloc(c, sizeof(tl_stride) * (size_t)n);
    if (!s || !d)
        return NULL;
    k--;
    s[k] = leaves.item[n - 1]->value;
    d[k] = leaves.item[n - 1]->stride;
    if (keep_last && s[k] == 1)
        s[k] = 2; /* any shape but 1: its stride extends the layout past its end */
    for (int i = n - 2; i >= 0; i--) {
        int64_t si = leaves.item[i]->value;
        tl_stride di = leaves.item[i]->stride;
        if (si == 1)
            continue;
        if (s[k] == 1) { /* replace a leading shape-1 */
            s[k] = si;
            d[k] = di;
        } else if (scaled_equals(si, di, d[k])) { /* merge: this mode continues into the next */
            s[k] = tl_mul(c, si, s[k]);
            d[k] = di;
        } else {
            k--;
            s[k] = si;
            d[k] = di;
        }
    }
    if (k == n - 1 && s[k] == 1)
        return tl_leaf(c, 1, tl_int_stride(0));
    return flat_layout(c, n - k, s + k, d + k);
}

tl_node *tl_coalesce(tl_ctx *c, const tl_node *layout) { return coalesce_leaves(c, layout, 0); }

/* Applies `op` to the modes the profile names, keeping the rest (C++ transform_layout). */
static tl_node *by_profile(tl_ctx *c, const tl_node *layout, const tl_node *profile,
                           tl_node *(*op)(tl_ctx *, const tl_node *), const char *name) {
    if (!profile || !tl_is_tuple(profile))
        return op(c, layout);
    if (profile->rank > tl_rank(layout))
        return tl_fail(c, "%s: the profile has %d modes but the layout only %d", name, profile->rank,
                       tl_rank(layout));
    tl_list l = {0};
    for (int i = 0; i < tl_rank(layout); i++)
        tl_push(c, &l, i < profile->rank ? by_profile(c, tl_get(layout, i), profile->child[i], op, name)
                                         : tl_get(layout, i));
    return tl_list_tuple(c, &l);
}

tl_node *tl_coalesce_profile(tl_ctx *c, const tl_node *layout, const tl_node *profile) {
    return by_profile(c, layout, profile, tl_coalesce, "coalesce");
}

/* Shape 1 wherever the stride is 0 (C++ filter_zeros). */
static tl_node *filter_zeros(tl_ctx *c, const tl_node *x) {
    if (!tl_is_tuple(x))
        return x->stride.value == 0 ? tl_leaf(c, 1, x->stride) : (tl_node *)x;
    tl_list l = {0};
    for (int i = 0; i < x->rank; i++)
        tl_push(c, &l, filter_zeros(c, x->child[i]));
    return tl_list_tuple(c, &l);
}

tl_node *tl_filter(tl_ctx *c, const tl_node *layout) {
    tl_node *z = filter_zeros(c, layout);
    return z ? tl_coalesce(c, z) : NULL;
}

tl_node *tl_filter_profile(tl_ctx *c, const tl_node *layout, const tl_node *profile) {
    return by_profile(c, layout, profile, tl_filter, "filter");
}

/* ---- composition (C++ composition_impl) ---- */

/* flat_a o (s:d) for one leaf of B; flat_a is A after coalesce_x. */
static tl_node *compose_leaf(tl_ctx *c, const tl_node *flat_a, int64_t s, tl_stride d) {
    if (d.basis >= 0 && d.value != 0)
        return tl_fail(c, "composition: the right-hand layout must have integer strides");
    if (d.value == 0)
        return tl_leaf(c, s, tl_int_stride(0));
    if (!tl_is_tuple(flat_a))
        return tl_leaf(c, s, tl_stride_scale(c, flat_a->stride, d.value));
    int r = flat_a->rank;
    int64_t *rs = tl_alloc(c, sizeof(int64_t) * (size_t)r);
    tl_stride *rd = tl_alloc(c, sizeof(tl_stride) * (size_t)r);
    if (!rs || !rd)
        return NULL;
    int n = 0;
    int64_t rest_shape = s, rest_stride = d.value;
    for (int i = 0; i + 1 < r; i++) {
        int64_t cs = flat_a->child[i]->value;
        tl_stride cd = flat_a->child[i]->stride;
        if (!(rest_stride % cs == 0 || rest_stride < cs))
            return tl_fail(c, "composition is not admissible (stride divisibility): B's stride %lld "
                              "neither divides by nor is less than A's mode of shape %lld",
                           (long long)rest_stride, (long long)cs);
        int64_t next_shape = tl_ceil_div(cs, iabs64(rest_stride));
        int64_t next_stride = tl_ceil_div(iabs64(rest_stride), cs) * (rest_stride < 0 ? -1 : 1);
        if (next_shape == 1 || rest_shape == 1) {
            rest_stride = next_stride;
            continue;
        }
        int64_t new_shape = next_shape < rest_shape ? next_shape : rest_shape;
        if (rest_shape % new_shape != 0)
            return tl_fail(c, "composition is not admissible (shape divisibility): B's remaining shape %lld "
                              "does not divide by %lld, the part that fits in A's mode of shape %lld",
                           (long long)rest_shape, (long long)new_shape, (long long)cs);
        rs[n] = new_shape;
        rd[n] = tl_stride_scale(c, cd, rest_stride);
        n++;
        rest_shape /= new_shape;
        rest_stride = next_stride;
    }
    tl_stride last = tl_stride_scale(c, flat_a->child[r - 1]->stride, rest_stride);
    if (n == 0)
        return tl_leaf(c, rest_shape, last);
    if (rest_shape != 1) {
        rs[n] = rest_shape;
        rd[n] = last;
        n++;
    }
    return flat_layout(c, n, rs, rd);
}

/* Composition distributes over B's modes. */
static tl_node *compose_tree(tl_ctx *c, const tl_node *flat_a, const tl_node *b) {
    if (b->kind == TL_INT)
        return compose_leaf(c, flat_a, b->value, b->stride);
    if (b->kind != TL_TUPLE)
        return tl_fail(c, "composition: the right-hand side must be a layout here");
    tl_list l = {0};
    for (int i = 0; i < b->rank; i++)
        tl_push(c, &l, compose_tree(c, flat_a, b->child[i]));
    return tl_list_tuple(c, &l);
}

tl_node *tl_composition(tl_ctx *c, const tl_node *a, const tl_node *b) {
    tl_node *flat_a = coalesce_leaves(c, a, 1);
    tl_node *r = flat_a ? compose_tree(c, flat_a, b) : NULL;
    if (!r || !tl_verify_composition(c, a, b, r))
        return NULL;
    return r;
}

static tl_node *through_tiler(tl_ctx *c, const tl_node *a, const tl_node *tiler,
                              tl_node *(*op)(tl_ctx *, const tl_node *, const tl_node *), const char *name, int keep_rest);

tl_node *tl_composition_tiler(tl_ctx *c, const tl_node *a, const tl_node *tiler) {
    return through_tiler(c, a, tiler, tl_composition, "composition", 0); /* A's other modes are dropped, as in C++ */
}

/* ---- complement (C++ detail::complement) ---- */

/* The smallest integer in an integer tuple (its leaves). */
static int64_t smallest_leaf(const tl_node *t) {
    if (!tl_is_tuple(t))
        return t->value;
    int64_t m = INT64_MAX;
    for (int i = 0; i < t->rank; i++) {
        const int64_t x = smallest_leaf(t->child[i]);
        m = x < m ? x : m;
    }
    return m;
}

tl_node *tl_complement(tl_ctx *c, const tl_node *layout, const tl_node *cotarget) {
    if (tl_has_basis(layout))
        return tl_fail(c, "complement: the layout must have integer strides");
    tl_node *f = tl_filter(c, layout);
    if (!f)
        return NULL;
    if (!cotarget)
        cotarget = tl_int(c, tl_cosize(c, f));
    if (!cotarget || tl_has_under(cotarget))
        return cotarget ? tl_fail(c, "complement: the cotarget must be an integer or a shape") : NULL;
    if (smallest_leaf(cotarget) < 1) /* a shape's sizes: a 0 would divide by zero below */
        return tl_fail(c, "complement: the cotarget's sizes must be >= 1 (found %lld)", (long long)smallest_leaf(cotarget));
    if (!tl_is_tuple(f) && f->stride.value == 0) /* nothing left after filtering: the whole cotarget */
        return tl_leaf(c, tl_product(c, cotarget), tl_int_stride(1));
    tl_list modes = {0};
    modes_of(c, f, &modes);
    int r = modes.n;
    int64_t *s = tl_alloc(c, sizeof(int64_t) * (size_t)r), *d = tl_alloc(c, sizeof(int64_t) * (size_t)r);
    int64_t *out_s = tl_alloc(c, sizeof(int64_t) * (size_t)(r + 1));
    tl_stride *out_d = tl_alloc(c, sizeof(tl_stride) * (size_t)(r + 1));
    if (!s || !d || !out_s || !out_d)
        return NULL;
    for (int i = 0; i < r; i++) {
        s[i] = modes.item[i]->value;
        d[i] = modes.item[i]->stride.value;
        if (d[i] < 0)
            return tl_fail(c, "complement: stride %lld is negative; complement needs positive strides",
                           (long long)d[i]);
    }
    int64_t last_stride = 1;
    for (int i = 0; i < r; i++) {
        int m = 0; /* the smallest remaining stride, first occurrence */
        for (int j = 1; j < r - i; j++)
            if (d[j] < d[m])
                m = j;
        int64_t new_shape = d[m] / last_stride;
        if (new_shape == 0)
            return tl_fail(c, "complement: the layout is not injective (its modes overlap), so it has no complement");
        out_s[i] = new_shape;
        out_d[i] = tl_int_stride(last_stride);
        last_stride = tl_mul(c, d[m], s[m]);
        if (c->status != TESS_STATUS_SUCCESS) /* the product overflowed (reported): no 0 to divide by */
            return NULL;
        memmove(s + m, s + m + 1, sizeof(int64_t) * (size_t)(r - i - 1 - m));
        memmove(d + m, d + m + 1, sizeof(int64_t) * (size_t)(r - i - 1 - m));
    }
    tl_node *rest = tl_ceil_div_shape(c, cotarget, last_stride);
    if (!rest)
        return NULL;
    out_s[r] = tl_product(c, rest);
    out_d[r] = tl_int_stride(last_stride);
    tl_node *result = flat_layout(c, r + 1, out_s, out_d);
    return result ? tl_coalesce(c, result) : NULL;
}

/* ---- inverses (C++ right_inverse, left_inverse) ---- */

/* Sorts the first n indices in `ord` by the keys (primary, secondary) ascending, stably. */
static void sort_by_keys(int *ord, int n, const int64_t *k1, const int64_t *k2) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int x = ord[j - 1], y = ord[j];
            if (k1[x] < k1[y] || (k1[x] == k1[y] && k2[x] <= k2[y]))
                break;
            ord[j - 1] = y, ord[j] = x;
        }
}

typedef struct sorted_modes {
    int n;
    int64_t *s, *d, *pre; /* shape, stride, exclusive prefix product of shapes */
    int *order;           /* indices by ascending stride (stable) */
    int64_t *rs;          /* room for the shapes and strides of the n + 1 modes */
    tl_stride *rd;        /* an inverse is built from */
} sorted_modes;

/* The modes of coalesce(layout), sorted by stride, with room for an inverse. */
static int sort_modes(tl_ctx *c, const tl_node *layout, sorted_modes *m, const char *name) {
    if (tl_has_basis(layout)) {
        tl_fail(c, "%s: the layout must have integer strides", name);
        return 0;
    }
    tl_node *co = tl_coalesce(c, layout);
    if (!co)
        return 0;
    tl_list modes = {0};
    modes_of(c, co, &modes);
    m->n = modes.n;
    m->s = tl_alloc(c, sizeof(int64_t) * (size_t)m->n);
    m->d = tl_alloc(c, sizeof(int64_t) * (size_t)m->n);
    m->pre = tl_alloc(c, sizeof(int64_t) * (size_t)m->n);
    m->order = tl_alloc(c, sizeof(int) * (size_t)m->n);
    m->rs = tl_alloc(c, sizeof(int64_t) * (size_t)(m->n + 1));
    m->rd = tl_alloc(c, sizeof(tl_stride) * (size_t)(m->n + 1));
    if (!m->s || !m->d || !m->pre || !m->order || !m->rs || !m->rd)
        return 0;
    int64_t running = 1;
    for (int i = 0; i < m->n; i++) {
        m->s[i] = modes.item[i]->value;
        m->d[i] = modes.item[i]->stride.value;
        m->pre[i] = running;
        running = tl_mul(c, running, m->s[i]);
        m->order[i] = i;
    }
    /* C++ orders modes with an exchange sort on the strides, which is not
     * stable; ties must come out in the same order for the same answers. */
    for (int i = 0; i < m->n; i++)
        for (int j = i + 1; j < m->n; j++)
            if (m->d[m->order[j]] < m->d[m->order[i]]) {
                int t = m->order[i];
                m->order[i] = m->order[j];
                m->order[j] = t;
            }
    return c->status == TESS_STATUS_SUCCESS;
}

tl_node *tl_right_inverse(tl_ctx *c, const tl_node *layout) {
    sorted_modes m;
    if (!sort_modes(c, layout, &m, "right_inverse"))
        return NULL;
    int n = 1;
    m.rs[0] = 1, m.rd[0] = tl_int_stride(0);
    int64_t curr = 1; /* the next stride to find: each found mode continues the last */
    for (int k = 0; k < m.n; k++) {
        int i = m.order[k];
        if (m.d[i] != curr)
            continue;
        m.rs[n] = m.s[i];
        m.rd[n] = tl_int_stride(m.pre[i]);
        n++;
        curr = tl_mul(c, m.s[i], m.d[i]);
    }
    tl_node *r = flat_layout(c, n, m.rs, m.rd);
    return r ? tl_coalesce(c, r) : NULL;
}

/* C++'s construction: sorted strides divide one another. */
static tl_node *left_inverse_direct(tl_ctx *c, const tl_node *layout) {
    sorted_modes m;
    if (!sort_modes(c, layout, &m, "left_inverse"))
        return NULL;
    int n = 0;
    int64_t covered = 1; /* size of the result so far */
    m.rd[0] = tl_int_stride(0);
    for (int k = 0; k < m.n; k++) {
        int i = m.order[k];
        if (m.d[i] == 0)
            continue;
        if (m.d[i] % covered != 0)
            return tl_fail(c, "left_inverse: stride %lld is not a multiple of %lld, the extent below it",
                           (long long)m.d[i], (long long)covered);
        m.rs[n] = m.d[i] / covered;
        m.rd[n + 1] = tl_int_stride(m.pre[i]);
        covered = tl_mul(c, covered, m.rs[n]);
        n++;
    }
    m.rs[n] = m.s[m.order[m.n - 1]];
    tl_node *r = flat_layout(c, n + 1, m.rs, m.rd);
    return r ? tl_coalesce(c, r) : NULL;
}

/* pycute's construction, right_inverse(make_layout(L, complement(L))) with
 * pycute's own complement (cotarget 1, no injectivity check) and right inverse
 * (stops at the first gap). It yields a valid quasi-inverse for some
 * non-injective layouts where the direct construction does not. */
static tl_node *left_inverse_via_complement(tl_ctx *c, const tl_node *layout) {
    tl_list leaves = {0};
    tl_flatten_into(c, layout, &leaves);
    int n = leaves.n, cap = 2 * n + 2;
    int64_t *s = tl_alloc(c, sizeof(int64_t) * (size_t)cap), *d = tl_alloc(c, sizeof(int64_t) * (size_t)cap);
    int64_t *pre = tl_alloc(c, sizeof(int64_t) * (size_t)cap), *rs = tl_alloc(c, sizeof(int64_t) * (size_t)cap);
    int *ord = tl_alloc(c, sizeof(int) * (size_t)cap);
    tl_stride *rd = tl_alloc(c, sizeof(tl_stride) * (size_t)cap);
    if (!s || !d || !pre || !rs || !ord || !rd)
        return NULL;
    for (int i = 0; i < n; i++)
        s[i] = leaves.item[i]->value, d[i] = leaves.item[i]->stride.value, ord[i] = i;
    sort_by_keys(ord, n, d, s);
    /* The complement's modes, coalesced front to back, go after L's. */
    int m = n;
    s[m] = 1, d[m] = 0;
    int64_t current = 1;
    for (int k = 0; k <= n; k++) {
        int64_t cs, cd;
        if (k < n) {
            int i = ord[k];
            if (d[i] == 0 || s[i] == 1)
                continue;
            if (d[i] < 0 || current > tl_mul(c, s[i], d[i]))
                return tl_fail(c, "left_inverse: the layout's modes overlap, so it has no left inverse");
            cs = d[i] / current, cd = current;
            current = tl_mul(c, s[i], d[i]);
        } else {
            cs = 1, cd = current; /* ceil_div(1, current) */
        }
        if (cs == 1)
            continue;
        if (s[m] == 1)
            s[m] = cs, d[m] = cd;
        else if (s[m] * d[m] == cd)
            s[m] *= cs;
        else
            m++, s[m] = cs, d[m] = cd;
    }
    m++;
    /* Right inverse of (L, complement): follow strides from 1 while they continue. */
    int64_t running = 1;
    for (int i = 0; i < m; i++)
        pre[i] = running, running = tl_mul(c, running, s[i]), ord[i] = i;
    sort_by_keys(ord, m, d, s);
    int k = 0;
    current = 1;
    for (int q = 0; q < m; q++) {
        int i = ord[q];
        if (s[i] == 1)
            continue;
        if (d[i] != current)
            break;
        rs[k] = s[i], rd[k] = tl_int_stride(pre[i]), k++;
        current = tl_mul(c, s[i], d[i]);
    }
    if (k == 0)
        return tl_leaf(c, 1, tl_int_stride(0));
    tl_node *r = flat_layout(c, k, rs, rd);
    return r ? tl_coalesce(c, r) : NULL;
}

tl_node *tl_left_inverse(tl_ctx *c, const tl_node *layout) {
    if (tl_has_basis(layout))
        return tl_fail(c, "left_inverse: the layout must have integer strides");
    /* Try each construction on a scratch context so that a failed one leaves no error. */
    tl_node *(*const constructions[2])(tl_ctx *, const tl_node *) = {left_inverse_direct, left_inverse_via_complement};
    for (int k = 0; k < 2; k++) {
        tl_ctx scratch;
        tl_init(&scratch);
        tl_node *r = constructions[k](&scratch, layout);
        int ok = r && tl_is_left_inverse(&scratch, layout, r);
        tl_node *kept = ok ? tl_copy(c, r) : NULL;
        tl_release(&scratch);
        if (kept)
            return kept;
    }
    return tl_fail(c, "left_inverse: no layout R with L(R(L(i))) = L(i) for every i could be built "
                      "(the sorted strides of L must divide one another)");
}

/* ---- divide and product (C++ logical_divide, logical_product and friends) ---- */

/* logical_divide or logical_product by one layout tiler. */
static tl_node *divide_layout(tl_ctx *c, const tl_node *a, const tl_node *t) {
    tl_node *co = tl_coalesce(c, a);
    tl_node *comp = co ? tl_complement(c, t, co) : NULL; /* cotarget: the shape of coalesce(A) */
    return comp ? tl_composition(c, a, tl_tuple2(c, (tl_node *)t, comp)) : NULL;
}

static tl_node *product_layout(tl_ctx *c, const tl_node *a, const tl_node *t) {
    int64_t n = tl_mul(c, tl_size(c, a), tl_cosize(c, t));
    tl_node *target = c->status ? NULL : tl_int(c, n);
    tl_node *comp = target ? tl_complement(c, a, target) : NULL;
    tl_node *tiles = comp ? tl_composition(c, comp, t) : NULL;
    return tiles ? tl_tuple2(c, (tl_node *)a, tiles) : NULL;
}

/* Applies a layout-by-layout operation through a tiler, mode by mode, keeping A's other modes. */
static tl_node *through_tiler(tl_ctx *c, const tl_node *a, const tl_node *tiler,
                              tl_node *(*op)(tl_ctx *, const tl_node *, const tl_node *), const char *name, int keep_rest) {
    if (tiler->kind == TL_UNDER)
        return (tl_node *)a;
    if (tiler->kind != TL_TILER)
        return op(c, a, tiler);
    if (tiler->rank > tl_rank(a))
        return tl_fail(c, "%s: the tiler has %d modes but the layout only %d", name, tiler->rank, tl_rank(a));
    tl_list l = {0};
    int n = keep_rest ? tl_rank(a) : tiler->rank;
    for (int i = 0; i < n; i++)
        tl_push(c, &l, i < tiler->rank ? through_tiler(c, tl_get(a, i), tiler->child[i], op, name, keep_rest) : tl_get(a, i));
    return tl_list_tuple(c, &l);
}

/* Gathers the (tile, rest) pairs at the tiler's terminals into ((tiles...), (rests..., other modes)) (C++ zip2_by). */
static tl_node *zip2_by(tl_ctx *c, const tl_node *t, const tl_node *guide) {
    if (guide->kind != TL_TILER) {
        if (!tl_is_tuple(t) || t->rank != 2)
            return tl_fail(c, "zip2_by: a mode the tiler leaves untouched ('_') must itself be rank 2 to be zipped");
        return (tl_node *)t;
    }
    if (!tl_is_tuple(t) || t->rank < guide->rank)
        return tl_fail(c, "zip2_by: the layout has fewer modes than the tiler");
    tl_list first = {0}, second = {0};
    for (int i = 0; i < guide->rank; i++) {
        tl_node *split = zip2_by(c, t->child[i], guide->child[i]);
        if (!split)
            return NULL;
        tl_push(c, &first, split->child[0]);
        tl_push(c, &second, split->child[1]);
    }
    for (int i = guide->rank; i < t->rank; i++)
        tl_push(c, &second, t->child[i]);
    return tl_tuple2(c, tl_list_tuple(c, &first), tl_list_tuple(c, &second));
}

/* Unpacks a zipped (tile, rest) result: the rest's modes (tiled), or both parts' modes (flat). */
static tl_node *arrange(tl_ctx *c, tl_node *logical, const tl_node *tiler, tl_arrangement how) {
    if (!logical || how == TL_LOGICAL)
        return logical;
    tl_node *z = zip2_by(c, logical, tiler);
    if (!z || how == TL_ZIPPED)
        return z;
    tl_list l = {0};
    for (int part = 0; part < 2; part++) {
        const tl_node *p = z->child[part];
        if ((part == 0 && how == TL_TILED) || tl_rank(p) == 1)
            tl_push(c, &l, (tl_node *)p);
        else
            modes_of(c, p, &l);
    }
    return tl_list_tuple(c, &l);
}

tl_node *tl_divide(tl_ctx *c, const tl_node *a, const tl_node *tiler, tl_arrangement how) {
    return arrange(c, through_tiler(c, a, tiler, divide_layout, "logical_divide", 1), tiler, how);
}

tl_node *tl_product_op(tl_ctx *c, const tl_node *a, const tl_node *tiler, tl_arrangement how) {
    return arrange(c, through_tiler(c, a, tiler, product_layout, "logical_product", 1), tiler, how);
}

/* Pads a layout with 1:0 modes up to rank r (C++ append<R>). */
static tl_node *append_to_rank(tl_ctx *c, const tl_node *x, int r) {
    if (tl_rank(x) >= r)
        return (tl_node *)x;
    tl_list l = {0};
    modes_of(c, x, &l);
    while (l.n < r)
        tl_push(c, &l, tl_leaf(c, 1, tl_int_stride(0)));
    return tl_list_tuple(c, &l);
}

/* C++ zip(x, y): ((x,y)) when x is not a tuple, else ((x0,y0),(x1,y1),...) for y of the same rank. */
static tl_node *zip_pair(tl_ctx *c, const tl_node *x, const tl_node *y) {
    if (!tl_is_tuple(x)) {
        tl_node *pair = tl_tuple2(c, (tl_node *)x, (tl_node *)y);
        return pair ? tl_tuple(c, 1, &pair) : NULL;
    }
    if (!tl_is_tuple(y) || y->rank != x->rank)
        return tl_fail(c, "zip: mismatched ranks (%d and %s%d)", x->rank, tl_is_tuple(y) ? "" : "an integer of rank ",
                       tl_rank(y));
    tl_list l = {0};
    for (int i = 0; i < x->rank; i++)
        tl_push(c, &l, tl_tuple2(c, x->child[i], y->child[i]));
    return tl_list_tuple(c, &l);
}

tl_node *tl_rank_product(tl_ctx *c, const tl_node *a, const tl_node *b, int raked) {
    if (b->kind == TL_TILER || b->kind == TL_UNDER)
        return tl_fail(c, "%s_product: the second argument must be a layout", raked ? "raked" : "blocked");
    int r = tl_rank(a) > tl_rank(b) ? tl_rank(a) : tl_rank(b);
    tl_node *p = product_layout(c, append_to_rank(c, a, r), append_to_rank(c, b, r));
    if (!p)
        return NULL;
    return raked ? zip_pair(c, p->child[1], p->child[0]) : zip_pair(c, p->child[0], p->child[1]);
}


/* ---- slicing, max_common_vector, identity, tilers ---- */

static void slice_into(tl_ctx *c, const tl_node *x, const tl_node *crd, tl_list *out) {
    if (crd->kind == TL_UNDER) {
        tl_push(c, out, (tl_node *)x);
        return;
    }
    if (!tl_is_tuple(crd))
        return;
    if (!tl_is_tuple(x) || x->rank != crd->rank) {
        tl_fail(c, "slice: the coordinate has %d modes where the layout has %d", crd->rank, tl_rank(x));
        return;
    }
    for (int i = 0; i < crd->rank; i++)
        slice_into(c, x->child[i], crd->child[i], out);
}

tl_node *tl_slice(tl_ctx *c, const tl_node *layout, const tl_node *crd, int64_t *offset) {
    tl_list kept = {0};
    slice_into(c, layout, crd, &kept);
    *offset = tl_crd2idx(c, crd, layout);
    if (c->status)
        return NULL;
    if (kept.n == 0)
        return tl_fail(c, "slice: the coordinate has no '_', so it selects one element, not a layout");
    return crd->kind == TL_UNDER ? kept.item[0] : tl_list_tuple(c, &kept);
}

int64_t tl_max_common_vector(tl_ctx *c, const tl_node *a, const tl_node *b) {
    tl_node *inv = tl_right_inverse(c, b);
    tl_node *common = inv ? tl_composition(c, a, inv) : NULL;
    common = common ? tl_coalesce(c, common) : NULL;
    if (!common)
        return 0;
    const tl_node *first = tl_get(common, 0);
    return first->kind == TL_INT && first->stride.basis < 0 && first->stride.value == 1 ? first->value : 1;
}

tl_node *tl_identity(tl_ctx *c, const tl_node *shape) {
    if (!tl_is_tuple(shape)) {
        tl_stride e0 = {1, 0};
        return tl_compact_col_major(c, shape, e0);
    }
    if (shape->rank > TL_MAX_BASIS)
        return tl_fail(c, "identity layouts have at most %d modes", TL_MAX_BASIS);
    tl_list l = {0};
    for (int i = 0; i < shape->rank; i++) {
        tl_stride ei = {1, i};
        tl_push(c, &l, tl_compact_col_major(c, shape->child[i], ei));
    }
    return tl_list_tuple(c, &l);
}

tl_node *tl_tiler_from_tuple(tl_ctx *c, const tl_node *t) {
    if (t->kind == TL_UNDER || t->kind == TL_TILER)
        return (tl_node *)t;
    if (t->kind == TL_INT)
        return t->value < 1 ? tl_fail(c, "a tiler of %lld elements: tiles need at least 1", (long long)t->value)
                            : tl_leaf(c, t->value, tl_int_stride(1));
    tl_list l = {0};
    for (int i = 0; i < t->rank; i++)
        tl_push(c, &l, tl_tiler_from_tuple(c, t->child[i]));
    return c->status ? NULL : tl_tiler(c, l.n, l.item);
}
