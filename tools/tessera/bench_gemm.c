/* `tessera bench gemm`: tessera and cuBLASLt on the same random-normal inputs
 * in one process, timed with CUDA events on a held stream (GPU time of one
 * call, with the host's time to queue it reported apart), median after
 * warm-up, inputs rotated across enough buffer sets that small problems do
 * not sit in L2, each result checked against the GPU reference GEMM. Its
 * options (cutlass_profiler's flags) are in bench_options.c, whose table is
 * also `tessera bench gemm --help`. Bursts: the providers take turns over
 * --rounds rounds. --hold=SECONDS measures at the power cap instead: per
 * problem, each provider runs back to back 1 s untimed, then SECONDS between
 * two CUDA events, in two rounds, the second in reverse order; a row gives
 * round 2, by when every provider meets a board already at its cap, and the
 * best round's TF/s (the method of ../shared/peers/sustained.py). --bias and
 * --act fuse a bias (random normal values, one vector shared by the batch)
 * and an activation into every provider's call that can run them
 * (tess_gemm_fused; cuBLASLt's epilogues), and into the reference; --gate a
 * gated activation (D, and the residual, M x N/2), which cuBLASLt lacks; --aux
 * the values before the activation written beside D (cuBLASLt's GELU_AUX with
 * --act=gelu_tanh); --D=e4m3
 * (or e5m2) an FP8 D, per tensor with a factor of 1 (--amax: its amax too) or
 * with 1x128 factors beside it (--out-scale=block1x128, checked dequantized),
 * tessera's alone. Every row
 * also gives the mean SM clock and board power during the provider's timed
 * runs (NVML, energy.h; NaN without it), TF/s per GHz and TF/J (TF/s / W). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/matrix.h"
#include "core/scale.h"
#include "ref/convert.h"
#include "ref/random.h"
#include "ref/ref_gemm.h"
#include "tessera.h"

#include "tools/tessera/bench_data.h"
#include "tools/tessera/bench_options.h"
#include "tools/tessera/bench_rows.h"
#include "tools/tessera/bench_timing.h"
#include "tools/tessera/bench_w4a16.h"
#include "tools/tessera/commands.h"
#include "tools/tessera/cublaslt.h"
#include "tools/tessera/energy.h"
#include "tools/tessera/timing.h"

/* Plans listed per problem (more than any problem has: small M adds transposed plans). */
#define MAX_PLANS 64

/* Buffers of one input set on the device. */
typedef struct buffers {
    void *a, *b, *c, *d;
    float *sa, *sb; /* dequantization factors (NULL: none) */
    void *bias;     /* the fused epilogue's bias (NULL: none) */
    void *residual; /* the residual, D's layout (NULL: none); cuBLASLt's C where it runs it as one */
    void *aux;      /* the aux output, D's layout (NULL: none) */
    /* An FP8 D's (tess_epilogue_ptrs; NULL: none), one of each shared by the sets. */
    const float *d_scale;
    float *d_amax, *d_scale_out;
} buffers;

typedef struct job {
    tess_handle h;
    const tess_gemm_desc *g;
    const tess_plan *plan;
    cublaslt_run *lt;
    buffers *sets;
    int nsets, next;
} job;

static int run_tessera(void *ctx, void *stream) {
    job *j = ctx;
    buffers *b = &j->sets[j->next++ % j->nsets];
    const tess_epilogue_ptrs ep = {.struct_size = sizeof ep,
                                   .bias = b->bias,
                                   .residual = b->residual,
                                   .d_scale = b->d_scale,
                                   .d_amax = b->d_amax,
                                   .d_scale_out = b->d_scale_out,
                                   .aux = b->aux};
    if (tess_set_stream(j->h, stream) != TESS_STATUS_SUCCESS || /* the stream the timing holds */
        tess_gemm_fused(j->h, j->g, j->plan, b->a, b->sa, b->b, b->sb, b->c, b->d, &ep) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "tessera bench gemm: %s\n", tess_last_error());
        return -1;
    }
    return 0;
}

static int run_cublas(void *ctx, void *stream) {
    job *j = ctx;
    buffers *b = &j->sets[j->next++ % j->nsets];
    return cublaslt_execute(j->lt, b->a, b->sa, b->b, b->sb, b->c, b->d, b->bias, b->aux, stream);
}

/* ||D - ref|| / ||ref|| of set 0's D against the reference `rd` (f32,
 * column-major) computed on the device; an FP8 D with 1x128 factors
 * (factors_dev) is compared dequantized, each element times its factor. */
static double rel_error(const tess_gemm_desc *g, const void *d_dev, const float *factors_dev, const tess_matrix_desc *rd,
                        const float *ref_dev) {
    size_t d_bytes = tess_matrix_bytes(&g->d, g->batch), ref_bytes = tess_matrix_bytes(rd, g->batch);
    unsigned char *d = malloc(d_bytes);
    float *ref = malloc(ref_bytes);
    cudaMemcpy(d, d_dev, d_bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(ref, ref_dev, ref_bytes, cudaMemcpyDeviceToHost);
    double err;
    if (factors_dev) {
        const tess_scale_desc *f = &g->d_scale;
        const size_t f_count = (size_t)(f->batch_stride * g->batch);
        float *factors = malloc(sizeof(float) * f_count);
        cudaMemcpy(factors, factors_dev, sizeof(float) * f_count, cudaMemcpyDeviceToHost);
        double diff = 0.0, norm = 0.0;
        for (int64_t b = 0; b < g->batch; b++)
            for (int64_t j = 0; j < g->d.cols; j++)
                for (int64_t i = 0; i < g->d.rows; i++) {
                    const double got = tess_load_as_f32(g->d.dtype, d, tess_matrix_offset(&g->d, b, i, j)) *
                                       factors[tess_scale_offset(f, b, i, j / TESS_SCALE_BLOCK)];
                    const double want = ref[tess_matrix_offset(rd, b, i, j)];
                    diff += (got - want) * (got - want), norm += want * want;
                }
        err = norm > 0.0 ? sqrt(diff / norm) : sqrt(diff);
        free(factors);
    } else {
        err = tess_ref_rel_error_matrix(g->batch, &g->d, d, rd, ref, NULL);
    }
    free(d);
    free(ref);
    return err;
}

static tess_matrix_desc packed(tess_dtype t, tess_order o, int64_t rows, int64_t cols, int64_t batch) {
    tess_matrix_desc d = {t, o, rows, cols, 0, 0};
    d.ld = tess_matrix_inner(&d);
    d.batch_stride = batch > 1 ? d.ld * tess_matrix_outer(&d) : 0;
    return d;
}


/* A scale layout for `mode` (mn rows of A or columns of B, depth k) that
 * cuBLASLt reads too: tessera's packed layout, with 128x128 factors' rows
 * padded to 16 bytes (cuBLASLt's BLK128x128 rule). Returns the factors'
 * count (0 for mode -1). */
static int64_t bench_scale_layout(int mode, int64_t mn, int64_t k, tess_scale_desc *layout) {
    memset(layout, 0, sizeof *layout);
    if (mode < 0)
        return 0;
    int64_t shape[2];
    tess_scale_layout_query((tess_scale_mode)mode, mn, k, layout, shape, NULL, NULL);
    if (mode == TESS_SCALE_BLOCK_128x128)
        layout->stride_mn = (shape[1] + 3) / 4 * 4;
    return mode == TESS_SCALE_BLOCK_128x128 ? shape[0] * layout->stride_mn : shape[0] * shape[1];
}

/* Uploads `count` positive factors in [0.5, 1.5) (realistic dequantization factors). */
static float *random_factors(int64_t count, tess_rng *r) {
    if (count == 0)
        return NULL;
    float *h = malloc(sizeof(float) * (size_t)count), *d = NULL;
    for (int64_t i = 0; i < count; i++)
        h[i] = (float)(0.5 + tess_rng_uniform(r));
    cudaMalloc((void **)&d, sizeof(float) * (size_t)count);
    cudaMemcpy(d, h, sizeof(float) * (size_t)count, cudaMemcpyHostToDevice);
    free(h);
    return d;
}

/* tessera's workspace: cuBLAS's 32 MiB, grown where a problem needs more
 * (the K-major copies of FP8, TF32 and INT8 operands in other layouts). */
typedef struct bench_workspace {
    void *ptr;
    size_t bytes;
} bench_workspace;

/* Gives the handle at least the workspace `g` needs; 0, or 1 after saying why not. */
static int workspace_for(tess_handle h, const tess_gemm_desc *g, bench_workspace *ws) {
    size_t need = 0;
    if (tess_gemm_workspace_size(h, g, &need) != TESS_STATUS_SUCCESS || need <= ws->bytes)
        return 0; /* a problem tessera refuses says so in its row */
    cudaFree(ws->ptr);
    ws->ptr = NULL, ws->bytes = 0;
    if (cudaMalloc(&ws->ptr, need) != cudaSuccess) {
        fprintf(stderr, "tessera bench gemm: out of device memory for a workspace of %zu bytes\n", need);
        tess_set_workspace(h, NULL, 0);
        return 1;
    }
    ws->bytes = need;
    tess_set_workspace(h, ws->ptr, need);
    return 0;
}

/* Benchmarks one problem with every provider; prints a row per provider and appends to the CSV. */
static int bench_one(tess_handle h, const tess_device_info *info, const bench_options *o, int64_t m, int64_t n, int64_t k,
                     FILE *csv, tess_rng *rng, energy_meter *meter, bench_workspace *ws) {
    if (o->b_int4) {
        char label[200];
        bench_problem_label(o, m, n, k, label, sizeof label);
        return bench_w4a16_one(h, info, o, m, n, k, csv, rng, meter, label);
    }
    // --sms: tessera's SM budget for this problem (cuBLAS runs on every SM).
    int budget = 0;
    if (tess_set_sm_budget(h, o->sms) != TESS_STATUS_SUCCESS || tess_get_sm_budget(h, &budget) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "tessera bench gemm: --sms=%d: %s\n", o->sms, tess_last_error());
        return 1;
    }
    tess_gemm_desc g;
    tess_gemm_desc_init(&g);
    g.m = m, g.n = n, g.k = k, g.batch = o->batch, g.alpha = o->alpha, g.beta = o->beta;
    g.a = packed(o->ta, o->oa, m, k, o->batch);
    g.b = packed(o->tb, o->ob, k, n, o->batch);
    const int64_t d_cols = o->gate != TESS_GATE_NONE ? n / 2 : n; /* a gate halves D */
    g.d = packed(o->td, o->od, m, d_cols, o->batch);
    g.c = o->c_given ? packed(o->tc, o->oc, m, n, o->batch) : g.d;
    const int64_t na = bench_scale_layout(o->scale_a, m, k, &g.a_scale), nb = bench_scale_layout(o->scale_b, n, k, &g.b_scale);
    g.fast_accum = o->fast_accum;
    g.allow_tf32 = g.a.dtype == TESS_DTYPE_F32; /* f32 operands: TF32, as cuBLASLt's peer runs them */
    g.epilogue.bias = (tess_bias_mode)o->bias, g.epilogue.activation = (tess_activation)o->act;
    g.epilogue.bias_type = bench_bias_type(o);
    g.gate = (tess_gate)o->gate, g.gate_limit = o->gate_limit;
    if (o->residual)
        g.residual = g.d;
    if (o->aux) /* the values before the activation, D's layout (tessera refuses it without an activation) */
        g.aux = g.d;
    /* An FP8 D: per tensor with a factor of 1 (and its amax with --amax), or 1x128 factors written beside it. */
    const int fp8_d = g.d.dtype == TESS_DTYPE_E4M3 || g.d.dtype == TESS_DTYPE_E5M2;
    if ((!fp8_d && (o->amax || o->out_scale != TESS_SCALE_TENSOR)) || (o->amax && o->out_scale != TESS_SCALE_TENSOR))
        fprintf(stderr, "tessera bench gemm: %lldx%lldx%lld: --out-scale applies to an FP8 D (--D=e4m3 or e5m2), "
                "--amax to one per tensor; ignored here\n", (long long)m, (long long)n, (long long)k);
    size_t factor_bytes = 0;
    float *d_scale = NULL, *d_amax = NULL, *d_factors = NULL;
    if (fp8_d) {
        int64_t shape[2] = {0, 0};
        if (o->out_scale == TESS_SCALE_BLOCK_1x128) {
            tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, m, d_cols, &g.d_scale, shape, &factor_bytes, NULL);
            g.d_scale.batch_stride = shape[0] * shape[1];
            factor_bytes *= (size_t)g.batch;
        } else {
            g.d_scale.mode = (tess_scale_mode)o->out_scale; /* other than TENSOR: tessera's row says why not */
        }
        const float one = 1.0f;
        if (cudaMalloc((void **)&d_scale, sizeof one) || cudaMalloc((void **)&d_amax, sizeof(float)) ||
            (factor_bytes && cudaMalloc((void **)&d_factors, factor_bytes))) {
            fprintf(stderr, "tessera bench gemm: out of device memory for an FP8 D's factors\n");
            return 1;
        }
        cudaMemcpy(d_scale, &one, sizeof one, cudaMemcpyHostToDevice);
    }
    if (workspace_for(h, &g, ws))
        return 1;
    /* cuBLASLt's problem: the same, but a residual without bias or activation is its C with beta 1
     * (the same sum and bytes); with them cuBLASLt has no residual after the activation. */
    tess_gemm_desc lt = g;
    const int residual_as_c = o->residual && o->bias == TESS_BIAS_NONE && o->act == TESS_ACT_NONE && g.beta == 0.0f &&
                              o->gate == TESS_GATE_NONE;
    if (residual_as_c)
        lt.beta = 1.0f, lt.c = g.d;
    const int64_t bias_count = o->bias == TESS_BIAS_NONE ? 0 : o->bias == TESS_BIAS_COLUMNS ? n : m;
    const size_t bias_bytes = (size_t)bias_count * tess_dtype_size(g.epilogue.bias_type);
    const size_t residual_bytes = o->residual ? tess_matrix_bytes(&g.d, g.batch) : 0;
    const size_t aux_bytes = o->aux ? tess_matrix_bytes(&g.d, g.batch) : 0;
    size_t set_bytes = tess_matrix_bytes(&g.a, g.batch) + tess_matrix_bytes(&g.b, g.batch) + tess_matrix_bytes(&g.d, g.batch) +
                       (g.beta != 0.0f ? tess_matrix_bytes(&g.c, g.batch) : 0) + bias_bytes + residual_bytes + aux_bytes;
    const int nsets = bench_set_count(info, set_bytes);
    buffers sets[BENCH_MAX_SETS];
    memset(sets, 0, sizeof sets);
    for (int s = 0; s < nsets; s++) {
        if (cudaMalloc(&sets[s].a, tess_matrix_bytes(&g.a, g.batch)) || cudaMalloc(&sets[s].b, tess_matrix_bytes(&g.b, g.batch)) ||
            cudaMalloc(&sets[s].d, tess_matrix_bytes(&g.d, g.batch)) ||
            (g.beta != 0.0f && cudaMalloc(&sets[s].c, tess_matrix_bytes(&g.c, g.batch))) ||
            (bias_bytes && cudaMalloc(&sets[s].bias, bias_bytes)) ||
            (residual_bytes && cudaMalloc(&sets[s].residual, residual_bytes)) ||
            (aux_bytes && cudaMalloc(&sets[s].aux, aux_bytes))) {
            fprintf(stderr, "tessera bench gemm: out of device memory for %lld x %lld x %lld\n", (long long)m,
                    (long long)n, (long long)k);
            return 1;
        }
        bench_fill_normal(sets[s].a, g.a.dtype, tess_matrix_span(&g.a, g.batch), 1.0, rng);
        bench_fill_normal(sets[s].b, g.b.dtype, tess_matrix_span(&g.b, g.batch), 1.0, rng);
        if (sets[s].c)
            bench_fill_normal(sets[s].c, g.c.dtype, tess_matrix_span(&g.c, g.batch), 1.0, rng);
        if (sets[s].bias)
            bench_fill_normal(sets[s].bias, g.epilogue.bias_type, bias_count, 1.0, rng);
        if (sets[s].residual)
            bench_fill_normal(sets[s].residual, g.d.dtype, tess_matrix_span(&g.d, g.batch), 1.0, rng);
        if (residual_as_c) /* beta = 0 for tessera: C is cuBLASLt's alone */
            sets[s].c = sets[s].residual;
        sets[s].sa = random_factors(na, rng), sets[s].sb = random_factors(nb, rng);
        if (fp8_d && o->out_scale == TESS_SCALE_BLOCK_1x128)
            sets[s].d_scale_out = d_factors;
        else if (fp8_d)
            sets[s].d_scale = d_scale, sets[s].d_amax = o->amax ? d_amax : NULL;
    }
    float *ref = NULL;
    const tess_matrix_desc rd = packed(TESS_DTYPE_F32, TESS_ORDER_COL, m, d_cols, g.batch); /* the reference's D */
    if (o->verify) {
        tess_ref_gemm rp;
        memset(&rp, 0, sizeof rp);
        rp.m = m, rp.n = n, rp.k = k, rp.batch = g.batch, rp.alpha = g.alpha, rp.beta = g.beta;
        rp.a = g.a, rp.b = g.b, rp.c = g.c;
        rp.a_data = sets[0].a, rp.b_data = sets[0].b, rp.c_data = sets[0].c;
        rp.a_scale.data = sets[0].sa, rp.a_scale.layout = g.a_scale;
        rp.b_scale.data = sets[0].sb, rp.b_scale.layout = g.b_scale;
        rp.epilogue = g.epilogue, rp.bias_data = sets[0].bias;
        rp.residual = g.residual, rp.residual_data = sets[0].residual;
        rp.gate = (int)g.gate, rp.gate_limit = g.gate_limit;
        rp.d = rd;
        cudaMalloc((void **)&ref, tess_matrix_bytes(&rd, g.batch));
        tess_ref_gemm_gpu(&rp, ref, NULL);
    }
    double flops = 2.0 * (double)m * (double)n * (double)k * (double)g.batch;
    double cublas_ms = 0;
    char problem[200];
    bench_problem_label(o, m, n, k, problem, sizeof problem);
    /* Provider 0 is cuBLAS, then tessera's plan (or every plan, --plan=all):
     * cuBLAS's row comes first so tessera's can show the ratio. */
    struct provider {
        int ready;
        job j;
        timed_fn fn;
        char name[96];
        double err, ms[BENCH_MAX_ROUNDS], host_us[BENCH_MAX_ROUNDS];
        energy_window energy; /* bursts: every round's timed loop; --hold: round 2's timed part */
    } pv[1 + MAX_PLANS];
    int providers = 1;
    tess_plan plans[MAX_PLANS];
    memset(pv, 0, sizeof pv);
    if (o->cublas) {
        char why[160] = "";
        if (o->gate != TESS_GATE_NONE)
            snprintf(why, sizeof why, "cuBLASLt has no gated (GLU) epilogue");
        else if (fp8_d)
            snprintf(why, sizeof why, "an FP8 D is tessera's alone here (its peer: a 16-bit D, then quantized)");
        else if (o->residual && !residual_as_c)
            snprintf(why, sizeof why, "cuBLASLt adds no residual after a bias or activation (or beside C)");
        pv[0].j = (job){h, &g, NULL, why[0] ? NULL : cublaslt_prepare(&lt, why, sizeof why), sets, nsets, 0};
        pv[0].fn = run_cublas;
        pv[0].ready = pv[0].j.lt != NULL;
        snprintf(pv[0].name, sizeof pv[0].name, "cublasLt heuristic #0");
        if (!pv[0].ready)
            printf("%-44s cublas   %s\n", problem, why);
    }
    int count = 0;
    if (o->tessera) {
        if (tess_gemm_plans(h, &g, plans, MAX_PLANS, &count) != TESS_STATUS_SUCCESS) {
            printf("%-44s tessera  refused: %s\n", problem, tess_last_error());
            count = 0;
        }
        count = count < MAX_PLANS ? count : MAX_PLANS;
        int pick = o->plan >= 0 && o->plan < count ? o->plan : 0, named = -1;
        for (int i = 0; o->plan_name && i < count; i++) {
            size_t len = strlen(plans[i].name), want = strlen(o->plan_name);
            if (len >= want && strcmp(plans[i].name + len - want, o->plan_name) == 0) {
                named = pick = i;
                break;
            }
        }
        if (count && o->plan_name && named < 0) { /* say so rather than time another plan under its name */
            printf("%-44s tessera  no plan ends in '%s'; plans:", problem, o->plan_name);
            for (int i = 0; i < count; i++)
                printf(" %s", plans[i].name);
            printf("\n");
            count = 0;
        }
        const int first = o->all_plans ? 0 : pick, end = o->all_plans || count == 0 ? count : pick + 1;
        for (int i = first; i < end; i++) {
            struct provider *q = &pv[providers++];
            q->j = (job){h, &g, &plans[i], NULL, sets, nsets, 0};
            q->fn = run_tessera;
            q->ready = 1;
            snprintf(q->name, sizeof q->name, "%s grid %d", plans[i].name, plans[i].grid);
        }
    }
    for (int prov = 0; prov < providers; prov++) {
        struct provider *q = &pv[prov];
        q->err = NAN;
        if (q->ready && o->verify) { /* one run on set 0, checked before timing */
            q->j.next = 0;
            cudaMemset(sets[0].d, 0xff, tess_matrix_bytes(&g.d, g.batch));
            if (q->fn(&q->j, NULL) == 0 && cudaDeviceSynchronize() == cudaSuccess)
                q->err = rel_error(&g, sets[0].d, d_factors, &rd, ref);
        }
    }
    /* Bursts: rounds rotate the providers' order, each going first in turn,
     * so that drifting clocks (a GPU warming up at its power limit) favour
     * none. A provider's burst power is an average over its timed loops
     * (every round's), gaps between runs included. --hold: two rounds, the
     * second in reverse order; round 2's figures are reported. */
    const int rounds = bench_rounds(o);
    for (int r = 0; r < rounds; r++)
        for (int turn = 0; turn < providers; turn++) {
            const int index = o->hold > 0 ? (r % 2 ? providers - 1 - turn : turn) : (turn + r) % providers;
            struct provider *q = &pv[index];
            if (!q->ready)
                continue;
            q->j.next = 0;
            q->ready = bench_time_round(q->fn, &q->j, o, meter, r, &q->ms[r], &q->host_us[r], &q->energy) == 0;
        }
    if (pv[0].j.lt)
        cublaslt_release(pv[0].j.lt);
    for (int prov = 0; prov < providers; prov++) {
        struct provider *q = &pv[prov];
        if (!q->ready)
            continue;
        double best_ms;
        double ms = bench_reported_ms(o, q->ms, rounds, &best_ms);
        double host_us = o->hold > 0 ? NAN : median_of(q->host_us, rounds);
        double tflops = flops / (ms * 1e-3) / 1e12, gbs = (double)set_bytes / (ms * 1e-3) / 1e9;
        double best_tflops = flops / (best_ms * 1e-3) / 1e12;
        if (prov == 0)
            cublas_ms = ms;
        double ratio = prov > 0 && cublas_ms > 0 ? cublas_ms / ms : NAN;
        if (o->chain > 1) {
            char chain[24];
            snprintf(chain, sizeof chain, " chain %d", o->chain);
            strncat(q->name, chain, sizeof q->name - strlen(q->name) - 1);
        }
        const bench_row row = {o, &g, tess_dtype_name(g.b.dtype), problem, prov > 0, q->name, ms, tflops, gbs, ratio,
                               q->err, host_us, best_tflops, &q->energy, prov > 0 ? budget : 0};
        bench_row_write(&row, csv);
    }
    for (int s = 0; s < nsets; s++) {
        cudaFree(sets[s].a), cudaFree(sets[s].b), cudaFree(sets[s].d), cudaFree(sets[s].sa), cudaFree(sets[s].sb),
            cudaFree(sets[s].bias), cudaFree(sets[s].residual), cudaFree(sets[s].aux);
        if (sets[s].c != sets[s].residual)
            cudaFree(sets[s].c);
    }
    cudaFree(d_scale), cudaFree(d_amax), cudaFree(d_factors);
    cudaFree(ref);
    return 0;
}

/* What the problems run with: the GPU, its meter and the CSV; or, for
 * --dry-run, nothing (the problems are listed instead). */
typedef struct session {
    int dry_run;
    tess_handle h;
    tess_device_info info;
    energy_meter *meter;
    bench_workspace workspace;
    FILE *csv;
    tess_rng rng;
} session;

/* 0, or -1 after saying why: --gate-limit without --gate. */
static int check_gate_settings(const bench_options *o) {
    if (o->gate_limit > 0.0f && o->gate == TESS_GATE_NONE) {
        fprintf(stderr, "tessera bench gemm: --gate-limit=%g clamps a gate's inputs: it needs --gate=interleaved\n",
                o->gate_limit);
        return -1;
    }
    return 0;
}

/* Runs (or lists) the problems `o` names, every m x n x k combination. */
static int bench_problems(session *s, const bench_options *o) {
    if (!o->nm || !o->nn || !o->nk) {
        fprintf(stderr, "tessera bench gemm: --m, --n and --k are required\n");
        return 2;
    }
    if (check_gate_settings(o))
        return 2;
    if (s->dry_run) {
        bench_print_dry_run(o);
        return 0;
    }
    int rc = 0;
    for (int a = 0; a < o->nm; a++)
        for (int b = 0; b < o->nn; b++)
            for (int c = 0; c < o->nk; c++)
                rc |= bench_one(s->h, &s->info, o, o->m[a], o->n[b], o->k[c], s->csv, &s->rng, s->meter,
                                &s->workspace);
    return rc;
}

/* Opens the GPU (device 0), its meter, the shared workspace and the CSV; 0, or the exit code after saying why. */
static int session_open(session *s, const bench_options *o, const char *output) {
    if (tess_create(&s->h, 0) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "tessera bench gemm: %s\n", tess_last_error());
        return 1;
    }
    s->info.struct_size = sizeof s->info;
    tess_get_device_info(s->h, &s->info);
    s->meter = energy_open(0); /* the device of tess_create(&h, 0) */
    if (!energy_available(s->meter))
        fprintf(stderr, "tessera bench gemm: %s: the MHz, W, per-GHz and per-J figures are nan\n",
                energy_why(s->meter));
    if (o->hold > 0)
        printf("hold: per problem and provider, %g s back to back untimed, then %g s timed, %d rounds (the second in "
               "reverse order); rows give round 2 and the best round's TF/s\n",
               BENCH_HOLD_WARM_SECONDS, o->hold, BENCH_HOLD_ROUNDS);
    /* Both libraries start with cuBLAS's recommended 32 MiB on Hopper (cublaslt.c); tessera's grows where a
     * problem's K-major copies need more (workspace_for). */
    if (cudaMalloc(&s->workspace.ptr, TESS_GEMM_WORKSPACE_BYTES) == cudaSuccess) {
        s->workspace.bytes = TESS_GEMM_WORKSPACE_BYTES;
        tess_set_workspace(s->h, s->workspace.ptr, TESS_GEMM_WORKSPACE_BYTES);
    }
    if (output) {
        s->csv = fopen(output, "w");
        if (!s->csv) {
            fprintf(stderr, "tessera bench gemm: cannot write %s\n", output);
            return 1;
        }
        bench_csv_header(s->csv, &s->info, s->meter);
    }
    return 0;
}

/* Releases what session_open opened (any part of it). */
static void session_close(session *s) {
    if (s->csv)
        fclose(s->csv);
    energy_close(s->meter);
    tess_destroy(s->h);
    if (s->workspace.ptr)
        cudaFree(s->workspace.ptr);
}

/* Runs each line of `suite` over the command line's settings `o`; after a
 * line fails, the rest are only read (and refused where wrong). */
static int bench_suite(session *s, const bench_options *o, const char *suite) {
    FILE *f = fopen(suite, "r");
    if (!f) {
        fprintf(stderr, "tessera bench gemm: cannot read %s\n", suite);
        return 1;
    }
    char line[1024];
    int rc = 0;
    for (int number = 1; fgets(line, sizeof line, f); number++) {
        bench_options lo = *o; /* the command line's settings are every line's defaults */
        const int named = bench_parse_line(line, suite, number, &lo);
        if (named < 0)
            rc = 2;
        else if (named > 0 && !rc)
            rc |= bench_problems(s, &lo);
    }
    fclose(f);
    return rc;
}

int bench_gemm(int argc, char **argv) {
    bench_options o;
    bench_run run;
    const int parsed = bench_parse_args(argc, argv, &o, &run);
    if (parsed != CLI_OK)
        return parsed == CLI_HELP ? 0 : 2;
    if (run.suite && bench_suite_defaults(argc, argv, &o, &run) < 0)
        return 2;
    if (!run.suite && (!o.nm || !o.nn || !o.nk)) { /* said before any GPU is looked for */
        fprintf(stderr, "tessera bench gemm: --m, --n and --k are required (or --suite=FILE)\n");
        return 2;
    }
    if (!run.suite && check_gate_settings(&o)) /* said before any GPU is looked for */
        return 2;
    session s;
    memset(&s, 0, sizeof s);
    s.dry_run = run.dry_run;
    int rc = run.dry_run ? 0 : session_open(&s, &o, run.output);
    tess_rng_seed(&s.rng, 20261121); /* a fixed seed (a date): every run times the same inputs */
    if (rc == 0)
        rc = run.suite ? bench_suite(&s, &o, run.suite) : bench_problems(&s, &o);
    if (!run.dry_run)
        session_close(&s);
    return rc;
}
