// The sm90 GEMM kernel template, 16-bit and FP8 (included by the .cu file
// instances.cmake generates for each line of instances.list, so that the
// configurations compile in parallel).
//
// A persistent, warp-specialized kernel. Warpgroup 0
// produces (one elected lane issues TMA loads into a STAGES-deep ring); warpgroups
// 1 and 2 consume (wgmma, 64 rows each; a 64-row tile's kernel has only
// warpgroup 1, and 2 idles), then run the epilogue of the tile
// while the producer already fetches the next. With clusters of 2, the two
// CTAs take vertically adjacent tiles and share B by TMA multicast. Each
// cluster walks its list of (tile pair, K range) segments from
// kernels/common/sched.h: whole tiles in the grouped order, then, for a
// stream-K plan, an equal share of the tail's K blocks; a segment that ends
// a tile somebody else started adds their partial sums before the epilogue.
#pragma once

#include <cuda_runtime.h>

#include "core/error.h"
#include "kernels/common/sched.h"
#include "kernels/common/stream_k.cuh"
#include "kernels/sm90/epilogue.cuh"
#include "kernels/sm90/kernel_table.h"
#include "kernels/sm90/grouped.cuh"
#include "kernels/sm90/mainloop.cuh"
#include "kernels/sm90/scale_epilogue.cuh"

// The tile this CTA computes for work item `item` of a dense GEMM: clusters
// walk groups of CLUSTER tile rows (virtual rows of CLUSTER tiles each), the
// CTA of rank r taking row r of its group. The row may lie past M for a tile
// count that is not a multiple of CLUSTER: TMA clips it. A grouped GEMM's
// tiles come from its group table (grouped.cuh; `hint` is its scan position).
template <class Cfg>
TESS_DEVICE tile_coord cta_tile(const tess_gemm_params &p, const group_table &groups, int item, int rank, int &hint) {
    if (Cfg::GROUPED)
        return group_tile<Cfg>(p, groups, item, rank, hint);
    const int m_groups = (p.m_tiles + Cfg::CLUSTER - 1) / Cfg::CLUSTER;
    int b, mg, nt;
    tess_tile_coord(item, m_groups, p.n_tiles, p.group_m, &b, &mg, &nt);
    tile_coord c = {b, b, b, b, (mg * Cfg::CLUSTER + rank) * Cfg::BM, p.m, nt * Cfg::BN, p.n, false};
    return c;
}

// Stream-K workspace of consumer warpgroup cw of CTA `cta`: its slot of
// partial sums (each CTA owns a BM x BN slot, each warpgroup 64 rows of it)
// and its ready flag.
template <class Cfg>
TESS_DEVICE float *sk_slot(const tess_gemm_params &p, int cta, int cw, int **flag) {
    *flag = p.flags + cta * TESS_SM90_CONSUMERS + cw;
    return p.partials + (int64_t)cta * Cfg::BM * Cfg::BN + cw * 64 * Cfg::BN;
}

template <class Cfg>
__global__ void __launch_bounds__(TESS_SM90_THREADS, 1) gemm_sm90(const __grid_constant__ tess_gemm_params p) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the sm90 family's kernels (wgmma, TMA multicast, setmaxnreg) compile for sm_90a only (family.cmake's ARCHS)"
#elif defined(__CUDA_ARCH__)
    extern __shared__ unsigned char smem_raw[];
    // TMA's 128-byte swizzle needs each tile 1024-byte aligned. Offsetting
    // smem_raw itself (not an integer copy of it) keeps the pointers in the
    // shared window, so plain loads of the ring's scale factors are LDS.
    const uint32_t misaligned = smem_u32(smem_raw) % TESS_SW128_ATOM_BYTES;
    char *smem = (char *)smem_raw + (misaligned ? TESS_SW128_ATOM_BYTES - misaligned : 0);
    char *smem_a = smem;
    char *smem_b = smem_a + Cfg::STAGES * Cfg::A_STAGE_BYTES;
    char *staging = smem_b + Cfg::STAGES * Cfg::B_STAGE_BYTES;
    char *smem_scales = staging + Cfg::EPI_BYTES;
    uint64_t *full = (uint64_t *)(smem_scales + Cfg::STAGES * Cfg::SCALE_STAGE_BYTES);
    uint64_t *empty = full + Cfg::STAGES;
    const group_table groups = group_table_at((int *)(empty + Cfg::STAGES));
    tile_coord *tile_slots = (tile_coord *)((char *)(empty + Cfg::STAGES) + Cfg::GROUP_TABLE_BYTES);

    if (threadIdx.x == 0) {
        const int full_arrivals = Cfg::full_arrivals(factors_by_tma<Cfg>(p));
        for (int s = 0; s < Cfg::STAGES; s++) {
            mbar_init(&full[s], full_arrivals);
            mbar_init(&empty[s], Cfg::EMPTY_ARRIVALS);
        }
        fence_mbar_init();
        tma_prefetch_descriptor(&p.tma_a);
        tma_prefetch_descriptor(&p.tma_b);
        tma_prefetch_descriptor(&p.tma_d);
        if (factors_by_tma<Cfg>(p)) {
            tma_prefetch_descriptor(&p.tma_scale_a);
            tma_prefetch_descriptor(&p.tma_scale_b);
        }
    }
    // Programmatic dependent launch: the set-up above overlaps the previous
    // kernel's tail; global memory (inputs that kernel may write, output,
    // workspace) is touched only from here on. The next kernel may be
    // scheduled at once: 384 threads x 168 registers leave 1024 of an SM's
    // 65536, so it mostly takes SMs as these CTAs exit, its launch done.
    grid_dependency_wait();
    grid_dependents_launch();
    // A grouped GEMM's items follow from the group sizes, read by every CTA;
    // a dense one's split is read from the parameters (no registers held).
    tess_work_split grouped_split = p.split;
    if (Cfg::GROUPED)
        grouped_split.dp_items = group_table_build<Cfg>(p, groups);
    const tess_work_split &split = Cfg::GROUPED ? grouped_split : p.split;
    __syncthreads();
    if (Cfg::CLUSTER > 1)
        cluster_sync(); // every CTA's barriers exist before any multicast or remote arrival

    const int wg = warpgroup_index();
    const int rank = Cfg::CLUSTER > 1 ? (int)cluster_cta_rank() : 0;
    const int cluster = blockIdx.x / Cfg::CLUSTER;
    pipe_cursor cursor = {0, 0};
    int hint = 0;
    if (wg == 0) {
        setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        if (threadIdx.x < Cfg::PRODUCER_THREADS) {
            for (tess_work_cursor w = tess_work_first(&split, cluster); w.item >= 0; tess_work_next(&split, &w)) {
                tile_coord tile = cta_tile<Cfg>(p, groups, w.item, rank, hint);
                if (Cfg::GROUPED && Cfg::PUBLISHES_TILES) // the consumers' store bound, published with the tile
                    group_tile_end<Cfg>(p, tile);
                int k_begin = w.k_begin, k_end = w.k_end, k_origin = 0;
                k_group_blocks<Cfg>(p, tile.d_batch, &k_begin, &k_end, &k_origin); // k-grouped: its group's
                producer_load_tile<Cfg>(p, smem_a, smem_b, smem_scales, full, empty, cursor, tile, k_begin, k_end,
                                        rank, threadIdx.x, tile_slots, k_origin);
            }
        }
    } else if (Cfg::CONSUMERS < TESS_SM90_CONSUMERS && wg > Cfg::CONSUMERS) { // (not built for 2 consumers)
        setmaxnreg_dec<TESS_SM90_IDLE_REGS>(); // a 64-row tile's spare warpgroup: its registers go to the consumer
    } else {
        setmaxnreg_inc<Cfg::CONSUMER_REGS>();
        const int cw = wg - 1, t = threadIdx.x % 128, barrier = TESS_EPI_BARRIER_BASE + cw;
        // The 64-row block of each tile this warpgroup computes (a pingpong
        // tile is all one warpgroup's).
        const int row_block = Cfg::PINGPONG ? 0 : cw;
        char *my_staging = staging + cw * Cfg::EPI_WG_BYTES;
        float acc[Cfg::BN / 2];
        const mma_descs descs = mma_descs_of<Cfg>(smem_a, smem_b, row_block);
        bool pending = false;
        int items = 0;
        turns_begin<Cfg::TAKES_MMA_TURNS || Cfg::PINGPONG>(cw);
        for (tess_work_cursor w = tess_work_first(&split, cluster); w.item >= 0; tess_work_next(&split, &w)) {
            // A pingpong warpgroup takes every other item, and passes the
            // other's K blocks in the ring.
            if (Cfg::PINGPONG && (items++ & 1) != cw) {
                pipe_skip(cursor, w.k_end - w.k_begin, Cfg::STAGES);
                continue;
            }
            tile_coord tile;
            if (Cfg::PUBLISHES_TILES && w.k_begin < w.k_end) {
                // The producer's coordinates, with the tile's first stage.
                pipe_consumer_wait(full, cursor);
                tile = tile_slots[cursor.stage];
            } else {
                tile = cta_tile<Cfg>(p, groups, w.item, rank, hint);
                if (Cfg::GROUPED) // read before the mainloop, which hides the latency
                    group_tile_end<Cfg>(p, tile);
            }
            int k_begin = w.k_begin, k_end = w.k_end, k_origin = 0;
            const int tail_tokens = k_group_blocks<Cfg>(p, tile.d_batch, &k_begin, &k_end, &k_origin);
            // Rows all past the tile's: nothing to compute, store or hand on
            // (every unit sharing the tile's K skips alike, so no stream-K
            // partial sum is awaited).
            if (Cfg::SKIPS_EMPTY_ROWS && tile.m0 + row_block * 64 >= tile.m_end) {
                consumer_follow_ring<Cfg>(full, empty, cursor, k_begin, k_end, t, barrier);
                continue;
            }
            const int a_shift = factors_by_tma<Cfg>(p) ? Cfg::a_factor_shift(tile.m0) : 0;
            // (The turn passes after the tile's last full-barrier wait: the
            // other warpgroup then waits only for fills past every one it
            // skipped, so no ring slot is a lap behind its phase.)
            turn_take<Cfg::PINGPONG>(cw);
            const k_tail tail = {smem_a, smem_b, row_block, tail_tokens, t, barrier};
            consumer_mma<Cfg>(acc, descs, smem_scales, full, empty, cursor, k_begin, k_end, tile.n0, a_shift,
                              row_block, t, tail);
            turn_give<Cfg::PINGPONG>(cw);
            if constexpr (Cfg::INT_ACC) // INT8: the tensor cores' int32 sums (exact) as floats from here on
                for (int i = 0; i < Cfg::BN / 2; i++)
                    acc[i] = (float)__float_as_int(acc[i]);
            if (tess_work_is_partial(&split, &w)) {
                int *flag;
                if (w.k_begin != 0) { // another unit finishes this tile
                    float *slot = sk_slot<Cfg>(p, blockIdx.x, cw, &flag);
                    sk_store_partial(acc, slot, flag, t, barrier);
                    continue;
                }
                // The same rank's CTA of each later cluster up to `end` contributed.
                const int end = tess_work_contributors_end(&split, &w, cluster);
                sk_contributors from;
                from.slot = sk_slot<Cfg>(p, (cluster + 1) * Cfg::CLUSTER + rank, cw, &from.flag);
                from.slot_step = (int64_t)Cfg::CLUSTER * Cfg::BM * Cfg::BN;
                from.flag_step = Cfg::CLUSTER * TESS_SM90_CONSUMERS;
                from.count = end - cluster - 1;
                sk_add_partials(acc, from, t, barrier);
            }
            const int m0 = tile.m0 + row_block * 64; // this warpgroup's rows
            apply_outer_scales<Cfg>(p, acc, t, tile, m0);
            epilogue<Cfg>(p, acc, my_staging, cw, t, tile, m0, pending);
        }
        // Every turn of the wgmma turns comes in pairs (one per warpgroup):
        // their count is even.
        turns_end<Cfg::TAKES_MMA_TURNS || Cfg::PINGPONG>(cw, Cfg::PINGPONG ? items : 0);
        if (pending && t == 0)
            tma_store_wait<0>(); // shared memory must outlive the stores reading it
    }
    if (Cfg::CLUSTER > 1)
        cluster_sync(); // no CTA leaves while another may still write into it
#endif
}

// The launch configuration of `grid` CTAs in clusters of Cfg::CLUSTER.
template <class Cfg>
static void launch_config(cudaLaunchConfig_t *config, cudaLaunchAttribute *cluster, int grid, void *stream) {
    *config = cudaLaunchConfig_t{};
    *cluster = cudaLaunchAttribute{};
    cluster->id = cudaLaunchAttributeClusterDimension;
    cluster->val.clusterDim.x = Cfg::CLUSTER, cluster->val.clusterDim.y = 1, cluster->val.clusterDim.z = 1;
    config->gridDim = dim3((unsigned)grid);
    config->blockDim = dim3(TESS_SM90_THREADS);
    config->dynamicSmemBytes = Cfg::SMEM_BYTES;
    config->stream = (cudaStream_t)stream;
    config->attrs = cluster;
    config->numAttrs = 1;
}

// Lets the kernel use its Cfg::SMEM_BYTES of dynamic shared memory (above the 48 KiB default).
template <class Cfg>
static cudaError_t allow_smem(void) {
    return cudaFuncSetAttribute(gemm_sm90<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES);
}

template <class Cfg>
static tess_status launch_gemm(const tess_gemm_params *p, int grid, void *stream) {
    auto kernel = gemm_sm90<Cfg>;
    cudaError_t err = allow_smem<Cfg>();
    if (err != cudaSuccess)
        return tess_cuda_status(err, "setting the GEMM kernel's shared memory size");
    cudaLaunchConfig_t config;
    cudaLaunchAttribute attrs[2];
    launch_config<Cfg>(&config, &attrs[0], grid, stream);
    // Programmatic stream serialization: the kernel may begin while the
    // previous one in the stream finishes (it waits in grid_dependency_wait
    // before reading memory), hiding part of the ~6 us a launch costs;
    // not under an SM budget (p->early_launch).
    attrs[1] = cudaLaunchAttribute{};
    attrs[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[1].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attrs;
    config.numAttrs = p->early_launch ? 2 : 1;
    err = cudaLaunchKernelEx(&config, kernel, *p);
    return tess_cuda_status(err, "launching the sm90 GEMM kernel");
}

template <class Cfg>
static int max_clusters(void) {
    auto kernel = gemm_sm90<Cfg>;
    if (allow_smem<Cfg>() != cudaSuccess)
        return 0;
    cudaLaunchConfig_t config;
    cudaLaunchAttribute cluster;
    launch_config<Cfg>(&config, &cluster, Cfg::CLUSTER, NULL);
    int count = 0;
    if (cudaOccupancyMaxActiveClusters(&count, kernel, &config) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

// One table entry for configuration (BM, BN, STAGES, CLUSTER, input pair,
// scaling kind, A major, B major, grouped, pingpong).
#define TESS_GEMM_ENTRY_S(BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP)                                               \
    {BM, BN, gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>::BK, ST, CL, IN, SC, AMN, BMN, GR,               \
     gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>::EPI_ROUNDS,                                              \
     gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>::SKIPS_EMPTY_ROWS, PP,                                    \
     gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>::GATES,                                                   \
     gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>::STORES_FROM_REGISTERS,                                   \
     gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>::WRITES_FP8 +                                             \
         gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>::FUSES_FP8,                                           \
     launch_gemm<gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>>,                                             \
     max_clusters<gemm_cfg<BM, BN, ST, CL, IN, SC, AMN, BMN, GR, PP>>}
#define TESS_GEMM_ENTRY_G(BM, BN, ST, CL, IN, SC, AMN, BMN, GR) TESS_GEMM_ENTRY_S(BM, BN, ST, CL, IN, SC, AMN, BMN, GR, 0)
// A dense GEMM's entry.
#define TESS_GEMM_ENTRY(BM, BN, ST, CL, IN, SC, AMN, BMN) TESS_GEMM_ENTRY_G(BM, BN, ST, CL, IN, SC, AMN, BMN, 0)
// A grouped GEMM's entry (K-major operands; clusters of CL CTAs along M).
#define TESS_GROUPED_ENTRY(BM, BN, ST, CL, IN, SC) TESS_GEMM_ENTRY_G(BM, BN, ST, CL, IN, SC, 0, 0, TESS_GROUPED_ROWS)
// A grouped GEMM's token-tile entry (run transposed: BM weight rows by BN
// tokens of one group; K-major operands, clusters of 1).
#define TESS_GROUPED_TOKEN_ENTRY(BM, BN, ST, IN, SC) \
    TESS_GEMM_ENTRY_G(BM, BN, ST, 1, IN, SC, 0, 0, TESS_GROUPED_TOKENS)

// The 16-bit kernels of one tile configuration, cooperative (PP 0) or
// pingpong (PP 1): bf16 and f16, all four operand majors (8 entries).
#define TESS_GEMM_F16_SCHEDULE_TILE(BM, BN, ST, CL, PP)                                                           \
    TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_BF16, 0, 0, 0, 0, PP),                                             \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_BF16, 0, 0, 1, 0, PP),                                         \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_BF16, 0, 1, 0, 0, PP),                                         \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_BF16, 0, 1, 1, 0, PP),                                         \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_F16, 0, 0, 0, 0, PP),                                          \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_F16, 0, 0, 1, 0, PP),                                          \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_F16, 0, 1, 0, 0, PP),                                          \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_F16, 0, 1, 1, 0, PP)
// The FP8 kernels of one tile configuration and scaling kind, cooperative
// (PP 0) or pingpong (PP 1): the four (A, B) type pairs, K-major operands (4 entries).
#define TESS_GEMM_FP8_SCHEDULE_TILE(BM, BN, ST, CL, SC, PP)                                                       \
    TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_E4M3_E4M3, SC, 0, 0, 0, PP),                                       \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_E4M3_E5M2, SC, 0, 0, 0, PP),                                   \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_E5M2_E4M3, SC, 0, 0, 0, PP),                                   \
        TESS_GEMM_ENTRY_S(BM, BN, ST, CL, TESS_MMA_E5M2_E5M2, SC, 0, 0, 0, PP)

// The sets of instances.list: the entries one line of it makes.
// f16: both 16-bit input types and all four operand majors of one tile
// configuration (8 entries).
#define TESS_GEMM_TILE(BM, BN, ST, CL) TESS_GEMM_F16_SCHEDULE_TILE(BM, BN, ST, CL, 0)
// f16_tokens: the token-tile kernels of one narrow width (small-M problems
// run transposed: A holds the weights, B the tokens): both 16-bit input
// types, A K-major or M-major, B K-major (4 entries).
#define TESS_GEMM_TOKEN_TILE(BM, BN, ST)                                                                          \
    TESS_GEMM_ENTRY(BM, BN, ST, 1, TESS_MMA_BF16, 0, 0, 0), TESS_GEMM_ENTRY(BM, BN, ST, 1, TESS_MMA_BF16, 0, 1, 0), \
        TESS_GEMM_ENTRY(BM, BN, ST, 1, TESS_MMA_F16, 0, 0, 0), TESS_GEMM_ENTRY(BM, BN, ST, 1, TESS_MMA_F16, 0, 1, 0)
// fp8_tokens: the FP8 token-tile kernels of one width: e4m3 x e4m3,
// promoted, and block-scaled with per-row A factors and 128x128 or
// per-column B factors (3 entries: the scalings a transposed FP8 problem needs).
#define TESS_GEMM_FP8_TOKEN_TILE(BM, BN, ST)                                                                      \
    TESS_GEMM_ENTRY(BM, BN, ST, 1, TESS_MMA_E4M3_E4M3, TESS_SCALING_PROMOTE, 0, 0),                               \
        TESS_GEMM_ENTRY(BM, BN, ST, 1, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS, 0, 0),                        \
        TESS_GEMM_ENTRY(BM, BN, ST, 1, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS_COLS, 0, 0)
// fp8: the FP8 kernels of one tile configuration and scaling kind (4 entries).
#define TESS_GEMM_FP8_TILE(BM, BN, ST, CL, SC) TESS_GEMM_FP8_SCHEDULE_TILE(BM, BN, ST, CL, SC, 0)
// tf32: f32 operands read as TF32 by the tensor cores, both K-major (1 entry:
// other layouts are copied K-major first, as FP8's are).
#define TESS_GEMM_TF32_TILE(BM, BN, ST, CL) TESS_GEMM_ENTRY(BM, BN, ST, CL, TESS_MMA_TF32, TESS_SCALING_PLAIN, 0, 0)
// int8: s8 x s8 operands summed in int32 (W8A8), both K-major (1 entry).
#define TESS_GEMM_INT8_TILE(BM, BN, ST, CL) TESS_GEMM_ENTRY(BM, BN, ST, CL, TESS_MMA_S8, TESS_SCALING_PLAIN, 0, 0)
// fp8_pingpong: as fp8, pingpong (BM rows per consumer's tile, clusters of 1).
#define TESS_GEMM_FP8_PINGPONG_TILE(BM, BN, ST, CL, SC) TESS_GEMM_FP8_SCHEDULE_TILE(BM, BN, ST, 1, SC, 1)
// f16_pingpong: as f16, pingpong (8 entries).
#define TESS_GEMM_PINGPONG_TILE(BM, BN, ST, CL) TESS_GEMM_F16_SCHEDULE_TILE(BM, BN, ST, 1, 1)
// f16_kgrouped: the k-grouped kernels of one tile (tess_grouped_wgrad, an
// MoE layer's weight gradients): bf16 and f16, A M-major (dY^T), B N-major
// (X), clusters of 1 (2 entries).
#define TESS_KGROUPED_F16_TILE(BM, BN, ST, CL)                                                                    \
    TESS_GEMM_ENTRY_G(BM, BN, ST, CL, TESS_MMA_BF16, TESS_SCALING_PLAIN, 1, 1, TESS_GROUPED_K),                   \
        TESS_GEMM_ENTRY_G(BM, BN, ST, CL, TESS_MMA_F16, TESS_SCALING_PLAIN, 1, 1, TESS_GROUPED_K)
// grouped_f16: a grouped tile configuration's bf16 and f16 kernels (2 entries).
#define TESS_GROUPED_F16_TILE(BM, BN, ST, CL)                                                                     \
    TESS_GROUPED_ENTRY(BM, BN, ST, CL, TESS_MMA_BF16, TESS_SCALING_PLAIN),                                        \
        TESS_GROUPED_ENTRY(BM, BN, ST, CL, TESS_MMA_F16, TESS_SCALING_PLAIN)
// grouped_f16_nmajor: the same with each expert's weight N-major (W [G, K, N], torch._grouped_mm's
// mat_b, and the [G, N, K] weights read as dgrad's K x N operand: dX = dY W[g]) (2 entries).
#define TESS_GROUPED_F16_NMAJOR_TILE(BM, BN, ST, CL)                                                              \
    TESS_GEMM_ENTRY_G(BM, BN, ST, CL, TESS_MMA_BF16, TESS_SCALING_PLAIN, 0, 1, TESS_GROUPED_ROWS),                \
        TESS_GEMM_ENTRY_G(BM, BN, ST, CL, TESS_MMA_F16, TESS_SCALING_PLAIN, 0, 1, TESS_GROUPED_ROWS)
// grouped_fp8: e4m3 x e4m3, promoted with per-tensor (per group) or
// per-row/column factors, and block-scaled 1x128 x 128x128 (2 entries).
#define TESS_GROUPED_FP8_TILE(BM, BN, ST, CL)                                                                     \
    TESS_GROUPED_ENTRY(BM, BN, ST, CL, TESS_MMA_E4M3_E4M3, TESS_SCALING_PROMOTE),                                 \
        TESS_GROUPED_ENTRY(BM, BN, ST, CL, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS)
// grouped_f16_tokens: one token width's bf16 and f16 kernels (2 entries).
#define TESS_GROUPED_F16_TOKEN_TILE(BM, BN, ST)                                                                   \
    TESS_GROUPED_TOKEN_ENTRY(BM, BN, ST, TESS_MMA_BF16, TESS_SCALING_PLAIN),                                      \
        TESS_GROUPED_TOKEN_ENTRY(BM, BN, ST, TESS_MMA_F16, TESS_SCALING_PLAIN)
// grouped_fp8_tokens: one token width's e4m3 kernels, promoted, and
// block-scaled (128x128 weight factors on A's rows, 1x128 token factors on
// B's columns) (2 entries).
#define TESS_GROUPED_FP8_TOKEN_TILE(BM, BN, ST)                                                                   \
    TESS_GROUPED_TOKEN_ENTRY(BM, BN, ST, TESS_MMA_E4M3_E4M3, TESS_SCALING_PROMOTE),                               \
        TESS_GROUPED_TOKEN_ENTRY(BM, BN, ST, TESS_MMA_E4M3_E4M3, TESS_SCALING_BLOCK_ROWS_COLS)
