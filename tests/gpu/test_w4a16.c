/* The 4-bit weight kernels on the GPU:
 *  - tess_pack_int4 from each checkpoint format (ROWS, GPTQ, AWQ) of the
 *    same codes writes the same bytes, each code where
 *    tess_int4_packed_word says;
 *  - tess_gemm_w4a16 on random and edge problems (m 1..16, n any multiple
 *    of 16, k any multiple of the group, groups of 64 and 128, bf16 and f16
 *    x, f32/f16/bf16 scales, with and without zero points, bf16/f16/f32 D
 *    of either order and padded, bias and activation) against a float64
 *    sum with the exact weights (q - z) s, nothing written outside D, the
 *    same bits on a second run;
 *  - tess_gemm_w4a16_masked over experts (test_masked's comment);
 *  - tess_dequantize_int4 bit for bit against the host's rounding, in both
 *    16-bit types through its quad kernel (rows 16-byte aligned) and its
 *    element kernel, nothing written outside the rows;
 *  - refusals through the public calls (the rules themselves: unit_int4). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu_skip.h"
#include "int4_util.h"
#include "problem.h"
#include "kernels/int4/int4_layout.h"
#include "ref/convert.h"
#include "ref/ref_gemm.h"

static tess_rng rng;

/* Random codes 0..15 for an n x k weight. */
static uint8_t *random_codes(int64_t n, int64_t k) {
    uint8_t *q = malloc((size_t)(n * k));
    for (int64_t i = 0; i < n * k; i++)
        q[i] = (uint8_t)tess_rng_range(&rng, 0, 15);
    return q;
}

static void test_pack(tess_handle h) {
    for (int trial = 0; trial < 8; trial++) {
        const int64_t n = 16 * tess_rng_range(&rng, 1, trial < 4 ? 8 : 300), k = 64 * tess_rng_range(&rng, 1, 40);
        uint8_t *q = random_codes(n, k);
        const size_t bytes = (size_t)(n * k / 2);
        uint32_t *first = NULL;
        for (int format = TESS_INT4_ROWS; format <= TESS_INT4_AWQ; format++) {
            int32_t *src = int4_write_format(format, q, n, k);
            void *dsrc = gpu_upload(src, bytes);
            unsigned char *dpacked = gpu_poisoned(bytes);
            CHECK_STATUS(tess_pack_int4(h, (tess_int4_format)format, n, k, dsrc, dpacked), TESS_STATUS_SUCCESS);
            unsigned char *packed = malloc(bytes + GPU_GUARD_BYTES);
            CHECK(cudaMemcpy(packed, dpacked, bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost) == cudaSuccess);
            int bad = 0;
            for (int64_t row = 0; row < n; row++)
                for (int64_t col = 0; col < k; col++) {
                    int shift;
                    const int64_t w = tess_int4_packed_word(k, row, col, &shift);
                    bad += ((((const uint32_t *)packed)[w] >> shift) & 0xfu) != q[row * k + col];
                }
            CHECKF(bad == 0 && gpu_guard_touched(packed, bytes) == 0, "pack format %d, %lld x %lld: %d codes misplaced",
                   format, (long long)n, (long long)k, bad);
            if (!first)
                first = (uint32_t *)packed;
            else {
                CHECKF(memcmp(first, packed, bytes) == 0, "format %d packs other bytes than ROWS", format);
                free(packed);
            }
            free(src);
            cudaFree(dsrc), cudaFree(dpacked);
        }
        free(first), free(q);
    }
}

/* One random W4A16 problem and its host data. */
typedef struct w4a16_case {
    tess_w4a16_desc desc;
    int4_host_weight w;
    uint8_t *q, *zeros;
    void *scales, *x, *bias;
    size_t scale_bytes, zero_bytes, x_bytes, bias_bytes, d_bytes;
} w4a16_case;

/* A random problem; `fixed` ({m, n, k, group size, x f16}, or NULL) sets its shape and x's type,
 * else trial's edges or random ones. */
static w4a16_case random_case(int trial, const int64_t *fixed) {
    static const tess_dtype xs[2] = {TESS_DTYPE_BF16, TESS_DTYPE_F16};
    static const tess_dtype ds[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    static const tess_dtype ss[3] = {TESS_DTYPE_F32, TESS_DTYPE_F16, TESS_DTYPE_BF16};
    w4a16_case c;
    memset(&c, 0, sizeof c);
    tess_w4a16_desc *d = &c.desc;
    tess_w4a16_desc_init(d);
    d->group_size = tess_rng_range(&rng, 0, 2) ? 128 : 64;
    /* edges first: m 1, 8, 9, 16; n one block and tails past the CTAs' 128 and 256 rows; short K */
    d->m = trial < 4 ? (int64_t[]){1, 8, 9, 16}[trial] : tess_rng_range(&rng, 1, 16);
    /* every fifth trial a wide weight of short K: warps of two row blocks, K in few parts */
    const int wide = trial % 5 == 4;
    d->n = trial == 1 ? 16 : trial == 2 ? 272 : 16 * (wide ? tess_rng_range(&rng, 600, 1100) : tess_rng_range(&rng, 1, 400));
    d->k = trial == 3 ? d->group_size
                      : d->group_size * (wide ? tess_rng_range(&rng, 4, 12) : tess_rng_range(&rng, 1, 7168 / d->group_size));
    tess_dtype xt = xs[tess_rng_range(&rng, 0, 1)];
    if (fixed)
        d->m = fixed[0], d->n = fixed[1], d->k = fixed[2], d->group_size = fixed[3], xt = xs[fixed[4] != 0];
    const tess_dtype dt = ds[tess_rng_range(&rng, 0, 2)];
    const int64_t ldx = d->k + 8 * tess_rng_range(&rng, 0, 2);
    d->x = (tess_matrix_desc){xt, TESS_ORDER_ROW, d->m, d->k, ldx, 0};
    const tess_order dorder = tess_rng_range(&rng, 0, 3) ? TESS_ORDER_ROW : TESS_ORDER_COL;
    const int64_t inner = dorder == TESS_ORDER_ROW ? d->n : d->m;
    d->d = (tess_matrix_desc){dt, dorder, d->m, d->n, inner + tess_rng_range(&rng, 0, 3), 0};
    d->scale_type = ss[tess_rng_range(&rng, 0, 2)];
    d->ld_scales = d->n + tess_rng_range(&rng, 0, 5);
    d->zero_points = tess_rng_range(&rng, 0, 2) != 0;
    d->ld_zeros = d->zero_points ? d->n + tess_rng_range(&rng, 0, 5) : 0;
    if (tess_rng_range(&rng, 0, 2) == 0) {
        d->epilogue.bias = TESS_BIAS_COLUMNS;
        d->epilogue.bias_type = ss[tess_rng_range(&rng, 0, 2)];
    }
    d->epilogue.activation = (tess_activation)(tess_rng_range(&rng, 0, 1) ? 0 : tess_rng_range(&rng, 1, 4));

    const int64_t groups = d->k / d->group_size;
    c.q = random_codes(d->n, d->k);
    c.scale_bytes = (size_t)(groups * d->ld_scales) * tess_dtype_size(d->scale_type);
    c.scales = malloc(c.scale_bytes);
    /* scales around 1/64 (a weight of spread about 0.1), each group's own */
    for (int64_t i = 0; i < groups * d->ld_scales; i++)
        tess_store_from_f32(d->scale_type, c.scales, i, (float)(0.004 + 0.03 * tess_rng_uniform(&rng)));
    if (d->zero_points) {
        c.zero_bytes = (size_t)(groups * d->ld_zeros);
        c.zeros = malloc(c.zero_bytes);
        for (size_t i = 0; i < c.zero_bytes; i++)
            c.zeros[i] = (uint8_t)tess_rng_range(&rng, 0, 15);
    }
    c.x = test_matrix_random(&d->x, 1, &rng, &c.x_bytes);
    if (d->epilogue.bias) {
        c.bias_bytes = (size_t)d->n * tess_dtype_size(d->epilogue.bias_type);
        c.bias = malloc(c.bias_bytes);
        tess_fill_normal(c.bias, d->epilogue.bias_type, d->n, 1.0, &rng);
    }
    c.d_bytes = tess_matrix_bytes(&d->d, 1);
    c.w = (int4_host_weight){d->n, d->k, d->group_size, c.q, d->scale_type, c.scales, d->ld_scales, c.zeros,
                             d->ld_zeros};
    return c;
}

static void free_case(w4a16_case *c) { free(c->q), free(c->zeros), free(c->scales), free(c->x), free(c->bias); }

/* Whether D's row (weight row) `row` is checked: all of them for small
 * problems; else 96 drawn ones, with the first, the last and those at the
 * CTAs' 128- and 256-row edges. */
static int checked_row(const tess_w4a16_desc *d, int64_t row, const uint8_t *drawn) {
    if (d->m * d->n * d->k <= 20000000)
        return 1;
    return row == 0 || row == d->n - 1 || row % 128 == 127 || row % 128 == 0 || drawn[row];
}

/* Checks D (a host copy of the poisoned buffer) against float64 sums with
 * the exact weights (the GEMV never rounds them); returns the worst error over its allowance, and
 * in *outside the bytes written past D's rows and columns. */
static double check_output(const w4a16_case *c, const unsigned char *out, int *outside) {
    const tess_w4a16_desc *d = &c->desc;
    uint8_t *drawn = calloc((size_t)d->n, 1);
    for (int i = 0; i < 96; i++)
        drawn[tess_rng_range(&rng, 0, d->n - 1)] = 1;
    double *w = malloc((size_t)d->k * sizeof *w);
    /* D rounds once (its type's unit), the float32 sums add k products (a bound well above their error) */
    const double unit = d->d.dtype == TESS_DTYPE_F32 ? 0.0 : d->d.dtype == TESS_DTYPE_F16 ? 0x1p-11 : 0x1p-8;
    double worst = 0.0;
    for (int64_t row = 0; row < d->n; row++) {
        if (!checked_row(d, row, drawn))
            continue;
        for (int64_t col = 0; col < d->k; col++)
            w[col] = int4_exact(&c->w, row, col);
        for (int64_t t = 0; t < d->m; t++) {
            double sum = 0.0, mag = 0.0;
            for (int64_t col = 0; col < d->k; col++) {
                const double p = w[col] * tess_load_as_f32(d->x.dtype, c->x, t * d->x.ld + col);
                sum += p, mag += fabs(p);
            }
            if (d->epilogue.bias)
                sum += tess_load_as_f32(d->epilogue.bias_type, c->bias, row);
            const double want = tess_ref_activate(d->epilogue.activation, sum);
            const double got = tess_load_as_f32(d->d.dtype, out, tess_matrix_offset(&d->d, 0, t, row));
            const double e = fabs(got - want) / (unit * fabs(want) + 1e-5 * (mag + 1.0));
            worst = isnan(got) ? INFINITY : e > worst ? e : worst;
        }
    }
    /* the padding of D's leading dimension and the guard after D: untouched */
    *outside = (int)gpu_guard_touched(out, c->d_bytes);
    const int row_major = d->d.order == TESS_ORDER_ROW;
    const int64_t outer = row_major ? d->m : d->n, inner = row_major ? d->n : d->m;
    const int64_t es = (int64_t)tess_dtype_size(d->d.dtype);
    for (int64_t o = 0; o + 1 < outer; o++) /* the last row or column has no padding within D's span */
        for (int64_t i = inner * es; i < d->d.ld * es; i++)
            *outside += out[o * d->d.ld * es + i] != GPU_POISON;
    free(w), free(drawn);
    return worst;
}

/* Runs case c under an SM budget (0: none) and checks D against the reference (twice: the same
 * bits), the bytes around D, and the dequantizer's bits through both of its kernels. */
static void check_case(tess_handle h, w4a16_case *cp, int budget) {
    w4a16_case c = *cp;
    CHECK_STATUS(tess_set_sm_budget(h, budget), TESS_STATUS_SUCCESS);
    const tess_w4a16_desc *d = &c.desc;
    int32_t *src = int4_write_format(TESS_INT4_ROWS, c.q, d->n, d->k);
    void *dsrc = gpu_upload(src, (size_t)(d->n * d->k / 2)), *dw = gpu_upload(NULL, (size_t)(d->n * d->k / 2));
    CHECK_STATUS(tess_pack_int4(h, TESS_INT4_ROWS, d->n, d->k, dsrc, dw), TESS_STATUS_SUCCESS);
    void *dx = gpu_upload(c.x, c.x_bytes), *ds = gpu_upload(c.scales, c.scale_bytes);
    uint8_t *dz = d->zero_points ? gpu_upload(c.zeros, c.zero_bytes) : NULL;
    void *dbias = c.bias ? gpu_upload(c.bias, c.bias_bytes) : NULL;
    tess_epilogue_ptrs ep = {sizeof ep, dbias, NULL, NULL, NULL, NULL, NULL};
    unsigned char *dd = gpu_poisoned(c.d_bytes);
    unsigned char *out = malloc(c.d_bytes + GPU_GUARD_BYTES), *again = malloc(c.d_bytes + GPU_GUARD_BYTES);
    CHECK_STATUS(tess_gemm_w4a16(h, d, dx, dw, ds, dz, dd, &ep), TESS_STATUS_SUCCESS);
    CHECK(cudaMemcpy(out, dd, c.d_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK_STATUS(tess_gemm_w4a16(h, d, dx, dw, ds, dz, dd, &ep), TESS_STATUS_SUCCESS);
    CHECK(cudaMemcpy(again, dd, c.d_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost) == cudaSuccess);
    int outside = 0;
    const double worst = check_output(&c, out, &outside);
    CHECKF(worst <= 1.0 && outside == 0 && memcmp(out, again, c.d_bytes) == 0,
           "m=%lld n=%lld k=%lld group %lld (SM budget %d), x %s, scales %s, zeros %d, d %s (%s, ld %lld), bias %d, "
           "act %d: error %.3g of its allowance, %d bytes written outside D, second run %s",
           (long long)d->m, (long long)d->n, (long long)d->k, (long long)d->group_size, budget,
           tess_dtype_name(d->x.dtype), tess_dtype_name(d->scale_type), (int)d->zero_points,
           tess_dtype_name(d->d.dtype), d->d.order == TESS_ORDER_ROW ? "row" : "col", (long long)d->d.ld,
           d->epilogue.bias != 0, (int)d->epilogue.activation, worst, outside,
           memcmp(out, again, c.d_bytes) ? "differs" : "equal");

    /* the dequantized weight, bit for bit, in x's type and the other, through the quad kernel
     * (rows 16-byte aligned: o = 0, 1) and the element kernel (rows 2 bytes off 16: o = 2, 3);
     * the rows' padding, the guard after the buffer and the bytes before a skewed start untouched */
    const tess_dtype other = d->x.dtype == TESS_DTYPE_BF16 ? TESS_DTYPE_F16 : TESS_DTYPE_BF16;
    for (int o = 0; o < 4; o++) {
        const tess_dtype ot = o % 2 ? other : d->x.dtype;
        const int64_t skew = o >= 2, ld = d->k + (o == 1 ? 8 : o >= 2 ? 3 : 0);
        const size_t bytes = (size_t)(d->n * ld + skew) * 2;
        unsigned char *dout = gpu_poisoned(bytes);
        CHECK_STATUS(tess_dequantize_int4(h, d, dw, ds, dz, ot, (uint16_t *)dout + skew, ld),
                     TESS_STATUS_SUCCESS);
        unsigned char *copy = malloc(bytes + GPU_GUARD_BYTES);
        CHECK(cudaMemcpy(copy, dout, bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost) == cudaSuccess);
        const uint16_t *host = (const uint16_t *)copy + skew;
        int bad = 0;
        for (int64_t row = 0; row < d->n; row++)
            for (int64_t col = 0; col < d->k; col++) {
                uint16_t want[2]; /* room for any type's element */
                tess_store_from_f32(ot, want, 0, int4_dequantized(&c.w, row, col, d->x.dtype));
                bad += host[row * ld + col] != want[0];
            }
        int64_t strays = gpu_guard_touched(copy, bytes) + (skew && ((const uint16_t *)copy)[0] != 0xffff);
        for (int64_t row = 0; row < d->n; row++)
            for (int64_t col = d->k; col < ld; col++)
                strays += host[row * ld + col] != (uint16_t)(GPU_POISON * 0x101);
        CHECKF(bad == 0 && strays == 0, "dequantize %lld x %lld into %s (ld %lld, skew %lld): %d elements "
               "differ, %lld written outside", (long long)d->n, (long long)d->k, tess_dtype_name(ot),
               (long long)ld, (long long)skew, bad, (long long)strays);
        free(copy);
        cudaFree(dout);
    }
    free(src), free(out), free(again);
    cudaFree(dsrc), cudaFree(dw), cudaFree(dx), cudaFree(ds), cudaFree(dz), cudaFree(dbias), cudaFree(dd);
}

static void test_gemv(tess_handle h) {
    for (int trial = 0; trial < 60; trial++) {
        w4a16_case c = random_case(trial, NULL);
        /* every fourth trial under an SM budget of 2-16: few CTAs, each taking several row chunks */
        check_case(h, &c, trial % 4 == 3 ? (int)tess_rng_range(&rng, 2, 16) : 0);
        free_case(&c);
    }
    CHECK_STATUS(tess_set_sm_budget(h, 0), TESS_STATUS_SUCCESS);
}

/* The GEMV's every kernel shape, whatever the device: under a budget of 8 SMs the launcher's
 * choice depends on the problem alone (w4a16_gemv.cu's choose_grid): each (row blocks a warp,
 * K parts) pair's problem, then K parts of unequal groups (9 groups in 8 parts) and a budget of 2
 * (CTAs looping over row chunks), each at 1 and 16 tokens (one and two token tiles), bf16 and
 * f16 x, groups of 64. */
static void test_gemv_shapes(tess_handle h) {
    static const int64_t shapes[][3] = {
        /* n, k, budget: (1, 1) (1, 2) (1, 4) (1, 8) (2, 1) (2, 2) (2, 4) (2, 8) */
        {16, 64, 8},   {16, 128, 8},  {16, 256, 8},  {16, 512, 8},
        {1040, 64, 8}, {528, 128, 8}, {272, 256, 8}, {144, 512, 8},
        {16, 576, 8},  {1040, 64, 2}, /* parts of 1 and 2 groups; 5 row chunks on 2 CTAs */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int m = 1; m <= 16; m += 15)
            for (int f16 = 0; f16 < 2; f16++) {
                const int64_t fixed[5] = {m, shapes[i][0], shapes[i][1], 64, f16};
                w4a16_case c = random_case(0, fixed);
                check_case(h, &c, (int)shapes[i][2]);
                free_case(&c);
            }
    CHECK_STATUS(tess_set_sm_budget(h, 0), TESS_STATUS_SUCCESS);
}

/* Experts (tess_gemm_w4a16_masked): G random experts of their own codes, scales and zero points at
 * random group strides (0: packed), x and D batches with gaps, masked_m drawn past both ends of
 * [0, m] (clamped), a bias per expert, SM budgets. Each expert's first masked_m rows against
 * float64 sums with its exact weights; every other byte of D's buffer untouched; the stacked
 * packing the header promises (one tess_pack_int4 of G n rows) the same bytes as per expert. */
static void test_masked(tess_handle h) {
    static const tess_dtype x_types[2] = {TESS_DTYPE_BF16, TESS_DTYPE_F16};
    static const tess_dtype d_types[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    static const tess_dtype s_types[3] = {TESS_DTYPE_F32, TESS_DTYPE_F16, TESS_DTYPE_BF16};
    for (int trial = 0; trial < 16; trial++) {
        tess_w4a16_desc d;
        tess_w4a16_desc_init(&d);
        const int64_t g_count = trial == 0 ? 1 : tess_rng_range(&rng, 1, 6);
        d.groups = g_count, d.expected_groups = tess_rng_range(&rng, 0, g_count);
        d.group_size = tess_rng_range(&rng, 0, 1) ? 128 : 64;
        d.m = trial == 1 ? 16 : tess_rng_range(&rng, 1, 16);
        d.n = 16 * tess_rng_range(&rng, 1, trial % 3 == 2 ? 200 : 30);
        d.k = d.group_size * tess_rng_range(&rng, 1, 2560 / d.group_size); /* up to 2560: K parts of many groups */
        const int64_t m = d.m, n = d.n, k = d.k, groups = k / d.group_size, packed = n * k / 2;
        d.x = (tess_matrix_desc){x_types[tess_rng_range(&rng, 0, 1)], TESS_ORDER_ROW, m, k, k + 8 * tess_rng_range(&rng, 0, 1), 0};
        /* every fifth trial one x for all experts (batch stride 0); every third a column-major D */
        d.x.batch_stride = trial % 5 == 4 ? 0 : m * d.x.ld + 8 * tess_rng_range(&rng, 0, 2);
        const tess_order d_order = trial % 3 == 1 ? TESS_ORDER_COL : TESS_ORDER_ROW;
        d.d = (tess_matrix_desc){d_types[tess_rng_range(&rng, 0, 2)], d_order, m, n,
                                 (d_order == TESS_ORDER_ROW ? n : m) + tess_rng_range(&rng, 0, 3), 0};
        d.d.batch_stride = tess_matrix_span(&d.d, 1) + tess_rng_range(&rng, 0, 5);
        d.scale_type = s_types[tess_rng_range(&rng, 0, 2)];
        d.ld_scales = n + tess_rng_range(&rng, 0, 3);
        d.zero_points = tess_rng_range(&rng, 0, 1);
        d.ld_zeros = d.zero_points ? n + tess_rng_range(&rng, 0, 3) : 0;
        d.w_group_stride = tess_rng_range(&rng, 0, 1) ? 0 : packed + 16 * tess_rng_range(&rng, 1, 8);
        d.scales_group_stride = tess_rng_range(&rng, 0, 1) ? 0 : groups * d.ld_scales + tess_rng_range(&rng, 1, 7);
        d.zeros_group_stride = d.zero_points && tess_rng_range(&rng, 0, 1) ? groups * d.ld_zeros + 3 : 0;
        if (tess_rng_range(&rng, 0, 1)) {
            d.epilogue.bias = TESS_BIAS_COLUMNS, d.epilogue.bias_type = s_types[tess_rng_range(&rng, 0, 2)];
            d.epilogue.bias_batch_stride = tess_rng_range(&rng, 0, 3) ? n + tess_rng_range(&rng, 0, 4) : 0;
        }
        d.epilogue.activation = (tess_activation)(tess_rng_range(&rng, 0, 1) ? 0 : tess_rng_range(&rng, 1, 4));
        /* every other trial under an SM budget of 2-16: the CTAs take (expert, row chunk) items in turn */
        const int budget = trial % 2 ? (int)tess_rng_range(&rng, 2, 16) : 0;
        CHECK_STATUS(tess_set_sm_budget(h, budget), TESS_STATUS_SUCCESS);
        const int64_t w_stride = d.w_group_stride ? d.w_group_stride : packed;
        const int64_t s_stride = d.scales_group_stride ? d.scales_group_stride : groups * d.ld_scales;
        const int64_t z_stride = d.zeros_group_stride ? d.zeros_group_stride : groups * d.ld_zeros;
        const size_t es = tess_dtype_size(d.scale_type);

        /* the host's experts: codes [G][n][k], the strided scales, zero points, x, bias and masked_m */
        uint8_t *q = random_codes(g_count * n, k);
        const int64_t scale_count = (g_count - 1) * s_stride + groups * d.ld_scales;
        void *scales = malloc((size_t)scale_count * es);
        for (int64_t i = 0; i < scale_count; i++)
            tess_store_from_f32(d.scale_type, scales, i, (float)(0.004 + 0.03 * tess_rng_uniform(&rng)));
        const int64_t zero_count = d.zero_points ? (g_count - 1) * z_stride + groups * d.ld_zeros : 0;
        uint8_t *zeros = d.zero_points ? malloc((size_t)zero_count) : NULL;
        for (int64_t i = 0; i < zero_count; i++)
            zeros[i] = (uint8_t)tess_rng_range(&rng, 0, 15);
        size_t x_bytes = 0, bias_bytes = 0;
        void *x = test_matrix_random(&d.x, g_count, &rng, &x_bytes), *bias = NULL;
        if (d.epilogue.bias) {
            const int64_t count = (g_count - 1) * d.epilogue.bias_batch_stride + n;
            bias_bytes = (size_t)count * tess_dtype_size(d.epilogue.bias_type);
            bias = malloc(bias_bytes);
            tess_fill_normal(bias, d.epilogue.bias_type, count, 1.0, &rng);
        }
        int32_t masked[6] = {0};
        for (int64_t g = 0; g < g_count; g++)
            masked[g] = (int32_t)(g == 0 && trial == 1 ? 16 : tess_rng_range(&rng, -2, m + 3));

        /* the device's: each expert packed at its stride (and all at once, where packed back to back) */
        const size_t w_bytes = (size_t)((g_count - 1) * w_stride + packed);
        unsigned char *dw = gpu_poisoned(w_bytes);
        int32_t *src = int4_write_format(TESS_INT4_ROWS, q, g_count * n, k);
        void *dsrc = gpu_upload(src, (size_t)(g_count * packed));
        for (int64_t g = 0; g < g_count; g++)
            CHECK_STATUS(tess_pack_int4(h, TESS_INT4_ROWS, n, k, (const int32_t *)dsrc + g * packed / 4, dw + g * w_stride),
                         TESS_STATUS_SUCCESS);
        if (w_stride == packed) {
            void *stacked = gpu_upload(NULL, w_bytes);
            CHECK_STATUS(tess_pack_int4(h, TESS_INT4_ROWS, g_count * n, k, dsrc, stacked), TESS_STATUS_SUCCESS);
            unsigned char *a = malloc(w_bytes), *b = malloc(w_bytes);
            CHECK(cudaMemcpy(a, dw, w_bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
            CHECK(cudaMemcpy(b, stacked, w_bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
            CHECKF(memcmp(a, b, w_bytes) == 0, "%lld experts packed at once differ from one by one", (long long)g_count);
            free(a), free(b), cudaFree(stacked);
        }
        void *dx = gpu_upload(x, x_bytes), *ds = gpu_upload(scales, (size_t)scale_count * es);
        uint8_t *dz = zeros ? gpu_upload(zeros, (size_t)zero_count) : NULL;
        void *dbias = bias ? gpu_upload(bias, bias_bytes) : NULL, *dm = gpu_upload(masked, sizeof masked);
        const size_t d_bytes = tess_matrix_bytes(&d.d, g_count);
        unsigned char *dd = gpu_poisoned(d_bytes), *out = malloc(d_bytes + GPU_GUARD_BYTES);
        tess_epilogue_ptrs ep = {sizeof ep, dbias, NULL, NULL, NULL, NULL, NULL};
        CHECK_STATUS(tess_gemm_w4a16_masked(h, &d, dm, dx, dw, ds, dz, dd, &ep), TESS_STATUS_SUCCESS);
        CHECK(cudaMemcpy(out, dd, d_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost) == cudaSuccess);

        /* each expert's rows against float64; every byte no expert row owns still poisoned */
        const double unit = d.d.dtype == TESS_DTYPE_F32 ? 0.0 : d.d.dtype == TESS_DTYPE_F16 ? 0x1p-11 : 0x1p-8;
        unsigned char *owned = calloc(d_bytes, 1);
        double worst = 0.0, *w = malloc((size_t)k * sizeof *w);
        for (int64_t g = 0; g < g_count; g++) {
            const int64_t rows = masked[g] < 0 ? 0 : masked[g] > m ? m : masked[g];
            const int4_host_weight hw = {n, k, d.group_size, q + g * n * k, d.scale_type,
                                         (const char *)scales + g * s_stride * (int64_t)es, d.ld_scales,
                                         zeros ? zeros + g * z_stride : NULL, d.ld_zeros};
            for (int64_t row = 0; row < n; row++) {
                const int checked = n <= 64 || row % 53 == 0 || row == n - 1;
                if (checked)
                    for (int64_t col = 0; col < k; col++)
                        w[col] = int4_exact(&hw, row, col);
                for (int64_t t = 0; t < rows; t++) {
                    const int64_t at = tess_matrix_offset(&d.d, g, t, row);
                    memset(owned + at * (int64_t)tess_dtype_size(d.d.dtype), 1, tess_dtype_size(d.d.dtype));
                    if (!checked)
                        continue;
                    double sum = 0.0, mag = 0.0;
                    for (int64_t col = 0; col < k; col++) {
                        const double p = w[col] * tess_load_as_f32(d.x.dtype, x, tess_matrix_offset(&d.x, g, t, col));
                        sum += p, mag += fabs(p);
                    }
                    if (bias)
                        sum += tess_load_as_f32(d.epilogue.bias_type, bias, g * d.epilogue.bias_batch_stride + row);
                    const double want = tess_ref_activate(d.epilogue.activation, sum);
                    const double got = tess_load_as_f32(d.d.dtype, out, at);
                    const double e = fabs(got - want) / (unit * fabs(want) + 1e-5 * (mag + 1.0));
                    worst = isnan(got) ? INFINITY : e > worst ? e : worst;
                }
            }
        }
        int64_t strays = gpu_guard_touched(out, d_bytes);
        for (size_t i = 0; i < d_bytes; i++)
            strays += !owned[i] && out[i] != GPU_POISON;
        CHECKF(worst <= 1.0 && strays == 0,
               "masked: %lld experts (%lld expected) m=%lld n=%lld k=%lld group %lld (SM budget %d), strides w %lld "
               "scales %lld zeros %lld, x %s, scales %s, zeros %d, d %s, bias %d (stride %lld), act %d: error %.3g of "
               "its allowance, %lld bytes written outside the experts' rows",
               (long long)g_count, (long long)d.expected_groups, (long long)m, (long long)n, (long long)k,
               (long long)d.group_size, budget, (long long)d.w_group_stride, (long long)d.scales_group_stride,
               (long long)d.zeros_group_stride, tess_dtype_name(d.x.dtype), tess_dtype_name(d.scale_type),
               (int)d.zero_points, tess_dtype_name(d.d.dtype), d.epilogue.bias != 0,
               (long long)d.epilogue.bias_batch_stride, (int)d.epilogue.activation, worst, (long long)strays);
        free(q), free(scales), free(zeros), free(x), free(bias), free(src), free(out), free(owned), free(w);
        cudaFree(dw), cudaFree(dsrc), cudaFree(dx), cudaFree(ds), cudaFree(dz), cudaFree(dbias), cudaFree(dm);
        cudaFree(dd);
    }
    CHECK_STATUS(tess_set_sm_budget(h, 0), TESS_STATUS_SUCCESS);
}

/* The public calls refuse before touching the device: a dead handle, m past
 * the GEMV, a NULL descriptor, an old struct_size. */
static void test_refusals(tess_handle h) {
    tess_w4a16_desc d;
    tess_w4a16_desc_init(&d);
    d.m = 17, d.n = 256, d.k = 256;
    d.x = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, 17, 256, 256, 0};
    d.d = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, 17, 256, 256, 0};
    d.scale_type = TESS_DTYPE_F16, d.ld_scales = 256;
    void *x = gpu_upload(NULL, 17 * 256 * 2), *w = gpu_upload(NULL, 256 * 128), *s = gpu_upload(NULL, 4 * 256 * 2);
    void *out = gpu_upload(NULL, 17 * 256 * 2);
    CHECK_STATUS(tess_gemm_w4a16(h, &d, x, w, s, NULL, out, NULL), TESS_STATUS_NOT_SUPPORTED);
    CHECK(strstr(tess_last_error(), "tess_dequantize_int4") != NULL);
    d.m = 16, d.x.rows = d.d.rows = 16;
    CHECK_STATUS(tess_gemm_w4a16(NULL, &d, x, w, s, NULL, out, NULL), TESS_STATUS_NOT_INITIALIZED);
    CHECK_STATUS(tess_gemm_w4a16(h, NULL, x, w, s, NULL, out, NULL), TESS_STATUS_INVALID_VALUE);
    tess_w4a16_desc old = d;
    old.struct_size = 8;
    CHECK_STATUS(tess_gemm_w4a16(h, &old, x, w, s, NULL, out, NULL), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_pack_int4(h, TESS_INT4_GPTQ, 256, 96, w, w), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_dequantize_int4(h, &d, w, s, NULL, TESS_DTYPE_F32, out, 256), TESS_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(tess_dequantize_int4(h, &d, w, s, NULL, TESS_DTYPE_BF16, out, 255), TESS_STATUS_INVALID_VALUE);
    tess_w4a16_desc experts = d;
    experts.groups = 2; /* one weight at a time */
    CHECK_STATUS(tess_dequantize_int4(h, &experts, w, s, NULL, TESS_DTYPE_BF16, out, 256), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_gemm_w4a16(h, &experts, x, w, s, NULL, out, NULL), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_gemm_w4a16(h, &d, x, w, s, NULL, out, NULL), TESS_STATUS_SUCCESS);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaFree(x), cudaFree(w), cudaFree(s), cudaFree(out);
}

int main(void) {
    GPU_TEST_MAIN_START(h, workspace);
    gpu_timed("pack", test_pack, h);
    gpu_timed("gemv", test_gemv, h);
    gpu_timed("gemv shapes", test_gemv_shapes, h);
    gpu_timed("masked", test_masked, h);
    gpu_timed("refusals", test_refusals, h);
    GPU_TEST_MAIN_END(h, workspace, "gpu_w4a16");
}
