// The W4A16 decode GEMV: D (m x n) = X (m x k) W^T for m <= 16 tokens, W
// 4-bit codes with a scale and zero point per row and group of k
// (int4_kernels.h has the packed layout).
//
// At decode sizes the product streams the weights once and does little
// arithmetic, so the kernel is built to keep the packed codes flowing: a
// CTA of 8 warps owns 128 or 256 weight rows (each warp one or two 16-row
// blocks) over one K slice; each lane streams its 16 bytes of every 64-k
// quad past L1, the next quad always in flight, and turns each word into
// its mma.m16n8k16 A fragment with one lop3 per register pair (the codes
// biased to 16-bit numbers whose last place is 1: 128 + q in bf16, 1024 + q
// in f16), an exact subtraction of the biased zero point and one rounding
// multiply by the scale. X's slice (the B operand: 8 or 16 tokens) and the
// rows' scales and zero points are staged in shared memory, 1024 k at a
// time, so each is read from L2 once per CTA rather than once per warp.
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
// CTAs an SM the grid aims for: two keep enough codes in flight (the
// probe's best grids had 1.5-3); also the kernels' launch bound, which lets
// ptxas use the registers two CTAs leave (it spills at its own choice).
#define W4A16_CTAS_PER_SM 2

TESS_DEVICE uint32_t pair_bits(__nv_bfloat162 v) { return *reinterpret_cast<uint32_t *>(&v); }
TESS_DEVICE uint32_t pair_bits(__half2 v) { return *reinterpret_cast<uint32_t *>(&v); }

// The bias a code is read with (bias + q): the smallest power of two whose
// last place is 1 in X's type, bf16 128.0 (bits 0x4300), f16 1024.0 (0x6400).
template <bool F16>
struct int4_bias {
    static constexpr float VALUE = F16 ? 1024.0f : 128.0f;
    static constexpr uint32_t PAIR_BITS = F16 ? 0x64006400u : 0x43004300u; // VALUE in both halves
};

// Two codes of `word` (bits shift .. shift + 3 and 16 + shift ..) as a
// 16-bit pair of bias + q: the codes are or-ed into the bias's mantissa.
template <bool F16>
TESS_DEVICE uint32_t tess_int4_pair(uint32_t word, int shift) {
    uint32_t out;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" // 0xEA: (a & b) | c; b keeps one code in each half
        : "=r"(out)
        : "r"(word >> shift), "r"(0x000f000fu), "r"(int4_bias<F16>::PAIR_BITS));
    return out;
}

// A float as both halves of a 16-bit pair of X's type (F16: f16, else bf16).
template <bool F16>
TESS_DEVICE uint32_t pair_of(float v) {
    if constexpr (F16)
        return pair_bits(__float2half2_rn(v));
    else
        return pair_bits(__float2bfloat162_rn(v));
}

// The fragment register of two codes: (bias + q) - (bias + z) is exact (both
// are integers below 2^8 in bf16's or 2^11 in f16's mantissa), then one
// rounding multiply by the scale (zero_biased and scale: pair_of's).
template <bool F16>
TESS_DEVICE uint32_t dequantize_pair(uint32_t biased, uint32_t zero_biased, uint32_t scale) {
    if constexpr (F16) {
        const __half2 q = *reinterpret_cast<const __half2 *>(&biased);
        return pair_bits(__hmul2(__hsub2(q, *reinterpret_cast<const __half2 *>(&zero_biased)),
                                 *reinterpret_cast<const __half2 *>(&scale)));
    } else {
        const __nv_bfloat162 q = *reinterpret_cast<const __nv_bfloat162 *>(&biased);
        return pair_bits(__hmul2(__hsub2(q, *reinterpret_cast<const __nv_bfloat162 *>(&zero_biased)),
                                 *reinterpret_cast<const __nv_bfloat162 *>(&scale)));
    }
}

// What a CTA stages, 2-byte X elements then floats: X [16][W4A16_STAGE_K +
// pad], the rows' (scale, bias + zero) [W4A16_STAGE_K / 64][rows] (a group
// is at least 64 k; rows fastest, so that the 8 rows a fragment's lanes read
// are 8 consecutive pairs), and the warps' partial sums [rows x tokens].
template <int TT, int RB>
struct w4a16_smem {
    static constexpr int ROWS = 16 * RB * W4A16_WARPS, TOKENS = 8 * TT, LDX = W4A16_STAGE_K + W4A16_X_PAD;
    static constexpr int MAX_GROUPS = W4A16_STAGE_K / TESS_INT4_QUAD_K;
    static constexpr size_t X_BYTES = (size_t)TOKENS * LDX * 2;
    static constexpr size_t SZ_BYTES = (size_t)ROWS * MAX_GROUPS * sizeof(float2);
    static constexpr size_t PART_BYTES = (size_t)ROWS * TOKENS * sizeof(float);
    static constexpr size_t BYTES = X_BYTES + SZ_BYTES + PART_BYTES;
};

// Stages X's columns [kb, kb + len) (rows past m zero) and the CTA's rows'
// scales and biased zero points of the groups there.
template <int TT, int RB, bool F16>
TESS_DEVICE void stage(const tess_w4a16_params &p, unsigned char *smem, int row0, int kb, int len) {
    using S = w4a16_smem<TT, RB>;
    uint16_t *xs = (uint16_t *)smem;
    float2 *sz = (float2 *)(smem + S::X_BYTES);
    const int chunks = len / 8; // 16-byte chunks of a row
    for (int i = threadIdx.x; i < S::TOKENS * chunks; i += blockDim.x) {
        const int t = i / chunks, c8 = 8 * (i % chunks);
        uint4 v = make_uint4(0, 0, 0, 0);
        if (t < p.m)
            v = *reinterpret_cast<const uint4 *>((const uint16_t *)p.x + (int64_t)t * p.ld_x + kb + c8);
        *reinterpret_cast<uint4 *>(xs + t * S::LDX + c8) = v;
    }
    const int groups = len / p.group, g0 = kb / p.group;
    const float bias = int4_bias<F16>::VALUE;
    for (int i = threadIdx.x; i < S::ROWS * groups; i += blockDim.x) { // rows fastest: coalesced along n
        const int r = i % S::ROWS, gi = i / S::ROWS, row = row0 + r;
        float2 v = make_float2(0.0f, bias);
        if (row < p.n) {
            const int64_t group = g0 + gi;
            v.x = tess_load_as_f32(p.scale_type, p.scales, group * p.ld_scales + row);
            v.y = bias + (p.zeros ? (float)p.zeros[group * p.ld_zeros + row] : 8.0f);
        }
        sz[gi * S::ROWS + r] = v;
    }
}

// Loads quad kq of the warp's row blocks (zeros past the weight's rows),
// streamed past L1 (ld_global_nc_16: L1 holds nothing this kernel reads
// twice from global memory).
template <int RB>
TESS_DEVICE void load_quad(uint4 (&w)[RB], const uint4 *codes, int rb0, int row_blocks, int64_t quads, int64_t kq,
                           int lane) {
#pragma unroll
    for (int r = 0; r < RB; r++)
        w[r] = rb0 + r < row_blocks ? ld_global_nc_16<true>(codes + ((int64_t)(rb0 + r) * quads + kq) * 32 + lane)
                                    : make_uint4(0, 0, 0, 0);
}

// One quad of the warp's row blocks: the fragments of each 16-k block,
// dequantized with the staged scale and zero point of rows g and g + 8, and
// the mmas with X's fragments of the staged tokens (one set for all RB
// blocks). q: the quad's index in the stage; group: its group there.
template <int TT, int RB, bool F16>
TESS_DEVICE void quad_mma(float (&acc)[RB][TT][4], const uint4 (&w)[RB], const unsigned char *smem, int wrow, int q,
                          int group, int g, int c) {
    using S = w4a16_smem<TT, RB>;
    const uint16_t *xs = (const uint16_t *)smem;
    const float2 *sz = (const float2 *)(smem + S::X_BYTES);
    uint32_t scale[RB][2], zero[RB][2]; // converted once a quad: pair_of's
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float2 f = sz[group * S::ROWS + wrow + 16 * r + g + 8 * h];
            scale[r][h] = pair_of<F16>(f.x), zero[r][h] = pair_of<F16>(f.y);
        }
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const int kk = TESS_INT4_QUAD_K * q + 16 * j + 2 * c; // 16: an mma's k
        uint32_t b[TT][2];
#pragma unroll
        for (int tt = 0; tt < TT; tt++) {
            const uint16_t *xr = xs + (8 * tt + g) * S::LDX + kk;
            b[tt][0] = *reinterpret_cast<const uint32_t *>(xr);
            b[tt][1] = *reinterpret_cast<const uint32_t *>(xr + 8);
        }
#pragma unroll
        for (int r = 0; r < RB; r++) {
            const uint32_t word = j == 0 ? w[r].x : j == 1 ? w[r].y : j == 2 ? w[r].z : w[r].w;
            uint32_t a[4];
#pragma unroll
            for (int i = 0; i < 4; i++) // register i: row g (+8 for odd i), k 2c (+8 for i >= 2) and the next
                a[i] = dequantize_pair<F16>(tess_int4_pair<F16>(word, 4 * i), zero[r][i % 2], scale[r][i % 2]);
#pragma unroll
            for (int tt = 0; tt < TT; tt++)
                mma_m16n8k16<F16>(acc[r][tt], a, b[tt][0], b[tt][1]);
        }
    }
}

// One CTA row's chunk of the output, rows [16 RB W4A16_WARPS chunk, ...), over
// this CTA's K slice (blockIdx.y), then the cluster's sum of the slices.
// Ends on a barrier that every CTA of the cluster passes once no one reads
// its shared memory any more, so that the next chunk may stage over it.
template <int TT, int RB, bool F16>
TESS_DEVICE void w4a16_chunk(const tess_w4a16_params &p, unsigned char *smem, int chunk) {
    using S = w4a16_smem<TT, RB>;
    float *part = (float *)(smem + S::X_BYTES + S::SZ_BYTES);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int row0 = chunk * S::ROWS, rb0 = row0 / 16 + warp * RB, row_blocks = p.n / 16;
    // This CTA's K slice: whole groups, the groups shared out as evenly as they divide.
    const int groups = p.k / p.group;
    const int k0 = (int)((int64_t)blockIdx.y * groups / p.split) * p.group;
    const int slice = (int)((int64_t)(blockIdx.y + 1) * groups / p.split) * p.group - k0;
    const int64_t quads = p.k / TESS_INT4_QUAD_K;
    const uint4 *codes = (const uint4 *)p.codes;
    float acc[RB][TT][4] = {};
    // The slice's quads, the next one's codes loaded before the current one
    // is used (first, so that they travel while X is staged).
    const int first = k0 / TESS_INT4_QUAD_K, last = (k0 + slice) / TESS_INT4_QUAD_K - 1;
    uint4 cur[RB], next[RB];
    load_quad<RB>(cur, codes, rb0, row_blocks, quads, first, lane);
    for (int kb = k0; kb < k0 + slice; kb += W4A16_STAGE_K) {
        const int len = min(W4A16_STAGE_K, k0 + slice - kb); // whole groups
        if (kb != k0)
            __syncthreads(); // the last stage is read
        stage<TT, RB, F16>(p, smem, row0, kb, len);
        __syncthreads();
        for (int q = 0; q < len / TESS_INT4_QUAD_K; q++) {
            const int kq = kb / TESS_INT4_QUAD_K + q;
            load_quad<RB>(next, codes, rb0, row_blocks, quads, min(kq + 1, last), lane);
            quad_mma<TT, RB, F16>(acc, cur, smem, 16 * RB * warp, q, q * TESS_INT4_QUAD_K / p.group, g, c);
#pragma unroll
            for (int r = 0; r < RB; r++)
                cur[r] = next[r];
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
    for (int e = begin + threadIdx.x; e < end; e += blockDim.x) {
        float sum = 0.0f;
        if (p.split > 1) {
            const uint32_t at = smem_u32(part + e);
            for (int s = 0; s < p.split; s++)
                sum += ld_shared_cluster_f32(at, (uint32_t)s);
        } else
            sum = part[e];
        // e's accumulator: lane el, element v of token tile tt of block wr (warp x RB + r)
        const int el = e % 32, v = (e / 32) % 4, tt = (e / 128) % TT, wr = e / (128 * TT);
        const int row = row0 + 16 * wr + tess_gemv_c_row(el, v), token = 8 * tt + tess_gemv_c_token(el, v);
        if (row < p.n && token < p.m)
            tess_epilogue_put(p.epi, 0, token, row, tess_epilogue_final(p.epi, sum, 0, 0, token, row));
    }
    if (p.split > 1)
        cluster_sync(); // no CTA leaves or restages while another reads its partials
    else
        __syncthreads();
}

// The row chunks blockIdx.x, + gridDim.x, ...: one each, unless an SM
// budget made the grid narrower than the chunks.
template <int TT, int RB, bool F16>
__global__ void __launch_bounds__(W4A16_WARPS * 32, W4A16_CTAS_PER_SM)
    w4a16_gemv_kernel(const __grid_constant__ tess_w4a16_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    // Programmatic dependent launch: nothing global is read before the
    // previous kernel in the stream has finished.
    grid_dependency_wait();
    grid_dependents_launch();
    const int rows = 16 * RB * W4A16_WARPS, chunks = (p.n + rows - 1) / rows;
    for (int chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x)
        w4a16_chunk<TT, RB, F16>(p, smem, chunk);
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

// The grid: two 16-row blocks a warp where that still gives the SMs
// W4A16_CTAS_PER_SM CTAs with some K split, else one; then the fewest K
// slices (at most TESS_W4A16_MAX_SPLIT, and at most one per group) that
// reach that many CTAs, or the most there may be. Under an SM budget
// (`budgeted`) one CTA an SM, and never more CTAs than SMs: the grid's
// columns then take several row chunks each. Returns the grid's columns.
static int choose_grid(tess_w4a16_params *p, int sms, int budgeted) {
    sms = sms > 0 ? sms : 1;
    const int64_t target = budgeted ? sms : (int64_t)W4A16_CTAS_PER_SM * sms;
    const int groups = p->k / p->group, most = groups < TESS_W4A16_MAX_SPLIT ? groups : TESS_W4A16_MAX_SPLIT;
    int64_t ctas = 0;
    for (int rb = 2; rb >= 1; rb--) {
        const int64_t rows = 16 * rb * W4A16_WARPS;
        ctas = (p->n + rows - 1) / rows;
        int split = 1;
        while (split < most && ctas * split < target)
            split++;
        p->rows_per_warp = rb, p->split = split;
        if (ctas * split >= target)
            break;
    }
    if (budgeted) {
        while (p->split > 1 && p->split > sms)
            p->split--;
        const int64_t columns = sms / p->split;
        return (int)(ctas < columns ? ctas : columns);
    }
    return (int)ctas;
}

extern "C" tess_status tess_launch_w4a16_gemv(tess_w4a16_params *p, int sms, int budgeted, void *stream) {
    const int columns = choose_grid(p, sms, budgeted);
    const w4a16_variant *v = &w4a16_variants[p->m <= 8 ? 0 : 1][p->rows_per_warp - 1];
    const w4a16_kernel_fn kernel = p->x_f16 ? v->f16 : v->bf16;
    const size_t smem = v->smem;
    const tess_status s = tess_cuda_status(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
        "setting the W4A16 GEMV's shared memory");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)columns, (unsigned)p->split);
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
