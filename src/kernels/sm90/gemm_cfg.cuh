// Compile-time configuration of an sm90 16-bit GEMM kernel: the CTA tile,
// the ring depth, the input type and each operand's major-ness, and the
// shared-memory footprint derived from them.
#pragma once

#include "kernels/common/fragment.h"
#include "kernels/common/smem_desc.cuh"
#include "kernels/sm90/gemm_params.h"

// 3 warpgroups: one producer (TMA), two consumers (wgmma, TESS_SM90_CONSUMERS
// in gemm_params.h), each consumer owning 64 rows of the BM = 128 tile.
#define TESS_SM90_THREADS 384
// K per pipeline stage: one 128-byte swizzle row of 16-bit elements.
#define TESS_SM90_BK 64
// Register budgets after setmaxnreg: 128 x 40 + 256 x 232 = 64512 <= 65536.
#define TESS_SM90_PRODUCER_REGS 40
#define TESS_SM90_CONSUMER_REGS 232

// The epilogue stages this many columns of a warpgroup's tile at a time
// (two 64 x 64 sub-tiles, 16 KiB), so that the ring can keep more stages.
#define TESS_EPI_ROUND_COLS 128

template <int BM_, int BN_, int STAGES_, int CLUSTER_, bool BF16_, int A_MN_, int B_MN_>
struct gemm_cfg {
    static constexpr int BM = BM_, BN = BN_, BK = TESS_SM90_BK, STAGES = STAGES_;
    // CLUSTER CTAs along M share each B tile: each loads 1/CLUSTER of it and
    // multicasts it to all (TMA multicast), so B crosses L2 once per cluster.
    static constexpr int CLUSTER = CLUSTER_;
    static constexpr bool BF16 = BF16_;
    static constexpr int A_MN = A_MN_, B_MN = B_MN_;
    static_assert(CLUSTER == 1 || CLUSTER == 2 || CLUSTER == 4, "clusters of 1, 2 or 4 CTAs along M");
    static_assert(BN / CLUSTER % 64 == 0, "each CTA multicasts whole 64-row (or 64-column) pieces of B");
    static_assert(BM == 64 * TESS_SM90_CONSUMERS, "each consumer warpgroup owns 64 rows");
    static_assert(BN % 64 == 0 && BN <= 256, "BN is a multiple of the 64-column epilogue sub-tile");
    static constexpr int A_STAGE_BYTES = BM * BK * 2;
    static constexpr int B_STAGE_BYTES = BN * BK * 2;
    // Each stage's B share loaded by one CTA of the cluster.
    static constexpr int B_SHARE_BYTES = B_STAGE_BYTES / CLUSTER;
    static constexpr int EPI_COLS = BN % TESS_EPI_ROUND_COLS == 0 ? TESS_EPI_ROUND_COLS : TESS_EPI_SUBTILE;
    static constexpr int EPI_WG_BYTES = (EPI_COLS / TESS_EPI_SUBTILE) * TESS_EPI_SUBTILE_BYTES;
    static constexpr int EPI_BYTES = TESS_SM90_CONSUMERS * EPI_WG_BYTES;
    static constexpr int BARRIER_BYTES = 2 * STAGES * 8;
    // +1024: the dynamic shared memory base is aligned up to a swizzle atom.
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE_BYTES + B_STAGE_BYTES) + EPI_BYTES + BARRIER_BYTES + 1024;
    static_assert(SMEM_BYTES <= 227 * 1024, "over the 227 KiB a Hopper CTA may use");
    // Moving 16 along K inside a stage: 32 bytes along a K-major row, or 16
    // rows of 128 bytes in an MN-major chunk.
    static constexpr uint32_t A_K16_BYTES = A_MN ? 16 * 128 : 32;
    static constexpr uint32_t B_K16_BYTES = B_MN ? 16 * 128 : 32;
    // 64 rows (of M or N) of one stage: a consumer warpgroup's share of A, and
    // one 64 (MN) x 64 (K) TMA box of an MN-major operand.
    static constexpr int MN_CHUNK_BYTES = 64 * BK * 2;
    // Leading byte offset: the distance between 64-wide MN chunks (one 64 x 64 box);
    // unused ("assumed 1", i.e. 16 bytes) for K-major tiles.
    static constexpr uint32_t A_LBO = A_MN ? MN_CHUNK_BYTES : 16;
    static constexpr uint32_t B_LBO = B_MN ? MN_CHUNK_BYTES : 16;
};
