/* Thread-value layouts of the MMA instructions tessera's kernels use:
 * (thread, value) -> column-major index of the element in the operand tile.
 * They restate the fragment layouts of the PTX ISA ("Matrix fragments for
 * wgmma.mma_async", "for mma.m16n8k16" and "for mma.m16n8k32") and CuTe's
 * tcgen05.mma traits (SM100_MMA_F16BF16_SS, SM100_MMA_F16BF16_2x1SM_SS) in
 * CuTe's notation; tests/unit/test_layout_atoms.c checks them element by
 * element against the PTX formulas and CuTe DSL's printed atoms.
 *
 * Names, MxNxK then the accumulator type:
 *   wgmma_64x{N}x16_{f32|f16}   wgmma, 16-bit inputs, N = 8..256 in steps of 8
 *   wgmma_64x{N}x32_{f32|f16}   wgmma, 8-bit inputs
 *   mma_16x8x16_f32, mma_16x8x32_f32   sm80 mma.sync, 16-bit and 8-bit inputs
 *   umma_128x{N}x16_f32         tcgen05.mma.cta_group::1.kind::f16, A and B in
 *                               shared memory, N = 8..256 in steps of 8
 *   umma_2cta_256x{N}x16_f32    tcgen05.mma.cta_group::2.kind::f16 over a pair
 *                               of CTAs, N = 16..256 in steps of 16
 * The N ranges are the PTX ISA's ("Various combinations of .kind and shapes":
 * kind::f16, dense, M = 128 with cta_group::1, M = 256 with cta_group::2).
 * A tcgen05.mma is issued by one thread: the "thread" mode of its layouts
 * (and its ThrID) counts CTAs, 1, or 2 for the pair, each CTA holding
 * M/2 rows of A and C and N/2 rows of B (N x K). */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "layout/value.h"

/* wgmma N ranges over multiples of 8 up to 256: 32 widths, times {k16, k32}
 * times {f32, f16} accumulators; the two mma.sync atoms; the 32 one-CTA
 * tcgen05 widths (8..256 by 8) and the 16 two-CTA ones (16..256 by 16). */
#define WGMMA_WIDTHS 32
#define UMMA_WIDTHS 32
#define UMMA_2CTA_WIDTHS 16
#define ATOM_COUNT (WGMMA_WIDTHS * 4 + 2 + UMMA_WIDTHS + UMMA_2CTA_WIDTHS)

typedef enum atom_family { FAMILY_WGMMA, FAMILY_MMA_SYNC, FAMILY_UMMA } atom_family;

/* One named atom: its instruction shape and what its thread mode counts. */
typedef struct atom_info {
    char name[32];
    atom_family family;
    int m, n, k;
    int peers; /* tcgen05: the CTAs one instruction spans (size of ThrID); 1 otherwise */
} atom_info;

static atom_info atoms[ATOM_COUNT];
static int atoms_ready;

/* Appends one atom to the table; returns the next free slot. */
static int add_atom(int i, atom_family family, int m, int n, int k, int peers, const char *name) {
    atom_info *a = &atoms[i];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->family = family, a->m = m, a->n = n, a->k = k, a->peers = peers;
    return i + 1;
}

/* Fills the table of atoms once, in listing order. */
static void fill_atoms(void) {
    if (atoms_ready)
        return;
    int i = 0;
    char name[32];
    const int ks[2] = {16, 32};
    const char *accs[2] = {"f32", "f16"};
    for (int k = 0; k < 2; k++)
        for (int a = 0; a < 2; a++)
            for (int w = 1; w <= WGMMA_WIDTHS; w++) {
                snprintf(name, sizeof name, "wgmma_64x%dx%d_%s", 8 * w, ks[k], accs[a]);
                i = add_atom(i, FAMILY_WGMMA, 64, 8 * w, ks[k], 1, name);
            }
    i = add_atom(i, FAMILY_MMA_SYNC, 16, 8, 16, 1, "mma_16x8x16_f32");
    i = add_atom(i, FAMILY_MMA_SYNC, 16, 8, 32, 1, "mma_16x8x32_f32");
    for (int w = 1; w <= UMMA_WIDTHS; w++) {
        snprintf(name, sizeof name, "umma_128x%dx16_f32", 8 * w);
        i = add_atom(i, FAMILY_UMMA, 128, 8 * w, 16, 1, name);
    }
    for (int w = 1; w <= UMMA_2CTA_WIDTHS; w++) {
        snprintf(name, sizeof name, "umma_2cta_256x%dx16_f32", 16 * w);
        i = add_atom(i, FAMILY_UMMA, 256, 16 * w, 16, 2, name);
    }
    atoms_ready = 1; /* a benign race: every thread writes the same bytes */
}

/* The atom of that name, or NULL. */
static const atom_info *find_atom(const char *name) {
    fill_atoms();
    for (int i = 0; i < ATOM_COUNT; i++)
        if (strcmp(name, atoms[i].name) == 0)
            return &atoms[i];
    return NULL;
}

TESS_API int tess_layout_mma_atom_count(void) { return ATOM_COUNT; }

TESS_API const char *tess_layout_mma_atom_name(int i) {
    fill_atoms();
    return i >= 0 && i < ATOM_COUNT ? atoms[i].name : NULL;
}

/* The mma.sync atoms: a warp of 32 = (4 threads in a group, 8 groups); A, B
 * (N x K) and C. 16-bit inputs, k16: two to a register; 8-bit inputs (e4m3,
 * e5m2, s8), k32: four to a register. Indexed by k == 32. */
static const struct {
    const char *tv[3];
    int64_t rows[3], cols[3];
} mma_sync_atoms[] = {
    {{"((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", "((4,8),(2,2)):((32,1),(16,8))"},
     {16, 8, 16},
     {16, 16, 8}},
    {{"((4,8),(4,2,2)):((64,1),(16,8,256))", "((4,8),(4,2)):((32,1),(8,128))", "((4,8),(2,2)):((32,1),(16,8))"},
     {16, 8, 16},
     {32, 32, 8}},
};

/* The TV layout text and tile of one operand of an atom. */
static void atom_text(const atom_info *a, tess_mma_operand op, char *text, size_t cap, int64_t *rows, int64_t *cols) {
    const int n = a->n, k = a->k;
    if (a->family == FAMILY_MMA_SYNC) {
        const int s = k == 32;
        snprintf(text, cap, "%s", mma_sync_atoms[s].tv[op]);
        *rows = mma_sync_atoms[s].rows[op], *cols = mma_sync_atoms[s].cols[op];
        return;
    }
    if (a->family == FAMILY_UMMA) {
        /* (peer CTA, (row in the CTA's part, column)) -> row + rows * column:
         * each CTA holds rows/peers consecutive rows of the operand tile. The
         * CTA stride is rows/peers also for one CTA, as CuTe DSL prints it
         * (C++ CuTe writes 0 there: a mode of size 1, the same map). */
        const int64_t r = op == TESS_MMA_B ? n : a->m, c = op == TESS_MMA_C ? n : k, p = a->peers;
        snprintf(text, cap, "(%lld,(%lld,%lld)):(%lld,(1,%lld))", (long long)p, (long long)(r / p), (long long)c,
                 (long long)(r / p), (long long)r);
        *rows = r, *cols = c;
        return;
    }
    /* wgmma: a warpgroup of 128 = (4 lanes in a quad, 8 quads, 4 warps). */
    switch (op) {
    case TESS_MMA_A: /* registers; 64 x K, each thread 2 (k16) or 4 (k32) consecutive k per register */
        snprintf(text, cap, k == 16 ? "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"
                                    : "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))");
        *rows = 64, *cols = k;
        break;
    case TESS_MMA_B: /* shared memory, read whole by every thread: N x K */
        snprintf(text, cap, "(128,(%d,%d)):(0,(1,%d))", n, k, n);
        *rows = n, *cols = k;
        break;
    case TESS_MMA_C: /* accumulators: 64 x N, N/8 groups of 8 columns */
        snprintf(text, cap, "((4,8,4),(2,2,%d)):((128,1,16),(64,8,512))", n / 8);
        *rows = 64, *cols = n;
        break;
    }
}

/* The atom of that name, or NULL after setting the sentence that lists the names. */
static const atom_info *atom_or_fail(const char *name) {
    const atom_info *a = find_atom(name);
    if (!a)
        tess_fail(TESS_STATUS_INVALID_VALUE,
                  "unknown MMA atom '%s': use wgmma_64x{N}x16_f32 / _f16 or wgmma_64x{N}x32_f32 / _f16 "
                  "(N = 8..256, a multiple of 8), mma_16x8x16_f32, mma_16x8x32_f32, umma_128x{N}x16_f32 "
                  "(N = 8..256, a multiple of 8) or umma_2cta_256x{N}x16_f32 (N = 16..256, a multiple of 16); "
                  "`tessera layout --atoms` lists them",
                  name);
    return a;
}

TESS_API tess_status tess_layout_mma_atom(const char *name, tess_mma_operand operand, tess_layout **tv_layout,
                                          int64_t *rows, int64_t *cols) {
    if (!name || !tv_layout || !rows || !cols)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_mma_atom: arguments must not be NULL");
    if (operand != TESS_MMA_A && operand != TESS_MMA_B && operand != TESS_MMA_C)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_mma_atom: operand %d is not A (0), B (1) or C (2)",
                         (int)operand);
    const atom_info *a = atom_or_fail(name);
    if (!a)
        return TESS_STATUS_INVALID_VALUE;
    char text[96];
    atom_text(a, operand, text, sizeof text, rows, cols);
    return tess_layout_parse(text, tv_layout);
}

TESS_API tess_status tess_layout_mma_atom_thr_id(const char *name, tess_layout **thr_id) {
    if (!name || !thr_id)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_mma_atom_thr_id: arguments must not be NULL");
    const atom_info *a = atom_or_fail(name);
    if (!a)
        return TESS_STATUS_INVALID_VALUE;
    const char *text = a->family == FAMILY_WGMMA ? "128:1" : a->family == FAMILY_MMA_SYNC ? "32:1"
                       : a->peers == 1           ? "1:0"
                                                 : "2:1";
    return tess_layout_parse(text, thr_id);
}

TESS_API tess_status tess_layout_mma_atom_shape(const char *name, int64_t shape_mnk[3], int64_t cta_tile_mnk[3]) {
    if (!name)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_mma_atom_shape: the name must not be NULL");
    const atom_info *a = atom_or_fail(name);
    if (!a)
        return TESS_STATUS_INVALID_VALUE;
    if (shape_mnk)
        shape_mnk[0] = a->m, shape_mnk[1] = a->n, shape_mnk[2] = a->k;
    if (cta_tile_mnk) /* M / size(ThrID) where ThrID counts CTAs; the whole M where it counts threads */
        cta_tile_mnk[0] = a->m / a->peers, cta_tile_mnk[1] = a->n, cta_tile_mnk[2] = a->k;
    return TESS_STATUS_SUCCESS;
}
