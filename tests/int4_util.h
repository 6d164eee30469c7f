/* What the 4-bit weight tests share (tests/unit/test_int4.c,
 * tests/gpu/test_w4a16.c): a weight's codes written in a checkpoint format,
 * and the dequantized value every W4A16 path must reproduce. */
#ifndef TESS_TESTS_INT4_UTIL_H
#define TESS_TESTS_INT4_UTIL_H

#include <stdint.h>

#include "tessera.h"

/* The n x k codes q (row-major, 0..15) as `format`'s int32 words, written as
 * tessera.h's tess_int4_format documents them (malloc'd: n k / 8 words). */
int32_t *int4_write_format(int format, const uint8_t *q, int64_t n, int64_t k);

/* A 4-bit weight on the host: codes [n][k], scales [k / group][n] (ld_scales
 * apart, of scale_type) and zeros (uint8, ld_zeros apart, or NULL: 8). */
typedef struct int4_host_weight {
    int64_t n, k, group;
    const uint8_t *q;
    tess_dtype scale_type;
    const void *scales;
    int64_t ld_scales;
    const uint8_t *zeros;
    int64_t ld_zeros;
} int4_host_weight;

/* Weight (row, col) as tess_dequantize_int4 writes it: (q - z) times the
 * scale rounded to `x_type` (bf16 or f16), the product rounded to x_type. */
float int4_dequantized(const int4_host_weight *w, int64_t row, int64_t col, tess_dtype x_type);

/* Weight (row, col) exactly, as the GEMV computes with it: (q - z) times the
 * scale as given (exact in float32: q - z is a small integer and the scale
 * has at most 24 significant bits; the product is formed in double). */
double int4_exact(const int4_host_weight *w, int64_t row, int64_t col);

#endif
