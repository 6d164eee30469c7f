/* The index formulas the sm90 kernels hard-code, checked on the CPU:
 *  - the wgmma accumulator fragment -> (m, n), against the layout algebra's
 *    64xN accumulator TV layout ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)),
 *    for every N from 8 to 256;
 *  - the epilogue's stmatrix addresses, by simulating stmatrix (plain and
 *    .trans) into the 128-byte-swizzled staging sub-tiles: every element lands
 *    exactly once, where the TMA store expects it.
 * (The tile scheduler is tested in test_sched.c.) */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/common/fragment.h"
#include "tessera/layout.h"

static void test_accumulator_vs_algebra(void) {
    for (int n = 8; n <= 256; n += 8) {
        char name[64], crd[32];
        snprintf(name, sizeof name, "wgmma_64x%dx16_f32", n);
        tess_layout *tv = NULL;
        int64_t rows = 0, cols = 0;
        CHECK_STATUS(tess_layout_mma_atom(name, TESS_MMA_C, &tv, &rows, &cols), TESS_STATUS_SUCCESS);
        if (!tv)
            continue;
        int wrong = 0;
        for (int t = 0; t < 128; t++)
            for (int v = 0; v < n / 2; v++) {
                snprintf(crd, sizeof crd, "(%d,%d)", t, v);
                tess_layout *c = NULL;
                tess_layout_parse(crd, &c);
                int64_t idx = -1;
                tess_layout_eval_coord(tv, c, &idx);
                tess_layout_free(c);
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

int main(void) {
    test_accumulator_vs_algebra();
    test_epilogue_addresses();
    return check_finish("unit_fragment");
}
