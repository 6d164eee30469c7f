/* Where a 4-bit weight's codes lie: in a checkpoint's int32 words
 * (tess_int4_format) and in tessera's packed form (int4_kernels.h). One
 * formula each, for the kernels and for the tests' host references. */
#ifndef TESS_KERNELS_INT4_INT4_LAYOUT_H
#define TESS_KERNELS_INT4_INT4_LAYOUT_H

#include <stdint.h>

#include "core/hd.h"
#include "tessera.h"

/* The code (0..15) of weight (row, col) of an n x k weight stored as
 * `format`'s int32 words at src. AWQ keeps the columns of a word in the
 * order 0, 2, 4, 6, 1, 3, 5, 7: column 8j + c is in nibble (0, 4, 1, 5, 2,
 * 6, 3, 7)[c]. */
TESS_HD uint32_t tess_int4_source_code(int format, const int32_t *src, int64_t n, int64_t k, int64_t row,
                                       int64_t col) {
    uint32_t word;
    int nibble;
    if (format == TESS_INT4_GPTQ) {
        word = (uint32_t)src[(col / 8) * n + row];
        nibble = (int)(col % 8);
    } else if (format == TESS_INT4_AWQ) {
        word = (uint32_t)src[col * (n / 8) + row / 8];
        nibble = (int)((row % 8) / 2 + 4 * (row % 2)); /* (0, 4, 1, 5, 2, 6, 3, 7)[row % 8] */
    } else {
        word = (uint32_t)src[row * (k / 8) + col / 8];
        nibble = (int)(col % 8);
    }
    return (word >> (4 * nibble)) & 0xfu;
}

/* The column within its quad (0..63) of the code that lane c's word j holds
 * at nibble 4 i + 16 h: 16 c + 4 j + 2 (i / 2) + h. Any order of a quad's
 * 64 columns serves the mma (A's and X's k slots are taken in the same
 * order); this one gives lane c the 16 consecutive columns 16 c .. 16 c + 15
 * of its rows, so that it reads its X fragments, and the dequantizer writes
 * its weights, as two 16-byte pieces a row. */
TESS_HD int tess_int4_quad_col(int c, int j, int i, int h) { return 16 * c + 4 * j + 2 * (i / 2) + h; }

/* The packed form's 32-bit word holding weight (row, col) of an n x k
 * weight, and the nibble's shift in it: block row / 16, quad col / 64,
 * lane 4 g + c and word j of the quad, bits 4 i + 16 h, where row = 16 rb +
 * g + 8 (i % 2) and col = 64 kq + tess_int4_quad_col(c, j, i, h). */
TESS_HD int64_t tess_int4_packed_word(int64_t k, int64_t row, int64_t col, int *shift) {
    const int r = (int)(row % 16), t = (int)(col % 64);
    const int g = r % 8, c = t / 16, j = (t % 16) / 4, h = t % 2, i = 2 * ((t % 4) / 2) + r / 8;
    *shift = 4 * i + 16 * h;
    return (((row / 16) * (k / 64) + col / 64) * 32 + 4 * g + c) * 4 + j;
}

#endif
