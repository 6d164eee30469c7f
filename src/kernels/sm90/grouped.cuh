// The grouped GEMM's work (Mixture-of-Experts): a table of the groups' tile
// rows, built by each CTA from the group sizes on the device (no host
// synchronization, safe under graph capture), and the tile of each work item.
#pragma once

#include "kernels/common/ptx.cuh"
#include "kernels/common/sched.h"
#include "kernels/sm90/gemm_cfg.cuh"
#include "kernels/sm90/gemm_params.h"

// The extent of the grouped dimension: M, or N in a token-tile kernel
// (where the tokens, X's rows, are the columns of the transposed problem).
template <class Cfg>
TESS_DEVICE int grouped_extent(const tess_gemm_params &p) {
    return Cfg::GROUPED_ALONG_N ? p.n : p.m;
}

// The tiles of a grouped GEMM across its groups (the other dimension's).
template <class Cfg>
TESS_DEVICE int grouped_cross_tiles(const tess_gemm_params &p) {
    return Cfg::GROUPED_ALONG_N ? p.m_tiles : p.n_tiles;
}

// Tokens [*first, *first + returned) (rows of X and Y) belong to group g:
// clamped into [0, extent], so that bad sizes on the device never move a
// tile outside the matrices.
template <class Cfg>
TESS_DEVICE int group_row_range(const tess_gemm_params &p, int g, int *first) {
    const int extent = grouped_extent<Cfg>(p);
    if (p.group_layout == TESS_GROUP_MASKED) {
        *first = 0;
        return min(max(__ldg(p.group_rows + g), 0), extent);
    }
    const int start = g ? min(max(__ldg(p.group_rows + g - 1), 0), extent) : 0;
    *first = start;
    return min(max(__ldg(p.group_rows + g), start), extent) - start;
}

// Whether this launch splits short last tile rows along N (sched.h: split
// tails; p.group_split_tails, set by the host where the kernel and problem allow).
template <class Cfg>
TESS_DEVICE bool splits_tails(const tess_gemm_params &p) {
    return Cfg::GROUPED_ALONG_M && Cfg::CLUSTER == 2 && p.group_split_tails;
}

// The table in shared memory: tile_start[g] (table units before group g:
// tile rows, or sched.h's split-tail units; tile_start[groups] = all of
// them), then row_start[g], then scan scratch.
struct group_table {
    int *tile_start, *row_start, *warp_sums;
};

TESS_DEVICE group_table group_table_at(int *base) {
    group_table t = {base, base + TESS_GROUPED_MAX_GROUPS + 1, base + 2 * TESS_GROUPED_MAX_GROUPS + 1};
    return t;
}

// Groups each thread of the CTA counts while building the table (3: 384
// threads cover TESS_GROUPED_MAX_GROUPS + 1 = 1025 entries).
#define TESS_GROUPS_PER_THREAD ((TESS_GROUPED_MAX_GROUPS + TESS_SM90_THREADS) / TESS_SM90_THREADS)

// Builds the table with every thread of the CTA (an exclusive scan of the
// groups' tile rows: per thread, then per warp by shuffles, then over the
// warps) and returns the number of work items, tile rows x n tiles. With
// clusters, a tile row is Cfg::CLUSTER tiles tall (one per CTA of the
// cluster), so that a cluster's tiles never span two groups. Groups whose
// sizes lie outside [group_min_rows, group_max_rows] get no tiles.
template <class Cfg>
TESS_DEVICE int group_table_build(const tess_gemm_params &p, const group_table &tab) {
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int tiles[TESS_GROUPS_PER_THREAD], sum = 0;
#pragma unroll
    for (int i = 0; i < TESS_GROUPS_PER_THREAD; i++) {
        const int g = t * TESS_GROUPS_PER_THREAD + i;
        tiles[i] = 0;
        if (g < p.groups) {
            int first;
            const int rows = group_row_range<Cfg>(p, g, &first);
            const bool ours = rows >= p.group_min_rows && rows <= p.group_max_rows; // not another launch's
            tiles[i] = ours ? tess_group_row_units(rows, Cfg::GROUP_TILE, Cfg::CLUSTER, splits_tails<Cfg>(p)) : 0;
            tab.row_start[g] = first;
        }
        sum += tiles[i];
    }
    constexpr unsigned FULL_WARP = 0xffffffffu;
    constexpr int WARPS = TESS_SM90_THREADS / 32;
    int scan = sum; // inclusive over the warp's threads
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const int x = __shfl_up_sync(FULL_WARP, scan, d);
        scan += lane >= d ? x : 0;
    }
    if (lane == 31) // the warp's last lane holds its total
        tab.warp_sums[warp] = scan;
    __syncthreads();
    if (warp == 0) {
        int w = lane < WARPS ? tab.warp_sums[lane] : 0;
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            const int x = __shfl_up_sync(FULL_WARP, w, d);
            w += lane >= d ? x : 0;
        }
        __syncwarp();
        if (lane < WARPS)
            tab.warp_sums[lane] = w; // inclusive over the warps
    }
    __syncthreads();
    int before = scan - sum + (warp ? tab.warp_sums[warp - 1] : 0);
#pragma unroll
    for (int i = 0; i < TESS_GROUPS_PER_THREAD; i++) {
        const int g = t * TESS_GROUPS_PER_THREAD + i;
        if (g <= p.groups)
            tab.tile_start[g] = before;
        before += tiles[i];
    }
    __syncthreads();
    return tab.tile_start[p.groups] * tess_group_unit_items(grouped_cross_tiles<Cfg>(p), splits_tails<Cfg>(p));
}

// The tile of work item `item` for the CTA of cluster rank `rank` (hint: the
// group of this walker's previous item). Groups split M: group g's tokens
// are A's and D's rows (of batch g where masked), its weight B's batch g.
// In a token-tile kernel they split N: the weight is A's batch g, the
// tokens B's and D's columns. In a split tail the cluster's CTAs take the
// same rows and adjacent n tiles, each loading its own B tile whole.
template <class Cfg>
TESS_DEVICE tile_coord group_tile(const tess_gemm_params &p, const group_table &tab, int item, int rank, int &hint) {
    int g, mt, ct, split;
    tess_group_tile(p.group_order, tab.tile_start, p.groups, grouped_cross_tiles<Cfg>(p), p.group_m,
                    splits_tails<Cfg>(p), item, &hint, &g, &mt, &ct, &split);
    const int tokens_batch = p.group_layout == TESS_GROUP_MASKED ? g : 0;
    const int cta = split ? 0 : rank; // the tile row's CTA whose rows this tile holds
    const int first_token = tab.row_start[g] + tess_group_tile_first_row(mt, Cfg::GROUP_TILE, Cfg::CLUSTER, cta);
    ct += rank - cta;
    tile_coord c;
    c.group = g;
    c.b_whole = split;
    c.d_batch = tokens_batch;
    if (Cfg::GROUPED_ALONG_N) {
        c.a_batch = g, c.b_batch = tokens_batch;
        c.m0 = ct * Cfg::BM, c.m_end = p.m;
        c.n0 = first_token, c.n_end = 0; // known only where stores need it (group_tile_end)
    } else {
        c.a_batch = tokens_batch, c.b_batch = g;
        c.m0 = first_token, c.m_end = 0; // as n_end above
        c.n0 = ct * Cfg::BN, c.n_end = p.n;
    }
    return c;
}

// Sets where a tile's stores end along the grouped dimension: its group's
// last token + 1 (read from the group sizes).
template <class Cfg>
TESS_DEVICE void group_tile_end(const tess_gemm_params &p, tile_coord &c) {
    int first;
    const int rows = group_row_range<Cfg>(p, c.group, &first);
    (Cfg::GROUPED_ALONG_N ? c.n_end : c.m_end) = first + rows;
}
