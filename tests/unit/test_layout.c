/* The layout algebra's C API: worked examples from CuTe's documentation and
 * seed 004, the MMA atoms against the PTX ISA's fragment formulas, the
 * walk of seed 002, pictures, and refusals of bad input with sentences. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "layout_util.h"

/* Checks that `expr` evaluates to `want` (CuTe notation). */
static void expect(const char *expr, const char *want) {
    char *got = lu_eval(expr);
    CHECKF(got && strcmp(got, want) == 0, "%s = %s, want %s", expr, got ? got : tess_last_error(), want);
    free(got);
}

/* Checks that `expr` is refused with a sentence containing `words`. */
static void refuse(const char *expr, const char *words) {
    char *got = lu_eval(expr);
    CHECKF(!got && strstr(tess_last_error(), words), "%s gave %s; sentence '%s' should mention '%s'", expr,
           got ? got : "(refused)", tess_last_error(), words);
    free(got);
}

static void test_worked_examples(void) {
    /* CuTe's 02_layout_algebra and seed 004. */
    expect("coalesce((2,(1,6)):(1,(6,2)))", "12:1");
    expect("coalesce((2,4):(1,2))", "8:1");
    expect("composition((6,2):(8,2), (4,3):(3,1))", "((2,2),3):((24,2),8)");
    expect("composition(20:2, (5,4):(4,1))", "(5,4):(8,2)");
    expect("composition((8):(1), (4):(2))", "(4):(2)");
    expect("complement(4:1, 24)", "6:4");
    expect("complement(6:4, 24)", "4:1");
    expect("complement((4):(4), 16)", "4:1");
    expect("complement((2,2):(1,6), 24)", "(3,2):(2,12)");
    expect("logical_divide((24):(1), (4):(1))", "((4),6):((1),4)");
    expect("logical_divide((4,2,3):(2,1,8), 4:2)", "((2,2),(2,3)):((4,1),(2,8))");
    expect("zipped_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)", "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
    expect("logical_product((2,2):(4,1), 6:1)", "((2,2),(2,3)):((4,1),(2,8))");
    expect("blocked_product((2,2):(4,1), 6:1)", "((2,(2,3)),(2,1)):((4,(2,8)),(1,0))");
    expect("right_inverse((2,2,2):(4,2,1))", "(2,2,2):(4,2,1)");
    expect("left_inverse(4:2)", "(2,4):(0,1)");
    expect("shape_div((3,4), 6)", "(1,2)");
    expect("prefix_product((2,(3,4)))", "(1,(2,6))");
    expect("idx2crd(17, (2,(3,4)))", "(1,(2,2))");
    expect("crd2idx((1,(2,2)), (2,(3,4)))", "17");
    expect("size(((4,8,4),(2,2,8)):((128,1,16),(64,8,512)))", "4096");
    expect("cosize((4,8):(1,4))", "32");
    expect("max_common_vector((4,8):(1,4), (4,8):(1,4))", "32");
    expect("max_common_vector((4,8):(8,1), (4,8):(1,4))", "1");
    expect("eval(Sw<3,4,3> o 0 o (8,64):(64,1), 2)", "144"); /* (2,0) -> 128, bit 7 flips bit 4 */
    expect("slice((4,8):(1,4), (_,2))", "(4):(1)");
    expect("slice_offset((4,8):(1,4), (_,2))", "8");
    /* pycute's notation and CuTe's static integers are read too. */
    expect("(4, (2, 2)):(1, (4, 8))", "(4,(2,2)):(1,(4,8))");
    expect("(_4,_8):(_1,_4)", "(4,8):(1,4)");
}

static void test_identity_layouts(void) {
    expect("make_identity_layout((4,8))", "(4,8):(1@0,1@1)");
    expect("eval(make_identity_layout((4,8)), (3,5))", "(3,5)");
    /* Partitioning the identity by the accumulator TV layout gives each (thread, value) its (m, n). */
    const char *part = "composition(make_identity_layout((64,64)), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512)))";
    char expr[512];
    snprintf(expr, sizeof expr, "eval(%s, (37,5))", part);
    /* Thread 37 = warp 1, lane 5; value 5: row 16 + 5/4 + 8*((5/2)%2) = 17, col (5%4)*2 + 1 + 8*(5/4) = 11. */
    expect(expr, "(17,11)");
}

/* The PTX ISA's fragment formulas, written out independently of the TV layouts. */
static int64_t ptx_wgmma_c(int64_t t, int64_t v) { /* accumulator D of wgmma m64nNk*: (m, n) packed as m + 64 n */
    int64_t warp = t / 32, lane = t % 32;
    int64_t m = 16 * warp + lane / 4 + 8 * ((v / 2) % 2), n = (lane % 4) * 2 + (v % 2) + 8 * (v / 4);
    return m + 64 * n;
}
static int64_t ptx_wgmma_a8(int64_t t, int64_t v) { /* A from registers, 8-bit, k32: m + 64 k */
    int64_t warp = t / 32, lane = t % 32;
    int64_t m = 16 * warp + lane / 4 + 8 * ((v / 4) % 2), k = (lane % 4) * 4 + (v % 4) + 16 * (v / 8);
    return m + 64 * k;
}
static int64_t ptx_mma_a(int64_t t, int64_t v) { /* mma.m16n8k16 A: m + 16 k */
    int64_t g = t / 4, q = t % 4;
    return (g + 8 * ((v / 2) % 2)) + 16 * (q * 2 + (v % 2) + 8 * (v / 4));
}
static int64_t ptx_mma_b(int64_t t, int64_t v) { /* B (N x K): n + 8 k */
    int64_t g = t / 4, q = t % 4;
    return g + 8 * (q * 2 + (v % 2) + 8 * (v / 2));
}
static int64_t ptx_mma8_a(int64_t t, int64_t v) { /* mma.m16n8k32, 8-bit A: m + 16 k */
    int64_t g = t / 4, q = t % 4;
    return (g + 8 * ((v / 4) % 2)) + 16 * (q * 4 + (v % 4) + 16 * (v / 8));
}
static int64_t ptx_mma8_b(int64_t t, int64_t v) { /* 8-bit B (N x K): n + 8 k */
    int64_t g = t / 4, q = t % 4;
    return g + 8 * (q * 4 + (v % 4) + 16 * (v / 4));
}
static int64_t ptx_mma_c(int64_t t, int64_t v) { /* C: m + 16 n */
    int64_t g = t / 4, q = t % 4;
    return (g + 8 * (v / 2)) + 16 * (q * 2 + (v % 2));
}

/* Checks an atom operand against a formula at every (thread, value), and that it covers its tile once. */
static void check_atom(const char *name, tess_mma_operand op, int64_t threads, int64_t values,
                       int64_t (*formula)(int64_t, int64_t)) {
    tess_layout *tv = NULL;
    int64_t rows = 0, cols = 0;
    CHECK_STATUS(tess_layout_mma_atom(name, op, &tv, &rows, &cols), TESS_STATUS_SUCCESS);
    if (!tv)
        return;
    int64_t size = 0;
    tess_layout_size(tv, &size);
    CHECKF(size == threads * values, "%s operand %d: size %lld", name, (int)op, (long long)size);
    char *seen = calloc((size_t)(rows * cols), 1);
    int wrong = 0, outside = 0;
    for (int64_t t = 0; t < threads; t++)
        for (int64_t v = 0; v < values; v++) {
            char crd[64];
            snprintf(crd, sizeof crd, "(%lld,%lld)", (long long)t, (long long)v);
            tess_layout *c = lu_value(crd);
            int64_t got = -1;
            tess_layout_eval_coord(tv, c, &got);
            tess_layout_free(c);
            wrong += got != formula(t, v);
            if (got < 0 || got >= rows * cols)
                outside++;
            else
                seen[got]++;
        }
    int64_t once = 0;
    for (int64_t i = 0; i < rows * cols; i++)
        once += seen[i] == 1;
    CHECKF(wrong == 0 && outside == 0, "%s operand %d: %d values differ from the PTX formula", name, (int)op, wrong);
    CHECKF(once == rows * cols, "%s operand %d: %lld of %lld elements held exactly once", name, (int)op,
           (long long)once, (long long)(rows * cols));
    free(seen);
    tess_layout_free(tv);
}

static int64_t ptx_wgmma_b_whole(int64_t t, int64_t v) { /* every thread sees the whole N x K tile */
    (void)t;
    return v;
}

static void test_atoms(void) {
    char name[64];
    for (int n = 8; n <= 256; n += 8) {
        snprintf(name, sizeof name, "wgmma_64x%dx16_f32", n);
        check_atom(name, TESS_MMA_C, 128, n / 2, ptx_wgmma_c);
        if (n % 64 == 0) {
            tess_layout *b = NULL;
            int64_t rows, cols, size;
            CHECK_STATUS(tess_layout_mma_atom(name, TESS_MMA_B, &b, &rows, &cols), TESS_STATUS_SUCCESS);
            CHECK(rows == n && cols == 16);
            tess_layout_size(b, &size);
            CHECK(size == 128 * n * 16);
            int bad = 0;
            for (int64_t v = 0; v < n * 16; v += 7) {
                char crd[64];
                snprintf(crd, sizeof crd, "(%d,%lld)", (int)(v % 128), (long long)v);
                tess_layout *c = lu_value(crd);
                int64_t got = -1;
                tess_layout_eval_coord(b, c, &got);
                bad += got != ptx_wgmma_b_whole(v % 128, v);
                tess_layout_free(c);
            }
            CHECKF(bad == 0, "%s B: %d values wrong", name, bad);
            tess_layout_free(b);
        }
    }
    /* A from registers, 16-bit, k16: the PTX ISA gives it the accumulator's
     * pattern with k in place of n (m + 64 k). */
    check_atom("wgmma_64x64x16_f16", TESS_MMA_A, 128, 8, ptx_wgmma_c);
    check_atom("wgmma_64x128x32_f32", TESS_MMA_A, 128, 16, ptx_wgmma_a8);
    check_atom("wgmma_64x128x32_f32", TESS_MMA_C, 128, 64, ptx_wgmma_c);
    check_atom("mma_16x8x16_f32", TESS_MMA_A, 32, 8, ptx_mma_a);
    check_atom("mma_16x8x16_f32", TESS_MMA_B, 32, 4, ptx_mma_b);
    check_atom("mma_16x8x16_f32", TESS_MMA_C, 32, 4, ptx_mma_c);
    check_atom("mma_16x8x32_f32", TESS_MMA_A, 32, 16, ptx_mma8_a);
    check_atom("mma_16x8x32_f32", TESS_MMA_B, 32, 8, ptx_mma8_b);
    check_atom("mma_16x8x32_f32", TESS_MMA_C, 32, 4, ptx_mma_c);
    /* 128 wgmma and 2 mma.sync atoms, then the tcgen05 (umma) atoms: tests/unit/test_layout_atoms.c */
    CHECK(tess_layout_mma_atom_count() == 178);
    CHECK(strcmp(tess_layout_mma_atom_name(0), "wgmma_64x8x16_f32") == 0);
    CHECK(strcmp(tess_layout_mma_atom_name(129), "mma_16x8x32_f32") == 0);
    CHECK(tess_layout_mma_atom_name(178) == NULL);
    tess_layout *x = NULL;
    int64_t r, c;
    CHECK_STATUS(tess_layout_mma_atom("wgmma_64x60x16_f32", TESS_MMA_C, &x, &r, &c), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "multiple of 8") != NULL);
}

/* Seed 002's worked walk: (T, V) -> natural coordinate -> offset -> (m, n). */
static void test_explain(void) {
    tess_layout *tv = lu_value("((4,8,4),(2,2,8)):((128,1,16),(64,8,512))");
    const char *cases[][3] = {{"(1,0)", "offset      128", "(0,2)"},  {"(4,0)", "offset      1", "(1,0)"},
                              {"(32,0)", "offset      16", "(16,0)"}, {"(0,1)", "offset      64", "(0,1)"},
                              {"(0,2)", "offset      8", "(8,0)"},   {"(0,4)", "offset      512", "(0,8)"}};
    for (int i = 0; i < 6; i++) {
        tess_layout *crd = lu_value(cases[i][0]);
        char buf[1024];
        size_t n = 0;
        CHECK_STATUS(tess_layout_explain(tv, crd, 64, buf, sizeof buf, &n), TESS_STATUS_SUCCESS);
        CHECKF(strstr(buf, cases[i][1]) && strstr(buf, cases[i][2]), "explain %s:\n%s", cases[i][0], buf);
        tess_layout_free(crd);
    }
    tess_layout *crd = lu_value("(1,0)");
    char buf[1024];
    size_t n = 0;
    tess_layout_explain(tv, crd, 64, buf, sizeof buf, &n);
    CHECK(strstr(buf, "((1,0,0),(0,0,0))") != NULL);
    tess_layout_free(crd);
    tess_layout_free(tv);
}

static void test_pictures(void) {
    tess_layout *x = lu_value("(4,2):(1,4)");
    char buf[4096];
    size_t n = 0;
    CHECK_STATUS(tess_layout_render_table(x, buf, sizeof buf, &n), TESS_STATUS_SUCCESS);
    const char *want = "(4,2):(1,4)\n      0   1 \n    +---+---+\n 0  | 0 | 4 |\n    +---+---+\n 1  | 1 | 5 |\n"
                       "    +---+---+\n 2  | 2 | 6 |\n    +---+---+\n 3  | 3 | 7 |\n    +---+---+\n";
    CHECKF(strcmp(buf, want) == 0, "table:\n%s", buf);
    CHECK(n == strlen(want));
    /* A small buffer is truncated and NUL-terminated; the length says how much is needed. */
    char small[8];
    CHECK_STATUS(tess_layout_render_table(x, small, sizeof small, &n), TESS_STATUS_SUCCESS);
    CHECK(strlen(small) == 7 && n == strlen(want));
    tess_layout_free(x);

    tess_layout *tv = NULL;
    int64_t rows, cols;
    tess_layout_mma_atom("wgmma_64x8x16_f32", TESS_MMA_C, &tv, &rows, &cols);
    size_t need = 0;
    CHECK_STATUS(tess_layout_render_svg(tv, rows, cols, NULL, 0, &need), TESS_STATUS_SUCCESS);
    char *svg = malloc(need + 1);
    tess_layout_render_svg(tv, rows, cols, svg, need + 1, &need);
    CHECK(strncmp(svg, "<svg", 4) == 0 && strstr(svg, ">T127<") && strstr(svg, ">V3<") && strstr(svg, "</svg>"));
    free(svg);
    tess_layout_free(tv);
}

static void test_refusals(void) {
    refuse("composition((8,8):(8,1), 6:3)", "not admissible");
    refuse("complement((2,2):(1,1), 16)", "not injective");
    refuse("complement(2,(0,6))", "sizes must be >= 1"); /* found by fuzz_layout_expr: was a division by zero */
    refuse("complement(2, 0)", "sizes must be >= 1");
    refuse("complement(2, -4)", "sizes must be >= 1");
    refuse("complement(99:999010000000000009, 9)", "overflows"); /* fuzz_layout_expr: was a division by zero */
    refuse("complement(2, ((1099511627776,1099511627776),2))", "overflows"); /* so was this */
    refuse("(4,8):(1,4", "cannot read");
    refuse("(4,8):(1,(4,2))", "congruent");
    refuse("(0,8):(1,4)", "must be >= 1");
    refuse("(4,8):(1,4) junk", "unexpected text");
    refuse("shape_div((2,3,4), 4)", "neither divides");
    refuse("size((4611686018427387904,4))", "overflows");
    refuse("frobnicate(4)", "unknown function");
    refuse("composition(4:1)", "takes 2 to 2 arguments");
    refuse("Sw<3,4,2>", "|shift| >= bits");
    refuse("logical_divide((4,8):(1,4), <2:1,2:1,2:1>)", "tiler has 3 modes");
    refuse("left_inverse(make_identity_layout((4,8)))", "integer strides");
    /* Deep nesting is refused, not recursed into. */
    char deep[200];
    memset(deep, '(', 100);
    strcpy(deep + 100, "1");
    refuse(deep, "deeper than 32");
    tess_layout *x = NULL;
    CHECK_STATUS(tess_layout_parse(NULL, &x), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_layout_parse("4", NULL), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_layout_composition(NULL, NULL, &x), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "NULL") != NULL);
    int64_t v;
    CHECK_STATUS(tess_layout_size(NULL, &v), TESS_STATUS_INVALID_VALUE);
    tess_layout_free(NULL);
    CHECK(tess_layout_print(NULL, NULL, 0) == 0);
}

static void test_values(void) {
    tess_layout *a = lu_value("(4,8):(1,4)"), *b = NULL, *s = lu_value("(4,8)"), *m = NULL;
    CHECK(tess_layout_kind_of(a) == TESS_LAYOUT_PLAIN && tess_layout_kind_of(s) == TESS_LAYOUT_TUPLE);
    CHECK_STATUS(tess_layout_make(s, NULL, &m), TESS_STATUS_SUCCESS);
    CHECK(tess_layout_equal(a, m));
    CHECK_STATUS(tess_layout_copy(a, &b), TESS_STATUS_SUCCESS);
    CHECK(tess_layout_equal(a, b) && !tess_layout_equal(a, s));
    int r = 0, d = 0;
    CHECK_STATUS(tess_layout_rank(a, &r), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_layout_depth(a, &d), TESS_STATUS_SUCCESS);
    CHECK(r == 2 && d == 1);
    int64_t v = 0;
    CHECK_STATUS(tess_layout_eval(a, 9, &v), TESS_STATUS_SUCCESS);
    CHECK(v == 9);
    tess_layout *mode = NULL;
    CHECK_STATUS(tess_layout_mode(a, 1, &mode), TESS_STATUS_SUCCESS);
    char text[64];
    tess_layout_print(mode, text, sizeof text);
    CHECK(strcmp(text, "8:4") == 0);
    tess_layout *modes[2] = {mode, mode}, *cat = NULL, *tiler = NULL;
    CHECK_STATUS(tess_layout_concat((const tess_layout *const *)modes, 2, &cat), TESS_STATUS_SUCCESS);
    tess_layout_print(cat, text, sizeof text);
    CHECK(strcmp(text, "(8,8):(4,4)") == 0);
    const tess_layout *tm[2] = {mode, NULL};
    CHECK_STATUS(tess_layout_make_tiler(tm, 2, &tiler), TESS_STATUS_SUCCESS);
    tess_layout_print(tiler, text, sizeof text);
    CHECK(strcmp(text, "<8:4,_>") == 0);
    tess_layout *sw = NULL, *swz = NULL;
    CHECK_STATUS(tess_layout_make_swizzle(3, 4, 3, &sw), TESS_STATUS_SUCCESS);
    tess_layout *base = lu_value("(8,64):(64,1)");
    CHECK_STATUS(tess_layout_make_swizzled(sw, 0, base, &swz), TESS_STATUS_SUCCESS);
    tess_layout_print(swz, text, sizeof text);
    CHECK(strcmp(text, "Sw<3,4,3> o 0 o (8,64):(64,1)") == 0);
    CHECK(tess_layout_congruent(a, s) && !tess_layout_congruent(a, mode));
    tess_layout *all[] = {a, b, s, m, mode, cat, tiler, sw, swz, base};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tess_layout_free(all[i]);
}

int main(void) {
    test_worked_examples();
    test_identity_layouts();
    test_atoms();
    test_explain();
    test_pictures();
    test_refusals();
    test_values();
    return check_finish("unit_layout");
}
