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
 * which adds the partial sums the later units left in workspace.
 *
 * Interleaved K: when every item is shared by k_interleave units, an item's
 * iterations walk its K blocks in an interleaved order (tess_k_block), so
 * that the units sharing an item, running side by side, read neighbouring
 * K blocks of the same rows at the same time: one DRAM page serves them
 * all, where contiguous K quarters would keep four times as many pages
 * open. */
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
    int k_interleave;  /* > 1: the units sharing each item, whose K blocks are interleaved (tess_k_block) */
} tess_work_split;

/* The grid in which tess_k_block lays an item's K blocks for k_interleave =
 * S > 1: K block r S + c at row r, column c; `rows` rows, the last possibly
 * short, so the first full_columns columns hold `rows` K blocks and the
 * others rows - 1. */
typedef struct tess_k_grid {
    int rows, full_columns;
} tess_k_grid;

TESS_HD tess_k_grid tess_k_grid_of(const tess_work_split *s) {
    const int S = s->k_interleave, rows = (s->k_blocks + S - 1) / S;
    const tess_k_grid g = {rows, s->k_blocks - (rows - 1) * S};
    return g;
}

/* K blocks in column c of the grid. */
TESS_HD int tess_k_column_length(tess_k_grid g, int c) {
    return c < g.full_columns ? g.rows : g.rows - 1;
}

/* Iterations before column c's: where its run of iterations starts. */
TESS_HD int tess_k_column_start(tess_k_grid g, int c) {
    return c * (g.rows - 1) + (c < g.full_columns ? c : g.full_columns);
}

/* The K block of iteration v (0 <= v < k_blocks) of a stream-K item. With
 * k_interleave = S > 1, iterations walk tess_k_grid column by column: the S
 * units of an item (their ranges start at the columns: tess_sk_unit_begin)
 * take K blocks c, c + S, c + 2S, ... A permutation of the K blocks, so the
 * sum is the same set of products in a fixed order. */
TESS_HD int tess_k_block(const tess_work_split *s, int v) {
    if (s->k_interleave <= 1)
        return v;
    const tess_k_grid g = tess_k_grid_of(s);
    const int full = g.full_columns * g.rows; /* iterations in the full columns */
    const int c = v < full ? v / g.rows : g.full_columns + (v - full) / (g.rows - 1);
    return (v - tess_k_column_start(g, c)) * s->k_interleave + c;
}

/* K blocks of successive iterations in tess_k_block's order, stepped
 * without divisions (for the producer warp, which has few registers):
 * the current K block and the iterations left in its column. */
typedef struct tess_k_walk {
    int kb, left;
} tess_k_walk;

TESS_HD tess_k_walk tess_k_walk_at(const tess_work_split *s, int v) {
    tess_k_walk w = {tess_k_block(s, v), 1 << 30}; /* contiguous order: one endless column */
    const int S = s->k_interleave;
    if (S > 1)
        w.left = tess_k_column_length(tess_k_grid_of(s), w.kb % S) - w.kb / S;
    return w;
}

TESS_HD void tess_k_walk_next(const tess_work_split *s, tess_k_walk *w) {
    if (--w->left > 0) {
        w->kb += s->k_interleave > 1 ? s->k_interleave : 1;
        return;
    }
    /* A column's end (only with S > 1): the next column starts at its first K block. */
    w->kb = w->kb % s->k_interleave + 1;
    w->left = tess_k_column_length(tess_k_grid_of(s), w->kb);
}

/* A unit's position in its list: the current segment, and what is left. */
typedef struct tess_work_cursor {
    int item, k_begin, k_end; /* item < 0: the list is done */
    int next_dp;              /* next data-parallel item of this unit */
    int64_t sk_at, sk_end;    /* this unit's stream-K iterations still to walk */
} tess_work_cursor;

/* Whether a split is fill mode with interleaved K: no whole items, each of
 * the sk_items shared by exactly k_interleave (> 1) units. */
TESS_HD int tess_split_interleaved(const tess_work_split *s) {
    return s->k_interleave > 1 && s->dp_items == 0 && s->units == s->sk_items * s->k_interleave;
}

/* First stream-K iteration of unit u (units + 1 ends the last one): equal
 * shares, the remainder spread one by one; in interleaved fill mode, unit
 * j of each item's k_interleave starts at column j of tess_k_block's grid,
 * so that it takes exactly the K blocks j, j + S, ... */
TESS_HD int64_t tess_sk_unit_begin(const tess_work_split *s, int u) {
    if (tess_split_interleaved(s)) {
        const int S = s->k_interleave;
        return (int64_t)(u / S) * s->k_blocks + tess_k_column_start(tess_k_grid_of(s), u % S);
    }
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
 *    of one expert's W in L2. */

/* Tile rows of a group of `rows` rows for clusters of `cluster` CTAs along
 * M: a tile row is `cluster` tiles of tile_m rows (one per CTA), so that a
 * cluster's tiles never span two groups; its last may be partly empty. */
TESS_HD int tess_group_tile_rows(int rows, int tile_m, int cluster) {
    return (rows + tile_m * cluster - 1) / (tile_m * cluster);
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

/* Item `item` (0 <= item < tile_start[groups] * n_tiles) in order `order`:
 * its group, tile row within the group and n tile. *hint is the group of the
 * unit's previous item (0 before its first), updated for the scans. */
TESS_HD void tess_group_tile(int order, const int *tile_start, int groups, int n_tiles, int group_m, int item,
                             int *hint, int *g, int *mt, int *nt) {
    if (order == TESS_GROUP_ORDER_M_FASTEST) {
        const int rows = tile_start[groups];
        const int row = item % rows;
        *nt = item / rows;
        *g = tess_group_of_row_search(tile_start, groups, row);
        *mt = row - tile_start[*g];
        return;
    }
    /* Both other orders give group g the items [tile_start[g], tile_start[g + 1]) * n_tiles. */
    *g = *hint = tess_group_of_row_scan(tile_start, groups, item / n_tiles, *hint);
    if (order == TESS_GROUP_ORDER_N_FASTEST) {
        *mt = item / n_tiles - tile_start[*g];
        *nt = item % n_tiles;
        return;
    }
    int batch;
    tess_tile_coord(item - tile_start[*g] * n_tiles, tile_start[*g + 1] - tile_start[*g], n_tiles, group_m, &batch,
                    mt, nt);
}

#endif
