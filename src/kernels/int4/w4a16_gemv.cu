// The W4A16 decode GEMV: D (m x n) = X (m x k) W^T for m <= 16 tokens, W
// 4-bit codes with a scale and zero point per row and group of k
// (int4_kernels.h has the packed layout).
//
// At decode sizes the product streams the weights once and does little
// arithmetic: a CTA of 8 warps owns 128 or 256 weight rows (each warp one
// or two 16-row blocks) over one K slice; each lane streams its 16 bytes of
// every 64-k quad past L1, the next quad always in flight, and turns each
// word into its mma.m16n8k16 A fragment with one lop3 per register pair
// (the codes biased to 16-bit numbers whose last place is 1: 128 + q in
// bf16, 1024 + q in f16) and an exact subtraction of the biased zero point.
// The mma so sums (q - z) x exactly in float32, and the group's scale
// multiplies those sums once a group (one or two quads), not every weight.
// Instructions issued, not bytes, bound the kernel at these sizes (ncu:
// dev/results/h100-w4a16-ab/), so a quad is kept to about 66 of them for its
// 1024 weights: 16 lop3 and 12 shifts, 16 subtractions, 4 mmas, 8 shared
// loads of X, loop and addresses by pointer steps. X's slice (the B
// operand: 8 or 16 tokens) and the rows' scales and zero points are staged
// in shared memory, 1024 k at a time, so each is read from L2 once per CTA
// rather than once per warp.
//
// K is split into up to 8 slices of whole groups (as even as the groups
// allow), the CTAs of one cluster, so that a small weight still fills the
// GPU; the slices' partial sums meet in distributed shared memory, each CTA
// adding a share of the outputs over the slices in
// slice order: one launch, no workspace, the same bits on every run.
// Measured as a probe first (dev/results/h100-w4a16-probe.txt: its
// variants of row blocks a warp, warps a CTA and quads in flight).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "core/error.h"
#include "kernels/common/epilogue.cuh"
#include "kernels/common/fragment.h"
#include "kernels/common/ptx.cuh"
#include "kernels/int4/int4_fragment.cuh"
#include "kernels/int4/int4_kernels.h"
#include "ref/convert.h"

// Warps a CTA: 8 x 32 threads share one staged slice of X.
#define W4A16_WARPS 8
// K staged at once: X's 16 token rows of 1024 bf16 (32 KB) and up to 16
// groups' scales for 256 rows (32 KB) leave room for two CTAs an SM.
#define W4A16_STAGE_K 1024
// Row padding of the staged X (elements): rows 16 bytes apart modulo 128,
// so the 8 tokens a fragment load reads hit 8 different banks.
#define W4A16_X_PAD 8
// CTAs an SM the grid aims for (the probe's best grids had 1.5-3).
#define W4A16_CTAS_PER_SM 2
// CTAs an SM the registers must allow (the kernels' launch bound: at most
// 85 registers a thread) where shared memory allows as many: the kernel is
// bound by latency, and more warps an SM hide more of it.
#define W4A16_MIN_CTAS_PER_SM 3

// What a CTA stages, 2-byte X elements then floats: X [16][W4A16_STAGE_K +
// pad], the rows' (scale, bias + zero) [W4A16_STAGE_K / 64][rows] (a group
// is at least 64 k; rows fastest, so that the 8 rows a fragment's lanes read
// are 8 consecutive pairs), and the warps' partial sums [rows x tokens].
template <int TT, int RB>
struct w4a16_smem {
    // TOKENS: the token tiles' n8 each
    static constexpr int ROWS = TESS_INT4_ROW_BLOCK * RB * W4A16_WARPS, TOKENS = 8 * TT;
    static constexpr int LDX = W4A16_STAGE_K + W4A16_X_PAD;
    static constexpr int MAX_GROUPS = W4A16_STAGE_K / TESS_INT4_QUAD_K;
    static constexpr size_t X_BYTES = (size_t)TOKENS * LDX * 2;
    static constexpr size_t SZ_BYTES = (size_t)ROWS * MAX_GROUPS * sizeof(float2);
    static constexpr size_t PART_BYTES = (size_t)ROWS * TOKENS * sizeof(float);
    static constexpr size_t BYTES = X_BYTES + SZ_BYTES + PART_BYTES;
    // The launch bound's CTAs an SM: W4A16_MIN_CTAS_PER_SM, or fewer where
    // shared memory (227 KB an SM, 1 KB of it reserved a CTA) fits fewer.
    static constexpr int SMEM_CTAS = (int)((227u * 1024u) / (BYTES + 1024u));
    static constexpr int MIN_CTAS = SMEM_CTAS < W4A16_MIN_CTAS_PER_SM ? SMEM_CTAS : W4A16_MIN_CTAS_PER_SM;
};

// One expert's operands (tess_w4a16_params' experts; the only one without
// them): its x, codes, scales and zero points, its rows (0: none) and its
// index, D's batch and the bias's.
struct w4a16_expert {
    const uint16_t *x;
    const uint4 *codes;
    const void *scales;
    const uint8_t *zeros;
    int m, index;
};

// Expert g of p, its rows masked_m[g] clamped to [0, m].
TESS_DEVICE w4a16_expert expert_of(const tess_w4a16_params &p, int g) {
    const int64_t scale_bytes = p.scale_type == TESS_DTYPE_F32 ? 4 : 2;
    w4a16_expert e;
    e.x = (const uint16_t *)p.x + g * p.x_group_stride;
    e.codes = (const uint4 *)((const unsigned char *)p.codes + g * p.codes_group_stride);
    e.scales = (const unsigned char *)p.scales + g * p.scales_group_stride * scale_bytes;
    e.zeros = p.zeros ? p.zeros + g * p.zeros_group_stride : nullptr;
    e.m = p.masked_m ? min(max(p.masked_m[g], 0), p.m) : p.m;
    e.index = g;
    return e;
}

// The (scale, zero point) pairs of one stage batch: items i = threadIdx.x +
// (j0 + j) THREADS, rows fastest (coalesced along n), group i / rows of the
// stage, of expert e; their bits into sv (the scale, 16 or 32 bits) and zv
// (the zero point; 8 where there are none).
#define W4A16_STAGE_BATCH 4
template <int ROWS, int THREADS>
TESS_DEVICE void stage_scale_loads(const tess_w4a16_params &p, const w4a16_expert &e, int row0, int g0, int groups,
                                   int j0, uint32_t (&sv)[W4A16_STAGE_BATCH], uint32_t (&zv)[W4A16_STAGE_BATCH]) {
    const bool wide = p.scale_type == TESS_DTYPE_F32; // else f16 or bf16
#pragma unroll
    for (int j = 0; j < W4A16_STAGE_BATCH; j++) {
        const int i = threadIdx.x + (j0 + j) * THREADS, r = i % ROWS, gi = i / ROWS, row = row0 + r;
        const bool in = gi < groups && row < p.n;
        const int64_t at = (g0 + (int64_t)gi) * p.ld_scales + row;
        sv[j] = ld_nc_b32_or_u16((const char *)e.scales + (in ? at : 0) * (wide ? 4 : 2), in, wide);
        zv[j] = in && e.zeros ? e.zeros[(g0 + (int64_t)gi) * p.ld_zeros + row] : (uint32_t)TESS_INT4_DEFAULT_ZERO;
    }
}

// Stores stage_scale_loads' batch as (scale, bias + zero) floats.
template <int ROWS, int THREADS, bool F16>
TESS_DEVICE void stage_scale_stores(const tess_w4a16_params &p, float2 *sz, int groups, int j0,
                                    const uint32_t (&sv)[W4A16_STAGE_BATCH], const uint32_t (&zv)[W4A16_STAGE_BATCH]) {
#pragma unroll
    for (int j = 0; j < W4A16_STAGE_BATCH; j++) {
        const int i = threadIdx.x + (j0 + j) * THREADS, r = i % ROWS, gi = i / ROWS;
        const float scale = p.scale_type == TESS_DTYPE_F32   ? __uint_as_float(sv[j])
                            : p.scale_type == TESS_DTYPE_F16 ? tess_f16_to_f32((uint16_t)sv[j])
                                                             : tess_bf16_to_f32((uint16_t)sv[j]);
        if (gi < groups)
            sz[gi * ROWS + r] = make_float2(scale, int4_bias<F16>::VALUE + (float)zv[j]);
    }
}

// Stages X's columns [kb, kb + len) (rows past m zero) and the CTA's rows'
// scales and biased zero points of the groups there. Each thread issues
// W4A16_STAGE_BATCH loads before it stores any, and the first batch of
// scales (cold, from DRAM) goes out with X's (from L2), so that a stage
// costs one or two memory round trips rather than one a loop turn; larger
// batches cost the main loop registers, and with them CTAs.
template <int TT, int RB, bool F16>
TESS_DEVICE void stage(const tess_w4a16_params &p, const w4a16_expert &e, unsigned char *smem, int row0, int kb,
                       int len) {
    using S = w4a16_smem<TT, RB>;
    constexpr int THREADS = W4A16_WARPS * 32, BATCH = W4A16_STAGE_BATCH;
    constexpr int X_TURNS = S::TOKENS * (W4A16_STAGE_K / 8) / THREADS; // X's 16-byte chunks a thread, at most
    constexpr int SZ_TURNS = S::ROWS * S::MAX_GROUPS / THREADS;        // (scale, zero) pairs a thread, at most
    static_assert(X_TURNS % BATCH == 0 && SZ_TURNS % BATCH == 0, "whole batches");
    uint16_t *xs = (uint16_t *)smem;
    float2 *sz = (float2 *)(smem + S::X_BYTES);
    const int chunks = len / 8, groups = len / p.group, g0 = kb / p.group;
    uint32_t sv[BATCH], zv[BATCH]; // the first scale batch, in flight with X
    stage_scale_loads<S::ROWS, THREADS>(p, e, row0, g0, groups, 0, sv, zv);
    for (int j0 = 0; j0 < X_TURNS; j0 += BATCH) {
        uint4 xv[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; j++) {
            const int i = threadIdx.x + (j0 + j) * THREADS, t = i / chunks, c8 = 8 * (i % chunks);
            xv[j] = make_uint4(0, 0, 0, 0);
            if (t < e.m) // e.m <= TOKENS
                xv[j] = *reinterpret_cast<const uint4 *>(e.x + (int64_t)t * p.ld_x + kb + c8);
        }
#pragma unroll
        for (int j = 0; j < BATCH; j++) {
            const int i = threadIdx.x + (j0 + j) * THREADS, t = i / chunks, c8 = 8 * (i % chunks);
            if (t < S::TOKENS)
                *reinterpret_cast<uint4 *>(xs + t * S::LDX + c8) = xv[j];
        }
    }
    stage_scale_stores<S::ROWS, THREADS, F16>(p, sz, groups, 0, sv, zv);
    for (int j0 = BATCH; j0 < SZ_TURNS && j0 * THREADS < S::ROWS * groups; j0 += BATCH) {
        stage_scale_loads<S::ROWS, THREADS>(p, e, row0, g0, groups, j0, sv, zv);
        stage_scale_stores<S::ROWS, THREADS, F16>(p, sz, groups, j0, sv, zv);
    }
}

// One quad of the warp's row blocks into the group's sums: the fragments of
// each 16-k block as q - z (zero: the biased zero points of rows g and
// g + 8) and the mmas with X's fragments of the staged tokens (one set for
// all RB blocks). xq: the staged X at the quad's first column, the lane's
// row g and column 2c.
template <int TT, int RB, bool F16>
TESS_DEVICE void quad_mma(float (&sums)[RB][TT][4], const uint4 (&w)[RB], const uint16_t *xq,
                          const uint32_t (&zero)[RB][2]) {
    using S = w4a16_smem<TT, RB>;
#pragma unroll
    for (int j = 0; j < 4; j++) { // the quad's 16-k blocks: an mma's k each
        uint32_t b[TT][2];
#pragma unroll
        for (int tt = 0; tt < TT; tt++) {
            const uint16_t *xr = xq + 8 * tt * S::LDX + 16 * j; // token tile tt's rows, 16-k block j
            b[tt][0] = *reinterpret_cast<const uint32_t *>(xr);
            b[tt][1] = *reinterpret_cast<const uint32_t *>(xr + 8);
        }
#pragma unroll
        for (int r = 0; r < RB; r++) {
            const uint32_t word = j == 0 ? w[r].x : j == 1 ? w[r].y : j == 2 ? w[r].z : w[r].w;
            uint32_t a[4];
#pragma unroll
            for (int i = 0; i < 4; i++) // register i: row g (+8 for odd i), k 2c (+8 for i >= 2) and the next
                a[i] = zero_shifted_pair<F16>(tess_int4_pair<F16>(word, 4 * i), zero[r][i % 2]);
#pragma unroll
            for (int tt = 0; tt < TT; tt++)
                mma_m16n8k16<F16>(sums[r][tt], a, b[tt][0], b[tt][1]);
        }
    }
}

// One CTA row's chunk of the output, rows [16 RB W4A16_WARPS chunk, ...), over
// this CTA's K slice (blockIdx.y), then the cluster's sum of the slices.
// Ends on a barrier that every CTA of the cluster passes once no one reads
// its shared memory any more, so that the next chunk may stage over it.
template <int TT, int RB, bool F16>
TESS_DEVICE void w4a16_chunk(const tess_w4a16_params &p, const w4a16_expert &e, unsigned char *smem, int chunk) {
    using S = w4a16_smem<TT, RB>;
    const uint16_t *xs = (const uint16_t *)smem;
    const float2 *sz = (const float2 *)(smem + S::X_BYTES);
    float *part = (float *)(smem + S::X_BYTES + S::SZ_BYTES);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int row0 = chunk * S::ROWS, rb0 = row0 / TESS_INT4_ROW_BLOCK + warp * RB;
    const int row_blocks = p.n / TESS_INT4_ROW_BLOCK;
    // This CTA's K slice: whole groups, the groups shared out as evenly as they divide.
    const int groups = p.k / p.group;
    const int k0 = (int)((int64_t)blockIdx.y * groups / p.split) * p.group;
    const int slice = (int)((int64_t)(blockIdx.y + 1) * groups / p.split) * p.group - k0;
    const int count = slice / TESS_INT4_QUAD_K, group_quads = p.group / TESS_INT4_QUAD_K;
    // The lane's codes of each row block from the slice's first quad, 32
    // uint4s a quad (a lane's 16 bytes each). A warp past the weight's last row block (n is whole
    // blocks) reads that block again: its sums are never stored.
    const uint4 *src[RB];
#pragma unroll
    for (int r = 0; r < RB; r++)
        src[r] = e.codes +
                 ((int64_t)min(rb0 + r, row_blocks - 1) * (p.k / TESS_INT4_QUAD_K) + k0 / TESS_INT4_QUAD_K) * 32 +
                 lane;
    float acc[RB][TT][4] = {};
    // The next quad's codes are loaded before the current one is used
    // (first, so that they travel while X is staged); the slice's last quad
    // is loaded twice rather than reading past it.
    uint4 cur[RB], next[RB];
#pragma unroll
    for (int r = 0; r < RB; r++)
        cur[r] = ld_global_nc_16<true>(src[r]);
    int i = 0; // the slice's quads used
    for (int kb = k0; kb < k0 + slice; kb += W4A16_STAGE_K) {
        const int len = min(W4A16_STAGE_K, k0 + slice - kb); // whole groups
        if (kb != k0)
            __syncthreads(); // the last stage is read
        stage<TT, RB, F16>(p, e, smem, row0, kb, len);
        __syncthreads();
        const uint16_t *xq = xs + g * S::LDX + 2 * c;
        for (int gi = 0; gi < len / p.group; gi++) {
            // the group's scales (applied to its sums) and biased zero points of rows g and g + 8
            float scale[RB][2];
            uint32_t zero[RB][2];
#pragma unroll
            for (int r = 0; r < RB; r++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    // row g of the warp's block r, + 8: the fragment's second row half
                    const float2 f = sz[gi * S::ROWS + TESS_INT4_ROW_BLOCK * (RB * warp + r) + g + 8 * h];
                    scale[r][h] = f.x, zero[r][h] = pair_of<F16>(f.y);
                }
            float sums[RB][TT][4] = {};
            for (int q = 0; q < group_quads; q++, i++) {
                const int ahead = 32 * min(i + 1, count - 1); // in uint4s: 32 a quad
#pragma unroll
                for (int r = 0; r < RB; r++)
                    next[r] = ld_global_nc_16<true>(src[r] + ahead);
                quad_mma<TT, RB, F16>(sums, cur, xq, zero);
                xq += TESS_INT4_QUAD_K;
#pragma unroll
                for (int r = 0; r < RB; r++)
                    cur[r] = next[r];
            }
#pragma unroll
            for (int r = 0; r < RB; r++)
#pragma unroll
                for (int tt = 0; tt < TT; tt++)
#pragma unroll
                    for (int v = 0; v < 4; v++) // element v: row g + 8 (v / 2) (tess_gemv_c_row)
                        acc[r][tt][v] = fmaf(scale[r][v / 2], sums[r][tt][v], acc[r][tt][v]);
        }
    }

    // The slices' sums: each CTA's partials in its shared memory, then each
    // CTA of the cluster adds a share of the outputs over the slices in
    // slice order and stores them.
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int tt = 0; tt < TT; tt++)
#pragma unroll
            for (int v = 0; v < 4; v++)
                part[(((warp * RB + r) * TT + tt) * 4 + v) * 32 + lane] = acc[r][tt][v];
    if (p.split > 1)
        cluster_sync(); // release the partials to the cluster, acquire the others'
    else
        __syncthreads();
    const int outputs = S::ROWS * S::TOKENS, share = (outputs + p.split - 1) / p.split;
    const int begin = blockIdx.y * share, end = min(outputs, begin + share);
    for (int o = begin + threadIdx.x; o < end; o += blockDim.x) {
        // o's accumulator: lane el, element v of token tile tt of block wr (warp x RB + r)
        const int el = o % 32, v = (o / 32) % 4, tt = (o / 128) % TT, wr = o / (128 * TT);
        const int row = row0 + TESS_INT4_ROW_BLOCK * wr + tess_gemv_c_row(el, v);
        const int token = 8 * tt + tess_gemv_c_token(el, v);
        if (row >= p.n || token >= e.m) // padding: no output, nothing to read
            continue;
        float sum = part[o];
        if (p.split > 1) {
            // Every slice's partial is asked for before any is added (a
            // remote load's latency once, not once a slice), then added in
            // slice order.
            const uint32_t at = smem_u32(part + o);
            float slice[TESS_W4A16_MAX_SPLIT];
#pragma unroll
            for (int s = 0; s < TESS_W4A16_MAX_SPLIT; s++)
                slice[s] = s < p.split ? ld_shared_cluster_f32(at, (uint32_t)s) : 0.0f;
            sum = slice[0];
#pragma unroll
            for (int s = 1; s < TESS_W4A16_MAX_SPLIT; s++)
                if (s < p.split)
                    sum += slice[s];
        }
        tess_epilogue_put(p.epi, e.index, token, row,
                          tess_epilogue_final(p.epi, sum, e.index, e.index, token, row));
    }
    if (p.split > 1)
        cluster_sync(); // no CTA leaves or restages while another reads its partials
    else
        __syncthreads();
}

// The work items (expert, row chunk), expert-major, from this CTA's place in
// the grid's x and z on, a grid's x z apart: one each, unless an SM budget
// made the grid narrower, when the CTAs share out the items of the experts
// with rows however those lie. An item of an expert without rows is
// skipped by every CTA of a cluster alike (they share x and z), so no
// cluster barrier waits on a CTA gone.
template <int TT, int RB, bool F16>
__global__ void __launch_bounds__(W4A16_WARPS * 32, w4a16_smem<TT, RB>::MIN_CTAS)
    w4a16_gemv_kernel(const __grid_constant__ tess_w4a16_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    // Programmatic dependent launch: nothing global is read before the
    // previous kernel in the stream has finished.
    grid_dependency_wait();
    grid_dependents_launch();
    const int rows = TESS_INT4_ROW_BLOCK * RB * W4A16_WARPS, chunks = (p.n + rows - 1) / rows;
    const int64_t items = (int64_t)p.groups * chunks;
    for (int64_t item = (int64_t)blockIdx.z * gridDim.x + blockIdx.x; item < items;
         item += (int64_t)gridDim.x * gridDim.z) {
        const w4a16_expert e = expert_of(p, (int)(item / chunks));
        if (e.m == 0)
            continue;
        w4a16_chunk<TT, RB, F16>(p, e, smem, (int)(item % chunks));
    }
}

// The kernels by token tiles (1, 2) and row blocks a warp (1, 2): X bf16 or
// f16, and their dynamic shared memory.
typedef void (*w4a16_kernel_fn)(tess_w4a16_params);
typedef struct w4a16_variant {
    w4a16_kernel_fn bf16, f16;
    size_t smem;
} w4a16_variant;
#define W4A16_VARIANT(TT, RB) \
    {w4a16_gemv_kernel<TT, RB, false>, w4a16_gemv_kernel<TT, RB, true>, w4a16_smem<TT, RB>::BYTES}
static const w4a16_variant w4a16_variants[2][2] = {{W4A16_VARIANT(1, 1), W4A16_VARIANT(1, 2)},
                                                   {W4A16_VARIANT(2, 1), W4A16_VARIANT(2, 2)}};

// The grid (columns, K slices, experts): two 16-row blocks a warp where that
// still gives the SMs W4A16_CTAS_PER_SM CTAs with some K split, counting
// the CTAs of the experts expected to have rows, else one; then the fewest
// K slices (at most TESS_W4A16_MAX_SPLIT, and at most one per group) that
// reach that many CTAs, or the most there may be. Under an SM budget
// (`budgeted`) one CTA an SM, and never more CTAs than SMs: the grid is one
// row of columns that take the (expert, row chunk) items in turn.
static dim3 choose_grid(tess_w4a16_params *p, int sms, int budgeted) {
    sms = sms > 0 ? sms : 1;
    const int64_t target = budgeted ? sms : (int64_t)W4A16_CTAS_PER_SM * sms;
    const int groups = p->k / p->group, most = groups < TESS_W4A16_MAX_SPLIT ? groups : TESS_W4A16_MAX_SPLIT;
    const int64_t busy = p->expected_groups > 0 && p->expected_groups < p->groups ? p->expected_groups : p->groups;
    int64_t chunks = 0;
    for (int rb = 2; rb >= 1; rb--) {
        const int64_t rows = TESS_INT4_ROW_BLOCK * rb * W4A16_WARPS;
        chunks = (p->n + rows - 1) / rows;
        int split = 1;
        while (split < most && chunks * busy * split < target)
            split++;
        p->rows_per_warp = rb, p->split = split;
        if (chunks * busy * split >= target)
            break;
    }
    if (!budgeted)
        return dim3((unsigned)chunks, (unsigned)p->split, (unsigned)p->groups);
    while (p->split > 1 && p->split > sms)
        p->split--;
    const int64_t clusters = sms / p->split, items = chunks * p->groups; // at most sms CTAs: clusters of split
    return dim3((unsigned)(items < clusters ? items : clusters), (unsigned)p->split, 1);
}

extern "C" tess_status tess_launch_w4a16_gemv(tess_w4a16_params *p, int sms, int budgeted, void *stream) {
    const dim3 grid = choose_grid(p, sms, budgeted);
    const w4a16_variant *v = &w4a16_variants[p->m <= 8 ? 0 : 1][p->rows_per_warp - 1];
    const w4a16_kernel_fn kernel = p->x_f16 ? v->f16 : v->bf16;
    const size_t smem = v->smem;
    const tess_status s = tess_cuda_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
        "setting the W4A16 GEMV's shared memory");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = dim3(W4A16_WARPS * 32);
    config.dynamicSmemBytes = smem;
    config.stream = (cudaStream_t)stream;
    cudaLaunchAttribute attrs[2] = {};
    attrs[0].id = cudaLaunchAttributeClusterDimension; // the K slices of a CTA row: one cluster
    attrs[0].val.clusterDim.x = 1, attrs[0].val.clusterDim.y = (unsigned)p->split, attrs[0].val.clusterDim.z = 1;
    attrs[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[1].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attrs;
    config.numAttrs = p->early_launch ? 2 : 1;
    return tess_cuda_status(cudaLaunchKernelEx(&config, kernel, *p), "launching the W4A16 GEMV");
}
