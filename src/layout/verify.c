/* Checking results by evaluation; see verify.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/ops.h"
#include "layout/verify.h"

int tl_flat_of(tl_ctx *c, const tl_node *layout, tl_flat *f) {
    tl_list leaves = {0};
    tl_flatten_into(c, layout, &leaves);
    if (c->status)
        return 0;
    f->n = leaves.n;
    f->shape = tl_alloc(c, sizeof(int64_t) * (size_t)leaves.n);
    f->stride = tl_alloc(c, sizeof(tl_stride) * (size_t)leaves.n);
    if (!f->shape || !f->stride)
        return 0;
    for (int i = 0; i < leaves.n; i++) {
        if (leaves.item[i]->kind != TL_INT || leaves.item[i]->value < 1) {
            tl_fail(c, "internal: a layout leaf without a positive shape");
            return 0;
        }
        f->shape[i] = leaves.item[i]->value;
        f->stride[i] = leaves.item[i]->stride;
    }
    return 1;
}

/* Adds k * d to v; returns 0 on overflow. */
static int vec_add(tl_vec *v, tl_stride d, int64_t k) {
    int64_t term, *slot = d.basis < 0 ? &v->plain : &v->e[d.basis];
    if (__builtin_mul_overflow(d.value, k, &term) || __builtin_add_overflow(*slot, term, slot))
        return 0;
    return 1;
}

int tl_flat_eval(const tl_flat *f, int64_t idx, tl_vec *out) {
    memset(out, 0, sizeof *out);
    for (int j = 0; j + 1 < f->n; j++) {
        if (!vec_add(out, f->stride[j], tl_floor_mod(idx, f->shape[j])))
            return 0;
        idx = tl_floor_div(idx, f->shape[j]);
    }
    return vec_add(out, f->stride[f->n - 1], idx);
}

void tl_walk_start(tl_walk *w, int64_t n) {
    w->n = n;
    w->step_count = n <= TL_VERIFY_EXHAUSTIVE ? n : TL_VERIFY_SAMPLES;
    w->k = 0;
}

int tl_walk_next(tl_walk *w, int64_t *i) {
    if (w->k >= w->step_count)
        return 0;
    if (w->step_count == w->n) {
        *i = w->k++;
        return 1;
    }
    /* Evenly spread samples, the last one at n - 1, each nudged by a
     * multiplicative hash so that periodic structure is not sampled in step. */
    int64_t span = w->n / w->step_count;
    uint64_t h = (uint64_t)w->k * 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio (Fibonacci hashing) */
    int64_t base = w->k * span, jitter = span > 1 ? (int64_t)(h % (uint64_t)span) : 0;
    *i = w->k == w->step_count - 1 ? w->n - 1 : base + jitter;
    w->k++;
    return 1;
}

/* Prints a coordinate-valued or integer value for a sentence. */
static void vec_text(const tl_vec *v, char *buf, size_t cap) {
    int used = 0;
    for (int i = 0; i < TL_MAX_BASIS; i++)
        if (v->e[i])
            used = i + 1;
    if (!used) {
        snprintf(buf, cap, "%lld", (long long)v->plain);
        return;
    }
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < used && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)v->e[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, ")");
}

int tl_verify_composition(tl_ctx *c, const tl_node *a, const tl_node *b, const tl_node *r) {
    tl_flat fa, fb, fr;
    if (!tl_flat_of(c, a, &fa) || !tl_flat_of(c, b, &fb) || !tl_flat_of(c, r, &fr))
        return 0;
    int64_t n = tl_product(c, b), nr = tl_product(c, r);
    if (c->status)
        return 0;
    if (n != nr) {
        tl_fail(c, "composition is not admissible: the result has %lld elements where B has %lld "
                   "(a shape of B does not divide evenly into A's modes)",
                (long long)nr, (long long)n);
        return 0;
    }
    tl_walk w;
    tl_walk_start(&w, n);
    int64_t i;
    while (tl_walk_next(&w, &i)) {
        tl_vec vb, va, vr;
        int ok = tl_flat_eval(&fb, i, &vb) && tl_flat_eval(&fr, i, &vr);
        if (ok) {
            for (int e = 0; e < TL_MAX_BASIS; e++)
                ok &= vb.e[e] == 0;
            ok = ok && tl_flat_eval(&fa, vb.plain, &va) && tl_vec_eq(&va, &vr);
        }
        if (!ok) {
            char got[96] = "overflow", want[96] = "overflow";
            vec_text(&vr, got, sizeof got);
            if (tl_flat_eval(&fa, vb.plain, &va))
                vec_text(&va, want, sizeof want);
            tl_fail(c, "composition is not admissible: at i=%lld the result gives %s but A(B(i)) = A(%lld) = %s",
                    (long long)i, got, (long long)vb.plain, want);
            return 0;
        }
    }
    return 1;
}

static int compare_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Whether an integer layout maps [0, n) one-to-one (checked on the same walk). */
static int injective(tl_ctx *c, const tl_flat *f, int64_t n) {
    if (n > TL_VERIFY_EXHAUSTIVE)
        return 1; /* too large to decide by listing; treated as injective, the stricter check */
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!v) {
        tl_fail(c, "out of host memory while checking injectivity");
        return 0;
    }
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        tl_vec x;
        tl_flat_eval(f, i, &x);
        v[i] = x.plain;
    }
    qsort(v, (size_t)n, sizeof *v, compare_i64);
    for (int64_t i = 1; i < n && ok; i++)
        ok = v[i] != v[i - 1];
    free(v);
    return ok;
}

int tl_is_left_inverse(tl_ctx *c, const tl_node *l, const tl_node *r) {
    tl_flat fl, fr;
    if (!tl_flat_of(c, l, &fl) || !tl_flat_of(c, r, &fr))
        return 0;
    int64_t n = tl_product(c, l);
    if (c->status)
        return 0;
    int one_to_one = injective(c, &fl, n);
    tl_walk w;
    tl_walk_start(&w, n);
    int64_t i;
    while (tl_walk_next(&w, &i)) {
        tl_vec y, x, y2;
        if (!tl_flat_eval(&fl, i, &y) || !tl_flat_eval(&fr, y.plain, &x))
            return 0;
        if (one_to_one ? x.plain != i : (!tl_flat_eval(&fl, x.plain, &y2) || y2.plain != y.plain))
            return 0;
    }
    return 1;
}
