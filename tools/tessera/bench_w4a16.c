/* `tessera bench gemm --B=int4:col` (bench_w4a16.h): tessera's W4A16 decode
 * GEMV (tess_gemm_w4a16) on one problem. Its inputs: packed codes of random
 * bytes (every byte is two codes), scales normal(0, 1/256) in A's type,
 * uint8 zero points with --zeros, A random normal; rotated past twice the L2 as
 * the GEMM problems' are. Timed as those are (bursts over --rounds, or
 * --hold); checked first against the GPU reference GEMM of the same weight
 * dequantized (tess_dequantize_int4, which rounds it to A's type where the
 * GEMV computes with it exactly: an error of that rounding, about 1e-3).
 * cuBLASLt has no 4-bit weights: tessera's row alone, whose GB/s counts the
 * bytes a call reads and writes. */
#include "tools/tessera/bench_w4a16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/matrix.h"
#include "ref/convert.h"
#include "ref/ref_gemm.h"

#include "tools/tessera/bench_data.h"
#include "tools/tessera/bench_rows.h"
#include "tools/tessera/bench_timing.h"
#include "tools/tessera/timing.h"

/* One input set on the device. */
typedef struct w4_set {
    void *x, *codes, *scales, *d, *bias;
    uint8_t *zeros;
} w4_set;

/* The calls a timed run queues, each on the next set. */
typedef struct w4_job {
    tess_handle h;
    const tess_w4a16_desc *desc;
    w4_set *sets;
    int nsets, next;
} w4_job;

/* Queues one call; -1 where it is refused (tess_last_error says why). */
static int queue_w4a16(w4_job *j, void *stream) {
    w4_set *s = &j->sets[j->next++ % j->nsets];
    const tess_epilogue_ptrs ep = {.struct_size = sizeof ep, .bias = s->bias};
    if (tess_set_stream(j->h, stream) != TESS_STATUS_SUCCESS ||
        tess_gemm_w4a16(j->h, j->desc, s->x, s->codes, s->scales, s->zeros, s->d, &ep) != TESS_STATUS_SUCCESS)
        return -1;
    return 0;
}

/* timed_fn for the timing loops (a refusal there, after the first call was accepted, is said on stderr). */
static int run_w4a16(void *ctx, void *stream) {
    if (queue_w4a16(ctx, stream) == 0)
        return 0;
    fprintf(stderr, "tessera bench gemm: %s\n", tess_last_error());
    return -1;
}

/* ||D - ref|| / ||ref|| of set 0's D against the reference GEMM of its
 * dequantized weight (f32, column-major), computed on the device. */
static double w4_error(tess_handle h, const tess_w4a16_desc *desc, const w4_set *s) {
    const int64_t m = desc->m, n = desc->n, k = desc->k;
    const tess_dtype xt = desc->x.dtype;
    void *w = NULL;
    float *ref = NULL;
    double err = NAN;
    if (cudaMalloc(&w, (size_t)(n * k) * tess_dtype_size(xt)) || cudaMalloc((void **)&ref, (size_t)(m * n) * 4)) {
        fprintf(stderr, "tessera bench gemm: no device memory for the check (the error column is nan)\n");
        goto done;
    }
    if (tess_dequantize_int4(h, desc, s->codes, s->scales, s->zeros, xt, w, k) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "tessera bench gemm: %s\n", tess_last_error());
        goto done;
    }
    tess_ref_gemm rp;
    memset(&rp, 0, sizeof rp);
    rp.m = m, rp.n = n, rp.k = k, rp.batch = 1, rp.alpha = 1.0;
    rp.a = desc->x, rp.b = (tess_matrix_desc){xt, TESS_ORDER_COL, k, n, k, 0}; /* W (n x k row-major) as K x N */
    rp.a_data = s->x, rp.b_data = w;
    rp.epilogue = desc->epilogue, rp.bias_data = s->bias;
    rp.d = (tess_matrix_desc){TESS_DTYPE_F32, TESS_ORDER_COL, m, n, m, 0};
    if (tess_ref_gemm_gpu(&rp, ref, NULL) != TESS_STATUS_SUCCESS || cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "tessera bench gemm: the reference GEMM failed: %s\n", tess_last_error());
        goto done;
    }
    const size_t d_bytes = tess_matrix_bytes(&desc->d, 1);
    unsigned char *d = malloc(d_bytes);
    float *want = malloc((size_t)(m * n) * 4);
    cudaMemcpy(d, s->d, d_bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(want, ref, (size_t)(m * n) * 4, cudaMemcpyDeviceToHost);
    err = tess_ref_rel_error_matrix(1, &desc->d, d, &rp.d, want, NULL);
    free(d), free(want);
done:
    cudaFree(w), cudaFree(ref);
    return err;
}

int bench_w4a16_one(tess_handle h, const tess_device_info *info, const bench_options *o, int64_t m, int64_t n, int64_t k,
                    FILE *csv, tess_rng *rng, energy_meter *meter, const char *problem) {
    if (o->cublas)
        printf("%-44s cublas   cuBLASLt has no 4-bit weights\n", problem);
    if (!o->tessera)
        return 0;
    if (tess_set_sm_budget(h, o->sms) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "tessera bench gemm: --sms=%d: %s\n", o->sms, tess_last_error());
        return 1;
    }
    tess_w4a16_desc desc;
    tess_w4a16_desc_init(&desc);
    desc.m = m, desc.n = n, desc.k = k, desc.group_size = o->int4_group;
    desc.x = (tess_matrix_desc){o->ta, o->oa, m, k, o->oa == TESS_ORDER_ROW ? k : m, 0};
    desc.d = (tess_matrix_desc){o->td, o->od, m, n, o->od == TESS_ORDER_ROW ? n : m, 0};
    desc.scale_type = o->ta, desc.ld_scales = n;
    desc.zero_points = o->int4_zeros, desc.ld_zeros = o->int4_zeros ? n : 0;
    desc.epilogue.bias = (tess_bias_mode)o->bias, desc.epilogue.activation = (tess_activation)o->act;
    desc.epilogue.bias_type = bench_bias_type(o);
    /* What the API does not take for a 4-bit weight is refused by it (the row says why); the rest
     * of the GEMM options (batch, scales, gate, residual, an FP8 D, C) a 4-bit B never has. */
    if (o->batch != 1 || o->scale_a >= 0 || o->scale_b >= 0 || o->gate != TESS_GATE_NONE || o->residual ||
        o->beta != 0.0f || o->alpha != 1.0f) {
        printf("%-44s tessera  a 4-bit B takes none of --batch, --scale-a/b, --gate, --residual, --alpha, --beta\n",
               problem);
        return 0;
    }
    const int64_t groups = k / (o->int4_group > 0 ? o->int4_group : 1);
    const size_t code_bytes = (size_t)(n * k / 2), scale_bytes = (size_t)(groups * n) * tess_dtype_size(o->ta);
    const size_t zero_bytes = o->int4_zeros ? (size_t)(groups * n) : 0;
    const size_t x_bytes = tess_matrix_bytes(&desc.x, 1), d_bytes = tess_matrix_bytes(&desc.d, 1);
    const size_t bias_bytes = o->bias == TESS_BIAS_COLUMNS ? (size_t)n * tess_dtype_size(desc.epilogue.bias_type) : 0;
    const size_t set_bytes = code_bytes + scale_bytes + zero_bytes + x_bytes + d_bytes + bias_bytes;
    const int nsets = bench_set_count(info, set_bytes);
    w4_set sets[BENCH_MAX_SETS];
    memset(sets, 0, sizeof sets);
    int rc = 0;
    for (int s = 0; s < nsets && rc == 0; s++) {
        w4_set *b = &sets[s];
        if (cudaMalloc(&b->x, x_bytes) || cudaMalloc(&b->codes, code_bytes) || cudaMalloc(&b->scales, scale_bytes) ||
            cudaMalloc(&b->d, d_bytes) || (zero_bytes && cudaMalloc((void **)&b->zeros, zero_bytes)) ||
            (bias_bytes && cudaMalloc(&b->bias, bias_bytes))) {
            fprintf(stderr, "tessera bench gemm: out of device memory for %s\n", problem);
            rc = 1;
            break;
        }
        bench_fill_normal(b->x, o->ta, tess_matrix_span(&desc.x, 1), 1.0, rng);
        bench_fill_bytes(b->codes, (int64_t)code_bytes, 0, 255, rng);
        bench_fill_normal(b->scales, o->ta, groups * n, 1.0 / 256, rng); /* spread ~1/256 around 0 */
        if (zero_bytes)
            bench_fill_bytes(b->zeros, (int64_t)zero_bytes, 0, 15, rng);
        if (bias_bytes)
            bench_fill_normal(b->bias, desc.epilogue.bias_type, n, 1.0, rng);
    }
    w4_job j = {h, &desc, sets, nsets, 0};
    double err = NAN;
    if (rc == 0) { /* one call on set 0 first: a refusal takes the row's place; with --verify, checked */
        w4_job once = {h, &desc, sets, 1, 0};
        cudaMemset(sets[0].d, 0xff, d_bytes);
        cudaError_t e = cudaSuccess;
        if (queue_w4a16(&once, NULL) != 0) {
            printf("%-44s tessera  refused: %s\n", problem, tess_last_error());
            rc = -1;
        } else if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
            printf("%-44s tessera  failed on the device: %s\n", problem, cudaGetErrorString(e));
            rc = 1;
        } else if (o->verify) {
            err = w4_error(h, &desc, &sets[0]);
        }
    }
    const int rounds = bench_rounds(o);
    double ms[BENCH_MAX_ROUNDS], host_us[BENCH_MAX_ROUNDS];
    energy_window energy;
    memset(&energy, 0, sizeof energy);
    for (int r = 0; r < rounds && rc == 0; r++) {
        j.next = 0;
        rc = bench_time_round(run_w4a16, &j, o, meter, r, &ms[r], &host_us[r], &energy);
    }
    if (rc == 0) {
        double best;
        const double t = bench_reported_ms(o, ms, rounds, &best);
        const double flops = 2.0 * (double)m * (double)n * (double)k;
        tess_gemm_desc g; /* the problem as the rows describe it: A, D, the epilogue; B's type "int4" */
        tess_gemm_desc_init(&g);
        g.m = m, g.n = n, g.k = k, g.batch = 1, g.a = desc.x, g.d = g.c = desc.d;
        g.b = (tess_matrix_desc){o->ta, TESS_ORDER_COL, k, n, k, 0};
        g.epilogue = desc.epilogue;
        char kernel[48], b_type[16];
        snprintf(kernel, sizeof kernel, "w4a16 gemv");
        if (o->chain > 1)
            snprintf(kernel, sizeof kernel, "w4a16 gemv chain %d", o->chain);
        bench_b_type_name(o, b_type, sizeof b_type);
        int budget = 0;
        tess_get_sm_budget(h, &budget);
        const bench_row row = {o, &g, b_type, problem, 1, kernel, t, flops / (t * 1e-3) / 1e12,
                               (double)set_bytes / (t * 1e-3) / 1e9, NAN, err,
                               o->hold > 0 ? NAN : median_of(host_us, rounds), flops / (best * 1e-3) / 1e12, &energy,
                               budget};
        bench_row_write(&row, csv);
    }
    for (int s = 0; s < nsets; s++)
        cudaFree(sets[s].x), cudaFree(sets[s].codes), cudaFree(sets[s].scales), cudaFree(sets[s].d),
            cudaFree(sets[s].zeros), cudaFree(sets[s].bias);
    return rc > 0 ? 1 : 0;
}
