// The epilogue of the sm90 GEMM: each element of one consumer warpgroup's
// 64 x BN accumulators becomes D's value by tess_epilogue_value
// (kernels/common/epilogue.cuh: alpha * sum + beta * C), stored one of two
// ways: a 16-bit D that TMA can store goes through shared memory (stmatrix
// into 128-byte-swizzled 64 x 64 sub-tiles, then TMA stores, which clip at
// the matrix edges at 16-byte granularity); any other D (f32, a 16-bit D
// TMA cannot store exactly, a token tile's few columns) from registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/matrix.h"
#include "core/scale.h"
#include "kernels/common/epilogue.cuh"
#include "kernels/common/fragment.h"
#include "kernels/common/ptx.cuh"
#include "kernels/sm90/gemm_cfg.cuh"
#include "kernels/sm90/gemm_params.h"
#include "kernels/util/fp8_factor.cuh"
#include "ref/convert.h"

// Two values as the b16 pair stmatrix takes (the lower column in the low half).
TESS_DEVICE uint32_t pack16(float lo, float hi, bool bf16) {
    uint32_t r;
    if (bf16) {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        r = *reinterpret_cast<uint32_t *>(&h);
    } else {
        __half2 h = __floats2half2_rn(lo, hi);
        r = *reinterpret_cast<uint32_t *>(&h);
    }
    return r;
}

// Copies a round's staged sub-tiles (rows m0.., COLS columns from nc, those
// below n_end) of a row-major D to global memory with 16-byte stores, only rows below m_end:
// for a grouped GEMM's last tile of a group, where a TMA store would write
// into the next group's rows. (D by TMA is row-major with whole 16-byte
// chunks per row, so a chunk lies wholly inside or outside the matrix.)
template <int COLS>
TESS_DEVICE void epilogue_copy_rows(const tess_gemm_params &p, const char *staging, int t, int b, int m0, int m_end,
                                    int nc, int n_end) {
    constexpr int ELEM_BYTES = 2;                                        // 16-bit D
    constexpr int ROW_CHUNKS = TESS_EPI_SUBTILE * ELEM_BYTES / 16;       // 8 per 128-byte sub-tile row
    constexpr int ROW_ELEMS = 16 / ELEM_BYTES;                           // 8 elements per chunk
    constexpr int PER_THREAD = TESS_EPI_SUBTILE * ROW_CHUNKS / 128;      // over the warpgroup's 128 threads
#pragma unroll
    for (int s = 0; s < COLS / TESS_EPI_SUBTILE; s++) {
#pragma unroll
        for (int i = 0; i < PER_THREAD; i++) {
            const int chunk = t + 128 * i, row = chunk / ROW_CHUNKS, in_row = chunk % ROW_CHUNKS;
            const int col = nc + s * TESS_EPI_SUBTILE + in_row * ROW_ELEMS;
            if (m0 + row < m_end && col < n_end) {
                const uint4 v = *(const uint4 *)(staging + tess_epi_swizzled_offset(s, row, in_row));
                *(uint4 *)((char *)p.epi.d + ELEM_BYTES * tess_matrix_offset(&p.epi.d_layout, b, m0 + row, col)) = v;
            }
        }
    }
}

// A residual that the fused 16-bit store reads inline (residual_inline):
// the thread's first element (rows m and m + 8 of its accumulators, from
// its first column) and the residual's type.
struct residual_rows {
    const char *at; // row m's first element
    int64_t row8;   // bytes from row m to row m + 8
    bool bf16;
};

// Whether the inline store can read tile rows [m0, m0 + 64) x columns
// [n0, n0 + BN) of batch b's residual with 4-byte loads of column pairs:
// 16-bit and row-major, its pairs 4-byte aligned, the tile wholly inside it.
// Any other residual takes the staged path (epilogue_fused).
template <class Cfg>
TESS_DEVICE bool residual_inline(const tess_epilogue &e, int b, int m0, int n0) {
    const tess_matrix_desc &r = e.residual_layout;
    const int64_t first = (int64_t)b * r.batch_stride + (int64_t)m0 * r.ld + n0;
    return r.order == TESS_ORDER_ROW && r.dtype != TESS_DTYPE_F32 && r.ld % 2 == 0 && first % 2 == 0 &&
           (uintptr_t)e.residual % 4 == 0 && m0 + 64 <= r.rows && n0 + Cfg::BN <= r.cols;
}

// The residual_rows of the element at (m, n) of batch b (an inline-readable residual).
TESS_DEVICE residual_rows residual_rows_of(const tess_epilogue &e, int b, int m, int n) {
    const tess_matrix_desc &r = e.residual_layout;
    return {(const char *)e.residual + 2 * ((int64_t)b * r.batch_stride + (int64_t)m * r.ld + n), 16 * r.ld,
            r.dtype == TESS_DTYPE_BF16};
}

// The residual's column pair `col`, col + 1 past the thread's first column,
// in row m (row8 false) or m + 8, as float32: one 4-byte load.
TESS_DEVICE void residual_pair(const residual_rows &r, int col, bool row8, float &lo, float &hi) {
    const uint32_t bits = *(const uint32_t *)(r.at + (row8 ? r.row8 : 0) + 2 * col);
    if (r.bf16) {
        // bf16 is float32's high half: the low element shifted up, the high one masked in place
        lo = __uint_as_float(bits << 16), hi = __uint_as_float(bits & 0xffff0000u);
    } else {
        lo = __half2float(__ushort_as_half((unsigned short)bits));
        hi = __half2float(__ushort_as_half((unsigned short)(bits >> 16)));
    }
}

// The end of a round: once the warpgroup's shared-memory writes of COLS
// columns of D from column nc are visible to the async proxy, one thread's
// TMA stores of its sub-tiles (64 x 64 elements of ELEM_BYTES each: a
// 16-bit D's or an FP8 D's) through `map` (D's, tma_d, where null; aux's
// shares its boxes), or, for a 16-bit D, every thread's copies of the
// columns below n_end, D's width (epilogue_copy_rows).
template <int COLS, int ELEM_BYTES = 2>
TESS_DEVICE void store_round(const tess_gemm_params &p, const char *staging, int t, int b, int m0, int m_end, int nc,
                             int n_end, bool by_tma, bool col_major, int barrier, const CUtensorMap *map = nullptr) {
    static_assert(ELEM_BYTES == 2 || ELEM_BYTES == 1, "a 16-bit or an FP8 D");
    fence_proxy_async_smem();
    named_barrier_sync(barrier, 128);
    if (ELEM_BYTES == 2 && !by_tma) {
        epilogue_copy_rows<COLS>(p, staging, t, b, m0, m_end, nc, n_end);
    } else if (t == 0) {
#pragma unroll
        for (int s = 0; s < COLS / TESS_EPI_SUBTILE; s++) {
            const char *sub = staging + s * TESS_EPI_SUBTILE * TESS_EPI_SUBTILE * ELEM_BYTES;
            if (col_major)
                tma_store_3d(map ? map : &p.tma_d, sub, m0, nc + s * TESS_EPI_SUBTILE, b);
            else
                tma_store_3d(map ? map : &p.tma_d, sub, nc + s * TESS_EPI_SUBTILE, m0, b);
        }
        tma_store_commit();
    }
}

// Before a warpgroup's round writes its staging buffer: where an earlier
// round's TMA stores may still read it (`pending`), one thread waits for
// their reads and the warpgroup meets at its barrier.
TESS_DEVICE void wait_staging_free(bool pending, int t, int barrier) {
    if (pending) {
        if (t == 0)
            tma_store_wait_read<0>();
        named_barrier_sync(barrier, 128);
    }
}

// Column c (0..3) of a thread's four in 16-column block jj of its tile, past
// its first: n, n + 1, n + 8, n + 9 of the block (the wgmma accumulator
// layout, tess_wgmma_acc_coord), where its bias is read.
TESS_DEVICE int pair_column(int jj, int c) { return 16 * jj + 8 * (c / 2) + c % 2; }

// The activation of one value, SHAPE's, fixed at compile time (not
// TESS_SHAPE_ANY, which activate_block decides per block).
template <tess_act_shape SHAPE>
TESS_DEVICE float activate_one(const tess_act_form &act, float x) {
    static_assert(SHAPE != TESS_SHAPE_ANY, "a shape known at compile time");
    if constexpr (SHAPE == TESS_SHAPE_SIGMOID)
        return tess_times_sigmoid(x, x * (act.k1 + act.k3 * x * x));
    else if constexpr (SHAPE == TESS_SHAPE_ERF)
        return tess_gelu_erf(x);
    else if constexpr (SHAPE == TESS_SHAPE_RELU)
        return x < 0.0f ? 0.0f : x; // NaN stays NaN
    else
        return x;
}

// The activation of a block's 8 values: SHAPE's, fixed at compile time (no
// branches), or with TESS_SHAPE_ANY the one act names, decided once for the
// block (no element branches).
template <tess_act_shape SHAPE>
TESS_DEVICE void activate_block(const tess_act_form &act, float (&x)[8]) {
    if constexpr (SHAPE == TESS_SHAPE_ANY) {
        if (act.sigmoid)
            activate_block<TESS_SHAPE_SIGMOID>(act, x);
        else if (act.erf)
            activate_block<TESS_SHAPE_ERF>(act, x);
        else if (act.relu)
            activate_block<TESS_SHAPE_RELU>(act, x);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++)
            x[i] = activate_one<SHAPE>(act, x[i]);
    }
}

// The values of a thread's 16-column block jj of the tile, in the inline
// stores' order: x[2 i + h] at row m (i even) or m + 8, column n + h (+ 8
// for i >= 2). Each is tess_epilogue_value's (alpha * sum, + beta * C with
// WITH_C); FUSED adds the bias of columns n, n + 1, n + 8, n + 9 (its raw
// bits, loaded by the caller ahead of any wait), then the sigmoid gate of
// tess_act_form, GELU's erf form or ReLU's clamp (activate_block), then
// with RESIDUAL the residual read inline.
template <class Cfg, bool WITH_C, bool FUSED, bool RESIDUAL, tess_act_shape SHAPE>
TESS_DEVICE void block_values(const tess_epilogue &e, const float (&acc)[Cfg::BN / 2], int jj, int t, int b, int m0,
                              int n0, const tess_bias_reader &bias, const uint32_t (&bias_bits)[4],
                              const tess_act_form &act, const residual_rows &residual, float (&x)[8]) {
    float res[8];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int v = 8 * jj + 2 * i;
        int m, n;
        tess_wgmma_acc_coord(t, v, &m, &n);
        x[2 * i] = tess_epilogue_value<WITH_C, true>(e, acc[v], b, m0 + m, n0 + n);
        x[2 * i + 1] = tess_epilogue_value<WITH_C, true>(e, acc[v + 1], b, m0 + m, n0 + n + 1);
        // The residual's pair, loaded here, ahead of the bias and activation its latency overlaps.
        if constexpr (RESIDUAL)
            residual_pair(residual, 16 * jj + 8 * (i / 2), i % 2, res[2 * i], res[2 * i + 1]);
    }
    if constexpr (FUSED) {
#pragma unroll
        for (int c = 0; c < 4; c++) { // the bias of columns n, n + 1, n + 8, n + 9
            const float bias_c = tess_bias_value(bias, bias_bits[c]);
            x[4 * (c / 2) + c % 2] += bias_c, x[4 * (c / 2) + 2 + c % 2] += bias_c; // rows m, m + 8
        }
        activate_block<SHAPE>(act, x);
        if (RESIDUAL) {
#pragma unroll
            for (int i = 0; i < 8; i++)
                x[i] += res[i];
        }
    }
}

// Stages a thread's four packed 16-bit pairs of 16-column block j of a
// round by stmatrix into the round's staging sub-tiles (transposed for a
// column-major D).
TESS_DEVICE void stage_pairs(uint32_t base, int warp, int lane, int j, const uint32_t (&r)[4], bool col_major) {
    const uint32_t addr = base + tess_epi_stmatrix_offset(warp, lane, j, col_major);
    if (col_major)
        stmatrix_x4_trans(addr, r[0], r[1], r[2], r[3]);
    else
        stmatrix_x4(addr, r[0], r[1], r[2], r[3]);
}

// Stages a thread's 8 values of 16-column block j of a round (x[2 i + h]:
// block_values' order) as 16-bit pairs (stage_pairs).
TESS_DEVICE void stage_block(uint32_t base, int warp, int lane, int j, const float (&x)[8], bool bf16,
                             bool col_major) {
    uint32_t r[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        r[i] = pack16(x[2 * i], x[2 * i + 1], bf16);
    stage_pairs(base, warp, lane, j, r, col_major);
}

// 16-bit D, in rounds of EPI_COLS columns: stmatrix into this warpgroup's
// staging sub-tiles, then one thread's TMA stores (or every thread's copies,
// for a grouped tile whose rows end inside it: epilogue_copy_rows).
// `pending` says an earlier round may still be reading the staging buffer.
// FUSED: the fused steps inline (block_values: alpha * sum + the bias of
// bias batch bb, per column or none, then the activation, then a residual
// with RESIDUAL); no C, no per-row bias (the fused epilogue's other paths
// take those); SHAPE: the activation's (epilogue_store16_fused picks it).
// AUX (a dense fused store, no residual; tma_aux maps aux): each round
// first stages alpha * sum + bias, which TMA stores to aux, keeps those
// values in the round's accumulators, waits for TMA to read the staging
// buffer, then stages their activation for D.
template <class Cfg, bool WITH_C, bool FUSED = false, bool RESIDUAL = false, tess_act_shape SHAPE = TESS_SHAPE_NONE,
          bool AUX = false>
TESS_DEVICE void epilogue_store16(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg, int t,
                                  int b, int m0, int m_end, int n0, bool &pending, int bb = 0) {
    static_assert(!(WITH_C && FUSED), "the fused store reads no C");
    static_assert(!AUX || (FUSED && !RESIDUAL && !Cfg::GROUPED), "aux: the fused store of a dense kernel, no residual");
    static_assert(!RESIDUAL || (FUSED && !Cfg::GROUPED && Cfg::RESIDUAL_INLINE), "a residual: the fused store of a dense kernel");
    const tess_act_form act = tess_act_form_of(FUSED ? p.epi.activation : TESS_ACT_NONE);
    int m_first, n_first; // the thread's first row and column of the tile
    tess_wgmma_acc_coord(t, 0, &m_first, &n_first);
    const tess_bias_reader bias = tess_column_bias_reader(p.epi, bb, n0 + n_first);
    const residual_rows residual = RESIDUAL ? residual_rows_of(p.epi, b, m0 + m_first, n0 + n_first) : residual_rows{};
    // TMA clips stores at D's edges, which are a dense GEMM's, not a group's.
    const bool by_tma = !Cfg::GROUPED || m0 + 64 <= m_end;
    const int warp = t / 32, lane = t % 32, barrier = TESS_EPI_BARRIER_BASE + wg;
    const bool col_major = p.epi.d_layout.order == TESS_ORDER_COL, bf16 = p.epi.d_layout.dtype == TESS_DTYPE_BF16;
    const uint32_t base = smem_u32(staging);
#pragma unroll
    for (int round = 0; round < Cfg::BN / Cfg::EPI_COLS; round++) {
        // The round's bias (columns n, n + 1, n + 8, n + 9 of each 16-column
        // block), loaded before anything waits, so that its loads overlap.
        uint32_t bias_bits[FUSED ? Cfg::EPI_COLS / 16 : 1][4];
        if constexpr (FUSED) {
#pragma unroll
            for (int j = 0; j < Cfg::EPI_COLS / 16; j++)
#pragma unroll
                for (int c = 0; c < 4; c++)
                    bias_bits[j][c] = tess_bias_load(bias, pair_column(round * (Cfg::EPI_COLS / 16) + j, c));
        }
        wait_staging_free(pending, t, barrier);
        const int nc = n0 + round * Cfg::EPI_COLS;
        if constexpr (AUX) {
            // aux: the values before the activation, kept in the accumulators for D's pass
#pragma unroll
            for (int j = 0; j < Cfg::EPI_COLS / 16; j++) {
                const int jj = round * (Cfg::EPI_COLS / 16) + j;
                float x[8];
                block_values<Cfg, false, true, false, TESS_SHAPE_NONE>(p.epi, acc, jj, t, b, m0, n0, bias,
                                                                       bias_bits[j], act, residual, x);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc[8 * jj + i] = x[i]; // block_values' x[i] is accumulator 8 jj + i's value
                stage_block(base, warp, lane, j, x, bf16, col_major);
            }
            store_round<Cfg::EPI_COLS>(p, staging, t, b, m0, m_end, nc, p.n, true, col_major, barrier, &p.tma_aux);
            wait_staging_free(true, t, barrier);
        }
#pragma unroll
        for (int j = 0; j < Cfg::EPI_COLS / 16; j++) {
            const int jj = round * (Cfg::EPI_COLS / 16) + j; /* 16-column block of the tile */
            float x[8];
            if constexpr (AUX) {
#pragma unroll
                for (int i = 0; i < 8; i++)
                    x[i] = acc[8 * jj + i];
                activate_block<SHAPE>(act, x);
            } else {
                block_values<Cfg, WITH_C, FUSED, RESIDUAL, SHAPE>(p.epi, acc, jj, t, b, m0, n0, bias,
                                                                  bias_bits[FUSED ? j : 0], act, residual, x);
            }
            stage_block(base, warp, lane, j, x, bf16, col_major);
        }
        store_round<Cfg::EPI_COLS>(p, staging, t, b, m0, m_end, nc, p.n, by_tma, col_major, barrier);
        pending = true;
    }
}

// Whether a kernel's inline fused store writes aux (epilogue_store16's AUX):
// dense kernels whose store compiles per activation shape, except those with
// per-column B factors (their aux rounds spill: 4 bytes in
// fp8_128x128_c1_rows_cols). The others (and problems whose aux TMA cannot
// store) write aux from the staged store.
template <class Cfg>
constexpr bool STORES_AUX_INLINE = !Cfg::GROUPED && !Cfg::FUSES_FROM_REGISTERS &&
                                   !(Cfg::PROMOTES && Cfg::EPI_COLS > TESS_EPI_ROUND_COLS) &&
                                   Cfg::SCALING != TESS_SCALING_BLOCK_ROWS_COLS;

// epilogue_store16's fused path with the copy compiled for the epilogue's
// activation shape, chosen once per tile. Promoting kernels that stage more
// than TESS_EPI_ROUND_COLS columns a round keep the run-time choice: their
// round's bias and branch-free blocks spill beside the promoted
// accumulators (ptxas: 176-304 bytes in the 192- and 256-wide 3-stage ones).
// AUX: aux written inline too (STORES_AUX_INLINE kernels only).
template <class Cfg, bool RESIDUAL, bool AUX = false>
TESS_DEVICE void epilogue_store16_fused(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg,
                                        int t, int b, int m0, int m_end, int n0, bool &pending, int bb) {
    static_assert(!AUX || STORES_AUX_INLINE<Cfg>, "aux inline: kernels whose store compiles per shape");
    if constexpr (Cfg::PROMOTES && Cfg::EPI_COLS > TESS_EPI_ROUND_COLS) {
        epilogue_store16<Cfg, false, true, RESIDUAL, TESS_SHAPE_ANY>(p, acc, staging, wg, t, b, m0, m_end, n0, pending,
                                                                     bb);
    } else {
        switch (tess_act_shape_of(tess_act_form_of(p.epi.activation))) {
        case TESS_SHAPE_SIGMOID:
            epilogue_store16<Cfg, false, true, RESIDUAL, TESS_SHAPE_SIGMOID, AUX>(p, acc, staging, wg, t, b, m0, m_end,
                                                                                  n0, pending, bb);
            break;
        case TESS_SHAPE_ERF:
            epilogue_store16<Cfg, false, true, RESIDUAL, TESS_SHAPE_ERF, AUX>(p, acc, staging, wg, t, b, m0, m_end, n0,
                                                                              pending, bb);
            break;
        case TESS_SHAPE_RELU:
            epilogue_store16<Cfg, false, true, RESIDUAL, TESS_SHAPE_RELU, AUX>(p, acc, staging, wg, t, b, m0, m_end,
                                                                               n0, pending, bb);
            break;
        default:
            // aux comes with an activation only (tess_gemm refuses it without one): no AUX copy here
            if constexpr (AUX)
                __trap();
            else
                epilogue_store16<Cfg, false, true, RESIDUAL, TESS_SHAPE_NONE>(p, acc, staging, wg, t, b, m0, m_end,
                                                                              n0, pending, bb);
        }
    }
}

// One 16-column block's four gated outputs of a thread, exchanged within
// its quad into stmatrix's pairs. The block's accumulators x[2 i + h]
// (epilogue_store16's order) are (gate, up) pairs at rows m (i even) and
// m + 8, D columns q and q + 4 of the block's 8 (q: lane % 4; bias b4 of
// product columns n, n + 1, n + 8, n + 9 added first); stmatrix wants a
// lane's D columns 2q and 2q + 1, which lanes 2q % 4 and (2q + 1) % 4 of
// the quad hold (as their column q, for q < 2, or q + 4). Returns the
// lane's pairs for rows m (*row_m) and m + 8 (*row_m8).
// SHAPE: the activation's (TESS_SHAPE_ANY: decided per value, tess_glu_of).
template <tess_act_shape SHAPE>
TESS_DEVICE void gated_block_pairs(const float (&x)[8], const float (&b4)[4], const tess_act_form &act, float limit,
                                   bool bf16, int lane, uint32_t *row_m, uint32_t *row_m8) {
    float o[4]; // D's (m, q), (m + 8, q), (m, q + 4), (m + 8, q + 4)
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float gate = x[2 * i] + b4[2 * (i / 2)], up = x[2 * i + 1] + b4[2 * (i / 2) + 1];
        if constexpr (SHAPE == TESS_SHAPE_ANY) {
            o[i] = tess_glu_of(act, limit, gate, up);
        } else {
            tess_gate_clamp(limit, gate, up);
            o[i] = activate_one<SHAPE>(act, gate) * up;
        }
    }
    // Each lane's columns packed by row pair: (m, m + 8) of column q, then of q + 4.
    const uint32_t first = pack16(o[0], o[1], bf16), second = pack16(o[2], o[3], bf16);
    const int q = lane % 4, quad = lane - q;
    const uint32_t a = __shfl_sync(0xffffffffu, first, quad + (2 * q) % 4),
                   c = __shfl_sync(0xffffffffu, second, quad + (2 * q) % 4),
                   d = __shfl_sync(0xffffffffu, first, quad + (2 * q + 1) % 4),
                   e = __shfl_sync(0xffffffffu, second, quad + (2 * q + 1) % 4);
    const uint32_t lo = q < 2 ? a : c, hi = q < 2 ? d : e; // column 2q, 2q + 1: (row m, row m + 8) each
    *row_m = __byte_perm(lo, hi, 0x5410);                  // low halves: row m's pair
    *row_m8 = __byte_perm(lo, hi, 0x7632);                 // high halves: row m + 8's
}

// A gated epilogue's 16-bit D stored by TMA (Cfg::GATED_OUT_COLS > 0; a
// per-column bias or none, no residual): each round takes 2 GATED_OUT_COLS
// of the product's columns, alpha, the bias, the clamp and activation(gate)
// * up in registers (gated_block_pairs), stmatrix into the staging
// sub-tiles, then TMA stores of GATED_OUT_COLS of D's columns from n0 / 2,
// as epilogue_store16's rounds.
template <class Cfg, tess_act_shape SHAPE>
TESS_DEVICE void epilogue_store16_gated(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg,
                                        int t, int b, int m0, int m_end, int n0, bool &pending, int bb) {
    constexpr int OUT = Cfg::GATED_OUT_COLS, ROUNDS = Cfg::BN / (2 * OUT);
    static_assert(OUT > 0 && OUT % TESS_EPI_SUBTILE == 0, "whole sub-tiles of D a round");
    static_assert(OUT <= Cfg::EPI_COLS, "a round's D columns fit the staging sub-tiles");
    const tess_act_form act = tess_act_form_of(p.epi.activation);
    const float alpha = p.epi.alpha, limit = p.epi.gate_limit;
    int m_first, n_first; // the thread's first row and column of the tile
    tess_wgmma_acc_coord(t, 0, &m_first, &n_first);
    const tess_bias_reader bias = tess_column_bias_reader(p.epi, bb, n0 + n_first);
    const bool by_tma = !Cfg::GROUPED || m0 + 64 <= m_end;
    const int warp = t / 32, lane = t % 32, barrier = TESS_EPI_BARRIER_BASE + wg;
    const bool col_major = p.epi.d_layout.order == TESS_ORDER_COL, bf16 = p.epi.d_layout.dtype == TESS_DTYPE_BF16;
    const uint32_t base = smem_u32(staging);
#pragma unroll
    for (int round = 0; round < ROUNDS; round++) {
        wait_staging_free(pending, t, barrier);
#pragma unroll
        for (int jo = 0; jo < OUT / 16; jo++) { // D's 16-column block of the round: product blocks 2 jo, 2 jo + 1
            uint32_t r[4];
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int jj = round * (2 * OUT / 16) + 2 * jo + half; // the product's 16-column block of the tile
                float x[8], b4[4];
#pragma unroll
                for (int v = 0; v < 8; v++)
                    x[v] = alpha * acc[8 * jj + v];
#pragma unroll
                for (int c = 0; c < 4; c++) // product columns n, n + 1, n + 8, n + 9
                    b4[c] = tess_bias_value(bias, tess_bias_load(bias, pair_column(jj, c)));
                gated_block_pairs<SHAPE>(x, b4, act, limit, bf16, lane, &r[2 * half], &r[2 * half + 1]);
            }
            stage_pairs(base, warp, lane, jo, r, col_major);
        }
        store_round<OUT>(p, staging, t, b, m0, m_end, n0 / 2 + round * OUT, p.n / 2, by_tma, col_major, barrier);
        pending = true;
    }
}

// epilogue_store16_gated compiled for the epilogue's activation shape, chosen
// once per tile (as epilogue_store16_fused does); kernels whose per-shape
// copies do not fit their registers keep the run-time choice
// (GATED_PER_SHAPE): promoting kernels that stage more than 128 columns a
// round, the grouped promoting ones (grouped_fp8_128x128 spilled 52 bytes)
// and those with per-column B factors (fp8_128x128_c1_rows_cols, 4 bytes).
template <class Cfg>
constexpr bool GATED_PER_SHAPE = !(Cfg::PROMOTES && (Cfg::EPI_COLS > TESS_EPI_ROUND_COLS || Cfg::GROUPED ||
                                                     Cfg::SCALING == TESS_SCALING_BLOCK_ROWS_COLS));
template <class Cfg>
TESS_DEVICE void epilogue_store16_gated_for(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging,
                                            int wg, int t, int b, int m0, int m_end, int n0, bool &pending, int bb) {
    if constexpr (!GATED_PER_SHAPE<Cfg>) {
        epilogue_store16_gated<Cfg, TESS_SHAPE_ANY>(p, acc, staging, wg, t, b, m0, m_end, n0, pending, bb);
    } else {
        switch (tess_act_shape_of(tess_act_form_of(p.epi.activation))) {
        case TESS_SHAPE_SIGMOID:
            epilogue_store16_gated<Cfg, TESS_SHAPE_SIGMOID>(p, acc, staging, wg, t, b, m0, m_end, n0, pending, bb);
            break;
        case TESS_SHAPE_ERF:
            epilogue_store16_gated<Cfg, TESS_SHAPE_ERF>(p, acc, staging, wg, t, b, m0, m_end, n0, pending, bb);
            break;
        case TESS_SHAPE_RELU:
            epilogue_store16_gated<Cfg, TESS_SHAPE_RELU>(p, acc, staging, wg, t, b, m0, m_end, n0, pending, bb);
            break;
        default:
            epilogue_store16_gated<Cfg, TESS_SHAPE_NONE>(p, acc, staging, wg, t, b, m0, m_end, n0, pending, bb);
        }
    }
}

// D's value at (m, n) of batch b from an accumulator, in the register
// paths: alpha * sum (+ beta * C where WITH_C), or with FUSED the whole
// epilogue as one call (tess_epilogue_final_call) and a dense kernel's
// residual as another.
template <class Cfg, bool WITH_C, bool FUSED>
TESS_DEVICE float register_value(const tess_epilogue &e, float sum, int b, int bb, int m, int n) {
    float x = FUSED ? tess_epilogue_final_call(e, sum, b, bb, m, n) : tess_epilogue_value<WITH_C, true>(e, sum, b, m, n);
    if constexpr (FUSED && !Cfg::GROUPED)
        if (e.residual)
            x += tess_epilogue_residual_call(e, b, m, n);
    return x;
}

// Stores x as one element of D at `at`: T is float (f32 D) or uint16_t
// (the bits of a bf16 or f16 D).
template <class T>
TESS_DEVICE void store_element(T *at, float x, bool bf16) {
    if constexpr (sizeof(T) == 4)
        *at = x;
    else
        *at = bf16 ? tess_f32_to_bf16(x) : tess_f32_to_f16(x);
}

// D stored straight from registers, element by element inside rows
// [.., m_end) and columns [.., n_end) (the matrix, or a group's part of it):
// f32 D, a 16-bit D that TMA cannot store exactly, and token tiles. Without
// C, D's layout is read once and each element is one inline store of type
// T (float, or uint16_t for bf16 and f16): a decode GEMM's token tiles
// store this way, where a call per element (re-reading D's layout through
// a generic pointer, then switching on its type) cost ~1.7 us per 128 x 16
// tile, a tenth of the whole GEMM (dev/NOTES.md, "Where a short GEMM's time
// goes"). The row and column steps are tess_matrix_offset's, taken once:
// calling it per element spills 8 bytes in the FP8 128x256 three-stage
// kernels (f32 D). With C (beta != 0, off the hot path), each element is a
// compact call that stores any type (T unused).
// FUSED: each element's whole epilogue is calls (register_value), then an
// inline store of type T.
template <class Cfg, class T, bool WITH_C, bool FUSED = false>
TESS_DEVICE void epilogue_store_registers(const tess_gemm_params &p, const float (&acc)[Cfg::BN / 2], int t, int b,
                                          int m0, int m_end, int n0, int n_end, int bb = 0) {
    static_assert(!(WITH_C && FUSED), "a fused element reads C in its call");
    const tess_epilogue &e = p.epi;
    const bool row_major = e.d_layout.order == TESS_ORDER_ROW, bf16 = e.d_layout.dtype == TESS_DTYPE_BF16;
    const int64_t ld = e.d_layout.ld, row_step = row_major ? ld : 1, col_step = row_major ? 1 : ld;
    T *d = (T *)e.d + (int64_t)b * e.d_layout.batch_stride;
    if constexpr (!WITH_C) {
        if (row_major) {
            // Accumulators v and v + 1 are columns n and n + 1 of one row:
            // one store of both where both lie inside and the pair is
            // aligned to its size, so that a warp's store covers whole
            // 32-byte sectors (4 lanes x 8 bytes of f32 per row) instead of
            // every other 8 bytes of them.
#pragma unroll
            for (int v = 0; v < Cfg::BN / 2; v += 2) {
                int m, n;
                tess_wgmma_acc_coord(t, v, &m, &n);
                m += m0, n += n0;
                if (m >= m_end || n >= n_end)
                    continue;
                float x[2];
#pragma unroll
                for (int i = 0; i < 2; i++)
                    x[i] = register_value<Cfg, false, FUSED>(e, acc[v + i], b, bb, m, n + i);
                T *at = d + m * row_step + n;
                if (n + 1 < n_end && (uintptr_t)at % (2 * sizeof(T)) == 0) {
                    if constexpr (sizeof(T) == 4)
                        *(float2 *)at = make_float2(x[0], x[1]);
                    else
                        *(uint32_t *)at = pack16(x[0], x[1], bf16);
                } else {
#pragma unroll
                    for (int i = 0; i < 2; i++)
                        if (n + i < n_end)
                            store_element(at + i, x[i], bf16);
                }
            }
            return;
        }
    }
#pragma unroll
    for (int v = 0; v < Cfg::BN / 2; v++) {
        int m, n;
        tess_wgmma_acc_coord(t, v, &m, &n);
        m += m0, n += n0;
        if (m < m_end && n < n_end) {
            const float x = register_value<Cfg, WITH_C, FUSED>(e, acc[v], b, bb, m, n);
            if constexpr (WITH_C)
                tess_epilogue_put_call(e, b, m, n, x);
            else
                store_element(d + m * row_step + n * col_step, x, bf16);
        }
    }
}

// A gated epilogue's D from registers (kernels without a staging buffer):
// accumulators v and v + 1 of a thread are the product's columns n, n + 1
// (n even) of one row, a (gate, up) pair, which make D's column n / 2 by one
// call (tess_epilogue_gated_call), plus a dense kernel's residual; with
// gate_rows (a transposed plan) the pair is two rows, in two lanes. T as
// epilogue_store_registers's.
template <class Cfg, class T>
TESS_DEVICE void epilogue_store_gated(const tess_gemm_params &p, const float (&acc)[Cfg::BN / 2], int t, int b,
                                      int m0, int m_end, int n0, int n_end, int bb) {
    const tess_epilogue &e = p.epi;
    const bool row_major = e.d_layout.order == TESS_ORDER_ROW, bf16 = e.d_layout.dtype == TESS_DTYPE_BF16;
    const int64_t ld = e.d_layout.ld, row_step = row_major ? ld : 1, col_step = row_major ? 1 : ld;
    T *d = (T *)e.d + (int64_t)b * e.d_layout.batch_stride;
    if constexpr (Cfg::STORES_FROM_REGISTERS) { // the only kernels the planners run transposed
        if (e.gate_rows) {
            // A transposed plan: the pair is rows m, m + 1 of the kernel's tile, the same accumulator
            // of lanes L and L ^ 4 (tess_wgmma_acc_coord: row 16 warp + lane / 4 + 8 (v / 2 % 2)), whose
            // even-row lane makes D's row m / 2 (every lane shuffles, before any bounds test).
#pragma unroll
            for (int v = 0; v < Cfg::BN / 2; v++) {
                int m, n;
                tess_wgmma_acc_coord(t, v, &m, &n);
                m += m0, n += n0;
                const float up = __shfl_xor_sync(0xffffffffu, acc[v], 4);
                if ((t / 4) % 2 != 0 || m >= m_end || n >= n_end)
                    continue;
                float x = tess_epilogue_gated_call(e, acc[v], up, bb, m, n);
                if constexpr (!Cfg::GROUPED)
                    if (e.residual)
                        x += tess_epilogue_residual_call(e, b, m / 2, n);
                store_element(d + (m / 2) * row_step + n * col_step, x, bf16);
            }
            return;
        }
    }
#pragma unroll
    for (int v = 0; v < Cfg::BN / 2; v += 2) {
        int m, n;
        tess_wgmma_acc_coord(t, v, &m, &n);
        m += m0, n += n0;
        if (m >= m_end || n >= n_end)
            continue;
        float x = tess_epilogue_gated_call(e, acc[v], acc[v + 1], bb, m, n);
        if constexpr (!Cfg::GROUPED)
            if (e.residual)
                x += tess_epilogue_residual_call(e, b, m, n / 2);
        store_element(d + m * row_step + (n / 2) * col_step, x, bf16);
    }
}

// Stores x[i] at element offset at + i of D (`d`: four consecutive
// elements along its contiguous dimension) where in[i]:
// one vector store where all four are and the address is aligned to their
// size, else one store each.
TESS_DEVICE void fused_store4(tess_dtype type, char *d, int64_t at, const float (&x)[4], const bool (&in)[4]) {
    const bool wide = type == TESS_DTYPE_F32;
    const int size = wide ? 4 : 2;
    char *first = d + at * size;
    if (in[0] && in[1] && in[2] && in[3] && ((uintptr_t)first % (4 * size)) == 0) {
        if (wide) {
            *(float4 *)first = make_float4(x[0], x[1], x[2], x[3]);
        } else {
            const bool bf16 = type == TESS_DTYPE_BF16;
            *(uint2 *)first = make_uint2(pack16(x[0], x[1], bf16), pack16(x[2], x[3], bf16));
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
        if (in[i])
            tess_store_from_f32(type, d, at + i, x[i]);
}

// The residual's four elements from (m, n) of batch b on, along D's
// contiguous dimension (row_major: columns n .. n + 3, else rows m .. m + 3;
// 0 outside), element by element: called rather than inlined, as the
// promoting kernels' whole-tile accumulators leave the staged loop no
// registers for four general loads (ptxas spills the 128x192 ones).
static __device__ __noinline__ float4 residual4_call(const tess_epilogue &e, int b, int m, int n, bool row_major) {
    float q[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        q[i] = tess_epilogue_residual(e, b, row_major ? m : m + i, row_major ? n + i : n);
    return make_float4(q[0], q[1], q[2], q[3]);
}

// Stores a finishing chunk's four values before the activation into aux at
// (m, n) of batch b (aux has D's type and order, so the chunk's geometry is
// D's): called rather than inlined, for residual4_call's reason (the
// promoting kernels' 128x256 tiles spill when it is inlined).
static __device__ __noinline__ void aux4_call(const tess_epilogue &e, int b, int m, int n, float4 v, unsigned inside) {
    const float x[4] = {v.x, v.y, v.z, v.w};
    const bool in[4] = {(inside & 1u) != 0, (inside & 2u) != 0, (inside & 4u) != 0, (inside & 8u) != 0};
    fused_store4(e.aux_layout.dtype, (char *)e.aux, tess_matrix_offset(&e.aux_layout, b, m, n), x, in);
}

// The same four as one load where the residual is row-major and the run
// lies inside its row, aligned to its size (f32: 16 bytes, 16-bit: 8): the
// common case, inline so that the load issues before the chunk's arithmetic
// and its latency overlaps it; false (q untouched) otherwise.
TESS_DEVICE bool residual4_row(const tess_epilogue &e, int b, int m, int n, float (&q)[4]) {
    const tess_matrix_desc &r = e.residual_layout;
    if (r.order != TESS_ORDER_ROW || m >= r.rows || n + 3 >= r.cols)
        return false;
    const int64_t at = (int64_t)b * r.batch_stride + (int64_t)m * r.ld + n;
    if (r.dtype == TESS_DTYPE_F32) {
        const float *p = (const float *)e.residual + at;
        if ((uintptr_t)p % 16 != 0)
            return false;
        const float4 v = *(const float4 *)p;
        q[0] = v.x, q[1] = v.y, q[2] = v.z, q[3] = v.w;
        return true;
    }
    const uint16_t *p = (const uint16_t *)e.residual + at;
    if ((uintptr_t)p % 8 != 0)
        return false;
    const uint2 v = *(const uint2 *)p;
    const bool bf16 = r.dtype == TESS_DTYPE_BF16;
    const uint16_t h[4] = {(uint16_t)v.x, (uint16_t)(v.x >> 16), (uint16_t)v.y, (uint16_t)(v.y >> 16)};
#pragma unroll
    for (int i = 0; i < 4; i++)
        q[i] = bf16 ? tess_bf16_to_f32(h[i]) : tess_f16_to_f32(h[i]);
    return true;
}

// The residual's four elements for a finishing chunk at (m, n) of D
// (along D's contiguous dimension): one inline load where it can
// (residual4_row, where Cfg::STAGED_RESIDUAL_INLINE), else by call.
template <class Cfg>
TESS_DEVICE void fused_residual4(const tess_epilogue &e, int b, int m, int n, bool row_major, float (&res)[4]) {
    if (!(Cfg::STAGED_RESIDUAL_INLINE && row_major && residual4_row(e, b, m, n, res))) {
        const float4 q = residual4_call(e, b, m, n, row_major);
        res[0] = q.x, res[1] = q.y, res[2] = q.z, res[3] = q.w;
    }
}

// One round of epilogue_fused without a gate: the warpgroup's staged sums
// of columns [nr, nr + FUSED_COLS) become D's, four elements per chunk
// along D's contiguous dimension (a vector store each), the chunks taken by
// the 128 threads in turn; with aux, each chunk's values before the
// activation go to aux first, in the same geometry (aux has D's type and
// order).
// IN_PLACE: the values go back into the staged sums instead (row_major
// chunks, 0 outside the matrix), for an FP8 D's store from registers.
template <class Cfg, bool IN_PLACE = false>
TESS_DEVICE void fused_round(const tess_epilogue &e, float *sums, const float *bias, const tess_act_form &act, int t,
                             int b, int m0, int nr, int round, const tile_coord &tile, bool row_major,
                             bool per_column) {
    constexpr int W = Cfg::FUSED_COLS, PITCH = Cfg::FUSED_PITCH, ROWS = 64, CHUNK = 4, THREADS = 128;
    // Chunks along a row (row-major D: W / CHUNK a row) or a column (ROWS / CHUNK a column).
    constexpr int CHUNKS = ROWS * W / CHUNK, ROW_CHUNKS = W / CHUNK, COL_CHUNKS = ROWS / CHUNK;
    for (int c = t; c < CHUNKS; c += THREADS) {
        const int r = row_major ? c / ROW_CHUNKS : CHUNK * (c % COL_CHUNKS),
                  col = row_major ? CHUNK * (c % ROW_CHUNKS) : c / COL_CHUNKS;
        // The residual first, so that its load's latency overlaps the arithmetic.
        float res[CHUNK] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (!Cfg::GROUPED && e.residual)
            fused_residual4<Cfg>(e, b, m0 + r, nr + col, row_major, res);
        float x[CHUNK];
        bool in[CHUNK];
        if (row_major) { // four consecutive floats, 16-byte aligned (PITCH and col are multiples of CHUNK = 4)
            const float4 q = *(const float4 *)&sums[r * PITCH + col];
            x[0] = q.x, x[1] = q.y, x[2] = q.z, x[3] = q.w;
        } else {
#pragma unroll
            for (int i = 0; i < CHUNK; i++)
                x[i] = sums[(r + i) * PITCH + col];
        }
#pragma unroll
        for (int i = 0; i < CHUNK; i++) {
            const int lr = row_major ? r : r + i, lc = row_major ? col + i : col;
            const int m = m0 + lr, n = nr + lc;
            in[i] = m < tile.m_end && n < tile.n_end;
            x[i] *= e.alpha;
            if (e.beta != 0.0f)
                x[i] += e.beta * tess_epilogue_c(e, b, m, n);
            x[i] += bias[per_column ? round * W + lc : lr];
        }
        if (e.aux) // the values before the activation, D's chunk of aux
            aux4_call(e, b, m0 + r, nr + col, make_float4(x[0], x[1], x[2], x[3]),
                      (in[0] ? 1u : 0u) | (in[1] ? 2u : 0u) | (in[2] ? 4u : 0u) | (in[3] ? 8u : 0u));
        if (act.erf) {
#pragma unroll
            for (int i = 0; i < CHUNK; i++)
                x[i] = tess_gelu_erf(x[i]);
        } else {
#pragma unroll
            for (int i = 0; i < CHUNK; i++)
                x[i] = tess_activate_form(act, x[i]);
        }
#pragma unroll
        for (int i = 0; i < CHUNK; i++)
            x[i] += res[i];
        if constexpr (IN_PLACE)
            *(float4 *)&sums[r * PITCH + col] =
                make_float4(in[0] ? x[0] : 0.0f, in[1] ? x[1] : 0.0f, in[2] ? x[2] : 0.0f, in[3] ? x[3] : 0.0f);
        else
            fused_store4(e.d_layout.dtype, (char *)e.d, tess_matrix_offset(&e.d_layout, b, m0 + r, nr + col), x, in);
    }
}

// One round of epilogue_fused with a gate: the staged sums of the product's
// columns [nr, nr + FUSED_COLS), (gate, up) pairs, become D's columns from
// nr / 2, FUSED_COLS / 2 of them, four elements per chunk as fused_round's,
// each activation(gate) * up after alpha and the bias (tess_epilogue_glu's
// arithmetic, with the activation's form decided once). No C (the API's
// rule).
template <class Cfg>
TESS_DEVICE void fused_round_gated(const tess_epilogue &e, const float *sums, const float *bias,
                                   const tess_act_form &act, int t, int b, int m0, int nr, int round,
                                   const tile_coord &tile, bool row_major, bool per_column) {
    constexpr int W = Cfg::FUSED_COLS, PITCH = Cfg::FUSED_PITCH, ROWS = 64, CHUNK = 4, THREADS = 128;
    constexpr int CHUNKS = ROWS * (W / 2) / CHUNK, ROW_CHUNKS = (W / 2) / CHUNK, COL_CHUNKS = ROWS / CHUNK;
    const int nd = nr / 2; // D's first column of the round
    const float limit = e.gate_limit;
    for (int c = t; c < CHUNKS; c += THREADS) {
        const int r = row_major ? c / ROW_CHUNKS : CHUNK * (c % COL_CHUNKS),
                  col = row_major ? CHUNK * (c % ROW_CHUNKS) : c / COL_CHUNKS; // D's, in the round
        float res[CHUNK] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (!Cfg::GROUPED && e.residual)
            fused_residual4<Cfg>(e, b, m0 + r, nd + col, row_major, res);
        float gate[CHUNK], up[CHUNK];
        if (row_major) { // eight consecutive sums, four pairs: two 16-byte loads (2 col is a multiple of 8)
            const float4 q0 = *(const float4 *)&sums[r * PITCH + 2 * col],
                         q1 = *(const float4 *)&sums[r * PITCH + 2 * col + 4];
            gate[0] = q0.x, up[0] = q0.y, gate[1] = q0.z, up[1] = q0.w;
            gate[2] = q1.x, up[2] = q1.y, gate[3] = q1.z, up[3] = q1.w;
        } else { // one pair from each of four rows
#pragma unroll
            for (int i = 0; i < CHUNK; i++) {
                const float2 pair = *(const float2 *)&sums[(r + i) * PITCH + 2 * col];
                gate[i] = pair.x, up[i] = pair.y;
            }
        }
        float x[CHUNK];
        bool in[CHUNK];
#pragma unroll
        for (int i = 0; i < CHUNK; i++) {
            const int lr = row_major ? r : r + i, lc = 2 * (row_major ? col + i : col); // lc: the gate's column
            in[i] = m0 + lr < tile.m_end && nr + lc < tile.n_end;
            x[i] = tess_glu_of(act, limit, e.alpha * gate[i] + bias[per_column ? round * W + lc : lr],
                               e.alpha * up[i] + bias[per_column ? round * W + lc + 1 : lr]) +
                   res[i];
        }
        fused_store4(e.d_layout.dtype, (char *)e.d, tess_matrix_offset(&e.d_layout, b, m0 + r, nd + col), x, in);
    }
}

// Calls fn(v, m, n) for each of the thread's accumulator pairs v, v + 1 in
// round `round` of epilogue_fused (columns [round W, round W + W) of the
// tile, W = FUSED_COLS; 2 rows x W / 8 pairs): row m of the warpgroup's 64
// and column n of the round. The round picks its accumulators by a branch
// per round, as registers cannot be indexed at run time.
template <class Cfg, class Fn>
TESS_DEVICE void for_round_pairs(int t, int round, Fn fn) {
    constexpr int W = Cfg::FUSED_COLS;
#pragma unroll
    for (int rr = 0; rr < Cfg::BN / W; rr++) {
        if (rr != round)
            continue;
#pragma unroll
        for (int i = 0; i < W / 4; i++) {
            const int v = rr * W / 2 + 2 * i;
            int m, n;
            tess_wgmma_acc_coord(t, v, &m, &n);
            fn(v, m, n - rr * W);
        }
    }
}

// The fused epilogue of kernels with a staging buffer (bias, activation):
// the tile's bias slice goes to shared memory once (float32, 0 past the
// vector's end), then FUSED_COLS columns of the warpgroup's float32 sums at
// a time (unrolled: each thread's accumulators are registers); a rolled
// loop then takes four consecutive elements of D each (along D's contiguous
// dimension), computes alpha * sum + beta * C + bias, the activation (by
// coefficients: tess_act_form), adds the residual, and stores them
// (fused_round; with a gate fused_round_gated, each element from a pair of
// the product's columns). The
// arithmetic is written once, not per unrolled accumulator, which keeps each
// kernel's code and compile time near the plain epilogue's whatever the
// activation, and the sums reach global memory in D's order. `pending`: an
// earlier tile's TMA stores may still read the buffer. VALUES_BACK (an FP8
// D, no gate): each round's values return to the accumulators instead, 0
// outside the matrix (fused_round's IN_PLACE), for epilogue_store_fp8.
template <class Cfg, bool VALUES_BACK = false>
TESS_DEVICE void epilogue_fused(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg, int t,
                                const tile_coord &tile, int m0, bool &pending) {
    // A round: the warpgroup's 64 rows x W columns of sums.
    constexpr int W = Cfg::FUSED_COLS, PITCH = Cfg::FUSED_PITCH, ROWS = 64, THREADS = 128;
    const tess_epilogue &e = p.epi;
    const int b = tile.d_batch, bb = Cfg::GROUPED ? tile.group : tile.d_batch, barrier = TESS_EPI_BARRIER_BASE + wg;
    const bool row_major = e.d_layout.order == TESS_ORDER_ROW, per_column = e.bias_mode == TESS_BIAS_COLUMNS;
    const bool gated = e.gate != TESS_GATE_NONE;
    float *sums = (float *)staging, *bias = sums + ROWS * PITCH;
    const tess_act_form act = tess_act_form_of(e.activation);
    if (pending && t == 0)
        tma_store_wait_read<0>();
    pending = false;
    named_barrier_sync(barrier, THREADS); // the buffer is free: earlier readers are done
    for (int i = t; i < Cfg::FUSED_BIAS_FLOATS; i += THREADS)
        bias[i] = tess_epilogue_bias(e, bb, m0 + i, tile.n0 + i); // the vector's element n0 + i or m0 + i
    // Rolled over the rounds, so that the arithmetic's code appears once.
#pragma unroll 1
    for (int round = 0; round < Cfg::BN / W; round++) {
        if (round > 0)
            named_barrier_sync(barrier, THREADS); // the previous round's readers are done
        for_round_pairs<Cfg>(t, round, [&](int v, int m, int n) {
            *(float2 *)&sums[m * PITCH + n] = make_float2(acc[v], acc[v + 1]);
        });
        named_barrier_sync(barrier, THREADS);
        const int nr = tile.n0 + round * W; // the round's first column (of the product)
        if constexpr (VALUES_BACK) {
            fused_round<Cfg, true>(e, sums, bias, act, t, b, m0, nr, round, tile, true, per_column);
            named_barrier_sync(barrier, THREADS); // the round's values are staged
            for_round_pairs<Cfg>(t, round, [&](int v, int m, int n) {
                const float2 q = *(const float2 *)&sums[m * PITCH + n];
                acc[v] = q.x, acc[v + 1] = q.y;
            });
        } else if (Cfg::GATES && gated) {
            fused_round_gated<Cfg>(e, sums, bias, act, t, b, m0, nr, round, tile, row_major, per_column);
        } else {
            fused_round<Cfg>(e, sums, bias, act, t, b, m0, nr, round, tile, row_major, per_column);
        }
    }
}

// An FP8 D's values staged and stored by TMA (row-major D that TMA can
// store, and a tile whose rows TMA may write: dense, or within its group):
// rounds of Cfg::FP8_ROUND_COLS columns, each pair of a row's values times
// its multiplier (mult(v): the row's and block's for value pair v, v + 1)
// converted at once and stored as 2 bytes into the 64-byte-swizzled
// sub-tiles (tess_epi_fp8_offset), then one thread's TMA stores, as the
// 16-bit rounds. Values outside the matrix are written to the staging but
// TMA clips them.
template <class Cfg, class Mult>
TESS_DEVICE void epilogue_stage_fp8(const tess_gemm_params &p, const float (&acc)[Cfg::BN / 2], char *staging, int wg,
                                    int t, int b, int m0, int n0, bool &pending, tess_dtype q_type, Mult mult) {
    constexpr int COLS = Cfg::FP8_ROUND_COLS;
    static_assert(Cfg::BN % COLS == 0 && COLS % TESS_EPI_SUBTILE == 0, "whole 64-column sub-tiles a round");
    static_assert(COLS * 64 <= Cfg::EPI_WG_BYTES, "a round's FP8 sub-tiles (64 rows of COLS bytes) fit the staging");
    const int barrier = TESS_EPI_BARRIER_BASE + wg;
    const uint32_t base = smem_u32(staging);
#pragma unroll
    for (int round = 0; round < Cfg::BN / COLS; round++) {
        wait_staging_free(pending, t, barrier);
#pragma unroll
        for (int i = 0; i < COLS / 4; i++) { // the thread's value pairs in the round: COLS / 8 columns x 2 rows
            const int v = round * (COLS / 2) + 2 * i;
            int m, n;
            tess_wgmma_acc_coord(t, v, &m, &n);
            const float k = mult(v);
            st_shared_u16(base + tess_epi_fp8_offset(m, n - round * COLS), fp8x2_code(q_type, acc[v] * k, acc[v + 1] * k));
        }
        // (m_end, n_end and the copy path are a 16-bit D's: a staged FP8 D is always stored by TMA)
        store_round<COLS, 1>(p, staging, t, b, m0, m0 + 64, n0 + round * COLS, p.n, true, false, barrier);
        pending = true;
    }
}

// An FP8 D's fused values in place, inline (block_values: alpha * sum, a
// per-column bias or none, the activation; no C, no residual), 0 outside
// the matrix so that they count in no maximum. bb: the bias batch.
template <class Cfg>
TESS_DEVICE void fp8_values_inline(const tess_epilogue &e, float (&acc)[Cfg::BN / 2], int t, const tile_coord &tile,
                                   int m0, int bb) {
    const tess_act_form act = tess_act_form_of(e.activation);
    int m_first, n_first; // the thread's first row and column of the tile
    tess_wgmma_acc_coord(t, 0, &m_first, &n_first);
    const tess_bias_reader bias = tess_column_bias_reader(e, bb, tile.n0 + n_first);
#pragma unroll
    for (int jj = 0; jj < Cfg::BN / 16; jj++) {
        uint32_t bits[4];
#pragma unroll
        for (int c = 0; c < 4; c++)
            bits[c] = tess_bias_load(bias, pair_column(jj, c));
        float x[8];
        block_values<Cfg, false, true, false, TESS_SHAPE_ANY>(e, acc, jj, t, tile.d_batch, m0, tile.n0, bias, bits,
                                                              act, residual_rows{}, x);
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int v = 8 * jj + i;
            int m, n;
            tess_wgmma_acc_coord(t, v, &m, &n);
            acc[v] = m0 + m < tile.m_end && tile.n0 + n < tile.n_end ? x[i] : 0.0f;
        }
    }
}

// An FP8 D (tess_epilogue.d_fp8). First each accumulator becomes its
// float32 value v in place, 0 outside the matrix so that it counts in no
// maximum: alpha alone inline; the fused steps inline where they can
// (fp8_values_inline: dense kernels, no C, no per-row bias, no residual), else staged
// (epilogue_fused's VALUES_BACK) in kernels with a staging buffer, else by
// a call per value (register_value: a few columns a thread). Then, per tensor, D =
// fp8(v * d_scale) and max |v| into d_amax (each warp's by one atomicMax on
// the bits: non-negative floats order like their bits; NaN ignored by
// fmaxf); or per row and 128 columns (BN a multiple of 128, a warpgroup's
// rows whole in the tile: 1x128 blocks lie inside one quad of lanes'
// registers), the block's factor f from its max |v| (factor_for, as
// tess_quantize_fp8), D = fp8(v * (1 / f)), and f written by the quad's
// first lane. D is staged and stored by TMA where it can
// (epilogue_stage_fp8), else from registers, two bytes at a time where
// aligned. bb: the bias batch.
template <class Cfg>
TESS_DEVICE void epilogue_store_fp8(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg, int t,
                                    const tile_coord &tile, int m0, bool &pending) {
    const tess_epilogue &e = p.epi;
    const int b = tile.d_batch, bb = Cfg::GROUPED ? tile.group : b, m_end = tile.m_end, n0 = tile.n0,
              n_end = tile.n_end;
    const tess_dtype q_type = e.d_layout.dtype == TESS_DTYPE_E4M3 ? TESS_DTYPE_E4M3 : TESS_DTYPE_E5M2;
    if (Cfg::FUSES_FP8 && (e.fused || e.beta != 0.0f)) { // (the planners' rule: kernel_table.h fp8_out)
        if constexpr (Cfg::FUSES_FP8 && Cfg::FUSED_COLS > 0) {
            // The inline form in dense kernels only: in the grouped ones its code alone made the
            // 16-bit Y of the contiguous cases 2.5% slower (dev/results/fp8-ab-h100/fp8-d-code/).
            // The staged form leaves `pending` set: every thread's values must be read back from
            // the staging buffer before epilogue_stage_fp8 writes codes over them.
            if constexpr (!Cfg::GROUPED) {
                if (e.beta == 0.0f && e.bias_mode != TESS_BIAS_ROWS && !e.residual) {
                    fp8_values_inline<Cfg>(e, acc, t, tile, m0, bb);
                } else {
                    epilogue_fused<Cfg, true>(p, acc, staging, wg, t, tile, m0, pending);
                    pending = true;
                }
            } else {
                epilogue_fused<Cfg, true>(p, acc, staging, wg, t, tile, m0, pending);
                pending = true;
            }
        } else if constexpr (Cfg::FUSES_FP8) {
#pragma unroll
            for (int v = 0; v < Cfg::BN / 2; v++) {
                int m, n;
                tess_wgmma_acc_coord(t, v, &m, &n);
                m += m0, n += n0;
                acc[v] = m < m_end && n < n_end ? register_value<Cfg, false, true>(e, acc[v], b, bb, m, n) : 0.0f;
            }
        }
    } else {
#pragma unroll
        for (int v = 0; v < Cfg::BN / 2; v++) {
            int m, n;
            tess_wgmma_acc_coord(t, v, &m, &n);
            acc[v] = m0 + m < m_end && n0 + n < n_end ? e.alpha * acc[v] : 0.0f;
        }
    }
    // The multipliers: per row (m, m + 8 of the thread) and 128-column block, or the tensor's scale in each.
    constexpr bool BLOCKS_FIT = Cfg::BN % TESS_SCALE_BLOCK == 0 && !Cfg::GROUPED_ALONG_N;
    constexpr int BLOCKS = BLOCKS_FIT ? Cfg::BN / TESS_SCALE_BLOCK : 1, PER_BLOCK = TESS_SCALE_BLOCK / 2;
    float k[2][BLOCKS];
    if (BLOCKS_FIT && e.d_fp8 == TESS_EPI_FP8_BLOCK) {
        // a thread's values per block of columns: 2 rows x TESS_SCALE_BLOCK / 4 (a quad's share)
        float f[2][BLOCKS];
#pragma unroll
        for (int jb = 0; jb < BLOCKS; jb++) {
            float mx[2] = {0.0f, 0.0f}; // rows m and m + 8 of the thread (value v's row: (v / 2) % 2)
#pragma unroll
            for (int i = 0; i < PER_BLOCK; i++)
                mx[(i / 2) % 2] = fmaxf(mx[(i / 2) % 2], fabsf(acc[jb * PER_BLOCK + i]));
#pragma unroll
            for (int h = 0; h < 2; h++) {
                // the quad's four lanes hold the row's 128 columns
                f[h][jb] = factor_for(lanes_max<4>(mx[h]), q_type);
                k[h][jb] = __frcp_rn(f[h][jb]);
            }
        }
        int m_first, n_first;
        tess_wgmma_acc_coord(t, 0, &m_first, &n_first);
        if (t % 4 == 0) {
#pragma unroll
            for (int jb = 0; jb < BLOCKS; jb++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int m = m0 + m_first + 8 * h, n = n0 + TESS_SCALE_BLOCK * jb; // rows m, m + 8
                    if (m < m_end && n < n_end)
                        e.d_scale_out[tess_scale_offset(&e.d_scale_layout, b, m, n / TESS_SCALE_BLOCK)] = f[h][jb];
                }
        }
    } else {
        const float scale = e.d_scale ? *e.d_scale : 1.0f;
#pragma unroll
        for (int jb = 0; jb < BLOCKS; jb++)
            k[0][jb] = k[1][jb] = scale;
        if (e.d_amax) {
            float mx = 0.0f;
#pragma unroll
            for (int v = 0; v < Cfg::BN / 2; v++)
                mx = fmaxf(mx, fabsf(acc[v]));
            mx = warp_max(mx);
            if (t % 32 == 0)
                atomicMax((unsigned int *)e.d_amax, __float_as_uint(mx));
        }
    }
    // Value pair v, v + 1's multiplier (v even: both in one row and block).
    const auto mult = [&](int v) { return k[(v / 2) % 2][BLOCKS_FIT ? v / PER_BLOCK : 0]; };
    const bool row_major = e.d_layout.order == TESS_ORDER_ROW;
    if constexpr (!Cfg::STORES_FROM_REGISTERS) {
        if (!p.d_direct && (!Cfg::GROUPED || m0 + 64 <= m_end)) { // (d_direct is 0 only for a row-major FP8 D)
            epilogue_stage_fp8<Cfg>(p, acc, staging, wg, t, b, m0, n0, pending, q_type, mult);
            return;
        }
    }
    const int64_t ld = e.d_layout.ld, row_step = row_major ? ld : 1, col_step = row_major ? 1 : ld;
    uint8_t *d = (uint8_t *)e.d + (int64_t)b * e.d_layout.batch_stride;
#pragma unroll
    for (int v = 0; v < Cfg::BN / 2; v += 2) { // columns n, n + 1 of one row
        int m, n;
        tess_wgmma_acc_coord(t, v, &m, &n);
        m += m0, n += n0;
        if (m >= m_end || n >= n_end)
            continue;
        uint8_t *at = d + m * row_step + n * col_step;
        const float kv = mult(v);
        if (row_major && n + 1 < n_end && (uintptr_t)at % 2 == 0) {
            *(uint16_t *)at = (uint16_t)fp8x2_code(q_type, acc[v] * kv, acc[v + 1] * kv);
        } else {
            *at = fp8_code(q_type, acc[v] * kv);
            if (n + 1 < n_end)
                at[col_step] = fp8_code(q_type, acc[v + 1] * kv);
        }
    }
}

// The epilogue of one warpgroup's part of tile `tile` (its rows from m0):
// the store path and whether C is read are decided once per tile, so each
// unrolled variant is straight-line code. Fused steps take their own path:
// staged (epilogue_fused), or from registers with one call per element in
// kernels without a staging buffer (a few columns a thread).
template <class Cfg>
TESS_DEVICE void epilogue(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg, int t,
                          const tile_coord &tile, int m0, bool &pending) {
    const bool with_c = p.epi.beta != 0.0f;
    const int b = tile.d_batch, m_end = tile.m_end, n0 = tile.n0, n_end = tile.n_end;
    if constexpr (Cfg::WRITES_FP8) {
        if (p.epi.d_fp8 != TESS_EPI_FP8_NONE) {
            epilogue_store_fp8<Cfg>(p, acc, staging, wg, t, tile, m0, pending);
            return;
        }
    }
    if (p.epi.fused) {
        if constexpr (!Cfg::FUSES_FROM_REGISTERS) {
            // A 16-bit D stored by TMA, without C, a per-row bias or a gate: inline in
            // the stores, with a residual where they can read it (residual_inline), or
            // with aux where TMA stores it too (aux_by_tma, no residual).
            if (!p.d_direct && !with_c && p.epi.bias_mode != TESS_BIAS_ROWS && p.epi.gate == TESS_GATE_NONE) {
                if (!p.epi.aux && !p.epi.residual) {
                    epilogue_store16_fused<Cfg, false>(p, acc, staging, wg, t, b, m0, m_end, n0, pending,
                                                       Cfg::GROUPED ? tile.group : b);
                    return;
                }
                if constexpr (!Cfg::GROUPED && Cfg::RESIDUAL_INLINE) {
                    if (!p.epi.aux && residual_inline<Cfg>(p.epi, b, m0, n0)) {
                        epilogue_store16_fused<Cfg, true>(p, acc, staging, wg, t, b, m0, m_end, n0, pending, b);
                        return;
                    }
                }
                if constexpr (STORES_AUX_INLINE<Cfg>) {
                    if (p.epi.aux && p.aux_by_tma && !p.epi.residual) {
                        epilogue_store16_fused<Cfg, false, true>(p, acc, staging, wg, t, b, m0, m_end, n0, pending, b);
                        return;
                    }
                }
            }
        }
        if constexpr (Cfg::GATED_OUT_COLS > 0) {
            // A gated 16-bit D stored by TMA, with a per-column bias or none and no residual: inline.
            if (p.epi.gate != TESS_GATE_NONE && !p.d_direct && p.epi.bias_mode != TESS_BIAS_ROWS && !p.epi.residual) {
                epilogue_store16_gated_for<Cfg>(p, acc, staging, wg, t, b, m0, m_end, n0, pending,
                                                Cfg::GROUPED ? tile.group : b);
                return;
            }
        }
        if constexpr (Cfg::FUSED_COLS > 0) {
            epilogue_fused<Cfg>(p, acc, staging, wg, t, tile, m0, pending);
        } else if (p.epi.gate != TESS_GATE_NONE) {
            const int bb = Cfg::GROUPED ? tile.group : b;
            if (p.epi.d_layout.dtype == TESS_DTYPE_F32)
                epilogue_store_gated<Cfg, float>(p, acc, t, b, m0, m_end, n0, n_end, bb);
            else
                epilogue_store_gated<Cfg, uint16_t>(p, acc, t, b, m0, m_end, n0, n_end, bb);
        } else {
            const int bb = Cfg::GROUPED ? tile.group : b;
            if (p.epi.d_layout.dtype == TESS_DTYPE_F32)
                epilogue_store_registers<Cfg, float, false, true>(p, acc, t, b, m0, m_end, n0, n_end, bb);
            else
                epilogue_store_registers<Cfg, uint16_t, false, true>(p, acc, t, b, m0, m_end, n0, n_end, bb);
        }
        return;
    }
    if (Cfg::STORES_FROM_REGISTERS || p.d_direct) {
        // D is f32, bf16 or f16 (the API's rule)
        if (with_c)
            epilogue_store_registers<Cfg, float, true>(p, acc, t, b, m0, m_end, n0, n_end);
        else if (p.epi.d_layout.dtype == TESS_DTYPE_F32)
            epilogue_store_registers<Cfg, float, false>(p, acc, t, b, m0, m_end, n0, n_end);
        else
            epilogue_store_registers<Cfg, uint16_t, false>(p, acc, t, b, m0, m_end, n0, n_end);
    } else if constexpr (!Cfg::STORES_FROM_REGISTERS) {
        if (with_c)
            epilogue_store16<Cfg, true>(p, acc, staging, wg, t, b, m0, m_end, n0, pending);
        else
            epilogue_store16<Cfg, false>(p, acc, staging, wg, t, b, m0, m_end, n0, pending);
    }
}
