// The mainloop of the sm90 16-bit GEMM: the producer's TMA loads of one
// output tile's K blocks, and a consumer warpgroup's wgmma over them.
#pragma once

#include "kernels/common/pipeline.cuh"
#include "kernels/common/wgmma_ops.cuh"
#include "kernels/sm90/gemm_cfg.cuh"
#include "kernels/sm90/gemm_params.h"

// Loads one operand's ROWS x BK piece for one stage (rows of M for A, of N
// for B), multicast to every CTA of the cluster when MULTICAST. K-major
// operands come as one box of 64 (K) x ROWS; MN-major ones as boxes of
// 64 (MN) x 64 (K), one per 64 rows, each a 128-byte-swizzled chunk.
template <class Cfg, int ROWS, bool MN, bool MULTICAST>
TESS_DEVICE void load_operand(char *dst, const CUtensorMap *map, uint64_t *bar, int row0, int k0, int batch) {
    const uint16_t everyone = (uint16_t)((1u << Cfg::CLUSTER) - 1);
#pragma unroll
    for (int j = 0; j < (MN ? ROWS / 64 : 1); j++) {
        const int c0 = MN ? row0 + 64 * j : k0, c1 = MN ? k0 : row0;
        if (MULTICAST)
            tma_load_3d_multicast(dst + j * Cfg::MN_CHUNK_BYTES, map, bar, everyone, c0, c1, batch);
        else
            tma_load_3d(dst + j * Cfg::MN_CHUNK_BYTES, map, bar, c0, c1, batch);
    }
}

// Loads K blocks [k_begin, k_end) of tile (batch b, rows m0.., columns n0..) into the ring:
// this CTA's A, and its share (`rank` of CLUSTER) of the cluster's B tile. The
// stage's full barrier expects all of A and B: its own loads plus the B
// shares the other CTAs multicast into it.
template <class Cfg>
TESS_DEVICE void producer_load_tile(const tess_gemm_params &p, char *smem_a, char *smem_b, uint64_t *full,
                                    uint64_t *empty, pipe_cursor &c, int b, int m0, int n0, int k_begin, int k_end,
                                    int rank) {
    const int ba = p.a_batch_shared ? 0 : b, bb = p.b_batch_shared ? 0 : b;
    constexpr int B_SHARE_ROWS = Cfg::BN / Cfg::CLUSTER;
    for (int kb = k_begin; kb < k_end; kb++) {
        pipe_producer_acquire(empty, c);
        uint64_t *bar = &full[c.stage];
        mbar_arrive_expect_tx(bar, Cfg::A_STAGE_BYTES + Cfg::B_STAGE_BYTES);
        const int k0 = kb * Cfg::BK;
        load_operand<Cfg, Cfg::BM, Cfg::A_MN, false>(smem_a + c.stage * Cfg::A_STAGE_BYTES, &p.tma_a, bar, m0, k0, ba);
        load_operand<Cfg, B_SHARE_ROWS, Cfg::B_MN, (Cfg::CLUSTER > 1)>(
            smem_b + c.stage * Cfg::B_STAGE_BYTES + rank * Cfg::B_SHARE_BYTES, &p.tma_b, bar,
            n0 + rank * B_SHARE_ROWS, k0, bb);
        pipe_advance(c, Cfg::STAGES);
    }
}

// Releases a stage: one arrival per consumer warpgroup on the empty barrier
// of every CTA in the cluster, since each CTA's producer writes B into all of them.
template <class Cfg>
TESS_DEVICE void consumer_release(uint64_t *empty, int stage) {
    if (Cfg::CLUSTER == 1) {
        mbar_arrive(&empty[stage]);
    } else {
#pragma unroll
        for (int r = 0; r < Cfg::CLUSTER; r++)
            mbar_arrive_cluster(&empty[stage], (uint32_t)r);
    }
}

// One consumer warpgroup (index wg) accumulates its 64 x BN part of a tile
// over K blocks [k_begin, k_end).
// One wgmma group stays in flight: after issuing block kb, it waits for block
// kb - 1 and releases that slot.
template <class Cfg>
TESS_DEVICE void consumer_mma_tile(float (&acc)[Cfg::BN / 2], const tess_gemm_params &p, char *smem_a,
                                   char *smem_b, uint64_t *full, uint64_t *empty, pipe_cursor &c, int k_begin,
                                   int k_end, int wg, bool releases) {
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; i++)
        wgmma_fence_operand(acc[i]);
    int previous = -1;
    for (int kb = k_begin; kb < k_end; kb++) {
        pipe_consumer_wait(full, c);
        // This warpgroup's 64 rows: the second 8 KiB of a K-major A stage, or the second 64-row chunk.
        uint32_t a = smem_u32(smem_a + c.stage * Cfg::A_STAGE_BYTES) + wg * Cfg::MN_CHUNK_BYTES;
        uint32_t bt = smem_u32(smem_b + c.stage * Cfg::B_STAGE_BYTES);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < Cfg::BK / 16; kk++) {
            uint64_t da = smem_desc_sw128(a + kk * Cfg::A_K16_BYTES, Cfg::A_LBO, TESS_SW128_ATOM_BYTES);
            uint64_t db = smem_desc_sw128(bt + kk * Cfg::B_K16_BYTES, Cfg::B_LBO, TESS_SW128_ATOM_BYTES);
            wgmma_ss<Cfg::BN, Cfg::BF16, Cfg::A_MN, Cfg::B_MN>(acc, da, db, kb != k_begin || kk != 0);
        }
        wgmma_commit();
        wgmma_wait<1>();
        if (previous >= 0 && releases)
            consumer_release<Cfg>(empty, previous);
        previous = c.stage;
        pipe_advance(c, Cfg::STAGES);
    }
    wgmma_wait<0>();
    if (releases)
        consumer_release<Cfg>(empty, previous);
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; i++)
        wgmma_fence_operand(acc[i]);
}
