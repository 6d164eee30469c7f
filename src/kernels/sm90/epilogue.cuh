// The epilogue of the sm90 GEMM: D = alpha * acc + beta * C, from one
// consumer warpgroup's 64 x BN accumulators. 16-bit D goes through shared
// memory (stmatrix into 128-byte-swizzled 64 x 64 sub-tiles, then TMA stores,
// which clip at the matrix edges at 16-byte granularity); other D is written
// from registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/matrix.h"
#include "kernels/common/fragment.h"
#include "kernels/common/ptx.cuh"
#include "kernels/sm90/gemm_cfg.cuh"
#include "kernels/sm90/gemm_params.h"
#include "ref/convert.h"

// C at (m, n) (0 outside the matrix), in any type and order. Not inlined: the
// epilogue's hot loop stays compact, and this path only runs when beta != 0.
static __device__ __noinline__ float epi_load_c(const tess_gemm_params &p, int b, int m, int n) {
    if (m >= p.m || n >= p.n)
        return 0.0f;
    return tess_load_as_f32(p.c_layout.dtype, p.c, tess_matrix_offset(&p.c_layout, b, m, n));
}

// alpha * acc, plus beta * C when the epilogue was instantiated WITH_C.
template <bool WITH_C>
TESS_DEVICE float epi_value(const tess_gemm_params &p, float acc, int b, int m, int n) {
    float v = p.alpha * acc;
    if (WITH_C)
        v += p.beta * epi_load_c(p, b, m, n);
    return v;
}

// Stores one D element in any type and order (not inlined, as epi_load_c).
static __device__ __noinline__ void epi_store_element(const tess_gemm_params &p, int b, int m, int n, float v) {
    tess_store_from_f32(p.d_layout.dtype, p.d, tess_matrix_offset(&p.d_layout, b, m, n), v);
}

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
                *(uint4 *)((char *)p.d + ELEM_BYTES * tess_matrix_offset(&p.d_layout, b, m0 + row, col)) = v;
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
    const bool col_major = p.d_layout.order == TESS_ORDER_COL, bf16 = p.d_layout.dtype == TESS_DTYPE_BF16;
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
                float x0 = epi_value<WITH_C>(p, acc[v], b, m0 + m, n0 + n);
                float x1 = epi_value<WITH_C>(p, acc[v + 1], b, m0 + m, n0 + n + 1);
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

// D of any type stored straight from registers, element by element inside
// rows [.., m_end) and columns [.., n_end) (the matrix, or a group's part
// of it): f32 D, 16-bit D that TMA cannot store exactly, and token tiles.
// The general form: any D type, and C (epi_store_element, epi_load_c).
template <class Cfg, bool WITH_C>
TESS_DEVICE void epilogue_store_direct(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], int t, int b, int m0,
                                       int m_end, int n0, int n_end) {
#pragma unroll
    for (int v = 0; v < Cfg::BN / 2; v++) {
        int m, n;
        tess_wgmma_acc_coord(t, v, &m, &n);
        m += m0, n += n0;
        if (m < m_end && n < n_end)
            epi_store_element(p, b, m, n, epi_value<WITH_C>(p, acc[v], b, m, n));
    }
}

// The same without C, for f32 (T = float) or 16-bit D (T = uint16_t; bf16
// or f16): D's layout is read once and each element is one inline store.
// A decode GEMM's token tiles store this way, and the general form's calls
// (each re-reading D's layout from the parameters through a generic
// pointer, then switching on its type) cost ~1.7 us per 128 x 16 tile
// (bench/NOTES.md, session 16), a tenth of the whole GEMM. The row and
// column steps are tess_matrix_offset's, taken once: calling it per element
// spills 8 bytes in the FP8 128x256 three-stage kernels (f32 D).
template <class Cfg, class T>
TESS_DEVICE void epilogue_store_direct_as(const tess_gemm_params &p, const float (&acc)[Cfg::BN / 2], int t, int b,
                                          int m0, int m_end, int n0, int n_end) {
    const bool row_major = p.d_layout.order == TESS_ORDER_ROW, bf16 = p.d_layout.dtype == TESS_DTYPE_BF16;
    const int64_t ld = p.d_layout.ld, row_step = row_major ? ld : 1, col_step = row_major ? 1 : ld;
    T *d = (T *)p.d + (int64_t)b * p.d_layout.batch_stride;
    const float alpha = p.alpha;
#pragma unroll
    for (int v = 0; v < Cfg::BN / 2; v++) {
        int m, n;
        tess_wgmma_acc_coord(t, v, &m, &n);
        m += m0, n += n0;
        if (m < m_end && n < n_end) {
            const float x = alpha * acc[v];
            T *at = d + m * row_step + n * col_step;
            if constexpr (sizeof(T) == 4)
                *at = x;
            else
                *at = bf16 ? tess_f32_to_bf16(x) : tess_f32_to_f16(x);
        }
    }
}

// The epilogue of one warpgroup's part of tile `tile` (its rows from m0):
// the store path and whether C is read are decided once per tile, so each
// unrolled variant is straight-line code.
template <class Cfg>
TESS_DEVICE void epilogue(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], char *staging, int wg, int t,
                          const tile_coord &tile, int m0, bool &pending) {
    const bool with_c = p.beta != 0.0f;
    const int b = tile.d_batch, m_end = tile.m_end, n0 = tile.n0, n_end = tile.n_end;
    if (Cfg::STORES_FROM_REGISTERS || p.d_direct) {
        const tess_dtype dt = p.d_layout.dtype;
        if (!with_c && dt == TESS_DTYPE_F32)
            epilogue_store_direct_as<Cfg, float>(p, acc, t, b, m0, m_end, n0, n_end);
        else if (!with_c && (dt == TESS_DTYPE_BF16 || dt == TESS_DTYPE_F16))
            epilogue_store_direct_as<Cfg, uint16_t>(p, acc, t, b, m0, m_end, n0, n_end);
        else if (with_c)
            epilogue_store_direct<Cfg, true>(p, acc, t, b, m0, m_end, n0, n_end);
        else
            epilogue_store_direct<Cfg, false>(p, acc, t, b, m0, m_end, n0, n_end);
    } else if constexpr (!Cfg::STORES_FROM_REGISTERS) {
        if (with_c)
            epilogue_store16<Cfg, true>(p, acc, staging, wg, t, b, m0, m_end, n0, pending);
        else
            epilogue_store16<Cfg, false>(p, acc, staging, wg, t, b, m0, m_end, n0, pending);
    }
}
