// Decode GEMV: D (m x n) = alpha * A B^T (+ beta C) for a few tokens (m <= 8
// here, m <= 16 in the tensor-core variant further down), A the tokens (m x
// K, K contiguous), B the weights (n rows of K contiguous elements). At
// decode sizes the weights are read once and the arithmetic is a few FMAs
// per weight, so this kernel has no tensor cores and no shared memory ring
// (one barrier, for its final sum): each thread streams 16-byte chunks of its
// CTA's weight rows straight into registers and multiplies them with the
// tokens (read through L1, where every warp finds them), keeping a float32
// sum per (row, token). What the sm90 GEMM pays before its first byte
// arrives (a 200 KB ring, barrier set-up, tensor-map fetches, the
// epilogue's staging) is what this kernel saves on a 10-30 us problem.
//
// A CTA of TESS_GEMV_THREADS threads owns TESS_GEMV_ROWS weight rows; its
// threads take the rows' 16-byte chunks in turn (chunk c by thread
// c % THREADS), the next chunk of each row in flight while one is used, then add their sums
// in a fixed order (warp shuffles, then the warps' sums in shared memory):
// the same bits on every run.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "core/error.h"
#include "core/matrix.h"
#include "kernels/common/epilogue.cuh"
#include "kernels/common/fragment.h"
#include "kernels/common/ptx.cuh"
#include "kernels/decode/gemv_kernels.h"
#include "ref/convert.h"

// Elements of an input type in one 16-byte chunk, and the chunk's groups of
// 8 (its 32-bit words per group): the unit the FMAs take, so that only 8
// floats per weight row and 8 per token are live at once.
template <tess_dtype IN>
struct gemv_input {
    static constexpr int CHUNK = IN == TESS_DTYPE_E4M3 ? 16 : 8;
    static constexpr int GROUPS = CHUNK / 8;
    static constexpr int WORDS = 4 / GROUPS;
};

// Weights, read once (past L1); tokens, read by every warp (through L1).
TESS_DEVICE uint4 load_weights(const char *p) { return ld_global_nc_16<true>(p); }
TESS_DEVICE uint4 load_tokens16(const char *p) { return ld_global_nc_16<false>(p); }

// The 8 elements held in `w` (4 words of bf16/f16 pairs, or 2 of e4m3
// quadruples) as floats, in memory order.
template <tess_dtype IN>
TESS_DEVICE void unpack8(const uint32_t (&w)[gemv_input<IN>::WORDS], float (&f)[8]) {
#pragma unroll
    for (int i = 0; i < gemv_input<IN>::WORDS; i++) {
        if (IN == TESS_DTYPE_BF16) { // a bf16 is the top half of the float with the same bits
            f[2 * i] = __uint_as_float(w[i] << 16);
            f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
        } else if (IN == TESS_DTYPE_F16) {
            __half2_raw h;
            h.x = (unsigned short)(w[i] & 0xffffu), h.y = (unsigned short)(w[i] >> 16);
            const float2 x = __half22float2(__half2(h));
            f[2 * i] = x.x, f[2 * i + 1] = x.y;
        } else { // e4m3: two at a time through f16, which holds every e4m3 value exactly
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const __half2_raw r =
                    __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w[i] >> (16 * h)), __NV_E4M3);
                const float2 x = __half22float2(__half2(r));
                f[4 * i + 2 * h] = x.x, f[4 * i + 2 * h + 1] = x.y;
            }
        }
    }
}

// Group g's words of a chunk.
template <tess_dtype IN>
TESS_DEVICE void group_words(const uint4 &v, int g, uint32_t (&w)[gemv_input<IN>::WORDS]) {
    const uint32_t all[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < gemv_input<IN>::WORDS; i++)
        w[i] = all[g * gemv_input<IN>::WORDS + i];
}

// Group g of a token's chunk c, read through L1 (16 or 8 bytes). Volatile
// with a memory clobber like load_weights, so that the compiler keeps the
// next chunk's weight loads ahead of these (an __ldg may move across them,
// and then the weight loads sink below the FMAs that wait for the tokens).
template <tess_dtype IN>
TESS_DEVICE void load_token_group(const char *row, int c, int g, uint32_t (&w)[gemv_input<IN>::WORDS]) {
    const char *at = row + (int64_t)c * 16 + g * 4 * gemv_input<IN>::WORDS;
    if constexpr (gemv_input<IN>::WORDS == 4) {
        const uint4 v = load_tokens16(at);
        w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else
        asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(at) : "memory");
}

// Where a thread reads: its CTA's weight rows and the tokens (rows past n
// and tokens past m repeat the last one: computed, never stored), and for
// block-scaled FP8 each one's factor of K block 0 (K block kb is kb *
// stride further).
template <int MT>
struct gemv_sources {
    const char *w[TESS_GEMV_ROWS], *x[MT];
    const float *fw[TESS_GEMV_ROWS], *fx[MT];
    int64_t fw_stride, fx_stride;
};

template <tess_dtype IN, bool BLOCK, int MT>
TESS_DEVICE gemv_sources<MT> gemv_sources_at(const tess_gemv_params &p, int n0) {
    constexpr int64_t ELEM = 16 / gemv_input<IN>::CHUNK; // bytes per element
    gemv_sources<MT> s;
#pragma unroll
    for (int r = 0; r < TESS_GEMV_ROWS; r++) {
        const int n = n0 + r < p.n ? n0 + r : p.n - 1;
        s.w[r] = (const char *)p.b + n * p.ldb * ELEM;
        if (BLOCK)
            s.fw[r] = p.scale_b.data + tess_scale_offset(&p.scale_b.layout, 0, n, 0);
    }
#pragma unroll
    for (int m = 0; m < MT; m++) {
        const int t = m < p.m ? m : p.m - 1;
        s.x[m] = (const char *)p.a + t * p.lda * ELEM;
        if (BLOCK)
            s.fx[m] = p.scale_a.data + tess_scale_offset(&p.scale_a.layout, 0, t, 0);
    }
    s.fw_stride = p.scale_b.layout.stride_k, s.fx_stride = p.scale_a.layout.stride_k;
    return s;
}

// Loads chunk c of the CTA's weight rows.
template <int ROWS>
TESS_DEVICE void load_rows(uint4 (&w)[ROWS], const char *const (&rows)[ROWS], int c) {
#pragma unroll
    for (int r = 0; r < ROWS; r++)
        w[r] = load_weights(rows[r] + (int64_t)c * 16);
}

// Adds chunk c of the CTA's rows (w, already loaded) times the tokens'
// chunk c into acc, 8 elements at a time. Block-scaled: each (row, token)
// sum of the chunk's products is scaled by the two factors of the chunk's
// 128-K block (a chunk of 16 never straddles one) before it is added.
template <tess_dtype IN, bool BLOCK, int MT>
TESS_DEVICE void gemv_chunk(float (&acc)[TESS_GEMV_ROWS][MT], const uint4 (&w)[TESS_GEMV_ROWS],
                            const gemv_sources<MT> &s, int c) {
    constexpr int ROWS = TESS_GEMV_ROWS, WORDS = gemv_input<IN>::WORDS;
    float part[ROWS][MT]; // block-scaled: the chunk's sums, before their factors
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int m = 0; m < MT; m++)
            part[r][m] = 0.0f;
#pragma unroll
    for (int g = 0; g < gemv_input<IN>::GROUPS; g++) {
        float wf[ROWS][8];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            uint32_t words[WORDS];
            group_words<IN>(w[r], g, words);
            unpack8<IN>(words, wf[r]);
        }
#pragma unroll
        for (int m = 0; m < MT; m++) {
            uint32_t words[WORDS];
            load_token_group<IN>(s.x[m], c, g, words);
            float xf[8];
            unpack8<IN>(words, xf);
#pragma unroll
            for (int r = 0; r < ROWS; r++)
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    float &to = BLOCK ? part[r][m] : acc[r][m];
                    to = fmaf(wf[r][j], xf[j], to);
                }
        }
    }
    if (BLOCK) {
        const int64_t kb = (int64_t)c * gemv_input<IN>::CHUNK / TESS_SCALE_BLOCK;
        float fw[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            fw[r] = __ldg(s.fw[r] + kb * s.fw_stride);
#pragma unroll
        for (int m = 0; m < MT; m++) {
            const float fx = __ldg(s.fx[m] + kb * s.fx_stride);
#pragma unroll
            for (int r = 0; r < ROWS; r++)
                acc[r][m] = fmaf(part[r][m], fx * fw[r], acc[r][m]);
        }
    }
}

// Stores D's element (token m, weight row n) from its finished float32 sum:
// the outer factors (block factors were applied per K block), then the
// epilogue (tess_epilogue_value: alpha, beta C; then any fused bias and
// activation, tess_epilogue_fused, which also writes aux, and the residual,
// tess_epilogue_residual).
template <bool BLOCK>
TESS_DEVICE void gemv_store(const tess_gemv_params &p, int m, int n, float sum) {
    if (!BLOCK)
        sum *= tess_outer_factor(p.scale_a, 0, m) * tess_outer_factor(p.scale_b, 0, n);
    const tess_epilogue &e = p.epi;
    float v = e.beta != 0.0f ? tess_epilogue_value<true, false>(e, sum, 0, m, n)
                             : tess_epilogue_value<false, false>(e, sum, 0, m, n);
    if (e.fused)
        v = tess_epilogue_fused(e, v, 0, 0, m, n) + tess_epilogue_residual(e, 0, m, n);
    tess_epilogue_put(e, 0, m, n, v);
}

// CTAs per SM the registers must allow: 3 x 128 threads x at most 170
// registers fit the SM's 65536 (the kernels take 66-160). Each CTA keeps
// 8-16 KB of weights in flight (128 threads x 4 rows x 1-2 chunks of 16
// bytes), 24-48 KB per SM at 3 CTAs, more where fewer registers let more in.
#define TESS_GEMV_MIN_CTAS 3

template <tess_dtype IN, bool BLOCK, int MT>
__global__ void __launch_bounds__(TESS_GEMV_THREADS, TESS_GEMV_MIN_CTAS) gemv_kernel(const __grid_constant__ tess_gemv_params p) {
    constexpr int CHUNK = gemv_input<IN>::CHUNK, ROWS = TESS_GEMV_ROWS, THREADS = TESS_GEMV_THREADS;
    // Programmatic dependent launch, as the sm90 GEMM: nothing in global
    // memory is read before the previous kernel has finished.
    grid_dependency_wait();
    grid_dependents_launch();
    const int t = threadIdx.x, n0 = blockIdx.x * ROWS;
    const gemv_sources<MT> s = gemv_sources_at<IN, BLOCK, MT>(p, n0);
    const int chunks = p.k / CHUNK; // K is whole chunks (the planner's condition)
    float acc[ROWS][MT];
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int m = 0; m < MT; m++)
            acc[r][m] = 0.0f;
    // Software-pipelined: chunk c + THREADS of the rows is asked for before
    // chunk c is used, so each thread keeps a chunk per row in flight while
    // it computes (checked in the SASS: the next chunk's loads precede the
    // current chunk's FMAs in every kernel of the table).
    uint4 w[ROWS];
    int c = t;
    if (c < chunks)
        load_rows(w, s.w, c);
    for (; c < chunks; c += THREADS) {
        // The last chunk asks for itself again (an L2 hit, unused): no
        // branch, which would let the compiler sink the loads below the FMAs.
        uint4 next[ROWS];
        load_rows(next, s.w, c + THREADS < chunks ? c + THREADS : c);
        gemv_chunk<IN, BLOCK, MT>(acc, w, s, c);
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            w[r] = next[r];
    }

    // The CTA's sums: each warp's by a shuffle butterfly, then the warps'
    // in shared memory, added in warp order by one thread per output.
    __shared__ float warp_sums[THREADS / 32][ROWS][MT];
    const int warp = t / 32, lane = t % 32;
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int m = 0; m < MT; m++) {
            float v = acc[r][m];
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2)
                v += __shfl_xor_sync(0xffffffffu, v, offset);
            if (lane == 0)
                warp_sums[warp][r][m] = v;
        }
    __syncthreads();
    static_assert(ROWS * MT <= THREADS, "one thread per output");
    const int r = t / MT, m = t % MT, n = n0 + r;
    if (t >= ROWS * MT || n >= p.n || m >= p.m)
        return;
    float sum = warp_sums[0][r][m];
#pragma unroll
    for (int w = 1; w < THREADS / 32; w++)
        sum += warp_sums[w][r][m];
    gemv_store<BLOCK>(p, m, n, sum);
}

// ---- Tensor-core variant: 8 or 16 tokens, 16-bit or e4m3 inputs -------------
//
// At 8 or more tokens the float32 kernel above is bound by its FMAs (8 per
// weight). Here one warp's mma.sync does them: a CTA owns 16 weight rows
// (the m16 side), the tokens are the n8 side (NT tiles of 8), and the CTA's
// 4 (or 8) warps take turns at K steps of 64 bytes a row (32 16-bit elements, 64
// e4m3). Each lane loads 16 bytes of weight rows lane/4 and lane/4 + 8 and
// of token lane/4 at byte 16 (lane % 4) of the step, and feeds them to two
// mmas unchanged: a sum over K does not care in which order K is visited,
// so the elements a lane holds are given logical K positions that make its
// registers the fragments mma.sync expects (PTX ISA, "Matrix Fragments for
// mma.m16n8k16" and "mma.m16n8k32"). With E elements to a 32-bit word (2
// or 4), a lane's word 0 holds logical elements E t .. E t + E - 1 of the
// first mma and word 1 the same + 4 E; words 2 and 3 the same of the
// second; for A (weights) and B (tokens) alike, so that both see the same
// permutation of K.
//
// e4m3: each step's two mmas (64 products a sum) go to fresh accumulators
// that are added to the float32 sums, scaled by the step's 128-K block
// factors where block-scaled (a step never straddles a block): FP8 mma.sync
// keeps fewer bits while accumulating (the promotion of the sm90 kernels).

// 16-byte chunks in a K step of a row: one per lane of the row's quad.
#define TESS_GEMV_MMA_CHUNKS (TESS_GEMV_MMA_STEP_BYTES / 16)

// The byte offset in a row of chunk t (tess_gemv_load_chunk) of K step s
// (CHUNK elements a chunk), or 0 where its 16 bytes lie past K (loaded from
// a valid address, then replaced by zeros; K is whole chunks, so a chunk is
// all in or all out).
template <int CHUNK>
TESS_DEVICE int64_t mma_chunk_offset(int s, int t, int k) {
    return (s * TESS_GEMV_MMA_CHUNKS + t) * CHUNK < k ? (int64_t)s * TESS_GEMV_MMA_STEP_BYTES + t * 16 : 0;
}

// The block factors a lane needs: of its weight rows (lane/4, lane/4 + 8)
// and its tokens (8 j + 2 (lane % 4) and the next), for K block 0 (block kb
// is kb * stride further); rows and tokens past the edges repeat the last.
template <int NT>
struct gemv_mma_factors {
    const float *w[2], *x[NT][2];
    int64_t w_stride, x_stride;
};

template <int NT>
TESS_DEVICE gemv_mma_factors<NT> gemv_mma_factors_at(const tess_gemv_params &p, int n0, int lane) {
    gemv_mma_factors<NT> f;
#pragma unroll
    for (int h = 0; h < 2; h++) // rows of accumulators 2h, 2h + 1; tokens of h, h + 2
        f.w[h] = p.scale_b.data + tess_scale_offset(&p.scale_b.layout, 0, min(n0 + tess_gemv_c_row(lane, 2 * h), p.n - 1), 0);
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            f.x[j][h] =
                p.scale_a.data + tess_scale_offset(&p.scale_a.layout, 0, min(8 * j + tess_gemv_c_token(lane, h), p.m - 1), 0);
    f.w_stride = p.scale_b.layout.stride_k, f.x_stride = p.scale_a.layout.stride_k;
    return f;
}

// The block factors of one K step, as a lane uses them: of its weight rows
// g and g + 8, and of its two tokens in each token tile (1 where not
// block-scaled: the compiler drops them).
template <int NT>
struct gemv_mma_step_factors {
    float w[2], x[NT][2];
};

// Loads the factors of K block kb (BLOCK), or ones. Issued a step before
// they are used, so that their latency hides under that step's mmas.
template <bool BLOCK, int NT>
TESS_DEVICE gemv_mma_step_factors<NT> gemv_mma_load_factors(const gemv_mma_factors<NT> &f, int kb) {
    gemv_mma_step_factors<NT> v;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        v.w[h] = BLOCK ? __ldg(f.w[h] + kb * f.w_stride) : 1.0f;
#pragma unroll
        for (int j = 0; j < NT; j++)
            v.x[j][h] = BLOCK ? __ldg(f.x[j][h] + kb * f.x_stride) : 1.0f;
    }
    return v;
}

// One K step (wl, wh: the lane's words of weight rows g and g + 8; b: its
// words of each token tile) into the sums: 16-bit straight into them; e4m3
// through fresh accumulators, scaled by the step's block factors `sf` where
// block-scaled. Which word goes into which fragment register, and which
// row and token each accumulator is, are fragment.h's (checked there against
// the layout algebra's mma atoms).
template <tess_dtype IN, bool BLOCK, int NT>
TESS_DEVICE void gemv_mma_step(float (&acc)[NT][4], const uint4 &wl, const uint4 &wh, const uint4 (&b)[NT],
                               const gemv_mma_step_factors<NT> &sf) {
    const uint32_t lw[4] = {wl.x, wl.y, wl.z, wl.w}, hw[4] = {wh.x, wh.y, wh.z, wh.w};
    uint32_t a[2][4]; // the two mmas' A registers
#pragma unroll
    for (int mj = 0; mj < 2; mj++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            a[mj][r] = tess_gemv_a_upper(r) ? hw[tess_gemv_a_word(mj, r)] : lw[tess_gemv_a_word(mj, r)];
#pragma unroll
    for (int j = 0; j < NT; j++) {
        const uint32_t bw[4] = {b[j].x, b[j].y, b[j].z, b[j].w};
        if constexpr (IN != TESS_DTYPE_E4M3) {
#pragma unroll
            for (int mj = 0; mj < 2; mj++)
                mma_m16n8k16<IN == TESS_DTYPE_F16>(acc[j], a[mj], bw[tess_gemv_b_word(mj, 0)],
                                                   bw[tess_gemv_b_word(mj, 1)]);
        } else {
            float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int mj = 0; mj < 2; mj++)
                mma_m16n8k32_e4m3(part, a[mj], bw[tess_gemv_b_word(mj, 0)], bw[tess_gemv_b_word(mj, 1)]);
            // Accumulator e's row is the lane's (e / 2)-th, its token the (e % 2)-th.
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[j][e] = fmaf(part[e], sf.x[j][e % 2] * sf.w[e / 2], acc[j][e]);
        }
    }
}

// WARPS: 4, or 8 for grids of at most one CTA per SM (N <= 16 x SMs), whose
// CTAs then keep twice the bytes in flight.
template <tess_dtype IN, bool BLOCK, int NT, int WARPS>
__global__ void __launch_bounds__(32 * WARPS) gemv_mma_kernel(const __grid_constant__ tess_gemv_params p) {
    constexpr int DEPTH = TESS_GEMV_MMA_DEPTH_OF(IN == TESS_DTYPE_E4M3, NT);
    constexpr int STRIDE = WARPS * DEPTH;
    constexpr int CHUNK = gemv_input<IN>::CHUNK, STEP_K = TESS_GEMV_MMA_CHUNKS * CHUNK; // elements per lane, per step
    static_assert(TESS_GEMV_MMA_ROWS == 16, "one m16 tile of weight rows per CTA");
    static_assert(TESS_SCALE_BLOCK % STEP_K == 0, "a step never straddles a factor block");
    grid_dependency_wait();
    grid_dependents_launch();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, t = tess_gemv_load_chunk(lane);
    const int n0 = blockIdx.x * TESS_GEMV_MMA_ROWS;
    constexpr int64_t ELEM = 16 / CHUNK; // bytes per element
    // Rows past n and tokens past m repeat the last one: computed, never stored.
    const char *w_lo = (const char *)p.b + (int64_t)min(n0 + tess_gemv_load_row(lane, 0), p.n - 1) * p.ldb * ELEM;
    const char *w_hi = (const char *)p.b + (int64_t)min(n0 + tess_gemv_load_row(lane, 1), p.n - 1) * p.ldb * ELEM;
    const char *x[NT];
#pragma unroll
    for (int j = 0; j < NT; j++)
        x[j] = (const char *)p.a + (int64_t)min(8 * j + tess_gemv_load_row(lane, 0), p.m - 1) * p.lda * ELEM;
    gemv_mma_factors<NT> f;
    if (BLOCK)
        f = gemv_mma_factors_at<NT>(p, n0, lane);
    const int steps = (p.k + STEP_K - 1) / STEP_K, last = steps - 1;
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            acc[j][e] = 0.0f;
    // A ring of DEPTH steps in registers per lane: this warp's steps warp +
    // WARPS i; slot d holds step base + WARPS d of the current round, and is
    // refilled with the next round's as soon as it is used (steps past the
    // last reload the last: an L1/L2 hit, unused).
    uint4 lo[DEPTH], hi[DEPTH], xs[DEPTH][NT];
#pragma unroll
    for (int d = 0; d < DEPTH; d++) {
        const int64_t at = mma_chunk_offset<CHUNK>(min(warp + WARPS * d, last), t, p.k);
        lo[d] = load_weights(w_lo + at), hi[d] = load_weights(w_hi + at);
#pragma unroll
        for (int j = 0; j < NT; j++)
            xs[d][j] = load_tokens16(x[j] + at);
    }
    // The factors of the step at hand, loaded one step ahead (block-scaled e4m3).
    constexpr bool FACTORS = IN == TESS_DTYPE_E4M3 && BLOCK;
    gemv_mma_step_factors<NT> sf = gemv_mma_load_factors<FACTORS, NT>(f, min(warp, last) * STEP_K / TESS_SCALE_BLOCK);
    for (int base = warp; base < steps; base += STRIDE) {
#pragma unroll
        for (int d = 0; d < DEPTH; d++) {
            const int s = base + WARPS * d;
            const gemv_mma_step_factors<NT> now = sf;
            sf = gemv_mma_load_factors<FACTORS, NT>(f, min(s + WARPS, last) * STEP_K / TESS_SCALE_BLOCK);
            if (s < steps) {
                const bool inside = (s * TESS_GEMV_MMA_CHUNKS + t) * CHUNK < p.k; // as mma_chunk_offset's
                const uint4 zero = make_uint4(0, 0, 0, 0), wl = inside ? lo[d] : zero, wh = inside ? hi[d] : zero;
                uint4 b[NT];
#pragma unroll
                for (int j = 0; j < NT; j++)
                    b[j] = inside ? xs[d][j] : zero;
                gemv_mma_step<IN, BLOCK, NT>(acc, wl, wh, b, now);
            }
            const int64_t at = mma_chunk_offset<CHUNK>(min(s + STRIDE, last), t, p.k);
            lo[d] = load_weights(w_lo + at), hi[d] = load_weights(w_hi + at);
#pragma unroll
            for (int j = 0; j < NT; j++)
                xs[d][j] = load_tokens16(x[j] + at);
        }
    }

    // The warps' sums, added in warp order by warp 0: the same bits on every run.
    __shared__ float warp_sums[WARPS][NT][4][32];
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            warp_sums[warp][j][e][lane] = acc[j][e];
    __syncthreads();
    if (warp != 0)
        return;
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float sum = warp_sums[0][j][e][lane];
#pragma unroll
            for (int w = 1; w < WARPS; w++)
                sum += warp_sums[w][j][e][lane];
            const int n = n0 + tess_gemv_c_row(lane, e), m = 8 * j + tess_gemv_c_token(lane, e);
            if (n < p.n && m < p.m)
                gemv_store<BLOCK>(p, m, n, sum);
        }
}

// One CTA per `rows` weight rows, with programmatic stream serialization
// where p->early_launch (the kernels wait in grid_dependency_wait).
static tess_status launch_rows(void (*kernel)(tess_gemv_params), int rows, int threads, const tess_gemv_params *p,
                               void *stream) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)((p->n + rows - 1) / rows));
    config.blockDim = dim3((unsigned)threads);
    config.stream = (cudaStream_t)stream;
    cudaLaunchAttribute serialization = {};
    serialization.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    serialization.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &serialization;
    config.numAttrs = p->early_launch ? 1 : 0;
    return tess_cuda_status(cudaLaunchKernelEx(&config, kernel, *p), "launching the decode GEMV kernel");
}

template <tess_dtype IN, bool BLOCK, int MT>
static tess_status launch_gemv(const tess_gemv_params *p, void *stream) {
    return launch_rows(gemv_kernel<IN, BLOCK, MT>, TESS_GEMV_ROWS, TESS_GEMV_THREADS, p, stream);
}

template <tess_dtype IN, bool BLOCK, int NT, int WARPS>
static tess_status launch_gemv_mma(const tess_gemv_params *p, void *stream) {
    return launch_rows(gemv_mma_kernel<IN, BLOCK, NT, WARPS>, TESS_GEMV_MMA_ROWS, 32 * WARPS, p, stream);
}

// CTAs per SM: the float32 kernels' launch bounds guarantee 3; the
// tensor-core ones of 4 warps take, as ptxas reports for sm_90a (CUDA 13),
// 124 registers for 8 16-bit tokens (4 CTAs of 128 threads in 65536), 168
// for 16 (3); e4m3 140 and 156 (3), block-scaled 220 and 239 (2). Those of
// 8 warps are planned one CTA per SM.
#define TESS_GEMV_ENTRY(IN, BLOCK, MT) \
    {IN, BLOCK, MT, TESS_GEMV_ROWS, 0, TESS_GEMV_THREADS / 32, TESS_GEMV_MIN_CTAS, launch_gemv<IN, BLOCK, MT>}
#define TESS_GEMV_MMA_ENTRY(IN, BLOCK, NT, WARPS, CTAS) \
    {IN, BLOCK, 8 * (NT), TESS_GEMV_MMA_ROWS, 1, WARPS, CTAS, launch_gemv_mma<IN, BLOCK, NT, WARPS>}
#define TESS_GEMV_MMA_ENTRIES(IN, BLOCK, CTAS_8, CTAS_16)                                                           \
    TESS_GEMV_MMA_ENTRY(IN, BLOCK, 1, 4, CTAS_8), TESS_GEMV_MMA_ENTRY(IN, BLOCK, 2, 4, CTAS_16),                \
        TESS_GEMV_MMA_ENTRY(IN, BLOCK, 1, 8, 1), TESS_GEMV_MMA_ENTRY(IN, BLOCK, 2, 8, 1)

// Float32 FMAs: 16-bit inputs up to 8 tokens; e4m3 up to 4 (its 16 values
// per chunk and their factors would need twice the registers at 8). Tensor
// cores: 8 or 16 tokens, 16-bit or e4m3 (block-scaled or not), 4 or 8
// warps. Each family's kernels of a type by token count, smallest first:
// the planner offers the first that holds M.
static const tess_gemv_kernel gemv_kernels[] = {
    TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 1), TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 2),
    TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 4), TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 8),
    TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 1),  TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 2),
    TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 4),  TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 8),
    TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, false, 1), TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, false, 2),
    TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, false, 4), TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, true, 1),
    TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, true, 2),  TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, true, 4),
    TESS_GEMV_MMA_ENTRIES(TESS_DTYPE_BF16, false, 4, 3),
    TESS_GEMV_MMA_ENTRIES(TESS_DTYPE_F16, false, 4, 3),
    TESS_GEMV_MMA_ENTRIES(TESS_DTYPE_E4M3, false, 3, 3),
    TESS_GEMV_MMA_ENTRIES(TESS_DTYPE_E4M3, true, 2, 2),
};

extern "C" int tess_gemv_kernel_count(void) { return (int)(sizeof gemv_kernels / sizeof gemv_kernels[0]); }

extern "C" const tess_gemv_kernel *tess_gemv_kernel_at(int i) {
    return i >= 0 && i < tess_gemv_kernel_count() ? &gemv_kernels[i] : NULL;
}
