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
#include "kernels/common/epilogue.cuh"
#include "kernels/common/fragment.h"
#include "kernels/common/ptx.cuh"
#include "kernels/sm90/gemm_cfg.cuh"
#include "kernels/sm90/gemm_params.h"
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

// Copies a round's staged sub-tiles (rows m0.., columns from nc) of a
// row-major D to global memory with 16-byte stores, only rows below m_end:
// for a grouped GEMM's last tile of a group, where a TMA store would write
// into the next group's rows. (D by TMA is row-major with whole 16-byte
// chunks per row, so a chunk lies wholly inside or outside the matrix.)
template <class Cfg>
TESS_DEVICE void epilogue_copy_rows(const tess_gemm_params &p, const char *staging, int t, int b, int m0, int m_end,
                                    int nc) {
    constexpr int ELEM_BYTES = 2;                                        // 16-bit D
    constexpr int ROW_CHUNKS = TESS_EPI_SUBTILE * ELEM_BYTES / 16;       // 8 per 128-byte sub-tile row
    constexpr int ROW_ELEMS = 16 / ELEM_BYTES;                           // 8 elements per chunk
    constexpr int PER_THREAD = TESS_EPI_SUBTILE * ROW_CHUNKS / 128;      // over the warpgroup's 128 threads
#pragma unroll
    for (int s = 0; s < Cfg::EPI_COLS / TESS_EPI_SUBTILE; s++) {
#pragma unroll
        for (int i = 0; i < PER_THREAD; i++) {
            const int chunk = t + 128 * i, row = chunk / ROW_CHUNKS, in_row = chunk % ROW_CHUNKS;
            const int col = nc + s * TESS_EPI_SUBTILE + in_row * ROW_ELEMS;
            if (m0 + row < m_end && col < p.n) {
                const uint4 v = *(const uint4 *)(staging + tess_epi_swizzled_offset(s, row, in_row));
                *(uint4 *)((char *)p.epi.d + ELEM_BYTES * tess_matrix_offset(&p.epi.d_layout, b, m0 + row, col)) = v;
            }
        }
    }
}

// 16-bit D, in rounds of EPI_COLS columns: stmatrix into this warpgroup's
// staging sub-tiles, then one thread's TMA stores (or every thread's copies,
// for a grouped tile whose rows end inside it: epilogue_copy_rows).
// `pending` says an earlier round may still be reading the staging buffer.
template <class Cfg, bool WITH_C>
TESS_DEVICE void epilogue_store16(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg, int t,
                                  int b, int m0, int m_end, int n0, bool &pending) {
    // TMA clips stores at D's edges, which are a dense GEMM's, not a group's.
    const bool by_tma = !Cfg::GROUPED || m0 + 64 <= m_end;
    const int warp = t / 32, lane = t % 32, barrier = TESS_EPI_BARRIER_BASE + wg;
    const bool col_major = p.epi.d_layout.order == TESS_ORDER_COL, bf16 = p.epi.d_layout.dtype == TESS_DTYPE_BF16;
    const uint32_t base = smem_u32(staging);
#pragma unroll
    for (int round = 0; round < Cfg::BN / Cfg::EPI_COLS; round++) {
        if (pending) {
            if (t == 0)
                tma_store_wait_read<0>();
            named_barrier_sync(barrier, 128);
        }
#pragma unroll
        for (int j = 0; j < Cfg::EPI_COLS / 16; j++) {
            const int jj = round * (Cfg::EPI_COLS / 16) + j; /* 16-column block of the tile */
            uint32_t r[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int v = 8 * jj + 2 * i;
                int m, n;
                tess_wgmma_acc_coord(t, v, &m, &n);
                float x0 = tess_epilogue_value<WITH_C, true>(p.epi, acc[v], b, m0 + m, n0 + n);
                float x1 = tess_epilogue_value<WITH_C, true>(p.epi, acc[v + 1], b, m0 + m, n0 + n + 1);
                r[i] = pack16(x0, x1, bf16);
            }
            const uint32_t addr = base + tess_epi_stmatrix_offset(warp, lane, j, col_major);
            if (col_major)
                stmatrix_x4_trans(addr, r[0], r[1], r[2], r[3]);
            else
                stmatrix_x4(addr, r[0], r[1], r[2], r[3]);
        }
        fence_proxy_async_smem();
        named_barrier_sync(barrier, 128);
        if (!by_tma) {
            epilogue_copy_rows<Cfg>(p, staging, t, b, m0, m_end, n0 + round * Cfg::EPI_COLS);
        } else if (t == 0) {
#pragma unroll
            for (int s = 0; s < Cfg::EPI_COLS / TESS_EPI_SUBTILE; s++) {
                const char *sub = staging + s * TESS_EPI_SUBTILE_BYTES;
                const int nc = n0 + round * Cfg::EPI_COLS + s * TESS_EPI_SUBTILE;
                if (col_major)
                    tma_store_3d(&p.tma_d, sub, m0, nc, b);
                else
                    tma_store_3d(&p.tma_d, sub, nc, m0, b);
            }
            tma_store_commit();
        }
        pending = true;
    }
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
template <class Cfg, class T, bool WITH_C>
TESS_DEVICE void epilogue_store_registers(const tess_gemm_params &p, const float (&acc)[Cfg::BN / 2], int t, int b,
                                          int m0, int m_end, int n0, int n_end) {
    const tess_epilogue &e = p.epi;
    const bool row_major = e.d_layout.order == TESS_ORDER_ROW, bf16 = e.d_layout.dtype == TESS_DTYPE_BF16;
    const int64_t ld = e.d_layout.ld, row_step = row_major ? ld : 1, col_step = row_major ? 1 : ld;
    T *d = (T *)e.d + (int64_t)b * e.d_layout.batch_stride;
#pragma unroll
    for (int v = 0; v < Cfg::BN / 2; v++) {
        int m, n;
        tess_wgmma_acc_coord(t, v, &m, &n);
        m += m0, n += n0;
        if (m < m_end && n < n_end) {
            const float x = tess_epilogue_value<WITH_C, true>(e, acc[v], b, m, n);
            if constexpr (WITH_C) {
                tess_epilogue_put_call(e, b, m, n, x);
            } else {
                T *at = d + m * row_step + n * col_step;
                if constexpr (sizeof(T) == 4)
                    *at = x;
                else
                    *at = bf16 ? tess_f32_to_bf16(x) : tess_f32_to_f16(x);
            }
        }
    }
}

// The epilogue of one warpgroup's part of tile `tile` (its rows from m0):
// the store path and whether C is read are decided once per tile, so each
// unrolled variant is straight-line code.
template <class Cfg>
TESS_DEVICE void epilogue(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg, int t,
                          const tile_coord &tile, int m0, bool &pending) {
    const bool with_c = p.epi.beta != 0.0f;
    const int b = tile.d_batch, m_end = tile.m_end, n0 = tile.n0, n_end = tile.n_end;
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
