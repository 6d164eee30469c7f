// Out-of-place matrix transpose (tess_transpose, and the K-major copies of
// FP8 GEMM operands) for 1-, 2- and 4-byte elements: each CTA moves a
// 32 x 32 tile through shared memory so that both the reads and the writes
// are row-contiguous; batches of matrices along the grid's z.
#include <cuda_runtime.h>
#include <stdint.h>

#include "core/error.h"
#include "kernels/util/util_kernels.h"

// A 32 x 32 tile by 32 x 8 threads, each thread moving 4 rows.
#define TILE 32
#define TILE_ROWS_PER_PASS 8

template <class T>
__global__ void __launch_bounds__(TILE * TILE_ROWS_PER_PASS)
    transpose_tile(int64_t batch, int64_t rows, int64_t cols, const T *src, int64_t ld_src, int64_t stride_src, T *dst,
                   int64_t ld_dst, int64_t stride_dst) {
    __shared__ T tile[TILE][TILE + 1]; // +1: the column reads fall in distinct banks (4-byte T)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t c0 = (int64_t)blockIdx.x * TILE;
    // Tile rows beyond TESS_MAX_GRID_Y, and batches beyond it, are walked by the same CTAs.
    for (int64_t z = blockIdx.z; z < batch; z += gridDim.z) {
        for (int64_t r0 = (int64_t)blockIdx.y * TILE; r0 < rows; r0 += (int64_t)gridDim.y * TILE) {
            for (int i = ty; i < TILE; i += TILE_ROWS_PER_PASS) {
                const int64_t r = r0 + i, c = c0 + tx;
                if (r < rows && c < cols)
                    tile[i][tx] = src[z * stride_src + r * ld_src + c];
            }
            __syncthreads();
            for (int i = ty; i < TILE; i += TILE_ROWS_PER_PASS) {
                const int64_t c = c0 + i, r = r0 + tx; // dst row c, column r
                if (r < rows && c < cols)
                    dst[z * stride_dst + c * ld_dst + r] = tile[tx][i];
            }
            __syncthreads();
        }
    }
}


template <class T>
static void launch(int64_t batch, int64_t rows, int64_t cols, const void *src, int64_t ld_src, int64_t stride_src,
                   void *dst, int64_t ld_dst, int64_t stride_dst, cudaStream_t s) {
    const dim3 grid((unsigned)((cols + TILE - 1) / TILE), tess_grid_rows((rows + TILE - 1) / TILE),
                    tess_grid_rows(batch));
    transpose_tile<T><<<grid, dim3(TILE, TILE_ROWS_PER_PASS), 0, s>>>(batch, rows, cols, (const T *)src, ld_src,
                                                                      stride_src, (T *)dst, ld_dst, stride_dst);
}

extern "C" tess_status tess_launch_transpose(int elem_bytes, int64_t batch, int64_t rows, int64_t cols,
                                             const void *src, int64_t ld_src, int64_t stride_src, void *dst,
                                             int64_t ld_dst, int64_t stride_dst, void *stream) {
    cudaStream_t s = (cudaStream_t)stream;
    if (elem_bytes == 1)
        launch<uint8_t>(batch, rows, cols, src, ld_src, stride_src, dst, ld_dst, stride_dst, s);
    else if (elem_bytes == 2)
        launch<uint16_t>(batch, rows, cols, src, ld_src, stride_src, dst, ld_dst, stride_dst, s);
    else
        launch<uint32_t>(batch, rows, cols, src, ld_src, stride_src, dst, ld_dst, stride_dst, s);
    return tess_cuda_status(cudaGetLastError(), "launching tess_transpose's kernel");
}
