// The 4-bit weight's packer (a checkpoint's int32 words into the fragment
// order of int4_kernels.h) and dequantizer (the packed codes, scales and
// zero points into a bf16 or f16 matrix, for products the GEMV does not
// serve). The packer runs once per weight: one thread per output word,
// simple loads. The dequantizer runs on every large call, ahead of a GEMM:
// a warp a quad (16 rows x 64 k), each lane writing its rows' 16 columns as
// two 16-byte pieces, so that it moves its bytes at the copy rate; one
// thread an element where the output's rows are not 16-byte aligned.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "core/error.h"
#include "kernels/common/ptx.cuh"
#include "kernels/int4/int4_fragment.cuh"
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
                const int64_t row = 16 * rb + g + 8 * (i % 2), col = 64 * kq + tess_int4_quad_col(c, j, i, h);
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
    const float z = int4_zero_point<float>(p.zeros, p.ld_zeros, group, row);
    const float s = tess_load_as_f32(p.scale_type, p.scales, group * p.ld_scales + row);
    if (p.x_f16)
        return __half2float(__hmul(__float2half_rn((float)q - z), __float2half_rn(s)));
    return __bfloat162float(__hmul(__float2bfloat16_rn((float)q - z), __float2bfloat16_rn(s)));
}

// Warps a CTA of the quad dequantizer: each converts one quad at a time.
#define TESS_INT4_DEQ_WARPS 8

// The 8 elements of `v` from one 16-bit type to the other (TO_F16: bf16 to
// f16, else f16 to bf16), each rounded once, as tess_store_from_f32 does.
template <bool TO_F16>
__device__ uint4 converted8(uint4 v) {
    uint32_t *w = reinterpret_cast<uint32_t *>(&v);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if constexpr (TO_F16)
            w[i] = pair_bits(__float22half2_rn(__bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&w[i]))));
        else
            w[i] = pair_bits(__float22bfloat162_rn(__half22float2(*reinterpret_cast<const __half2 *>(&w[i]))));
    }
    return v;
}

// A warp a quad (grid-stride over the quads, along k within a row block):
// each lane's 16 bytes of codes are 16 consecutive columns of its rows g
// and g + 8 (tess_int4_quad_col), dequantized pair by pair (X's rounding,
// F16X) and stored as two 16-byte pieces a row; the quad's lanes together
// write its 16 rows of 128 bytes. SAME: out in X's type, else the other
// 16-bit type. out 16-byte aligned, ld_out a multiple of 8.
template <bool F16X, bool SAME>
__global__ void __launch_bounds__(TESS_INT4_DEQ_WARPS * 32)
    dequantize_quads_kernel(const __grid_constant__ tess_w4a16_params p, uint16_t *out, int64_t ld_out) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int64_t quads_k = p.k / TESS_INT4_QUAD_K, quads = (int64_t)(p.n / TESS_INT4_ROW_BLOCK) * quads_k;
    for (int64_t qd = (int64_t)blockIdx.x * TESS_INT4_DEQ_WARPS + warp; qd < quads;
         qd += (int64_t)gridDim.x * TESS_INT4_DEQ_WARPS) {
        const int64_t rb = qd / quads_k, kq = qd % quads_k, group = kq * TESS_INT4_QUAD_K / p.group;
        const uint4 w = ld_global_nc_16<true>((const uint4 *)p.codes + qd * 32 + lane);
        const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int hh = 0; hh < 2; hh++) { // rows g and g + 8 of the block
            const int64_t row = TESS_INT4_ROW_BLOCK * rb + g + 8 * hh;
            const uint32_t scale = pair_of<F16X>(tess_load_as_f32(p.scale_type, p.scales, group * p.ld_scales + row));
            const float z = int4_zero_point<float>(p.zeros, p.ld_zeros, group, row);
            const uint32_t zero = pair_of<F16X>(int4_bias<F16X>::VALUE + z);
            // pair 2 j + q: columns 16 c + 4 j + 2 q and the next (tess_int4_quad_col, i = 2 q + hh)
            uint32_t pairs[8];
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int q = 0; q < 2; q++)
                    pairs[2 * j + q] =
                        dequantized_pair<F16X>(tess_int4_pair<F16X>(words[j], 4 * (2 * q + hh)), zero, scale);
            uint4 lo = make_uint4(pairs[0], pairs[1], pairs[2], pairs[3]);
            uint4 hi = make_uint4(pairs[4], pairs[5], pairs[6], pairs[7]);
            if constexpr (!SAME)
                lo = converted8<!F16X>(lo), hi = converted8<!F16X>(hi);
            uint4 *dst = reinterpret_cast<uint4 *>(out + row * ld_out + TESS_INT4_QUAD_K * kq + 16 * c);
            dst[0] = lo, dst[1] = hi;
        }
    }
}

// One element of out a thread (row-major n x k): rows not 16-byte aligned.
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
    const cudaStream_t s = (cudaStream_t)stream;
    if ((uintptr_t)out % 16 == 0 && ld_out % 8 == 0) {
        const int64_t quads = (int64_t)(p->n / TESS_INT4_ROW_BLOCK) * (p->k / TESS_INT4_QUAD_K);
        const int64_t ctas = (quads + TESS_INT4_DEQ_WARPS - 1) / TESS_INT4_DEQ_WARPS;
        const dim3 grid((unsigned)(ctas < TESS_INT4_MAX_CTAS ? ctas : TESS_INT4_MAX_CTAS));
        const dim3 block(TESS_INT4_DEQ_WARPS * 32);
        const bool same = (out_type == TESS_DTYPE_F16) == (p->x_f16 != 0);
        uint16_t *o = (uint16_t *)out;
        if (p->x_f16 && same)
            dequantize_quads_kernel<true, true><<<grid, block, 0, s>>>(*p, o, ld_out);
        else if (p->x_f16)
            dequantize_quads_kernel<true, false><<<grid, block, 0, s>>>(*p, o, ld_out);
        else if (same)
            dequantize_quads_kernel<false, true><<<grid, block, 0, s>>>(*p, o, ld_out);
        else
            dequantize_quads_kernel<false, false><<<grid, block, 0, s>>>(*p, o, ld_out);
    } else {
        dequantize_int4_kernel<<<stride_grid((int64_t)p->n * p->k), TESS_INT4_THREADS, 0, s>>>(*p, out_type, out,
                                                                                             ld_out);
    }
    return tess_cuda_status(cudaGetLastError(), "launching the int4 dequantizer");
}
