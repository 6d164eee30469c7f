/* Random GEMM problems for tests; see problem.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/matrix.h"
#include "problem.h"

static const tess_dtype all_dtypes[] = {TESS_DTYPE_F32, TESS_DTYPE_F16, TESS_DTYPE_BF16, TESS_DTYPE_E4M3,
                                        TESS_DTYPE_E5M2};
static const tess_scale_mode all_modes[] = {TESS_SCALE_TENSOR, TESS_SCALE_OUTER_VEC, TESS_SCALE_BLOCK_1x128,
                                            TESS_SCALE_BLOCK_128x128};

static int64_t random_dim(tess_rng *r, int64_t max_dim) {
    switch (tess_rng_range(r, 0, 3)) {
    case 0: return 1;
    case 1: return tess_rng_range(r, 1, max_dim);
    case 2: return tess_rng_range(r, 1, max_dim / 8 + 1);
    default: {
        if (max_dim < 129)
            return tess_rng_range(r, 1, max_dim);
        const int64_t tiles = tess_rng_range(r, 1, max_dim / 128); /* drawn first, in every build */
        return 128 * tiles + tess_rng_range(r, -3, 3);
    }
    }
}

int64_t test_group_size(tess_rng *r, int64_t max, int64_t block, int64_t max_blocks, int64_t jitter) {
    switch (tess_rng_range(r, 0, 5)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return tess_rng_range(r, 2, 20);
    case 3: {
        const int64_t blocks = tess_rng_range(r, 1, max_blocks); /* drawn first, in every build */
        return block * blocks + tess_rng_range(r, -jitter, jitter);
    }
    default: return tess_rng_range(r, 0, max);
    }
}

/* A random layout for a rows x cols matrix within a batch. */
static tess_matrix_desc random_desc(tess_rng *r, tess_dtype dtype, int64_t rows, int64_t cols, int64_t batch,
                                    int allow_broadcast) {
    tess_matrix_desc d;
    d.dtype = dtype;
    d.order = tess_rng_range(r, 0, 1) ? TESS_ORDER_ROW : TESS_ORDER_COL;
    d.rows = rows;
    d.cols = cols;
    int64_t inner = d.order == TESS_ORDER_ROW ? cols : rows, outer = d.order == TESS_ORDER_ROW ? rows : cols;
    d.ld = inner + (tess_rng_range(r, 0, 2) ? 0 : tess_rng_range(r, 1, 9));
    d.batch_stride = outer * d.ld + tess_rng_range(r, 0, 7);
    if (batch > 1 && allow_broadcast && tess_rng_range(r, 0, 4) == 0)
        d.batch_stride = 0;
    return d;
}

void *test_matrix_random(const tess_matrix_desc *d, int64_t batch, tess_rng *r, size_t *bytes) {
    int64_t count = tess_matrix_span(d, batch);
    *bytes = tess_matrix_bytes(d, batch);
    void *p = malloc(*bytes);
    /* int8: integers spread over most of [-127, 127] (a unit normal would round to a handful) */
    tess_fill_normal(p, d->dtype, count, d->dtype == TESS_DTYPE_S8 ? 40.0 : 1.0, r);
    return p;
}

/* Positive factors in [0.25, 2), like real dequantization factors. */
static float *random_factors(tess_rng *r, int64_t count) {
    float *p = malloc(sizeof(float) * (size_t)count);
    for (int64_t i = 0; i < count; i++)
        p[i] = (float)(0.25 + 1.75 * tess_rng_uniform(r));
    return p;
}

float *test_scale_packed(tess_scale_operand *op, tess_rng *r, tess_scale_mode mode, int64_t outer, int64_t k,
                         int64_t batch, size_t *bytes) {
    memset(op, 0, sizeof *op);
    int64_t shape[2];
    tess_scale_layout_query(mode, outer, k, &op->layout, shape, NULL, NULL);
    if (mode == TESS_SCALE_BLOCK_128x128) {
        op->layout.stride_mn = (shape[1] + 3) / 4 * 4;
        op->layout.batch_stride = shape[0] * op->layout.stride_mn;
    }
    const int64_t count = batch * op->layout.batch_stride;
    *bytes = sizeof(float) * (size_t)count;
    return (float *)(op->data = random_factors(r, count));
}

float *test_scale_random(tess_scale_operand *op, tess_rng *r, tess_scale_mode mode, int64_t outer, int64_t k,
                         int64_t batch, int allow_none, size_t *bytes) {
    memset(op, 0, sizeof *op);
    tess_scale_desc *s = &op->layout;
    s->mode = mode;
    int64_t kb = (k + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK;
    int64_t rows = s->mode == TESS_SCALE_TENSOR ? 1
                   : s->mode == TESS_SCALE_BLOCK_128x128 ? (outer + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK
                                                          : outer;
    int64_t cols = s->mode == TESS_SCALE_BLOCK_1x128 || s->mode == TESS_SCALE_BLOCK_128x128 ? kb : 1;
    /* Half the layouts keep strides in whole 16 bytes (4 floats), which the
     * kernels read by TMA; the others are padded by any count. */
    const int whole_16 = tess_rng_range(r, 0, 1);
    const int64_t pad = tess_rng_range(r, 0, 3);
    if (tess_rng_range(r, 0, 1)) { /* outer index contiguous, as DeepGEMM and cuBLASLt VEC128 lay it out */
        s->stride_mn = 1;
        s->stride_k = whole_16 ? (rows + 3) / 4 * 4 + 4 * (pad % 2) : rows + pad;
    } else {
        s->stride_k = 1;
        s->stride_mn = whole_16 ? (cols + 3) / 4 * 4 + 4 * (pad % 2) : cols + pad;
    }
    int64_t per_batch = (rows - 1) * s->stride_mn + (cols - 1) * s->stride_k + 1;
    s->batch_stride = whole_16 ? (per_batch + 3) / 4 * 4 : per_batch + tess_rng_range(r, 0, 2);
    int64_t count = (batch - 1) * s->batch_stride + per_batch;
    float *p = random_factors(r, count);
    *bytes = sizeof(float) * (size_t)count;
    if (allow_none && tess_rng_range(r, 0, 5) == 0) { /* sometimes no scales at all: factors of 1 */
        free(p);
        p = NULL;
        *bytes = 0;
    }
    op->data = p;
    return p;
}

static const char *order_name(tess_order o) { return o == TESS_ORDER_ROW ? "row" : "col"; }

void test_problem_random(test_problem *t, tess_rng *r, int64_t max_dim) {
    memset(t, 0, sizeof *t);
    tess_ref_gemm *p = &t->p;
    p->m = random_dim(r, max_dim);
    p->n = random_dim(r, max_dim);
    p->k = random_dim(r, max_dim);
    p->batch = tess_rng_range(r, 0, 2) ? 1 : tess_rng_range(r, 2, 3);
    p->alpha = tess_rng_range(r, 0, 1) ? 1.0 : tess_rng_normal(r);
    p->beta = tess_rng_range(r, 0, 1) ? 0.0 : tess_rng_normal(r);
    p->a = random_desc(r, all_dtypes[tess_rng_range(r, 0, 4)], p->m, p->k, p->batch, 1);
    p->b = random_desc(r, all_dtypes[tess_rng_range(r, 0, 4)], p->k, p->n, p->batch, 1);
    p->c = random_desc(r, all_dtypes[tess_rng_range(r, 0, 2)], p->m, p->n, p->batch, 1);
    p->d = random_desc(r, all_dtypes[tess_rng_range(r, 0, 4)], p->m, p->n, p->batch, 0);
    t->a = test_matrix_random(&p->a, p->batch, r, &t->a_bytes);
    t->b = test_matrix_random(&p->b, p->batch, r, &t->b_bytes);
    t->c = test_matrix_random(&p->c, p->batch, r, &t->c_bytes);
    p->a_data = t->a;
    p->b_data = t->b;
    p->c_data = t->c;
    t->a_scale = test_scale_random(&p->a_scale, r, all_modes[tess_rng_range(r, 0, 3)], p->m, p->k, p->batch, 1,
                                   &t->a_scale_bytes);
    t->b_scale = test_scale_random(&p->b_scale, r, all_modes[tess_rng_range(r, 0, 3)], p->n, p->k, p->batch, 1,
                                   &t->b_scale_bytes);
    t->d_bytes = test_problem_d_bytes(t);
    snprintf(t->text, sizeof t->text,
             "M=%lld N=%lld K=%lld batch=%lld alpha=%.3g beta=%.3g A=%s:%s(ld %lld, scale %d) "
             "B=%s:%s(ld %lld, scale %d) C=%s D=%s:%s",
             (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->batch, p->alpha, p->beta,
             tess_dtype_name(p->a.dtype), order_name(p->a.order), (long long)p->a.ld,
             p->a_scale.data ? (int)p->a_scale.layout.mode : -1, tess_dtype_name(p->b.dtype), order_name(p->b.order),
             (long long)p->b.ld, p->b_scale.data ? (int)p->b_scale.layout.mode : -1, tess_dtype_name(p->c.dtype),
             tess_dtype_name(p->d.dtype), order_name(p->d.order));
}

size_t test_problem_d_bytes(const test_problem *t) {
    return tess_matrix_bytes(&t->p.d, t->p.batch);
}

void test_problem_free(test_problem *t) {
    free(t->a);
    free(t->b);
    free(t->c);
    free(t->a_scale);
    free(t->b_scale);
    memset(t, 0, sizeof *t);
}

dtype_rounding test_dtype_rounding(tess_dtype dtype) {
    dtype_rounding r = {0x1p-24, 0x1p-149, 0x1.fffffep127}; /* f32 */
    switch (dtype) {
    case TESS_DTYPE_F32: break;
    case TESS_DTYPE_F16: r.unit = 0x1p-11, r.tiny = 0x1p-24, r.max = 65504; break;
    case TESS_DTYPE_BF16: r.unit = 0x1p-8, r.tiny = 0x1p-133, r.max = 0x1.fep127; break;
    case TESS_DTYPE_E4M3: r.unit = 0x1p-4, r.tiny = 0x1p-9, r.max = 448; break;
    case TESS_DTYPE_E5M2: r.unit = 0x1p-3, r.tiny = 0x1p-16, r.max = 57344; break;
    case TESS_DTYPE_S8: r.unit = 0.5, r.tiny = 1, r.max = 127; break; /* integers: half a step at 1 */
    }
    return r;
}

void test_epilogue_random(tess_epilogue_desc *e, tess_rng *r, int64_t m, int64_t n, int64_t batch, int grouped) {
    static const tess_dtype types[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    memset(e, 0, sizeof *e);
    if (tess_rng_range(r, 0, 1))
        return;
    if (tess_rng_range(r, 0, 3)) {
        e->bias = grouped || tess_rng_range(r, 0, 2) ? TESS_BIAS_COLUMNS : TESS_BIAS_ROWS;
        e->bias_type = types[tess_rng_range(r, 0, 2)];
        const int64_t length = e->bias == TESS_BIAS_COLUMNS ? n : m;
        e->bias_batch_stride = batch > 1 && tess_rng_range(r, 0, 2) ? length + tess_rng_range(r, 0, 3) : 0;
    }
    e->activation = (tess_activation)tess_rng_range(r, 0, 4);
}

void *test_bias_random(const tess_epilogue_desc *e, tess_rng *r, int64_t m, int64_t n, int64_t batch, size_t *bytes) {
    *bytes = 0;
    if (e->bias == TESS_BIAS_NONE)
        return NULL;
    const int64_t length = e->bias == TESS_BIAS_COLUMNS ? n : m;
    const int64_t count = (batch - 1) * e->bias_batch_stride + length;
    const tess_matrix_desc v = {e->bias_type, TESS_ORDER_ROW, 1, count, count, 0};
    return test_matrix_random(&v, 1, r, bytes);
}

const char *test_epilogue_name(const tess_epilogue_desc *e, char *buf, size_t size) {
    static const char *const acts[] = {"", " relu", " gelu_tanh", " gelu_erf", " silu"};
    const int act = e->activation >= 0 && e->activation <= 4 ? (int)e->activation : 0;
    if (e->bias == TESS_BIAS_NONE)
        snprintf(buf, size, "%s", acts[act]);
    else
        snprintf(buf, size, " bias(%s %s, stride %lld)%s", e->bias == TESS_BIAS_COLUMNS ? "columns" : "rows",
                 tess_dtype_name(e->bias_type), (long long)e->bias_batch_stride, acts[act]);
    return buf;
}
