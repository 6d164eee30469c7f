/* The decode family: GEMV kernels for a few tokens (kernels/decode/gemv.cu),
 * one matrix in the TN layout, that stream the weights straight into
 * registers (float32 FMAs up to 8 tokens, mma.sync up to 16). Which kernel
 * serves a problem, its estimated time on the footing of the sm90 family's
 * estimates (core/cost.h's rates), its plan, its launch, and its
 * registration. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/cost.h"
#include "core/dtype.h"
#include "core/family.h"
#include "core/handle.h"
#include "core/scale.h"
#include "kernels/decode/decode.h"

/* Bytes of a 16-byte chunk: the kernels' loads along K (TMA's rule too). */
#define TESS_GEMV_CHUNK_BYTES 16

/* Whether decode GEMV kernel i (kernels/decode/gemv.cu, its table's index)
 * is offered for the problem. The kernels read A and B with 16-byte loads
 * along K, so both must be K-major (the 'TN' layout of decode: tokens
 * row-major, weights column-major) with K whole 16-byte chunks; one matrix
 * (batch 1); both 16-bit of one type, or e4m3 with block factors on both
 * operands or on neither; K at most TESS_GEMV_MAX_K; M at most the kernel's tokens. Of each family
 * (float32 FMAs, tensor cores of 4 or 8 warps) only the narrowest kernel that holds M is
 * offered: the table lists each family's kernels of a type by token count,
 * smallest first. */
/* The kernels count K in 32-bit ints, rounded up to whole steps of up to 64
 * elements: K must stay that far below 2^31. */
#define TESS_GEMV_MAX_K (INT32_MAX - 64)
static int gemv_offered(const tess_gemm_desc *d, int i) {
    const tess_dtype t = d->a.dtype;
    const int block = tess_scale_is_block(d->a_scale.mode);
    /* A gated epilogue (tess_gate) pairs columns these kernels spread over CTAs, and an FP8 D is written
     * by the sm90 epilogue only: the sm90 family serves them. */
    if (d->batch != 1 || d->gate != TESS_GATE_NONE || tess_dtype_is_fp8(d->d.dtype) ||
        d->a.order != TESS_ORDER_ROW || d->b.order != TESS_ORDER_COL ||
        d->b.dtype != t ||
        d->k % (TESS_GEMV_CHUNK_BYTES / (int64_t)tess_dtype_size(t)) != 0 ||
        block != tess_scale_is_block(d->b_scale.mode) ||
        d->k > TESS_GEMV_MAX_K)
        return 0;
    const tess_gemv_kernel *k = tess_gemv_kernel_at(i);
    if (!k || k->input != t || k->block_scaled != block || d->m > k->max_m)
        return 0;
    for (int j = 0; j < i; j++) {
        const tess_gemv_kernel *o = tess_gemv_kernel_at(j);
        if (o->tensor_cores == k->tensor_cores && o->warps == k->warps && o->input == t && o->block_scaled == block &&
            d->m <= o->max_m)
            return 0;
    }
    return 1;
}

/* Estimated run time of the decode GEMV kernel on the problem, on the
 * footing of estimate()'s, which leaves out the ~6 us every sm90 launch
 * costs: the longer of its weight stream and its float32 arithmetic, plus
 * TESS_OVERLAP_LOSS of the shorter, less what its lighter launch saves.
 * Fitted to H100 GPU times (held stream, dev/NOTES.md "Small M", "Decode
 * GEMV"): a 1x128x128 call takes 3.9 us against the sm90 kernels' 5.9
 * (TESS_GEMV_LAUNCH_SAVING_S); past that, 1x4096x7168 bf16 streams its
 * 58.7 MB at 2.88 TB/s, 0.95 of the sustained copy rate
 * (TESS_GEMV_STREAM_EFFICIENCY); 64 CTAs (1x256x7168) draw 1.05 TB/s, 16 GB/s
 * each (TESS_GEMV_CTA_BYTES_PER_S: 8-16 KB in flight per CTA); 8 tokens of
 * bf16 (8x4096x7168, 29.7 us) and 4 of e4m3 (4x2112x7168, 13.6 us) are
 * bound by the FMAs and the conversions around them, at 0.34 and 0.2 of the
 * SMs' float32 FMA rate (e4m3 converts each weight and token twice, through
 * f16). */
#define TESS_GEMV_STREAM_EFFICIENCY 0.95
#define TESS_GEMV_CTA_BYTES_PER_S 16e9
#define TESS_GEMV_FMA_EFFICIENCY_16BIT 0.34
#define TESS_GEMV_FMA_EFFICIENCY_E4M3 0.2
#define TESS_GEMV_LAUNCH_SAVING_S 2.0e-6
/* float32 FMAs per SM per clock on sm_90: 128 lanes. */
#define TESS_SM90_FMA_PER_CLOCK 128.0

/* CTAs of decode GEMV kernel k on problem d: one per k->rows weight rows, no split of K. */
static int64_t gemv_grid(const tess_gemv_kernel *k, const tess_gemm_desc *d) { return (d->n + k->rows - 1) / k->rows; }

/* What `ctas` CTAs drawing `per_cta` bytes/s each stream together, at most `cap`. */
static double capped_rate(int64_t ctas, double per_cta, double cap) {
    return (double)ctas * per_cta < cap ? (double)ctas * per_cta : cap;
}

/* The weight stream time of tensor-core GEMV kernel k (16 rows a CTA, N / 16
 * CTAs): no FMAs to speak of, so a 16-bit one takes its stream time (e4m3
 * adds gemv_mma_e4m3_work). Each CTA draws
 * up to TESS_GEMV_MMA_CTA_BYTES_PER_S (32 KB in flight; H100,
 * 132 CTAs of 16x2112x7168 streamed 1.86 TB/s), and a grid wider than its
 * resident CTAs (k->ctas_per_sm) streams its last partial wave at that
 * wave's CTAs' rate (16x7168x2048: 448 CTAs on 396 places, 19.5 us against
 * 16.6 for the 8-token kernel, 4 a SM). At 1 token it streams as fast as
 * the float32 kernel (24.6 against 24.4 us at 1x4096x7168). Its launch
 * saves 1 us less than the float32 kernel's: at short K it takes ~2 us more
 * than its stream (4x7168x2048: 16.3 us, 8 tokens 16.6, for 10.3 us of
 * stream and a ~4 us launch), which this stands for where it matters. */
#define TESS_GEMV_MMA_CTA_BYTES_PER_S 14.4e9
#define TESS_GEMV_MMA_LAUNCH_SAVING_S 1.0e-6
/* A CTA of 8 warps keeps twice the bytes in flight but is planned one to an
 * SM (k->ctas_per_sm): where the grid fits one wave (16x2112x7168, 132
 * CTAs; H100) it draws 1.06x the 4-warp CTA's rate in bf16 and
 * 1.17x in block-scaled e4m3; where it does not (N=4096, 256 CTAs) its
 * second wave makes it 8-25% slower, as the waves below count. */
#define TESS_GEMV_MMA_W8_RATE_GAIN 1.1
static double gemv_mma_memory(const tess_gemv_kernel *k, int64_t grid, int64_t sms, double bytes, double rate) {
    const int64_t resident = sms * k->ctas_per_sm;
    const double cta_rate = TESS_GEMV_MMA_CTA_BYTES_PER_S * (k->warps == 8 ? TESS_GEMV_MMA_W8_RATE_GAIN : 1.0);
    const int64_t full_waves = grid / resident, tail = grid % resident;
    const double full_rate = capped_rate(resident, cta_rate, rate);
    const double tail_rate = capped_rate(tail, cta_rate, rate);
    const double per_cta = bytes / (double)grid;
    return (double)(full_waves * resident) * per_cta / full_rate +
           (tail > 0 ? (double)tail * per_cta / tail_rate : 0.0);
}

/* What the e4m3 tensor-core GEMV adds to its stream: each weight is
 * converted to f16 (mma.sync of e4m3 runs as f16 HMMA on sm_90) and, with
 * block factors, each 64-K step's partial sums are scaled by their 128-K
 * block's factors and promoted, once per 8-token tile. The time does not hide under the stream; fitted
 * to H100 GPU times (dev/gemv_mma_check.sh, 4096x7168):
 * 1.7 us per token tile per tensor factors (4 and 8 tokens 11.0 and 11.2 us
 * against a 10.3 us stream, 16 tokens 12.8), 5.3 us with block factors (4
 * and 8 tokens 15.6 and 15.4; 16 tokens 16.7, less than twice): 66 and 21
 * weights per SM per clock. */
#define TESS_GEMV_MMA_E4M3_WEIGHTS_PER_CLOCK 66.0
#define TESS_GEMV_MMA_E4M3_BLOCK_WEIGHTS_PER_CLOCK 21.0
static double gemv_mma_e4m3_work(const tess_gemv_kernel *k, const tess_gemm_desc *d, double sms, double hz) {
    const double per_clock =
        k->block_scaled ? TESS_GEMV_MMA_E4M3_BLOCK_WEIGHTS_PER_CLOCK : TESS_GEMV_MMA_E4M3_WEIGHTS_PER_CLOCK;
    return (double)(k->max_m / 8) * (double)d->n * (double)d->k / (sms * per_clock * hz);
}

static double gemv_estimate(const tess_device_info *info, const tess_gemv_kernel *k, const tess_gemm_desc *d) {
    const double hz = tess_device_sm_hz(info), peak_bytes = tess_device_memory_bytes_per_s(info);
    const double sms = tess_device_sms(info);
    const double bytes = (double)d->k * (double)(d->m + d->n) * tess_dtype_size(d->a.dtype) +
                         (double)d->m * d->n * tess_dtype_size(d->d.dtype) +
                         (d->beta != 0.0f ? (double)d->m * d->n * tess_dtype_size(d->c.dtype) : 0.0);
    /* A small grid draws what its CTAs' loads in flight allow. */
    const int64_t grid = gemv_grid(k, d);
    const double stream_rate = peak_bytes * TESS_SUSTAINED_MEMORY * TESS_GEMV_STREAM_EFFICIENCY;
    if (k->tensor_cores)
        return gemv_mma_memory(k, grid, (int64_t)sms, bytes, stream_rate) - TESS_GEMV_MMA_LAUNCH_SAVING_S +
               (k->input == TESS_DTYPE_E4M3 ? gemv_mma_e4m3_work(k, d, sms, hz) : 0.0);
    const double memory = bytes / capped_rate(grid, TESS_GEMV_CTA_BYTES_PER_S, stream_rate);
    const double fma_efficiency =
        k->input == TESS_DTYPE_E4M3 ? TESS_GEMV_FMA_EFFICIENCY_E4M3 : TESS_GEMV_FMA_EFFICIENCY_16BIT;
    const double compute =
        (double)k->max_m * d->n * d->k / (sms * TESS_SM90_FMA_PER_CLOCK * hz * fma_efficiency);
    const double longer = compute > memory ? compute : memory, shorter = compute > memory ? memory : compute;
    return longer + TESS_OVERLAP_LOSS * shorter - TESS_GEMV_LAUNCH_SAVING_S;
}

/* Fills plan p for decode GEMV kernel k on problem d. */
static void describe(const tess_gemv_kernel *k, const tess_gemm_desc *d, tess_plan *p) {
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->tile_m = k->max_m, p->tile_n = k->rows;
    /* Elements a thread reads of a row per step: a 16-byte chunk, or a tensor-core K step. */
    p->tile_k = (k->tensor_cores ? TESS_GEMV_MMA_STEP_BYTES : TESS_GEMV_CHUNK_BYTES) / (int)tess_dtype_size(d->a.dtype);
    p->stages = k->tensor_cores ? TESS_GEMV_MMA_DEPTH_OF(k->input == TESS_DTYPE_E4M3, k->max_m / 8)
                                : 2; /* steps in flight per thread */
    p->cluster_m = 1;
    p->grid = p->tiles = (int32_t)gemv_grid(k, d);
    snprintf(p->name, sizeof p->name, "gemv_%s_tn_m%d_r%d%s%s%s", tess_dtype_name(d->a.dtype), k->max_m, k->rows,
             k->block_scaled ? "_blk" : "", k->tensor_cores ? "_mma" : "", k->warps == 8 ? "_w8" : "");
}


static void plans(const tess_device_info *info, const tess_problem *problem, size_t workspace_limit,
                  tess_plan_list *out) {
    (void)workspace_limit; /* the GEMVs need none */
    const tess_gemm_desc *d = problem->gemm;
    if (!d)
        return;
    for (int g = 0; g < tess_gemv_kernel_count(); g++) {
        if (!gemv_offered(d, g))
            continue;
        const tess_gemv_kernel *k = tess_gemv_kernel_at(g);
        tess_plan *p = tess_plan_list_offer(out, gemv_estimate(info, k, d));
        if (p)
            describe(k, d, p);
    }
}

/* The kernel of the GEMV plan named plan->name for problem d, and the plan
 * it makes (*made), or NULL. */
static const tess_gemv_kernel *plan_kernel(const tess_gemm_desc *d, const tess_plan *plan, tess_plan *made) {
    for (int g = 0; g < tess_gemv_kernel_count(); g++) {
        if (!gemv_offered(d, g))
            continue;
        describe(tess_gemv_kernel_at(g), d, made);
        if (strcmp(made->name, plan->name) == 0)
            return tess_gemv_kernel_at(g);
    }
    return NULL;
}

const tess_gemv_kernel *tess_decode_plan_kernel(const tess_gemm_desc *d, const tess_plan *plan) {
    tess_plan made;
    return plan_kernel(d, plan, &made);
}

static tess_status run(tess_handle h, const tess_problem *problem, const tess_plan *plan, const tess_operands *o) {
    const tess_gemm_desc *desc = problem->gemm;
    tess_plan made;
    const tess_gemv_kernel *k = desc ? plan_kernel(desc, plan, &made) : NULL;
    if (!k)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: plan %s is none of the GEMV plans for this problem (another type, layout or "
                         "shape)",
                         plan->name);
    if (made.grid != plan->grid)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: plan %s was made for another problem", plan->name);
    tess_gemv_params p;
    memset(&p, 0, sizeof p);
    p.a = o->a, p.b = o->b, p.lda = desc->a.ld, p.ldb = desc->b.ld;
    p.m = (int)desc->m, p.n = (int)desc->n, p.k = (int)desc->k;
    p.epi = tess_epilogue_of(desc, o->c, o->d, o->bias, o->residual);
    tess_epilogue_set_aux(&p.epi, desc, o->aux);
    p.scale_a.data = o->a_scale, p.scale_a.layout = desc->a_scale;
    p.scale_b.data = o->b_scale, p.scale_b.layout = desc->b_scale;
    p.early_launch = tess_handle_early_launch(h);
    return k->launch(&p, h->stream);
}

/* The compute capabilities this build compiled the family for (CMake:
 * family.cmake's ARCHS within TESS_CUDA_ARCHS). */
static const int built_ccs[] = {TESS_FAMILY_CCS};

static int runs_on(const tess_device_info *info) {
    return tess_family_cc_built(info, built_ccs, (int)(sizeof built_ccs / sizeof built_ccs[0]));
}

const tess_family tess_family_decode = {
    "gemv", TESS_FAMILY_SMALL_M, "compute capability 9.0 (sm_90a)", runs_on, plans, run,
};
