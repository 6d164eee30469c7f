/* Test helpers for the layout algebra; see layout_util.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_util.h"

tess_layout *lu_value(const char *text) {
    tess_layout *x = NULL;
    if (tess_layout_parse(text, &x) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "test bug: cannot parse '%s': %s\n", text, tess_last_error());
        abort();
    }
    return x;
}

char *lu_eval(const char *expr) {
    size_t n = 0;
    if (tess_layout_eval_expr(expr, NULL, 0, &n) != TESS_STATUS_SUCCESS)
        return NULL;
    char *buf = malloc(n + 1);
    tess_layout_eval_expr(expr, buf, n + 1, &n);
    return buf;
}

/* Reads the integers of a printed tuple in order; -1 if a basis stride appears. */
static int read_ints(const char *text, int64_t *out, int cap) {
    int n = 0;
    for (const char *p = text; *p;) {
        if (*p == '-' || (*p >= '0' && *p <= '9')) {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (*end == '@' || n == cap)
                return -1;
            out[n++] = v;
            p = end;
        } else {
            p++;
        }
    }
    return n;
}

int lu_flatten(const tess_layout *x, lu_flat *f) {
    if (tess_layout_kind_of(x) != TESS_LAYOUT_PLAIN)
        return 0;
    tess_layout *s = NULL, *d = NULL;
    char st[8192], dt[8192];
    if (tess_layout_shape(x, &s) || tess_layout_stride(x, &d))
        return 0;
    tess_layout_print(s, st, sizeof st);
    tess_layout_print(d, dt, sizeof dt);
    tess_layout_free(s);
    tess_layout_free(d);
    int ns = read_ints(st, f->shape, 256), nd = read_ints(dt, f->stride, 256);
    f->n = ns;
    return ns > 0 && ns == nd;
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t lu_at(const lu_flat *f, int64_t i) {
    int64_t v = 0;
    for (int j = 0; j + 1 < f->n; j++) {
        int64_t q = floor_div(i, f->shape[j]);
        v += (i - q * f->shape[j]) * f->stride[j];
        i = q;
    }
    return v + i * f->stride[f->n - 1];
}

int64_t lu_size(const lu_flat *f) {
    int64_t p = 1;
    for (int j = 0; j < f->n; j++)
        p *= f->shape[j];
    return p;
}

int lu_flatten_text(const char *text, lu_flat *f) {
    tess_layout *x = lu_value(text);
    int good = lu_flatten(x, f);
    tess_layout_free(x);
    return good;
}
