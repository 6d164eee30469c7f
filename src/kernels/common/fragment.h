/* Where each thread's wgmma accumulators sit, and where the epilogue's
 * stmatrix puts them: the index formulas the kernels hard-code, written once
 * for host and device so tests/unit/test_fragment.c can check them against
 * the layout algebra (the wgmma 64xN accumulator TV layout of
 * tessera/layout.h) and against a simulation of stmatrix. */
#ifndef TESS_KERNELS_FRAGMENT_H
#define TESS_KERNELS_FRAGMENT_H

#include "core/hd.h"

/* (m, n) in the 64 x N accumulator tile of warpgroup thread t (0..127) and
 * value v (0..N/2-1). PTX ISA, "wgmma 64xNx16 D fragment": each warp owns 16
 * rows, each quad of lanes 2 adjacent columns, values walk 2 columns, then 8
 * rows, then the next 8 columns. */
TESS_HD void tess_wgmma_acc_coord(int t, int v, int *m, int *n) {
    int warp = t / 32, lane = t % 32;
    *m = 16 * warp + lane / 4 + 8 * ((v / 2) % 2);
    *n = (lane % 4) * 2 + (v % 2) + 8 * (v / 4);
}

/* Epilogue staging: a warpgroup's 64 x N tile goes through shared memory in
 * sub-tiles of 64 x 64 16-bit elements (8 KiB), each stored with the 128-byte
 * swizzle (Swizzle<3,4,3>: the 16-byte chunk index within a 128-byte row is
 * XORed with the row index mod 8) so that TMA can store it and stmatrix hits
 * distinct banks. Row-major D: a sub-tile's 128-byte rows are rows of D;
 * column-major D: they are columns of D (64 rows of M each). */
#define TESS_EPI_SUBTILE 64
#define TESS_EPI_SUBTILE_BYTES (TESS_EPI_SUBTILE * TESS_EPI_SUBTILE * 2)

/* Byte offset of 16-byte chunk `chunk` (0..7) of 128-byte row `row` of sub-tile `sub`. */
TESS_HD int tess_epi_swizzled_offset(int sub, int row, int chunk) {
    return sub * TESS_EPI_SUBTILE_BYTES + row * 128 + ((chunk ^ (row % 8)) * 16);
}

/* An FP8 D's staging (epilogue.cuh epilogue_stage_fp8): a warpgroup's 64 x W
 * round of one-byte elements in sub-tiles of 64 x 64 (4 KiB), each 64-byte
 * row a row of D, stored with TMA's 64-byte swizzle (Swizzle<2,4,3>: the
 * 16-byte chunk index within a 64-byte row is XORed with (row / 2) mod 4, so
 * that the 2-byte stores of a warp's 8 rows x 4 column pairs hit 16 distinct
 * banks). */
#define TESS_EPI_FP8_SUBTILE_BYTES (TESS_EPI_SUBTILE * TESS_EPI_SUBTILE)

/* Byte offset of element (m, c) of the round: row m (0..63), column c (0..W-1). */
TESS_HD int tess_epi_fp8_offset(int m, int c) {
    const int sub = c / TESS_EPI_SUBTILE, in_sub = c % TESS_EPI_SUBTILE;
    return sub * TESS_EPI_FP8_SUBTILE_BYTES + m * 64 + (((in_sub / 16) ^ ((m / 2) % 4)) * 16) + in_sub % 16;
}

/* The shared-memory byte offset lane `lane` of warp `warp` (within the
 * warpgroup) passes to stmatrix.x4 when storing accumulator columns
 * [16 jj, 16 jj + 16): matrix i = lane / 8 holds rows 16 warp + 8 (i % 2) + 0..7
 * and columns 16 jj + 8 (i / 2) + 0..7; row-major D stores it as is,
 * column-major D with .trans (its 8 rows of 8 become 8 columns of 8). */
TESS_HD int tess_epi_stmatrix_offset(int warp, int lane, int jj, int col_major) {
    int i = lane / 8, q = lane % 8;
    int row0 = 16 * warp + 8 * (i % 2); /* first row (m) of matrix i */
    int col0 = 16 * jj + 8 * (i / 2);   /* first column (n) of matrix i */
    if (!col_major) {                   /* lane q addresses row row0 + q, 8 columns from col0 */
        int r = row0 + q;
        return tess_epi_swizzled_offset(col0 / TESS_EPI_SUBTILE, r, (col0 % TESS_EPI_SUBTILE) / 8);
    }
    int c = col0 + q; /* lane q addresses column c, 8 rows from row0 */
    return tess_epi_swizzled_offset(c / TESS_EPI_SUBTILE, c % TESS_EPI_SUBTILE, row0 / 8);
}

/* The tensor-core decode GEMV (kernels/decode/gemv.cu) feeds mma.sync
 * m16n8k16 (16-bit) or m16n8k32 (8-bit) from plain 16-byte loads. Lane
 * (g = lane / 4, t = lane % 4) loads four 32-bit words at byte 16 t of a
 * 64-byte K step, from weight rows g and g + 8 and from token row g of each
 * 8-token tile; each step feeds two mmas (j = 0, 1). A sum over K does not
 * depend on the order K is visited, so the words go into the fragment
 * registers as they are, provided weights and tokens see the same
 * permutation of K: test_fragment.c checks that against the mma atoms of
 * the layout algebra. */

/* What lane `lane` loads: 16-byte chunk tess_gemv_load_chunk of the step,
 * of weight rows tess_gemv_load_row(lane, 0) and (lane, 1), and of token
 * row tess_gemv_load_row(lane, 0) of each 8-token tile. */
TESS_HD int tess_gemv_load_chunk(int lane) { return lane % 4; }
TESS_HD int tess_gemv_load_row(int lane, int upper) { return lane / 4 + 8 * upper; }
/* The word of the lane's weight loads in A register r (0..3) of mma j, and
 * whether it is row g + 8's load. */
TESS_HD int tess_gemv_a_word(int j, int r) { return 2 * j + r / 2; }
TESS_HD int tess_gemv_a_upper(int r) { return r % 2; }
/* The word of the lane's token load in B register r (0, 1) of mma j. */
TESS_HD int tess_gemv_b_word(int j, int r) { return 2 * j + r; }
/* The weight row (within the CTA's 16) and token (within the 8-token tile)
 * of the lane's accumulator e (0..3). */
TESS_HD int tess_gemv_c_row(int lane, int e) { return lane / 4 + 8 * (e / 2); }
TESS_HD int tess_gemv_c_token(int lane, int e) { return 2 * (lane % 4) + e % 2; }

#endif
