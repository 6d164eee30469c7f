// Probe (issue 34, W4A16 at decode sizes): how close a tensor-core GEMV over
// 4-bit weights comes to the copy rate, before any product API exists.
// y[M, N] = x[M, K] . dequant(W)[N, K]^T for M = 1..16 tokens (bf16), W's
// 4-bit codes q with a scale s and a zero z per row and group of 128 along K
// (AWQ-style asymmetric: w = (q - z) s), f32 results.
//
// Layout of the codes (the kernel's own; a product packer would write it
// from AWQ/GPTQ checkpoints): blocks of 16 rows x 16 k, each one 32-bit word
// per lane of a warp holding exactly the eight weights that lane's
// mma.m16n8k16 A fragment needs (lane = 4 g + c: rows g and g + 8, k 2c,
// 2c + 1, 2c + 8, 2c + 9), nibble order chosen so that one lop3 turns two
// codes into a bf16x2 (bits 4i and 16 + 4i: fragment register i, whose two
// halves are k 2c (+8) and 2c + 1 (+8)). Four consecutive k blocks of a row
// block lie together per lane, so a lane fetches 64 k with one 16-byte load
// (a warp 512 bytes).
//
// Kernel: a CTA of 4 warps owns 64 rows over a K slice (K / SPLIT); x's slice
// sits in shared memory; each warp walks its 16 rows' blocks, dequantizes
// (bias 128 + q by lop3 with 0x4300, minus 128 + z exactly, times s: one
// rounding), runs one or two m16n8k16 per 16 k (tokens 0-7, 8-15) and adds
// its sums into y by atomicAdd (the K slices of a row meet there).
//
// Build and run (one H100, ~20 s):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Isrc dev/probes/w4a16_gemv.cu -o /tmp/w4a16
//   /tmp/w4a16 [N K]            (default the smallm suite's decode shapes)
// Prints, per M: max relative error against a float64 reference (on 256
// random columns), time, weight bytes per second and that over a
// device-to-device copy of the same bytes (issue 34's target: 85%); both
// read copies of the weights in turn, 100 MB of them, so from HBM.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "probe_common.cuh"

#define GROUP 128 // k per scale and zero
#define ROWS_PER_CTA 64
#define WARPS 4
#define MAX_TOKENS 16
// Bytes of weight copies the timed runs take in turn: twice the H100's 50 MB of L2.
#define L2_ROTATE_BYTES ((size_t)100 << 20)

// Two codes (bits `shift` and 16 + shift of w) as a bf16x2 of 128 + q:
// 0x4300 is bf16's 128.0, whose unit in the last place is 1.
__device__ __forceinline__ uint32_t codes_biased(uint32_t w, int shift) {
    uint32_t out;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(w >> shift), "r"(0x000f000fu), "r"(0x43004300u));
    return out; // (a & b) | c
}

__device__ __forceinline__ uint32_t as_u32(__nv_bfloat162 v) { return *reinterpret_cast<uint32_t *>(&v); }
__device__ __forceinline__ __nv_bfloat162 as_bf2(uint32_t v) { return *reinterpret_cast<__nv_bfloat162 *>(&v); }

// d (f32 x4) += a (bf16 16x16, 4 regs) . b (bf16 16x8, 2 regs).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One CTA: rows [64 blockIdx.x, +64) over k slice blockIdx.y of `slices`.
// codes: uint4 per lane per (row block, 4 k blocks); scales f32 [N][K/128];
// zeros uint8 [N][K/128]; x bf16 [M][K]; y f32 [M][N] (zeroed).
template <int TOKEN_TILES>
__global__ void __launch_bounds__(WARPS * 32) w4a16_gemv(const uint4 *codes, const float *scales,
                                                       const uint8_t *zeros, const __nv_bfloat16 *x, float *y, int m,
                                                       int n, int k, int slice_k) {
    extern __shared__ __nv_bfloat16 xs[]; // [MAX_TOKENS][slice_k + 8]: padded rows, no bank conflicts
    const int ld = slice_k + 8, k0 = blockIdx.y * slice_k;
    for (int i = threadIdx.x; i < TOKEN_TILES * 8 * slice_k / 8; i += blockDim.x) {
        const int r = i / (slice_k / 8), c = 8 * (i % (slice_k / 8));
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < m)
            v = *reinterpret_cast<const uint4 *>(x + (size_t)r * k + k0 + c);
        *reinterpret_cast<uint4 *>(xs + r * ld + c) = v;
    }
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int rb = (blockIdx.x * ROWS_PER_CTA) / 16 + warp; // this warp's row block
    if (rb * 16 >= n)
        return;
    const int kq_blocks = k / 64;                            // 64-k quads of a row block
    const uint4 *mine = codes + ((size_t)rb * kq_blocks + k0 / 64) * 32 + lane;
    const int row0 = rb * 16 + g, row1 = row0 + 8, groups = k / GROUP;
    float acc[TOKEN_TILES][4] = {};
#pragma unroll 2
    for (int kq = 0; kq < slice_k / 64; kq++) {
        const uint4 w4 = __ldg(mine + (size_t)kq * 32);
        const int group = (k0 + 64 * kq) / GROUP;
        const float s0 = __ldg(scales + (size_t)row0 * groups + group), s1 = __ldg(scales + (size_t)row1 * groups + group);
        const float z0 = 128.0f + __ldg(zeros + (size_t)row0 * groups + group);
        const float z1 = 128.0f + __ldg(zeros + (size_t)row1 * groups + group);
        const __nv_bfloat162 sc0 = __float2bfloat162_rn(s0), sc1 = __float2bfloat162_rn(s1);
        const __nv_bfloat162 zb0 = __float2bfloat162_rn(z0), zb1 = __float2bfloat162_rn(z1);
        const uint32_t words[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
        for (int j = 0; j < 4; j++) { // the quad's four 16-k blocks
            uint32_t a[4];
#pragma unroll
            for (int i = 0; i < 4; i++) { // fragment register i: rows g (i even) or g + 8, k 2c (+8 for i >= 2)
                const __nv_bfloat162 q = as_bf2(codes_biased(words[j], 4 * i));
                a[i] = as_u32(__hmul2(__hsub2(q, i % 2 ? zb1 : zb0), i % 2 ? sc1 : sc0));
            }
            const int kk = 64 * kq + 16 * j + 2 * c; // within the slice
#pragma unroll
            for (int tt = 0; tt < TOKEN_TILES; tt++) {
                const __nv_bfloat16 *xr = xs + (8 * tt + g) * ld + kk;
                mma_bf16(acc[tt], a, *reinterpret_cast<const uint32_t *>(xr),
                         *reinterpret_cast<const uint32_t *>(xr + 8));
            }
        }
    }
#pragma unroll
    for (int tt = 0; tt < TOKEN_TILES; tt++)
#pragma unroll
        for (int v = 0; v < 4; v++) { // d[v]: row g (+8 for v >= 2), token 2c + v % 2 of tile tt
            const int row = v < 2 ? row0 : row1, token = 8 * tt + 2 * c + v % 2;
            if (token < m && row < n)
                atomicAdd(y + (size_t)token * n + row, acc[tt][v]);
        }
}

// The word of lane (g, c) for the 16x16 block at rows r0, k k0 of codes q[n][k].
static uint32_t pack_word(const std::vector<uint8_t> &q, int k, int r0, int k0, int g, int c) {
    uint32_t w = 0;
    for (int i = 0; i < 4; i++) { // register i: rows g / g + 8, k 2c / 2c + 8; halves k and k + 1
        const int row = r0 + g + 8 * (i % 2), col = k0 + 2 * c + 8 * (i / 2);
        w |= (uint32_t)q[(size_t)row * k + col] << (4 * i);
        w |= (uint32_t)q[(size_t)row * k + col + 1] << (16 + 4 * i);
    }
    return w;
}

static double bf16_value(__nv_bfloat16 v) { return (double)__bfloat162float(v); }

int main(int argc, char **argv) {
    std::vector<std::pair<int, int>> shapes = {{7168, 7168}, {4096, 7168}, {28672, 4096}, {7168, 2048}};
    if (argc == 3)
        shapes = {{atoi(argv[1]), atoi(argv[2])}};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    printf("%6s %6s %3s %10s %9s %9s %8s %s\n", "N", "K", "M", "rel_err", "us", "TB/s", "of_copy", "(copy TB/s)");
    for (const auto &shape : shapes) {
        const int n = shape.first, k = shape.second;
        if (n % ROWS_PER_CTA || k % GROUP) {
            printf("N %% 64 and K %% 128 must be 0\n");
            return 2;
        }
        const int groups = k / GROUP;
        std::vector<uint8_t> q((size_t)n * k), zeros((size_t)n * groups);
        std::vector<float> scales((size_t)n * groups);
        for (size_t i = 0; i < q.size(); i++)
            q[i] = rng() % 16;
        for (size_t i = 0; i < scales.size(); i++)
            scales[i] = 0.01f + 0.02f * (uni(rng) + 1.0f), zeros[i] = rng() % 16;
        std::vector<uint4> packed((size_t)n / 16 * (k / 64) * 32);
        for (int rb = 0; rb < n / 16; rb++)
            for (int kq = 0; kq < k / 64; kq++)
                for (int lane = 0; lane < 32; lane++) {
                    uint32_t w[4];
                    for (int j = 0; j < 4; j++)
                        w[j] = pack_word(q, k, 16 * rb, 64 * kq + 16 * j, lane / 4, lane % 4);
                    packed[((size_t)rb * (k / 64) + kq) * 32 + lane] = make_uint4(w[0], w[1], w[2], w[3]);
                }
        std::vector<__nv_bfloat16> x((size_t)MAX_TOKENS * k);
        for (auto &v : x)
            v = __float2bfloat16(uni(rng));
        float *d_y;
        __nv_bfloat16 *d_x;
        char *copy_dst;
        const size_t code_bytes = packed.size() * sizeof(uint4);
        const size_t stream_bytes = code_bytes + scales.size() * 4 + zeros.size();
        // Copies of the weights (codes, scales, zeros) taken in turn, together past
        // L2_ROTATE_BYTES, so that each timed run reads its weights from HBM as a
        // model's layers do, not from the L2 the previous run filled.
        const int copies = (int)std::max<size_t>(1, (L2_ROTATE_BYTES + stream_bytes - 1) / stream_bytes);
        std::vector<uint4 *> d_codes(copies);
        std::vector<float *> d_scales(copies);
        std::vector<uint8_t *> d_zeros(copies);
        for (int i = 0; i < copies; i++) {
            CHECK(cudaMalloc(&d_codes[i], code_bytes));
            CHECK(cudaMalloc(&d_scales[i], scales.size() * 4));
            CHECK(cudaMalloc(&d_zeros[i], zeros.size()));
            CHECK(cudaMemcpy(d_codes[i], packed.data(), code_bytes, cudaMemcpyHostToDevice));
            CHECK(cudaMemcpy(d_scales[i], scales.data(), scales.size() * 4, cudaMemcpyHostToDevice));
            CHECK(cudaMemcpy(d_zeros[i], zeros.data(), zeros.size(), cudaMemcpyHostToDevice));
        }
        CHECK(cudaMalloc(&d_x, x.size() * 2));
        CHECK(cudaMalloc(&d_y, (size_t)MAX_TOKENS * n * 4));
        CHECK(cudaMalloc(&copy_dst, code_bytes));
        CHECK(cudaMemcpy(d_x, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
        // K slices: at least 4 CTAs an SM (the rows alone give N / 64), slices of whole groups, and no
        // slice under 512 k (each CTA stages its slice of x once: shorter slices re-read x more).
        int sms = 0;
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        int split = 1;
        while ((n / ROWS_PER_CTA) * split < 4 * sms && (k / split) % GROUP == 0 && k / split > 512)
            split *= 2;
        const int slice_k = k / split;
        const size_t smem = (size_t)MAX_TOKENS * (slice_k + 8) * 2;
        CHECK(cudaFuncSetAttribute(w4a16_gemv<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CHECK(cudaFuncSetAttribute(w4a16_gemv<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        // Median ms of run(r) over the timed runs r = 1, 2, ... (after the warm-up ones), each
        // queued behind hold() so that the events time the GPU only.
        auto median_ms = [&](auto run) {
            std::vector<float> times;
            for (int r = 0; r < PROBE_REPS + PROBE_WARMUPS; r++) {
                hold<<<1, 1>>>(PROBE_HOLD_CYCLES);
                CHECK(cudaEventRecord(e0));
                run(r + 1);
                CHECK(cudaEventRecord(e1));
                CHECK(cudaEventSynchronize(e1));
                float ms;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= PROBE_WARMUPS)
                    times.push_back(ms);
            }
            std::sort(times.begin(), times.end());
            return (double)times[times.size() / 2];
        };
        // The copy rate of the weights' bytes (device to device, read + write counted), from the
        // copies in turn as the GEMV reads them.
        const double copy_ms = median_ms([&](int r) {
            CHECK(cudaMemcpyAsync(copy_dst, d_codes[r % copies], code_bytes, cudaMemcpyDeviceToDevice));
        });
        const double copy_tbps = 2.0 * code_bytes / (copy_ms * 1e-3) / 1e12;
        for (int m : {1, 4, 8, 16}) {
            const dim3 grid(n / ROWS_PER_CTA, split);
            // Run r reads copy r % copies; timed runs keep adding into y: only the first is checked.
            auto launch = [&](int r, bool zero) {
                const int i = r % copies;
                if (zero)
                    CHECK(cudaMemsetAsync(d_y, 0, (size_t)MAX_TOKENS * n * 4));
                if (m <= 8)
                    w4a16_gemv<1><<<grid, WARPS * 32, smem>>>(d_codes[i], d_scales[i], d_zeros[i], d_x, d_y, m, n, k,
                                                             slice_k);
                else
                    w4a16_gemv<2><<<grid, WARPS * 32, smem>>>(d_codes[i], d_scales[i], d_zeros[i], d_x, d_y, m, n, k,
                                                             slice_k);
            };
            launch(0, true);
            CHECK(cudaDeviceSynchronize());
            std::vector<float> y((size_t)MAX_TOKENS * n);
            CHECK(cudaMemcpy(y.data(), d_y, y.size() * 4, cudaMemcpyDeviceToHost));
            double worst = 0.0;
            for (int check = 0; check < 256; check++) { // random columns against float64 of the same bf16 weights
                const int col = rng() % n;
                for (int t = 0; t < m; t++) {
                    double want = 0.0, norm = 0.0;
                    for (int kk = 0; kk < k; kk++) {
                        const size_t gi = (size_t)col * groups + kk / GROUP;
                        const float s = bf16_value(__float2bfloat16(scales[gi]));
                        const double w = bf16_value(__float2bfloat16(((float)q[(size_t)col * k + kk] - zeros[gi]) * s));
                        want += w * bf16_value(x[(size_t)t * k + kk]);
                        norm += fabs(w * bf16_value(x[(size_t)t * k + kk]));
                    }
                    worst = std::max(worst, fabs(y[(size_t)t * n + col] - want) / (norm > 0 ? norm : 1.0));
                }
            }
            const double us = median_ms([&](int r) { launch(r, false); }) * 1e3, tbps = stream_bytes / (us * 1e-6) / 1e12;
            printf("%6d %6d %3d %10.2e %9.2f %9.3f %8.3f (%.3f; %d K slices, %d weight copies)\n", n, k, m, worst,
                   us, tbps, tbps / copy_tbps, copy_tbps, split, copies);
        }
        for (int i = 0; i < copies; i++)
            cudaFree(d_codes[i]), cudaFree(d_scales[i]), cudaFree(d_zeros[i]);
        cudaFree(d_x), cudaFree(d_y), cudaFree(copy_dst);
    }
    return 0;
}
