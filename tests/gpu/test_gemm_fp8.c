/* FP8 on the GPU:
 *  - tess_gemm_scaled on random problems, TN or (a third) with A M-major
 *    and / or B N-major (staged K-major in the workspace): every (e4m3, e5m2) pair, every
 *    accepted scale recipe pair in random layouts (outer index or K blocks
 *    contiguous, padded strides, batches), bf16/f16/f32 D in either order,
 *    beta with C, ragged M, N, K, every plan (of one problem per recipe,
 *    too), fast accumulation; against the
 *    GPU reference (float32 accumulation of the dequantized inputs), with D
 *    poisoned and a guard after it; stream-K plans run twice, bit for bit;
 *  - decode shapes (M up to 64) in every recipe with every plan, transposed
 *    ones included;
 *  - accuracy at depth (K 4096 and 16384) against the float64 CPU reference,
 *    promoted vs fast accumulation;
 *  - an FP8 D, per tensor (scale, amax) and per row and 128 columns
 *    (factors written beside D), from every plan.
 * The quantization and transpose utilities are tests/gpu/test_utilities.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/matrix.h"
#include "core/scale.h"
#include "gpu_skip.h"
#include "kernels/sm90/sm90.h"
#include "problem.h"
#include "ref/convert.h"

/* Room for every plan of any problem: small M adds transposed plans and token tiles. */
#define MAX_PLANS 128

static tess_rng rng;

/* The scale recipe pairs (A, B) tessera accepts for FP8. */
static const tess_scale_mode recipes[][2] = {
    {TESS_SCALE_TENSOR, TESS_SCALE_TENSOR},          {TESS_SCALE_OUTER_VEC, TESS_SCALE_OUTER_VEC},
    {TESS_SCALE_TENSOR, TESS_SCALE_OUTER_VEC},       {TESS_SCALE_BLOCK_1x128, TESS_SCALE_BLOCK_128x128},
    {TESS_SCALE_BLOCK_1x128, TESS_SCALE_BLOCK_1x128}, {TESS_SCALE_BLOCK_128x128, TESS_SCALE_BLOCK_1x128},
    {TESS_SCALE_BLOCK_128x128, TESS_SCALE_BLOCK_128x128}};
#define RECIPES ((int)(sizeof recipes / sizeof recipes[0]))

/* One FP8 problem: its descriptor and host inputs (A row-major, B column-major). */
typedef struct fp8_case {
    tess_gemm_desc g;
    test_problem t; /* host buffers; t.p is the reference problem over them */
    int repeat;     /* run every plan twice, bit for bit (stream-K plans always are) */
} fp8_case;

/* (Re)makes a case's random factors of recipe `recipe`: in random layouts,
 * or with `packed` in the layouts DeepGEMM and cuBLASLt use. */
static void make_scales(fp8_case *c, int recipe, int packed) {
    tess_gemm_desc *g = &c->g;
    test_problem *t = &c->t;
    tess_ref_gemm *p = &t->p;
    free(t->a_scale), free(t->b_scale);
    if (packed) {
        t->a_scale = test_scale_packed(&p->a_scale, &rng, recipes[recipe][0], g->m, g->k, g->batch, &t->a_scale_bytes);
        t->b_scale = test_scale_packed(&p->b_scale, &rng, recipes[recipe][1], g->n, g->k, g->batch, &t->b_scale_bytes);
    } else {
        const int block = tess_scale_is_block(recipes[recipe][0]);
        t->a_scale = test_scale_random(&p->a_scale, &rng, recipes[recipe][0], g->m, g->k, g->batch, !block,
                                       &t->a_scale_bytes);
        t->b_scale = test_scale_random(&p->b_scale, &rng, recipes[recipe][1], g->n, g->k, g->batch, !block,
                                       &t->b_scale_bytes);
    }
    if (g->b.batch_stride == 0) /* B shared by the batch: so are its factors */
        p->b_scale.layout.batch_stride = 0;
    g->a_scale = p->a_scale.layout, g->b_scale = p->b_scale.layout;
}

/* Operand layouts of a case: K-major (TN), or A M-major and / or B N-major,
 * which tess_gemm stages as K-major copies in the workspace. */
enum { K_MAJOR = 0, A_M_MAJOR = 1, B_N_MAJOR = 2 };

static void make_case(fp8_case *c, int64_t m, int64_t n, int64_t k, int64_t batch, tess_dtype ta, tess_dtype tb,
                      int recipe, tess_dtype td, int d_row, float beta, int fast, int orders) {
    memset(c, 0, sizeof *c);
    tess_gemm_desc *g = &c->g;
    tess_gemm_desc_init(g);
    g->m = m, g->n = n, g->k = k, g->batch = batch, g->beta = beta, g->fast_accum = fast;
    g->alpha = tess_rng_range(&rng, 0, 1) ? 1.0f : (float)(0.5 + tess_rng_uniform(&rng));
    const int64_t lda = (k + 15) / 16 * 16 + 16 * tess_rng_range(&rng, 0, 1), ldb = (k + 15) / 16 * 16;
    g->a = (tess_matrix_desc){ta, TESS_ORDER_ROW, m, k, lda, batch > 1 ? m * lda + 16 * tess_rng_range(&rng, 0, 2) : 0};
    g->b = (tess_matrix_desc){tb, TESS_ORDER_COL, k, n, ldb, batch > 1 && tess_rng_range(&rng, 0, 2) ? n * ldb : 0};
    /* Staged operands: any leading dimension (the copy kernel reads them), sometimes shared by the batch. */
    if (orders & A_M_MAJOR) { /* K rows of M */
        const int64_t ld = m + tess_rng_range(&rng, 0, 20);
        const int shared = tess_rng_range(&rng, 0, 2) == 0;
        g->a = (tess_matrix_desc){ta, TESS_ORDER_COL, m, k, ld, batch > 1 && !shared ? k * ld : 0};
    }
    if (orders & B_N_MAJOR) { /* K rows of N */
        const int64_t ld = n + tess_rng_range(&rng, 0, 20);
        const int shared = tess_rng_range(&rng, 0, 2) == 0;
        g->b = (tess_matrix_desc){tb, TESS_ORDER_ROW, k, n, ld, batch > 1 && !shared ? k * ld : 0};
    }
    const int64_t ldd = d_row ? n + tess_rng_range(&rng, 0, 1) * 8 : m + tess_rng_range(&rng, 0, 1) * 8;
    g->d = (tess_matrix_desc){td, d_row ? TESS_ORDER_ROW : TESS_ORDER_COL, m, n, ldd, batch > 1 ? (d_row ? m : n) * ldd : 0};
    g->c = g->d;
    g->c.dtype = TESS_DTYPE_F32; /* C of another type than D */
    test_problem *t = &c->t;
    tess_ref_gemm *p = &t->p;
    p->m = m, p->n = n, p->k = k, p->batch = batch, p->alpha = g->alpha, p->beta = beta;
    p->a = g->a, p->b = g->b, p->c = g->c, p->d = g->d;
    t->a = test_matrix_random(&g->a, batch, &rng, &t->a_bytes);
    t->b = test_matrix_random(&g->b, batch, &rng, &t->b_bytes);
    t->c = beta != 0.0f ? test_matrix_random(&g->c, batch, &rng, &t->c_bytes) : NULL;
    make_scales(c, recipe, 0);
    p->a_data = t->a, p->b_data = t->b, p->c_data = t->c;
    t->d_bytes = test_problem_d_bytes(t);
}

/* Runs a case with plan `plan_index` (< 0: the heuristic's) and returns
 * ||D - ref|| / ||ref||, against the float64 CPU reference when `cpu`, else
 * the GPU float32 one; -1 if the run failed. Checks the guard after D. */
static double run_case(tess_handle h, fp8_case *c, int plan_index, int cpu, char *plan_name) {
    tess_gemm_desc *g = &c->g;
    test_problem *t = &c->t;
    void *da = gpu_upload(t->a, t->a_bytes), *db = gpu_upload(t->b, t->b_bytes), *dc = t->c ? gpu_upload(t->c, t->c_bytes) : NULL;
    float *sa = t->a_scale ? gpu_upload(t->a_scale, t->a_scale_bytes) : NULL;
    float *sb = t->b_scale ? gpu_upload(t->b_scale, t->b_scale_bytes) : NULL;
    unsigned char *dd = gpu_poisoned(t->d_bytes);
    tess_plan plans[MAX_PLANS];
    int count = 0;
    double rel = -1.0;
    CHECK_STATUS(tess_gemm_plans(h, g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
    const tess_plan *plan = gpu_pick_plan(plans, count, plan_index, plan_name);
    tess_status s = tess_gemm_scaled(h, g, plan, da, sa, db, sb, dc, dd);
    cudaError_t err = cudaDeviceSynchronize();
    CHECKF(s == TESS_STATUS_SUCCESS && err == cudaSuccess, "%s: status %s, %s (%s)", plan_name, tess_status_name(s),
           cudaGetErrorString(err), tess_last_error());
    if (s == TESS_STATUS_SUCCESS && err == cudaSuccess) {
        unsigned char *out = malloc(t->d_bytes + GPU_GUARD_BYTES);
        cudaMemcpy(out, dd, t->d_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost);
        int64_t nonfinite = 0, guard = 0;
        guard = gpu_guard_touched(out, t->d_bytes);
        CHECKF(guard == 0, "%s: %lld bytes written after D", plan_name, (long long)guard);
        if (plan && (plan->stream_k || c->repeat)) { /* the fixup order is fixed: a second run repeats bit for bit, */
            unsigned char *again = malloc(t->d_bytes);
            gpu_scribble_workspace(h); /* even with the workspace overwritten in between */
            cudaMemset(dd, GPU_POISON, t->d_bytes);
            s = tess_gemm_scaled(h, g, plan, da, sa, db, sb, dc, dd);
            err = cudaDeviceSynchronize();
            cudaMemcpy(again, dd, t->d_bytes, cudaMemcpyDeviceToHost);
            CHECKF(s == TESS_STATUS_SUCCESS && err == cudaSuccess && memcmp(again, out, t->d_bytes) == 0,
                   "%s: a second run gave different bits", plan_name);
            free(again);
        }
        if (cpu) {
            double *want = malloc(sizeof(double) * (size_t)(g->m * g->n * g->batch));
            CHECK_STATUS(tess_ref_gemm_cpu(&t->p, want), TESS_STATUS_SUCCESS);
            rel = tess_ref_rel_error(&t->p, want, out, &nonfinite);
            free(want);
        } else {
            tess_ref_gemm ref = t->p;
            ref.a_data = da, ref.b_data = db, ref.c_data = dc, ref.a_scale.data = sa, ref.b_scale.data = sb;
            tess_matrix_desc rd = {TESS_DTYPE_F32, TESS_ORDER_COL, g->m, g->n, g->m, g->m * g->n};
            ref.d = rd;
            size_t ref_bytes = sizeof(float) * (size_t)(g->m * g->n * g->batch);
            float *dref = gpu_upload(NULL, ref_bytes), *want = malloc(ref_bytes);
            CHECK_STATUS(tess_ref_gemm_gpu(&ref, dref, NULL), TESS_STATUS_SUCCESS);
            cudaMemcpy(want, dref, ref_bytes, cudaMemcpyDeviceToHost);
            rel = tess_ref_rel_error_matrix(g->batch, &g->d, out, &rd, want, &nonfinite);
            cudaFree(dref), free(want);
        }
        CHECKF(nonfinite == 0, "%s: %lld elements of D not finite (unwritten?)", plan_name, (long long)nonfinite);
        free(out);
    }
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(sa), cudaFree(sb), cudaFree(dd);
    return rel;
}

/* Error bounds, relative (Frobenius) to the references: D's own rounding
 * (unit roundoff) plus an allowance for the tensor cores' FP8 accumulation.
 * They sum each 128-K block keeping about 13 bits; measured on an H200
 * (2026-11-21) that leaves 1.0e-4 to 1.7e-4 with f32 D, at K = 4096 as at
 * 16384 once promoted, so promoted kernels get 2^-12 (2.4e-4). Fast
 * accumulation's error grows with K (1.3e-3 at 4096, 3.1e-3 at 16384;
 * at most 7.6e-4 for the random cases' K <= 1920): 2^-10 there. */
#define PROMOTED_ALLOWANCE 0x1p-12
#define FAST_ALLOWANCE 0x1p-10

/* The allowances are typical relative errors, measured over thousands of
 * outputs; over few (a 1 x 13 D) the ratio of norms scatters by about
 * 1 / sqrt(outputs) more (an H200 run saw 2.6e-4 at 1 x 13 x 1193,
 * promoted), so small outputs get up to sqrt(256 / outputs) times the
 * allowance. Wrong factors or unwritten tiles still miss by orders of
 * magnitude. */
static double small_output_scale(const tess_gemm_desc *g) {
    const double outputs = (double)(g->m * g->n * g->batch);
    return outputs < 256.0 ? sqrt(256.0 / outputs) : 1.0;
}

static void test_random(tess_handle h) {
    static const tess_dtype fp8[2] = {TESS_DTYPE_E4M3, TESS_DTYPE_E5M2};
    static const tess_dtype outs[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    int runs = 0, failures = 0;
    double worst[2] = {0, 0};
    int staged = 0;
    for (int trial = 0, trials = check_trials(140); trial < trials; trial++) {
        fp8_case c;
        const int recipe = trial % RECIPES, fast = !tess_scale_is_block(recipes[recipe][0]) && tess_rng_range(&rng, 0, 2) == 0;
        const int64_t k = tess_rng_range(&rng, 0, 3) ? gpu_pick_dim(&rng, 1500) : 16 * tess_rng_range(&rng, 1, 120);
        make_case(&c, gpu_pick_dim(&rng, 700), gpu_pick_dim(&rng, 700), k, tess_rng_range(&rng, 0, 4) ? 1 : 2,
                  fp8[tess_rng_range(&rng, 0, 1)], fp8[tess_rng_range(&rng, 0, 1)], recipe,
                  outs[tess_rng_range(&rng, 0, 2)], (int)tess_rng_range(&rng, 0, 1),
                  tess_rng_range(&rng, 0, 2) ? 0.0f : 0.5f, fast,
                  tess_rng_range(&rng, 0, 2) ? K_MAJOR : (int)tess_rng_range(&rng, 1, 3));
        char plan[64];
        const int before = check_failed;
        staged += c.g.a.order == TESS_ORDER_COL || c.g.b.order == TESS_ORDER_ROW;
        double rel = run_case(h, &c, (int)tess_rng_range(&rng, -1, 3), 0, plan);
        double bound = test_dtype_rounding(c.g.d.dtype).unit +
                       (fast ? FAST_ALLOWANCE : PROMOTED_ALLOWANCE) * small_output_scale(&c.g);
        CHECKF(rel >= 0 && rel <= bound,
               "%lldx%lldx%lld batch %lld %s%s x %s%s, scales %d x %d, D %s %s, beta %g, plan %s: rel error %.3g "
               "(bound %.3g)",
               (long long)c.g.m, (long long)c.g.n, (long long)c.g.k, (long long)c.g.batch, tess_dtype_name(c.g.a.dtype),
               c.g.a.order == TESS_ORDER_COL ? " (M-major)" : "", tess_dtype_name(c.g.b.dtype),
               c.g.b.order == TESS_ORDER_ROW ? " (N-major)" : "", (int)c.g.a_scale.mode, (int)c.g.b_scale.mode, tess_dtype_name(c.g.d.dtype),
               c.g.d.order == TESS_ORDER_ROW ? "row" : "col", c.g.beta, plan, rel, bound);
        if (rel >= 0 && c.g.d.dtype == TESS_DTYPE_F32 && rel > worst[fast])
            worst[fast] = rel;
        runs++;
        failures += check_failed > before;
        test_problem_free(&c.t);
    }
    printf("fp8 random cases: %d run (%d with operands staged K-major), %d failed; worst f32-D error promoted %.3g, "
           "fast %.3g\n",
           runs, staged, failures, worst[0], worst[1]);
}

/* Runs case c with every plan, each checked against D's rounding plus
 * `allowance`; fills plans and *count (the plans run, at most MAX_PLANS)
 * for the caller's tallies and returns the runs. `what` names the case in
 * failure messages. */
static int check_every_plan(tess_handle h, fp8_case *c, double allowance, const char *what, tess_plan *plans,
                            int *count) {
    *count = 0;
    CHECK_STATUS(tess_gemm_plans(h, &c->g, plans, MAX_PLANS, count), TESS_STATUS_SUCCESS);
    if (*count > MAX_PLANS)
        *count = MAX_PLANS;
    for (int plan = 0; plan < *count; plan++) {
        char name[64];
        const double rel = run_case(h, c, plan, 0, name);
        const double bound = test_dtype_rounding(c->g.d.dtype).unit + allowance;
        CHECKF(rel >= 0 && rel <= bound, "%lldx%lldx%lld batch %lld scales %d x %d %s, plan %s: rel error %.3g (bound %.3g)",
               (long long)c->g.m, (long long)c->g.n, (long long)c->g.k, (long long)c->g.batch, (int)c->g.a_scale.mode,
               (int)c->g.b_scale.mode, what, name, rel, bound);
    }
    return *count;
}

/* The block recipes in the packed layouts (DeepGEMM's, cuBLASLt's), whose
 * factors the kernels load by TMA with the tiles: every plan, ragged N and
 * K (K blocks not a multiple of the 4 per TMA box of 128x128 factors), rows
 * of A a multiple of 4 (a 16-byte K-block stride), one matrix or two. */
static void test_factors_by_tma(tess_handle h) {
    int runs = 0;
    for (int trial = 0; trial < 6; trial++) {
        const int recipe = trial % 2 ? 4 : 3; /* (1x128, 128x128) and (1x128, 1x128) */
        const int64_t m = 4 * tess_rng_range(&rng, 1, 150), k = tess_rng_range(&rng, 1, 1700), batch = 1 + trial / 4;
        const int64_t n = trial % 2 ? 4 * tess_rng_range(&rng, 1, 150) : tess_rng_range(&rng, 1, 600);
        fp8_case c;
        make_case(&c, m, n, k, batch, TESS_DTYPE_E4M3, TESS_DTYPE_E4M3, recipe, TESS_DTYPE_BF16, 1, 0.0f, 0, K_MAJOR);
        make_scales(&c, recipe, 1);
        tess_plan plans[MAX_PLANS];
        int count;
        runs += check_every_plan(h, &c, PROMOTED_ALLOWANCE, "packed", plans, &count);
        test_problem_free(&c.t);
    }
    printf("fp8 packed-factor (TMA) cases: %d runs\n", runs);
}

/* A ring stage is refilled only once its consumers have read its block
 * factors: many short tiles per CTA (4 K blocks, factors by TMA, the ring
 * lapping mid-tile), a bf16 D five times the L2 stored element by element
 * from registers by the narrow tiles (stores that hold up the consumers'
 * shared-memory loads), factors that differ from row to row and block to
 * block (a factor read from the next fill is wrong by their spread); every
 * plan, run twice, bit for bit, and against the reference. Without
 * release_stage's proxy fence the 128x32 tiles got ~640 of their 32768
 * tiles wrong here on an H100. */
static void test_stage_reuse(tess_handle h) {
    fp8_case c;
    make_case(&c, 4096, 32768, 512, 1, TESS_DTYPE_E4M3, TESS_DTYPE_E4M3, 3, TESS_DTYPE_BF16, 1, 0.0f, 0, K_MAJOR);
    make_scales(&c, 3, 1);
    c.repeat = 1;
    tess_plan plans[MAX_PLANS];
    int count;
    const int runs = check_every_plan(h, &c, PROMOTED_ALLOWANCE, "stage reuse", plans, &count);
    test_problem_free(&c.t);
    printf("fp8 stage-reuse case: %d plans, each twice\n", runs);
}

/* Every plan of a ragged problem in each recipe, fast accumulation too:
 * each large-problem kernel (every tile width, cluster and scaling kind,
 * the 256-wide tiles that promote in two halves among them) runs on
 * partial tiles, several K blocks with a tail, random type pairs and D
 * types; stream-K plans run twice, bit for bit. */
static void test_every_plan(tess_handle h) {
    static const tess_dtype fp8[2] = {TESS_DTYPE_E4M3, TESS_DTYPE_E5M2};
    static const tess_dtype outs[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    int runs = 0, halves = 0;
    for (int trial = 0; trial <= RECIPES; trial++) {
        const int recipe = trial < RECIPES ? trial : 0, fast = trial == RECIPES;
        fp8_case c;
        make_case(&c, tess_rng_range(&rng, 130, 700), tess_rng_range(&rng, 260, 700), tess_rng_range(&rng, 300, 1500),
                  1 + trial % 2, fp8[trial % 2], fp8[(trial / 2) % 2], recipe, outs[trial % 3], trial % 3 != 1,
                  trial % 4 == 3 ? 0.5f : 0.0f, fast, K_MAJOR);
        tess_plan plans[MAX_PLANS];
        int count;
        runs += check_every_plan(h, &c, fast ? FAST_ALLOWANCE : PROMOTED_ALLOWANCE, fast ? "fast" : "", plans, &count);
        for (int plan = 0; plan < count; plan++)
            halves += plans[plan].tile_n == 256 && !fast;
        test_problem_free(&c.t);
    }
    printf("fp8 every-plan cases: %d runs (%d of 256-wide promoted tiles)\n", runs, halves);
    CHECKF(halves > 0, "no plan ran a 256-wide promoted tile (%d runs)", runs);
}

/* The pingpong plans (names with "_pp") on problems of several tiles per
 * CTA, so that both consumer warpgroups take tiles in turn, an even and an
 * odd count of them per CTA (the turn barriers' last pass), ragged edges:
 * block-scaled (factors packed for TMA, and in random layouts), per-tensor
 * and per-row/column promoted. */
static void test_pingpong(tess_handle h) {
    static const int64_t shapes[][3] = {{2048, 2048, 1024}, {3000, 2500, 700}, {1111, 4100, 1300}};
    int runs = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int kind = 0; kind < 4; kind++) {
            const int recipe = kind < 2 ? 3 : kind == 2 ? 0 : 1; /* 1x128 x 128x128, per-tensor, per-row/column */
            fp8_case c;
            make_case(&c, shapes[i][0], shapes[i][1], shapes[i][2], 1, TESS_DTYPE_E4M3, TESS_DTYPE_E4M3, recipe,
                      i == 2 ? TESS_DTYPE_F32 : TESS_DTYPE_BF16, 1, i == 1 ? 0.5f : 0.0f, 0, K_MAJOR);
            if (kind < 2)
                make_scales(&c, recipe, kind == 0);
            tess_plan plans[MAX_PLANS];
            int count = 0;
            CHECK_STATUS(tess_gemm_plans(h, &c.g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
            for (int p = 0; p < count && p < MAX_PLANS; p++) {
                if (!strstr(plans[p].name, "_pp"))
                    continue;
                char name[64];
                const double rel = run_case(h, &c, p, 0, name);
                const double bound = test_dtype_rounding(c.g.d.dtype).unit + PROMOTED_ALLOWANCE;
                CHECKF(rel >= 0 && rel <= bound, "pingpong %lldx%lldx%lld kind %d, plan %s: rel error %.3g (bound %.3g)",
                       (long long)c.g.m, (long long)c.g.n, (long long)c.g.k, kind, name, rel, bound);
                runs++;
            }
            test_problem_free(&c.t);
        }
    printf("fp8 pingpong cases: %d runs\n", runs);
    CHECKF(runs > 0 || !TESS_SM90_OFFERS_PINGPONG, "no pingpong plan ran");
}

/* Decode shapes (M of 1 to 64 tokens, and up to 128: a second consumer
 * warpgroup with a few rows, ragged token tiles) in every recipe, each with every plan: transposed
 * ones (the weights on the kernels' 128-row side, so B's 128x128 factors
 * become per-row blocks of the kernel's A), token tiles, stream-K over
 * every tile when tiles are fewer than the SMs (run twice, bit for bit).
 * Factors in random layouts, and DeepSeek's packed ones. */
static void test_small_m(tess_handle h) {
    static const int64_t shapes[][3] = {
        {1, 1000, 2048}, {4, 2112, 1536}, {16, 777, 3000}, {33, 512, 1100}, {64, 1536, 1024},
        {12, 1003, 1040}, /* the tensor-core GEMV: two token tiles, ragged rows, a K tail */
        {96, 1056, 1536}, /* the second consumer warpgroup's rows end inside it */
        {128, 800, 640}};
    enum { SHAPES = sizeof shapes / sizeof shapes[0] };
    static const tess_dtype outs[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    int runs = 0, transposed = 0, stream_k = 0;
    for (int trial = 0; trial < RECIPES + 4; trial++) {
        const int recipe = trial < RECIPES ? trial : 3 + (trial - RECIPES) % 2, packed = trial >= RECIPES;
        const int64_t *shape = shapes[trial % SHAPES];
        const int fast = recipe == 0 && trial % 2;
        fp8_case c;
        make_case(&c, shape[0], shape[1], shape[2], 1, TESS_DTYPE_E4M3, trial % 3 ? TESS_DTYPE_E4M3 : TESS_DTYPE_E5M2,
                  recipe, outs[trial % 3], trial % 2, trial % 4 == 1 ? 0.5f : 0.0f, fast, K_MAJOR);
        if (packed)
            make_scales(&c, recipe, 1);
        tess_plan plans[MAX_PLANS];
        int count;
        runs += check_every_plan(h, &c, (fast ? FAST_ALLOWANCE : PROMOTED_ALLOWANCE) * small_output_scale(&c.g),
                                 packed ? "packed" : "", plans, &count);
        for (int plan = 0; plan < count; plan++)
            transposed += plans[plan].transposed, stream_k += plans[plan].stream_k;
        test_problem_free(&c.t);
    }
    printf("fp8 small-M cases: %d runs (%d transposed, %d stream-K)\n", runs, transposed, stream_k);
    CHECKF(transposed > 0 && stream_k > 0, "small M: %d runs, %d transposed, %d stream-K", runs, transposed, stream_k);
}

/* Accuracy at depth against float64: the promoted sum keeps D at its own
 * rounding (bf16 D: within one unit roundoff, 2^-8; measured 1.7e-3), f32 D
 * within PROMOTED_ALLOWANCE at any K, and below fast accumulation. */
static void test_depth(tess_handle h) {
    static const int64_t depths[2] = {4096, 16384};
    for (int i = 0; i < 2; i++) {
        for (int recipe = 0; recipe < 4; recipe += 3) { /* per tensor, and DeepSeek-V3's 1x128 x 128x128 */
            double rel[3];
            for (int v = 0; v < 3; v++) { /* bf16 D promoted, f32 D promoted, f32 D fast (per tensor only) */
                if (v == 2 && recipe != 0) {
                    rel[v] = NAN;
                    continue;
                }
                fp8_case c;
                make_case(&c, 256, 384, depths[i], 1, TESS_DTYPE_E4M3, TESS_DTYPE_E4M3, recipe,
                          v == 0 ? TESS_DTYPE_BF16 : TESS_DTYPE_F32, 1, 0.0f, v == 2, K_MAJOR);
                char plan[64];
                rel[v] = run_case(h, &c, -1, 1, plan);
                test_problem_free(&c.t);
            }
            printf("K=%5lld scales %d x %d: rel error vs float64: bf16 D %.3g, f32 D %.3g, f32 D fast %.3g\n",
                   (long long)depths[i], (int)recipes[recipe][0], (int)recipes[recipe][1], rel[0], rel[1], rel[2]);
            CHECKF(rel[0] >= 0 && rel[0] <= 0x1p-8, "K=%lld: bf16 D error %.3g above 2^-8", (long long)depths[i], rel[0]);
            CHECKF(rel[1] >= 0 && rel[1] <= PROMOTED_ALLOWANCE, "K=%lld: f32 D error %.3g", (long long)depths[i], rel[1]);
            if (recipe == 0)
                CHECKF(rel[1] < rel[2], "K=%lld: promotion (%.3g) no better than fast accumulation (%.3g)",
                       (long long)depths[i], rel[1], rel[2]);
        }
    }
}

/* INT8 (W8A8): int8 x int8 summed in int32, exactly, with per-tensor and
 * per-row/column factors, random shapes and layouts (staged K-major where
 * not), against the GPU reference (whose float32 sums of these integers are
 * exact too): within D's rounding. */
static void test_int8(tess_handle h) {
    static const tess_dtype outs[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    int runs = 0, failures = 0;
    for (int trial = 0, trials = check_trials(40); trial < trials; trial++) {
        fp8_case c;
        const int recipe = trial % 3; /* TENSOR x TENSOR, OUTER_VEC x OUTER_VEC, TENSOR x OUTER_VEC */
        const tess_dtype out = outs[trial / 3 % 3]; /* every recipe meets every D type */
        make_case(&c, gpu_pick_dim(&rng, 700), gpu_pick_dim(&rng, 700), 16 * tess_rng_range(&rng, 1, 100),
                  tess_rng_range(&rng, 0, 4) ? 1 : 2, TESS_DTYPE_S8, TESS_DTYPE_S8, recipe, out,
                  (int)tess_rng_range(&rng, 0, 1), tess_rng_range(&rng, 0, 2) ? 0.0f : 0.5f, 0,
                  tess_rng_range(&rng, 0, 2) ? K_MAJOR : (int)tess_rng_range(&rng, 1, 3));
        /* Sums of N(0, 40) integers have a deviation of 1600 sqrt(K), up to 6.4e4 at K = 1600, times
         * factors up to 2 x 2 and alpha up to 1.5: scaled by 2^-8, D stays well inside f16's 65504. */
        if (out == TESS_DTYPE_F16)
            c.g.alpha = c.t.p.alpha = c.g.alpha / 256;
        char plan[64];
        const int before = check_failed;
        const double rel = run_case(h, &c, (int)tess_rng_range(&rng, -1, 3), 0, plan);
        const double bound = test_dtype_rounding(c.g.d.dtype).unit + 1e-6;
        CHECKF(rel >= 0 && rel <= bound, "int8 %lldx%lldx%lld batch %lld, scales %d x %d, D %s, plan %s: rel error "
               "%.3g (bound %.3g)", (long long)c.g.m, (long long)c.g.n, (long long)c.g.k, (long long)c.g.batch,
               (int)c.g.a_scale.mode, (int)c.g.b_scale.mode, tess_dtype_name(c.g.d.dtype), plan, rel, bound);
        runs++;
        failures += check_failed > before;
        test_problem_free(&c.t);
    }
    printf("int8 cases: %d run, %d failed\n", runs, failures);
}

/* One FP8 D's elements (batch b's D of case c, downloaded as `out`) against
 * the float32 reference `want` (column-major M x N per batch), times the
 * multipliers the form applies: a tensor's `scale`, or 1 / each block's
 * factor from `factors` (laid out as d_scale). Each must decode within half
 * an FP8 ulp of the scaled reference plus 2^-3 of slack for the
 * reference's own rounding (3 mantissa bits for e4m3, 2 for e5m2), within
 * the smallest subnormal, or saturate where the scaled value passes the
 * type's largest. Returns the elements outside; their first few printed. */
static int64_t fp8_out_mismatches(const fp8_case *c, const unsigned char *out, const float *want, double amax,
                                  float scale, const float *factors, const char *plan) {
    const tess_gemm_desc *g = &c->g;
    const int e4m3 = g->d.dtype == TESS_DTYPE_E4M3;
    const double largest = e4m3 ? 448.0 : 57344.0, tiny = e4m3 ? 0x1p-9 : 0x1p-16, rel = e4m3 ? 0x1p-4 : 0x1p-3;
    int64_t bad = 0;
    for (int64_t b = 0; b < g->batch; b++)
        for (int64_t n = 0; n < g->n; n++)
            for (int64_t m = 0; m < g->m; m++) {
                const double ref = want[b * g->m * g->n + n * g->m + m];
                const double k = factors ? 1.0 / factors[tess_scale_offset(&g->d_scale, b, m, n / 128)] : scale;
                const double x = ref * k;
                const uint8_t q = out[tess_matrix_offset(&g->d, b, m, n)];
                const double got = e4m3 ? tess_e4m3_to_f32_soft(q) : tess_e5m2_to_f32_soft(q);
                /* The GEMM's own error before the rounding to FP8 is absolute, about 2^-13 of the
                 * problem's largest value (the promoted kernels' float32 sums of products of
                 * e4m3 inputs): small values near cancellation carry it whole. */
                const double sums = 0x1p-11 * amax * k;
                const int ok = fabs(x) >= largest ? fabs(got) == largest && (got > 0) == (x > 0)
                                                  : fabs(got - x) <= (rel + 0x1p-3 * rel) * fabs(x) + tiny + sums;
                if (!ok && bad++ < 4)
                    printf("  %s: D[%lld][%lld, %lld] = %g (byte 0x%02x), want %g (ref %g x %g)\n", plan,
                           (long long)b, (long long)m, (long long)n, got, q, x, ref, k);
            }
    return bad;
}

/* The largest |want| of row m's 128-column block jb of batch b: a block factor's amax. */
static double block_amax(const tess_gemm_desc *g, const float *want, int64_t b, int64_t m, int64_t jb) {
    double amax = 0.0;
    for (int64_t n = 128 * jb; n < g->n && n < 128 * (jb + 1); n++)
        amax = fmax(amax, fabs(want[b * g->m * g->n + n * g->m + m]));
    return amax;
}

/* An FP8 D (tess_gemm_desc.d_scale) from every plan of random problems:
 * e4m3 and e5m2, row- and column-major D, block-scaled and per-tensor
 * inputs, ragged M and N (a last 128-column block cut short), batches,
 * rows TMA can store (the staged path) and rows it cannot (from registers);
 * per tensor with a scale and the amax (and without either), per row and
 * 128 columns with the factors written in the packed layout. Elements
 * against the float32 GPU reference (fp8_out_mismatches), factors and amax
 * within 2^-10 of the reference's, nothing written past D or the factors. */
static void test_fp8_out(tess_handle h) {
    int runs = 0;
    for (int trial = 0; trial < 6; trial++) {
        const int block = trial % 2, recipe = trial % 3 == 2 ? 0 : 3; /* TENSOR x TENSOR, or 1x128 x 128x128 */
        const tess_dtype td = trial % 4 < 2 ? TESS_DTYPE_E4M3 : TESS_DTYPE_E5M2;
        fp8_case c;
        /* N a multiple of 16: a row-major D staged and stored by TMA where its ld is too (make_case draws
         * n or n + 8); trial 1's rows of 16 k + 8 bytes: from registers */
        const int n = 16 * tess_rng_range(&rng, 10, 40) + (trial == 1 ? 8 : 0);
        make_case(&c, tess_rng_range(&rng, 60, 600), n, tess_rng_range(&rng, 200, 900),
                  1 + (trial == 3), TESS_DTYPE_E4M3, TESS_DTYPE_E4M3, recipe, td, block || trial != 4,
                  trial == 5 ? 0.5f : 0.0f, 0, K_MAJOR);
        tess_gemm_desc *g = &c.g;
        test_problem *t = &c.t;
        size_t factor_bytes = 0;
        int64_t shape[2];
        if (block) {
            CHECK_STATUS(tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, g->m, g->n, &g->d_scale, shape, &factor_bytes,
                                                 NULL),
                         TESS_STATUS_SUCCESS);
            g->d_scale.batch_stride = shape[0] * shape[1];
            factor_bytes *= (size_t)g->batch;
        }
        const float scale = trial == 2 ? 1.0f : (float)(0.25 + tess_rng_uniform(&rng));
        void *da = gpu_upload(t->a, t->a_bytes), *db = gpu_upload(t->b, t->b_bytes);
        void *dc = t->c ? gpu_upload(t->c, t->c_bytes) : NULL;
        float *sa = t->a_scale ? gpu_upload(t->a_scale, t->a_scale_bytes) : NULL;
        float *sb = t->b_scale ? gpu_upload(t->b_scale, t->b_scale_bytes) : NULL;
        /* the float32 reference, column-major per batch */
        tess_ref_gemm ref = t->p;
        ref.a_data = da, ref.b_data = db, ref.c_data = dc, ref.a_scale.data = sa, ref.b_scale.data = sb;
        tess_matrix_desc rd = {TESS_DTYPE_F32, TESS_ORDER_COL, g->m, g->n, g->m, g->m * g->n};
        ref.d = rd;
        const size_t ref_bytes = sizeof(float) * (size_t)(g->m * g->n * g->batch);
        float *dref = gpu_upload(NULL, ref_bytes), *want = malloc(ref_bytes);
        CHECK_STATUS(tess_ref_gemm_gpu(&ref, dref, NULL), TESS_STATUS_SUCCESS);
        cudaMemcpy(want, dref, ref_bytes, cudaMemcpyDeviceToHost);
        double amax = 0.0;
        for (size_t i = 0; i < ref_bytes / sizeof(float); i++)
            amax = fmax(amax, fabs(want[i]));
        float *d_scale = trial == 2 ? NULL : gpu_upload(&scale, sizeof scale);
        float *d_amax = gpu_upload(NULL, sizeof(float));
        unsigned char *factors = block ? gpu_poisoned(factor_bytes) : NULL;
        tess_epilogue_ptrs ep = {.struct_size = sizeof ep};
        if (block)
            ep.d_scale_out = (float *)factors;
        else
            ep.d_scale = d_scale, ep.d_amax = trial == 2 ? NULL : d_amax;
        tess_plan plans[MAX_PLANS];
        int count = 0;
        CHECK_STATUS(tess_gemm_plans(h, g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        CHECKF(count > 0, "FP8 D (block %d): no plan", block);
        unsigned char *out = malloc(t->d_bytes + GPU_GUARD_BYTES);
        float *host_factors = block ? malloc(factor_bytes + GPU_GUARD_BYTES) : NULL;
        for (int i = 0; i < count && i < MAX_PLANS; i++) {
            char name[64];
            const tess_plan *plan = gpu_pick_plan(plans, count, i, name);
            unsigned char *dd = gpu_poisoned(t->d_bytes);
            if (block)
                cudaMemset(factors, GPU_POISON, factor_bytes + GPU_GUARD_BYTES);
            cudaMemset(d_amax, 0x7f, sizeof(float)); /* the call zeroes it first */
            const tess_status s = tess_gemm_fused(h, g, plan, da, sa, db, sb, dc, dd, &ep);
            const cudaError_t err = cudaDeviceSynchronize();
            CHECKF(s == TESS_STATUS_SUCCESS && err == cudaSuccess, "%s: status %s, %s (%s)", name, tess_status_name(s),
                   cudaGetErrorString(err), tess_last_error());
            if (s != TESS_STATUS_SUCCESS || err != cudaSuccess) {
                cudaFree(dd);
                continue;
            }
            runs++;
            cudaMemcpy(out, dd, t->d_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost);
            CHECKF(gpu_guard_touched(out, t->d_bytes) == 0, "%s: bytes written after D", name);
            if (block) {
                cudaMemcpy(host_factors, factors, factor_bytes + GPU_GUARD_BYTES, cudaMemcpyDeviceToHost);
                CHECKF(gpu_guard_touched((const unsigned char *)host_factors, factor_bytes) == 0,
                       "%s: bytes written after the block factors", name);
                int64_t wrong = 0;
                for (int64_t b = 0; b < g->batch; b++)
                    for (int64_t m = 0; m < g->m; m++)
                        for (int64_t jb = 0; jb < shape[1]; jb++) {
                            const double a = block_amax(g, want, b, m, jb);
                            const double f = a > 0.0 ? a / (td == TESS_DTYPE_E4M3 ? 448.0 : 57344.0) : 1.0;
                            const float got = host_factors[tess_scale_offset(&g->d_scale, b, m, jb)];
                            if (!(fabs(got - f) <= 0x1p-10 * f) && wrong++ < 4)
                                printf("  %s: factor[%lld][%lld, %lld] = %g, want %g\n", name, (long long)b,
                                       (long long)m, (long long)jb, got, f);
                        }
                CHECKF(wrong == 0, "%s: %lld block factors wrong", name, (long long)wrong);
            } else if (ep.d_amax) {
                float got;
                cudaMemcpy(&got, d_amax, sizeof got, cudaMemcpyDeviceToHost);
                CHECKF(fabs(got - amax) <= 0x1p-10 * amax, "%s: amax %g, want %g", name, got, amax);
            }
            const int64_t bad = fp8_out_mismatches(&c, out, want, amax, ep.d_scale ? scale : 1.0f,
                                                   block ? host_factors : NULL, name);
            CHECKF(bad == 0, "%s: %lld of D's %lld elements wrong (FP8 D, block %d)", name, (long long)bad,
                   (long long)(g->m * g->n * g->batch), block);
            cudaFree(dd);
        }
        free(out), free(host_factors), free(want);
        cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(sa), cudaFree(sb), cudaFree(dref), cudaFree(d_scale);
        cudaFree(d_amax), cudaFree(factors);
        test_problem_free(&c.t);
    }
    printf("fp8 D: %d runs\n", runs);
}

int main(void) {
    GPU_TEST_MAIN_START(h, workspace);
    test_random(h);
    test_factors_by_tma(h);
    test_stage_reuse(h);
    test_every_plan(h);
    test_pingpong(h);
    test_small_m(h);
    test_depth(h);
    test_int8(h);
    test_fp8_out(h);
    GPU_TEST_MAIN_END(h, workspace, "gpu_gemm_fp8");
}
