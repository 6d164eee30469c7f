/* The work order of tessera's persistent kernels, for host and device.
 *
 * Output tiles: linear tile t of a batched M x N output (m_tiles x n_tiles
 * tiles per batch) maps to (batch, m tile, n tile) in groups of `group_m`
 * tile rows walked column by column (M fastest within a group): the CTAs
 * running at the same time then share a few rows of A and a few columns of B
 * in L2.
 *
 * Work units: a persistent grid has `units` workers (clusters), each walking
 * a list of segments (work item, K blocks [k_begin, k_end)). The first
 * `dp_items` items are data-parallel: unit u takes u, u + units, ... whole.
 * The remaining `sk_items` items are stream-K: their sk_items x k_blocks
 * (item, K block) iterations are cut into `units` contiguous, equal ranges,
 * so a tail that would fill only part of a wave is spread over every unit.
 * An item cut between units is finished by the unit holding its K block 0,
 * which adds the partial sums the later units left in workspace. With
 * fewer items than units (fill mode: dp_items 0, units a multiple of
 * sk_items) each item's K blocks fall into units / sk_items equal,
 * contiguous ranges. (An interleaved K order, unit j of an item taking K
 * blocks j, j + S, ..., so that the units of an item read neighbouring K
 * blocks of the same rows at the same time, ran 1-4% slower on an H200,
 * dev/NOTES.md, "Small M".) */
#ifndef TESS_KERNELS_SCHED_H
#define TESS_KERNELS_SCHED_H

#include <stdint.h>

#include "core/hd.h"
#include "tessera.h"

TESS_HD void tess_tile_coord(int t, int m_tiles, int n_tiles, int group_m, int *batch, int *mt, int *nt) {
    int per_batch = m_tiles * n_tiles;
    *batch = t / per_batch;
    int r = t - *batch * per_batch;
    int group_tiles = group_m * n_tiles;
    int group = r / group_tiles, in_group = r - group * group_tiles;
    int first_m = group * group_m;
    int rows = m_tiles - first_m < group_m ? m_tiles - first_m : group_m; /* the last group may be shorter */
    *mt = first_m + in_group % rows;
    *nt = in_group / rows;
}

/* How the work items of one launch are shared among its units. */
typedef struct tess_work_split {
    int units;         /* persistent workers (clusters) */
    int k_blocks;      /* K blocks per item */
    int dp_items;      /* items taken whole, round robin: a multiple of units */
    int sk_items;      /* the last items, shared as stream-K iterations */
} tess_work_split;

/* A unit's position in its list: the current segment, and what is left. */
typedef struct tess_work_cursor {
    int item, k_begin, k_end; /* item < 0: the list is done */
    int next_dp;              /* next data-parallel item of this unit */
    int64_t sk_at, sk_end;    /* this unit's stream-K iterations still to walk */
} tess_work_cursor;

/* Whether a split is fill mode: fewer items than units, every item's K
 * blocks shared by units / sk_items of them (a tail split always has whole
 * items too). */
TESS_HD int tess_split_fills(const tess_work_split *s) {
    return s->dp_items == 0 && s->sk_items > 0;
}

/* First stream-K iteration of unit u (units + 1 ends the last one): equal
 * shares, the remainder spread one by one. */
TESS_HD int64_t tess_sk_unit_begin(const tess_work_split *s, int u) {
    return (int64_t)s->sk_items * s->k_blocks * u / s->units;
}

/* Moves the cursor to the segment starting at stream-K iteration c->sk_at (or to the end). */
TESS_HD void tess_work_sk_segment(const tess_work_split *s, tess_work_cursor *c) {
    if (c->sk_at >= c->sk_end) {
        c->item = -1;
        return;
    }
    int64_t item = c->sk_at / s->k_blocks;
    int64_t item_end = (item + 1) * s->k_blocks;
    c->item = s->dp_items + (int)item;
    c->k_begin = (int)(c->sk_at - item * s->k_blocks);
    c->k_end = (int)((c->sk_end < item_end ? c->sk_end : item_end) - item * s->k_blocks);
}

/* The first segment of unit u. */
TESS_HD tess_work_cursor tess_work_first(const tess_work_split *s, int u) {
    tess_work_cursor c;
    c.next_dp = u;
    c.sk_at = tess_sk_unit_begin(s, u);
    c.sk_end = tess_sk_unit_begin(s, u + 1);
    if (c.next_dp < s->dp_items) {
        c.item = c.next_dp, c.k_begin = 0, c.k_end = s->k_blocks;
        c.next_dp += s->units;
    } else {
        tess_work_sk_segment(s, &c);
    }
    return c;
}

/* The segment after the current one. */
TESS_HD void tess_work_next(const tess_work_split *s, tess_work_cursor *c) {
    if (c->item < s->dp_items) {
        if (c->next_dp < s->dp_items) {
            c->item = c->next_dp;
            c->next_dp += s->units;
            return;
        }
        tess_work_sk_segment(s, c);
        return;
    }
    c->sk_at += c->k_end - c->k_begin;
    tess_work_sk_segment(s, c);
}

/* A segment that is not a whole item leaves a partial sum in workspace unless
 * it holds K block 0: that one finishes the item. */
TESS_HD int tess_work_is_partial(const tess_work_split *s, const tess_work_cursor *c) {
    return c->k_end - c->k_begin < s->k_blocks;
}

/* The units whose partial sums the finishing segment `c` of unit u adds: u + 1
 * up to (not including) the returned unit. Each such unit's first stream-K
 * segment is a piece of the rest of this item, and the only partial sum it
 * leaves, so one workspace slot per unit suffices. */
TESS_HD int tess_work_contributors_end(const tess_work_split *s, const tess_work_cursor *c, int u) {
    int64_t item_end = (int64_t)(c->item - s->dp_items + 1) * s->k_blocks;
    int v = u + 1;
    while (v < s->units && tess_sk_unit_begin(s, v) < item_end)
        v++;
    return v;
}

/* Grouped GEMM (Mixture-of-Experts) work. Group g has rows_g rows, cut into
 * ceil(rows_g / tile_m) tile rows; tile_start[g] is the tile rows of the
 * groups before g (tile_start[groups]: all of them). An item is one (tile
 * row, n tile) pair, tile_start[groups] * n_tiles items in all, walked in one
 * of these orders (tess_group_order of tessera.h: hpc-ops' two, and one
 * that keeps L2 reuse):
 *  - N_FASTEST: the n tiles of one tile row, then the next row ("horizontal");
 *    a unit finds each item's group by scanning on from its previous one.
 *  - M_FASTEST: the tile rows of every group for one n tile, then the next n
 *    tile ("vertical"); the group by binary search over tile_start.
 *  - BANDED: group by group, each group's tiles in the dense order of
 *    tess_tile_coord (bands of group_m tile rows walked column by column), so
 *    the units running together share a few row tiles of X and column tiles
 *    of one expert's W in L2.
 *
 * Split tails (clusters of 2 along M, an even number of n tiles, not
 * M_FASTEST): a group's last tile row whose rows fit in one tile would leave
 * the cluster's second CTA idle (its tile past the group's rows), and in
 * skewed routings such rows are a large share of the work (256 groups of 256
 * tokens on average, Zipf-like: 1.51 padded rows per row in 256-row cluster
 * rows, 1.21 in 128-row tiles). Such a row is split along N instead: both
 * CTAs take the same rows, each its own n tile of an adjacent pair, so it
 * holds n_tiles / 2 items. Tables then count a group's rows in units of
 * n_tiles / 2 items: 2 per whole cluster row, 1 per split tail. */

/* Tile rows of a group of `rows` rows for clusters of `cluster` CTAs along
 * M: a tile row is `cluster` tiles of tile_m rows (one per CTA), so that a
 * cluster's tiles never span two groups; its last may be partly empty. */
TESS_HD int tess_group_tile_rows(int rows, int tile_m, int cluster) {
    return (rows + tile_m * cluster - 1) / (tile_m * cluster);
}

/* The table units of a group of `rows` rows: its tile rows, or with split
 * tails (clusters of 2) 2 per cluster row and 1 for a last row of at most
 * tile_m rows. */
TESS_HD int tess_group_row_units(int rows, int tile_m, int cluster, int split_tails) {
    if (!split_tails)
        return tess_group_tile_rows(rows, tile_m, cluster);
    const int whole = rows / (2 * tile_m), rest = rows - whole * 2 * tile_m;
    return 2 * whole + (rest == 0 ? 0 : rest <= tile_m ? 1 : 2);
}

/* Items per table unit: n_tiles, or n_tiles / 2 with split tails. */
TESS_HD int tess_group_unit_items(int n_tiles, int split_tails) {
    return split_tails ? n_tiles / 2 : n_tiles;
}

/* The first row, counted from its group's first, of the tile that the CTA
 * of cluster rank `rank` computes in tile row mt: at or past the group's
 * rows (a tile with nothing to store) only in a partly empty last tile row. */
TESS_HD int tess_group_tile_first_row(int mt, int tile_m, int cluster, int rank) {
    return (mt * cluster + rank) * tile_m;
}

/* The group g holding tile row `row` (tile_start[g] <= row < tile_start[g + 1]),
 * by binary search; empty groups (no tile rows) are never the answer. */
TESS_HD int tess_group_of_row_search(const int *tile_start, int groups, int row) {
    int lo = 0, hi = groups - 1; /* the last g with tile_start[g] <= row */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (tile_start[mid] <= row)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The same by a linear scan on from group `from`, the answer for an earlier
 * (not larger) row: a unit's rows only grow, so each scan is short. */
TESS_HD int tess_group_of_row_scan(const int *tile_start, int groups, int row, int from) {
    int g = from;
    while (g + 1 < groups && tile_start[g + 1] <= row)
        g++;
    return g;
}

/* Item `item` (0 <= item < tile_start[groups] * tess_group_unit_items) in
 * order `order`: its group, tile row within the group and n tile, and
 * whether it is a split tail (*split: n tiles *nt and *nt + 1, one per CTA).
 * *hint is the group of the unit's previous item (0 before its first),
 * updated for the scans. M_FASTEST takes no split tails. */
TESS_HD void tess_group_tile(int order, const int *tile_start, int groups, int n_tiles, int group_m, int split_tails,
                             int item, int *hint, int *g, int *mt, int *nt, int *split) {
    *split = 0;
    if (order == TESS_GROUP_ORDER_M_FASTEST) {
        const int rows = tile_start[groups];
        const int row = item % rows;
        *nt = item / rows;
        *g = tess_group_of_row_search(tile_start, groups, row);
        *mt = row - tile_start[*g];
        return;
    }
    /* Both other orders give group g the items [tile_start[g], tile_start[g + 1]) * unit_items:
     * its whole tile rows first (2 units each with split tails), then a split tail's pairs. */
    const int unit_items = tess_group_unit_items(n_tiles, split_tails);
    const int unit = item / unit_items, in_unit = item - unit * unit_items;
    *g = *hint = tess_group_of_row_scan(tile_start, groups, unit, *hint);
    const int local_unit = unit - tile_start[*g], units = tile_start[*g + 1] - tile_start[*g];
    if (split_tails && (units & 1) && local_unit == units - 1) {
        *split = 1;
        *mt = local_unit >> 1;
        *nt = 2 * in_unit;
        return;
    }
    if (order == TESS_GROUP_ORDER_N_FASTEST) {
        *mt = split_tails ? local_unit >> 1 : local_unit;
        *nt = split_tails ? (local_unit & 1) * unit_items + in_unit : in_unit;
        return;
    }
    int batch;
    tess_tile_coord(local_unit * unit_items + in_unit, split_tails ? units >> 1 : units, n_tiles, group_m, &batch, mt,
                    nt);
}

#endif
