/* Properties of the layout algebra on thousands of random layouts, checked
 * with an evaluator written in the test (layout_util.c), not the library's:
 *   composition evaluates as A(B(i)); coalesce and filter keep the function
 *   (and its image); complement is disjoint from the layout and fills the
 *   cotarget; right_inverse and left_inverse invert; a divide's first mode is
 *   the composition with the tiler and every arrangement holds the same
 *   values; a product's first mode is the block and its size multiplies. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "layout_util.h"
#include "ref/random.h"

static tess_rng rng;

static int64_t pick(const int64_t *xs, int n) { return xs[tess_rng_range(&rng, 0, n - 1)]; }

/* Appends a random shape tree to `buf`, recording its leaves' shapes. */
static void random_shape(char *buf, size_t cap, int depth, int64_t *leaves, int *n) {
    static const int64_t sizes[] = {1, 2, 2, 2, 3, 4, 4, 5, 6, 8, 8, 16};
    int rank = depth < 2 && tess_rng_range(&rng, 0, 2) ? (int)tess_rng_range(&rng, 2, 3) : 1;
    if (rank == 1 || *n > 5) {
        int64_t s = pick(sizes, 12);
        leaves[(*n)++] = s;
        snprintf(buf + strlen(buf), cap - strlen(buf), "%lld", (long long)s);
        return;
    }
    strncat(buf, "(", cap - strlen(buf) - 1);
    for (int i = 0; i < rank; i++) {
        if (i)
            strncat(buf, ",", cap - strlen(buf) - 1);
        random_shape(buf, cap, depth + 1, leaves, n);
    }
    strncat(buf, ")", cap - strlen(buf) - 1);
}

/* Replaces each leaf value in the shape text with its stride, in order. */
static void strides_like(const char *shape, const int64_t *strides, char *out, size_t cap) {
    int k = 0;
    out[0] = '\0';
    for (const char *p = shape; *p;) {
        if (*p >= '0' && *p <= '9') {
            snprintf(out + strlen(out), cap - strlen(out), "%lld", (long long)strides[k++]);
            while (*p >= '0' && *p <= '9')
                p++;
        } else {
            size_t len = strlen(out);
            if (len + 1 < cap)
                out[len] = *p, out[len + 1] = '\0';
            p++;
        }
    }
}

/* A random layout: strides are a shuffled compact basis, sometimes with gaps
 * (injective) or a zero (broadcast), so that every operation meets both its
 * admissible and inadmissible inputs. */
static void random_layout(char *out, size_t cap, int allow_zero) {
    char shape[256];
    int64_t leaves[16], size;
    int n;
    do { /* at most 2^14 elements, so that images and compositions stay small */
        shape[0] = '\0';
        n = 0;
        random_shape(shape, sizeof shape, 0, leaves, &n);
        size = 1;
        for (int i = 0; i < n; i++)
            size *= leaves[i];
    } while (size > (1 << 14));
    int order[16];
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)tess_rng_range(&rng, 0, i), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    int64_t strides[16], running = 1;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        strides[i] = running;
        running *= leaves[i] * (tess_rng_range(&rng, 0, 5) == 0 ? 2 : 1);
    }
    if (allow_zero && tess_rng_range(&rng, 0, 6) == 0)
        strides[tess_rng_range(&rng, 0, n - 1)] = 0;
    char stride[256];
    strides_like(shape, strides, stride, sizeof stride);
    snprintf(out, cap, "%s:%s", shape, stride);
}

/* The layout an expression evaluates to, flattened; 0 if refused. */
static int eval_flat(const char *expr, lu_flat *f, char **text) {
    char *r = lu_eval(expr);
    if (!r)
        return 0;
    tess_layout *x = NULL;
    int good = tess_layout_parse(r, &x) == TESS_STATUS_SUCCESS && lu_flatten(x, f);
    tess_layout_free(x);
    if (text)
        *text = r;
    else
        free(r);
    return good;
}

static int compare64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The sorted distinct values of f over its domain; returns their count. */
static int64_t image(const lu_flat *f, int64_t *out) {
    int64_t n = lu_size(f), k = 0;
    for (int64_t i = 0; i < n; i++)
        out[i] = lu_at(f, i);
    qsort(out, (size_t)n, sizeof *out, compare64);
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || out[i] != out[k - 1])
            out[k++] = out[i];
    return k;
}

#define MAX_ELEMS (1 << 18)
static int64_t buf_a[MAX_ELEMS], buf_b[MAX_ELEMS];

static void test_coalesce_filter(int trials) {
    for (int t = 0; t < trials; t++) {
        char L[300], expr[400];
        random_layout(L, sizeof L, 1);
        lu_flat f, c, fl;
        lu_flatten_text(L, &f);
        snprintf(expr, sizeof expr, "coalesce(%s)", L);
        CHECKF(eval_flat(expr, &c, NULL), "%s refused: %s", expr, tess_last_error());
        int64_t n = lu_size(&f), bad = 0;
        CHECK(lu_size(&c) == n);
        for (int64_t i = 0; i < n; i++)
            bad += lu_at(&c, i) != lu_at(&f, i);
        CHECKF(bad == 0, "coalesce changed %lld values of %s", (long long)bad, L);
        snprintf(expr, sizeof expr, "filter(%s)", L);
        CHECKF(eval_flat(expr, &fl, NULL), "%s refused", expr);
        int64_t k1 = image(&f, buf_a), k2 = image(&fl, buf_b);
        CHECKF(k1 == k2 && memcmp(buf_a, buf_b, sizeof(int64_t) * (size_t)k1) == 0 && lu_size(&fl) == k2,
               "filter(%s) is not the same image without repeats", L);
    }
}

static void test_composition(int trials) {
    int accepted = 0;
    for (int t = 0; t < trials; t++) {
        char A[300], B[300], expr[700];
        random_layout(A, sizeof A, 1);
        random_layout(B, sizeof B, 1);
        snprintf(expr, sizeof expr, "composition(%s, %s)", A, B);
        lu_flat fa, fb, fr;
        lu_flatten_text(A, &fa);
        lu_flatten_text(B, &fb);
        if (!eval_flat(expr, &fr, NULL)) {
            CHECKF(strlen(tess_last_error()) > 20, "%s refused without a sentence", expr);
            continue;
        }
        accepted++;
        int64_t n = lu_size(&fb), bad = 0;
        CHECK(lu_size(&fr) == n);
        for (int64_t i = 0; i < n; i++)
            bad += lu_at(&fr, i) != lu_at(&fa, lu_at(&fb, i));
        CHECKF(bad == 0, "%s: %lld values differ from A(B(i))", expr, (long long)bad);
    }
    /* The generator must reach admissible cases, or the property says nothing. */
    CHECKF(accepted > trials / 10, "only %d of %d compositions were admissible", accepted, trials);
}

static void test_complement_and_inverses(int trials) {
    int complements = 0, lefts = 0;
    for (int t = 0; t < trials; t++) {
        char L[300], expr[400];
        random_layout(L, sizeof L, 0);
        lu_flat f, c, r;
        lu_flatten_text(L, &f);
        int64_t n = lu_size(&f), cosize = 0;
        for (int j = 0; j < f.n; j++)
            cosize += (f.shape[j] - 1) * f.stride[j];
        cosize += 1;
        int64_t target = cosize * tess_rng_range(&rng, 1, 3);
        snprintf(expr, sizeof expr, "complement(%s, %lld)", L, (long long)target);
        if (eval_flat(expr, &c, NULL)) {
            complements++;
            /* Disjoint: no value of the complement past its first is a value of L. */
            int64_t k = image(&f, buf_a), bad = 0;
            for (int64_t i = 1; i < lu_size(&c) && i < MAX_ELEMS; i++)
                bad += bsearch(&(int64_t){lu_at(&c, i)}, buf_a, (size_t)k, sizeof(int64_t), compare64) != NULL;
            CHECKF(bad == 0, "%s meets L at %lld values", expr, (long long)bad);
            /* Fills: together they reach at least the cotarget. */
            CHECKF(k * lu_size(&c) >= target, "%s: %lld x %lld < %lld", expr, (long long)k, (long long)lu_size(&c),
                   (long long)target);
        }
        snprintf(expr, sizeof expr, "right_inverse(%s)", L);
        CHECKF(eval_flat(expr, &r, NULL), "%s refused: %s", expr, tess_last_error());
        int64_t bad = 0;
        for (int64_t i = 0; i < lu_size(&r); i++)
            bad += lu_at(&f, lu_at(&r, i)) != i;
        CHECKF(bad == 0, "L(R(i)) != i for %lld i, L = %s", (long long)bad, L);
        snprintf(expr, sizeof expr, "left_inverse(%s)", L);
        if (eval_flat(expr, &r, NULL)) {
            lefts++;
            bad = 0;
            for (int64_t i = 0; i < n; i++)
                bad += lu_at(&r, lu_at(&f, i)) != i;
            CHECKF(bad == 0, "R(L(i)) != i for %lld i, L = %s (injective)", (long long)bad, L);
        }
    }
    CHECKF(complements > trials / 2 && lefts > trials / 2, "complement %d, left_inverse %d of %d", complements,
           lefts, trials);
}

static void test_divide_and_product(int trials) {
    static const char *const arrangements[] = {"zipped", "tiled", "flat"};
    int divides = 0, products = 0;
    for (int t = 0; t < trials; t++) {
        char A[300], T[300], expr[700];
        random_layout(A, sizeof A, 0);
        random_layout(T, sizeof T, 0);
        lu_flat fl, fc, fz;
        char *logical = NULL;
        snprintf(expr, sizeof expr, "logical_divide(%s, %s)", A, T);
        if (eval_flat(expr, &fl, &logical)) {
            divides++;
            /* Mode 0 is A o T. */
            char e0[1200];
            snprintf(e0, sizeof e0, "get(%s, 0)", logical);
            snprintf(expr, sizeof expr, "composition(%s, %s)", A, T);
            lu_flat m0;
            CHECKF(eval_flat(e0, &m0, NULL) && eval_flat(expr, &fc, NULL), "%s: mode 0", expr);
            int64_t bad = 0;
            for (int64_t i = 0; i < lu_size(&fc); i++)
                bad += lu_at(&m0, i) != lu_at(&fc, i);
            CHECKF(bad == 0 && lu_size(&m0) == lu_size(&fc), "logical_divide(%s, %s)'s first mode is not A o T", A, T);
            /* Every arrangement holds the same values. A tiler whose cosize
             * exceeds size(A) makes the divide larger than A (its complement
             * fills T's gaps), past the image buffers: compare sizes only then. */
            const int fits = lu_size(&fl) <= MAX_ELEMS;
            int64_t k = fits ? image(&fl, buf_a) : 0;
            for (int a = 0; a < 3; a++) {
                snprintf(expr, sizeof expr, "%s_divide(%s, %s)", arrangements[a], A, T);
                CHECKF(eval_flat(expr, &fz, NULL), "%s refused: %s", expr, tess_last_error());
                CHECKF(lu_size(&fz) == lu_size(&fl) &&
                           (!fits || (image(&fz, buf_b) == k && memcmp(buf_a, buf_b, sizeof(int64_t) * (size_t)k) == 0)),
                       "%s holds other values than the logical divide", expr);
            }
            free(logical);
        }
        snprintf(expr, sizeof expr, "logical_product(%s, %s)", A, T);
        if (eval_flat(expr, &fl, &logical)) {
            products++;
            lu_flat fa, ft, m0;
            lu_flatten_text(A, &fa);
            lu_flatten_text(T, &ft);
            char e0[1200];
            snprintf(e0, sizeof e0, "get(%s, 0)", logical);
            CHECK(eval_flat(e0, &m0, NULL));
            int64_t bad = 0;
            for (int64_t i = 0; i < lu_size(&fa); i++)
                bad += lu_at(&m0, i) != lu_at(&fa, i);
            CHECKF(bad == 0 && lu_size(&fl) == lu_size(&fa) * lu_size(&ft),
                   "logical_product(%s, %s): mode 0 is not A, or the size is not size(A) * size(B)", A, T);
            /* Both inputs are injective, so the product is too. */
            CHECKF(lu_size(&fl) > MAX_ELEMS || image(&fl, buf_a) == lu_size(&fl), "logical_product(%s, %s) repeats values", A, T);
            free(logical);
        }
    }
    CHECKF(divides > trials / 10 && products > trials / 10, "divides %d, products %d of %d", divides, products, trials);
}

int main(void) {
    tess_rng_seed(&rng, check_seed());
    test_coalesce_filter(3000);
    test_composition(3000);
    test_complement_and_inverses(2000);
    test_divide_and_product(1500);
    return check_finish("unit_layout_props");
}
