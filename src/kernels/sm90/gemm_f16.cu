// The sm90 16-bit GEMM: a persistent, warp-specialized kernel. Warpgroup 0
// produces (one thread issues TMA loads into a STAGES-deep ring); warpgroups
// 1 and 2 consume (wgmma, 64 rows each), then run the epilogue of the tile
// while the producer already fetches the next. Tiles are visited in the
// grouped order of kernels/common/sched.h, CTA i taking tiles i, i + grid, ...
#include <cuda_runtime.h>

#include "core/error.h"
#include "kernels/common/sched.h"
#include "kernels/sm90/epilogue.cuh"
#include "kernels/sm90/gemm_kernels.h"
#include "kernels/sm90/mainloop_f16.cuh"

template <class Cfg>
__global__ void __launch_bounds__(TESS_SM90_THREADS, 1) gemm_sm90_f16(const __grid_constant__ tess_gemm_params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem_raw[];
    // TMA's 128-byte swizzle needs each tile 1024-byte aligned.
    char *smem = (char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    char *smem_a = smem;
    char *smem_b = smem_a + Cfg::STAGES * Cfg::A_STAGE_BYTES;
    char *staging = smem_b + Cfg::STAGES * Cfg::B_STAGE_BYTES;
    uint64_t *full = (uint64_t *)(staging + Cfg::EPI_BYTES);
    uint64_t *empty = full + Cfg::STAGES;

    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::STAGES; s++) {
            mbar_init(&full[s], 1);                     // the producer's expect_tx arrival
            mbar_init(&empty[s], TESS_SM90_CONSUMERS); // one arrival per consumer warpgroup
        }
        fence_mbar_init();
        tma_prefetch_descriptor(&p.tma_a);
        tma_prefetch_descriptor(&p.tma_b);
        tma_prefetch_descriptor(&p.tma_d);
    }
    __syncthreads();

    const int wg = warpgroup_index();
    pipe_cursor cursor = {0, 0};
    if (wg == 0) {
        setmaxnreg_dec<TESS_SM90_PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            for (int tile = blockIdx.x; tile < p.total_tiles; tile += gridDim.x) {
                int b, mt, nt;
                tess_tile_coord(tile, p.m_tiles, p.n_tiles, p.group_m, &b, &mt, &nt);
                producer_load_tile<Cfg>(p, smem_a, smem_b, full, empty, cursor, b, mt * Cfg::BM, nt * Cfg::BN);
            }
        }
    } else {
        setmaxnreg_inc<TESS_SM90_CONSUMER_REGS>();
        const int cw = wg - 1, t = threadIdx.x % 128;
        char *my_staging = staging + cw * Cfg::EPI_WG_BYTES;
        float acc[Cfg::BN / 2];
        bool pending = false;
        for (int tile = blockIdx.x; tile < p.total_tiles; tile += gridDim.x) {
            int b, mt, nt;
            tess_tile_coord(tile, p.m_tiles, p.n_tiles, p.group_m, &b, &mt, &nt);
            consumer_mma_tile<Cfg>(acc, p, smem_a, smem_b, full, empty, cursor, cw, t == 0);
            const int m0 = mt * Cfg::BM + cw * 64, n0 = nt * Cfg::BN;
            if (p.d_direct) {
                epilogue_store_direct<Cfg>(p, acc, t, b, m0, n0);
            } else {
                epilogue_store16<Cfg>(p, acc, my_staging, cw, t, b, m0, n0, pending);
                pending = true;
            }
        }
        if (pending && t == 0)
            tma_store_wait<0>(); // shared memory must outlive the stores reading it
    }
#endif
}

template <class Cfg>
static tess_status launch_gemm(const tess_gemm_params *p, int grid, void *stream) {
    auto kernel = gemm_sm90_f16<Cfg>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES);
    if (err != cudaSuccess)
        return tess_cuda_status(err, "setting the GEMM kernel's shared memory size");
    kernel<<<grid, TESS_SM90_THREADS, Cfg::SMEM_BYTES, (cudaStream_t)stream>>>(*p);
    return tess_cuda_status(cudaGetLastError(), "launching the sm90 GEMM kernel");
}

// One table entry for configuration (BM, BN, STAGES, input, A major, B major).
#define TESS_GEMM_ENTRY(BM, BN, ST, BF, AMN, BMN)                                                                  \
    {BM, BN, TESS_SM90_BK, ST, BF ? TESS_DTYPE_BF16 : TESS_DTYPE_F16, AMN, BMN,                                 \
     gemm_cfg<BM, BN, ST, BF, AMN, BMN>::SMEM_BYTES, TESS_SM90_THREADS, launch_gemm<gemm_cfg<BM, BN, ST, BF, AMN, BMN>>}
// Both input types and all four operand majors of one tile configuration.
#define TESS_GEMM_TILE(BM, BN, ST)                                                                                 \
    TESS_GEMM_ENTRY(BM, BN, ST, true, 0, 0), TESS_GEMM_ENTRY(BM, BN, ST, true, 0, 1),                              \
        TESS_GEMM_ENTRY(BM, BN, ST, true, 1, 0), TESS_GEMM_ENTRY(BM, BN, ST, true, 1, 1),                          \
        TESS_GEMM_ENTRY(BM, BN, ST, false, 0, 0), TESS_GEMM_ENTRY(BM, BN, ST, false, 0, 1),                        \
        TESS_GEMM_ENTRY(BM, BN, ST, false, 1, 0), TESS_GEMM_ENTRY(BM, BN, ST, false, 1, 1)

// Tile configurations: 128 x 256 (3 stages of 48 KiB, 64 KiB of staging) for
// large problems; 128 x 128 (5 stages of 32 KiB) when 128 x 256 tiles would
// leave SMs idle.
extern "C" const tess_gemm_kernel tess_gemm_sm90_kernels[] = {
    TESS_GEMM_TILE(128, 256, 3),
    TESS_GEMM_TILE(128, 128, 5),
};
extern "C" const int tess_gemm_sm90_kernel_count = sizeof(tess_gemm_sm90_kernels) / sizeof(tess_gemm_sm90_kernels[0]);
