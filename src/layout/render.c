/* Pictures of layouts: CuTe's print_layout table and print_latex TikZ text,
 * an SVG drawing (offsets, or a thread-value layout over its tile), and a
 * step-by-step walk of one coordinate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "layout/value.h"

/* Largest table or picture drawn: beyond this a picture is unreadable anyway. */
#define TL_RENDER_MAX_CELLS (1 << 16)

/* A rank-2 integer layout for tables: the value itself, or (L, 1:0) for rank 1 (CuTe's append<2>). */
static int as_rank2(tl_ctx *c, const tl_value *x, tl_value *out, const char *what) {
    if (x->kind == TESS_LAYOUT_SWIZZLE || x->kind == TESS_LAYOUT_TILER) {
        tl_fail(c, "%s: expected a layout", what);
        return 0;
    }
    *out = *x;
    if (x->kind == TESS_LAYOUT_TUPLE) {
        out->kind = TESS_LAYOUT_PLAIN;
        if (!(out->node = tv_layout(c, x, what)))
            return 0;
    }
    int r = tl_rank(out->node);
    if (r > 2) {
        tl_fail(c, "%s: the layout has rank %d; pictures need rank 1 or 2 (group modes first)", what, r);
        return 0;
    }
    if (r == 1)
        out->node = tl_tuple2(c, out->node, tl_leaf(c, 1, tl_int_stride(0)));
    if (out->node && tl_has_basis(out->node)) {
        tl_fail(c, "%s: the layout is coordinate-valued; pictures show integer layouts", what);
        return 0;
    }
    return out->node != NULL;
}

/* The rows x cols values of a rank-2 view, row by row. */
static int64_t *grid_values(tl_ctx *c, const tl_value *x, int64_t *rows, int64_t *cols) {
    *rows = tl_product(c, x->node->child[0]);
    *cols = tl_product(c, x->node->child[1]);
    if (c->status)
        return NULL;
    /* Each side first: their product could overflow (the fuzzer's left_inverse((1,2):(22,9197070194861553891))). */
    if (*rows > TL_RENDER_MAX_CELLS || *cols > TL_RENDER_MAX_CELLS || *rows * *cols > TL_RENDER_MAX_CELLS)
        return tl_fail(c, "a %lld x %lld picture is more than the %d cells drawn", (long long)*rows,
                       (long long)*cols, TL_RENDER_MAX_CELLS);
    int64_t *v = tl_alloc(c, sizeof(int64_t) * (size_t)(*rows * *cols));
    for (int64_t i = 0; v && i < *rows; i++) {
        for (int64_t j = 0; j < *cols; j++) {
            tl_value coord = tv_of(TESS_LAYOUT_TUPLE, tl_tuple2(c, tl_int(c, i), tl_int(c, j))), r;
            if (!coord.node || !tv_eval(c, x, &coord, 0, &r))
                return NULL;
            v[i * *cols + j] = r.node->value;
        }
    }
    return v;
}

static int digits(int64_t v) {
    int d = 1;
    for (int64_t x = v < 0 ? -v : v; x >= 10; x /= 10)
        d++;
    return d + (v < 0);
}

/* Unpacks a public value and views it as a rank-2 layout. */
static int prepare(tl_ctx *c, const tess_layout *x, tl_value *l, const char *fn) {
    tl_value v;
    return tv_unpack(c, x, &v, fn, "the layout") && as_rank2(c, &v, l, fn);
}

TESS_API tess_status tess_layout_render_table(const tess_layout *x, char *buf, size_t cap, size_t *length) {
    tl_ctx c;
    tl_init(&c);
    tl_text t = {0};
    t.ctx = &c;
    tl_value l;
    int64_t rows = 0, cols = 0, cosize = 1, *v = NULL;
    int good = prepare(&c, x, &l, "tess_layout_render_table") && (v = grid_values(&c, &l, &rows, &cols)) &&
               tv_cosize(&c, &l, &cosize);
    if (good) {
        int width = digits(cosize) + 2; /* CuTe: num_digits(cosize) + 2 */
        const char *delim = "+-----------------------";
        tv_print(&t, &l);
        tl_text_put(&t, "\n    ");
        for (int64_t j = 0; j < cols; j++)
            tl_text_printf(&t, "  %*lld ", width - 2, (long long)j);
        tl_text_put(&t, "\n");
        for (int64_t i = 0; i <= rows; i++) {
            tl_text_put(&t, "    ");
            for (int64_t j = 0; j < cols; j++)
                tl_text_printf(&t, "%.*s", width + 1, delim);
            tl_text_put(&t, "+\n");
            if (i == rows)
                break;
            tl_text_printf(&t, "%2lld  ", (long long)i);
            for (int64_t j = 0; j < cols; j++)
                tl_text_printf(&t, "| %*lld ", width - 2, (long long)v[i * cols + j]);
            tl_text_put(&t, "|\n");
        }
    }
    return tv_emit(&c, good, &t, buf, cap, length);
}

TESS_API tess_status tess_layout_render_latex(const tess_layout *x, char *buf, size_t cap, size_t *length) {
    /* CuTe's TikzColor_BWx8: eight greys by value modulo 8. */
    static const char *const grey[8] = {"black!00", "black!40", "black!20", "black!60",
                                        "black!10", "black!50", "black!30", "black!70"};
    tl_ctx c;
    tl_init(&c);
    tl_text t = {0};
    t.ctx = &c;
    tl_value l;
    int64_t rows = 0, cols = 0, *v = NULL;
    int good = prepare(&c, x, &l, "tess_layout_render_latex") && (v = grid_values(&c, &l, &rows, &cols));
    if (good) {
        tl_text_put(&t, "% Layout: ");
        tv_print(&t, &l);
        tl_text_put(&t, "\n\\documentclass[convert]{standalone}\n\\usepackage{tikz}\n\n\\begin{document}\n"
                        "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},every node/.style={minimum size=1cm, "
                        "outer sep=0pt}]\n\n");
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                int64_t value = v[i * cols + j];
                tl_text_printf(&t, "\\node[fill=%s] at (%lld,%lld) {%lld};\n", grey[tl_floor_mod(value, 8)],
                               (long long)i, (long long)j, (long long)value);
            }
        tl_text_printf(&t, "\\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (%lld,%lld);\n\n",
                       (long long)rows, (long long)cols);
        for (int64_t i = 0; i < rows; i++)
            tl_text_printf(&t, "\\node at (%lld,-1) {\\Large{\\texttt{%lld}}};\n", (long long)i, (long long)i);
        for (int64_t j = 0; j < cols; j++)
            tl_text_printf(&t, "\\node at (-1,%lld) {\\Large{\\texttt{%lld}}};\n", (long long)j, (long long)j);
        tl_text_put(&t, "\\end{tikzpicture}\n\\end{document}\n");
    }
    return tv_emit(&c, good, &t, buf, cap, length);
}

/* ---- SVG ---- */

/* Cell size and margin of the drawing, in SVG user units (pixels). */
#define SVG_CELL 40
#define SVG_MARGIN 30

/* Eight light colours, one per thread modulo 8 (as CuTe's TV pictures). */
static const char *const thread_colour[8] = {"#afafff", "#afffaf", "#ffffaf", "#ffafaf",
                                             "#d2d2ff", "#d2ffd2", "#ffffd2", "#ffd2d2"};

static void svg_open(tl_text *t, int64_t rows, int64_t cols, const char *title) {
    tl_text_printf(t,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
                   "font-family=\"monospace\" font-size=\"10\">\n<title>",
                   (long long)(cols * SVG_CELL + 2 * SVG_MARGIN), (long long)(rows * SVG_CELL + 2 * SVG_MARGIN));
    tl_text_put(t, title);
    tl_text_put(t, "</title>\n");
    for (int64_t i = 0; i < rows; i++)
        tl_text_printf(t, "<text x=\"%d\" y=\"%lld\" text-anchor=\"end\">%lld</text>\n", SVG_MARGIN - 4,
                       (long long)(SVG_MARGIN + i * SVG_CELL + SVG_CELL / 2 + 4), (long long)i);
    for (int64_t j = 0; j < cols; j++)
        tl_text_printf(t, "<text x=\"%lld\" y=\"%d\" text-anchor=\"middle\">%lld</text>\n",
                       (long long)(SVG_MARGIN + j * SVG_CELL + SVG_CELL / 2), SVG_MARGIN - 6, (long long)j);
}

static void svg_cell(tl_text *t, int64_t i, int64_t j, const char *fill, const char *line1, const char *line2) {
    int64_t x = SVG_MARGIN + j * SVG_CELL, y = SVG_MARGIN + i * SVG_CELL;
    tl_text_printf(t, "<rect x=\"%lld\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"black\"/>\n",
                   (long long)x, (long long)y, SVG_CELL, SVG_CELL, fill);
    tl_text_printf(t, "<text x=\"%lld\" y=\"%lld\" text-anchor=\"middle\">%s</text>\n",
                   (long long)(x + SVG_CELL / 2), (long long)(y + (line2 ? 16 : 24)), line1);
    if (line2)
        tl_text_printf(t, "<text x=\"%lld\" y=\"%lld\" text-anchor=\"middle\">%s</text>\n",
                       (long long)(x + SVG_CELL / 2), (long long)(y + 30), line2);
}

/* A TV layout over a rows x cols tile: each cell shows the first (thread, value) that maps to it. */
static int svg_tv(tl_ctx *c, tl_text *t, const tl_value *x, int64_t rows, int64_t cols) {
    if (x->kind != TESS_LAYOUT_PLAIN || tl_rank(x->node) != 2 || tl_has_basis(x->node)) {
        tl_fail(c, "a thread-value picture needs a rank-2 (thread, value) integer layout");
        return 0;
    }
    if (rows > TL_RENDER_MAX_CELLS || cols > TL_RENDER_MAX_CELLS || rows * cols > TL_RENDER_MAX_CELLS) {
        tl_fail(c, "a %lld x %lld picture is more than the %d cells drawn", (long long)rows, (long long)cols,
                TL_RENDER_MAX_CELLS);
        return 0;
    }
    int64_t threads = tl_product(c, x->node->child[0]), values = tl_product(c, x->node->child[1]);
    int64_t *owner = tl_alloc(c, sizeof(int64_t) * (size_t)(rows * cols) * 2);
    if (!owner || c->status)
        return 0;
    for (int64_t k = 0; k < rows * cols * 2; k++)
        owner[k] = -1;
    for (int64_t th = 0; th < threads; th++)
        for (int64_t val = 0; val < values; val++) {
            tl_value coord = tv_of(TESS_LAYOUT_TUPLE, tl_tuple2(c, tl_int(c, th), tl_int(c, val))), r;
            if (!coord.node || !tv_eval(c, x, &coord, 0, &r))
                return 0;
            int64_t idx = r.node->value;
            if (idx < 0 || idx >= rows * cols) {
                tl_fail(c, "thread %lld value %lld maps to %lld, outside the %lld x %lld tile", (long long)th,
                        (long long)val, (long long)idx, (long long)rows, (long long)cols);
                return 0;
            }
            if (owner[2 * idx] < 0)
                owner[2 * idx] = th, owner[2 * idx + 1] = val;
        }
    char title[160];
    snprintf(title, sizeof title, "thread-value layout over a %lld x %lld tile", (long long)rows, (long long)cols);
    svg_open(t, rows, cols, title);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t idx = i + j * rows, th = owner[2 * idx], val = owner[2 * idx + 1];
            char l1[24] = "-", l2[24] = "";
            if (th >= 0)
                snprintf(l1, sizeof l1, "T%lld", (long long)th), snprintf(l2, sizeof l2, "V%lld", (long long)val);
            svg_cell(t, i, j, th >= 0 ? thread_colour[th % 8] : "#ffffff", l1, th >= 0 ? l2 : NULL);
        }
    tl_text_put(t, "</svg>\n");
    return 1;
}

TESS_API tess_status tess_layout_render_svg(const tess_layout *x, int64_t rows, int64_t cols, char *buf, size_t cap,
                                            size_t *length) {
    tl_ctx c;
    tl_init(&c);
    tl_text t = {0};
    t.ctx = &c;
    tl_value v, l;
    int good = tv_unpack(&c, x, &v, "tess_layout_render_svg", "the layout");
    if (good && rows > 0 && cols > 0) {
        good = svg_tv(&c, &t, &v, rows, cols);
    } else if (good) {
        int64_t r = 0, k = 0, *vals = NULL;
        good = as_rank2(&c, &v, &l, "tess_layout_render_svg") && (vals = grid_values(&c, &l, &r, &k));
        if (good) {
            tl_text title = {0};
            title.ctx = &c;
            tv_print(&title, &l);
            svg_open(&t, r, k, title.s ? title.s : "");
            for (int64_t i = 0; i < r; i++)
                for (int64_t j = 0; j < k; j++) {
                    char l1[24];
                    int64_t value = vals[i * k + j];
                    snprintf(l1, sizeof l1, "%lld", (long long)value);
                    svg_cell(&t, i, j, thread_colour[tl_floor_mod(value, 8)], l1, NULL);
                }
            tl_text_put(&t, "</svg>\n");
        }
    }
    return tv_emit(&c, good, &t, buf, cap, length);
}

/* ---- explain ---- */

/* The natural coordinate of `crd` in layout x: integers for tuple modes are split colexicographically. */
static tl_node *natural(tl_ctx *c, const tl_node *crd, const tl_node *x) {
    if (!tl_is_tuple(x)) {
        if (tl_is_tuple(crd))
            return tl_fail(c, "the coordinate has a tuple where the layout has a single mode");
        return (tl_node *)crd;
    }
    if (tl_is_tuple(crd)) {
        if (crd->rank != x->rank)
            return tl_fail(c, "the coordinate has %d modes where the layout has %d", crd->rank, x->rank);
        tl_list l = {0};
        for (int i = 0; i < x->rank; i++)
            tl_push(c, &l, natural(c, crd->child[i], x->child[i]));
        return tl_list_tuple(c, &l);
    }
    tl_list l = {0};
    int64_t k = crd->value;
    for (int i = 0; i < x->rank; i++) {
        int64_t n = tl_product(c, x->child[i]);
        int64_t here = i + 1 < x->rank ? tl_floor_mod(k, n) : k;
        tl_push(c, &l, natural(c, tl_int(c, here), x->child[i]));
        k = tl_floor_div(k, n);
    }
    return tl_list_tuple(c, &l);
}

TESS_API tess_status tess_layout_explain(const tess_layout *x, const tess_layout *coord, int64_t rows, char *buf,
                                         size_t cap, size_t *length) {
    tl_ctx c;
    tl_init(&c);
    tl_text t = {0};
    t.ctx = &c;
    tl_value v, k, r;
    tl_node *layout = NULL, *crd = NULL, *nat = NULL;
    int good = tv_unpack(&c, x, &v, "tess_layout_explain", "the layout") &&
               tv_unpack(&c, coord, &k, "tess_layout_explain", "the coordinate") &&
               (layout = tv_base_layout(&c, &v, "explain")) &&
               (crd = tv_tuple(&c, &k, "explain: the coordinate")) && (nat = natural(&c, crd, layout)) &&
               tv_eval(&c, &v, &k, 0, &r);
    if (good && tl_has_under(crd))
        good = tl_fail(&c, "explain: the coordinate holds '_'") != NULL;
    if (good) {
        tl_text_put(&t, "layout      ");
        tv_print(&t, &v);
        tl_text_put(&t, "\ncoordinate  ");
        tl_print_shape(&t, crd);
        tl_text_put(&t, "\nnatural     ");
        tl_print_shape(&t, nat);
        tl_text_put(&t, "   (each mode's coordinate split colexicographically by its shape)\nsum         ");
        tl_list cs = {0}, ls = {0};
        tl_flatten_into(&c, nat, &cs);
        tl_flatten_into(&c, layout, &ls);
        tl_vec sum = {0};
        for (int i = 0; i < cs.n && i < ls.n; i++) {
            tl_stride d = ls.item[i]->stride;
            if (d.basis >= 0)
                tl_text_printf(&t, "%s%lld*%lld@%d", i ? " + " : "", (long long)cs.item[i]->value, (long long)d.value,
                               d.basis);
            else
                tl_text_printf(&t, "%s%lld*%lld", i ? " + " : "", (long long)cs.item[i]->value, (long long)d.value);
            tl_vec_add(&c, &sum, d, cs.item[i]->value);
        }
        tl_text_put(&t, "\noffset      ");
        if (v.kind == TESS_LAYOUT_SWIZZLED)
            tl_text_printf(&t, "Sw<%d,%d,%d>(%lld + %lld) = ", v.bits, v.base, v.shift, (long long)v.offset,
                           (long long)sum.plain);
        tl_print_shape(&t, r.node);
        tl_text_put(&t, "\n");
        if (rows > 0 && r.node->kind == TL_INT) {
            int64_t off = r.node->value;
            tl_text_printf(&t, "(m,n)       (%lld,%lld)   (column-major tile of %lld rows: m = offset %% %lld, n = offset / %lld)\n",
                           (long long)tl_floor_mod(off, rows), (long long)tl_floor_div(off, rows), (long long)rows,
                           (long long)rows, (long long)rows);
        }
    }
    return tv_emit(&c, good, &t, buf, cap, length);
}
