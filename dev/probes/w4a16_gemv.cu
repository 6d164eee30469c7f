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
// Kernel: a CTA of NW warps owns 16 RB NW rows over a K slice; x's slice sits
// in shared memory; each warp walks its RB row blocks' quads with the next quad
// of each in flight, dequantizes (bias 128 + q by lop3 with 0x4300, minus
// 128 + z exactly, times s: one rounding), runs one or two m16n8k16 per 16 k
// and row block (tokens 0-7, 8-15; one x fragment serves the RB blocks) and
// adds its sums into y by atomicAdd (the K slices of a row meet there). The
// probe times every variant (RB, NW, CTAs an SM) and names the best per case.
//
// Build and run (one H100, ~20 s):
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Isrc dev/probes/w4a16_gemv.cu -o /tmp/w4a16
//   /tmp/w4a16 [N K]            (default the smallm suite's decode shapes)
// Prints, per M and variant: max relative error (the first variant against a
// float64 reference on 256 random columns, the others against the first), time, weight bytes per second and that over a
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
#define MAX_TOKENS 16
#define MAX_ROWS_PER_CTA 512 // 16 rows x 4 row blocks x 8 warps, the largest variant
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

// Streams a quad (64 k) of codes for this lane past L1 (read once; L1 keeps x's
// fragments and the scales).
__device__ __forceinline__ uint4 load_codes(const uint4 *p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// One quad (64 k) of RB row blocks: their scales and zeros (rows g, g + 8 of
// each block, from the CTA's staged (s, 128 + z) pairs sz [rows][slice_groups];
// the quad lies in one group), dequantized A fragments, and the mmas with x's
// fragments from shared memory. row0: the warp's first row within the CTA.
template <int TOKEN_TILES, int RB>
__device__ __forceinline__ void quad_mma(float (&acc)[RB][TOKEN_TILES][4], const uint4 (&cur)[RB], const float2 *sz,
                                         int slice_groups, const __nv_bfloat16 *xs, int ld, int kq, int row0, int g,
                                         int c) {
    const int group = kq / 2; // 2 quads a group; slices start on a group
    __nv_bfloat162 sc[RB][2], zb[RB][2];
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int h = 0; h < 2; h++) { // rows g and g + 8 of row block r
            const float2 v = sz[(row0 + 16 * r + g + 8 * h) * slice_groups + group];
            sc[r][h] = __float2bfloat162_rn(v.x);
            zb[r][h] = __float2bfloat162_rn(v.y);
        }
#pragma unroll
    for (int j = 0; j < 4; j++) { // the quad's four 16-k blocks
        const int kk = 64 * kq + 16 * j + 2 * c; // within the slice
        uint32_t b[TOKEN_TILES][2];
#pragma unroll
        for (int tt = 0; tt < TOKEN_TILES; tt++) {
            const __nv_bfloat16 *xr = xs + (8 * tt + g) * ld + kk;
            b[tt][0] = *reinterpret_cast<const uint32_t *>(xr);
            b[tt][1] = *reinterpret_cast<const uint32_t *>(xr + 8);
        }
#pragma unroll
        for (int r = 0; r < RB; r++) {
            const uint32_t word = j == 0 ? cur[r].x : j == 1 ? cur[r].y : j == 2 ? cur[r].z : cur[r].w;
            uint32_t a[4];
#pragma unroll
            for (int i = 0; i < 4; i++) { // fragment register i: rows g (i even) or g + 8, k 2c (+8 for i >= 2)
                const __nv_bfloat162 q = as_bf2(codes_biased(word, 4 * i));
                a[i] = as_u32(__hmul2(__hsub2(q, zb[r][i % 2]), sc[r][i % 2]));
            }
#pragma unroll
            for (int tt = 0; tt < TOKEN_TILES; tt++)
                mma_bf16(acc[r][tt], a, b[tt][0], b[tt][1]);
        }
    }
}

// One CTA of NW warps: rows [16 RB NW blockIdx.x, +16 RB NW) over k slice blockIdx.y
// (slice_k, a multiple of GROUP). Each warp owns RB consecutive 16-row blocks, so
// one x fragment from shared memory feeds RB mmas, and keeps the next DEPTH
// quads of every row block in flight while it computes the current one.
// codes: uint4 per lane per (row block, 4 k blocks); scales f32 [N][K/128];
// zeros uint8 [N][K/128]; x bf16 [M][K]; y f32 [M][N] (zeroed).
template <int TOKEN_TILES, int RB, int NW, int DEPTH>
__global__ void __launch_bounds__(NW * 32) w4a16_gemv(const uint4 *codes, const float *scales, const uint8_t *zeros,
                                                    const __nv_bfloat16 *x, float *y, int m, int n, int k,
                                                    int slice_k) {
    // Shared memory: x's slice [8 TOKEN_TILES][slice_k + 8] (padded rows, no bank
    // conflicts), then the CTA's rows' (scale, 128 + zero) [rows][slice_groups].
    extern __shared__ __nv_bfloat16 xs[];
    constexpr int ROWS = 16 * RB * NW;
    const int ld = slice_k + 8, k0 = blockIdx.y * slice_k, slice_groups = slice_k / GROUP;
    float2 *sz = reinterpret_cast<float2 *>(xs + 8 * TOKEN_TILES * ld);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int rb0 = (blockIdx.x * NW + warp) * RB; // this warp's first row block
    const int kq_blocks = k / 64, quads = slice_k / 64, groups = k / GROUP;
    const uint4 *mine = codes + ((size_t)rb0 * kq_blocks + k0 / 64) * 32 + lane;
    const size_t rb_stride = (size_t)kq_blocks * 32; // uint4s from one row block to the next
    float acc[RB][TOKEN_TILES][4] = {};
    uint4 ring[DEPTH][RB]; // quads kq .. kq + DEPTH - 1 of each row block, in flight
#pragma unroll
    for (int d = 0; d < DEPTH; d++) // first, so that the codes travel while x and the scales are staged
#pragma unroll
        for (int r = 0; r < RB; r++)
            if (d < quads)
                ring[d][r] = load_codes(mine + r * rb_stride + (size_t)d * 32);
    for (int i = threadIdx.x; i < TOKEN_TILES * 8 * slice_k / 8; i += blockDim.x) {
        const int r = i / (slice_k / 8), c8 = 8 * (i % (slice_k / 8));
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < m)
            v = *reinterpret_cast<const uint4 *>(x + (size_t)r * k + k0 + c8);
        *reinterpret_cast<uint4 *>(xs + r * ld + c8) = v;
    }
    for (int i = threadIdx.x; i < ROWS * slice_groups; i += blockDim.x) {
        const size_t at = (size_t)(blockIdx.x * ROWS + i / slice_groups) * groups + k0 / GROUP + i % slice_groups;
        sz[i] = make_float2(__ldg(scales + at), 128.0f + __ldg(zeros + at));
    }
    __syncthreads();
    for (int kq0 = 0; kq0 < quads; kq0 += DEPTH) {
#pragma unroll
        for (int d = 0; d < DEPTH; d++) { // ring slot d holds quad kq0 + d
            const int kq = kq0 + d;
            if (kq < quads) {
                uint4 cur[RB];
#pragma unroll
                for (int r = 0; r < RB; r++) {
                    cur[r] = ring[d][r];
                    if (kq + DEPTH < quads)
                        ring[d][r] = load_codes(mine + r * rb_stride + (size_t)(kq + DEPTH) * 32);
                }
                quad_mma<TOKEN_TILES, RB>(acc, cur, sz, slice_groups, xs, ld, kq, 16 * RB * warp, g, c);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < RB; r++)
#pragma unroll
        for (int tt = 0; tt < TOKEN_TILES; tt++)
#pragma unroll
            for (int v = 0; v < 4; v++) { // d[v]: row g (+8 for v >= 2), token 2c + v % 2 of tile tt
                const int row = 16 * (rb0 + r) + g + 8 * (v / 2), token = 8 * tt + 2 * c + v % 2;
                if (token < m)
                    atomicAdd(y + (size_t)token * n + row, acc[r][tt][v]);
            }
}

// Reads n16 uint4s once, four in flight a thread, and keeps nothing: the rate
// at which one launch can only stream the weights' bytes (the floor under any
// GEMV over them).
__global__ void stream_read(const uint4 *p, size_t n16, unsigned *sink) {
    const size_t step = (size_t)gridDim.x * blockDim.x;
    unsigned acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += 4 * step) {
        uint4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            v[u] = i + u * step < n16 ? load_codes(p + i + u * step) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < 4; u++)
            acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    if (acc == 0x9e3779b9u) // never in practice; keeps the loads
        sink[0] = acc;
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

// The kernel shapes tried: row blocks a warp, warps a CTA, quads in flight a
// row block, and the CTAs an SM that the K split aims for; each with its one- and two-token-tile kernels.
struct Variant {
    int rb, nw, depth, ctas_per_sm;
    void (*one)(const uint4 *, const float *, const uint8_t *, const __nv_bfloat16 *, float *, int, int, int, int);
    void (*two)(const uint4 *, const float *, const uint8_t *, const __nv_bfloat16 *, float *, int, int, int, int);
};
#define VARIANT(rb, nw, depth, c) {rb, nw, depth, c, w4a16_gemv<1, rb, nw, depth>, w4a16_gemv<2, rb, nw, depth>}
static const Variant variants[] = {VARIANT(1, 4, 1, 4), VARIANT(1, 8, 1, 2), VARIANT(2, 8, 1, 2),
                                   VARIANT(1, 4, 4, 2), VARIANT(1, 4, 4, 4), VARIANT(1, 8, 4, 1),
                                   VARIANT(1, 8, 4, 2), VARIANT(2, 8, 4, 1), VARIANT(2, 8, 4, 2),
                                   VARIANT(1, 8, 8, 1), VARIANT(1, 8, 8, 2), VARIANT(2, 4, 8, 2),
                                   VARIANT(1, 4, 2, 4), VARIANT(2, 8, 2, 2), VARIANT(4, 8, 2, 1)};
#define VARIANTS ((int)(sizeof variants / sizeof variants[0]))

int main(int argc, char **argv) {
    std::vector<std::pair<int, int>> shapes = {{7168, 7168}, {4096, 7168}, {28672, 4096}, {7168, 2048}};
    if (argc == 3)
        shapes = {{atoi(argv[1]), atoi(argv[2])}};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    printf("%6s %6s %3s %10s %9s %9s %8s %s\n", "N", "K", "M", "rel_err", "us", "TB/s", "of_copy", "variant");
    for (const auto &shape : shapes) {
        const int n = shape.first, k = shape.second;
        if (n % MAX_ROWS_PER_CTA || k % GROUP) {
            printf("N %% 512 and K %% 128 must be 0\n");
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
        int sms = 0;
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
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
        const double read_us = median_ms([&](int r) {
            stream_read<<<8 * sms, 256>>>(d_codes[r % copies], code_bytes / 16, (unsigned *)copy_dst);
        }) * 1e3;
        printf("%6d %6d: copy %.3f TB/s (read + write), reading the codes alone %.2f us = %.3f TB/s (%.3f of copy)\n", n, k,
               copy_tbps, read_us, code_bytes / (read_us * 1e-6) / 1e12, code_bytes / (read_us * 1e-6) / 1e12 / copy_tbps);
        for (int m : {1, 4, 8, 16}) {
            std::vector<float> first((size_t)MAX_TOKENS * n), y((size_t)MAX_TOKENS * n);
            double best_us = 1e30;
            char best[64] = "";
            for (int v = 0; v < VARIANTS; v++) {
                const Variant &var = variants[v];
                // K slices: the smallest split into whole groups (at least 256 k a slice) giving
                // ctas_per_sm CTAs an SM; each CTA stages its slice of x once.
                const int rows = 16 * var.rb * var.nw;
                int split = 1;
                for (int d = 1; d <= k / 256; d++)
                    if ((k / GROUP) % d == 0) {
                        split = d;
                        if ((n / rows) * d >= var.ctas_per_sm * sms)
                            break;
                    }
                const int slice_k = k / split, tt = m <= 8 ? 1 : 2;
                const size_t smem = (size_t)8 * tt * (slice_k + 8) * 2 + (size_t)rows * (slice_k / GROUP) * 8;
                if (smem > 227 * 1024) // past an SM's shared memory: this variant cannot run here
                    continue;
                const auto fn = tt == 1 ? var.one : var.two;
                CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
                const dim3 grid(n / rows, split);
                // Run r reads copy r % copies; timed runs keep adding into y: only the first is checked.
                auto launch = [&](int r, bool zero) {
                    const int i = r % copies;
                    if (zero)
                        CHECK(cudaMemsetAsync(d_y, 0, (size_t)MAX_TOKENS * n * 4));
                    fn<<<grid, var.nw * 32, smem>>>(d_codes[i], d_scales[i], d_zeros[i], d_x, d_y, m, n, k, slice_k);
                    CHECK(cudaGetLastError());
                };
                launch(0, true);
                CHECK(cudaDeviceSynchronize());
                CHECK(cudaMemcpy(y.data(), d_y, y.size() * 4, cudaMemcpyDeviceToHost));
                double worst = 0.0;
                if (v == 0) { // random columns against float64 of the same bf16 weights
                    first = y;
                    for (int check = 0; check < 256; check++) {
                        const int col = rng() % n;
                        for (int t = 0; t < m; t++) {
                            double want = 0.0, norm = 0.0;
                            for (int kk = 0; kk < k; kk++) {
                                const size_t gi = (size_t)col * groups + kk / GROUP;
                                const float s = bf16_value(__float2bfloat16(scales[gi]));
                                const double w =
                                    bf16_value(__float2bfloat16(((float)q[(size_t)col * k + kk] - zeros[gi]) * s));
                                want += w * bf16_value(x[(size_t)t * k + kk]);
                                norm += fabs(w * bf16_value(x[(size_t)t * k + kk]));
                            }
                            worst = std::max(worst, fabs(y[(size_t)t * n + col] - want) / (norm > 0 ? norm : 1.0));
                        }
                    }
                } else { // every other variant against the first, all columns
                    double scale = 0.0;
                    for (size_t i = 0; i < (size_t)m * n; i++)
                        scale = std::max(scale, (double)fabs(first[i]));
                    for (size_t i = 0; i < (size_t)m * n; i++)
                        worst = std::max(worst, fabs((double)y[i] - first[i]) / (scale > 0 ? scale : 1.0));
                }
                const double us = median_ms([&](int r) { launch(r, false); }) * 1e3;
                const double tbps = stream_bytes / (us * 1e-6) / 1e12;
                printf("%6d %6d %3d %10.2e %9.2f %9.3f %8.3f rb%d nw%d d%d c%d split %d\n", n, k, m, worst, us, tbps,
                       tbps / copy_tbps, var.rb, var.nw, var.depth, var.ctas_per_sm, split);
                if (us < best_us)
                    best_us = us, snprintf(best, sizeof best, "rb%d nw%d d%d c%d split %d", var.rb, var.nw, var.depth,
                                           var.ctas_per_sm, split);
            }
            const double tbps = stream_bytes / (best_us * 1e-6) / 1e12;
            printf("BEST %6d %6d %3d %9.2f us %9.3f TB/s %8.3f of copy (%.3f) %s\n", n, k, m, best_us, tbps,
                   tbps / copy_tbps, copy_tbps, best);
        }
        for (int i = 0; i < copies; i++)
            cudaFree(d_codes[i]), cudaFree(d_scales[i]), cudaFree(d_zeros[i]);
        cudaFree(d_x), cudaFree(d_y), cudaFree(copy_dst);
    }
    return 0;
}
