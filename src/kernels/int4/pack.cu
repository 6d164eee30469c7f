// The 4-bit weight's packer (a checkpoint's int32 words into the fragment
// order of int4_kernels.h) and dequantizer (the packed codes, scales and
// zero points into a bf16 or f16 matrix, for products the GEMV does not
// serve). Both run once per weight or per large call: one thread per output
// word, simple loads.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "core/error.h"
#include "kernels/int4/int4_kernels.h"
#include "kernels/int4/int4_layout.h"
#include "ref/convert.h"

// Threads a CTA of both kernels.
#define TESS_INT4_THREADS 256

// One packed 32-bit word per thread: the eight codes its lane's fragment
// registers need, fetched from the source format (the formula of
// tess_int4_packed_word, read backwards).
__global__ void __launch_bounds__(TESS_INT4_THREADS) pack_int4_kernel(int format, int64_t n, int64_t k,
                                                                      const int32_t *src, uint32_t *packed) {
    const int64_t words = n * k / 8, quads = k / TESS_INT4_QUAD_K;
    for (int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; w < words; w += (int64_t)gridDim.x * blockDim.x) {
        const int j = (int)(w % 4), lane = (int)((w / 4) % 32), g = lane / 4, c = lane % 4;
        const int64_t kq = (w / 128) % quads, rb = w / (128 * quads);
        uint32_t out = 0;
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int64_t row = 16 * rb + g + 8 * (i % 2), col = 64 * kq + 16 * j + 2 * c + 8 * (i / 2) + h;
                out |= tess_int4_source_code(format, src, n, k, row, col) << (4 * i + 16 * h);
            }
        packed[w] = out;
    }
}

// The dequantized weight (row, col) of p as 16-bit tensor cores would take
// it: (q - z) exactly, times the scale rounded to X's type, rounded once
// to X's type (the GEMV itself never rounds the weight).
__device__ float dequantized(const tess_w4a16_params &p, int64_t row, int64_t col) {
    int shift;
    const int64_t word = tess_int4_packed_word(p.k, row, col, &shift);
    const uint32_t q = (((const uint32_t *)p.codes)[word] >> shift) & 0xfu;
    const int64_t group = col / p.group;
    const float z = p.zeros ? (float)p.zeros[group * p.ld_zeros + row] : 8.0f;
    const float s = tess_load_as_f32(p.scale_type, p.scales, group * p.ld_scales + row);
    if (p.x_f16)
        return __half2float(__hmul(__float2half_rn((float)q - z), __float2half_rn(s)));
    return __bfloat162float(__hmul(__float2bfloat16_rn((float)q - z), __float2bfloat16_rn(s)));
}

// One element of out a thread (row-major n x k).
__global__ void __launch_bounds__(TESS_INT4_THREADS) dequantize_int4_kernel(const __grid_constant__ tess_w4a16_params p,
                                                                            tess_dtype out_type, void *out,
                                                                            int64_t ld_out) {
    const int64_t elements = (int64_t)p.n * p.k;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < elements;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = e / p.k, col = e % p.k;
        tess_store_from_f32(out_type, out, row * ld_out + col, dequantized(p, row, col));
    }
}

// The most CTAs a grid-stride launch takes: 2^16 - 1 of 256 threads keep
// any GPU full (an H100 holds 2048 threads on each of 132 SMs); the loop
// walks the rest.
#define TESS_INT4_MAX_CTAS 65535

// CTAs of a grid-stride launch over `items`.
static unsigned stride_grid(int64_t items) {
    const int64_t ctas = (items + TESS_INT4_THREADS - 1) / TESS_INT4_THREADS;
    return (unsigned)(ctas < TESS_INT4_MAX_CTAS ? ctas : TESS_INT4_MAX_CTAS);
}

extern "C" tess_status tess_launch_pack_int4(int format, int64_t n, int64_t k, const int32_t *src, void *packed,
                                             void *stream) {
    pack_int4_kernel<<<stride_grid(n * k / 8), TESS_INT4_THREADS, 0, (cudaStream_t)stream>>>(format, n, k, src,
                                                                                            (uint32_t *)packed);
    return tess_cuda_status(cudaGetLastError(), "launching the int4 packer");
}

extern "C" tess_status tess_launch_dequantize_int4(const tess_w4a16_params *p, tess_dtype out_type, void *out,
                                                   int64_t ld_out, void *stream) {
    dequantize_int4_kernel<<<stride_grid((int64_t)p->n * p->k), TESS_INT4_THREADS, 0, (cudaStream_t)stream>>>(
        *p, out_type, out, ld_out);
    return tess_cuda_status(cudaGetLastError(), "launching the int4 dequantizer");
}
