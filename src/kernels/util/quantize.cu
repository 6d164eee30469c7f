// FP8 quantization kernels: per-tensor, 1x128 and 128x128 dequantization
// factors (tess_quantize_fp8). Each CTA covers a 128 x 128 tile of x: the
// largest scale block, so one CTA finds a 128x128 block's amax by itself.
#include <cuda_runtime.h>
#include <math.h>

#include "core/error.h"
#include "core/scale.h"
#include "kernels/util/fp8_factor.cuh"
#include "kernels/util/util_kernels.h"
#include "ref/convert.h"

// 4 warps per CTA, each walking every 4th row of the tile; a lane reads
// columns lane, lane + 32, lane + 64, lane + 96 of a row (coalesced).
#define QUANT_THREADS 128
#define QUANT_WARPS (QUANT_THREADS / 32)
#define QUANT_PER_LANE (TESS_SCALE_BLOCK / 32)

typedef struct quant_args {
    int64_t rows, cols, ld_x, ld_q;
    tess_dtype x_type, q_type;
    const void *x;
    void *q;
    float *scales;
    tess_scale_desc layout;
} quant_args;

// Largest |x| in the lane's elements of row r (columns c0 + lane + 32 j).
static __device__ float lane_amax(const quant_args &a, int64_t r, int64_t c0, int lane) {
    float m = 0.0f;
#pragma unroll
    for (int j = 0; j < QUANT_PER_LANE; j++) {
        const int64_t c = c0 + lane + 32 * j;
        if (c < a.cols)
            m = fmaxf(m, fabsf(tess_load_as_f32(a.x_type, a.x, r * a.ld_x + c)));
    }
    return m;
}

// Writes the lane's elements of row r, times 1 / `factor`, into q.
static __device__ void quantize_row(const quant_args &a, int64_t r, int64_t c0, int lane, float factor) {
    const float inverse = __frcp_rn(factor);
#pragma unroll
    for (int j = 0; j < QUANT_PER_LANE; j++) {
        const int64_t c = c0 + lane + 32 * j;
        if (c < a.cols)
            tess_store_from_f32(a.q_type, a.q, r * a.ld_q + c, tess_load_as_f32(a.x_type, a.x, r * a.ld_x + c) * inverse);
    }
}

// Per-tensor pass 1: the tensor's amax into scales[0] (zeroed before), by
// atomicMax on the bits (non-negative floats order like their bits).
__global__ void __launch_bounds__(QUANT_THREADS) quant_tensor_amax(quant_args a) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t c0 = (int64_t)blockIdx.x * TESS_SCALE_BLOCK;
    float m = 0.0f;
    for (int64_t r0 = (int64_t)blockIdx.y * TESS_SCALE_BLOCK; r0 < a.rows; r0 += (int64_t)gridDim.y * TESS_SCALE_BLOCK)
        for (int64_t r = r0 + warp; r < r0 + TESS_SCALE_BLOCK && r < a.rows; r += QUANT_WARPS)
            m = fmaxf(m, lane_amax(a, r, c0, lane));
    m = warp_max(m);
    if (lane == 0)
        atomicMax((unsigned int *)a.scales, __float_as_uint(m));
}

// Per-row (OUTER_VEC) pass 1: one warp per row reduces the row's amax over
// all its columns and writes the row's factor.
__global__ void __launch_bounds__(QUANT_THREADS) quant_row_factors(quant_args a) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int64_t r = (int64_t)blockIdx.x * QUANT_WARPS + warp; r < a.rows; r += (int64_t)gridDim.x * QUANT_WARPS) {
        float m = 0.0f;
        for (int64_t c = lane; c < a.cols; c += 32)
            m = fmaxf(m, fabsf(tess_load_as_f32(a.x_type, a.x, r * a.ld_x + c)));
        m = warp_max(m);
        if (lane == 0)
            a.scales[tess_scale_offset(&a.layout, 0, r, 0)] = factor_for(m, a.q_type);
    }
}

// Per-tensor pass 3: turns the amax in scales[0] into the factor.
__global__ void quant_tensor_finish(float *scales, tess_dtype q_type) { scales[0] = factor_for(scales[0], q_type); }

// Quantizes one 128 x 128 tile. 1x128: each row's factor from its own amax;
// 128x128: one factor from the tile's amax; TENSOR: the factor from the
// amax in scales[0] (pass 2); OUTER_VEC: each row's factor from pass 1.
static __device__ __forceinline__ void quant_one_tile(const quant_args &a, int64_t r0, float *warp_amax);

// Tile rows beyond TESS_MAX_GRID_Y are walked by the same CTAs.
__global__ void __launch_bounds__(QUANT_THREADS) quant_tile(quant_args a) {
    __shared__ float warp_amax[QUANT_WARPS];
    for (int64_t r0 = (int64_t)blockIdx.y * TESS_SCALE_BLOCK; r0 < a.rows; r0 += (int64_t)gridDim.y * TESS_SCALE_BLOCK) {
        quant_one_tile(a, r0, warp_amax);
        __syncthreads(); // warp_amax is reused by the next tile
    }
}

static __device__ __forceinline__ void quant_one_tile(const quant_args &a, int64_t r0, float *warp_amax) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t c0 = (int64_t)blockIdx.x * TESS_SCALE_BLOCK;
    const int64_t r_end = r0 + TESS_SCALE_BLOCK < a.rows ? r0 + TESS_SCALE_BLOCK : a.rows;
    const int64_t kb = blockIdx.x;
    if (a.layout.mode == TESS_SCALE_BLOCK_1x128) {
        for (int64_t r = r0 + warp; r < r_end; r += QUANT_WARPS) {
            const float f = factor_for(warp_max(lane_amax(a, r, c0, lane)), a.q_type);
            if (lane == 0)
                a.scales[tess_scale_offset(&a.layout, 0, r, kb)] = f;
            quantize_row(a, r, c0, lane, f);
        }
        return;
    }
    if (a.layout.mode == TESS_SCALE_OUTER_VEC) {
        for (int64_t r = r0 + warp; r < r_end; r += QUANT_WARPS)
            quantize_row(a, r, c0, lane, a.scales[tess_scale_offset(&a.layout, 0, r, 0)]);
        return;
    }
    float f;
    if (a.layout.mode == TESS_SCALE_BLOCK_128x128) {
        float m = 0.0f;
        for (int64_t r = r0 + warp; r < r_end; r += QUANT_WARPS)
            m = fmaxf(m, lane_amax(a, r, c0, lane));
        m = warp_max(m);
        if (lane == 0)
            warp_amax[warp] = m;
        __syncthreads();
        m = warp_amax[0];
        for (int w = 1; w < QUANT_WARPS; w++)
            m = fmaxf(m, warp_amax[w]);
        f = factor_for(m, a.q_type);
        if (threadIdx.x == 0)
            a.scales[tess_scale_offset(&a.layout, 0, r0, kb)] = f;
    } else {
        f = factor_for(a.scales[0], a.q_type);
    }
    for (int64_t r = r0 + warp; r < r_end; r += QUANT_WARPS)
        quantize_row(a, r, c0, lane, f);
}

extern "C" tess_status tess_launch_quantize_fp8(int64_t rows, int64_t cols, tess_dtype x_type, const void *x,
                                                int64_t ld_x, tess_dtype q_type, void *q, int64_t ld_q, float *scales,
                                                const tess_scale_desc *layout, void *stream) {
    quant_args a = {rows, cols, ld_x, ld_q, x_type, q_type, x, q, scales, *layout};
    cudaStream_t s = (cudaStream_t)stream;
    const dim3 grid((unsigned)((cols + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK),
                    tess_grid_rows((rows + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK));
    if (layout->mode == TESS_SCALE_TENSOR) {
        cudaError_t e = cudaMemsetAsync(scales, 0, sizeof(float), s);
        if (e != cudaSuccess)
            return tess_cuda_status(e, "clearing the amax of tess_quantize_fp8");
        quant_tensor_amax<<<grid, QUANT_THREADS, 0, s>>>(a);
    }
    if (layout->mode == TESS_SCALE_OUTER_VEC)
        quant_row_factors<<<tess_grid_rows((rows + QUANT_WARPS - 1) / QUANT_WARPS), QUANT_THREADS, 0, s>>>(a);
    quant_tile<<<grid, QUANT_THREADS, 0, s>>>(a);
    if (layout->mode == TESS_SCALE_TENSOR)
        quant_tensor_finish<<<1, 1, 0, s>>>(scales, q_type);
    return tess_cuda_status(cudaGetLastError(), "launching tess_quantize_fp8's kernels");
}
