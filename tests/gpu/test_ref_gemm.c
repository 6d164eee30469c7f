/* The GPU reference GEMM against the CPU reference, on random problems of
 * every dtype, layout, batch stride, alpha/beta and scale recipe (M, N or K of
 * 1 and ragged sizes included) plus a few larger ones. D is poisoned first;
 * every element is checked, and D's padding must keep its poison. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/matrix.h"
#include "gpu_skip.h"
#include "problem.h"
#include "ref/convert.h"

/* Copies `bytes` of host memory to a new device buffer (NULL stays NULL). */
static void *to_device(const void *host, size_t bytes) {
    if (!host || bytes == 0)
        return NULL;
    void *dev = NULL;
    if (cudaMalloc(&dev, bytes) != cudaSuccess)
        return NULL;
    cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    return dev;
}

static void run_problem(test_problem *t) {
    tess_ref_gemm p = t->p;
    /* Keep fp8 outputs inside their range (448 for e4m3): saturation is tested elsewhere. */
    if (p.d.dtype == TESS_DTYPE_E4M3 || p.d.dtype == TESS_DTYPE_E5M2)
        p.alpha /= 8.0;
    tess_ref_gemm dev = p;
    dev.a_data = to_device(t->a, t->a_bytes);
    dev.b_data = to_device(t->b, t->b_bytes);
    dev.c_data = to_device(t->c, t->c_bytes);
    dev.a_scale.data = to_device(t->a_scale, t->a_scale_bytes);
    dev.b_scale.data = to_device(t->b_scale, t->b_scale_bytes);
    void *d_dev = NULL;
    cudaMalloc(&d_dev, t->d_bytes);
    cudaMemset(d_dev, 0xff, t->d_bytes); /* NaN in every dtype */
    CHECK_STATUS(tess_ref_gemm_gpu(&dev, d_dev, NULL), TESS_STATUS_SUCCESS);
    CHECKF(cudaDeviceSynchronize() == cudaSuccess, "kernel failed on %s", t->text);

    unsigned char *d = malloc(t->d_bytes);
    cudaMemcpy(d, d_dev, t->d_bytes, cudaMemcpyDeviceToHost);
    size_t count = (size_t)(p.batch * p.m * p.n);
    double *ref = malloc(sizeof(double) * count);
    CHECK_STATUS(tess_ref_gemm_cpu(&p, ref), TESS_STATUS_SUCCESS);

    int64_t nonfinite = 0;
    double rel = tess_ref_rel_error(&p, ref, d, &nonfinite), ref2 = 0.0;
    for (size_t i = 0; i < count; i++)
        ref2 += ref[i] * ref[i];
    /* Rounding into D (unit roundoff) plus float32 accumulation (sqrt(K)
     * 2^-24 relative, under 2e-5 for these K), and one subnormal step per element. */
    dtype_rounding rd = test_dtype_rounding(p.d.dtype);
    double bound = rd.unit + 2e-5 + rd.tiny * sqrt((double)count) / sqrt(ref2);
    CHECKF(nonfinite == 0 && rel <= bound, "rel error %g > %g (%lld non-finite) on %s", rel, bound,
           (long long)nonfinite, t->text);

    /* Nothing outside the M x N matrices was written. */
    size_t esize = tess_dtype_size(p.d.dtype), elements = t->d_bytes / esize, touched_padding = 0;
    unsigned char *in_matrix = calloc(elements, 1);
    for (int64_t b = 0; b < p.batch; b++)
        for (int64_t i = 0; i < p.m; i++)
            for (int64_t j = 0; j < p.n; j++)
                in_matrix[tess_matrix_offset(&p.d, b, i, j)] = 1;
    for (size_t e = 0; e < elements; e++) {
        if (in_matrix[e])
            continue;
        for (size_t j = 0; j < esize; j++)
            touched_padding += d[e * esize + j] != 0xff;
    }
    CHECKF(touched_padding == 0, "%zu bytes of D's padding were written on %s", touched_padding, t->text);

    free(in_matrix);
    free(ref);
    free(d);
    cudaFree(d_dev);
    cudaFree((void *)dev.a_data);
    cudaFree((void *)dev.b_data);
    cudaFree((void *)dev.c_data);
    cudaFree((void *)dev.a_scale.data);
    cudaFree((void *)dev.b_scale.data);
}

/* A larger problem in the layout kernels care about most: bf16 A row-major,
 * B column-major ("TN"), D bf16, with DeepSeek-style block scales. */
static void make_large(test_problem *t, tess_rng *r, int64_t m, int64_t n, int64_t k) {
    memset(t, 0, sizeof *t);
    tess_ref_gemm *p = &t->p;
    p->m = m, p->n = n, p->k = k, p->batch = 1, p->alpha = 1.0, p->beta = 0.5;
    tess_matrix_desc a = {TESS_DTYPE_E4M3, TESS_ORDER_ROW, m, k, k, 0};
    tess_matrix_desc b = {TESS_DTYPE_E4M3, TESS_ORDER_COL, k, n, k, 0};
    tess_matrix_desc c = {TESS_DTYPE_BF16, TESS_ORDER_ROW, m, n, n, 0};
    p->a = a, p->b = b, p->c = c, p->d = c;
    t->a_bytes = (size_t)(m * k), t->b_bytes = (size_t)(n * k), t->c_bytes = (size_t)(m * n) * 2;
    t->a = malloc(t->a_bytes), t->b = malloc(t->b_bytes), t->c = malloc(t->c_bytes);
    tess_fill_normal(t->a, a.dtype, m * k, 1.0, r);
    tess_fill_normal(t->b, b.dtype, n * k, 1.0, r);
    tess_fill_normal(t->c, c.dtype, m * n, 1.0, r);
    int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
    t->a_scale_bytes = sizeof(float) * (size_t)(m * kb);
    t->b_scale_bytes = sizeof(float) * (size_t)(nb * kb);
    t->a_scale = malloc(t->a_scale_bytes), t->b_scale = malloc(t->b_scale_bytes);
    for (int64_t i = 0; i < m * kb; i++)
        t->a_scale[i] = (float)(0.5 + tess_rng_uniform(r));
    for (int64_t i = 0; i < nb * kb; i++)
        t->b_scale[i] = (float)(0.5 + tess_rng_uniform(r));
    /* 1x128 for A with M contiguous; 128x128 for B with K blocks contiguous. */
    tess_scale_operand sa = {t->a_scale, {TESS_SCALE_BLOCK_1x128, 1, m, 0}};
    tess_scale_operand sb = {t->b_scale, {TESS_SCALE_BLOCK_128x128, kb, 1, 0}};
    p->a_scale = sa, p->b_scale = sb;
    p->a_data = t->a, p->b_data = t->b, p->c_data = t->c;
    t->d_bytes = test_problem_d_bytes(t);
    snprintf(t->text, sizeof t->text, "large e4m3 TN %lldx%lldx%lld, 1x128/128x128 scales", (long long)m,
             (long long)n, (long long)k);
}

int main(void) {
    int skip = gpu_require_sm90();
    if (skip)
        return skip;
    tess_rng r;
    tess_rng_seed(&r, check_seed());
    for (int trial = 0; trial < 60; trial++) {
        test_problem t;
        test_problem_random(&t, &r, 300);
        run_problem(&t);
        test_problem_free(&t);
    }
    test_problem t;
    make_large(&t, &r, 768, 1031, 1536);
    run_problem(&t);
    test_problem_free(&t);
    return check_finish("gpu_ref_gemm");
}
