/* The tile order of tessera's persistent kernels, for host and device.
 * Linear tile t of a batched M x N output (m_tiles x n_tiles tiles per batch)
 * maps to (batch, m tile, n tile) in groups of `group_m` tile rows walked
 * column by column (M fastest within a group): the CTAs running at the same
 * time then share a few rows of A and a few columns of B in L2. */
#ifndef TESS_KERNELS_SCHED_H
#define TESS_KERNELS_SCHED_H

#include "core/hd.h"

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

#endif
