/* Kernels queued back to back and captured in CUDA graphs, as a decode step
 * queues its layers. A chain of GEMMs, each reading the output of the one
 * before (dense decode shapes on stream-K and transposed plans, then a
 * masked grouped GEMM on a mixed plan: two launches, the second for
 * large groups), runs three ways:
 *  1. each call followed by a stream synchronization (the reference);
 *  2. back to back on one stream, where programmatic dependent launch lets
 *     a kernel start while the one before it finishes;
 *  3. captured into a CUDA graph, the graph replayed three times.
 * Every output is poisoned (NaN) before each run of the chain, so a kernel
 * that read its input before the previous kernel finished would show as
 * NaN or as other bits: all runs must match the reference bit for bit, and
 * the reference must hold no NaN wherever the chain writes. The chain's
 * input itself is written by a late writer (late_writer.h) that lets the
 * first GEMM launch at once and writes only ~65 us later: a GEMM kernel
 * reading before its griddepcontrol.wait would see the poison every time. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_skip.h"
#include "gpu/late_writer.h"
#include "ref/random.h"

/* The chain: D1 = X W1, D2 = D1 W2, D3 = D2 W3 (M = TOKENS), then Y = the
 * masked grouped GEMM of D3 viewed as GROUPS batches of TOKENS / GROUPS rows. */
#define TOKENS 16
#define GROUPS 2
#define GROUP_ROWS (TOKENS / GROUPS)
#define STEPS 3
static const int64_t widths[STEPS + 1] = {4096, 2112, 1024, 3072}; /* K of step 1, then each step's N */
#define GROUPED_N 512
static const int32_t masked_rows[GROUPS] = {GROUP_ROWS, 5}; /* the second group leaves 3 rows unwritten */

typedef struct chain {
    tess_handle h;
    void *stream;
    tess_gemm_desc g[STEPS];
    tess_grouped_gemm_desc gg;
    tess_plan grouped_plan;                /* a mixed plan (token tiles, then a 128-row launch) */
    void *x_source, *x;                    /* the chain's input, copied into x by the late writer */
    void *w[STEPS + 1], *d[STEPS + 1];     /* d[STEPS] is the grouped Y */
    size_t d_bytes[STEPS + 1];
    int32_t *rows;
} chain;

static tess_rng rng;

static tess_matrix_desc row_major(int64_t rows, int64_t cols) {
    return (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, rows, cols, cols, 0};
}

/* A device bf16 buffer of `count` normal values. */
static void *random_bf16(int64_t count) {
    uint16_t *host = malloc((size_t)count * sizeof *host);
    tess_fill_normal(host, TESS_DTYPE_BF16, count, 1.0, &rng);
    void *dev = gpu_upload(host, (size_t)count * sizeof *host);
    free(host);
    return dev;
}

/* Sets up the chain's problems and buffers on the handle's stream. */
static void chain_init(chain *c, tess_handle h, void *stream) {
    memset(c, 0, sizeof *c);
    c->h = h, c->stream = stream;
    c->x_source = random_bf16(TOKENS * widths[0]);
    c->x = gpu_upload(NULL, TOKENS * widths[0] * 2);
    for (int s = 0; s < STEPS; s++) {
        tess_gemm_desc *g = &c->g[s];
        tess_gemm_desc_init(g);
        g->m = TOKENS, g->n = widths[s + 1], g->k = widths[s];
        g->alpha = (float)(1.0 / sqrt((double)g->k)); /* keeps every output near unit scale */
        g->a = row_major(g->m, g->k);
        g->b = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_COL, g->k, g->n, g->k, 0};
        g->d = g->c = row_major(g->m, g->n);
        c->w[s] = random_bf16(g->k * g->n);
        c->d_bytes[s] = (size_t)(g->m * g->n) * 2;
        c->d[s] = gpu_upload(NULL, c->d_bytes[s]);
    }
    tess_grouped_gemm_desc *gg = &c->gg;
    tess_grouped_gemm_desc_init(gg);
    gg->layout = TESS_GROUP_MASKED;
    gg->groups = GROUPS, gg->m = GROUP_ROWS, gg->n = GROUPED_N, gg->k = widths[STEPS];
    gg->x = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, GROUP_ROWS, gg->k, gg->k, GROUP_ROWS * gg->k};
    gg->w = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_COL, gg->k, GROUPED_N, gg->k, GROUPED_N * gg->k};
    gg->y = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, GROUP_ROWS, GROUPED_N, GROUPED_N, GROUP_ROWS * GROUPED_N};
    c->w[STEPS] = random_bf16(GROUPS * GROUPED_N * gg->k);
    c->d_bytes[STEPS] = (size_t)(TOKENS * GROUPED_N) * 2;
    c->d[STEPS] = gpu_upload(NULL, c->d_bytes[STEPS]);
    c->rows = gpu_upload(masked_rows, sizeof masked_rows);
    tess_plan plans[64];
    int count = 0, mixed = -1;
    CHECK(tess_grouped_gemm_plans(h, gg, plans, 64, &count) == TESS_STATUS_SUCCESS);
    for (int i = 0; i < count && i < 64 && mixed < 0; i++)
        mixed = plans[i].large_min_rows > 0 ? i : -1;
    CHECKF(mixed >= 0, "no mixed plan among %d grouped plans", count);
    c->grouped_plan = plans[mixed >= 0 ? mixed : 0];
}

static void chain_free(chain *c) {
    cudaFree(c->x_source);
    cudaFree(c->x);
    cudaFree(c->rows);
    for (int s = 0; s <= STEPS; s++)
        cudaFree(c->w[s]), cudaFree(c->d[s]);
}

/* Queues the chain: every output poisoned, then the GEMMs in order; with
 * `sync`, a stream synchronization after each. Returns 0, or 1 after a
 * failed call (counted as a failed check). */
static int chain_queue(chain *c, int sync) {
    cudaStream_t s = (cudaStream_t)c->stream;
    const size_t x_bytes = TOKENS * widths[0] * 2;
    for (int i = 0; i <= STEPS; i++)
        if (!CHECK(cudaMemsetAsync(c->d[i], GPU_POISON, c->d_bytes[i], s) == cudaSuccess))
            return 1;
    if (!CHECK(cudaMemsetAsync(c->x, GPU_POISON, x_bytes, s) == cudaSuccess) ||
        !CHECK(late_copy(c->x_source, c->x, x_bytes, s) == 0) || (sync && !CHECK(cudaStreamSynchronize(s) == cudaSuccess)))
        return 1;
    const void *in = c->x;
    for (int i = 0; i < STEPS; i++) {
        const tess_status st = tess_gemm(c->h, &c->g[i], NULL, in, c->w[i], c->d[i], c->d[i]);
        CHECKF(st == TESS_STATUS_SUCCESS, "step %d: %s", i + 1, tess_last_error());
        if (st != TESS_STATUS_SUCCESS || (sync && !CHECK(cudaStreamSynchronize(s) == cudaSuccess)))
            return 1;
        in = c->d[i];
    }
    const tess_status st =
        tess_grouped_gemm(c->h, &c->gg, &c->grouped_plan, in, NULL, c->w[STEPS], NULL, c->rows, c->d[STEPS]);
    CHECKF(st == TESS_STATUS_SUCCESS, "grouped step: %s", tess_last_error());
    if (st != TESS_STATUS_SUCCESS)
        return 1;
    return sync && !CHECK(cudaStreamSynchronize(s) == cudaSuccess);
}

/* Bytes of all the chain's outputs. */
static size_t chain_bytes(const chain *c) {
    size_t total = 0;
    for (int i = 0; i <= STEPS; i++)
        total += c->d_bytes[i];
    return total;
}

/* Host copies of every output of the chain (one buffer, outputs in order). */
static unsigned char *chain_outputs(const chain *c) {
    unsigned char *host = malloc(chain_bytes(c)), *at = host;
    if (!host) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    cudaStreamSynchronize((cudaStream_t)c->stream);
    for (int i = 0; i <= STEPS; i++) {
        cudaMemcpy(at, c->d[i], c->d_bytes[i], cudaMemcpyDeviceToHost);
        at += c->d_bytes[i];
    }
    return host;
}

/* Whether a bf16 bit pattern is a NaN (the poison is one). */
static int bf16_is_nan(uint16_t v) { return (v & 0x7f80) == 0x7f80 && (v & 0x7f) != 0; }

/* NaNs in the reference where the chain writes: every dense output, and the
 * grouped output's first masked_rows[g] rows of each group. */
static int64_t nans_where_written(const chain *c, const unsigned char *ref) {
    int64_t nans = 0;
    const unsigned char *at = ref;
    for (int i = 0; i < STEPS; i++) {
        for (size_t e = 0; e < c->d_bytes[i] / 2; e++) {
            uint16_t v;
            memcpy(&v, at + 2 * e, 2);
            nans += bf16_is_nan(v);
        }
        at += c->d_bytes[i];
    }
    for (int g = 0; g < GROUPS; g++)
        for (int64_t r = 0; r < masked_rows[g]; r++)
            for (int64_t col = 0; col < GROUPED_N; col++) {
                uint16_t v;
                memcpy(&v, at + 2 * ((g * GROUP_ROWS + r) * GROUPED_N + col), 2);
                nans += bf16_is_nan(v);
            }
    return nans;
}

int main(void) {
    GPU_TEST_MAIN_START(h, workspace);
    cudaStream_t stream = NULL;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    CHECK_STATUS(tess_set_stream(h, stream), TESS_STATUS_SUCCESS);
    chain c;
    chain_init(&c, h, stream);
    for (int i = 0; i < STEPS; i++) {
        tess_plan plan;
        if (tess_gemm_plan(h, &c.g[i], &plan) == TESS_STATUS_SUCCESS)
            printf("step %d: %lldx%lldx%lld on %s\n", i + 1, (long long)c.g[i].m, (long long)c.g[i].n,
                   (long long)c.g[i].k, plan.name);
    }
    const size_t bytes = chain_bytes(&c);

    chain_queue(&c, 1);
    unsigned char *ref = chain_outputs(&c);
    const int64_t nans = nans_where_written(&c, ref);
    CHECKF(nans == 0, "the synchronized chain left %lld NaN outputs", (long long)nans);

    /* Back to back, several times over (a race need not show every time). */
    for (int run = 0; run < 5; run++) {
        chain_queue(&c, 0);
        unsigned char *got = chain_outputs(&c);
        CHECKF(memcmp(got, ref, bytes) == 0, "back-to-back run %d differs from the synchronized chain", run);
        free(got);
    }

    /* Captured once, replayed. */
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess)) {
        chain_queue(&c, 0);
        cudaError_t end = cudaStreamEndCapture(stream, &graph);
        CHECKF(end == cudaSuccess, "capturing the chain: %s", cudaGetErrorString(end));
    }
    if (graph && CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess)) {
        for (int run = 0; run < 3; run++) {
            CHECK(cudaGraphLaunch(exec, stream) == cudaSuccess);
            unsigned char *got = chain_outputs(&c);
            CHECKF(memcmp(got, ref, bytes) == 0, "graph replay %d differs from the synchronized chain", run);
            free(got);
        }
    }
    CHECK(cudaGetLastError() == cudaSuccess);
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    free(ref);
    chain_free(&c);
    tess_destroy(h);
    cudaStreamDestroy(stream);
    cudaFree(workspace);
    return check_finish("gpu_graph");
}
