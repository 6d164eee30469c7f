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

/* The packed form's 32-bit word holding weight (row, col) of an n x k
 * weight, and the nibble's shift in it: block row / 16, quad col / 64,
 * lane 4 g + c and word j of the quad, bits 4 i + 16 h, where row = 16 rb +
 * g + 8 (i % 2) and col = 64 kq + 16 j + 2 c + 8 (i / 2) + h. */
TESS_HD int64_t tess_int4_packed_word(int64_t k, int64_t row, int64_t col, int *shift) {
    const int r = (int)(row % 16), t = (int)(col % 16);
    const int g = r % 8, i = 2 * (t / 8) + r / 8, c = (t % 8) / 2, h = t % 2, j = (int)((col % 64) / 16);
    *shift = 4 * i + 16 * h;
    return (((row / 16) * (k / 64) + col / 64) * 32 + 4 * g + c) * 4 + j;
}

#endif
