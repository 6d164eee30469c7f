// Cast-transpose (tess_quantize_fp8_transposed): one read of x writes its
// FP8 copy (q) and the FP8 copy of x^T (qt), the two operands a training
// step's GEMMs need (Hopper's FP8 tensor cores read only K-major operands):
// with 1x128 factors each along its own rows, or with 128x128 factors, one
// per tile and shared by both copies.
//
// Each CTA owns a 128 x 128 tile of x: 128 is the scale block, so the tile
// holds every row block and every column block it quantizes. The tile is
// staged in shared memory as stored, by 16-byte cp.async copies all in
// flight at once (no registers held); pass 1 walks it by rows (a half-warp
// per row) into q; pass 2 by columns (each column's amax reduced across 8
// bands of 16 rows) into qt's rows, two lanes filling each 32-byte sector.
// A tile's life is mostly waiting on memory, so several CTAs share each SM
// for enough bytes in flight.
#include <cuda_runtime.h>
#include <stdint.h>

#include "core/error.h"
#include "core/scale.h"
#include "kernels/common/ptx.cuh"
#include "kernels/util/fp8_factor.cuh"
#include "kernels/util/util_kernels.h"
#include "ref/convert.h"

#define CT_TILE TESS_SCALE_BLOCK // rows and columns of a CTA's tile
#define CT_THREADS 256           // 8 warps
#define CT_WARPS (CT_THREADS / 32)
// CTAs per SM the registers are limited for (5: 48 registers a thread, the
// 65536 / (5 x 256) = 51 rounded down to the allocation unit of 8; the
// shared tile of 16-bit x, 39 KB, fits 5 times too).
#define CT_MIN_CTAS 5
#define CT_ROW_THREADS 16        // threads per tile row in pass 1 (a half-warp)
#define CT_VEC (CT_TILE / CT_ROW_THREADS)              // 8 elements per thread and row
#define CT_ROWS_PER_PASS (CT_THREADS / CT_ROW_THREADS) // 16 rows at a time in pass 1
#define CT_BAND (CT_TILE / CT_WARPS) // 16 rows per warp in pass 2's amaxes
#define CT_STORE_ROWS 16             // rows of a column per pass-2 store: 16 bytes of qt
#define CT_COLUMN_PAIRS 16           // columns a warp stores at once (two lanes each: 32-byte sectors)
#define CT_COPY 16                   // bytes of one cp.async
#define CT_PAD_BYTES 16              // after each shared row: 16-byte stores stay aligned, rows shift banks

// x's element type as stored (T) and its value as float32.
template <int XT> struct x_elem;
template <> struct x_elem<TESS_DTYPE_F32> {
    typedef float T;
    static __device__ __forceinline__ float value(float e) { return e; }
};
template <> struct x_elem<TESS_DTYPE_BF16> {
    typedef uint16_t T;
    static __device__ __forceinline__ float value(uint16_t e) { return tess_bf16_to_f32(e); }
};
template <> struct x_elem<TESS_DTYPE_F16> {
    typedef uint16_t T;
    static __device__ __forceinline__ float value(uint16_t e) { return tess_f16_to_f32(e); }
};

// The tile as stored in x, and each band's column amaxes.
template <class T> struct ct_shared {
    T tile[CT_TILE][CT_TILE + CT_PAD_BYTES / sizeof(T)];
    float band_amax[CT_WARPS][CT_TILE];
};

typedef struct ct_args {
    int64_t rows, cols, ld_x, ld_q, ld_qt;
    tess_dtype q_type;
    const void *x;
    uint8_t *q, *qt; // q NULL: only the transposed copy
    float *scales, *scales_t;
    int64_t scale_mn, scale_k, scale_t_mn, scale_t_k; // the two factor arrays' strides (tess_scale_desc's)
    int vector_x, vector_q, vector_qt; // the whole-vector paths are aligned (host-checked)
} ct_args;

// Stages the tile's rows (the thread's: first_row, every CT_ROWS_PER_PASS-th)
// in shared memory, 0 past the matrix: 16-byte cp.async copies where x's rows
// are 16-byte aligned, else element by element; then waits for the CTA's.
template <int XT>
static __device__ __forceinline__ void stage_tile(const ct_args &a, ct_shared<typename x_elem<XT>::T> &sh, int64_t r0,
                                                  int64_t c0, int part, int first_row) {
    typedef typename x_elem<XT>::T T;
    const int64_t c = c0 + part * CT_VEC;
    for (int tile_row = first_row; tile_row < CT_TILE; tile_row += CT_ROWS_PER_PASS) {
        const int64_t r = r0 + tile_row;
        const T *src = (const T *)a.x + r * a.ld_x + c;
        T *dst = &sh.tile[tile_row][part * CT_VEC];
        if (a.vector_x) {
            const int64_t left = r < a.rows && c < a.cols ? (a.cols - c) * (int64_t)sizeof(T) : 0;
#pragma unroll
            for (int j = 0; j < (int)(CT_VEC * sizeof(T) / CT_COPY); j++) {
                const int64_t bytes = left - j * CT_COPY;
                const uint32_t n = bytes >= CT_COPY ? CT_COPY : bytes > 0 ? (uint32_t)bytes : 0;
                cp_async_16((char *)dst + j * CT_COPY, n ? (const char *)src + j * CT_COPY : a.x, n);
            }
        } else {
            for (int j = 0; j < CT_VEC; j++)
                dst[j] = r < a.rows && c + j < a.cols ? src[j] : (T)0; // a 0 bit pattern is +0 in every type
        }
    }
    cp_async_wait_all();
    __syncthreads();
}

// The row's FP8 codes into q, scaled by 1 / f (one 8-byte store where aligned).
static __device__ __forceinline__ void store_row(const ct_args &a, int64_t r, int64_t c, const float f32[CT_VEC],
                                                 float f) {
    const float inverse = __frcp_rn(f);
    uint8_t *out = a.q + r * a.ld_q + c;
    if (a.vector_q && c + CT_VEC <= a.cols) {
        uint32_t lo = 0, hi = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            lo |= fp8_code(a.q_type, f32[j] * inverse) << (8 * j);
            hi |= fp8_code(a.q_type, f32[j + 4] * inverse) << (8 * j);
        }
        *(uint2 *)out = make_uint2(lo, hi);
        return;
    }
    for (int j = 0; j < CT_VEC && c + j < a.cols; j++)
        out[j] = (uint8_t)fp8_code(a.q_type, f32[j] * inverse);
}

// Pass 1: the thread's rows of the tile (first_row, every
// CT_ROWS_PER_PASS-th) into q, each with its 1x128 factor (the row's
// CT_ROW_THREADS threads reduce their amaxes) or, BLOCK128, the tile's
// factor tile_f (written once, for q and for qt).
template <int XT, bool BLOCK128>
static __device__ __forceinline__ void quantize_rows(const ct_args &a, ct_shared<typename x_elem<XT>::T> &sh,
                                                     int64_t r0, int64_t c0, int part, int first_row, float tile_f) {
    if (BLOCK128 && threadIdx.x == 0) {
        a.scales_t[c0 / CT_TILE * a.scale_t_mn + r0 / CT_TILE * a.scale_t_k] = tile_f;
        if (a.q)
            a.scales[r0 / CT_TILE * a.scale_mn + c0 / CT_TILE * a.scale_k] = tile_f;
    }
    if (!a.q)
        return;
    // Every row of the thread's half-warp takes part in the shuffles: the bound is checked after them.
    for (int tile_row = first_row; tile_row < CT_TILE; tile_row += CT_ROWS_PER_PASS) {
        const int64_t r = r0 + tile_row;
        float f32[CT_VEC], m = 0.0f;
#pragma unroll
        for (int j = 0; j < CT_VEC; j++) {
            f32[j] = x_elem<XT>::value(sh.tile[tile_row][part * CT_VEC + j]);
            m = fmaxf(m, fabsf(f32[j]));
        }
        float f = tile_f;
        if (!BLOCK128) {
            // The 16 threads of a row are one half-warp: lanes differing in the low 4 bits.
            m = lanes_max<CT_ROW_THREADS>(m);
            f = factor_for(m, a.q_type);
            if (part == 0 && r < a.rows)
                a.scales[r * a.scale_mn + c0 / CT_TILE * a.scale_k] = f;
        }
        if (r < a.rows)
            store_row(a, r, c0 + part * CT_VEC, f32, f);
    }
}

// Pass 2 for one column of the tile and 16 of its rows from tile row row0:
// the column's factor (from every band's amax; 128x128: the tile's, f), the
// 16 codes into qt's row (one 16-byte store where aligned). The caller pairs
// lanes so that one store instruction fills whole 32-byte sectors.
template <int XT, bool BLOCK128>
static __device__ __forceinline__ void column_pass(const ct_args &a, ct_shared<typename x_elem<XT>::T> &sh, int col,
                                                   int row0, int64_t r0, int64_t c0, float f) {
    const int64_t c = c0 + col, r = r0 + row0;
    if (c >= a.cols || r >= a.rows)
        return;
    if (!BLOCK128) {
        float m = sh.band_amax[0][col];
#pragma unroll
        for (int w = 1; w < CT_WARPS; w++)
            m = fmaxf(m, sh.band_amax[w][col]);
        f = factor_for(m, a.q_type);
        if (row0 == 0)
            a.scales_t[c * a.scale_t_mn + r0 / CT_TILE * a.scale_t_k] = f;
    }
    const float inverse = __frcp_rn(f);
    uint8_t *out = a.qt + c * a.ld_qt + r;
    if (a.vector_qt && r + CT_STORE_ROWS <= a.rows) {
        uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < CT_STORE_ROWS; i++)
            w[i / 4] |= fp8_code(a.q_type, x_elem<XT>::value(sh.tile[row0 + i][col]) * inverse) << (8 * (i % 4));
        *(uint4 *)out = make_uint4(w[0], w[1], w[2], w[3]);
        return;
    }
    for (int i = 0; i < CT_STORE_ROWS && r + i < a.rows; i++)
        out[i] = (uint8_t)fp8_code(a.q_type, x_elem<XT>::value(sh.tile[row0 + i][col]) * inverse);
}

// One CTA per 128 x 128 tile (tile rows beyond TESS_MAX_GRID_Y walked by the
// same CTAs); BLOCK128: one factor per tile (128x128), else 1x128 factors.
template <int XT, bool BLOCK128>
__global__ void __launch_bounds__(CT_THREADS, CT_MIN_CTAS) cast_transpose_tile(ct_args a) {
    typedef typename x_elem<XT>::T T;
    extern __shared__ __align__(16) unsigned char raw[];
    ct_shared<T> &sh = *(ct_shared<T> *)raw;
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int part = t % CT_ROW_THREADS, first_row = t / CT_ROW_THREADS;
    const int64_t c0 = (int64_t)blockIdx.x * CT_TILE;
    for (int64_t r0 = (int64_t)blockIdx.y * CT_TILE; r0 < a.rows; r0 += (int64_t)gridDim.y * CT_TILE) {
        stage_tile<XT>(a, sh, r0, c0, part, first_row);
        if (!BLOCK128)
            quantize_rows<XT, false>(a, sh, r0, c0, part, first_row, 1.0f);
#pragma unroll
        for (int col = lane; col < CT_TILE; col += 32) {
            float m = 0.0f;
#pragma unroll
            for (int i = 0; i < CT_BAND; i++)
                m = fmaxf(m, fabsf(x_elem<XT>::value(sh.tile[warp * CT_BAND + i][col])));
            sh.band_amax[warp][col] = m;
        }
        __syncthreads();
        float f = 1.0f;
        if (BLOCK128) { // the tile's factor: every warp reduces all of band_amax (no further barrier)
            float m = 0.0f;
            for (int i = lane; i < CT_WARPS * CT_TILE; i += 32)
                m = fmaxf(m, sh.band_amax[i / CT_TILE][i % CT_TILE]);
            f = factor_for(warp_max(m), a.q_type);
            quantize_rows<XT, true>(a, sh, r0, c0, part, first_row, f);
        }
        // Pass 2's stores: warp w writes rows 32 (w % 4) .. + 31 of 64 columns from 64 (w / 4), lanes 2i
        // and 2i + 1 the two 16-row halves of one column: 16 whole sectors of qt per instruction.
#pragma unroll
        for (int pass = 0; pass < CT_TILE / 2 / CT_COLUMN_PAIRS; pass++) {
            const int col = warp / 4 * (CT_TILE / 2) + pass * CT_COLUMN_PAIRS + lane / 2;
            column_pass<XT, BLOCK128>(a, sh, col, warp % 4 * 2 * CT_STORE_ROWS + lane % 2 * CT_STORE_ROWS, r0, c0, f);
        }
        __syncthreads(); // the tile is reused by the next row of tiles
    }
}

template <int XT, bool BLOCK128> static tess_status launch(const ct_args &a, cudaStream_t s) {
    const size_t smem = sizeof(ct_shared<typename x_elem<XT>::T>);
    cudaError_t e = cudaFuncSetAttribute(cast_transpose_tile<XT, BLOCK128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    if (e != cudaSuccess)
        return tess_cuda_status(e, "allocating tess_quantize_fp8_transposed's shared memory");
    const dim3 grid((unsigned)((a.cols + CT_TILE - 1) / CT_TILE), tess_grid_rows((a.rows + CT_TILE - 1) / CT_TILE));
    cast_transpose_tile<XT, BLOCK128><<<grid, CT_THREADS, smem, s>>>(a);
    return tess_cuda_status(cudaGetLastError(), "launching tess_quantize_fp8_transposed's kernel");
}

template <int XT> static tess_status launch_mode(const ct_args &a, int block128, cudaStream_t s) {
    return block128 ? launch<XT, true>(a, s) : launch<XT, false>(a, s);
}

// Whether p + row * ld_bytes is `align`-byte aligned for every row.
static int rows_aligned(const void *p, int64_t ld_bytes, int align) {
    return (uintptr_t)p % align == 0 && ld_bytes % align == 0;
}

extern "C" tess_status tess_launch_cast_transpose(int64_t rows, int64_t cols, tess_dtype x_type, const void *x,
                                                  int64_t ld_x, tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                                  const tess_scale_desc *layout, void *qt, int64_t ld_qt,
                                                  float *scales_t, const tess_scale_desc *layout_t, void *stream) {
    ct_args a;
    a.rows = rows, a.cols = cols, a.ld_x = ld_x, a.ld_q = ld_q, a.ld_qt = ld_qt;
    a.q_type = q_type, a.x = x, a.q = (uint8_t *)q, a.qt = (uint8_t *)qt;
    a.scales = scales, a.scales_t = scales_t;
    a.scale_mn = layout ? layout->stride_mn : 0, a.scale_k = layout ? layout->stride_k : 0;
    a.scale_t_mn = layout_t->stride_mn, a.scale_t_k = layout_t->stride_k;
    const int x_bytes = (int)tess_dtype_size(x_type);
    a.vector_x = rows_aligned(x, ld_x * x_bytes, 16);
    a.vector_q = q && rows_aligned(q, ld_q, 8);
    a.vector_qt = rows_aligned(qt, ld_qt, 16);
    cudaStream_t s = (cudaStream_t)stream;
    const int block128 = layout_t->mode == TESS_SCALE_BLOCK_128x128;
    if (x_type == TESS_DTYPE_F32)
        return launch_mode<TESS_DTYPE_F32>(a, block128, s);
    if (x_type == TESS_DTYPE_BF16)
        return launch_mode<TESS_DTYPE_BF16>(a, block128, s);
    return launch_mode<TESS_DTYPE_F16>(a, block128, s);
}
