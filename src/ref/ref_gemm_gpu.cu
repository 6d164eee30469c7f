// The GPU reference GEMM: a plain shared-memory tiled kernel with float32
// accumulation, for checking kernels on shapes too large for the CPU. It reads
// every dtype, layout and scale recipe through the same element accessors and
// scale lookup as the CPU reference, and is itself tested against it.
#include <cuda_runtime.h>

#include "core/error.h"
#include "core/matrix.h"
#include "ref/convert.h"
#include "ref/ref_gemm.h"

// Each block computes a 64 x 64 tile of D with 16 x 16 threads, 4 x 4 outputs
// per thread, stepping K by 16. Sizes chosen for simplicity, not speed.
#define REF_TILE 64
#define REF_TILE_K 16
#define REF_SIDE 16
#define REF_PER_THREAD (REF_TILE / REF_SIDE)
// Grid y and z are limited to 65535 blocks by CUDA.
#define REF_GRID_YZ_MAX 65535

// The fused epilogue's float64 steps for one element, called with the
// epilogue and bias by value: inlined into the unrolled stores, the double
// arithmetic spills the kernel's registers, and a call taking the problem by
// reference would copy the whole kernel parameter to every thread's stack.
static __device__ __noinline__ float ref_epilogue(tess_epilogue_desc e, const void *bias, float v, int64_t b, int64_t m,
                                                  int64_t n) {
    return (float)tess_ref_epilogue_of(e, bias, v, b, m, n);
}

__global__ void __launch_bounds__(REF_SIDE *REF_SIDE) ref_gemm_kernel(tess_ref_gemm p, void *d) {
    __shared__ float a_tile[REF_TILE_K][REF_TILE];
    __shared__ float b_tile[REF_TILE_K][REF_TILE];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * REF_SIDE + tx;
    const int64_t m0 = (int64_t)blockIdx.y * REF_TILE, n0 = (int64_t)blockIdx.x * REF_TILE;
    const float alpha = (float)p.alpha, beta = (float)p.beta;

    for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z) {
        float acc[REF_PER_THREAD][REF_PER_THREAD] = {};
        for (int64_t k0 = 0; k0 < p.k; k0 += REF_TILE_K) {
            for (int e = tid; e < REF_TILE * REF_TILE_K; e += REF_SIDE * REF_SIDE) {
                int r = e / REF_TILE_K, kk = e % REF_TILE_K;
                int64_t k = k0 + kk, m = m0 + r, n = n0 + r;
                float av = 0.0f, bv = 0.0f;
                if (m < p.m && k < p.k)
                    av = tess_load_as_f32(p.a.dtype, p.a_data, tess_matrix_offset(&p.a, b, m, k)) *
                         tess_ref_scale_at(&p.a_scale, b, m, k);
                if (n < p.n && k < p.k)
                    bv = tess_load_as_f32(p.b.dtype, p.b_data, tess_matrix_offset(&p.b, b, k, n)) *
                         tess_ref_scale_at(&p.b_scale, b, n, k);
                a_tile[kk][r] = av;
                b_tile[kk][r] = bv;
            }
            __syncthreads();
            for (int kk = 0; kk < REF_TILE_K; kk++)
                for (int i = 0; i < REF_PER_THREAD; i++)
                    for (int j = 0; j < REF_PER_THREAD; j++)
                        acc[i][j] += a_tile[kk][ty + REF_SIDE * i] * b_tile[kk][tx + REF_SIDE * j];
            __syncthreads();
        }
        for (int i = 0; i < REF_PER_THREAD; i++) {
            for (int j = 0; j < REF_PER_THREAD; j++) {
                int64_t m = m0 + ty + REF_SIDE * i, n = n0 + tx + REF_SIDE * j;
                if (m >= p.m || n >= p.n)
                    continue;
                float v = alpha * acc[i][j];
                if (beta != 0.0f)
                    v += beta * tess_load_as_f32(p.c.dtype, p.c_data, tess_matrix_offset(&p.c, b, m, n));
                if (p.epilogue.bias != TESS_BIAS_NONE || p.epilogue.activation != TESS_ACT_NONE)
                    v = ref_epilogue(p.epilogue, p.bias_data, v, b, m, n);
                if (p.residual_data)
                    v += tess_load_as_f32(p.residual.dtype, p.residual_data, tess_matrix_offset(&p.residual, b, m, n));
                tess_store_from_f32(p.d.dtype, d, tess_matrix_offset(&p.d, b, m, n), v);
            }
        }
    }
}

// A gated problem's second pass: D's element (m, j) of batch b from the
// values before the activation (v: batch x M x N, column-major float32),
// activation(v[m, 2j]) * v[m, 2j + 1] (tess_ref_glu), plus the residual.
__global__ void ref_glu_kernel(tess_ref_gemm p, const float *v, void *d) {
    const int64_t cols = p.n / 2, per_batch = p.m * cols;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < per_batch * p.batch;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = e / per_batch, m = e % per_batch % p.m, j = e % per_batch / p.m;
        const float *vb = v + b * p.m * p.n;
        double x = tess_ref_glu(p.epilogue.activation, p.gate_limit, vb[2 * j * p.m + m], vb[(2 * j + 1) * p.m + m]);
        if (p.residual_data)
            x += tess_load_as_f32(p.residual.dtype, p.residual_data, tess_matrix_offset(&p.residual, b, m, j));
        tess_store_from_f32(p.d.dtype, d, tess_matrix_offset(&p.d, b, m, j), (float)x);
    }
}

static tess_status ref_gemm_launch(const tess_ref_gemm *p, void *d_data, void *stream);

// A gated problem: the values after the bias into a temporary float32
// batch x M x N, then ref_glu_kernel into D (synchronous: the temporary is
// freed before returning).
static tess_status ref_gemm_gated(const tess_ref_gemm *p, void *d_data, void *stream) {
    tess_ref_gemm first = *p;
    first.gate = 0, first.epilogue.activation = TESS_ACT_NONE, first.residual_data = NULL;
    first.d = {TESS_DTYPE_F32, TESS_ORDER_COL, p->m, p->n, p->m, p->m * p->n};
    float *v = NULL;
    cudaError_t err = cudaMalloc(&v, sizeof(float) * (size_t)(p->m * p->n * p->batch));
    if (err != cudaSuccess)
        return tess_cuda_status(err, "allocating the GPU reference's gated values");
    tess_status s = ref_gemm_launch(&first, v, stream);
    if (s == TESS_STATUS_SUCCESS) {
        // A grid-stride loop: 1024 blocks of 256 threads cover any size, no speed needed.
        ref_glu_kernel<<<1024, 256, 0, (cudaStream_t)stream>>>(*p, v, d_data);
        s = tess_cuda_status(cudaGetLastError(), "launching the GPU reference's gate");
    }
    if (s == TESS_STATUS_SUCCESS)
        s = tess_cuda_status(cudaStreamSynchronize((cudaStream_t)stream), "running the GPU reference's gate");
    cudaFree(v);
    return s;
}

extern "C" tess_status tess_ref_gemm_gpu(const tess_ref_gemm *p, void *d_data, void *stream) {
    tess_status s = tess_ref_gemm_check(p);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!d_data)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "GPU reference GEMM: D data must not be NULL");
    return p->gate ? ref_gemm_gated(p, d_data, stream) : ref_gemm_launch(p, d_data, stream);
}

// Launches ref_gemm_kernel over a checked problem.
static tess_status ref_gemm_launch(const tess_ref_gemm *p, void *d_data, void *stream) {
    int64_t m_tiles = (p->m + REF_TILE - 1) / REF_TILE, n_tiles = (p->n + REF_TILE - 1) / REF_TILE;
    if (m_tiles > REF_GRID_YZ_MAX || n_tiles > INT32_MAX)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "GPU reference GEMM: M=%lld or N=%lld is too large for its grid",
                         (long long)p->m, (long long)p->n);
    dim3 grid((unsigned)n_tiles, (unsigned)m_tiles, (unsigned)(p->batch < REF_GRID_YZ_MAX ? p->batch : REF_GRID_YZ_MAX));
    dim3 block(REF_SIDE, REF_SIDE);
    ref_gemm_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(*p, d_data);
    return tess_cuda_status(cudaGetLastError(), "launching the GPU reference GEMM");
}
