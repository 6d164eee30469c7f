/* Trees, arenas, checked arithmetic and printing for the layout algebra; see tree.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "layout/tree.h"

/* Arena blocks: 64 KiB unless one request is larger. */
#define TL_BLOCK_BYTES ((size_t)64 << 10)

struct tl_block {
    tl_block *next;
    size_t used, cap;
    max_align_t data[];
};

void tl_init(tl_ctx *c) {
    c->blocks = NULL;
    c->status = TESS_STATUS_SUCCESS;
}

void tl_release(tl_ctx *c) {
    while (c->blocks) {
        tl_block *next = c->blocks->next;
        free(c->blocks);
        c->blocks = next;
    }
}

void *tl_fail(tl_ctx *c, const char *fmt, ...) {
    if (c->status != TESS_STATUS_SUCCESS)
        return NULL; /* the first failure is the one worth reporting */
    char sentence[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(sentence, sizeof sentence, fmt, args);
    va_end(args);
    c->status = tess_fail(TESS_STATUS_INVALID_VALUE, "%s", sentence);
    return NULL;
}

void *tl_alloc(tl_ctx *c, size_t bytes) {
    bytes = (bytes + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    tl_block *b = c->blocks;
    if (!b || b->cap - b->used < bytes) {
        size_t cap = bytes > TL_BLOCK_BYTES ? bytes : TL_BLOCK_BYTES;
        b = malloc(sizeof(tl_block) + cap);
        if (!b) {
            if (c->status == TESS_STATUS_SUCCESS)
                c->status = tess_fail(TESS_STATUS_ALLOC_FAILED, "layout algebra: out of host memory");
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        b->next = c->blocks;
        c->blocks = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += bytes;
    return p;
}

/* Records that `a op b` overflows 64-bit integers; 0 is checked arithmetic's result then. */
static int64_t overflowed(tl_ctx *c, int64_t a, char op, int64_t b) {
    tl_fail(c, "%lld %c %lld overflows 64-bit integers", (long long)a, op, (long long)b);
    return 0;
}

int64_t tl_mul(tl_ctx *c, int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? overflowed(c, a, '*', b) : r;
}

int64_t tl_add(tl_ctx *c, int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? overflowed(c, a, '+', b) : r;
}

int64_t tl_ceil_div(int64_t a, int64_t b) { return -tl_floor_div(-a, b); }

int64_t tl_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t tl_floor_mod(int64_t a, int64_t b) { return a - tl_floor_div(a, b) * b; }

tl_stride tl_int_stride(int64_t v) {
    tl_stride d = {v, -1};
    return d;
}

int tl_stride_eq(tl_stride a, tl_stride b) {
    if (a.value == 0 && b.value == 0)
        return 1; /* 0 and 0@i are the same vector */
    return a.value == b.value && a.basis == b.basis;
}

tl_stride tl_stride_scale(tl_ctx *c, tl_stride d, int64_t k) {
    d.value = tl_mul(c, d.value, k);
    return d;
}

static tl_node *new_node(tl_ctx *c, tl_kind kind) {
    tl_node *x = tl_alloc(c, sizeof *x);
    if (!x)
        return NULL;
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->rank = 1;
    x->stride = tl_int_stride(0);
    return x;
}

tl_node *tl_leaf(tl_ctx *c, int64_t value, tl_stride stride) {
    tl_node *x = new_node(c, TL_INT);
    if (x) {
        x->value = value;
        x->stride = stride;
    }
    return x;
}

tl_node *tl_int(tl_ctx *c, int64_t value) { return tl_leaf(c, value, tl_int_stride(0)); }

tl_node *tl_under(tl_ctx *c) { return new_node(c, TL_UNDER); }

tl_node *tl_tuple(tl_ctx *c, int n, tl_node *const *children) {
    if (n > TL_MAX_RANK)
        return tl_fail(c, "a tuple of %d modes is more than the %d supported", n, TL_MAX_RANK);
    for (int i = 0; i < n; i++)
        if (!children[i])
            return NULL; /* an error upstream */
    tl_node *x = new_node(c, TL_TUPLE);
    if (!x)
        return NULL;
    x->rank = n;
    x->child = tl_alloc(c, sizeof(tl_node *) * (size_t)(n ? n : 1));
    if (!x->child)
        return NULL;
    memcpy(x->child, children, sizeof(tl_node *) * (size_t)n);
    return x;
}

tl_node *tl_tiler(tl_ctx *c, int n, tl_node *const *children) {
    tl_node *x = tl_tuple(c, n, children);
    if (x)
        x->kind = TL_TILER;
    return x;
}

tl_node *tl_tuple2(tl_ctx *c, tl_node *a, tl_node *b) {
    tl_node *two[2] = {a, b};
    return tl_tuple(c, 2, two);
}

void tl_push(tl_ctx *c, tl_list *l, tl_node *x) {
    if (!x) {
        tl_fail(c, "internal: a NULL mode was appended");
        return;
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        tl_node **item = tl_alloc(c, sizeof(tl_node *) * (size_t)cap);
        if (!item)
            return;
        if (l->n)
            memcpy(item, l->item, sizeof(tl_node *) * (size_t)l->n);
        l->item = item;
        l->cap = cap;
    }
    l->item[l->n++] = x;
}

tl_node *tl_list_tuple(tl_ctx *c, const tl_list *l) {
    if (c->status != TESS_STATUS_SUCCESS)
        return NULL;
    return tl_tuple(c, l->n, l->item);
}

int tl_is_tuple(const tl_node *x) { return x->kind == TL_TUPLE; }

tl_node *tl_get(const tl_node *x, int i) {
    if (x->kind != TL_TUPLE && x->kind != TL_TILER)
        return i == 0 ? (tl_node *)x : NULL;
    return i >= 0 && i < x->rank ? x->child[i] : NULL;
}

int tl_rank(const tl_node *x) { return x->kind == TL_TUPLE || x->kind == TL_TILER ? x->rank : 1; }

int tl_depth(const tl_node *x) {
    if (x->kind != TL_TUPLE)
        return 0;
    int d = 0;
    for (int i = 0; i < x->rank; i++) {
        int ci = tl_depth(x->child[i]);
        if (ci > d)
            d = ci;
    }
    return d + 1;
}

int64_t tl_product(tl_ctx *c, const tl_node *x) {
    if (x->kind == TL_UNDER)
        return 1;
    if (x->kind == TL_INT)
        return x->value;
    int64_t p = 1;
    for (int i = 0; i < x->rank; i++)
        p = tl_mul(c, p, tl_product(c, x->child[i]));
    return p;
}

void tl_flatten_into(tl_ctx *c, const tl_node *x, tl_list *out) {
    if (x->kind != TL_TUPLE) {
        tl_push(c, out, (tl_node *)x);
        return;
    }
    for (int i = 0; i < x->rank; i++)
        tl_flatten_into(c, x->child[i], out);
}

tl_node *tl_flatten(tl_ctx *c, const tl_node *x) {
    tl_list l = {0};
    tl_flatten_into(c, x, &l);
    return tl_list_tuple(c, &l);
}

int tl_congruent(const tl_node *a, const tl_node *b) {
    if (tl_is_tuple(a) != tl_is_tuple(b))
        return 0;
    if (!tl_is_tuple(a))
        return 1;
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!tl_congruent(a->child[i], b->child[i]))
            return 0;
    return 1;
}

/* Whether `holds` is true of a leaf or '_' of x (a tuple's or tiler's modes, at any depth). */
static int any_leaf(const tl_node *x, int (*holds)(const tl_node *)) {
    if (x->kind == TL_INT || x->kind == TL_UNDER)
        return holds(x);
    for (int i = 0; i < x->rank; i++)
        if (any_leaf(x->child[i], holds))
            return 1;
    return 0;
}

static int is_under(const tl_node *x) { return x->kind == TL_UNDER; }

static int has_basis_stride(const tl_node *x) {
    return x->kind == TL_INT && x->stride.basis >= 0 && x->stride.value != 0;
}

int tl_has_under(const tl_node *x) { return any_leaf(x, is_under); }

int tl_has_basis(const tl_node *x) { return any_leaf(x, has_basis_stride); }

tl_node *tl_copy(tl_ctx *c, const tl_node *x) {
    if (x->kind == TL_UNDER)
        return tl_under(c);
    if (x->kind == TL_INT)
        return tl_leaf(c, x->value, x->stride);
    tl_list l = {0};
    for (int i = 0; i < x->rank; i++)
        tl_push(c, &l, tl_copy(c, x->child[i]));
    return tl_list_tuple(c, &l);
}

void tl_text_put(tl_text *t, const char *s) {
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = tl_alloc(t->ctx, cap);
        if (!p)
            return;
        if (t->len)
            memcpy(p, t->s, t->len);
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

void tl_text_printf(tl_text *t, const char *fmt, ...) {
    char buf[256];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    tl_text_put(t, buf);
}

/* A bracketed notation: which nodes are groups of modes, the brackets
 * around a group's modes, and how any other node but '_' is printed. */
typedef struct notation {
    int (*is_group)(const tl_node *x);
    const char *open, *close;
    void (*item)(tl_text *t, const tl_node *x);
} notation;

/* Prints x in notation `n`: '_', a group's modes in brackets separated by commas, or an item. */
static void print_nested(tl_text *t, const tl_node *x, const notation *n) {
    if (x->kind == TL_UNDER) {
        tl_text_put(t, "_");
        return;
    }
    if (!n->is_group(x)) {
        n->item(t, x);
        return;
    }
    tl_text_put(t, n->open);
    for (int i = 0; i < x->rank; i++) {
        if (i)
            tl_text_put(t, ",");
        print_nested(t, x->child[i], n);
    }
    tl_text_put(t, n->close);
}

static int is_tuple_or_tiler(const tl_node *x) { return x->kind != TL_INT; }
static int is_tiler(const tl_node *x) { return x->kind == TL_TILER; }

static void print_value(tl_text *t, const tl_node *x) { tl_text_printf(t, "%lld", (long long)x->value); }

static void print_stride_leaf(tl_text *t, const tl_node *x) {
    if (x->stride.basis >= 0)
        tl_text_printf(t, "%lld@%d", (long long)x->stride.value, (int)x->stride.basis);
    else
        tl_text_printf(t, "%lld", (long long)x->stride.value);
}

void tl_print_shape(tl_text *t, const tl_node *x) {
    static const notation shape = {is_tuple_or_tiler, "(", ")", print_value};
    print_nested(t, x, &shape);
}

void tl_print_stride(tl_text *t, const tl_node *x) {
    static const notation stride = {is_tuple_or_tiler, "(", ")", print_stride_leaf};
    print_nested(t, x, &stride);
}

void tl_print_layout(tl_text *t, const tl_node *x) {
    tl_print_shape(t, x);
    tl_text_put(t, ":");
    tl_print_stride(t, x);
}

void tl_print_tiler(tl_text *t, const tl_node *x) {
    static const notation tiler = {is_tiler, "<", ">", tl_print_layout};
    print_nested(t, x, &tiler);
}

void tl_vec_add(tl_ctx *c, tl_vec *v, tl_stride d, int64_t k) {
    int64_t term = tl_mul(c, d.value, k);
    if (d.basis < 0)
        v->plain = tl_add(c, v->plain, term);
    else
        v->e[d.basis] = tl_add(c, v->e[d.basis], term);
}

int tl_vec_eq(const tl_vec *a, const tl_vec *b) { return memcmp(a, b, sizeof *a) == 0; }
