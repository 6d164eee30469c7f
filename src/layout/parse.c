/* Parsing CuTe notation; see parse.h. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout/parse.h"

void tl_skip_space(tl_scan *s) {
    while (*s->at && isspace((unsigned char)*s->at))
        s->at++;
}

int tl_accept(tl_scan *s, char ch) {
    tl_skip_space(s);
    if (*s->at == ch) {
        s->at++;
        return 1;
    }
    return 0;
}

void *tl_scan_fail(tl_ctx *c, const tl_scan *s, const char *what) {
    size_t pos = (size_t)(s->at - s->text);
    const char *near = *s->at ? s->at : "end of text";
    return tl_fail(c, "cannot read '%.60s': %s at character %zu (near '%.12s')", s->text, what, pos + 1, near);
}

/* Reads a (possibly negative) decimal integer, or returns 0 if none is here. */
static int scan_int(tl_ctx *c, tl_scan *s, int64_t *out) {
    tl_skip_space(s);
    const char *p = s->at;
    if (*p == '-' || *p == '+')
        p++;
    if (!isdigit((unsigned char)*p))
        return 0;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s->at, &end, 10);
    if (errno == ERANGE) {
        tl_scan_fail(c, s, "an integer beyond 64 bits");
        return 0;
    }
    s->at = end;
    *out = v;
    return 1;
}

static tl_node *parse_tuple_at(tl_ctx *c, tl_scan *s, int allow_basis, int depth) {
    if (depth > TL_MAX_DEPTH)
        return tl_scan_fail(c, s, "nesting deeper than 32 levels");
    tl_skip_space(s);
    if (*s->at == '(') {
        s->at++;
        tl_list items = {0};
        if (tl_accept(s, ')'))
            return tl_scan_fail(c, s, "an empty tuple '()'");
        do {
            tl_skip_space(s);
            if (*s->at == ')' && items.n > 0)
                break; /* pycute's trailing comma: (4,) */
            tl_node *x = parse_tuple_at(c, s, allow_basis, depth + 1);
            if (!x)
                return NULL;
            tl_push(c, &items, x);
            if (items.n > TL_MAX_RANK)
                return tl_scan_fail(c, s, "more than 256 modes in one tuple");
        } while (tl_accept(s, ','));
        if (!tl_accept(s, ')'))
            return tl_scan_fail(c, s, "expected ',' or ')'");
        return tl_list_tuple(c, &items);
    }
    if (*s->at == '_' && !isdigit((unsigned char)s->at[1])) {
        s->at++;
        return tl_under(c);
    }
    if (*s->at == '_')
        s->at++; /* CuTe prints static integers as _N */
    int64_t v;
    if (!scan_int(c, s, &v))
        return c->status ? NULL : tl_scan_fail(c, s, "expected an integer, '_' or '('");
    tl_stride d = tl_int_stride(v);
    if (*s->at == '@') {
        if (!allow_basis)
            return tl_scan_fail(c, s, "a basis stride 'k@i' where only integers are allowed");
        s->at++;
        int64_t basis;
        if (!scan_int(c, s, &basis) || basis < 0 || basis >= TL_MAX_BASIS)
            return tl_scan_fail(c, s, "a basis index from 0 to 15 after '@'");
        d.basis = (int32_t)basis;
    }
    return tl_leaf(c, v, d);
}

tl_node *tl_parse_tuple(tl_ctx *c, tl_scan *s, int allow_basis) { return parse_tuple_at(c, s, allow_basis, 0); }

tl_node *tl_zip_shape_stride(tl_ctx *c, const tl_node *shape, const tl_node *stride) {
    if (!shape || !stride)
        return NULL; /* an error upstream */
    if (shape->kind == TL_UNDER || stride->kind == TL_UNDER)
        return tl_fail(c, "a layout cannot hold '_' in its shape or stride");
    if (tl_is_tuple(shape) != tl_is_tuple(stride) || (tl_is_tuple(shape) && shape->rank != stride->rank))
        return tl_fail(c, "shape and stride are not congruent (they must nest the same way)");
    if (!tl_is_tuple(shape)) {
        if (shape->value < 1)
            return tl_fail(c, "shape %lld: every shape must be >= 1", (long long)shape->value);
        if (shape->stride.basis >= 0)
            return tl_fail(c, "a shape cannot be a basis vector");
        tl_stride d = stride->stride.basis >= 0 ? stride->stride : tl_int_stride(stride->value);
        return tl_leaf(c, shape->value, d);
    }
    tl_list l = {0};
    for (int i = 0; i < shape->rank; i++)
        tl_push(c, &l, tl_zip_shape_stride(c, shape->child[i], stride->child[i]));
    return tl_list_tuple(c, &l);
}

/* Fills strides by the running product, left to right. */
static tl_node *compact_at(tl_ctx *c, const tl_node *shape, tl_stride *running) {
    if (shape->kind == TL_UNDER)
        return tl_fail(c, "a layout cannot hold '_' in its shape");
    if (!tl_is_tuple(shape)) {
        if (shape->value < 1)
            return tl_fail(c, "shape %lld: every shape must be >= 1", (long long)shape->value);
        tl_node *x = tl_leaf(c, shape->value, *running);
        *running = tl_stride_scale(c, *running, shape->value);
        return x;
    }
    tl_list l = {0};
    for (int i = 0; i < shape->rank; i++)
        tl_push(c, &l, compact_at(c, shape->child[i], running));
    return tl_list_tuple(c, &l);
}

tl_node *tl_compact_col_major(tl_ctx *c, const tl_node *shape, tl_stride start) {
    tl_stride running = start;
    return compact_at(c, shape, &running);
}
