/* The MMA atom table (src/layout/atoms.c): every wgmma and mma.sync atom
 * element by element against the PTX ISA's fragment formulas; the Blackwell
 * tcgen05 (umma) atoms against CuTe DSL's printed atoms (seed 003), against
 * the general formula for every N, and the split of the pair's tile between
 * its two CTAs; ThrID, shapes, per-CTA tiles and the listing of names. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "layout_util.h"

/* ---- the PTX ISA's fragment formulas, written out independently ---------- */

/* wgmma accumulator D (m64nNk*), and A from registers with 16-bit inputs: row m + 64 col. */
static int64_t ptx_wgmma_c(int64_t t, int64_t v) {
    int64_t warp = t / 32, lane = t % 32;
    int64_t m = 16 * warp + lane / 4 + 8 * ((v / 2) % 2), n = (lane % 4) * 2 + (v % 2) + 8 * (v / 4);
    return m + 64 * n;
}
/* wgmma A from registers, 8-bit inputs, k32: m + 64 k. */
static int64_t ptx_wgmma_a8(int64_t t, int64_t v) {
    int64_t warp = t / 32, lane = t % 32;
    int64_t m = 16 * warp + lane / 4 + 8 * ((v / 4) % 2), k = (lane % 4) * 4 + (v % 4) + 16 * (v / 8);
    return m + 64 * k;
}
/* wgmma B from shared memory: every thread reads the whole N x K tile. */
static int64_t ptx_wgmma_b(int64_t t, int64_t v) {
    (void)t;
    return v;
}
/* mma.m16n8k16: A m + 16 k, B (N x K) n + 8 k, C m + 16 n. */
static int64_t ptx_mma_a(int64_t t, int64_t v) {
    int64_t g = t / 4, q = t % 4;
    return (g + 8 * ((v / 2) % 2)) + 16 * (q * 2 + (v % 2) + 8 * (v / 4));
}
static int64_t ptx_mma_b(int64_t t, int64_t v) {
    int64_t g = t / 4, q = t % 4;
    return g + 8 * (q * 2 + (v % 2) + 8 * (v / 2));
}
static int64_t ptx_mma_c(int64_t t, int64_t v) {
    int64_t g = t / 4, q = t % 4;
    return (g + 8 * (v / 2)) + 16 * (q * 2 + (v % 2));
}
/* mma.m16n8k32, 8-bit inputs: A m + 16 k, B n + 8 k. */
static int64_t ptx_mma8_a(int64_t t, int64_t v) {
    int64_t g = t / 4, q = t % 4;
    return (g + 8 * ((v / 4) % 2)) + 16 * (q * 4 + (v % 4) + 16 * (v / 8));
}
static int64_t ptx_mma8_b(int64_t t, int64_t v) {
    int64_t g = t / 4, q = t % 4;
    return g + 8 * (q * 4 + (v % 4) + 16 * (v / 4));
}

/* ---- helpers ------------------------------------------------------------- */

/* An atom operand's TV layout flattened (for the test's own evaluator), its tile, and its text. */
typedef struct operand {
    lu_flat f;
    int64_t rows, cols, threads, values;
    char text[128];
} operand;

/* Reads one operand of an atom; 0 (after a failed check) if the library refuses it. */
static int read_operand(const char *name, tess_mma_operand op, operand *o) {
    tess_layout *tv = NULL, *mode0 = NULL;
    memset(o, 0, sizeof *o);
    CHECK_STATUS(tess_layout_mma_atom(name, op, &tv, &o->rows, &o->cols), TESS_STATUS_SUCCESS);
    if (!tv)
        return 0;
    int64_t size = 0;
    tess_layout_print(tv, o->text, sizeof o->text);
    int good = lu_flatten(tv, &o->f) && tess_layout_mode(tv, 0, &mode0) == TESS_STATUS_SUCCESS &&
               tess_layout_size(mode0, &o->threads) == TESS_STATUS_SUCCESS &&
               tess_layout_size(tv, &size) == TESS_STATUS_SUCCESS;
    CHECKF(good, "%s operand %d: %s is not a plain rank-2 layout", name, (int)op, o->text);
    o->values = good && o->threads ? size / o->threads : 0;
    tess_layout_free(mode0);
    tess_layout_free(tv);
    return good;
}

/* (thread, value) -> index, by the test's evaluator: colexicographic index t + threads * v. */
static int64_t at(const operand *o, int64_t t, int64_t v) { return lu_at(&o->f, t + o->threads * v); }

/* Checks an operand against a formula at every (thread, value), and that it
 * holds each element of its tile once (or, `broadcast`, once per thread). */
static void check_formula(const char *name, tess_mma_operand op, int64_t threads, int64_t values,
                          int64_t (*formula)(int64_t, int64_t), int broadcast) {
    operand o;
    if (!read_operand(name, op, &o))
        return;
    CHECKF(o.threads == threads && o.values == values, "%s operand %d: %lld threads x %lld values, want %lld x %lld",
           name, (int)op, (long long)o.threads, (long long)o.values, (long long)threads, (long long)values);
    if (o.threads != threads || o.values != values)
        return;
    const int64_t tile = o.rows * o.cols;
    int *seen = calloc((size_t)tile, sizeof *seen);
    int64_t wrong = 0, outside = 0, once = 0;
    for (int64_t t = 0; t < threads; t++)
        for (int64_t v = 0; v < values; v++) {
            const int64_t got = at(&o, t, v);
            wrong += got != formula(t, v);
            if (got < 0 || got >= tile)
                outside++;
            else
                seen[got]++;
        }
    for (int64_t i = 0; i < tile; i++)
        once += seen[i] == (broadcast ? threads : 1);
    CHECKF(wrong == 0 && outside == 0, "%s operand %d: %lld values differ from the PTX formula, %lld outside", name,
           (int)op, (long long)wrong, (long long)outside);
    CHECKF(once == tile, "%s operand %d: %lld of %lld elements held as often as they should be", name, (int)op,
           (long long)once, (long long)tile);
    free(seen);
}

/* The atom's ThrID printed, or "" (after a failed check). */
static void thr_id_text(const char *name, char *buf, size_t cap) {
    tess_layout *thr = NULL;
    buf[0] = 0;
    CHECK_STATUS(tess_layout_mma_atom_thr_id(name, &thr), TESS_STATUS_SUCCESS);
    if (thr)
        tess_layout_print(thr, buf, cap);
    tess_layout_free(thr);
}

/* ---- wgmma and mma.sync -------------------------------------------------- */

static void test_wgmma(void) {
    char name[64];
    const char *accs[2] = {"f32", "f16"};
    for (int k = 16; k <= 32; k += 16)
        for (int a = 0; a < 2; a++)
            for (int n = 8; n <= 256; n += 8) {
                snprintf(name, sizeof name, "wgmma_64x%dx%d_%s", n, k, accs[a]);
                check_formula(name, TESS_MMA_C, 128, n / 2, ptx_wgmma_c, 0);
                check_formula(name, TESS_MMA_B, 128, n * k, ptx_wgmma_b, 1);
                /* A, 16-bit: the accumulator's pattern with k in place of n. */
                check_formula(name, TESS_MMA_A, 128, k / 2, k == 16 ? ptx_wgmma_c : ptx_wgmma_a8, 0);
            }
}

static void test_mma_sync(void) {
    check_formula("mma_16x8x16_f32", TESS_MMA_A, 32, 8, ptx_mma_a, 0);
    check_formula("mma_16x8x16_f32", TESS_MMA_B, 32, 4, ptx_mma_b, 0);
    check_formula("mma_16x8x16_f32", TESS_MMA_C, 32, 4, ptx_mma_c, 0);
    check_formula("mma_16x8x32_f32", TESS_MMA_A, 32, 16, ptx_mma8_a, 0);
    check_formula("mma_16x8x32_f32", TESS_MMA_B, 32, 8, ptx_mma8_b, 0);
    check_formula("mma_16x8x32_f32", TESS_MMA_C, 32, 4, ptx_mma_c, 0);
}

/* ---- tcgen05 (umma) ------------------------------------------------------ */

/* Seed 003: CuTe DSL's printed MMA atoms, 1 CTA 128x256x16 and 2 CTAs 256x256x16. */
static void test_umma_seed(void) {
    const struct {
        const char *name, *thr, *tv[3];
    } seed[] = {
        {"umma_128x256x16_f32",
         "1:0",
         {"(1,(128,16)):(128,(1,128))", "(1,(256,16)):(256,(1,256))", "(1,(128,256)):(128,(1,128))"}},
        {"umma_2cta_256x256x16_f32",
         "2:1",
         {"(2,(128,16)):(128,(1,256))", "(2,(128,16)):(128,(1,256))", "(2,(128,256)):(128,(1,256))"}},
    };
    for (int s = 0; s < 2; s++) {
        char thr[64];
        thr_id_text(seed[s].name, thr, sizeof thr);
        CHECKF(strcmp(thr, seed[s].thr) == 0, "%s ThrID %s, want %s", seed[s].name, thr, seed[s].thr);
        for (int op = 0; op < 3; op++) {
            operand o;
            if (read_operand(seed[s].name, (tess_mma_operand)op, &o))
                CHECKF(strcmp(o.text, seed[s].tv[op]) == 0, "%s operand %d: %s, want %s", seed[s].name, op, o.text,
                       seed[s].tv[op]);
        }
    }
}

/* One umma atom: every operand against (cta, (r, c)) -> (cta * R/P + r) + R * c
 * (R the operand's rows, P the CTAs), a bijection onto the tile, and each CTA
 * holding its own consecutive rows; the library's slice agrees. */
static void check_umma(int m, int n, int peers) {
    char name[64];
    if (peers == 1)
        snprintf(name, sizeof name, "umma_128x%dx16_f32", n);
    else
        snprintf(name, sizeof name, "umma_2cta_256x%dx16_f32", n);
    const int64_t want_rows[3] = {m, n, m}, want_cols[3] = {16, 16, n};
    for (int op = 0; op < 3; op++) {
        operand o;
        if (!read_operand(name, (tess_mma_operand)op, &o))
            continue;
        const int64_t rows = want_rows[op], cols = want_cols[op], part = rows / peers;
        CHECKF(o.rows == rows && o.cols == cols, "%s operand %d: tile %lld x %lld, want %lld x %lld", name, op,
               (long long)o.rows, (long long)o.cols, (long long)rows, (long long)cols);
        CHECKF(o.threads == peers && o.values == part * cols, "%s operand %d: %lld x %lld, want %d x %lld", name, op,
               (long long)o.threads, (long long)o.values, peers, (long long)(part * cols));
        if (o.rows != rows || o.cols != cols || o.threads != peers || o.values != part * cols)
            continue;
        char *seen = calloc((size_t)(rows * cols), 1);
        int64_t wrong = 0, outside = 0, once = 0, foreign = 0;
        for (int64_t p = 0; p < peers; p++)
            for (int64_t v = 0; v < part * cols; v++) {
                const int64_t r = v % part, c = v / part, got = at(&o, p, v);
                wrong += got != (p * part + r) + rows * c;
                if (got < 0 || got >= rows * cols) {
                    outside++;
                    continue;
                }
                seen[got]++;
                foreign += got % rows / part != p; /* CTA p holds rows p*part .. p*part + part-1 */
            }
        for (int64_t i = 0; i < rows * cols; i++)
            once += seen[i] == 1;
        CHECKF(wrong == 0 && outside == 0, "%s operand %d: %lld values off the formula, %lld outside", name, op,
               (long long)wrong, (long long)outside);
        CHECKF(once == rows * cols, "%s operand %d: %lld of %lld elements held exactly once", name, op,
               (long long)once, (long long)(rows * cols));
        CHECKF(foreign == 0, "%s operand %d: %lld values outside their CTA's rows", name, op, (long long)foreign);
        free(seen);
        /* The library's slice at cta 1 (rank 1, its mode the value mode, as in CuTe):
         * the same value layout, offset by the first CTA's rows. */
        if (peers == 2) {
            tess_layout *tv = NULL, *crd = lu_value("(1,_)"), *sub = NULL;
            int64_t offset = -1, r0 = 0, r1 = 0;
            tess_layout_mma_atom(name, (tess_mma_operand)op, &tv, &r0, &r1);
            CHECK_STATUS(tess_layout_slice(tv, crd, &sub, &offset), TESS_STATUS_SUCCESS);
            char text[128] = "", want[128];
            if (sub)
                tess_layout_print(sub, text, sizeof text);
            snprintf(want, sizeof want, "((%lld,%lld)):((1,%lld))", (long long)part, (long long)cols, (long long)rows);
            CHECKF(offset == part && strcmp(text, want) == 0, "%s operand %d: slice (1,_) = %s + %lld, want %s + %lld",
                   name, op, text, (long long)offset, want, (long long)part);
            tess_layout_free(sub);
            tess_layout_free(crd);
            tess_layout_free(tv);
        }
    }
    /* ThrID, shape and the per-CTA tile (CuTe DSL's cta_tile_shape_mnk: M / size(ThrID)). */
    char thr[64];
    thr_id_text(name, thr, sizeof thr);
    CHECKF(strcmp(thr, peers == 1 ? "1:0" : "2:1") == 0, "%s ThrID %s", name, thr);
    int64_t mnk[3] = {0}, cta[3] = {0};
    CHECK_STATUS(tess_layout_mma_atom_shape(name, mnk, cta), TESS_STATUS_SUCCESS);
    CHECKF(mnk[0] == m && mnk[1] == n && mnk[2] == 16 && cta[0] == m / peers && cta[1] == n && cta[2] == 16,
           "%s: shape %lldx%lldx%lld, per CTA %lldx%lldx%lld", name, (long long)mnk[0], (long long)mnk[1],
           (long long)mnk[2], (long long)cta[0], (long long)cta[1], (long long)cta[2]);
}

/* 2 CTAs, the accumulator: cta 0 holds rows 0..127 of the 256 x N tile, cta 1 rows 128..255, all N columns each. */
static void test_umma_pair_rows(void) {
    for (int n = 16; n <= 256; n += 16) {
        char name[64];
        snprintf(name, sizeof name, "umma_2cta_256x%dx16_f32", n);
        operand o;
        if (!read_operand(name, TESS_MMA_C, &o) || o.threads != 2)
            continue;
        int64_t lo[2] = {1 << 20, 1 << 20}, hi[2] = {-1, -1}, cols[2] = {0, 0};
        for (int p = 0; p < 2; p++)
            for (int64_t v = 0; v < o.values; v++) {
                const int64_t idx = at(&o, p, v), row = idx % 256, col = idx / 256;
                lo[p] = row < lo[p] ? row : lo[p];
                hi[p] = row > hi[p] ? row : hi[p];
                cols[p] = col + 1 > cols[p] ? col + 1 : cols[p];
            }
        CHECKF(lo[0] == 0 && hi[0] == 127 && lo[1] == 128 && hi[1] == 255 && cols[0] == n && cols[1] == n,
               "%s C: cta 0 rows %lld..%lld, cta 1 rows %lld..%lld, columns %lld and %lld", name, (long long)lo[0],
               (long long)hi[0], (long long)lo[1], (long long)hi[1], (long long)cols[0], (long long)cols[1]);
    }
}

static void test_umma(void) {
    test_umma_seed();
    for (int n = 8; n <= 256; n += 8)
        check_umma(128, n, 1);
    for (int n = 16; n <= 256; n += 16)
        check_umma(256, n, 2);
    test_umma_pair_rows();
}

/* ---- every atom: names, ThrID, shape and tiles agree --------------------- */

static void test_listing(void) {
    const int count = tess_layout_mma_atom_count();
    CHECK(count == 128 + 2 + 32 + 16);
    CHECK(strcmp(tess_layout_mma_atom_name(0), "wgmma_64x8x16_f32") == 0);
    CHECK(strcmp(tess_layout_mma_atom_name(129), "mma_16x8x32_f32") == 0);
    CHECK(strcmp(tess_layout_mma_atom_name(130), "umma_128x8x16_f32") == 0);
    CHECK(strcmp(tess_layout_mma_atom_name(count - 1), "umma_2cta_256x256x16_f32") == 0);
    CHECK(tess_layout_mma_atom_name(count) == NULL && tess_layout_mma_atom_name(-1) == NULL);
    int umma = 0, umma2 = 0;
    for (int i = 0; i < count; i++) {
        const char *name = tess_layout_mma_atom_name(i);
        for (int j = 0; j < i; j++)
            CHECKF(strcmp(name, tess_layout_mma_atom_name(j)) != 0, "%s listed twice", name);
        umma += strncmp(name, "umma_128x", 9) == 0;
        umma2 += strncmp(name, "umma_2cta_256x", 14) == 0;
        /* A is M x K, B is N x K, C is M x N; the first mode of every TV layout is ThrID's size. */
        int64_t mnk[3] = {0}, cta[3] = {0}, thr_size = 0;
        CHECK_STATUS(tess_layout_mma_atom_shape(name, mnk, cta), TESS_STATUS_SUCCESS);
        tess_layout *thr = NULL;
        CHECK_STATUS(tess_layout_mma_atom_thr_id(name, &thr), TESS_STATUS_SUCCESS);
        tess_layout_size(thr, &thr_size);
        tess_layout_free(thr);
        const int64_t rows[3] = {mnk[0], mnk[1], mnk[0]}, cols[3] = {mnk[2], mnk[2], mnk[1]};
        for (int op = 0; op < 3; op++) {
            operand o;
            if (read_operand(name, (tess_mma_operand)op, &o))
                CHECKF(o.rows == rows[op] && o.cols == cols[op] && o.threads == thr_size,
                       "%s operand %d: %lld x %lld tile over %lld threads; shape %lldx%lldx%lld, ThrID size %lld",
                       name, op, (long long)o.rows, (long long)o.cols, (long long)o.threads, (long long)mnk[0],
                       (long long)mnk[1], (long long)mnk[2], (long long)thr_size);
        }
        /* One CTA computes the whole atom unless ThrID counts the two CTAs of a pair. */
        const int pair = strncmp(name, "umma_2cta", 9) == 0;
        CHECKF(cta[0] == (pair ? mnk[0] / 2 : mnk[0]) && cta[1] == mnk[1] && cta[2] == mnk[2],
               "%s: per-CTA tile %lldx%lldx%lld", name, (long long)cta[0], (long long)cta[1], (long long)cta[2]);
    }
    CHECK(umma == 32 && umma2 == 16);
    char thr[64];
    thr_id_text("wgmma_64x64x16_f32", thr, sizeof thr);
    CHECK(strcmp(thr, "128:1") == 0);
    thr_id_text("mma_16x8x16_f32", thr, sizeof thr);
    CHECK(strcmp(thr, "32:1") == 0);
    int64_t mnk[3] = {0};
    CHECK_STATUS(tess_layout_mma_atom_shape("mma_16x8x32_f32", mnk, NULL), TESS_STATUS_SUCCESS);
    CHECK(mnk[0] == 16 && mnk[1] == 8 && mnk[2] == 32);
    CHECK_STATUS(tess_layout_mma_atom_shape("umma_2cta_256x128x16_f32", NULL, mnk), TESS_STATUS_SUCCESS);
    CHECK(mnk[0] == 128 && mnk[1] == 128 && mnk[2] == 16);
}

/* Shapes the PTX ISA does not offer, and misspellings, are refused with a sentence. */
static void test_refusals(void) {
    const char *bad[] = {"umma_128x12x16_f32",        "umma_128x264x16_f32",      "umma_128x0x16_f32",
                         "umma_2cta_256x8x16_f32",    "umma_2cta_256x24x16_f32",  "umma_2cta_256x272x16_f32",
                         "umma_128x256x32_f32",       "umma_2cta_128x256x16_f32", "umma_64x64x16_f32",
                         "umma_128x064x16_f32",       "umma_128x 64x16_f32",      "umma_128x64x16_f32x",
                         "umma_128x64x16_f64",        "wgmma_64x60x16_f32",       ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tess_layout *x = NULL, *thr = NULL;
        int64_t r, c, mnk[3];
        CHECK_STATUS(tess_layout_mma_atom(bad[i], TESS_MMA_C, &x, &r, &c), TESS_STATUS_INVALID_VALUE);
        CHECKF(strstr(tess_last_error(), "unknown MMA atom") && strstr(tess_last_error(), "multiple of 16"),
               "'%s': %s", bad[i], tess_last_error());
        CHECK_STATUS(tess_layout_mma_atom_thr_id(bad[i], &thr), TESS_STATUS_INVALID_VALUE);
        CHECK_STATUS(tess_layout_mma_atom_shape(bad[i], mnk, NULL), TESS_STATUS_INVALID_VALUE);
        tess_layout_free(x);
        tess_layout_free(thr);
    }
    tess_layout *x = NULL;
    int64_t r, c;
    CHECK_STATUS(tess_layout_mma_atom("umma_128x64x16_f32", (tess_mma_operand)3, &x, &r, &c),
                 TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_layout_mma_atom_thr_id(NULL, &x), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_layout_mma_atom_thr_id("umma_128x64x16_f32", NULL), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_layout_mma_atom_shape(NULL, NULL, NULL), TESS_STATUS_INVALID_VALUE);
}

int main(void) {
    test_wgmma();
    test_mma_sync();
    test_umma();
    test_listing();
    test_refusals();
    return check_finish("unit_layout_atoms");
}
