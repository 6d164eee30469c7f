/* The work order of the persistent kernels (kernels/common/sched.h), checked
 * on the CPU:
 *  - the tile order: a bijection onto (batch, m tile, n tile) that keeps
 *    concurrently running tiles within a group of rows;
 *  - the work split: every (item, K block) is computed by exactly one unit;
 *    data-parallel items are whole; each unit leaves at most one partial sum
 *    (its first stream-K segment); every item cut between units has exactly one
 *    finisher, the segment holding K block 0, and the contributors it waits
 *    for hold exactly the rest of the item's K blocks as their first stream-K
 *    segments. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/common/sched.h"
#include "ref/random.h"

static void test_scheduler(tess_rng *r) {
    for (int trial = 0; trial < 200; trial++) {
        int mt = (int)tess_rng_range(r, 1, 40), nt = (int)tess_rng_range(r, 1, 40);
        int batch = (int)tess_rng_range(r, 1, 3), group = (int)tess_rng_range(r, 1, 16);
        int total = mt * nt * batch;
        char *seen = calloc((size_t)total, 1);
        int bad = 0, spread = 0;
        for (int t = 0; t < total; t++) {
            int b, m, n;
            tess_tile_coord(t, mt, nt, group, &b, &m, &n);
            if (b < 0 || b >= batch || m < 0 || m >= mt || n < 0 || n >= nt) {
                bad++;
                continue;
            }
            seen[(b * mt + m) * nt + n]++;
            /* Within a group, the m tile is the group's first plus at most group - 1. */
            int first = (t % (mt * nt)) / (group * nt) * group;
            spread += m < first || m >= first + group;
        }
        int once = 0;
        for (int k = 0; k < total; k++)
            once += seen[k] == 1;
        CHECKF(bad == 0 && once == total && spread == 0, "scheduler %dx%dx%d group %d: %d out of range, %d of %d once",
               mt, nt, batch, group, bad, once, total);
        free(seen);
    }
}

/* Walks every unit of one split and checks the properties above. */
static void check_split(const tess_work_split *s) {
    const int items = s->dp_items + s->sk_items, kb = s->k_blocks;
    int *owner = malloc(sizeof(int) * (size_t)items * (size_t)kb); /* unit computing (item, k) */
    int *first_seg_item = malloc(sizeof(int) * (size_t)s->units), *first_seg_begin = malloc(sizeof(int) * (size_t)s->units);
    int *first_seg_end = malloc(sizeof(int) * (size_t)s->units);
    int *finishers = calloc((size_t)items, sizeof(int));
    for (int i = 0; i < items * kb; i++)
        owner[i] = -1;
    int twice = 0, empty = 0, dp_cut = 0, late_partials = 0, steps = 0;
    for (int u = 0; u < s->units; u++) {
        int seg = 0; /* stream-K segments so far */
        first_seg_item[u] = -1;
        for (tess_work_cursor c = tess_work_first(s, u); c.item >= 0 && steps < 10000000; tess_work_next(s, &c), steps++) {
            if (c.k_end <= c.k_begin || c.k_begin < 0 || c.k_end > kb || c.item >= items) {
                empty++;
                break;
            }
            if (c.item >= s->dp_items && seg++ == 0)
                first_seg_item[u] = c.item, first_seg_begin[u] = c.k_begin, first_seg_end[u] = c.k_end;
            if (c.item < s->dp_items && (c.k_begin != 0 || c.k_end != kb))
                dp_cut++;
            if (tess_work_is_partial(s, &c) && c.k_begin != 0 && seg != 1)
                late_partials++;
            if (tess_work_is_partial(s, &c) && c.k_begin == 0)
                finishers[c.item]++;
            for (int k = c.k_begin; k < c.k_end; k++) {
                int *o = &owner[(size_t)c.item * kb + k];
                twice += *o != -1;
                *o = u;
            }
        }
    }
    int missing = 0;
    for (int i = 0; i < items * kb; i++)
        missing += owner[i] == -1;
    /* Finishers: each cut item has one, and its contributors hold the rest of the item. */
    int bad_finish = 0;
    for (int u = 0; u < s->units; u++) {
        for (tess_work_cursor c = tess_work_first(s, u); c.item >= 0; tess_work_next(s, &c)) {
            if (!tess_work_is_partial(s, &c) || c.k_begin != 0)
                continue;
            int covered = c.k_end;
            int end = tess_work_contributors_end(s, &c, u);
            for (int v = u + 1; v < end; v++) {
                if (first_seg_item[v] != c.item || first_seg_begin[v] != covered)
                    bad_finish++;
                else
                    covered = first_seg_end[v];
            }
            bad_finish += covered != kb;
        }
    }
    int cut_items = 0, bad_count = 0;
    for (int i = 0; i < items; i++) {
        int cut = owner[(size_t)i * kb] != owner[(size_t)i * kb + kb - 1];
        for (int k = 1; k < kb; k++)
            cut |= owner[(size_t)i * kb + k] != owner[(size_t)i * kb];
        cut_items += cut;
        bad_count += finishers[i] != cut;
    }
    CHECKF(twice == 0 && missing == 0 && empty == 0 && dp_cut == 0 && late_partials == 0 && bad_finish == 0 &&
               bad_count == 0,
           "split units=%d k_blocks=%d dp=%d sk=%d: %d computed twice, %d missing, %d bad segments, %d cut dp items, "
           "%d partials after the first segment, %d bad finishes, %d items without one finisher (%d cut)",
           s->units, kb, s->dp_items, s->sk_items, twice, missing, empty, dp_cut, late_partials, bad_finish, bad_count,
           cut_items);
    free(owner), free(first_seg_item), free(first_seg_begin), free(first_seg_end), free(finishers);
}

static void test_work_split(tess_rng *r) {
    /* The suite's shapes as the planner splits them (128 x 256 tiles, 66 clusters). */
    const tess_work_split fixed[] = {
        {66, 110, 132, 108}, /* 3000x5000x7000: 240 items, 3 - 1 whole waves, then 108 stream-K */
        {66, 128, 924, 100}, /* 8192^3 */
        {66, 32, 0, 64},     /* 2048^3: fewer items than units */
        {66, 1024, 0, 1},    /* one item over every unit (split K) */
        {1, 5, 0, 3},        /* one unit: nothing is cut */
        {4, 8, 12, 0},       /* data-parallel only */
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_split(&fixed[i]);
    for (int trial = 0; trial < 2000; trial++) {
        tess_work_split s;
        s.units = (int)tess_rng_range(r, 1, 140);
        s.k_blocks = (int)tess_rng_range(r, 1, 200);
        s.dp_items = s.units * (int)tess_rng_range(r, 0, 4);
        s.sk_items = (int)tess_rng_range(r, 0, 3 * s.units);
        if ((int64_t)s.sk_items * s.k_blocks < s.units) /* the planner gives every unit an iteration */
            s.sk_items = (s.units + s.k_blocks - 1) / s.k_blocks;
        check_split(&s);
    }
}

/* Fill-mode stream-K (fewer items than units, as launch_split makes it:
 * S units an item, each with 4 or more K blocks): every unit's range lies
 * inside one item, unit j of an item holds the j-th of S contiguous,
 * near-equal shares of its K blocks, and the split keeps every property of
 * check_split. */
static void test_fill_split(tess_rng *r) {
    for (int trial = 0; trial < 3000; trial++) {
        const int items = (int)tess_rng_range(r, 1, 40), S = (int)tess_rng_range(r, 2, 12);
        const int k = (int)tess_rng_range(r, 4 * S, 300);
        const tess_work_split s = {S * items, k, 0, items};
        int bad = 0;
        for (int u = 0; u < s.units; u++) {
            const int64_t begin = tess_sk_unit_begin(&s, u), end = tess_sk_unit_begin(&s, u + 1);
            const int64_t item = u / S, share = end - begin;
            bad += begin < item * k || end > (item + 1) * k || share < k / S || share > k / S + 1;
        }
        CHECKF(tess_split_fills(&s) && bad == 0, "fill split items %d k_blocks %d units %d: %d units off their share",
               items, k, s.units, bad);
        check_split(&s);
    }
}

/* Tiles of clustered grouped work: over a group's tile rows and the ranks of
 * a cluster, every row of the group lies in exactly one tile, and only the
 * last tile row may hold tiles past the group's rows (fewer than a cluster). */
static void test_group_cluster_rows(tess_rng *r) {
    for (int trial = 0; trial < 3000; trial++) {
        const int cluster = 1 << (int)tess_rng_range(r, 0, 2), tile_m = 64 * (int)tess_rng_range(r, 1, 2);
        const int rows = trial % 5 == 0 ? 0 : (int)tess_rng_range(r, 1, trial % 3 ? 600 : 20000);
        const int tile_rows = tess_group_tile_rows(rows, tile_m, cluster);
        char *seen = calloc((size_t)rows + 1, 1);
        int empty = 0, early_empty = 0, twice = 0;
        for (int mt = 0; mt < tile_rows; mt++)
            for (int rank = 0; rank < cluster; rank++) {
                const int first = tess_group_tile_first_row(mt, tile_m, cluster, rank);
                if (first >= rows) {
                    empty++;
                    early_empty += mt != tile_rows - 1;
                }
                for (int row = first; row < first + tile_m && row < rows; row++)
                    twice += seen[row]++ != 0;
            }
        int missed = 0;
        for (int row = 0; row < rows; row++)
            missed += seen[row] == 0;
        CHECKF(missed == 0 && twice == 0 && early_empty == 0 && empty < (rows ? cluster : 1),
               "%d rows, tiles of %d, clusters of %d: %d rows missed, %d twice, %d empty tiles (%d early)", rows,
               tile_m, cluster, missed, twice, empty, early_empty);
        free(seen);
    }
}

/* Split-tail units: a group's units hold its rows in cluster rows of
 * 2 * tile_m, a last row of at most tile_m rows counting one unit (split
 * along N, no CTA idle) and any other two; without split tails, units are
 * the cluster rows. */
static void test_group_row_units(tess_rng *r) {
    int bad = 0;
    for (int trial = 0; trial < 3000; trial++) {
        const int tile_m = 64 * (int)tess_rng_range(r, 1, 2);
        const int rows = trial % 5 == 0 ? 0 : (int)tess_rng_range(r, 1, trial % 3 ? 600 : 20000);
        const int units = tess_group_row_units(rows, tile_m, 2, 1), plain = tess_group_row_units(rows, tile_m, 2, 0);
        const int rest = rows % (2 * tile_m);
        bad += plain != (rows + 2 * tile_m - 1) / (2 * tile_m);            /* cluster rows */
        bad += (units + 1) / 2 != plain;                                      /* the same rows */
        bad += units % 2 != (rest > 0 && rest <= tile_m);                     /* odd: a split tail */
        bad += units % 2 && (units / 2) * 2 * tile_m + tile_m < rows;         /* its rows fit one tile */
    }
    CHECKF(bad == 0, "split-tail units: %d bad", bad);
}

/* Grouped orders: with random group sizes (some groups empty), every unit
 * of a persistent grid walking its items (u, u + units, ...) with its own
 * scan hint sees each (group, tile row, n tile) exactly once, tile rows
 * within their group's; BANDED keeps a unit's neighbours inside group_m tile
 * rows. With split tails, a group of an odd number of table units ends in a
 * row whose n tiles come in pairs (an even n tile and the next), and only
 * that row is split. */
static void test_group_orders(tess_rng *r) {
    static const int orders[] = {TESS_GROUP_ORDER_N_FASTEST, TESS_GROUP_ORDER_M_FASTEST, TESS_GROUP_ORDER_BANDED};
    for (int trial = 0; trial < 600; trial++) {
        const int groups = (int)tess_rng_range(r, 1, trial % 3 ? 40 : 1024), order = orders[trial % 3];
        const int split_tails = order != TESS_GROUP_ORDER_M_FASTEST && trial % 2;
        const int n_tiles = (int)tess_rng_range(r, 1, 12) * (split_tails ? 2 : 1), units = (int)tess_rng_range(r, 1, 140);
        const int group_m = (int)tess_rng_range(r, 1, 16);
        int *start = malloc(sizeof(int) * (size_t)(groups + 1)), *row_base = malloc(sizeof(int) * (size_t)(groups + 1));
        start[0] = row_base[0] = 0;
        for (int g = 0; g < groups; g++) { /* a third of the groups empty, some long */
            const int count = tess_rng_range(r, 0, 2) == 0 ? 0 : (int)tess_rng_range(r, 1, g % 7 ? 3 : 20);
            start[g + 1] = start[g] + count;
            row_base[g + 1] = row_base[g] + (split_tails ? (count + 1) / 2 : count); /* tile rows */
        }
        const int items = start[groups] * tess_group_unit_items(n_tiles, split_tails);
        const int tiles = row_base[groups] * n_tiles;
        char *seen = calloc((size_t)tiles + 1, 1);
        int bad = 0, once = 0;
        for (int u = 0; u < units; u++) {
            int hint = 0;
            for (int item = u; item < items; item += units) {
                int g, mt, nt, split;
                tess_group_tile(order, start, groups, n_tiles, group_m, split_tails, item, &hint, &g, &mt, &nt,
                                &split);
                const int count = g >= 0 && g < groups ? start[g + 1] - start[g] : 0;
                const int rows = split_tails ? (count + 1) / 2 : count;
                const int tail = split_tails && count % 2; /* the group's last row is split */
                if (g < 0 || g >= groups || mt < 0 || mt >= rows || nt < 0 || nt + split >= n_tiles ||
                    split != (tail && mt == rows - 1) || (split && nt % 2)) {
                    bad++;
                    continue;
                }
                for (int j = 0; j <= split; j++)
                    seen[(row_base[g] + mt) * n_tiles + nt + j]++;
                if (order == TESS_GROUP_ORDER_BANDED && !split) { /* the band of local item i holds group_m rows */
                    const int local = item - start[g] * tess_group_unit_items(n_tiles, split_tails);
                    const int band = local / (group_m * n_tiles);
                    bad += mt < band * group_m || mt >= (band + 1) * group_m;
                }
            }
        }
        for (int i = 0; i < tiles; i++)
            once += seen[i] == 1;
        CHECKF(bad == 0 && once == tiles,
               "group order %d, split tails %d, %d groups, %d n tiles, %d units: %d bad, %d of %d once", order,
               split_tails, groups, n_tiles, units, bad, once, tiles);
        free(seen);
        free(row_base);
        free(start);
    }
    /* The searches agree with each other on every row, empty groups skipped. */
    const int start[] = {0, 0, 2, 2, 2, 5, 6, 6};
    int hint = 0, agree = 1;
    for (int row = 0; row < 6; row++) {
        int s = tess_group_of_row_search(start, 7, row), l = tess_group_of_row_scan(start, 7, row, hint);
        agree &= s == l && start[s] <= row && row < start[s + 1];
        hint = l;
    }
    CHECK(agree);
}

int main(void) {
    tess_rng r;
    tess_rng_seed(&r, check_seed());
    test_scheduler(&r);
    test_work_split(&r);
    test_fill_split(&r);
    test_group_orders(&r);
    test_group_row_units(&r);
    test_group_cluster_rows(&r);
    return check_finish("unit_sched");
}
