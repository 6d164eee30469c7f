/* The 4-bit weight tests' shared helpers (int4_util.h). */
#include "int4_util.h"

#include <stdlib.h>

#include "ref/convert.h"

int32_t *int4_write_format(int format, const uint8_t *q, int64_t n, int64_t k) {
    static const int awq_order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    uint32_t *w = calloc((size_t)(n * k / 8), sizeof *w);
    /* the format's [rows][cols] of words: ROWS [n][k/8], GPTQ [k/8][n], AWQ [k][n/8] */
    const int64_t rows = format == TESS_INT4_AWQ ? k : format == TESS_INT4_GPTQ ? k / 8 : n;
    const int64_t cols = format == TESS_INT4_AWQ ? n / 8 : format == TESS_INT4_GPTQ ? n : k / 8;
    for (int64_t a = 0; a < rows; a++)
        for (int64_t b = 0; b < cols; b++)
            for (int i = 0; i < 8; i++) {
                int64_t row, col; /* code i's place in the weight */
                if (format == TESS_INT4_ROWS)
                    row = a, col = 8 * b + i;
                else if (format == TESS_INT4_GPTQ)
                    row = b, col = 8 * a + i;
                else
                    row = 8 * b + awq_order[i], col = a;
                w[a * cols + b] |= (uint32_t)q[row * k + col] << (4 * i);
            }
    return (int32_t *)w;
}

/* v rounded to `dtype` (bf16 or f16, to nearest even). */
static float round_to(tess_dtype dtype, float v) {
    float storage; /* room for any type's element */
    tess_store_from_f32(dtype, &storage, 0, v);
    return tess_load_as_f32(dtype, &storage, 0);
}

float int4_dequantized(const int4_host_weight *w, int64_t row, int64_t col, tess_dtype x_type) {
    const int64_t group = col / w->group;
    const float z = w->zeros ? (float)w->zeros[group * w->ld_zeros + row] : 8.0f;
    const float s = round_to(x_type, tess_load_as_f32(w->scale_type, w->scales, group * w->ld_scales + row));
    /* (q - z) is exact in x_type and the product of two of its values exact in float32: one rounding */
    return round_to(x_type, ((float)w->q[row * w->k + col] - z) * s);
}

double int4_exact(const int4_host_weight *w, int64_t row, int64_t col) {
    const int64_t group = col / w->group;
    const double z = w->zeros ? (double)w->zeros[group * w->ld_zeros + row] : 8.0;
    return ((double)w->q[row * w->k + col] - z) *
           (double)tess_load_as_f32(w->scale_type, w->scales, group * w->ld_scales + row);
}
