/* The index formulas the sm90 kernels hard-code, checked on the CPU:
 *  - the wgmma accumulator fragment -> (m, n), against the layout algebra's
 *    64xN accumulator TV layout ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)),
 *    for every N from 8 to 256;
 *  - the epilogue's stmatrix addresses, by simulating stmatrix (plain and
 *    .trans) into the 128-byte-swizzled staging sub-tiles: every element lands
 *    exactly once, where the TMA store expects it;
 *  - an FP8 D's staging offsets: every element of a round once, where TMA's
 *    64-byte swizzle reads it, and each warp's pair stores free of bank
 *    conflicts;
 *  - the tensor-core decode GEMV's feed of mma.sync from plain loads, against
 *    the m16n8k16 and m16n8k32 atoms.
 * (The tile scheduler is tested in test_sched.c.) */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/common/fragment.h"
#include "tessera/layout.h"

/* Index of (t, v) in an atom operand's tile. */
static int64_t atom_index(const tess_layout *tv, int t, int v) {
    char crd[32];
    snprintf(crd, sizeof crd, "(%d,%d)", t, v);
    tess_layout *c = NULL;
    tess_layout_parse(crd, &c);
    int64_t idx = -1;
    tess_layout_eval_coord(tv, c, &idx);
    tess_layout_free(c);
    return idx;
}

static void test_accumulator_vs_algebra(void) {
    for (int n = 8; n <= 256; n += 8) {
        char name[64];
        snprintf(name, sizeof name, "wgmma_64x%dx16_f32", n);
        tess_layout *tv = NULL;
        int64_t rows = 0, cols = 0;
        CHECK_STATUS(tess_layout_mma_atom(name, TESS_MMA_C, &tv, &rows, &cols), TESS_STATUS_SUCCESS);
        if (!tv)
            continue;
        int wrong = 0;
        for (int t = 0; t < 128; t++)
            for (int v = 0; v < n / 2; v++) {
                const int64_t idx = atom_index(tv, t, v);
                int m, col;
                tess_wgmma_acc_coord(t, v, &m, &col);
                wrong += idx != m + rows * col;
            }
        CHECKF(wrong == 0, "N=%d: %d accumulator values disagree with the layout algebra", n, wrong);
        tess_layout_free(tv);
    }
}

/* Simulates stmatrix.x4 for one warp and column block jj; marks where each accumulator lands. */
static void simulate_stmatrix(int width, int col_major, int *hits, int *misplaced) {
    for (int warp = 0; warp < 4; warp++)
        for (int jj = 0; jj < width / 16; jj++)
            for (int i = 0; i < 4; i++)         /* matrix i of the four */
                for (int r = 0; r < 8; r++)     /* its row r (the source fragment's row) */
                    for (int c = 0; c < 8; c++) { /* and column c */
                        int src_lane = 4 * r + c / 2, v = 8 * jj + 2 * i + c % 2, m, n;
                        tess_wgmma_acc_coord(32 * warp + src_lane, v, &m, &n);
                        int addr = col_major ? tess_epi_stmatrix_offset(warp, 8 * i + c, jj, 1) + 2 * r
                                             : tess_epi_stmatrix_offset(warp, 8 * i + r, jj, 0) + 2 * c;
                        int sub = addr / TESS_EPI_SUBTILE_BYTES, within = addr % TESS_EPI_SUBTILE_BYTES;
                        int row = within / 128, chunk = ((within % 128) / 16) ^ (row % 8), elem = (within % 16) / 2;
                        int want_sub = n / TESS_EPI_SUBTILE;
                        int want_row = col_major ? n % TESS_EPI_SUBTILE : m;
                        int want_col = col_major ? m : n % TESS_EPI_SUBTILE;
                        *misplaced += sub != want_sub || row != want_row || chunk * 8 + elem != want_col;
                        if (addr >= 0 && addr < (width / TESS_EPI_SUBTILE) * TESS_EPI_SUBTILE_BYTES)
                            hits[addr / 2]++;
                    }
}

static void test_epilogue_addresses(void) {
    for (int width = 64; width <= 256; width += 64)
        for (int col_major = 0; col_major < 2; col_major++) {
            int elems = 64 * width, misplaced = 0, once = 0;
            int *hits = calloc((size_t)elems, sizeof(int));
            simulate_stmatrix(width, col_major, hits, &misplaced);
            for (int e = 0; e < elems; e++)
                once += hits[e] == 1;
            CHECKF(misplaced == 0 && once == elems, "width %d %s: %d misplaced, %d of %d written once", width,
                   col_major ? "column-major" : "row-major", misplaced, once, elems);
            free(hits);
        }
}

/* The FP8 staging (fragment.h tess_epi_fp8_offset) for rounds of 64 to 256
 * columns: each accumulator lands once, at the byte that TMA's 64-byte
 * swizzle (address bits 4-5 XORed with bits 7-8 within a sub-tile) maps to
 * its row and column; and for each warp and accumulator pair (one 2-byte
 * store), no two lanes write different 4-byte words of one bank. */
static void test_fp8_staging(void) {
    for (int width = 64; width <= 256; width += 64) {
        const int bytes = 64 * width;
        int *hits = calloc((size_t)bytes, sizeof(int)), misplaced = 0, once = 0, conflicts = 0;
        for (int warp = 0; warp < 4; warp++)
            for (int v = 0; v < width / 2; v += 2) {
                int word_of_bank[32];
                for (int k = 0; k < 32; k++)
                    word_of_bank[k] = -1;
                for (int lane = 0; lane < 32; lane++) {
                    int m, n;
                    tess_wgmma_acc_coord(32 * warp + lane, v, &m, &n);
                    const int addr = tess_epi_fp8_offset(m, n);
                    for (int h = 0; h < 2; h++) { /* the pair's two bytes: columns n, n + 1 */
                        const int a = addr + h, within = a % TESS_EPI_FP8_SUBTILE_BYTES;
                        const int plain = within ^ (((within >> 7) & 3) << 4);
                        misplaced += a / TESS_EPI_FP8_SUBTILE_BYTES != (n + h) / 64 || plain / 64 != m ||
                                     plain % 64 != (n + h) % 64;
                        if (a >= 0 && a < bytes)
                            hits[a]++;
                    }
                    const int word = addr / 4, bank = word % 32;
                    conflicts += word_of_bank[bank] >= 0 && word_of_bank[bank] != word;
                    word_of_bank[bank] = word;
                }
            }
        for (int e = 0; e < bytes; e++)
            once += hits[e] == 1;
        CHECKF(misplaced == 0 && once == bytes && conflicts == 0,
               "FP8 staging width %d: %d misplaced, %d of %d written once, %d bank conflicts", width, misplaced,
               once, bytes, conflicts);
        free(hits);
    }
}

/* The tensor-core decode GEMV's fragment feed (fragment.h), against the mma
 * atoms of the layout algebra, for 16-bit inputs (m16n8k16, E = 2 elements
 * to a 32-bit word) and 8-bit ones (m16n8k32, E = 4). Lane L's word w of a
 * 64-byte step holds physical K elements 4 E chunk(L) + E w .. + E - 1. For
 * each mma: every A value must come from the row the atom says, the atom's
 * logical K must map to one physical K for all lanes and rows, B's values
 * from the token row the atom says and through the same map; over both
 * mmas the map must cover the step's 8 E x 2 elements once. The
 * accumulators must be where the epilogue stores them, and each row (token)
 * must depend on e / 2 (e % 2) only, as the kernel's factor lookup assumes. */
static void test_gemv_vs_algebra(void) {
    const char *atoms[2] = {"mma_16x8x16_f32", "mma_16x8x32_f32"};
    for (int at = 0; at < 2; at++) {
        const int E = 2 * (at + 1), K = 8 * E; /* elements per word, logical K of one mma */
        tess_layout *a = NULL, *b = NULL, *c = NULL;
        int64_t r, cl;
        CHECK_STATUS(tess_layout_mma_atom(atoms[at], TESS_MMA_A, &a, &r, &cl), TESS_STATUS_SUCCESS);
        CHECK_STATUS(tess_layout_mma_atom(atoms[at], TESS_MMA_B, &b, &r, &cl), TESS_STATUS_SUCCESS);
        CHECK_STATUS(tess_layout_mma_atom(atoms[at], TESS_MMA_C, &c, &r, &cl), TESS_STATUS_SUCCESS);
        if (!a || !b || !c)
            continue;
        int map[2][32], covered[64] = {0}, wrong_row = 0, wrong_map = 0, wrong_token = 0, wrong_c = 0;
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < K; k++)
                map[j][k] = -1;
        for (int lane = 0; lane < 32; lane++)
            for (int j = 0; j < 2; j++) {
                for (int v = 0; v < 4 * E; v++) { /* A: 4 registers of E elements */
                    const int reg = v / E, w = tess_gemv_a_word(j, reg);
                    const int64_t idx = atom_index(a, lane, v); /* m + 16 k */
                    const int phys = 4 * E * tess_gemv_load_chunk(lane) + E * w + v % E;
                    wrong_row += idx % 16 != tess_gemv_load_row(lane, tess_gemv_a_upper(reg));
                    int *slot = &map[j][idx / 16];
                    wrong_map += *slot >= 0 && *slot != phys;
                    *slot = phys;
                }
            }
        for (int lane = 0; lane < 32; lane++)
            for (int j = 0; j < 2; j++)
                for (int v = 0; v < 2 * E; v++) { /* B: 2 registers of E elements */
                    const int64_t idx = atom_index(b, lane, v); /* n + 8 k */
                    const int phys = 4 * E * tess_gemv_load_chunk(lane) + E * tess_gemv_b_word(j, v / E) + v % E;
                    wrong_token += idx % 8 != tess_gemv_load_row(lane, 0);
                    wrong_map += map[j][idx / 8] != phys;
                }
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < K; k++)
                if (map[j][k] >= 0 && map[j][k] < 2 * K)
                    covered[map[j][k]]++;
        int once = 0;
        for (int k = 0; k < 2 * K; k++)
            once += covered[k] == 1;
        for (int lane = 0; lane < 32; lane++)
            for (int e = 0; e < 4; e++) {
                const int64_t idx = atom_index(c, lane, e); /* m + 16 n */
                wrong_c += idx % 16 != tess_gemv_c_row(lane, e) || idx / 16 != tess_gemv_c_token(lane, e) ||
                           tess_gemv_c_row(lane, e) != tess_gemv_c_row(lane, 2 * (e / 2)) ||
                           tess_gemv_c_token(lane, e) != tess_gemv_c_token(lane, e % 2);
            }
        CHECKF(wrong_row == 0 && wrong_map == 0 && wrong_token == 0 && once == 2 * K && wrong_c == 0,
               "%s: %d A rows, %d K positions, %d B tokens wrong; %d of %d step elements used once; %d accumulators",
               atoms[at], wrong_row, wrong_map, wrong_token, once, 2 * K, wrong_c);
        tess_layout_free(a), tess_layout_free(b), tess_layout_free(c);
    }
}

int main(void) {
    test_accumulator_vs_algebra();
    test_epilogue_addresses();
    test_fp8_staging();
    test_gemv_vs_algebra();
    return check_finish("unit_fragment");
}
