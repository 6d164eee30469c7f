// The W4A16 decode GEMV: D (m x n) = X (m x k) W^T for m <= 16 tokens, W
// 4-bit codes with a scale and zero point per row and group of k
// (int4_kernels.h has the packed layout).
//
// At decode sizes the product streams the weights once and does little
// arithmetic: each warp streams one or two 16-row blocks of the weight over
// one K part; each lane reads its 16 bytes of every 64-k quad past L1, the
// next quad always in flight, and turns each word into its mma.m16n8k16 A
// fragment with one lop3 per register pair (the codes biased to 16-bit
// numbers whose last place is 1: 128 + q in bf16, 1024 + q in f16) and an
// exact subtraction of the biased zero point. The mma so sums (q - z) x
// exactly in float32, and the group's scale multiplies those sums once a
// group (one or two quads), not every weight. X's B fragments (8 or 16
// tokens) and the rows' scales and zero points come straight from global
// memory through L1 (a lane's k slots of a quad are 16 consecutive
// columns, int4_layout.h: two 16-byte loads a token row), the next quad's
// and the next group's loaded with the codes: nothing is staged, so a warp
// starts streaming at once and never waits at a barrier until its K part
// is done (a per-CTA timeline of a design that staged X and the scales in
// shared memory and summed K slices across a cluster spent 5-9 us a call
// outside its main loop: dev/results/h100-w4a16-ab/decode-phases.txt).
//
// A CTA's 8 warps are R row groups x P K parts (R P = 8; the K parts are
// whole groups, as even as they divide), chosen so that a small weight
// still fills the GPU; the parts' partial sums meet in shared memory under
// one barrier and are added in part order: one launch, no workspace, the
// same bits on every run.
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

// Warps a CTA: R row groups x P K parts.
#define W4A16_WARPS 8
// CTAs an SM the registers must allow (the launch bound: at most 85
// registers a thread) in the 1-token-tile, 1-row-block kernel; the others
// hold twice the fragments and are allowed 2 (128 registers): with nothing
// staged, more warps an SM are what hides the memory latency.
#define W4A16_MIN_CTAS_PER_SM 3

template <int TT, int RB>
struct w4a16_shape {
    static constexpr int MIN_CTAS = TT * RB == 1 ? W4A16_MIN_CTAS_PER_SM : 2;
    // the warps' partial sums: [warp][RB][TT][4 accumulators][32 lanes]
    static constexpr int PART_FLOATS = W4A16_WARPS * RB * TT * 4 * 32;
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

// One quad of the warp's row blocks into the group's sums: the fragments of
// each mma step j (k slots 0..15: columns tess_int4_quad_col of the quad)
// as q - z (zero: the biased zero points of rows g and g + 8) and the mmas
// with X's fragments b (token tile, step, the register pair).
template <int TT, int RB, bool F16>
TESS_DEVICE void quad_mma(float (&sums)[RB][TT][4], const uint4 (&w)[RB], const uint32_t (&b)[TT][4][2],
                          const uint32_t (&zero)[RB][2]) {
#pragma unroll
    for (int j = 0; j < 4; j++) { // the quad's mma steps, 16 k slots each
#pragma unroll
        for (int r = 0; r < RB; r++) {
            const uint32_t word = j == 0 ? w[r].x : j == 1 ? w[r].y : j == 2 ? w[r].z : w[r].w;
            uint32_t a[4];
#pragma unroll
            for (int i = 0; i < 4; i++) // register i: row g (+8 for odd i), k slot 2c (+8 for i >= 2) and the next
                a[i] = zero_shifted_pair<F16>(tess_int4_pair<F16>(word, 4 * i), zero[r][i % 2]);
#pragma unroll
            for (int tt = 0; tt < TT; tt++)
                mma_m16n8k16<F16>(sums[r][tt], a, b[tt][j][0], b[tt][j][1]);
        }
    }
}

// X's B fragments of a quad for this lane: token tile tt's row at the
// lane's 16 columns of the quad (x[tt]: column 16 c, tess_int4_quad_col),
// two 16-byte loads: step j's k slots 2c, 2c + 1 are columns 4 j, 4 j + 1
// of them (b[tt][j][0]), slots 2c + 8, 2c + 9 columns 4 j + 2, 4 j + 3
// ([1]). Rows past m are read as row m - 1 (the caller clamps them): they
// feed only the padding tokens' sums, which are never stored.
template <int TT>
TESS_DEVICE void x_quad(uint32_t (&b)[TT][4][2], const uint16_t *const (&x)[TT]) {
#pragma unroll
    for (int tt = 0; tt < TT; tt++) {
        const uint4 *at = reinterpret_cast<const uint4 *>(x[tt]);
        const uint4 lo = __ldg(at), hi = __ldg(at + 1);
        b[tt][0][0] = lo.x, b[tt][0][1] = lo.y, b[tt][1][0] = lo.z, b[tt][1][1] = lo.w;
        b[tt][2][0] = hi.x, b[tt][2][1] = hi.y, b[tt][3][0] = hi.z, b[tt][3][1] = hi.w;
    }
}

// A warp's group factors for rows g and g + 8 of each of its row blocks:
// the current group's scales (floats) and biased zero points (pairs of X's
// type, for zero_shifted_pair), and the next group's bits, loaded a group
// ahead.
template <int RB>
struct w4a16_factors {
    float scale[RB][2];
    uint32_t zero[RB][2];
    uint32_t next_scale[RB][2], next_zero[RB][2]; // group next_group's scale bits and zero points
    int next_group;
};

// Loads group `group`'s factor bits into f.next_* (rows[r]: row g of the
// warp's block r): a scale (16 or 32 bits) and a zero point (8 without
// zero points) a row.
template <int RB>
TESS_DEVICE void factors_load(const tess_w4a16_params &p, const w4a16_expert &e, const int (&rows)[RB], int group,
                              w4a16_factors<RB> &f) {
    const bool wide = p.scale_type == TESS_DTYPE_F32; // else f16 or bf16
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t row = rows[r] + 8 * h;
            f.next_scale[r][h] = ld_nc_b32_or_u16(
                (const char *)e.scales + ((int64_t)group * p.ld_scales + row) * (wide ? 4 : 2), true, wide);
            f.next_zero[r][h] = int4_zero_point<uint32_t>(e.zeros, p.ld_zeros, group, row);
        }
    f.next_group = group;
}

// Makes the loaded group current: its scales as floats (f32 bits as they
// are, bf16's shifted into a float's high half, f16's converted: selects,
// no branch), its zero points biased as the codes are and paired: bias + z
// is the bias's bits plus z (z < 16 fits in the last places of either
// type's mantissa, int4_bias), in both halves.
template <int RB, bool F16>
TESS_DEVICE void factors_advance(w4a16_factors<RB> &f, tess_dtype scale_type) {
    const bool wide = scale_type == TESS_DTYPE_F32, half = scale_type == TESS_DTYPE_F16;
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const uint32_t bits = f.next_scale[r][h];
            const float f16 = __half2float(__ushort_as_half((unsigned short)bits));
            f.scale[r][h] = half ? f16 : __uint_as_float(wide ? bits : bits << 16);
            f.zero[r][h] = ((int4_bias<F16>::PAIR_BITS & 0xffffu) + f.next_zero[r][h]) * 0x10001u;
        }
}

// Where a warp's stream stands: the next quad's codes (32 uint4s a quad) and
// X columns, and the part's quads and groups.
template <int TT, int RB>
struct w4a16_cursor {
    const uint4 *codes[RB];
    const uint16_t *x[TT];
    int count, group_quads, g_end;
};

// Whether X's fragments are loaded a quad ahead, as the codes are: with one
// token tile; with two, the 32 more registers of the second buffer would
// spill the 2-row-block kernel, and X (shared by the SM's warps) mostly
// comes from L1, so the current quad's are loaded at its start.
template <int TT>
struct x_ahead {
    static constexpr bool VALUE = TT == 1;
};

// Steps X's pointers a quad on.
template <int TT>
TESS_DEVICE void x_step(const uint16_t *(&x)[TT]) {
#pragma unroll
    for (int tt = 0; tt < TT; tt++)
        x[tt] += TESS_INT4_QUAD_K;
}

// Quad i of the warp's part, whose codes are w (and X fragments x, where
// loaded ahead): the next quad's (if there is one) loaded into w_next,
// x_next first, then the mmas into the group's sums; at a group's last quad
// the sums, scaled, go into acc and the next group's factors become current
// (the one after them loaded). Called alternately with the two buffers
// swapped, so that no register is copied.
template <int TT, int RB, bool F16>
TESS_DEVICE void quad_step(const tess_w4a16_params &p, const w4a16_expert &e, const int (&rows)[RB], int i,
                           w4a16_cursor<TT, RB> &at, w4a16_factors<RB> &f, const uint4 (&w)[RB],
                           const uint32_t (&x)[TT][4][2], uint4 (&w_next)[RB], uint32_t (&x_next)[TT][4][2],
                           float (&sums)[RB][TT][4], float (&acc)[RB][TT][4]) {
    uint32_t x_now[TT][4][2]; // this quad's X, where not loaded ahead
    if constexpr (!x_ahead<TT>::VALUE) {
        x_quad<TT>(x_now, at.x);
        x_step<TT>(at.x);
    }
    const bool more = i + 1 < at.count;
    if (more) {
#pragma unroll
        for (int r = 0; r < RB; r++)
            w_next[r] = ld_global_nc_16<true>(at.codes[r]), at.codes[r] += 32;
        if constexpr (x_ahead<TT>::VALUE) {
            x_quad<TT>(x_next, at.x);
            x_step<TT>(at.x);
        }
    }
    if constexpr (x_ahead<TT>::VALUE)
        quad_mma<TT, RB, F16>(sums, w, x, f.zero);
    else
        quad_mma<TT, RB, F16>(sums, w, x_now, f.zero);
    if (((i + 1) & (at.group_quads - 1)) == 0) { // the group's last quad (group_quads: 1 or 2)
#pragma unroll
        for (int r = 0; r < RB; r++)
#pragma unroll
            for (int tt = 0; tt < TT; tt++)
#pragma unroll
                for (int v = 0; v < 4; v++) { // element v: row g + 8 (v / 2) (tess_gemv_c_row)
                    acc[r][tt][v] = fmaf(f.scale[r][v / 2], sums[r][tt][v], acc[r][tt][v]);
                    sums[r][tt][v] = 0.0f;
                }
        if (more) {
            factors_advance<RB, F16>(f, p.scale_type);
            factors_load<RB>(p, e, rows, min(f.next_group + 1, at.g_end - 1), f);
        }
    }
}

// One row chunk of expert e's output, rows [chunk R RB 16, ...): each warp
// its row blocks over its K part, then the parts' sums in shared memory,
// added in part order and stored. Ends on a barrier, so that the next
// chunk may write the partial sums again.
template <int TT, int RB, bool F16>
TESS_DEVICE void w4a16_chunk(const tess_w4a16_params &p, const w4a16_expert &e, float *part, int chunk) {
    const int parts = p.split, row_groups = W4A16_WARPS / parts;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int kp = warp / row_groups, rw = warp % row_groups; // this warp's K part and row group
    const int row_blocks = p.n / TESS_INT4_ROW_BLOCK, k_quads = p.k / TESS_INT4_QUAD_K;
    const int rb0 = (chunk * row_groups + rw) * RB;
    float acc[RB][TT][4] = {};
    if (rb0 < row_blocks) { // else a warp past the weight's last row block: nothing to stream
        // The K part: whole groups, the groups shared out as evenly as they divide.
        const int groups = p.k / p.group;
        const int g_begin = (int)((int64_t)kp * groups / parts), g_end = (int)((int64_t)(kp + 1) * groups / parts);
        w4a16_cursor<TT, RB> at;
        at.group_quads = p.group / TESS_INT4_QUAD_K, at.g_end = g_end;
        at.count = (g_end - g_begin) * at.group_quads; // the part's quads, at least one (parts <= groups)
        // The lane's codes of each row block from the part's first quad; a
        // second block past the weight's last reads the last again (its sums
        // are never stored). X's rows, and the factors' rows.
        int rows[RB];
#pragma unroll
        for (int r = 0; r < RB; r++) {
            const int rb = min(rb0 + r, row_blocks - 1);
            at.codes[r] = e.codes + ((int64_t)rb * k_quads + (int64_t)g_begin * at.group_quads) * 32 + lane;
            rows[r] = rb * TESS_INT4_ROW_BLOCK + g;
        }
#pragma unroll
        for (int tt = 0; tt < TT; tt++)
            at.x[tt] = e.x + (int64_t)min(8 * tt + g, e.m - 1) * p.ld_x + (int64_t)g_begin * p.group + 16 * c;
        // The first group's factors current and the second's in flight; the
        // first quad loaded; then the quads two at a time, the buffers
        // alternating (xa, xb unused where X is not loaded ahead).
        w4a16_factors<RB> f;
        factors_load<RB>(p, e, rows, g_begin, f);
        factors_advance<RB, F16>(f, p.scale_type);
        factors_load<RB>(p, e, rows, min(g_begin + 1, g_end - 1), f);
        uint4 wa[RB], wb[RB];
        uint32_t xa[TT][4][2], xb[TT][4][2];
#pragma unroll
        for (int r = 0; r < RB; r++)
            wa[r] = ld_global_nc_16<true>(at.codes[r]), at.codes[r] += 32;
        if constexpr (x_ahead<TT>::VALUE) {
            x_quad<TT>(xa, at.x);
            x_step<TT>(at.x);
        }
        float sums[RB][TT][4] = {};
        for (int i = 0; i < at.count; i += 2) {
            quad_step<TT, RB, F16>(p, e, rows, i, at, f, wa, xa, wb, xb, sums, acc);
            if (i + 1 < at.count)
                quad_step<TT, RB, F16>(p, e, rows, i + 1, at, f, wb, xb, wa, xa, sums, acc);
        }
    }

    // The parts' sums: each warp's partials in shared memory, then the CTA
    // adds each output over the parts in part order and stores it.
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int tt = 0; tt < TT; tt++)
#pragma unroll
            for (int v = 0; v < 4; v++)
                part[(((warp * RB + r) * TT + tt) * 4 + v) * 32 + lane] = acc[r][tt][v];
    __syncthreads();
    const int outputs = row_groups * RB * TT * 128; // a K part's: (row group, block, tile, element, lane)
    for (int o = threadIdx.x; o < outputs; o += blockDim.x) {
        // o's accumulator: lane el, element v of token tile tt of the CTA's row block wr (rw RB + r)
        const int el = o % 32, v = (o / 32) % 4, tt = (o / 128) % TT, wr = o / (128 * TT);
        const int row = (chunk * row_groups * RB + wr) * TESS_INT4_ROW_BLOCK + tess_gemv_c_row(el, v);
        const int token = 8 * tt + tess_gemv_c_token(el, v);
        if (row >= p.n || token >= e.m) // padding: no output, nothing to add
            continue;
        float sum = part[o];
        for (int s = 1; s < parts; s++)
            sum += part[s * outputs + o];
        // (no aux: the 4-bit calls refuse it)
        tess_epilogue_put(p.epi, e.index, token, row,
                          tess_epilogue_final<false>(p.epi, sum, e.index, e.index, token, row));
    }
    __syncthreads();
}

// The work items (expert, row chunk), expert-major, from this CTA's place in
// the grid's x and z on, a grid's x z apart: one each, unless an SM budget
// made the grid narrower, when the CTAs share out the items of the experts
// with rows however those lie.
template <int TT, int RB, bool F16>
__global__ void __launch_bounds__(W4A16_WARPS * 32, w4a16_shape<TT, RB>::MIN_CTAS)
    w4a16_gemv_kernel(const __grid_constant__ tess_w4a16_params p) {
    __shared__ float part[w4a16_shape<TT, RB>::PART_FLOATS];
    // Programmatic dependent launch: nothing global is read before the
    // previous kernel in the stream has finished.
    grid_dependency_wait();
    grid_dependents_launch();
    const int rows = TESS_INT4_ROW_BLOCK * RB * (W4A16_WARPS / p.split), chunks = (p.n + rows - 1) / rows;
    const int64_t items = (int64_t)p.groups * chunks;
    for (int64_t item = (int64_t)blockIdx.z * gridDim.x + blockIdx.x; item < items;
         item += (int64_t)gridDim.x * gridDim.z) {
        const w4a16_expert e = expert_of(p, (int)(item / chunks));
        if (e.m == 0)
            continue;
        w4a16_chunk<TT, RB, F16>(p, e, part, (int)(item % chunks));
    }
}

// The kernels by token tiles (1, 2) and row blocks a warp (1, 2), X bf16 or f16.
typedef void (*w4a16_kernel_fn)(tess_w4a16_params);
typedef struct w4a16_variant {
    w4a16_kernel_fn bf16, f16;
    int min_ctas; // the launch bound's CTAs an SM
} w4a16_variant;
#define W4A16_VARIANT(TT, RB) \
    {w4a16_gemv_kernel<TT, RB, false>, w4a16_gemv_kernel<TT, RB, true>, w4a16_shape<TT, RB>::MIN_CTAS}
static const w4a16_variant w4a16_variants[2][2] = {{W4A16_VARIANT(1, 1), W4A16_VARIANT(1, 2)},
                                                   {W4A16_VARIANT(2, 1), W4A16_VARIANT(2, 2)}};

// The grid (row chunks, 1, experts) and p's row blocks a warp and K parts a
// CTA: of the shapes (2 or 1 row blocks a warp; 1, 2, 4 or 8 K parts, at
// most one a group) whose CTAs, over the experts expected to have rows, all
// fit on the SMs at once (the launch bound's CTAs an SM; one under an SM
// budget, `budgeted`), the one with the most CTAs; ties to the shorter
// stream a warp (row blocks x its part's most groups: a small weight is
// better cut along K than given idle warps), then to more row blocks a
// warp (more bytes in flight), then fewer parts. Where none fits, the
// fewest CTAs. Under a budget at most `sms` CTAs, taking the (expert, row
// chunk) items in turn.
static dim3 choose_grid(tess_w4a16_params *p, int sms, int budgeted) {
    sms = sms > 0 ? sms : 1;
    const int tiles = p->m <= 8 ? 1 : 2, groups = p->k / p->group;
    const int64_t busy = p->expected_groups > 0 && p->expected_groups < p->groups ? p->expected_groups : p->groups;
    int64_t best = -1, best_stream = 0, fewest = -1, chunks = 1;
    for (int rb = 2; rb >= 1; rb--)
        for (int parts = 1; parts <= W4A16_WARPS && parts <= groups; parts *= 2) {
            const int64_t rows = (int64_t)TESS_INT4_ROW_BLOCK * rb * (W4A16_WARPS / parts);
            const int64_t n_chunks = (p->n + rows - 1) / rows, ctas = n_chunks * busy;
            const int64_t stream = (int64_t)rb * ((groups + parts - 1) / parts);
            const int64_t fit = (int64_t)(budgeted ? 1 : w4a16_variants[tiles - 1][rb - 1].min_ctas) * sms;
            int pick;
            if (ctas <= fit) {
                pick = ctas > best || (ctas == best && stream < best_stream);
                if (pick)
                    best = ctas, best_stream = stream;
            } else {
                pick = best < 0 && (fewest < 0 || ctas < fewest);
                if (pick)
                    fewest = ctas;
            }
            if (pick)
                p->rows_per_warp = rb, p->split = parts, chunks = n_chunks;
        }
    if (!budgeted)
        return dim3((unsigned)chunks, 1, (unsigned)p->groups);
    const int64_t items = chunks * p->groups;
    return dim3((unsigned)(items < sms ? items : sms), 1, 1);
}

extern "C" tess_status tess_launch_w4a16_gemv(tess_w4a16_params *p, int sms, int budgeted, void *stream) {
    const dim3 grid = choose_grid(p, sms, budgeted);
    const w4a16_variant *v = &w4a16_variants[p->m <= 8 ? 0 : 1][p->rows_per_warp - 1];
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = dim3(W4A16_WARPS * 32);
    config.stream = (cudaStream_t)stream;
    cudaLaunchAttribute attrs[1] = {};
    attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attrs;
    config.numAttrs = p->early_launch ? 1 : 0;
    return tess_cuda_status(cudaLaunchKernelEx(&config, p->x_f16 ? v->f16 : v->bf16, *p), "launching the W4A16 GEMV");
}
