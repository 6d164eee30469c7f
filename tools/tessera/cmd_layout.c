/* `tessera layout`: the layout-algebra calculator, with CuTe's tables and
 * TikZ text, a step-by-step walk of one coordinate, and SVG pictures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/layout.h"
#include "tools/tessera/commands.h"

static const cli_option layout_options[] = {
    {"table", CLI_NO_VALUE, NULL, "also print the layout as CuTe's print_layout table"},
    {"latex", CLI_NO_VALUE, NULL, "also print it as TikZ (CuTe's print_latex)"},
    {"explain", CLI_VALUE, "COORD", "walk one coordinate through the layout, step by step"},
    {"svg", CLI_VALUE, "FILE", "draw the layout into FILE"},
    {"atom", CLI_VALUE, "NAME", "an MMA atom's TV layout instead of EXPR (--atoms lists the names)"},
    {"operand", CLI_VALUE, "A|B|C", "the atom's operand; default C"},
    {"atoms", CLI_NO_VALUE, NULL, "list the MMA atoms' names"},
    {NULL, 0, NULL, NULL},
};

const cli_command layout_command = {
    "tessera layout",
    "EXPR [--table] [--latex] [--explain=COORD] [--svg=FILE]\n"
    "       tessera layout --atom=NAME [--operand=A|B|C] [--table] [--explain=COORD] [--svg=FILE]\n"
    "       tessera layout --atoms\n"
    "The layout algebra calculator: EXPR is a value in CuTe notation or a call\n"
    "(`tessera layout --help` lists the functions).",
    layout_options,
    NULL,
};

/* The option indexes of layout_options. */
enum { OPT_TABLE, OPT_LATEX, OPT_EXPLAIN, OPT_SVG, OPT_ATOM, OPT_OPERAND, OPT_ATOMS };

/* What `tessera layout` was asked for. */
typedef struct layout_request {
    const char *expr, *atom, *operand, *explain, *svg;
    int table, latex, atoms;
} layout_request;

/* cli_apply_fn of `tessera layout`; -1 after saying why for a second expression. */
static int apply_layout(void *ctx, int index, const char *value) {
    layout_request *r = ctx;
    switch (index) {
    case CLI_ARGUMENT:
        if (r->expr) {
            fprintf(stderr, "tessera layout: one expression at a time (quote it)\n");
            return -1;
        }
        return (r->expr = value), 1;
    case OPT_TABLE: return (r->table = 1);
    case OPT_LATEX: return (r->latex = 1);
    case OPT_EXPLAIN: return (r->explain = value), 1;
    case OPT_SVG: return (r->svg = value), 1;
    case OPT_ATOM: return (r->atom = value), 1;
    case OPT_OPERAND: return (r->operand = value), 1;
    default: return (r->atoms = 1); /* OPT_ATOMS */
    }
}

/* The rest of `tessera layout --help`, after the options: examples and the calculator's functions. */
static void print_examples(FILE *out) {
    fprintf(out,
            "\nexamples:\n"
            "  tessera layout 'logical_divide((24):(1), (4):(1))'      -> ((4),6):((1),4)\n"
            "  tessera layout '(2,(2,2)):(4,(2,1))' --table\n"
            "  tessera layout --atom wgmma_64x64x16_f32 --explain '(1,0)' --svg c.svg\n"
            "  tessera layout --atom umma_2cta_256x256x16_f32 --operand B\n"
            "--atom prints the operand's TV layout and the atom's ThrID: what the first\n"
            "mode counts, threads, or for the Blackwell umma atoms CTAs (1, or the 2 of a\n"
            "pair). --atoms lists the names: wgmma_64x{N}x{K}_{acc}, mma_16x8x{K}_f32,\n"
            "umma_128x{N}x16_f32, umma_2cta_256x{N}x16_f32.\n"
            "Values: 4, (2,3), (4,8):(1,4), Sw<3,4,3> o 0 o (8,64):(64,1), <2:1,_,8> (a tiler).\n"
            "Functions:\n");
    for (int i = 0; tess_layout_expr_usage(i); i++)
        fprintf(out, "  %s\n", tess_layout_expr_usage(i));
}

/* Writes `text` to `path`; 0 on success. */
static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "tessera layout: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

typedef tess_status (*render_fn)(const tess_layout *, char *, size_t, size_t *);

/* Runs a text renderer with a buffer of the size it asks for; NULL after printing the error. */
static char *render(render_fn fn, const tess_layout *x) {
    size_t n = 0;
    if (fn(x, NULL, 0, &n) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "tessera layout: %s\n", tess_last_error());
        return NULL;
    }
    char *buf = malloc(n + 1);
    if (buf)
        fn(x, buf, n + 1, &n);
    return buf;
}

/* The calculator as a renderer: the expression in place of the layout. */
static const char *calc_expr;
static tess_status calc_render(const tess_layout *unused, char *buf, size_t cap, size_t *n) {
    (void)unused;
    return tess_layout_eval_expr(calc_expr, buf, cap, n);
}

/* Prints what `fn` renders of x; 1 after printing the error. */
static int print_rendered(render_fn fn, const tess_layout *x) {
    char *out = render(fn, x);
    if (!out)
        return 1;
    fputs(out, stdout);
    free(out);
    return 0;
}

static int64_t svg_rows, svg_cols;
static tess_status svg_render(const tess_layout *x, char *buf, size_t cap, size_t *n) {
    return tess_layout_render_svg(x, svg_rows, svg_cols, buf, cap, n);
}
static const tess_layout *explain_coord;
static int64_t explain_rows;
static tess_status explain_render(const tess_layout *x, char *buf, size_t cap, size_t *n) {
    return tess_layout_explain(x, explain_coord, explain_rows, buf, cap, n);
}

/* Prints an atom operand's TV layout over its tile, then the atom's ThrID and
 * shape (and the part one CTA computes where the atom spans two); 1 on error. */
static int print_atom(const char *atom, const tess_layout *tv, int64_t rows, int64_t cols, char operand) {
    tess_layout *thr = NULL;
    int64_t mnk[3], cta[3], peers;
    if (tess_layout_mma_atom_thr_id(atom, &thr) != TESS_STATUS_SUCCESS ||
        tess_layout_mma_atom_shape(atom, mnk, cta) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "tessera layout: %s\n", tess_last_error());
        tess_layout_free(thr);
        return 1;
    }
    char text[256], thr_text[32];
    tess_layout_print(tv, text, sizeof text);
    tess_layout_print(thr, thr_text, sizeof thr_text);
    tess_layout_size(thr, &peers);
    tess_layout_free(thr);
    const int by_cta = strncmp(atom, "umma", 4) == 0;
    printf("%s   (%s, value) -> index in the %lld x %lld %s tile, column-major\n", text, by_cta ? "cta" : "thread",
           (long long)rows, (long long)cols,
           operand == 'A' ? "A (M x K)" : operand == 'B' ? "B (N x K)" : "C (M x N)");
    printf("ThrID %s   (%s; atom M x N x K = %lld x %lld x %lld", thr_text,
           !by_cta ? "threads of one CTA" : peers == 1 ? "one CTA" : "the CTAs of the pair", (long long)mnk[0],
           (long long)mnk[1], (long long)mnk[2]);
    if (cta[0] != mnk[0])
        printf(", %lld x %lld x %lld per CTA", (long long)cta[0], (long long)cta[1], (long long)cta[2]);
    printf(")\n");
    return 0;
}

int cmd_layout(int argc, char **argv) {
    layout_request r = {NULL, NULL, "C", NULL, NULL, 0, 0, 0};
    const int read = cli_parse(&layout_command, argc, argv, apply_layout, &r);
    if (read == CLI_HELP)
        print_examples(stdout);
    if (read != CLI_OK)
        return read == CLI_HELP ? 0 : 2;
    if (r.atoms) {
        for (int k = 0; k < tess_layout_mma_atom_count(); k++)
            printf("%s\n", tess_layout_mma_atom_name(k));
        return 0;
    }
    const char *expr = r.expr, *atom = r.atom, *operand = r.operand, *explain = r.explain, *svg = r.svg;
    const int table = r.table, latex = r.latex;
    if (!expr == !atom) {
        fprintf(stderr, "tessera layout: %s (tessera layout --help)\n",
                expr ? "an expression or --atom, not both" : "expected an expression, --atom=NAME or --atoms");
        return 2;
    }
    tess_layout *x = NULL;
    int64_t rows = 0, cols = 0;
    if (atom) {
        const char *ops = "ABC", *at = strchr(ops, operand[0]);
        if (!at || operand[1]) {
            fprintf(stderr, "tessera layout: --operand is A, B or C\n");
            return 2;
        }
        if (tess_layout_mma_atom(atom, (tess_mma_operand)(at - ops), &x, &rows, &cols) != TESS_STATUS_SUCCESS) {
            fprintf(stderr, "tessera layout: %s\n", tess_last_error());
            return 1;
        }
        if (print_atom(atom, x, rows, cols, operand[0]) != 0) {
            tess_layout_free(x);
            return 1;
        }
    } else {
        calc_expr = expr;
        char *text = render(calc_render, NULL);
        if (!text)
            return 1;
        printf("%s\n", text);
        int parsed = tess_layout_parse(text, &x) == TESS_STATUS_SUCCESS;
        free(text);
        if (!parsed && (table || latex || explain || svg)) {
            fprintf(stderr, "tessera layout: %s\n", tess_last_error());
            return 1;
        }
    }
    int rc = 0;
    if (table)
        rc |= print_rendered(tess_layout_render_table, x);
    if (latex)
        rc |= print_rendered(tess_layout_render_latex, x);
    if (explain) {
        tess_layout *coord = NULL;
        if (tess_layout_parse(explain, &coord) != TESS_STATUS_SUCCESS) {
            fprintf(stderr, "tessera layout: --explain: %s\n", tess_last_error());
            rc = 1;
        } else {
            explain_coord = coord, explain_rows = rows;
            rc |= print_rendered(explain_render, x);
            tess_layout_free(coord);
        }
    }
    if (svg) {
        char *out;
        svg_rows = rows, svg_cols = cols;
        if ((out = render(svg_render, x))) {
            rc |= write_file(svg, out);
            free(out);
            if (!rc)
                printf("wrote %s\n", svg);
        } else {
            rc = 1;
        }
    }
    tess_layout_free(x);
    return rc;
}
