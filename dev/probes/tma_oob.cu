// Probe (issue 7, session 17): do TMA boxes that reach past a tensor's edge
// (rows zero-filled) stream slower than boxes inside it? Tiles that pad M
// (M = 64 on 128-row tiles) run far slower than their bytes say: 128x32
// tiles at 64x4096x7168 bf16 took 45.5 us on the H200 against 27.8 us at
// M = 128 with the same grid (dev/NOTES.md, session 17).
//
// Mimics that GEMM's loads without the math: 128 CTAs, CTA i streams weight
// rows [32 i, 32 i + 32) of a 4096 x 7168 bf16 matrix (B: 4 KB boxes) and,
// in the same stages, the tokens (A: every CTA the same rows, from L2) in
// an 11-stage ring; a consumer warpgroup only waits and releases.
//   a128 : A tensor of 128 rows, box 128 rows (all inside)
//   oob  : A tensor of 64 rows, box 128 rows (half past the edge, zero-filled)
//   a64  : A tensor of 64 rows, box 64 rows
//   none : B only
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Isrc \
//        dev/probes/tma_oob.cu -o /tmp/tma_oob
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/common/pipeline.cuh"
#include "probe_common.cuh"

enum { A128, OOB, A64, NONE, MODES };
static const char *mode_name[MODES] = {"a128", "oob", "a64", "none"};
#define STAGES 11                 // the 128x32 bf16 GEMM tile's ring
#define A_BYTES (128 * 64 * 2)    // a 128-row A box of 64 K (a 64-row box fills half)
#define B_BYTES (32 * 64 * 2)     // a 32-row B box of 64 K
#define STAGE_BYTES (A_BYTES + B_BYTES)

__global__ void __launch_bounds__(256) stream(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,
                                              int mode, int chunks) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++)
            mbar_init(&full[i], 1), mbar_init(&empty[i], 1);
        fence_mbar_init();
    }
    __syncthreads();
    pipe_cursor c = {0, 0};
    const uint32_t a_tx = mode == NONE ? 0 : mode == A64 ? A_BYTES / 2 : A_BYTES;
    if (threadIdx.x == 0) {
        for (int k = 0; k < chunks; k++) {
            pipe_producer_acquire(empty, c);
            mbar_arrive_expect_tx(&full[c.stage], a_tx + B_BYTES);
            char *dst = (char *)smem + c.stage * STAGE_BYTES;
            if (mode != NONE)
                tma_load_3d(dst, &a, &full[c.stage], 0, 0, k);
            tma_load_3d(dst + A_BYTES, &b, &full[c.stage], 0, 32 * blockIdx.x, k);
            pipe_advance(c, STAGES);
        }
    } else if (threadIdx.x == 128) {
        for (int k = 0; k < chunks; k++) {
            pipe_consumer_wait(full, c);
            mbar_arrive(&empty[c.stage]);
            pipe_advance(c, STAGES);
        }
    }
}

static CUtensorMap make_map(void *w, int rows, int k, int box_rows) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = encode_fn();
    CUtensorMap m;
    cuuint64_t dims[3] = {64, (cuuint64_t)rows, (cuuint64_t)k / 64}; // (k % 64, row, k / 64), as the GEMM's maps
    cuuint64_t strides[2] = {(cuuint64_t)k * 2, 128};
    cuuint32_t box[3] = {64, (cuuint32_t)box_rows, 1}, es[3] = {1, 1, 1};
    if (encode(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, w, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) !=
        CUDA_SUCCESS) {
        fprintf(stderr, "tensor map encoding failed\n");
        exit(1);
    }
    return m;
}

#define BUFFERS 4 // weights rotated so that no run finds them in L2

int main() {
    const int n = 4096, k = 7168, grid = n / 32, chunks = k / 64;
    void *w[BUFFERS], *tokens;
    for (int i = 0; i < BUFFERS; i++) {
        CHECK(cudaMalloc(&w[i], (size_t)n * k * 2));
        CHECK(cudaMemset(w[i], 0x3c, (size_t)n * k * 2));
    }
    CHECK(cudaMalloc(&tokens, (size_t)128 * k * 2));
    CHECK(cudaMemset(tokens, 0x3c, (size_t)128 * k * 2));
    CHECK(cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, STAGES * STAGE_BYTES));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    printf("weights %d x %d bf16 (%.1f MB), %d CTAs of 32 rows, %d stages of %d KB\n", n, k, n * (double)k * 2e-6,
           grid, STAGES, STAGE_BYTES / 1024);
    printf("%-5s %9s %12s\n", "mode", "event_us", "weights_GB/s");
    for (int m = 0; m < MODES; m++) {
        const CUtensorMap a = make_map(tokens, m == A128 ? 128 : 64, k, m == A64 ? 64 : 128);
        CUtensorMap b[BUFFERS];
        for (int i = 0; i < BUFFERS; i++)
            b[i] = make_map(w[i], n, k, 32);
        std::vector<double> t;
        for (int rep = 0; rep < PROBE_REPS + PROBE_WARMUPS; rep++) {
            hold<<<1, 1>>>(PROBE_HOLD_CYCLES);
            CHECK(cudaEventRecord(e0));
            stream<<<grid, 256, STAGES * STAGE_BYTES>>>(a, b[rep % BUFFERS], m, chunks);
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            CHECK(cudaGetLastError());
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep >= PROBE_WARMUPS)
                t.push_back(ms * 1e3);
        }
        std::sort(t.begin(), t.end());
        const double us = t[t.size() / 2];
        printf("%-5s %9.2f %12.0f\n", mode_name[m], us, n * (double)k * 2 / (us * 1e3));
    }
    return 0;
}
