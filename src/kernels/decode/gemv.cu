// Decode GEMV: D (m x n) = alpha * A B^T (+ beta C) for a few tokens (m <= 8),
// A the tokens (m x K, K contiguous), B the weights (n rows of K contiguous
// elements). At decode sizes the weights are read once and the arithmetic
// is a few FMAs per weight, so this kernel has no tensor cores, no shared
// memory ring and no barriers: each thread streams 16-byte chunks of its
// CTA's weight rows straight into registers and multiplies them with the
// tokens (read through L1, where every warp finds them), keeping a float32
// sum per (row, token). What the sm90 GEMM pays before its first byte
// arrives (a 200 KB ring, barrier set-up, tensor-map fetches, the
// epilogue's staging) is what this kernel saves on a 10-30 us problem.
//
// A CTA of TESS_GEMV_THREADS threads owns TESS_GEMV_ROWS weight rows; its
// threads take the rows' 16-byte chunks in turn (chunk c by thread
// c % THREADS), two chunks in flight per row per thread, then add their sums
// in a fixed order (warp shuffles, then the warps' sums in shared memory):
// the same bits on every run.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "core/error.h"
#include "core/matrix.h"
#include "kernels/common/ptx.cuh"
#include "kernels/decode/gemv_kernels.h"
#include "ref/convert.h"

// Elements of an input type in one 16-byte chunk.
template <tess_dtype IN>
struct gemv_input {
    static constexpr int CHUNK = IN == TESS_DTYPE_E4M3 ? 16 : 8;
};

// One 16-byte chunk of the weights, which are read once: kept out of L1
// (which holds the tokens, read by every warp of the SM), with L2 asked to
// fetch the next 256 bytes of the row along with it.
TESS_DEVICE uint4 load_weights(const char *p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

// The chunk's elements as floats, element j of the chunk (byte order) in f[j].
template <tess_dtype IN>
TESS_DEVICE void unpack(const uint4 &v, float (&f)[gemv_input<IN>::CHUNK]) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if (IN == TESS_DTYPE_BF16) { // a bf16 is the top half of the float with the same bits
            f[2 * i] = __uint_as_float(w[i] << 16);
            f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
        } else if (IN == TESS_DTYPE_F16) {
            __half2_raw h;
            h.x = (unsigned short)(w[i] & 0xffffu), h.y = (unsigned short)(w[i] >> 16);
            const float2 x = __half22float2(__half2(h));
            f[2 * i] = x.x, f[2 * i + 1] = x.y;
        } else { // e4m3: two at a time through f16, which holds every e4m3 value exactly
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const __half2_raw r =
                    __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w[i] >> (16 * h)), __NV_E4M3);
                const float2 x = __half22float2(__half2(r));
                f[4 * i + 2 * h] = x.x, f[4 * i + 2 * h + 1] = x.y;
            }
        }
    }
}

// Where a thread reads: its CTA's weight rows and the tokens (rows past n
// and tokens past m repeat the last one: computed, never stored), and for
// block-scaled FP8 each one's factor of K block 0 (K block kb is kb *
// stride further).
template <int MT>
struct gemv_sources {
    const char *w[TESS_GEMV_ROWS], *x[MT];
    const float *fw[TESS_GEMV_ROWS], *fx[MT];
    int64_t fw_stride, fx_stride;
};

template <tess_dtype IN, bool BLOCK, int MT>
TESS_DEVICE gemv_sources<MT> gemv_sources_at(const tess_gemv_params &p, int n0) {
    constexpr int64_t ELEM = 16 / gemv_input<IN>::CHUNK; // bytes per element
    gemv_sources<MT> s;
#pragma unroll
    for (int r = 0; r < TESS_GEMV_ROWS; r++) {
        const int n = n0 + r < p.n ? n0 + r : p.n - 1;
        s.w[r] = (const char *)p.b + n * p.ldb * ELEM;
        if (BLOCK)
            s.fw[r] = p.scale_b.data + tess_scale_offset(&p.scale_b.layout, 0, n, 0);
    }
#pragma unroll
    for (int m = 0; m < MT; m++) {
        const int t = m < p.m ? m : p.m - 1;
        s.x[m] = (const char *)p.a + t * p.lda * ELEM;
        if (BLOCK)
            s.fx[m] = p.scale_a.data + tess_scale_offset(&p.scale_a.layout, 0, t, 0);
    }
    s.fw_stride = p.scale_b.layout.stride_k, s.fx_stride = p.scale_a.layout.stride_k;
    return s;
}

// Adds chunk c of the CTA's rows (w, already loaded) times the tokens'
// chunk c into acc. Block-scaled: each (row, token) sum of the chunk's
// products is scaled by the two factors of the chunk's 128-K block (a
// chunk of 16 never straddles one) before it is added.
template <tess_dtype IN, bool BLOCK, int MT>
TESS_DEVICE void gemv_chunk(float (&acc)[TESS_GEMV_ROWS][MT], const uint4 (&w)[TESS_GEMV_ROWS],
                            const gemv_sources<MT> &s, int c) {
    constexpr int CHUNK = gemv_input<IN>::CHUNK;
    float wf[TESS_GEMV_ROWS][CHUNK];
#pragma unroll
    for (int r = 0; r < TESS_GEMV_ROWS; r++)
        unpack<IN>(w[r], wf[r]);
    const int64_t kb = (int64_t)c * CHUNK / TESS_SCALE_BLOCK;
    float fw[TESS_GEMV_ROWS];
    if (BLOCK) {
#pragma unroll
        for (int r = 0; r < TESS_GEMV_ROWS; r++)
            fw[r] = __ldg(s.fw[r] + kb * s.fw_stride);
    }
#pragma unroll
    for (int m = 0; m < MT; m++) {
        float xf[CHUNK];
        unpack<IN>(__ldg((const uint4 *)(s.x[m] + (int64_t)c * 16)), xf);
        const float fx = BLOCK ? __ldg(s.fx[m] + kb * s.fx_stride) : 1.0f;
#pragma unroll
        for (int r = 0; r < TESS_GEMV_ROWS; r++) {
            if (BLOCK) {
                float sum = 0.0f;
#pragma unroll
                for (int j = 0; j < CHUNK; j++)
                    sum = fmaf(wf[r][j], xf[j], sum);
                acc[r][m] = fmaf(sum, fx * fw[r], acc[r][m]);
            } else {
#pragma unroll
                for (int j = 0; j < CHUNK; j++)
                    acc[r][m] = fmaf(wf[r][j], xf[j], acc[r][m]);
            }
        }
    }
}

// The per-tensor or per-row/column factor of token (or weight row) i; 1
// without factors.
TESS_DEVICE float outer_factor(const tess_scale_operand &s, int i) {
    return s.data ? s.data[tess_scale_offset(&s.layout, 0, i, 0)] : 1.0f;
}

// CTAs per SM the registers must allow: 3 x 128 threads x at most 170
// registers fit the SM's 65536; each CTA has 16 KB of weights in flight
// (128 threads x 4 rows x 2 chunks x 16 bytes), 48 KB per SM.
#define TESS_GEMV_MIN_CTAS 3

template <tess_dtype IN, bool BLOCK, int MT>
__global__ void __launch_bounds__(TESS_GEMV_THREADS, TESS_GEMV_MIN_CTAS) gemv_kernel(const __grid_constant__ tess_gemv_params p) {
    constexpr int CHUNK = gemv_input<IN>::CHUNK, ROWS = TESS_GEMV_ROWS, THREADS = TESS_GEMV_THREADS;
    // Programmatic dependent launch, as the sm90 GEMM: nothing in global
    // memory is read before the previous kernel has finished.
    grid_dependency_wait();
    grid_dependents_launch();
    const int t = threadIdx.x, n0 = blockIdx.x * ROWS;
    const gemv_sources<MT> s = gemv_sources_at<IN, BLOCK, MT>(p, n0);
    const int chunks = p.k / CHUNK; // K is whole chunks (the planner's condition)
    float acc[ROWS][MT];
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int m = 0; m < MT; m++)
            acc[r][m] = 0.0f;
    // Two chunks per row in flight: their loads are issued before either is used.
    int c = t;
    for (; c + THREADS < chunks; c += 2 * THREADS) {
        uint4 w0[ROWS], w1[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            w0[r] = load_weights(s.w[r] + (int64_t)c * 16);
            w1[r] = load_weights(s.w[r] + (int64_t)(c + THREADS) * 16);
        }
        gemv_chunk<IN, BLOCK, MT>(acc, w0, s, c);
        gemv_chunk<IN, BLOCK, MT>(acc, w1, s, c + THREADS);
    }
    if (c < chunks) {
        uint4 w0[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            w0[r] = load_weights(s.w[r] + (int64_t)c * 16);
        gemv_chunk<IN, BLOCK, MT>(acc, w0, s, c);
    }

    // The CTA's sums: each warp's by a shuffle butterfly, then the warps'
    // in shared memory, added in warp order by one thread per output.
    __shared__ float warp_sums[THREADS / 32][ROWS][MT];
    const int warp = t / 32, lane = t % 32;
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int m = 0; m < MT; m++) {
            float v = acc[r][m];
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2)
                v += __shfl_xor_sync(0xffffffffu, v, offset);
            if (lane == 0)
                warp_sums[warp][r][m] = v;
        }
    __syncthreads();
    static_assert(ROWS * MT <= THREADS, "one thread per output");
    const int r = t / MT, m = t % MT, n = n0 + r;
    if (t >= ROWS * MT || n >= p.n || m >= p.m)
        return;
    float sum = warp_sums[0][r][m];
#pragma unroll
    for (int w = 1; w < THREADS / 32; w++)
        sum += warp_sums[w][r][m];
    if (!BLOCK)
        sum *= outer_factor(p.scale_a, m) * outer_factor(p.scale_b, n);
    float v = p.alpha * sum;
    if (p.beta != 0.0f)
        v += p.beta * tess_load_as_f32(p.c_layout.dtype, p.c, tess_matrix_offset(&p.c_layout, 0, m, n));
    tess_store_from_f32(p.d_layout.dtype, p.d, tess_matrix_offset(&p.d_layout, 0, m, n), v);
}

// One CTA per TESS_GEMV_ROWS weight rows, with programmatic stream
// serialization (the kernel waits in grid_dependency_wait).
template <tess_dtype IN, bool BLOCK, int MT>
static tess_status launch_gemv(const tess_gemv_params *p, void *stream) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)((p->n + TESS_GEMV_ROWS - 1) / TESS_GEMV_ROWS));
    config.blockDim = dim3(TESS_GEMV_THREADS);
    config.stream = (cudaStream_t)stream;
    cudaLaunchAttribute serialization = {};
    serialization.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    serialization.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &serialization;
    config.numAttrs = 1;
    return tess_cuda_status(cudaLaunchKernelEx(&config, gemv_kernel<IN, BLOCK, MT>, *p),
                            "launching the decode GEMV kernel");
}

#define TESS_GEMV_ENTRY(IN, BLOCK, MT) {IN, BLOCK, MT, launch_gemv<IN, BLOCK, MT>}

// 16-bit inputs up to 8 tokens; e4m3 up to 4 (its 16 values per chunk and
// their factors would need twice the registers at 8). Each type's kernels
// by token count, smallest first: the planner takes the first that holds M.
static const tess_gemv_kernel gemv_kernels[] = {
    TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 1), TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 2),
    TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 4), TESS_GEMV_ENTRY(TESS_DTYPE_BF16, false, 8),
    TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 1),  TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 2),
    TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 4),  TESS_GEMV_ENTRY(TESS_DTYPE_F16, false, 8),
    TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, false, 1), TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, false, 2),
    TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, false, 4), TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, true, 1),
    TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, true, 2),  TESS_GEMV_ENTRY(TESS_DTYPE_E4M3, true, 4),
};

extern "C" int tess_gemv_kernel_count(void) { return (int)(sizeof gemv_kernels / sizeof gemv_kernels[0]); }

extern "C" const tess_gemv_kernel *tess_gemv_kernel_at(int i) {
    return i >= 0 && i < tess_gemv_kernel_count() ? &gemv_kernels[i] : NULL;
}
