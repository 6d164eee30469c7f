/* Thread-value layouts of the MMA instructions tessera's kernels use:
 * (thread, value) -> column-major index of the element in the operand tile.
 * They restate the fragment layouts of the PTX ISA ("Matrix fragments for
 * wgmma.mma_async", "for mma.m16n8k16" and "for mma.m16n8k32") in CuTe's notation, as CuTe's
 * MMA traits do; tests/unit/test_layout_atoms.c checks them element by
 * element against the PTX formulas. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "layout/value.h"

/* wgmma N ranges over multiples of 8 up to 256: 32 widths, times {k16, k32}
 * times {f32, f16} accumulators; plus the two mma.sync atoms (16-bit inputs,
 * k16; 8-bit inputs, k32). */
#define WGMMA_WIDTHS 32
#define ATOM_COUNT (WGMMA_WIDTHS * 4 + 2)

static char atom_names[ATOM_COUNT][32];
static int atom_names_ready;

static void fill_names(void) {
    if (atom_names_ready)
        return;
    int i = 0;
    const int ks[2] = {16, 32};
    const char *accs[2] = {"f32", "f16"};
    for (int k = 0; k < 2; k++)
        for (int a = 0; a < 2; a++)
            for (int w = 1; w <= WGMMA_WIDTHS; w++)
                snprintf(atom_names[i++], sizeof atom_names[0], "wgmma_64x%dx%d_%s", 8 * w, ks[k], accs[a]);
    snprintf(atom_names[i++], sizeof atom_names[0], "mma_16x8x16_f32");
    snprintf(atom_names[i], sizeof atom_names[0], "mma_16x8x32_f32");
    atom_names_ready = 1; /* a benign race: every thread writes the same bytes */
}

TESS_API int tess_layout_mma_atom_count(void) { return ATOM_COUNT; }

TESS_API const char *tess_layout_mma_atom_name(int i) {
    fill_names();
    return i >= 0 && i < ATOM_COUNT ? atom_names[i] : NULL;
}

/* The mma.sync atoms: a warp of 32 = (4 threads in a group, 8 groups); A, B
 * (N x K) and C. 16-bit inputs, k16: two to a register; 8-bit inputs (e4m3,
 * e5m2, s8), k32: four to a register. */
static const struct {
    const char *name;
    const char *tv[3];
    int64_t rows[3], cols[3];
} mma_sync_atoms[] = {
    {"mma_16x8x16_f32",
     {"((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", "((4,8),(2,2)):((32,1),(16,8))"},
     {16, 8, 16},
     {16, 16, 8}},
    {"mma_16x8x32_f32",
     {"((4,8),(4,2,2)):((64,1),(16,8,256))", "((4,8),(4,2)):((32,1),(8,128))", "((4,8),(2,2)):((32,1),(16,8))"},
     {16, 8, 16},
     {32, 32, 8}},
};

/* The TV layout text and tile of one operand; 0 if the name is not an atom. */
static int atom_text(const char *name, tess_mma_operand op, char *text, size_t cap, int64_t *rows, int64_t *cols) {
    int n = 0, k = 0;
    char acc[8] = "";
    for (size_t i = 0; i < sizeof mma_sync_atoms / sizeof mma_sync_atoms[0]; i++)
        if (strcmp(name, mma_sync_atoms[i].name) == 0) {
            snprintf(text, cap, "%s", mma_sync_atoms[i].tv[op]);
            *rows = mma_sync_atoms[i].rows[op], *cols = mma_sync_atoms[i].cols[op];
            return 1;
        }
    char tail;
    if (sscanf(name, "wgmma_64x%dx%d_%3[a-z0-9]%c", &n, &k, acc, &tail) != 3 || n < 8 || n > 8 * WGMMA_WIDTHS || n % 8 != 0 ||
        (k != 16 && k != 32) || (strcmp(acc, "f32") != 0 && strcmp(acc, "f16") != 0))
        return 0;
    /* Warpgroup of 128 = (4 lanes in a quad, 8 quads, 4 warps). */
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
    return 1;
}

TESS_API tess_status tess_layout_mma_atom(const char *name, tess_mma_operand operand, tess_layout **tv_layout,
                                          int64_t *rows, int64_t *cols) {
    if (!name || !tv_layout || !rows || !cols)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_mma_atom: arguments must not be NULL");
    if (operand != TESS_MMA_A && operand != TESS_MMA_B && operand != TESS_MMA_C)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_layout_mma_atom: operand %d is not A (0), B (1) or C (2)",
                         (int)operand);
    char text[96];
    if (!atom_text(name, operand, text, sizeof text, rows, cols))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "unknown MMA atom '%s': use wgmma_64x{N}x16_f32 / _f16 or wgmma_64x{N}x32_f32 / _f16 "
                         "(N = 8..256, a multiple of 8), mma_16x8x16_f32 or mma_16x8x32_f32",
                         name);
    return tess_layout_parse(text, tv_layout);
}
