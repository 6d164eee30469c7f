/* The 4-bit weight API without a GPU:
 *  - the packed layout's formula (tess_int4_packed_word) puts the n k codes
 *    of a weight in n k / 8 words, each nibble once, and in the fragment
 *    order int4_kernels.h describes;
 *  - tess_int4_source_code reads back the code of every (row, col) from a
 *    weight written in each tess_int4_format as tessera.h documents it;
 *  - every rule of tess_gemm_w4a16, tess_dequantize_int4 and
 *    tess_pack_int4 refuses its breach with the documented status. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "int4_util.h"
#include "core/int4.h"
#include "kernels/int4/int4_layout.h"
#include "ref/random.h"

static tess_rng rng;

/* Every (row, col) of an n x k weight lands on its own (word, nibble), all
 * n k / 8 words are filled, and the nibble is where the fragment order
 * says: row 16 rb + g + 8 (i % 2), col 64 kq + 16 c + 4 j + 2 (i / 2) + h (a lane's
 * 16 consecutive columns of each of its two rows). */
static void test_packed_layout(void) {
    for (int trial = 0; trial < 20; trial++) {
        const int64_t n = 16 * tess_rng_range(&rng, 1, 8), k = 64 * tess_rng_range(&rng, 1, 6);
        const int64_t words = n * k / 8;
        uint8_t *seen = calloc((size_t)words, 1);
        int bad_order = 0, out_of_range = 0;
        for (int64_t row = 0; row < n; row++)
            for (int64_t col = 0; col < k; col++) {
                int shift;
                const int64_t w = tess_int4_packed_word(k, row, col, &shift);
                if (w < 0 || w >= words || shift % 4 || shift < 0 || shift > 28) {
                    out_of_range++;
                    continue;
                }
                seen[w] |= (uint8_t)(1u << (shift / 4));
                const int64_t j = w % 4, lane = (w / 4) % 32, kq = (w / 128) % (k / 64), rb = w / (128 * (k / 64));
                const int i = (shift % 16) / 4, h = shift / 16, g = (int)(lane / 4), c = (int)(lane % 4);
                bad_order += row != 16 * rb + g + 8 * (i % 2) || col != 64 * kq + 16 * c + 4 * j + 2 * (i / 2) + h;
            }
        int unfilled = 0;
        for (int64_t w = 0; w < words; w++)
            unfilled += seen[w] != 0xff;
        CHECKF(out_of_range == 0 && unfilled == 0 && bad_order == 0,
               "n=%lld k=%lld: %d out of range, %d words not filled exactly, %d out of fragment order", (long long)n,
               (long long)k, out_of_range, unfilled, bad_order);
        free(seen);
    }
}

static void test_source_formats(void) {
    for (int trial = 0; trial < 12; trial++) {
        const int64_t n = 16 * tess_rng_range(&rng, 1, 6), k = 64 * tess_rng_range(&rng, 1, 4);
        uint8_t *q = malloc((size_t)(n * k));
        for (int64_t i = 0; i < n * k; i++)
            q[i] = (uint8_t)tess_rng_range(&rng, 0, 15);
        for (int format = TESS_INT4_ROWS; format <= TESS_INT4_AWQ; format++) {
            int32_t *src = int4_write_format(format, q, n, k);
            int bad = 0;
            for (int64_t row = 0; row < n; row++)
                for (int64_t col = 0; col < k; col++)
                    bad += tess_int4_source_code(format, src, n, k, row, col) != q[row * k + col];
            CHECKF(bad == 0, "format %d, %lld x %lld: %d codes read back wrong", format, (long long)n, (long long)k,
                   bad);
            free(src);
        }
        free(q);
    }
}

/* A valid decode problem (aligned stand-in pointers) to break one rule at a time. */
static tess_w4a16_desc valid_desc(void) {
    tess_w4a16_desc d;
    tess_w4a16_desc_init(&d);
    d.m = 4, d.n = 4096, d.k = 7168, d.group_size = 128;
    d.x = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, d.k, d.k, 0};
    d.d = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, d.n, d.n, 0};
    d.scale_type = TESS_DTYPE_F16, d.ld_scales = d.n;
    d.zero_points = 1, d.ld_zeros = d.n;
    return d;
}

#define P(addr) ((void *)(uintptr_t)(addr))
static const uint8_t *const ZEROS = (const uint8_t *)(uintptr_t)0x30000;

static void test_refusals(void) {
    tess_w4a16_desc d = valid_desc();
    void *x = P(0x10000), *w = P(0x20000), *s = P(0x28000), *out = P(0x40000), *bias = P(0x50000);
    CHECK_STATUS(tess_w4a16_validate(&d, NULL, 0, x, w, s, ZEROS, out, NULL), TESS_STATUS_SUCCESS);
    struct {
        const char *what;
        tess_status want;
    } cases[] = {
        {"n not a multiple of 16", TESS_STATUS_INVALID_VALUE},
        {"k not a multiple of 64", TESS_STATUS_INVALID_VALUE},
        {"group size 32", TESS_STATUS_NOT_SUPPORTED},
        {"group 128 not dividing k", TESS_STATUS_INVALID_VALUE},
        {"m = 0", TESS_STATUS_INVALID_VALUE},
        {"m = 17", TESS_STATUS_NOT_SUPPORTED},
        {"x f32", TESS_STATUS_NOT_SUPPORTED},
        {"x column-major", TESS_STATUS_NOT_SUPPORTED},
        {"ld_x not a multiple of 8", TESS_STATUS_INVALID_VALUE},
        {"x unaligned", TESS_STATUS_INVALID_VALUE},
        {"w NULL", TESS_STATUS_INVALID_VALUE},
        {"w unaligned", TESS_STATUS_INVALID_VALUE},
        {"scales e4m3", TESS_STATUS_NOT_SUPPORTED},
        {"ld_scales < n", TESS_STATUS_INVALID_VALUE},
        {"zero_points without zeros", TESS_STATUS_INVALID_VALUE},
        {"zeros without zero_points", TESS_STATUS_INVALID_VALUE},
        {"ld_zeros < n", TESS_STATUS_INVALID_VALUE},
        {"d e4m3", TESS_STATUS_NOT_SUPPORTED},
        {"d of the wrong shape", TESS_STATUS_INVALID_VALUE},
        {"bias per row", TESS_STATUS_NOT_SUPPORTED},
        {"bias without its pointer", TESS_STATUS_INVALID_VALUE},
        {"scales unaligned", TESS_STATUS_INVALID_VALUE},
        {"x NULL", TESS_STATUS_INVALID_VALUE},
        {"experts in the single call", TESS_STATUS_INVALID_VALUE},
    };
    const int count = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < count; i++) {
        tess_w4a16_desc b = valid_desc();
        void *bx = x, *bw = w, *bs = s, *bb = NULL;
        const uint8_t *bz = ZEROS;
        switch (i) {
        case 0: b.n = 4100, b.d.cols = b.n, b.d.ld = b.n, b.ld_scales = b.ld_zeros = b.n; break;
        case 1: b.k = 7200, b.x.cols = b.x.ld = 7200; break;
        case 2: b.group_size = 32; break;
        case 3: b.k = 192, b.x.cols = b.x.ld = 192; break;
        case 4: b.m = 0, b.x.rows = b.d.rows = 0; break;
        case 5: b.m = 17, b.x.rows = b.d.rows = 17; break;
        case 6: b.x.dtype = TESS_DTYPE_F32; break;
        case 7: b.x.order = TESS_ORDER_COL, b.x.ld = b.m; break;
        case 8: b.x.ld = b.k + 4; break;
        case 9: bx = P(0x10008); break;
        case 10: bw = NULL; break;
        case 11: bw = P(0x20008); break;
        case 12: b.scale_type = TESS_DTYPE_E4M3; break;
        case 13: b.ld_scales = b.n - 1; break;
        case 14: bz = NULL; break;
        case 15: b.zero_points = 0; break;
        case 16: b.ld_zeros = 16; break;
        case 17: b.d.dtype = TESS_DTYPE_E4M3; break;
        case 18: b.d.cols = b.n / 2, b.d.ld = b.n / 2; break;
        case 19: b.epilogue.bias = TESS_BIAS_ROWS, b.epilogue.bias_type = TESS_DTYPE_BF16, bb = bias; break;
        case 20: b.epilogue.bias = TESS_BIAS_COLUMNS, b.epilogue.bias_type = TESS_DTYPE_BF16; break;
        case 21: bs = P(0x28001); break;
        case 22: bx = NULL; break;
        case 23: b.groups = 4; break;
        }
        const tess_status got = tess_w4a16_validate(&b, NULL, 0, bx, bw, bs, bz, out, bb);
        CHECKF(got == cases[i].want, "%s: %s, expected %s (%s)", cases[i].what, tess_status_name(got),
               tess_status_name(cases[i].want), tess_last_error());
        CHECKF(got == TESS_STATUS_SUCCESS || strlen(tess_last_error()) > 20, "%s: no sentence", cases[i].what);
    }
    /* symmetric codes with a column bias and an activation: accepted */
    d.zero_points = 0, d.epilogue.bias = TESS_BIAS_COLUMNS, d.epilogue.bias_type = TESS_DTYPE_F32;
    d.epilogue.activation = TESS_ACT_SILU;
    CHECK_STATUS(tess_w4a16_validate(&d, NULL, 0, x, w, s, NULL, out, bias), TESS_STATUS_SUCCESS);

    CHECK_STATUS(tess_int4_pack_check(TESS_INT4_AWQ, 4096, 7168, P(0x10000000), w), TESS_STATUS_SUCCESS);
    const int32_t *src = P(0x10000000);
    CHECK_STATUS(tess_int4_pack_check((tess_int4_format)7, 4096, 7168, src, w), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_int4_pack_check(TESS_INT4_GPTQ, 4096, 7168, NULL, w), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_int4_pack_check(TESS_INT4_ROWS, 4096, 7168, src, P(0x2004)), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_int4_pack_check(TESS_INT4_ROWS, 24, 7168, P(0x10000000), w), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_int4_pack_check(TESS_INT4_ROWS, 4096, ((int64_t)1 << 30) + 64, P(0x10000000), w),
                 TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_int4_pack_check(TESS_INT4_ROWS, 4096, 7168, P(0x20100), w), TESS_STATUS_INVALID_VALUE);
}

/* A valid masked problem: 8 experts of 16 rows at most, x and d batches packed. */
static tess_w4a16_desc valid_masked(void) {
    tess_w4a16_desc d = valid_desc();
    d.m = 16, d.x.rows = d.d.rows = 16;
    d.groups = 8, d.expected_groups = 2;
    d.x.batch_stride = d.m * d.k, d.d.batch_stride = d.m * d.n;
    return d;
}

/* tess_gemm_w4a16_masked's own rules, one broken at a time, each refused with a sentence; the
 * defaults (0 strides, 0 groups) and a shared x (batch stride 0) accepted. */
static void test_masked_refusals(void) {
    void *x = P(0x10000), *w = P(0x20000), *s = P(0x28000), *out = P(0x40000), *bias = P(0x50000);
    const int32_t *mm = P(0x60000);
    tess_w4a16_desc d = valid_masked();
    CHECK_STATUS(tess_w4a16_validate(&d, mm, 1, x, w, s, ZEROS, out, NULL), TESS_STATUS_SUCCESS);
    d.groups = 0, d.expected_groups = 0;
    CHECK_STATUS(tess_w4a16_validate(&d, mm, 1, x, w, s, ZEROS, out, NULL), TESS_STATUS_SUCCESS);
    d = valid_masked(), d.x.batch_stride = 0;
    CHECK_STATUS(tess_w4a16_validate(&d, mm, 1, x, w, s, ZEROS, out, NULL), TESS_STATUS_SUCCESS);
    d = valid_masked(), d.w_group_stride = d.n * d.k / 2 + 256, d.scales_group_stride = 56 * d.n + 8;
    d.zeros_group_stride = 56 * d.n;
    d.epilogue.bias = TESS_BIAS_COLUMNS, d.epilogue.bias_type = TESS_DTYPE_BF16, d.epilogue.bias_batch_stride = d.n;
    CHECK_STATUS(tess_w4a16_validate(&d, mm, 1, x, w, s, ZEROS, out, bias), TESS_STATUS_SUCCESS);
    /* no zero points: ld_zeros and zeros_group_stride are not read, whatever they hold */
    d = valid_masked(), d.zero_points = 0, d.ld_zeros = INT64_MAX, d.zeros_group_stride = 5;
    CHECK_STATUS(tess_w4a16_validate(&d, mm, 1, x, w, s, NULL, out, NULL), TESS_STATUS_SUCCESS);
    const char *what[] = {"masked_m NULL",
                          "masked_m unaligned",
                          "groups negative",
                          "groups past 65535",
                          "expected_groups past groups",
                          "w_group_stride short",
                          "w_group_stride not whole 16 bytes",
                          "scales_group_stride short",
                          "zeros_group_stride short",
                          "d's experts overlapping",
                          "x's batch stride not whole 16 bytes",
                          "bias per row",
                          "bias_batch_stride short",
                          "m = 17"};
    const tess_status want[] = {TESS_STATUS_INVALID_VALUE, TESS_STATUS_INVALID_VALUE, TESS_STATUS_INVALID_VALUE,
                                TESS_STATUS_INVALID_VALUE, TESS_STATUS_INVALID_VALUE, TESS_STATUS_INVALID_VALUE,
                                TESS_STATUS_INVALID_VALUE, TESS_STATUS_INVALID_VALUE, TESS_STATUS_INVALID_VALUE,
                                TESS_STATUS_INVALID_VALUE, TESS_STATUS_INVALID_VALUE, TESS_STATUS_NOT_SUPPORTED,
                                TESS_STATUS_INVALID_VALUE, TESS_STATUS_NOT_SUPPORTED};
    const int count = (int)(sizeof what / sizeof what[0]);
    for (int i = 0; i < count; i++) {
        tess_w4a16_desc b = valid_masked();
        const int32_t *bm = mm;
        void *bb = NULL;
        switch (i) {
        case 0: bm = NULL; break;
        case 1: bm = P(0x60002); break;
        case 2: b.groups = -1; break;
        case 3: b.groups = 65536, b.expected_groups = 0; break;
        case 4: b.expected_groups = 9; break;
        case 5: b.w_group_stride = b.n * b.k / 2 - 16; break;
        case 6: b.w_group_stride = b.n * b.k / 2 + 8; break;
        case 7: b.scales_group_stride = 55 * b.n; break;
        case 8: b.zeros_group_stride = 55 * b.n + b.n - 1; break;
        case 9: b.d.batch_stride = b.m * b.n - 1; break;
        case 10: b.x.batch_stride = b.m * b.k + 4; break;
        case 11: b.epilogue.bias = TESS_BIAS_ROWS, b.epilogue.bias_type = TESS_DTYPE_BF16, bb = bias; break;
        case 12:
            b.epilogue.bias = TESS_BIAS_COLUMNS, b.epilogue.bias_type = TESS_DTYPE_BF16;
            b.epilogue.bias_batch_stride = b.n - 1, bb = bias;
            break;
        case 13: b.m = 17, b.x.rows = b.d.rows = 17, b.x.batch_stride = 17 * b.k, b.d.batch_stride = 17 * b.n; break;
        }
        const tess_status got = tess_w4a16_validate(&b, bm, 1, x, w, s, ZEROS, out, bb);
        CHECKF(got == want[i], "masked, %s: %s, expected %s (%s)", what[i], tess_status_name(got),
               tess_status_name(want[i]), tess_last_error());
        CHECKF(got == TESS_STATUS_SUCCESS || strlen(tess_last_error()) > 20, "masked, %s: no sentence", what[i]);
    }
    /* a first-version descriptor (ending at its epilogue) is read with no experts: groups 0 */
    tess_w4a16_desc v1 = valid_masked(), full;
    v1.struct_size = (uint32_t)TESS_W4A16_DESC_SIZE_V1;
    CHECK_STATUS(tess_w4a16_accept(&v1, &full, "unit_int4"), TESS_STATUS_SUCCESS);
    CHECK(full.groups == 0 && full.expected_groups == 0 && full.w_group_stride == 0 && full.m == v1.m);
}

int main(void) {
    tess_rng_seed(&rng, check_seed());
    test_packed_layout();
    test_source_formats();
    test_refusals();
    test_masked_refusals();
    return check_finish("unit_int4");
}
