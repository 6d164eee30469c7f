// The mainloop of the sm90 GEMM: the producer's TMA loads of one output
// tile's K blocks (and, for block-scaled FP8, their scale factors), and a
// consumer warpgroup's wgmma over them, with or without promotion.
#pragma once

#include "kernels/common/pipeline.cuh"
#include "kernels/common/wgmma_ops.cuh"
#include "kernels/sm90/k_grouped.cuh"
#include "kernels/sm90/gemm_cfg.cuh"
#include "kernels/sm90/gemm_params.h"

// Loads one operand's ROWS x BK piece for one stage (rows of M for A, of N
// for B), multicast to every CTA of the cluster when MULTICAST and not
// `alone` (a piece this CTA loads for itself only). K-major operands come
// as one box of 64 (K) x ROWS; MN-major ones as boxes of 64 (MN) x 64 (K),
// one per 64 rows, each a 128-byte-swizzled chunk.
template <class Cfg, int ROWS, bool MN, bool MULTICAST>
TESS_DEVICE void load_operand(char *dst, const CUtensorMap *map, uint64_t *bar, int row0, int k0, int batch,
                              bool alone = false) {
    const uint16_t everyone = (uint16_t)((1u << Cfg::CLUSTER) - 1);
#pragma unroll
    for (int j = 0; j < (MN ? ROWS / 64 : 1); j++) {
        const int c0 = MN ? row0 + 64 * j : k0, c1 = MN ? k0 : row0;
        if (MULTICAST && !alone)
            tma_load_3d_multicast(dst + j * Cfg::MN_CHUNK_BYTES, map, bar, everyone, c0, c1, batch);
        else
            tma_load_3d(dst + j * Cfg::MN_CHUNK_BYTES, map, bar, c0, c1, batch);
    }
}

// Where one producer lane copies a tile's block factors from: for each of
// its rows of A (r = lane + 32 i) and its B factors (column lane + 32 i of a
// 1x128 B; 128-column block lane of the tile's for a 128x128 B), the
// factor of K block 0 (K block kb is kb * stride_k further), and whether it
// lies in the matrix. Worked out once per tile, so that each stage costs a
// few adds and copies.
template <class Cfg>
struct scale_sources {
    static_assert(Cfg::BM % 32 == 0, "each of the warp's 32 lanes copies as many row factors");
    static_assert(Cfg::B_FACTORS <= 32 || Cfg::B_FACTORS % 32 == 0, "B factors in whole rounds of the warp");
    static constexpr int ROWS = Cfg::BM / 32;
    static constexpr int COLS = (Cfg::B_FACTORS + 31) / 32;
    const float *a[ROWS], *b[COLS];
    bool a_in[ROWS], b_in[COLS];
};

// Fills a lane's scale_sources for tile `tile`. Rows past M and columns
// past N point at the last one and read as 0.
template <class Cfg>
TESS_DEVICE void scale_sources_init(scale_sources<Cfg> &s, const tess_gemm_params &p, const tile_coord &tile,
                                    int lane) {
    const int ba = a_factor_batch(p, tile), bb = b_factor_batch(p, tile);
    const int m0 = tile.m0, n0 = tile.n0;
#pragma unroll
    for (int i = 0; i < scale_sources<Cfg>::ROWS; i++) {
        const int m = m0 + lane + 32 * i;
        s.a_in[i] = m < p.m;
        s.a[i] = p.scale_a.data + tess_scale_offset(&p.scale_a.layout, ba, m < p.m ? m : p.m - 1, 0);
    }
#pragma unroll
    for (int i = 0; i < scale_sources<Cfg>::COLS; i++) {
        const int f = lane + 32 * i; // the lane's factor: a column, or a 128-column block past the tile's first
        const int n = Cfg::SCALING == TESS_SCALING_BLOCK_ROWS_COLS ? n0 + f
                      : f == 0                                     ? n0
                                                                   : (n0 / TESS_SCALE_BLOCK + f) * TESS_SCALE_BLOCK;
        s.b_in[i] = n < p.n;
        s.b[i] = p.scale_b.data + tess_scale_offset(&p.scale_b.layout, bb, n < p.n ? n : p.n - 1, 0);
    }
}

// Copies the factors of K block kb into a stage's scale area: BM row factors
// of A, then the B_FACTORS of B (B_FACTOR_PITCH apart, at b_factor_slot). The lane's copies
// count as one arrival on the stage's full barrier once they land. (For
// factors whose layout TMA cannot read; load_block_scales_tma otherwise.)
template <class Cfg>
TESS_DEVICE void load_block_scales(const tess_gemm_params &p, const scale_sources<Cfg> &s, float *dst,
                                   uint64_t *bar, int kb, int lane) {
    const int64_t ka = (int64_t)kb * p.scale_a.layout.stride_k, kbb = (int64_t)kb * p.scale_b.layout.stride_k;
#pragma unroll
    for (int i = 0; i < scale_sources<Cfg>::ROWS; i++)
        cp_async_4(dst + lane + 32 * i, s.a[i] + ka, s.a_in[i]);
#pragma unroll
    for (int i = 0; i < scale_sources<Cfg>::COLS; i++)
        if (Cfg::B_FACTORS % 32 == 0 || lane < Cfg::B_FACTORS)
            cp_async_4(dst + Cfg::A_FACTOR_SPAN + (lane + 32 * i) * Cfg::B_FACTOR_PITCH + Cfg::b_factor_slot(kb), s.b[i] + kbb,
                       s.b_in[i]);
    cp_async_mbar_arrive_noinc(bar);
}

// Loads the factors of K block kb into a stage's scale area by TMA, counted
// in the stage's transaction bytes (Cfg::SCALE_TX_BYTES): BM row factors of
// A (map_a; fewer in the tile where A's rows end, from tma_scale_a_edge),
// and B's for the tile's columns (per column, or a box of K blocks per
// 128-column block). Factors past the arrays' edges read as 0.
template <class Cfg>
TESS_DEVICE void load_block_scales_tma(const tess_gemm_params &p, const CUtensorMap *map_a, float *dst, uint64_t *bar,
                                       const tile_coord &tile, int kb) {
    const int ba = a_factor_batch(p, tile), bb = b_factor_batch(p, tile);
    tma_load_3d(dst, map_a, bar, tile.m0 - Cfg::a_factor_shift(tile.m0), kb, ba);
    if (Cfg::SCALING == TESS_SCALING_BLOCK_ROWS_COLS)
        tma_load_3d(dst + Cfg::A_FACTOR_SPAN, &p.tma_scale_b, bar, tile.n0, kb, bb);
    else
        tma_load_3d(dst + Cfg::A_FACTOR_SPAN, &p.tma_scale_b, bar, kb - Cfg::b_factor_slot(kb), tile.n0 / TESS_SCALE_BLOCK, bb);
}

// Loads K blocks [k_begin, k_end) of tile `tile` (K rows from k_origin on:
// a k-grouped tile's group's first token) into the ring: this CTA's
// A, and its share (`rank` of CLUSTER) of the cluster's B tile. The stage's
// full barrier expects all of A and B: its own loads plus the B shares the
// other CTAs multicast into it (or, for a tile with b_whole, all its own:
// the same bytes). Run by Cfg::PRODUCER_THREADS lanes.
// Where Cfg::PUBLISHES_TILES, the lane that arms the tile's first stage
// first writes the tile's coordinates into that stage's slot (its arrive
// releases them to the consumers' wait).
template <class Cfg>
TESS_DEVICE void producer_load_tile(const tess_gemm_params &p, char *smem_a, char *smem_b, char *smem_scales,
                                    uint64_t *full, uint64_t *empty, pipe_cursor &c, const tile_coord &tile,
                                    int k_begin, int k_end, int rank, int lane, tile_coord *slots,
                                    int k_origin = 0) {
    const int ba = p.a_batch_shared ? 0 : tile.a_batch, bb = p.b_batch_shared ? 0 : tile.b_batch;
    const int m0 = tile.m0, n0 = tile.n0;
    constexpr int B_SHARE_ROWS = Cfg::BN / Cfg::CLUSTER;
    const bool by_tma = factors_by_tma<Cfg>(p);
    // A tile whose rows (columns) end inside it loads just those that exist
    // (gemm_params.h tma_a_edge): the stage then expects fewer bytes.
    const bool a_edge = !Cfg::GROUPED && !Cfg::A_MN && p.a_edge_rows && m0 < p.m && m0 + Cfg::BM > p.m;
    const bool b_edge =
        !Cfg::GROUPED && !Cfg::B_MN && Cfg::CLUSTER == 1 && p.b_edge_rows && n0 < p.n && n0 + Cfg::BN > p.n;
    const CUtensorMap *map_a = a_edge ? &p.tma_a_edge : &p.tma_a, *map_b = b_edge ? &p.tma_b_edge : &p.tma_b;
    const CUtensorMap *map_factors_a = a_edge ? &p.tma_scale_a_edge : &p.tma_scale_a;
    const uint32_t factors_tx =
        Cfg::SCALE_TX_BYTES - (a_edge ? (Cfg::A_FACTOR_BOX - tess_edge_factor_rows(p.a_edge_rows)) * sizeof(float) : 0);
    // A dense tile wholly past M (a cluster's second tile where M ends in
    // its first) loads no A: its rows feed only accumulators never stored,
    // and a box of rows TMA must fill with zeros would stream at half speed.
    const bool a_none = !Cfg::GROUPED && m0 >= p.m;
    const bool b_whole = Cfg::GROUPED_ALONG_M && Cfg::CLUSTER > 1 && tile.b_whole;
    const uint32_t stage_tx = (a_none ? 0 : a_edge ? p.a_edge_rows * TESS_SM90_BK_BYTES : Cfg::A_STAGE_BYTES) +
                              (b_edge ? p.b_edge_rows * TESS_SM90_BK_BYTES : Cfg::B_STAGE_BYTES) +
                              (by_tma ? factors_tx : 0);
    scale_sources<Cfg> sources;
    if (Cfg::BLOCK_SCALED && !by_tma)
        scale_sources_init<Cfg>(sources, p, tile, lane);
    for (int kb = k_begin; kb < k_end; kb++) {
        pipe_producer_acquire(empty, c);
        uint64_t *bar = &full[c.stage];
        float *factors = (float *)(smem_scales + c.stage * Cfg::SCALE_STAGE_BYTES);
        if (elect_one_sync()) {
            if (Cfg::PUBLISHES_TILES && kb == k_begin)
                slots[c.stage] = tile;
            mbar_arrive_expect_tx(bar, stage_tx);
            if (by_tma)
                load_block_scales_tma<Cfg>(p, map_factors_a, factors, bar, tile, kb);
            const int k0 = k_origin + kb * Cfg::BK;
            if (!a_none)
                load_operand<Cfg, Cfg::BM, Cfg::A_MN, false>(smem_a + c.stage * Cfg::A_STAGE_BYTES, map_a, bar, m0,
                                                             k0, ba);
            // B: share r of the cluster's tile, multicast unless `alone`.
            const auto load_b_share = [&](int r, bool alone) {
                load_operand<Cfg, B_SHARE_ROWS, Cfg::B_MN, (Cfg::CLUSTER > 1)>(
                    smem_b + c.stage * Cfg::B_STAGE_BYTES + r * Cfg::B_SHARE_BYTES, map_b, bar,
                    n0 + r * B_SHARE_ROWS, k0, bb, alone);
            };
            if (b_whole) // every share, for this CTA alone
#pragma unroll
                for (int r = 0; r < Cfg::CLUSTER; r++)
                    load_b_share(r, true);
            else
                load_b_share(rank, false);
        }
        if (Cfg::BLOCK_SCALED && !by_tma)
            load_block_scales<Cfg>(p, sources, factors, bar, kb, lane);
        pipe_advance(c, Cfg::STAGES);
    }
}

// Releases a stage: one arrival on the empty barrier of every CTA in the cluster.
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

// Whether thread t (of the warpgroup's 128) of a consumer warpgroup
// releases stages: the first of the warpgroup, or of each warp
// (Cfg::RELEASERS of them).
template <class Cfg>
TESS_DEVICE bool releasing_thread(int t) {
    return t % (128 / Cfg::RELEASERS) == 0;
}

// A consumer warpgroup with nothing to compute in a tile (Cfg::SKIPS_EMPTY_ROWS)
// walks K blocks [k_begin, k_end) of the ring all the same: it waits for
// each stage and releases it (its releasing threads, as in consumer_mma),
// so that the stage's releases still count every consumer.
// Every warp must have seen a stage's fill before it is released: a wait
// checks only the phase's parity, so a warp still on its way (from a
// register-store epilogue, which ends with no barrier) would find the stage
// refilled, take the next fill for the one it waits for and stay a lap
// behind the ring, where the warpgroup hangs. Where the warpgroup computes,
// its wgmmas, which every warp issues, order the waits before the release;
// here the warpgroup's barrier does (`barrier`, 128 threads).
template <class Cfg>
TESS_DEVICE void consumer_follow_ring(uint64_t *full, uint64_t *empty, pipe_cursor &c, int k_begin, int k_end,
                                      int t, int barrier) {
    const bool releases = releasing_thread<Cfg>(t);
    for (int kb = k_begin; kb < k_end; kb++) {
        pipe_consumer_wait(full, c);
        named_barrier_sync(barrier, 128);
        if (releases)
            consumer_release<Cfg>(empty, c.stage);
        pipe_advance(c, Cfg::STAGES);
    }
}

// Keeps the compiler from moving accumulator reads or writes across the
// asynchronous wgmmas that own the registers.
template <int N>
TESS_DEVICE void fence_accumulators(float (&acc)[N]) {
#pragma unroll
    for (int i = 0; i < N; i++)
        wgmma_fence_operand(acc[i]);
}

// The low words of a consumer warpgroup's wgmma descriptors for the ring's
// first stage: its 64 rows of A (the second 64 rows of a K-major A stage,
// or the second 64-row chunk) and B. Every stage's and step's descriptor is
// an add on them (the high words are one compile-time constant,
// Cfg::DESC_HI). Built once per kernel and made warp-uniform (__shfl_sync), so
// that a wgmma's descriptor costs one add on a uniform register, not a
// rebuild of every field per K block.
struct mma_descs {
    uint32_t a_lo, b_lo;
};
template <class Cfg>
TESS_DEVICE mma_descs mma_descs_of(char *smem_a, char *smem_b, int wg) {
    mma_descs d;
    d.a_lo = __shfl_sync(0xffffffff, smem_desc_sw128_lo(smem_u32(smem_a) + wg * Cfg::MN_CHUNK_BYTES, Cfg::A_LBO), 0);
    d.b_lo = __shfl_sync(0xffffffff, smem_desc_sw128_lo(smem_u32(smem_b), Cfg::B_LBO), 0);
    return d;
}

// Issues one ring stage's wgmmas (K_STEPS of them) for the consumer
// warpgroup whose descriptors are d into acc, and commits them as one group;
// `accumulate` false overwrites acc with the first product. N columns of the
// tile from column n0 (a 256-wide promoted tile's half:
// Cfg::PROMOTES_IN_HALVES), or all of them.
template <class Cfg, int N = Cfg::BN>
TESS_DEVICE void mma_stage(float (&acc)[N / 2], const mma_descs &d, int stage, bool accumulate, int n0 = 0) {
    static_assert(N == Cfg::BN || !Cfg::B_MN, "part of a tile's columns: K-major B, whose rows are 128 bytes apart");
    constexpr uint32_t UNIT = TESS_SMEM_DESC_UNIT_BYTES;
    const uint32_t a = d.a_lo + (uint32_t)(stage * Cfg::A_STAGE_BYTES) / UNIT;
    const uint32_t b = d.b_lo + (uint32_t)(stage * Cfg::B_STAGE_BYTES + n0 * TESS_SM90_BK_BYTES) / UNIT;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::K_STEPS; kk++) {
        const uint64_t da = smem_desc_of_words(a + kk * Cfg::A_KSTEP_BYTES / UNIT, Cfg::DESC_HI);
        const uint64_t db = smem_desc_of_words(b + kk * Cfg::B_KSTEP_BYTES / UNIT, Cfg::DESC_HI);
        wgmma_ss<N, Cfg::IN, Cfg::A_MN, Cfg::B_MN>(acc, da, db, accumulate || kk != 0);
    }
    wgmma_commit();
}

// One consumer warpgroup (index wg) accumulates its 64 x BN part of a tile
// over K blocks [k_begin, k_end) in the tensor cores.
// One wgmma group stays in flight: after issuing block kb, it waits for block
// kb - 1 and releases that slot.
// A k-grouped kernel's item may have no K blocks (an empty group: its sums
// are 0), and its last block's tokens past the group are zeroed first (tail).
// Its sums start at 0 and every block accumulates onto them, so that an
// empty group takes the same path with no block (an early return there
// made ptxas spill the 128x256 tile's accumulators: 488 bytes, 8216 with
// the tail's zeroing).
template <class Cfg>
TESS_DEVICE void consumer_mma_tile(float (&acc)[Cfg::BN / 2], const mma_descs &d, uint64_t *full,
                                   uint64_t *empty, pipe_cursor &c, int k_begin, int k_end, bool releases,
                                   const k_tail &tail) {
    if constexpr (Cfg::K_GROUPED) {
#pragma unroll
        for (int i = 0; i < Cfg::BN / 2; i++)
            acc[i] = 0.0f;
    }
    fence_accumulators(acc);
    int previous = -1;
    for (int kb = k_begin; kb < k_end; kb++) {
        pipe_consumer_wait(full, c);
        if constexpr (Cfg::K_GROUPED)
            if (kb == k_end - 1 && tail.tokens < Cfg::BK)
                k_group_zero_tail<Cfg>(tail.smem_a, tail.smem_b, c.stage, tail.row_block, tail.tokens, tail.t,
                                       tail.barrier);
        mma_stage<Cfg>(acc, d, c.stage, Cfg::K_GROUPED || kb != k_begin);
        wgmma_wait<1>();
        if (previous >= 0 && releases)
            consumer_release<Cfg>(empty, previous);
        previous = c.stage;
        pipe_advance(c, Cfg::STAGES);
    }
    wgmma_wait<0>();
    if (releases && (!Cfg::K_GROUPED || previous >= 0)) // (an empty group's item holds no stage)
        consumer_release<Cfg>(empty, previous);
    fence_accumulators(acc);
}

// Promoting consumers of Cfg::TAKES_MMA_TURNS kernels take turns issuing
// their K blocks' wgmmas (turn barriers over both consumer warpgroups'
// threads). Left alone, the two warpgroups may fall into step: their
// batches share the tensor cores, finish together, and both promote while
// the tensor cores idle. Issued in turn, one warpgroup's batch runs while
// the other promotes.
static_assert(TESS_SM90_CONSUMERS == 2, "the turns alternate between two consumer warpgroups");
#define TESS_MMA_TURN_THREADS (TESS_SM90_CONSUMERS * 128)
TESS_DEVICE void mma_turn_wait(int wg) { named_barrier_sync(TESS_MMA_TURN_BARRIER_BASE + wg, TESS_MMA_TURN_THREADS); }
TESS_DEVICE void mma_turn_pass(int wg) {
    named_barrier_arrive(TESS_MMA_TURN_BARRIER_BASE + (wg ^ 1), TESS_MMA_TURN_THREADS);
}

// Turns between the two consumer warpgroups, where ON: the wgmma turns of
// Cfg::TAKES_MMA_TURNS kernels (each K block's batch), or a pingpong
// kernel's mainloops (Cfg::PINGPONG: each tile's, with its epilogue after
// the pass). turn_take waits for this warpgroup's turn, turn_give passes it.
template <bool ON>
TESS_DEVICE void turn_take(int wg) {
    if (ON)
        mma_turn_wait(wg);
}
template <bool ON>
TESS_DEVICE void turn_give(int wg) {
    if (ON)
        mma_turn_pass(wg);
}

// Starts the turns before a consumer's first (warpgroup 0 goes first), and
// ends them after its last, when `turns` were taken by the two together:
// the last pass is taken, so no barrier is left with arrivals pending.
// Warpgroup 1 made it after an even count (its first pass, for none),
// warpgroup 0 after an odd one.
template <bool ON>
TESS_DEVICE void turns_begin(int wg) {
    if (ON && wg == 1)
        mma_turn_pass(wg);
}
template <bool ON>
TESS_DEVICE void turns_end(int wg, int turns) {
    if (ON && (turns & 1) == wg)
        mma_turn_wait(wg);
}

// Issues a promoted K block's wgmmas (ring stage `stage`) into the
// partial sum `part`, in turn where the kernel takes turns: N columns from
// column n0 (a 256-wide tile's half), or the whole tile.
template <class Cfg, int N = Cfg::BN>
TESS_DEVICE void issue_partial(float (&part)[N / 2], const mma_descs &d, int stage, int wg, int n0 = 0) {
    turn_take<Cfg::TAKES_MMA_TURNS>(wg);
    fence_accumulators(part);
    mma_stage<Cfg, N>(part, d, stage, false, n0);
    turn_give<Cfg::TAKES_MMA_TURNS>(wg);
}

// Orders a consumer's reads of a stage's block factors before the stage's
// refill by TMA (release_stage says why, and fences this way itself unless
// its caller did). Where the factors were read before the stage's wgmmas,
// issued after the wgmmas and before their wait, the fence's latency hides
// under the tensor cores' work instead of delaying the release.
template <class Cfg>
TESS_DEVICE void fence_factor_reads() {
    if (Cfg::BLOCK_SCALED)
        fence_proxy_async_smem();
}

// Releases a stage a promoting consumer has read its factors from: the
// whole warp vouches for its reads (__syncwarp), then its releasing thread
// arrives. Block factors are read with ordinary loads (the generic proxy)
// and the stage is refilled by TMA (the async proxy), which nothing orders
// after those loads but a proxy fence: without it a load still queued
// behind the epilogue's global stores could read the next fill's factors
// (128x32 tiles of 4 K blocks under a D far larger than L2 got ~2% of their
// tiles wrong; gpu_gemm_fp8's test_stage_reuse).
//
// FENCE false: the caller fenced its factor reads already
// (fence_factor_reads, issued while the wgmmas run).
template <class Cfg, bool FENCE = true>
TESS_DEVICE void release_stage(uint64_t *empty, int stage, bool releases) {
    if (FENCE)
        fence_factor_reads<Cfg>();
    __syncwarp();
    if (releases)
        consumer_release<Cfg>(empty, stage);
}

// A promoting consumer's factors of one stage for its two accumulator rows
// (row, row + 8: r0, r1), times the stage's first and second B factor
// (128x128 B: suffix 0, 1). Without block scales, all 1.
struct row_factors {
    float r00, r01, r10, r11;
};
template <class Cfg>
TESS_DEVICE row_factors stage_row_factors(const float *f, int wg, int row, int kb) {
    row_factors s = {1.0f, 1.0f, 1.0f, 1.0f};
    if (Cfg::BLOCK_SCALED) {
        s.r00 = s.r01 = f[wg * 64 + row], s.r10 = s.r11 = f[wg * 64 + row + 8];
        if (Cfg::SCALING == TESS_SCALING_BLOCK_ROWS) {
            const float *fb = f + Cfg::A_FACTOR_SPAN + Cfg::b_factor_slot(kb);
            const float b0 = fb[0], b1 = Cfg::B_FACTORS == 2 ? fb[Cfg::B_FACTOR_PITCH] : b0;
            s.r00 *= b0, s.r01 *= b1, s.r10 *= b0, s.r11 *= b1;
        }
    }
    return s;
}

// Adds a block's partial sums into acc, times their factors: the row
// factors s, the second B factor from column SECOND_FROM on, and for
// per-column B the columns' own factors from the stage (f). Without block
// scales the factors are all 1: fmaf(p, 1, a) is p + a, rounded once.
// The partial sums are the tile's columns from FIRST / 2 on (a 256-wide
// promoted tile's second half: FIRST = 64), or all of them.
template <class Cfg, int SECOND_FROM, int W = Cfg::BN / 2, int FIRST = 0>
TESS_DEVICE void promote_scaled(float (&acc)[Cfg::BN / 2], const float (&part)[W], const row_factors &s,
                                const float *f, int col) {
    static_assert(FIRST + W <= Cfg::BN / 2 && FIRST % 4 == 0, "whole 8-column groups of the tile");
#pragma unroll
    for (int i = 0; i < W; i++) {
        const int v = FIRST + i; // value v: row + 8 ((v / 2) % 2), column col + 8 (v / 4) + v % 2
        const bool second_row = (v / 2) % 2, second_block = 8 * (v / 4) >= SECOND_FROM;
        float x = second_row ? (second_block ? s.r11 : s.r10) : (second_block ? s.r01 : s.r00);
        if (Cfg::SCALING == TESS_SCALING_BLOCK_ROWS_COLS)
            x *= f[Cfg::A_FACTOR_SPAN + col + 8 * (v / 4) + v % 2];
        acc[v] = fmaf(part[i], x, acc[v]);
    }
}

// Adds a finished block's partial sums (part, from the wgmmas of ring
// stage `stage`) into acc, times the stage's factors, and releases the
// stage: before promoting where the factors are then all in registers,
// after where per-column B factors are read from the stage while promoting.
// For 128x128 B factors and 192-wide tiles the second factor applies from
// column 64 or 128 on: decided once per block, so that each value's factor
// is known at compile time.
// FACTORS_FENCED: the factors read before the wgmmas are fenced already
// (fence_factor_reads).
template <class Cfg, bool FACTORS_FENCED = false>
TESS_DEVICE void promote_stage(float (&acc)[Cfg::BN / 2], const float (&part)[Cfg::BN / 2], const row_factors &s,
                               const float *f, uint64_t *empty, int stage, int col, bool starts_mid_block,
                               bool releases) {
    constexpr bool READS_STAGE_LATE = Cfg::SCALING == TESS_SCALING_BLOCK_ROWS_COLS;
    if (!READS_STAGE_LATE)
        release_stage<Cfg, !FACTORS_FENCED>(empty, stage, releases);
    if (starts_mid_block)
        promote_scaled<Cfg, 64>(acc, part, s, f, col);
    else
        promote_scaled<Cfg, (Cfg::B_FACTORS == 2 ? TESS_SCALE_BLOCK : Cfg::BN)>(acc, part, s, f, col);
    if (READS_STAGE_LATE)
        release_stage<Cfg>(empty, stage, releases);
}

// The factors of ring stage `stage`: BM row factors of A, then B's.
template <class Cfg>
TESS_DEVICE const float *stage_factors(const char *smem_scales, int stage) {
    return (const float *)(smem_scales + stage * Cfg::SCALE_STAGE_BYTES);
}

// Starts a promoting consumer's tile: zeroes its accumulators and gives
// thread t's first accumulator row (the other is row + 8) shifted by
// a_shift, i.e. where the row's factor lies in a stage's A factors, and its
// first column pair.
template <class Cfg>
TESS_DEVICE void promotion_begin(float (&acc)[Cfg::BN / 2], int t, int a_shift, int &row, int &col) {
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; i++)
        acc[i] = 0.0f;
    tess_wgmma_acc_coord(t, 0, &row, &col);
    row += a_shift;
}

// The promoted mainloop (FP8), DeepSeek-V3's two-level accumulation: each
// K block's wgmmas accumulate into a fresh `part`, which is then added into
// the float32 `acc`, times the block's factors when block-scaled. The tensor
// cores keep only about 13 bits while accumulating FP8 products
// (dev/NOTES.md, "FP8 GEMM"), so promoting every 128 K keeps the float32 sum accurate
// over any K. The tile's columns start at n0 (for 128x128 B factors: where
// the tile crosses a 128-column block edge).
//
// This form, for tiles too wide for three accumulators, waits for each
// block's wgmmas before promoting; the other consumer warpgroup's wgmmas,
// issued in turn, keep the tensor cores busy meanwhile.
template <class Cfg>
TESS_DEVICE void consumer_mma_tile_promoted(float (&acc)[Cfg::BN / 2], const mma_descs &d,
                                            const char *smem_scales, uint64_t *full, uint64_t *empty, pipe_cursor &c,
                                            int k_begin, int k_end, int n0, int a_shift, int wg, int t,
                                            bool releases) {
    float part[Cfg::BN / 2];
    int row, col;
    promotion_begin<Cfg>(acc, t, a_shift, row, col);
    // Whether a 192-wide tile starts halfway into a 128-column block of B
    // factors (n0 is a multiple of 192, so at column 0 or 64 of one).
    const bool starts_mid_block = Cfg::B_FACTORS == 2 && n0 % TESS_SCALE_BLOCK != 0;
    for (int kb = k_begin; kb < k_end; kb++) {
        pipe_consumer_wait(full, c);
        const float *f = stage_factors<Cfg>(smem_scales, c.stage);
        // Read before the wgmmas, which hide the loads' latency (loads
        // between the wgmmas' end and the promotion cost a 128x192 tile 5%
        // at 4096x2112x7168 on an H100: dev/NOTES.md).
        const row_factors s = stage_row_factors<Cfg>(f, wg, row, kb);
        issue_partial<Cfg>(part, d, c.stage, wg);
        fence_factor_reads<Cfg>();
        wgmma_wait<0>();
        fence_accumulators(part);
        promote_stage<Cfg, true>(acc, part, s, f, empty, c.stage, col, starts_mid_block, releases);
        pipe_advance(c, Cfg::STAGES);
    }
}

// One half of a 256-wide promoted tile's K block (columns 128 h ..
// 128 h + 127): waits for its turn, issues the half's wgmmas into `part`,
// passes the turn, waits for them, releases the stage after the second half
// (where the factors are already in registers), and promotes the half with
// its B factor (128x128 B: the tile's h-th 128-column block).
template <class Cfg, int H>
TESS_DEVICE void promote_half(float (&acc)[Cfg::BN / 2], float (&part)[Cfg::MMA_N / 2], const mma_descs &d,
                              uint64_t *empty, int stage, const row_factors &s, const float *f, int wg, int col,
                              bool releases) {
    issue_partial<Cfg, Cfg::MMA_N>(part, d, stage, wg, H * Cfg::MMA_N);
    if constexpr (H == 1)
        fence_factor_reads<Cfg>();
    wgmma_wait<0>();
    fence_accumulators(part);
    if constexpr (H == 1)
        release_stage<Cfg, false>(empty, stage, releases);
    // The second B factor applies from the 128-column block edge, which is where the second half starts.
    promote_scaled<Cfg, TESS_SCALE_BLOCK, Cfg::MMA_N / 2, H * Cfg::MMA_N / 2>(acc, part, s, f, col);
}

// The promoted mainloop of 256-wide tiles (Cfg::PROMOTES_IN_HALVES): each K
// block's two 128-wide halves go through one 64-register partial sum, each
// promoted while the other consumer warpgroup's half runs (the two take
// turns issuing, as consumer_mma_tile_promoted's do). The factors of a
// block are read before its wgmmas, which hide their latency.
template <class Cfg>
TESS_DEVICE void consumer_mma_tile_promoted_halves(float (&acc)[Cfg::BN / 2], const mma_descs &d,
                                                   const char *smem_scales, uint64_t *full, uint64_t *empty,
                                                   pipe_cursor &c, int k_begin, int k_end, int a_shift, int wg,
                                                   int t, bool releases) {
    static_assert(Cfg::PROMOTES_IN_HALVES, "256-wide promoted tiles");
    float part[Cfg::MMA_N / 2];
    int row, col;
    promotion_begin<Cfg>(acc, t, a_shift, row, col);
    for (int kb = k_begin; kb < k_end; kb++) {
        pipe_consumer_wait(full, c);
        const float *f = stage_factors<Cfg>(smem_scales, c.stage);
        const row_factors s = stage_row_factors<Cfg>(f, wg, row, kb);
        promote_half<Cfg, 0>(acc, part, d, empty, c.stage, s, f, wg, col, releases);
        promote_half<Cfg, 1>(acc, part, d, empty, c.stage, s, f, wg, col, releases);
        pipe_advance(c, Cfg::STAGES);
    }
}

// Waits until at most PENDING wgmma groups are in flight, so that the
// block in `done` (K block done_kb, ring stage `stage`) has finished, then
// promotes it with its stage's factors.
template <class Cfg, int PENDING>
TESS_DEVICE void promote_finished(float (&acc)[Cfg::BN / 2], float (&done)[Cfg::BN / 2], const char *smem_scales,
                                  uint64_t *empty, int stage, int done_kb, int wg, int row, int col, bool releases) {
    wgmma_wait<PENDING>();
    fence_accumulators(done);
    const float *f = stage_factors<Cfg>(smem_scales, stage);
    promote_stage<Cfg>(acc, done, stage_row_factors<Cfg>(f, wg, row, done_kb), f, empty, stage, col, false,
                       releases);
}

// One step of the pipelined promotion: issues the next K block's wgmmas
// into `next` (ring stage c.stage), then promotes the previous block
// (`done`: K block done_kb, stage `previous`) while the new ones run.
template <class Cfg>
TESS_DEVICE void promote_pipelined_step(float (&acc)[Cfg::BN / 2], float (&next)[Cfg::BN / 2],
                                        float (&done)[Cfg::BN / 2], const mma_descs &d,
                                        const char *smem_scales, uint64_t *full, uint64_t *empty, pipe_cursor &c,
                                        int &previous, int done_kb, int wg, int row, int col, bool releases) {
    pipe_consumer_wait(full, c);
    fence_accumulators(next);
    mma_stage<Cfg>(next, d, c.stage, false);
    promote_finished<Cfg, 1>(acc, done, smem_scales, empty, previous, done_kb, wg, row, col, releases);
    previous = c.stage;
    pipe_advance(c, Cfg::STAGES);
}

// The promoted mainloop for tiles whose three accumulators fit (BN <= 128,
// tiles inside one 128-column block of B factors): while a block is
// promoted, the next block's wgmmas already run, so the tensor cores wait
// neither for the promotion nor for the other consumer warpgroup. The two
// partial-sum accumulators alternate (part0 for blocks k_begin, k_begin + 2, ...).
template <class Cfg>
TESS_DEVICE void consumer_mma_tile_promoted_pipelined(float (&acc)[Cfg::BN / 2], const mma_descs &d,
                                                      const char *smem_scales, uint64_t *full, uint64_t *empty,
                                                      pipe_cursor &c, int k_begin, int k_end, int a_shift, int wg,
                                                      int t, bool releases) {
    static_assert(!Cfg::PIPELINES_PROMOTION || Cfg::B_FACTORS != 2, "tiles inside one 128-column block of B factors");
    float part0[Cfg::BN / 2], part1[Cfg::BN / 2];
    int row, col;
    promotion_begin<Cfg>(acc, t, a_shift, row, col);
    if (k_begin >= k_end)
        return;
    pipe_consumer_wait(full, c);
    fence_accumulators(part0);
    mma_stage<Cfg>(part0, d, c.stage, false);
    int previous = c.stage;
    pipe_advance(c, Cfg::STAGES);
    for (int kb = k_begin + 1;; kb += 2) {
        if (kb >= k_end) {
            promote_finished<Cfg, 0>(acc, part0, smem_scales, empty, previous, kb - 1, wg, row, col, releases);
            return;
        }
        promote_pipelined_step<Cfg>(acc, part1, part0, d, smem_scales, full, empty, c, previous, kb - 1,
                                    wg, row, col, releases);
        if (kb + 1 >= k_end) {
            promote_finished<Cfg, 0>(acc, part1, smem_scales, empty, previous, kb, wg, row, col, releases);
            return;
        }
        promote_pipelined_step<Cfg>(acc, part0, part1, d, smem_scales, full, empty, c, previous, kb, wg,
                                    row, col, releases);
    }
}

// A consumer warpgroup's K blocks [k_begin, k_end) of a tile, in the
// kernel's accumulation mode.
// a_shift: where the tile's first row's factor lies in a stage's A factors.
// tail: a k-grouped kernel's (k_grouped.cuh); others pass none.
template <class Cfg>
TESS_DEVICE void consumer_mma(float (&acc)[Cfg::BN / 2], const mma_descs &d, const char *smem_scales,
                              uint64_t *full, uint64_t *empty, pipe_cursor &c, int k_begin, int k_end, int n0,
                              int a_shift, int wg, int t, const k_tail &tail = k_tail{}) {
    const bool releases = releasing_thread<Cfg>(t);
    if constexpr (Cfg::PIPELINES_PROMOTION)
        consumer_mma_tile_promoted_pipelined<Cfg>(acc, d, smem_scales, full, empty, c, k_begin, k_end,
                                                  a_shift, wg, t, releases);
    else if constexpr (Cfg::PROMOTES_IN_HALVES)
        consumer_mma_tile_promoted_halves<Cfg>(acc, d, smem_scales, full, empty, c, k_begin, k_end,
                                               a_shift, wg, t, releases);
    else if constexpr (Cfg::PROMOTES)
        consumer_mma_tile_promoted<Cfg>(acc, d, smem_scales, full, empty, c, k_begin, k_end, n0,
                                        a_shift, wg, t, releases);
    else
        consumer_mma_tile<Cfg>(acc, d, full, empty, c, k_begin, k_end, releases, tail);
}
