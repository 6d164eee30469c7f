// Probe (issue 7, session 16): how fast can a short kernel stream a decode
// weight matrix (N rows of K bf16) through TMA, by box shape, against
// plain 16-byte loads and a device copy? The 16-token kernels draw
// 1.8 TB/s in-kernel on the H200 where the one-token float GEMV draws 2.8;
// this separates the access pattern and the kernel's fixed costs from the
// rest of the GEMM (wgmma, fixup, epilogue).
//
// TMA kernels: one CTA per (128-row tile, K share), the tiles' K split over
// the SMs as fill-mode stream-K does; one thread issues the loads into a
// ring of 192 KB, a consumer warpgroup waits for each stage and releases it.
//   box2d : 64 (K) x 128 rows, 16 KB stages x 12 (the GEMM's A stage)
//   box3d : 64 x 128 rows x 4 K chunks in one load, 64 KB stages x 3
//           (chunk outermost: each row's 4 chunks 128 row-requests apart)
//   box4d : 64 x 8 rows x 4 K chunks x 16 row groups, 64 KB x 3 (each row's
//           4 chunks 8 requests apart; smem keeps 1 KB swizzle atoms,
//           stage chunks 4 KB apart: a wgmma descriptor with SBO 4096)
//   none  : the same launch without loads (launch and set-up cost)
// ldg: the float GEMV's pattern: 128 threads x 4 rows a CTA, a warp reads
// 512 contiguous bytes of a row per load, the next one in flight.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Isrc \
//        dev/probes/stream_patterns.cu -o /tmp/stream_patterns
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/common/pipeline.cuh"
#include "probe_common.cuh"

enum { BOX2D, BOX3D, BOX4D, NONE, MODES };
static const char *mode_name[MODES] = {"box2d", "box3d", "box4d", "none"};
// Each CTA's ring: 192 KB, as much as the GEMM's 128x16 token tile keeps
// in flight (12 stages of 16 KB), leaving the SM's 227 KB a margin.
#define RING_BYTES (192 * 1024)

struct stamps {
    unsigned long long start, first, end;
};

TESS_DEVICE unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

TESS_DEVICE void tma_load_4d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1, int c2, int c3) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(smem_u32(dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}

// CTA b streams rows [128 tile, +128) over K chunks (of 64) [c0, c1).
template <int MODE>
__global__ void __launch_bounds__(256) tma_stream(const __grid_constant__ CUtensorMap map, int chunks, int split,
                                                  stamps *out) {
    extern __shared__ __align__(1024) unsigned char smem[];
    constexpr int STAGE = MODE == BOX2D ? 16384 : 65536, STAGES = RING_BYTES / STAGE, CPS = STAGE / 16384;
    __shared__ uint64_t full[RING_BYTES / 16384], empty[RING_BYTES / 16384]; // the most stages: 16 KB ones
    const unsigned long long t0 = now_ns();
    const int tile = blockIdx.x / split, s = blockIdx.x % split;
    const int c0 = chunks * s / split, c1 = chunks * (s + 1) / split; // chunks of 64 K
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++)
            mbar_init(&full[i], 1), mbar_init(&empty[i], 1);
        fence_mbar_init();
        tma_prefetch_descriptor(&map);
    }
    __syncthreads();
    pipe_cursor c = {0, 0};
    unsigned long long first = 0;
    if (MODE != NONE) {
        if (threadIdx.x == 0) {
            for (int k = c0; k < c1; k += CPS) {
                pipe_producer_acquire(empty, c);
                mbar_arrive_expect_tx(&full[c.stage], STAGE);
                char *dst = (char *)smem + c.stage * STAGE;
                if (MODE == BOX2D)
                    tma_load_3d(dst, &map, &full[c.stage], 0, tile * 128, k);
                else if (MODE == BOX3D)
                    tma_load_3d(dst, &map, &full[c.stage], 0, tile * 128, k);
                else
                    tma_load_4d(dst, &map, &full[c.stage], 0, 0, k, tile * 16);
                pipe_advance(c, STAGES);
            }
        } else if (threadIdx.x >= 128) {
            for (int k = c0; k < c1; k += CPS) {
                pipe_consumer_wait(full, c);
                if (k == c0)
                    first = now_ns();
                if (threadIdx.x == 128)
                    mbar_arrive(&empty[c.stage]);
                pipe_advance(c, STAGES);
            }
        }
    }
    if (threadIdx.x == 128 || (MODE == NONE && threadIdx.x == 0)) {
        out[blockIdx.x].start = t0, out[blockIdx.x].first = first, out[blockIdx.x].end = now_ns();
    }
}

// The float GEMV's loads: CTA b owns rows 4b .. 4b + 3, thread t chunks t, t + 128, ...
__global__ void __launch_bounds__(128) ldg_stream(const char *w, long ld_bytes, int chunks, int rows,
                                                  unsigned *sink) {
    unsigned x = 0;
    const char *r[4];
    for (int i = 0; i < 4; i++)
        r[i] = w + (long)min(4 * blockIdx.x + i, rows - 1) * ld_bytes;
    for (int c = threadIdx.x; c < chunks; c += 128) {
        uint4 v[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(v[i].x), "=r"(v[i].y), "=r"(v[i].z), "=r"(v[i].w)
                         : "l"(r[i] + (long)c * 16));
#pragma unroll
        for (int i = 0; i < 4; i++)
            x ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
    }
    if (x == 0x12345678u)
        *sink = x;
}

static CUtensorMap make_map(int mode, void *w, int n, int k) {
    CUtensorMap m;
    const cuuint64_t ld = (cuuint64_t)k * 2;
    cuuint32_t es[5] = {1, 1, 1, 1, 1};
    CUresult r;
    if (mode == BOX4D) { // (k % 64, row % 8, k / 64, row / 8)
        cuuint64_t dims[4] = {64, 8, (cuuint64_t)k / 64, (cuuint64_t)n / 8};
        cuuint64_t strides[3] = {ld, 128, 8 * ld};
        cuuint32_t box[4] = {64, 8, 4, 16};
        r = encode_fn()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, w, dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    } else { // (k % 64, row, k / 64)
        cuuint64_t dims[3] = {64, (cuuint64_t)n, (cuuint64_t)k / 64};
        cuuint64_t strides[2] = {ld, 128};
        cuuint32_t box[3] = {64, 128, mode == BOX3D ? 4u : 1u};
        r = encode_fn()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, w, dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "encode mode %s failed: %d\n", mode_name[mode], (int)r);
        exit(1);
    }
    return m;
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

#define BUFFERS 4 // rotated, so that no run finds its weights in the 50-60 MB L2

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 2112, k = argc > 2 ? atoi(argv[2]) : 7168;
    const size_t bytes = (size_t)n * k * 2;
    void *w[BUFFERS], *copy_dst;
    for (int b = 0; b < BUFFERS; b++) {
        CHECK(cudaMalloc(&w[b], bytes));
        CHECK(cudaMemset(w[b], 0x3c + b, bytes));
    }
    CHECK(cudaMalloc(&copy_dst, bytes));
    unsigned *sink;
    CHECK(cudaMalloc(&sink, 4));
    const int tiles = (n + 127) / 128, chunks = k / 64, split = std::max(1, 132 / tiles), grid = tiles * split;
    stamps *st;
    CHECK(cudaMalloc(&st, sizeof(stamps) * grid));
    std::vector<stamps> host(grid);
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    void (*kernels[MODES])(CUtensorMap, int, int, stamps *) = {tma_stream<BOX2D>, tma_stream<BOX3D>,
                                                                tma_stream<BOX4D>, tma_stream<NONE>};
    for (int m = 0; m < MODES; m++)
        CHECK(cudaFuncSetAttribute(kernels[m], cudaFuncAttributeMaxDynamicSharedMemorySize, RING_BYTES));
    printf("N=%d K=%d: %.1f MB, %d tiles x %d K shares = %d CTAs\n", n, k, bytes / 1e6, tiles, split, grid);
    printf("%-6s %9s %9s %11s %11s %11s\n", "mode", "event_us", "GB/s", "span_us", "first_us", "cta_us");
    for (int m = 0; m <= MODES + 1; m++) { // the TMA modes, then ldg, then the copy
        std::vector<double> ev, span, first, cta;
        CUtensorMap maps[BUFFERS];
        if (m < MODES)
            for (int b = 0; b < BUFFERS; b++)
                maps[b] = make_map(m == NONE ? BOX2D : m, w[b], n, k);
        for (int rep = 0; rep < PROBE_REPS + PROBE_WARMUPS; rep++) {
            const int b = rep % BUFFERS;
            hold<<<1, 1>>>(PROBE_HOLD_CYCLES);
            CHECK(cudaEventRecord(e0));
            if (m < MODES)
                kernels[m]<<<grid, 256, RING_BYTES>>>(maps[b], chunks, split, st);
            else if (m == MODES)
                ldg_stream<<<(n + 3) / 4, 128>>>((const char *)w[b], (long)k * 2, k / 8, n, sink);
            else
                CHECK(cudaMemcpyAsync(copy_dst, w[b], bytes, cudaMemcpyDeviceToDevice));
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            CHECK(cudaGetLastError());
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep < PROBE_WARMUPS)
                continue;
            ev.push_back(ms * 1e3);
            if (m < MODES) {
                CHECK(cudaMemcpy(host.data(), st, sizeof(stamps) * grid, cudaMemcpyDeviceToHost));
                unsigned long long lo = ~0ull, hi = 0;
                double f = 0, c = 0;
                for (const stamps &s : host) {
                    lo = std::min(lo, s.start), hi = std::max(hi, s.end);
                    f += m == NONE ? 0 : (double)(s.first - s.start), c += (double)(s.end - s.start);
                }
                span.push_back((hi - lo) / 1e3), first.push_back(f / grid / 1e3), cta.push_back(c / grid / 1e3);
            }
        }
        const char *name = m < MODES ? mode_name[m] : m == MODES ? "ldg" : "copy";
        const double t = median(ev), rate = (m == MODES + 1 ? 2.0 : 1.0) * bytes / (t * 1e3);
        if (m < MODES)
            printf("%-6s %9.2f %9.0f %11.2f %11.2f %11.2f\n", name, t, rate, median(span), median(first), median(cta));
        else
            printf("%-6s %9.2f %9.0f\n", name, t, rate);
    }
    return 0;
}
