/* The calculator: evaluates expressions over values of the algebra, e.g.
 *   logical_divide((24):(1), (4):(1))
 *   composition(Sw<3,4,3> o (8,64):(64,1), <8:1,8:1>)
 * An expression is a literal (see tess_layout_parse) or a call NAME(args...).
 * Integer results (size, rank, ...) are printed as numbers. */
#include <ctype.h>
#include <string.h>

#include "core/error.h"
#include "layout/value.h"

/* Deepest nesting of calls: enough for any formula, shallow for the stack. */
#define EXPR_MAX_DEPTH 32
#define EXPR_MAX_ARGS 8

/* A calculator function that takes its arguments as they come. */
typedef int (*fn_impl)(tl_ctx *c, tl_value *args, int n, tl_value *out);

static int need_int(tl_ctx *c, const tl_value *v, const char *fn, int64_t *out) {
    if (v->kind != TESS_LAYOUT_TUPLE || v->node->kind != TL_INT) {
        tl_fail(c, "%s: expected an integer argument", fn);
        return 0;
    }
    *out = v->node->value;
    return 1;
}

/* Wraps an integer query's answer as a value; `v` is read only after `good` was computed. */
static int int_result(tl_ctx *c, int good, const int64_t *v, tl_value *out) {
    if (!good)
        return 0;
    *out = tv_int(c, *v);
    return out->node != NULL;
}

/* make_layout(shape[, stride]) for tuples, make_layout(L0, L1, ...) for layouts. */
static int fn_make_layout(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    int all_tuples = 1;
    for (int i = 0; i < n; i++)
        all_tuples &= a[i].kind == TESS_LAYOUT_TUPLE;
    if (all_tuples && n <= 2)
        return tv_make_layout(c, &a[0], n > 1 ? &a[1] : NULL, out);
    return tv_concat(c, a, n, out);
}

static int fn_get(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    tl_value cur = a[0];
    for (int i = 1; i < n; i++) { /* get(L, i, j) = get(get(L, i), j) */
        int64_t k;
        if (!need_int(c, &a[i], "get", &k) || !tv_mode(c, &cur, (int)k, &cur))
            return 0;
    }
    *out = cur;
    return 1;
}
static int fn_eval(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    (void)n;
    return tv_eval(c, &a[0], &a[1], 0, out);
}
static int fn_slice(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    (void)n;
    int64_t offset = 0; /* the sub-layout only; slice_offset gives the offset */
    return tv_slice(c, &a[0], &a[1], out, &offset);
}
static int fn_slice_offset(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    (void)n;
    int64_t offset = 0;
    tl_value sub;
    return int_result(c, tv_slice(c, &a[0], &a[1], &sub, &offset), &offset, out);
}
static int fn_idx2crd(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    int64_t idx;
    return need_int(c, &a[0], "idx2crd", &idx) && tv_idx2crd(c, idx, &a[1], n > 2 ? &a[2] : NULL, out);
}
static int fn_crd2idx(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    int64_t v = 0;
    return int_result(c, tv_crd2idx(c, &a[0], &a[1], n > 2 ? &a[2] : NULL, &v), &v, out);
}
static int fn_max_common_vector(tl_ctx *c, tl_value *a, int n, tl_value *out) {
    (void)n;
    int64_t v = 0;
    return int_result(c, tv_max_common_vector(c, &a[0], &a[1], &v), &v, out);
}

/* The calculator's functions: each calls one operation, given in one of four
 * forms (layout/value.h's shapes, or fn_impl for the others). */
typedef struct function {
    const char *name;
    int min_args, max_args; /* max_args 0: any number, up to EXPR_MAX_ARGS */
    tv_unary unary;   /* f(x) */
    tv_binary binary; /* f(x[, y]): y NULL when not given */
    tv_query query;   /* f(x), an integer */
    fn_impl impl;     /* f(args...) */
    const char *usage;
} function;

/* The row of each arranged divide and product (TL_ARRANGED). */
#define ARRANGED_FUNCTION(name, op, how) {#name, 2, 2, .binary = tv_##name, .usage = #name "(L, tiler)"},

static const function functions[] = {
    {"composition", 2, 2, .binary = tv_composition, .usage = "composition(A, B)"},
    {"complement", 1, 2, .binary = tv_complement, .usage = "complement(L[, cotarget])"},
    {"coalesce", 1, 2, .binary = tv_coalesce, .usage = "coalesce(L[, profile])"},
    {"filter", 1, 2, .binary = tv_filter, .usage = "filter(L[, profile])"},
    {"right_inverse", 1, 1, .unary = tv_right_inverse, .usage = "right_inverse(L)"},
    {"left_inverse", 1, 1, .unary = tv_left_inverse, .usage = "left_inverse(L)"},
    TL_ARRANGED(ARRANGED_FUNCTION)
    {"blocked_product", 2, 2, .binary = tv_blocked_product, .usage = "blocked_product(A, B)"},
    {"raked_product", 2, 2, .binary = tv_raked_product, .usage = "raked_product(A, B)"},
    {"make_layout", 1, 0, .impl = fn_make_layout, .usage = "make_layout(shape[, stride]) or make_layout(L0, L1, ...)"},
    {"make_identity_layout", 1, 1, .unary = tv_identity, .usage = "make_identity_layout(shape)"},
    {"size", 1, 1, .query = tv_size, .usage = "size(x)"},
    {"cosize", 1, 1, .query = tv_cosize, .usage = "cosize(L)"},
    {"rank", 1, 1, .query = tv_rank, .usage = "rank(x)"},
    {"depth", 1, 1, .query = tv_depth, .usage = "depth(x)"},
    {"shape", 1, 1, .unary = tv_shape, .usage = "shape(L)"},
    {"stride", 1, 1, .unary = tv_stride, .usage = "stride(L)"},
    {"get", 2, 0, .impl = fn_get, .usage = "get(x, i[, j, ...])"},
    {"eval", 2, 2, .impl = fn_eval, .usage = "eval(L, coordinate)"},
    {"slice", 2, 2, .impl = fn_slice, .usage = "slice(L, coordinate with _)"},
    {"slice_offset", 2, 2, .impl = fn_slice_offset, .usage = "slice_offset(L, coordinate with _)"},
    {"flatten", 1, 1, .unary = tv_flatten, .usage = "flatten(x)"},
    {"prefix_product", 1, 1, .unary = tv_prefix_product, .usage = "prefix_product(t)"},
    {"shape_div", 2, 2, .binary = tv_shape_div, .usage = "shape_div(a, b)"},
    {"idx2crd", 2, 3, .impl = fn_idx2crd, .usage = "idx2crd(index, shape[, stride])"},
    {"crd2idx", 2, 3, .impl = fn_crd2idx, .usage = "crd2idx(coordinate, shape[, stride])"},
    {"max_common_vector", 2, 2, .impl = fn_max_common_vector, .usage = "max_common_vector(A, B)"},
};
#undef ARRANGED_FUNCTION

/* Calls `f` on its n arguments (already counted against its arity). */
static int call_function(tl_ctx *c, const function *f, tl_value *a, int n, tl_value *out) {
    if (f->unary)
        return f->unary(c, &a[0], out);
    if (f->binary)
        return f->binary(c, &a[0], n > 1 ? &a[1] : NULL, out);
    if (f->query) {
        int64_t v = 0;
        return int_result(c, f->query(c, &a[0], &v), &v, out);
    }
    return f->impl(c, a, n, out);
}

static int parse_expr(tl_ctx *c, tl_scan *s, tl_value *out, int depth);

static int parse_call(tl_ctx *c, tl_scan *s, const char *name, size_t len, tl_value *out, int depth) {
    int f = -1;
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
        if (strlen(functions[i].name) == len && strncmp(functions[i].name, name, len) == 0)
            f = (int)i;
    if (f < 0) {
        tl_fail(c, "unknown function '%.*s' (tessera layout --help lists them)", (int)len, name);
        return 0;
    }
    tl_value args[EXPR_MAX_ARGS];
    int n = 0;
    if (!tl_accept(s, '(')) {
        tl_scan_fail(c, s, "expected '(' after a function name");
        return 0;
    }
    if (!tl_accept(s, ')')) {
        do {
            if (n == EXPR_MAX_ARGS) {
                tl_fail(c, "%s: too many arguments", functions[f].name);
                return 0;
            }
            if (!parse_expr(c, s, &args[n++], depth + 1))
                return 0;
        } while (tl_accept(s, ','));
        if (!tl_accept(s, ')')) {
            tl_scan_fail(c, s, "expected ',' or ')' in an argument list");
            return 0;
        }
    }
    const int most = functions[f].max_args ? functions[f].max_args : EXPR_MAX_ARGS;
    if (n < functions[f].min_args || n > most) {
        tl_fail(c, "%s takes %d to %d arguments, got %d: %s", functions[f].name, functions[f].min_args, most, n,
                functions[f].usage);
        return 0;
    }
    return call_function(c, &functions[f], args, n, out);
}

static int parse_expr(tl_ctx *c, tl_scan *s, tl_value *out, int depth) {
    if (depth > EXPR_MAX_DEPTH) {
        tl_scan_fail(c, s, "calls nested deeper than 32 levels");
        return 0;
    }
    tl_skip_space(s);
    const char *p = s->at;
    if (isalpha((unsigned char)*p) && strncmp(p, "Sw<", 3) != 0) {
        size_t len = 0;
        while (isalnum((unsigned char)p[len]) || p[len] == '_')
            len++;
        s->at += len;
        return parse_call(c, s, p, len, out, depth);
    }
    return tv_parse(c, s, out);
}

TESS_API tess_status tess_layout_eval_expr(const char *expr, char *buf, size_t cap, size_t *length) {
    if (!expr)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_eval_expr: the expression is NULL");
    tl_ctx c;
    tl_init(&c);
    tl_scan s = {expr, expr};
    tl_value v;
    int good = parse_expr(&c, &s, &v, 0);
    if (good) {
        tl_skip_space(&s);
        if (*s.at)
            good = tl_scan_fail(&c, &s, "unexpected text after the expression") != NULL;
    }
    tl_text t = {0};
    t.ctx = &c;
    if (good)
        tv_print(&t, &v);
    return tv_emit(&c, good, &t, buf, cap, length);
}

/* The calculator's functions and their usage, for `tessera layout --help`. */
TESS_API const char *tess_layout_expr_usage(int i) {
    return i >= 0 && i < (int)(sizeof functions / sizeof functions[0]) ? functions[i].usage : NULL;
}
