/* Matrix descriptor validation and addressing. */
#include <string.h>

#include "check.h"
#include "core/matrix.h"

static tess_matrix_desc desc(tess_dtype dt, tess_order order, int64_t rows, int64_t cols, int64_t ld) {
    tess_matrix_desc d = {dt, order, rows, cols, ld, 0};
    return d;
}

static void test_offsets(void) {
    tess_matrix_desc r = desc(TESS_DTYPE_BF16, TESS_ORDER_ROW, 3, 5, 8);
    tess_matrix_desc c = desc(TESS_DTYPE_BF16, TESS_ORDER_COL, 3, 5, 4);
    r.batch_stride = 100;
    c.batch_stride = 20;
    for (int64_t b = 0; b < 2; b++)
        for (int64_t i = 0; i < 3; i++)
            for (int64_t j = 0; j < 5; j++) {
                CHECK(tess_matrix_offset(&r, b, i, j) == b * 100 + i * 8 + j);
                CHECK(tess_matrix_offset(&c, b, i, j) == b * 20 + i + j * 4);
            }
    CHECK(tess_matrix_span(&r, 2) == 100 + 2 * 8 + 5);
    CHECK(tess_matrix_span(&c, 2) == 20 + 4 * 4 + 3);
}

static void test_rejections(void) {
    tess_matrix_desc d = desc(TESS_DTYPE_F16, TESS_ORDER_ROW, 4, 16, 16);
    CHECK_STATUS(tess_matrix_check(&d, 1, "A"), TESS_STATUS_SUCCESS);
    d.ld = 15;
    CHECK_STATUS(tess_matrix_check(&d, 1, "A"), TESS_STATUS_INVALID_VALUE);
    CHECKF(strstr(tess_last_error(), "ld=15") && strstr(tess_last_error(), ">= 16"), "%s", tess_last_error());
    d = desc(TESS_DTYPE_F16, TESS_ORDER_COL, 4, 16, 3);
    CHECK_STATUS(tess_matrix_check(&d, 1, "B"), TESS_STATUS_INVALID_VALUE);
    CHECK(strncmp(tess_last_error(), "B:", 2) == 0);
    d = desc((tess_dtype)5, TESS_ORDER_ROW, 4, 16, 16);
    CHECK_STATUS(tess_matrix_check(&d, 1, "A"), TESS_STATUS_INVALID_VALUE);
    d = desc(TESS_DTYPE_F16, (tess_order)2, 4, 16, 16);
    CHECK_STATUS(tess_matrix_check(&d, 1, "A"), TESS_STATUS_INVALID_VALUE);
    d = desc(TESS_DTYPE_F16, TESS_ORDER_ROW, 0, 16, 16);
    CHECK_STATUS(tess_matrix_check(&d, 1, "A"), TESS_STATUS_INVALID_VALUE);
    d = desc(TESS_DTYPE_F16, TESS_ORDER_ROW, 4, 16, 16);
    CHECK_STATUS(tess_matrix_check(&d, 0, "A"), TESS_STATUS_INVALID_VALUE);
    d.batch_stride = -1;
    CHECK_STATUS(tess_matrix_check(&d, 2, "A"), TESS_STATUS_INVALID_VALUE);
    /* Spans past 2^63 elements are refused, not wrapped. */
    d = desc(TESS_DTYPE_F16, TESS_ORDER_ROW, INT64_C(1) << 40, 16, INT64_C(1) << 30);
    CHECK_STATUS(tess_matrix_check(&d, 1, "A"), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "overflows") != NULL);
    d = desc(TESS_DTYPE_F16, TESS_ORDER_ROW, 1 << 20, 16, 16);
    d.batch_stride = INT64_C(1) << 50;
    CHECK_STATUS(tess_matrix_check(&d, 1 << 16, "A"), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_matrix_check(&d, 1 << 10, "A"), TESS_STATUS_SUCCESS);
    CHECK_STATUS(tess_matrix_check(NULL, 1, "A"), TESS_STATUS_INVALID_VALUE);
}

int main(void) {
    test_offsets();
    test_rejections();
    return check_finish("unit_matrix");
}
