// The mainloop of the sm90 16-bit GEMM: the producer's TMA loads of one
// output tile's K blocks, and a consumer warpgroup's wgmma over them.
#pragma once

#include "kernels/common/pipeline.cuh"
#include "kernels/common/wgmma_ops.cuh"
#include "kernels/sm90/gemm_cfg.cuh"
#include "kernels/sm90/gemm_params.h"

// Loads the K blocks of tile (batch b, rows m0.., columns n0..) into the ring.
// K-major operands come as one box of 64 x rows; MN-major ones as boxes of
// 64 (MN) x 64 (K), one per 64 rows, each a 128-byte-swizzled chunk.
template <class Cfg>
TESS_DEVICE void producer_load_tile(const tess_gemm_params &p, char *smem_a, char *smem_b, uint64_t *full,
                                    uint64_t *empty, pipe_cursor &c, int b, int m0, int n0) {
    const int ba = p.a_batch_shared ? 0 : b, bb = p.b_batch_shared ? 0 : b;
    for (int kb = 0; kb < p.k_blocks; kb++) {
        pipe_producer_acquire(empty, c);
        mbar_arrive_expect_tx(&full[c.stage], Cfg::A_STAGE_BYTES + Cfg::B_STAGE_BYTES);
        char *a = smem_a + c.stage * Cfg::A_STAGE_BYTES, *bt = smem_b + c.stage * Cfg::B_STAGE_BYTES;
        const int k0 = kb * Cfg::BK;
        if (Cfg::A_MN) {
#pragma unroll
            for (int j = 0; j < Cfg::BM / 64; j++)
                tma_load_3d(a + j * 64 * Cfg::BK * 2, &p.tma_a, &full[c.stage], m0 + 64 * j, k0, ba);
        } else {
            tma_load_3d(a, &p.tma_a, &full[c.stage], k0, m0, ba);
        }
        if (Cfg::B_MN) {
#pragma unroll
            for (int j = 0; j < Cfg::BN / 64; j++)
                tma_load_3d(bt + j * 64 * Cfg::BK * 2, &p.tma_b, &full[c.stage], n0 + 64 * j, k0, bb);
        } else {
            tma_load_3d(bt, &p.tma_b, &full[c.stage], k0, n0, bb);
        }
        pipe_advance(c, Cfg::STAGES);
    }
}

// One consumer warpgroup (index wg) accumulates its 64 x BN part of a tile.
// One wgmma group stays in flight: after issuing block kb, it waits for block
// kb - 1 and releases that slot.
template <class Cfg>
TESS_DEVICE void consumer_mma_tile(float (&acc)[Cfg::BN / 2], const tess_gemm_params &p, char *smem_a,
                                   char *smem_b, uint64_t *full, uint64_t *empty, pipe_cursor &c, int wg,
                                   bool releases) {
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; i++)
        wgmma_fence_operand(acc[i]);
    int previous = -1;
    for (int kb = 0; kb < p.k_blocks; kb++) {
        pipe_consumer_wait(full, c);
        // This warpgroup's 64 rows: the second 8 KiB of a K-major A stage, or the second 64-row chunk.
        uint32_t a = smem_u32(smem_a + c.stage * Cfg::A_STAGE_BYTES) + wg * 64 * Cfg::BK * 2;
        uint32_t bt = smem_u32(smem_b + c.stage * Cfg::B_STAGE_BYTES);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < Cfg::BK / 16; kk++) {
            uint64_t da = smem_desc_sw128(a + kk * Cfg::A_K16_BYTES, Cfg::A_LBO, TESS_SW128_ATOM_BYTES);
            uint64_t db = smem_desc_sw128(bt + kk * Cfg::B_K16_BYTES, Cfg::B_LBO, TESS_SW128_ATOM_BYTES);
            wgmma_ss<Cfg::BN, Cfg::BF16, Cfg::A_MN, Cfg::B_MN>(acc, da, db, (kb | kk) != 0);
        }
        wgmma_commit();
        wgmma_wait<1>();
        if (previous >= 0 && releases)
            mbar_arrive(&empty[previous]);
        previous = c.stage;
        pipe_advance(c, Cfg::STAGES);
    }
    wgmma_wait<0>();
    if (releases)
        mbar_arrive(&empty[previous]);
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; i++)
        wgmma_fence_operand(acc[i]);
}
