/* tess_gemm on random problems against the GPU reference GEMM (float32
 * accumulation, unrounded f32 output): every layout (NN, NT, TN, TT), bf16
 * and f16 inputs, bf16/f16/f32 D in either order, beta != 0 with C of any
 * type and order (also C == D, in place), batches (strided and shared
 * operands), ragged and tiny sizes (1 included), and every plan. D is
 * poisoned before each run; every element is checked, and neither D's padding
 * nor a guard region after it may be written. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/matrix.h"
#include "gpu_skip.h"
#include "problem.h"
#include "ref/convert.h"

/* Guard bytes after D's storage: a write there is a write outside the output. */
#define GUARD_BYTES 4096

static tess_rng rng;

static int64_t pick_dim(int64_t max) {
    switch (tess_rng_range(&rng, 0, 5)) {
    case 0: return 1;
    case 1: return tess_rng_range(&rng, 2, 17);
    case 2: return 128 * tess_rng_range(&rng, 1, max / 128) + tess_rng_range(&rng, -2, 2);
    case 3: return 256 * tess_rng_range(&rng, 1, max / 256);
    default: return tess_rng_range(&rng, 1, max);
    }
}

/* A layout for rows x cols with a leading dimension padded to 8 elements (+ 0, 8 or 16). */
static tess_matrix_desc layout(tess_dtype t, int64_t rows, int64_t cols, int64_t batch, int order_choice) {
    tess_matrix_desc d = {t, order_choice ? TESS_ORDER_ROW : TESS_ORDER_COL, rows, cols, 0, 0};
    int64_t inner = order_choice ? cols : rows, outer = order_choice ? rows : cols;
    d.ld = (inner + 7) / 8 * 8 + 8 * tess_rng_range(&rng, 0, 2);
    d.batch_stride = batch > 1 ? (outer * d.ld + 7) / 8 * 8 + 8 * tess_rng_range(&rng, 0, 1) : 0;
    return d;
}

static void *upload(const void *host, size_t bytes) {
    void *dev = NULL;
    cudaMalloc(&dev, bytes ? bytes : 1);
    if (host && bytes)
        cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    return dev;
}

static void *random_matrix(const tess_matrix_desc *d, int64_t batch, size_t *bytes) {
    int64_t count = tess_matrix_span(d, batch);
    *bytes = (size_t)count * tess_dtype_size(d->dtype);
    void *h = malloc(*bytes);
    tess_fill_normal(h, d->dtype, count, 1.0, &rng);
    return h;
}

typedef struct case_stats {
    int runs, failures;
} case_stats;

/* Runs one problem with one plan (plan_index < 0: the heuristic's) and checks it. */
static void run_case(tess_handle h, tess_gemm_desc *g, int plan_index, int in_place, case_stats *st) {
    size_t a_bytes, b_bytes, c_bytes = 0;
    void *ha = random_matrix(&g->a, g->batch, &a_bytes), *hb = random_matrix(&g->b, g->batch, &b_bytes);
    void *hc = g->beta != 0.0f || in_place ? random_matrix(&g->c, g->batch, &c_bytes) : NULL;
    size_t d_bytes = (size_t)tess_matrix_span(&g->d, g->batch) * tess_dtype_size(g->d.dtype);
    void *da = upload(ha, a_bytes), *db = upload(hb, b_bytes), *dc = hc ? upload(hc, c_bytes) : NULL;
    unsigned char *dd = upload(NULL, d_bytes + GUARD_BYTES);
    if (in_place) { /* C is D: the same buffer, pre-filled with C */
        cudaMemset(dd, 0xff, d_bytes + GUARD_BYTES);
        cudaMemcpy(dd, hc, c_bytes, cudaMemcpyHostToDevice);
    } else {
        cudaMemset(dd, 0xff, d_bytes + GUARD_BYTES); /* NaN in every dtype */
    }

    /* The reference: float32 accumulation into an unrounded f32 D, column-major. */
    tess_ref_gemm ref;
    memset(&ref, 0, sizeof ref);
    ref.m = g->m, ref.n = g->n, ref.k = g->k, ref.batch = g->batch, ref.alpha = g->alpha, ref.beta = g->beta;
    ref.a = g->a, ref.b = g->b, ref.c = g->c;
    ref.a_data = da, ref.b_data = db, ref.c_data = in_place ? dd : dc;
    tess_matrix_desc rd = {TESS_DTYPE_F32, TESS_ORDER_COL, g->m, g->n, g->m, g->m * g->n};
    ref.d = rd;
    float *dref = upload(NULL, sizeof(float) * (size_t)(g->m * g->n * g->batch));
    CHECK_STATUS(tess_ref_gemm_gpu(&ref, dref, NULL), TESS_STATUS_SUCCESS);
    cudaDeviceSynchronize(); /* the reference read C before D is overwritten in place */

    tess_plan plans[8], *plan = NULL;
    int count = 0;
    CHECK_STATUS(tess_gemm_plans(h, g, plans, 8, &count), TESS_STATUS_SUCCESS);
    if (plan_index >= 0 && plan_index < count)
        plan = &plans[plan_index];
    tess_status s = tess_gemm(h, g, plan, da, db, in_place ? dd : dc, dd);
    cudaError_t err = cudaDeviceSynchronize();
    char what[320];
    snprintf(what, sizeof what, "M=%lld N=%lld K=%lld batch=%lld A %s B %s D %s:%s beta=%g%s plan %s",
             (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch,
             g->a.order == TESS_ORDER_ROW ? "row" : "col", g->b.order == TESS_ORDER_ROW ? "row" : "col",
             tess_dtype_name(g->d.dtype), g->d.order == TESS_ORDER_ROW ? "row" : "col", g->beta,
             in_place ? " (in place)" : "", plan ? plan->name : (count ? plans[0].name : "?"));
    st->runs++;
    int before = check_failed;
    CHECKF(s == TESS_STATUS_SUCCESS && err == cudaSuccess, "%s: status %s, %s (%s)", what, tess_status_name(s),
           cudaGetErrorString(err), tess_last_error());
    if (s == TESS_STATUS_SUCCESS && err == cudaSuccess) {
        unsigned char *out = malloc(d_bytes + GUARD_BYTES);
        float *want = malloc(sizeof(float) * (size_t)(g->m * g->n * g->batch));
        cudaMemcpy(out, dd, d_bytes + GUARD_BYTES, cudaMemcpyDeviceToHost);
        cudaMemcpy(want, dref, sizeof(float) * (size_t)(g->m * g->n * g->batch), cudaMemcpyDeviceToHost);
        double diff2 = 0, ref2 = 0;
        int64_t nonfinite = 0, guard = 0;
        for (int64_t b = 0; b < g->batch; b++)
            for (int64_t i = 0; i < g->m; i++)
                for (int64_t j = 0; j < g->n; j++) {
                    double got = tess_load_as_f32(g->d.dtype, out, tess_matrix_offset(&g->d, b, i, j));
                    double w = want[(b * g->n + j) * g->m + i];
                    nonfinite += !isfinite(got);
                    diff2 += (got - w) * (got - w), ref2 += w * w;
                }
        for (size_t i = d_bytes; i < d_bytes + GUARD_BYTES; i++)
            guard += out[i] != 0xff;
        /* Padding of D (ld beyond the matrix) keeps its poison (skipped in place: it holds C). */
        int64_t padding = 0;
        if (!in_place) {
            size_t es = tess_dtype_size(g->d.dtype);
            unsigned char *inside = calloc(d_bytes / es, 1);
            for (int64_t b = 0; b < g->batch; b++)
                for (int64_t i = 0; i < g->m; i++)
                    for (int64_t j = 0; j < g->n; j++)
                        inside[tess_matrix_offset(&g->d, b, i, j)] = 1;
            for (size_t e = 0; e < d_bytes / es; e++)
                if (!inside[e])
                    for (size_t q = 0; q < es; q++)
                        padding += out[e * es + q] != 0xff;
            free(inside);
        }
        dtype_rounding rd2 = test_dtype_rounding(g->d.dtype);
        double rel = sqrt(diff2 / (ref2 > 0 ? ref2 : 1)), bound = rd2.unit + 2e-5;
        CHECKF(nonfinite == 0 && rel <= bound, "%s: rel error %.3g (bound %.3g), %lld unwritten", what, rel, bound,
               (long long)nonfinite);
        CHECKF(guard == 0 && padding == 0, "%s: %lld bytes written after D, %lld into its padding", what,
               (long long)guard, (long long)padding);
        free(out);
        free(want);
    }
    st->failures += check_failed > before;
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd), cudaFree(dref);
    free(ha), free(hb), free(hc);
}

static void random_problem(tess_gemm_desc *g, int64_t max_dim) {
    tess_gemm_desc_init(g);
    g->m = pick_dim(max_dim), g->n = pick_dim(max_dim), g->k = pick_dim(max_dim);
    g->batch = tess_rng_range(&rng, 0, 3) ? 1 : tess_rng_range(&rng, 2, 3);
    tess_dtype in = tess_rng_range(&rng, 0, 1) ? TESS_DTYPE_BF16 : TESS_DTYPE_F16;
    static const tess_dtype outs[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    g->a = layout(in, g->m, g->k, g->batch, (int)tess_rng_range(&rng, 0, 1));
    g->b = layout(in, g->k, g->n, g->batch, (int)tess_rng_range(&rng, 0, 1));
    g->d = layout(outs[tess_rng_range(&rng, 0, 2)], g->m, g->n, g->batch, (int)tess_rng_range(&rng, 0, 1));
    g->c = layout(outs[tess_rng_range(&rng, 0, 2)], g->m, g->n, g->batch, (int)tess_rng_range(&rng, 0, 1));
    if (g->batch > 1 && tess_rng_range(&rng, 0, 3) == 0)
        g->a.batch_stride = 0; /* one A shared by the batch */
    g->alpha = tess_rng_range(&rng, 0, 1) ? 1.0f : (float)tess_rng_normal(&rng);
    g->beta = tess_rng_range(&rng, 0, 1) ? 0.0f : (float)tess_rng_normal(&rng);
}

static void test_refusals(tess_handle h) {
    tess_gemm_desc g;
    tess_gemm_desc_init(&g);
    g.m = 64, g.n = 64, g.k = 64;
    tess_matrix_desc a = {TESS_DTYPE_BF16, TESS_ORDER_ROW, 64, 64, 64, 0}, b = a;
    b.order = TESS_ORDER_COL;
    g.a = a, g.b = b, g.d = a;
    void *buf = NULL;
    cudaMalloc(&buf, 1 << 16);
    CHECK_STATUS(tess_gemm(h, &g, NULL, (char *)buf + 2, buf, NULL, buf), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "16-byte aligned") != NULL);
    g.a.ld = 68;
    CHECK_STATUS(tess_gemm(h, &g, NULL, buf, buf, NULL, buf), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "multiple of 8") != NULL);
    cudaFree(buf);
}

int main(void) {
    int skip = gpu_require_sm90();
    if (skip)
        return skip;
    tess_rng_seed(&rng, check_seed());
    tess_handle h = NULL;
    CHECK_STATUS(tess_create(&h, 0), TESS_STATUS_SUCCESS);
    case_stats st = {0, 0};
    tess_gemm_desc g;
    for (int trial = 0; trial < 120; trial++) {
        random_problem(&g, 700);
        int in_place = g.beta != 0.0f && tess_rng_range(&rng, 0, 3) == 0;
        if (in_place)
            g.c = g.d;
        run_case(h, &g, (int)tess_rng_range(&rng, -1, 4), in_place, &st);
    }
    /* Larger problems: many tiles per CTA, deep K, every plan, each layout. */
    for (int layout_bits = 0; layout_bits < 4; layout_bits++)
        for (int plan = 0; plan < 5; plan++) {
            tess_gemm_desc_init(&g);
            g.m = 1024 + 64 * plan, g.n = 2048 - 8 * layout_bits, g.k = 1536;
            g.a = layout(TESS_DTYPE_BF16, g.m, g.k, 1, layout_bits & 1);
            g.b = layout(TESS_DTYPE_BF16, g.k, g.n, 1, (layout_bits >> 1) & 1);
            g.d = layout(TESS_DTYPE_BF16, g.m, g.n, 1, 1);
            run_case(h, &g, plan, 0, &st);
        }
    test_refusals(h);
    printf("gemm cases: %d run, %d failed\n", st.runs, st.failures);
    tess_destroy(h);
    return check_finish("gpu_gemm");
}
