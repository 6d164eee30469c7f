/* The utility kernels on the GPU:
 *  - tess_quantize_fp8 (per tensor, per row, 1x128, 128x128) and
 *    tess_quantize_int8 (per tensor, per row) bit for bit against the same
 *    rule computed on the host;
 *  - tess_transpose exactly, for 1-, 2- and 4-byte elements;
 *  - tess_quantize_fp8_transposed (cast-transpose, 1x128 and 128x128) bit
 *    for bit against tess_quantize_fp8 of x and of x^T, on random and edge sizes, aligned
 *    and unaligned leading dimensions, with and without the row-wise copy,
 *    no byte written past either output's columns; and its refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/scale.h"
#include "gpu_skip.h"
#include "problem.h"
#include "ref/convert.h"

static tess_rng rng;

/* tess_quantize_fp8 against the rule computed on the host: factor = amax /
 * max(type) (1 for an all-zero block), q = x * (1 / factor), saturating. */
static void test_quantize(tess_handle h) {
    static const tess_scale_mode modes[4] = {TESS_SCALE_TENSOR, TESS_SCALE_BLOCK_1x128, TESS_SCALE_BLOCK_128x128,
                                             TESS_SCALE_OUTER_VEC};
    static const tess_dtype xs[3] = {TESS_DTYPE_F32, TESS_DTYPE_F16, TESS_DTYPE_BF16};
    int bad_q = 0, bad_s = 0, cases = 0;
    for (int trial = 0; trial < 30; trial++) {
        /* a third int8 (tess_quantize_int8: per tensor or per row), the rest e4m3 or e5m2 */
        const tess_dtype qt = trial % 3 == 0 ? TESS_DTYPE_S8 : trial % 2 ? TESS_DTYPE_E4M3 : TESS_DTYPE_E5M2;
        const tess_scale_mode mode = qt == TESS_DTYPE_S8 ? modes[(trial / 3) % 2 ? 3 : 0] : modes[trial % 4];
        const tess_dtype xt = xs[(trial / 3) % 3];
        const int64_t rows = gpu_pick_dim(&rng, 600), cols = gpu_pick_dim(&rng, 900), ldx = cols + tess_rng_range(&rng, 0, 8),
                      ldq = cols + tess_rng_range(&rng, 0, 16);
        tess_matrix_desc xd = {xt, TESS_ORDER_ROW, rows, cols, ldx, 0};
        size_t xbytes;
        void *hx = test_matrix_random(&xd, 1, &rng, &xbytes);
        if (trial == 5) /* an all-zero matrix: factors of 1 */
            memset(hx, 0, xbytes);
        tess_scale_desc layout;
        int64_t shape[2];
        size_t sbytes;
        CHECK_STATUS(tess_scale_layout_query(mode, rows, cols, &layout, shape, &sbytes, NULL), TESS_STATUS_SUCCESS);
        void *dx = gpu_upload(hx, xbytes), *dq = gpu_upload(NULL, (size_t)(rows * ldq));
        float *ds = gpu_upload(NULL, sbytes);
        if (qt == TESS_DTYPE_S8)
            CHECK_STATUS(tess_quantize_int8(h, rows, cols, xt, dx, ldx, dq, ldq, ds, &layout), TESS_STATUS_SUCCESS);
        else
            CHECK_STATUS(tess_quantize_fp8(h, rows, cols, xt, dx, ldx, qt, dq, ldq, ds, &layout), TESS_STATUS_SUCCESS);
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        uint8_t *q = malloc((size_t)(rows * ldq));
        float *sc = malloc(sbytes);
        cudaMemcpy(q, dq, (size_t)(rows * ldq), cudaMemcpyDeviceToHost);
        cudaMemcpy(sc, ds, sbytes, cudaMemcpyDeviceToHost);
        const float max = qt == TESS_DTYPE_E4M3 ? 448.0f : qt == TESS_DTYPE_E5M2 ? 57344.0f : 127.0f;
        const int per_row = mode == TESS_SCALE_BLOCK_1x128 || mode == TESS_SCALE_OUTER_VEC;
        const int64_t br = per_row ? 1 : mode == TESS_SCALE_TENSOR ? rows : 128;
        const int64_t bc = mode == TESS_SCALE_TENSOR || mode == TESS_SCALE_OUTER_VEC ? cols : 128;
        for (int64_t r0 = 0; r0 < rows; r0 += br)
            for (int64_t c0 = 0; c0 < cols; c0 += bc) {
                float amax = 0.0f;
                for (int64_t r = r0; r < r0 + br && r < rows; r++)
                    for (int64_t c = c0; c < c0 + bc && c < cols; c++)
                        amax = fmaxf(amax, fabsf(tess_load_as_f32(xt, hx, r * ldx + c)));
                const float f = amax > 0.0f ? amax / max : 1.0f, inverse = 1.0f / f;
                bad_s += sc[tess_scale_offset(&layout, 0, r0, c0 / 128)] != f;
                for (int64_t r = r0; r < r0 + br && r < rows; r++)
                    for (int64_t c = c0; c < c0 + bc && c < cols; c++) {
                        float v = tess_load_as_f32(xt, hx, r * ldx + c) * inverse;
                        uint8_t want = qt == TESS_DTYPE_E4M3   ? tess_f32_to_e4m3_soft(v)
                                       : qt == TESS_DTYPE_E5M2 ? tess_f32_to_e5m2_soft(v)
                                                               : (uint8_t)tess_f32_to_s8(v);
                        bad_q += q[r * ldq + c] != want;
                    }
            }
        cases++;
        free(hx), free(q), free(sc);
        cudaFree(dx), cudaFree(dq), cudaFree(ds);
    }
    CHECKF(bad_q == 0 && bad_s == 0, "tess_quantize_fp8 / _int8: %d wrong elements, %d wrong factors", bad_q, bad_s);
    printf("quantize cases: %d (%d wrong elements, %d wrong factors)\n", cases, bad_q, bad_s);
}

/* tess_transpose of random sizes for 1-, 2- and 4-byte types, exactly. */
static void test_transpose(tess_handle h) {
    static const tess_dtype types[3] = {TESS_DTYPE_E4M3, TESS_DTYPE_BF16, TESS_DTYPE_F32};
    int bad = 0;
    for (int trial = 0; trial < 12; trial++) {
        const tess_dtype t = types[trial % 3];
        const size_t es = tess_dtype_size(t);
        const int64_t rows = gpu_pick_dim(&rng, 1000), cols = gpu_pick_dim(&rng, 1000), lds = cols + tess_rng_range(&rng, 0, 5),
                      ldd = rows + tess_rng_range(&rng, 0, 5);
        tess_matrix_desc sd = {t, TESS_ORDER_ROW, rows, cols, lds, 0};
        size_t bytes, dbytes = (size_t)(cols * ldd) * es;
        void *hs = test_matrix_random(&sd, 1, &rng, &bytes);
        void *ds = gpu_upload(hs, bytes), *dd = gpu_upload(NULL, dbytes);
        CHECK_STATUS(tess_transpose(h, t, rows, cols, ds, lds, dd, ldd), TESS_STATUS_SUCCESS);
        unsigned char *out = malloc(dbytes);
        cudaMemcpy(out, dd, dbytes, cudaMemcpyDeviceToHost);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                bad += memcmp(out + (size_t)(j * ldd + i) * es, (unsigned char *)hs + (size_t)(i * lds + j) * es, es) != 0;
        free(hs), free(out);
        cudaFree(ds), cudaFree(dd);
    }
    CHECKF(bad == 0, "tess_transpose: %d wrong elements", bad);
    CHECK_STATUS(tess_transpose(h, TESS_DTYPE_F32, 4, 4, NULL, 4, NULL, 4), TESS_STATUS_INVALID_VALUE);
}

/* Host copy of `bytes` device bytes (free it); a gpu_poisoned buffer's guard is GPU_GUARD_BYTES more. */
static void *gpu_download(const void *d, size_t bytes) {
    void *h = malloc(bytes);
    CHECK(h && cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    return h;
}

/* Bytes differing between a and b, a rows x cols matrix of 1-byte elements
 * at leading dimension ld; the padding after each row's cols, and the guard
 * after the matrix, must still be poisoned in `a` (nothing written outside). */
static int count_diff(const uint8_t *a, const uint8_t *b, int64_t rows, int64_t cols, int64_t ld, int *outside) {
    int bad = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < ld; c++) {
            if (c < cols)
                bad += a[r * ld + c] != b[r * ld + c];
            else
                *outside += a[r * ld + c] != GPU_POISON;
        }
    *outside += (int)gpu_guard_touched(a, (size_t)(rows * ld));
    return bad;
}

/* Factors that differ between two arrays of mn x kb factors in `layout` (of
 * tess_scale_layout_query: BLOCK_1x128 or BLOCK_128x128, whose mn index is
 * the row, or a row in the row block). */
static int count_factor_diff(const float *a, const float *b, const tess_scale_desc *layout, int64_t mn, int64_t kb) {
    int bad = 0;
    const int64_t step = layout->mode == TESS_SCALE_BLOCK_128x128 ? 128 : 1;
    for (int64_t i = 0; i < mn; i++)
        for (int64_t j = 0; j < kb; j++)
            bad += a[tess_scale_offset(layout, 0, i * step, j)] != b[tess_scale_offset(layout, 0, i * step, j)];
    return bad;
}

/* One cast-transpose of a random rows x cols x with factors of `mode`,
 * against tess_quantize_fp8 of x and of tess_transpose(x); returns wrong
 * bytes + factors. */
static int cast_transpose_case(tess_handle h, int64_t rows, int64_t cols, tess_dtype xt, tess_dtype qt,
                               tess_scale_mode mode, int rowwise, int aligned, int *outside) {
    /* aligned: every row of x, q and qt whole 16 bytes (the kernel's vector paths, with partial
     * vectors at ragged edges); else any leading dimension (its element paths). */
    const size_t es = tess_dtype_size(xt);
    const int64_t per = 16 / (int64_t)es;
    const int64_t ldx = aligned ? (cols + per - 1) / per * per + per * tess_rng_range(&rng, 0, 1)
                                : cols + tess_rng_range(&rng, 0, 8),
                  ldq = aligned ? (cols + 15) / 16 * 16 + 16 * tess_rng_range(&rng, 0, 1)
                                : cols + tess_rng_range(&rng, 0, 16),
                  ldqt = aligned ? (rows + 15) / 16 * 16 + 16 * tess_rng_range(&rng, 0, 1)
                                 : rows + tess_rng_range(&rng, 0, 16);
    tess_matrix_desc xd = {xt, TESS_ORDER_ROW, rows, cols, ldx, 0};
    size_t xbytes;
    void *hx = test_matrix_random(&xd, 1, &rng, &xbytes);
    if (tess_rng_range(&rng, 0, 8) == 0) /* an all-zero band of rows and one of columns: factors of 1 */
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++)
                if (r < 130 || c < 3)
                    memset((char *)hx + (size_t)(r * ldx + c) * es, 0, es);
    tess_scale_desc layout, layout_t;
    int64_t shape[2], shape_t[2];
    size_t sbytes, sbytes_t;
    CHECK_STATUS(tess_scale_layout_query(mode, rows, cols, &layout, shape, &sbytes, NULL), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_scale_layout_query(mode, cols, rows, &layout_t, shape_t, &sbytes_t, NULL), TESS_STATUS_SUCCESS);
    const size_t qbytes = (size_t)(rows * ldq), qtbytes = (size_t)(cols * ldqt);
    void *dx = gpu_upload(hx, xbytes), *dxt = gpu_upload(NULL, (size_t)(cols * rows) * es);
    unsigned char *dq = gpu_poisoned(qbytes), *dqt = gpu_poisoned(qtbytes);
    unsigned char *want_q = gpu_poisoned(qbytes), *want_qt = gpu_poisoned(qtbytes);
    float *ds = (float *)gpu_poisoned(sbytes), *dst = (float *)gpu_poisoned(sbytes_t); /* unwritten: NaN */
    float *want_s = gpu_upload(NULL, sbytes), *want_st = gpu_upload(NULL, sbytes_t);
    CHECK_STATUS(tess_quantize_fp8_transposed(h, rows, cols, xt, dx, ldx, qt, rowwise ? dq : NULL, ldq,
                                              rowwise ? ds : NULL, rowwise ? &layout : NULL, dqt, ldqt, dst, &layout_t),
                 TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_quantize_fp8(h, rows, cols, xt, dx, ldx, qt, want_q, ldq, want_s, &layout), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_transpose(h, xt, rows, cols, dx, ldx, dxt, rows), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_quantize_fp8(h, cols, rows, xt, dxt, rows, qt, want_qt, ldqt, want_st, &layout_t),
                 TESS_STATUS_SUCCESS);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    uint8_t *q = gpu_download(dq, qbytes + GPU_GUARD_BYTES), *qt_ = gpu_download(dqt, qtbytes + GPU_GUARD_BYTES);
    uint8_t *wq = gpu_download(want_q, qbytes), *wqt = gpu_download(want_qt, qtbytes);
    float *s = gpu_download(ds, sbytes + GPU_GUARD_BYTES), *st = gpu_download(dst, sbytes_t + GPU_GUARD_BYTES);
    *outside += (int)gpu_guard_touched((const unsigned char *)st, sbytes_t);
    float *ws = gpu_download(want_s, sbytes), *wst = gpu_download(want_st, sbytes_t);
    int bad = count_diff(qt_, wqt, cols, rows, ldqt, outside) +
              count_factor_diff(st, wst, &layout_t, shape_t[0], shape_t[1]);
    if (rowwise) {
        bad += count_diff(q, wq, rows, cols, ldq, outside) + count_factor_diff(s, ws, &layout, shape[0], shape[1]);
        *outside += (int)gpu_guard_touched((const unsigned char *)s, sbytes);
    }
    else
        for (size_t i = 0; i < qbytes + GPU_GUARD_BYTES; i++) /* no row-wise copy asked: q untouched */
            *outside += q[i] != GPU_POISON;
    free(hx), free(q), free(qt_), free(wq), free(wqt), free(s), free(st), free(ws), free(wst);
    cudaFree(dx), cudaFree(dxt), cudaFree(dq), cudaFree(dqt), cudaFree(want_q), cudaFree(want_qt);
    cudaFree(ds), cudaFree(dst), cudaFree(want_s), cudaFree(want_st);
    return bad;
}

/* Arguments tess_quantize_fp8_transposed must refuse, each with a status. */
static void test_cast_transpose_refusals(tess_handle h) {
    void *x = gpu_upload(NULL, 256 * 256 * 4), *q = gpu_upload(NULL, 256 * 256), *qt = gpu_upload(NULL, 256 * 256);
    float *s = gpu_upload(NULL, 4096), *st = gpu_upload(NULL, 4096);
    tess_scale_desc l, lt, lb, tensor = {TESS_SCALE_TENSOR, 0, 0, 0};
    int64_t shape[2];
    CHECK_STATUS(tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, 200, 100, &l, shape, NULL, NULL),
                 TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, 100, 200, &lt, shape, NULL, NULL),
                 TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_scale_layout_query(TESS_SCALE_BLOCK_128x128, 200, 100, &lb, shape, NULL, NULL),
                 TESS_STATUS_SUCCESS);
    const tess_dtype bf = TESS_DTYPE_BF16, e4 = TESS_DTYPE_E4M3;
#define REFUSED(status, ...) CHECK_STATUS(tess_quantize_fp8_transposed(__VA_ARGS__), status)
    REFUSED(TESS_STATUS_SUCCESS, h, 200, 100, bf, x, 100, e4, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_NOT_INITIALIZED, NULL, 200, 100, bf, x, 100, e4, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 0, 100, bf, x, 100, e4, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, NULL, 100, e4, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, x, 99, e4, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, x, 100, e4, q, 100, s, &l, NULL, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, x, 100, e4, q, 100, s, &l, qt, 199, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, x, 100, e4, q, 100, s, &l, qt, 200, NULL, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, x, 100, e4, q, 100, NULL, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, x, 100, e4, q, 99, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, (char *)x + 1, 100, e4, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_INVALID_VALUE, h, 200, 100, bf, x, 100, e4, q, 100, s, &l, qt, 200, (float *)((char *)st + 2),
            &lt);
    REFUSED(TESS_STATUS_NOT_SUPPORTED, h, 200, 100, e4, x, 100, e4, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_NOT_SUPPORTED, h, 200, 100, bf, x, 100, bf, q, 100, s, &l, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_NOT_SUPPORTED, h, 200, 100, bf, x, 100, e4, q, 100, s, &tensor, qt, 200, st, &lt);
    REFUSED(TESS_STATUS_NOT_SUPPORTED, h, 200, 100, bf, x, 100, e4, q, 100, s, &l, qt, 200, st, &tensor);
    REFUSED(TESS_STATUS_NOT_SUPPORTED, h, 200, 100, bf, x, 100, e4, q, 100, s, &lb, qt, 200, st, &lt); /* two modes */
    REFUSED(TESS_STATUS_SUCCESS, h, 200, 100, bf, x, 100, e4, NULL, 100, NULL, NULL, qt, 200, st, &lt);
#undef REFUSED
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaFree(x), cudaFree(q), cudaFree(qt), cudaFree(s), cudaFree(st);
}

static void test_cast_transpose(tess_handle h) {
    static const tess_dtype xs[3] = {TESS_DTYPE_F32, TESS_DTYPE_F16, TESS_DTYPE_BF16};
    int bad = 0, outside = 0, cases = 0;
    for (int trial = 0; trial < 36; trial++) {
        const tess_dtype xt = xs[trial % 3], qt = trial % 2 ? TESS_DTYPE_E4M3 : TESS_DTYPE_E5M2;
        const int64_t rows = trial < 2 ? 128 * (trial + 1) : gpu_pick_dim(&rng, 700),
                      cols = trial < 2 ? 256 : gpu_pick_dim(&rng, 900);
        const tess_scale_mode mode = trial % 4 == 3 ? TESS_SCALE_BLOCK_128x128 : TESS_SCALE_BLOCK_1x128;
        bad += cast_transpose_case(h, rows, cols, xt, qt, mode, trial % 5 != 4, tess_rng_range(&rng, 0, 3) != 0,
                                   &outside);
        cases++;
    }
    CHECKF(bad == 0 && outside == 0, "tess_quantize_fp8_transposed: %d wrong bytes or factors, %d written outside",
           bad, outside);
    printf("cast-transpose cases: %d (%d wrong, %d written outside)\n", cases, bad, outside);
    test_cast_transpose_refusals(h);
}

int main(void) {
    GPU_TEST_MAIN_START(h, workspace);
    gpu_timed("quantize", test_quantize, h);
    gpu_timed("transpose", test_transpose, h);
    gpu_timed("cast-transpose", test_cast_transpose, h);
    GPU_TEST_MAIN_END(h, workspace, "gpu_utilities");
}
