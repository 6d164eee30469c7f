/* The sm90 family's cost model of a dense plan: how a kernel splits the
 * problem's tiles over its persistent grid (data-parallel or stream-K), and
 * the estimated time of that launch, from the tensor cores' work and the
 * bytes its CTAs stream. The constants were fitted to the timings the
 * comments name (bench/results, dev/NOTES.md); plan_dense.c ranks by it. */
#include "core/cost.h"
#include "core/scale.h"
#include "kernels/sm90/sm90.h"

/* Units of work a kernel walks: tiles, counted in whole clusters along M. */
int64_t tess_sm90_work_tiles(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
    int64_t m_tiles = (d->m + k->tile_m - 1) / k->tile_m, n_tiles = (d->n + k->tile_n - 1) / k->tile_n;
    return (m_tiles + k->cluster_m - 1) / k->cluster_m * k->cluster_m * n_tiles * d->batch;
}

/* Stream-K pays only when every unit gets at least this many K blocks of the
 * tail: below that, the fixup (a partial sum through L2) outweighs the work. */
#define TESS_SK_MIN_BLOCKS 4
/* Stream-K shares a last wave of at most this many tenths of the units. */
#define TESS_SK_MAX_TAIL_TENTHS 6
/* The cost of one fixup in K blocks of a unit's wgmma work: writing or reading
 * one 128 x 256 float slot (128 KiB) through L2 takes about as long as 3 K
 * blocks of 128 x 256 x 64 wgmma (~0.7 us each at ~5.8 TFLOP/s per SM). */
#define TESS_SK_FIXUP_BLOCKS 3

/* The grid and the work split of a kernel on a problem (kernels/common/sched.h),
 * data-parallel or stream-K. Returns 0 when stream-K does not apply: the
 * items fill whole waves, or the tail is too thin to share. */
static int launch_split(const tess_gemm_kernel *k, const tess_gemm_desc *d, int ctas, int stream_k,
                        tess_work_split *s, int *grid) {
    const int items = (int)(tess_sm90_work_tiles(k, d) / k->cluster_m), units = ctas / k->cluster_m;
    if (units == 0) // an SM budget smaller than one cluster
        return 0;
    s->k_blocks = (int)((d->k + k->tile_k - 1) / k->tile_k);
    if (!stream_k) {
        s->units = items < units ? items : units;
        s->dp_items = items, s->sk_items = 0;
        *grid = s->units * k->cluster_m;
        return 1;
    }
    /* Fewer items than units (small M, few tiles): every item's K blocks are
     * shared by the same number of units, S = units / items of them (at
     * least 2, each with TESS_SK_MIN_BLOCKS or more), in contiguous ranges
     * (sched.h), so that the whole GPU streams the operands. */
    if (items < units) {
        const int64_t blocks = (int64_t)items * s->k_blocks;
        const int sharing = blocks / TESS_SK_MIN_BLOCKS < units ? (int)(blocks / TESS_SK_MIN_BLOCKS) : units;
        const int per_item = sharing / items;
        if (per_item < 2)
            return 0;
        s->units = per_item * items;
        s->dp_items = 0, s->sk_items = items;
        *grid = s->units * k->cluster_m;
        return 1;
    }
    /* Otherwise only a thin last wave is shared: measured on an H100 (bench/results/h100-dense.csv),
     * sharing 34 tail items of 66 at 8192^3 gained (823 vs 757 TFLOP/s),
     * 42 of 66 at 3000x5000x7000 broke even, but sharing 58 of 66 at 4096^3
     * lost (704 vs 774), as did sharing an extra whole wave: units at
     * scattered K offsets stop sharing A and B in L2. */
    const int tail = items % units;
    if (units < 2 || tail == 0 || tail * 10 > units * TESS_SK_MAX_TAIL_TENTHS)
        return 0;
    s->units = units;
    s->sk_items = tail;
    s->dp_items = items - tail;
    if ((int64_t)s->sk_items * s->k_blocks < (int64_t)units * TESS_SK_MIN_BLOCKS)
        return 0;
    *grid = units * k->cluster_m;
    return 1;
}

/* Bytes of stream-K workspace for `grid` CTAs of kernel k: a float slot of
 * partial sums per CTA's tile (the ready flags are the handle's). */
static size_t sk_workspace_bytes(const tess_gemm_kernel *k, int grid) {
    return (size_t)grid * (size_t)k->tile_m * (size_t)k->tile_n * sizeof(float);
}

/* Whether A's or B's rows (along their contiguous dimension) start off
 * 128-byte boundaries: each 128-byte TMA row then straddles two L2 lines,
 * and the kernels become bound by L2 reads. */
static int rows_misaligned(const tess_gemm_desc *d) {
    return (d->a.ld * (int64_t)tess_dtype_size(d->a.dtype)) % 128 != 0 ||
           (d->b.ld * (int64_t)tess_dtype_size(d->b.dtype)) % 128 != 0;
}

/* What one epilogue round's wait for the previous round's stores costs, in
 * K blocks of the tile's mainloop. Fitted to 128x256 block-scaled FP8 in 4
 * rounds (3 waits) against 1 round (H200, dev/NOTES.md "FP8, fourth pass"):
 * 4096x32768x512 (4 K blocks a tile) 722 vs 862 TFLOP/s, 4096x7168x2048 (16)
 * 1041 vs 1091, both 0.26 of a K block a wait. */
#define TESS_EPI_ROUND_WAIT_BLOCKS 0.26

/* Each epilogue round after a tile's first waits for the previous round's
 * stores to read the staging buffer, while the tensor cores idle (the
 * consumers run the epilogue). */
double tess_sm90_epilogue_factor(const tess_gemm_kernel *k, int64_t k_blocks) {
    return 1.0 + (k->epi_rounds - 1) * TESS_EPI_ROUND_WAIT_BLOCKS / (double)(k_blocks > 0 ? k_blocks : 1);
}

/* Estimated tensor-core time of a kernel on the problem, in units of tile
 * work: waves of persistent tiles (tiles a cluster pads past M count as
 * work), each tile's work over how efficiently the tile feeds the tensor cores.
 * - Tile width, measured with 128-byte aligned rows (4096^3 and 8192^3 bf16,
 *   H100 and H200): 128x128 reaches ~0.9 of 128x256 (narrower wgmmas
 *   re-read A more), 128x64 ~0.6; 2-CTA clusters sharing B ~1.02x. FP8
 *   tiles 256 wide that promote (in two 128-wide halves) lead the 192-wide
 *   ones by as much or more (H200, best plans, bench/results/h200-fp8.csv: block-scaled
 *   8192^3 1222 vs 1055 TFLOP/s, 4096x4096x7168 1187 vs 1103,
 *   4096x24576x1536 1038 vs 1011; per-tensor 8192^3 1257 vs 1226).
 * - With misaligned rows the kernels are bound by L2 reads, so efficiency
 *   follows the tile's intensity, flops per byte read from L2:
 *   BM * BN / (BM + BN / cluster), relative to 128x256 in clusters of 2
 *   (128). Measured at 3000x5000x7000 (H100, bench/results/h100-dense.csv): 128x256 c1 0.67
 *   of c2 (predicted 0.66), 128x128 c2 0.70 (0.66), 128x256 c4 1.31 per
 *   CTA (1.34: 651 TFLOP/s on 120 CTAs against 547 on 132).
 * Stream-K turns the waves into the exact share of items per unit, plus the
 * fixups: each unit writes one partial sum, and the finishing units read on
 * average units / sk_items + 1 of them. */
double tess_sm90_tile_width_efficiency(int tile_n) {
    return tile_n >= 256 ? 1.0 : tile_n >= 192 ? 0.95 : tile_n >= 128 ? 0.9 : 0.6;
}

/* Rows of a tile the tensor cores compute: all of them, but where M fits in
 * less than one tile a kernel that skips empty rows (tess_gemm_kernel)
 * computes only the consumer warpgroups' shares holding some. */
static int computed_rows(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
    const int share = TESS_SM90_CONSUMER_ROWS;
    return k->skips_empty_rows && d->m < k->tile_m ? (int)(d->m + share - 1) / share * share : k->tile_m;
}

static double tile_work(const tess_gemm_kernel *k, const tess_gemm_desc *d, const tess_sm90_launch *x) {
    double waves;
    const double epilogue = tess_sm90_epilogue_factor(k, x->split.k_blocks);
    if (x->split.sk_items == 0) {
        waves = (double)((x->split.dp_items + x->split.units - 1) / x->split.units);
    } else if (tess_split_fills(&x->split)) {
        /* Every unit one share of one item's K; the fixup after the stream
         * is timed apart (fill_fixup_seconds). */
        waves = (double)x->split.sk_items / x->split.units;
    } else {
        double fixups = 1.0 + (double)x->split.units / x->split.sk_items;
        waves = (double)(x->split.dp_items + x->split.sk_items) / x->split.units +
                TESS_SK_FIXUP_BLOCKS * fixups / x->split.k_blocks;
    }
    /* Token tiles (16, 32 wide) are taken at 64-wide's rate: they only run
     * memory-bound problems (small M transposed), where their compute time
     * is not known, but hidden under the weight stream. */
    double efficiency = tess_sm90_tile_width_efficiency(k->tile_n);
    /* Clusters of 2 halve B's L2 reads, but tie the two CTAs' rings together.
     * Block-scaled FP8 loses by it (H200, c1 against c2: 4096^3
     * 1011 vs 947 TFLOP/s, 4096x7168x2048 933 vs 887), except 192-wide tiles
     * whose factors come by TMA (8192^3 1032 vs 1085, 4096x4096x7168 973 vs
     * 1076; 128-wide ones still lose: 4096x7168x2048 930 vs 891, and M = 64
     * or 128 with K = 16384 236 vs 175 and 469 vs 405). The others gain a
     * little. */
    const int block_scaled_c2_gains = k->tile_n >= 192 && tess_sm90_factor_layouts_by_tma(k, d);
    if (k->cluster_m > 1)
        efficiency *= k->scaling >= TESS_SCALING_BLOCK_ROWS && !block_scaled_c2_gains ? 0.95 : 1.02;
    /* Per-column B factors cost loads at every promotion: measured at 8192^3
     * with 128x128 B blocks (H200), 128x192 per-column 882
     * TFLOP/s against 990 for 128x128 with one factor per tile. */
    if (k->scaling == TESS_SCALING_BLOCK_ROWS_COLS && d->b_scale.mode == TESS_SCALE_BLOCK_128x128)
        efficiency *= 0.85;
    if (rows_misaligned(d))
        efficiency = (double)k->tile_m * k->tile_n / (k->tile_m + (double)k->tile_n / k->cluster_m) / 128.0;
    return waves * epilogue * computed_rows(k, d) * k->tile_n / efficiency;
}


/* Dense tensor-core flops per SM per clock on sm_90: 4096 for 16-bit inputs, twice that for FP8. */
#define TESS_SM90_FLOPS_PER_CLOCK 4096.0
/* What one CTA's TMA stream draws from memory (Little's law): the bytes
 * its ring holds in flight over the loaded memory latency, at most
 * TESS_SM_STREAM_BYTES_PER_S, of which the streamed operand's rows are the
 * useful part; rows a tile pads past the other operand's edge (filled by
 * TMA) take their share of the stream too. On an H100, 32 CTAs of 128x16
 * s12 transposed at M = 1, N = 4096 add 2680 GB/s of weights per added K
 * (K 14336 -> 28672): 84 useful GB/s per CTA with 220 KB in flight, 2.3 us;
 * a small grid thus streams at far more than its share of the SMs. (Every
 * launch also costs about 6 us whatever its size: the same for every plan,
 * so left out.) FP8 token tiles draw less: promoted ones ~74 GB/s per CTA,
 * block-scaled ones whose factors come by copy ~45 (the 0.55 below, applied
 * there only). The latency is fitted to every plan of the small-M and skinny
 * problems timed on an H200 (bench/results/h200-skinny-plans-4442951.txt,
 * dev/probes/plan_all.sh and cases_skinny.txt): with 1.9 us the picks run
 * 0.60% slower than the best plans on 18 skinny problems (1.64% with 2.3 us,
 * 1.44% with 1.85) and 1.20% on 47 problems (2.27%, 1.40% with 2.0, 1.51%). */
#define TESS_LOADED_MEMORY_LATENCY_S 1.9e-6
/* The same for re-reads that hit L2 (a later group of tiles reading the
 * rows again). Taking the memory's latency for those too ranked 3-stage
 * rings far behind 4-stage ones on 4096x32768x512 FP8 (B re-read by 32 tile
 * rows: 0.112 against 0.074 ms of streaming), where they ran fastest on an
 * H200 (0.159 against 0.190 ms; bench/results/h200-fp8.csv). */
#define TESS_LOADED_L2_LATENCY_S 1.0e-6
/* The most one CTA's stream draws, whatever its bytes in flight: fitted to
 * the same every-plan timings (60 GB/s: the picks 0.78% from the best over
 * 47 problems and 0.06% over 18 skinny ones, against 1.20% and 0.60% with
 * the 95 an H100's transposed 16-token tiles suggested; 55 ties 60, 65 gives
 * 0.96%): plans on more CTAs stream faster than the bytes one CTA holds in
 * flight say. */
#define TESS_SM_STREAM_BYTES_PER_S 60e9
#define TESS_PROMOTED_STREAM_SHARE 0.85
/* A promoting consumer takes about this long per ring stage (the wait for
 * the block's wgmmas, the promotion, the release), whatever the tile's
 * width, so that a CTA of a promoted kernel draws at most one stage's
 * streamed rows per this time: narrow FP8 tiles stream slowly however many
 * stages are in flight. Fitted to every plan of 9 FP8 block-scaled and 3
 * bf16 problems on an H100 (dev/results/plans-h100-small-m, dev/plan_eval.py):
 * the picks run 0.98% slower than the fastest plans on geometric mean
 * (0.25 to 0.28 us alike; 2.7% at 0.22, 5.0% without the bound: 128x32 FP8
 * tiles were taken at M = 128, N = 4096, K = 7168, 23.7 us, over 128x64
 * ones, 20.3). On the older listing of 24 small-M problems
 * (bench/results/h100-smallm-plans.txt) 6.6% against 8.6% without; bf16
 * picks are unchanged. */
#define TESS_PROMOTED_STAGE_S 0.25e-6
#define TESS_COPIED_FACTORS_STREAM_SHARE 0.55
/* Stream-K in fill mode (every tile's K shared, fewer tiles than SMs, in
 * contiguous shares) streams at the copy rate like any other plan, and then
 * pays a fixup that nothing hides: a contributor stores its partial sums
 * and raises its flag, the finishing unit sees the flag and reads every
 * contributor's sums, all through L2. Timed per CTA with globaltimer stamps
 * on an H200: 2.0-2.2 us after the last mainloop for 128x16 tiles shared 7
 * ways (8 KB sums), 4.7 us for 128x128 shared 4 ways (64 KB; dev/NOTES.md,
 * "Where a short GEMM's time goes"). Modelled as this latency plus the
 * shares' sums (the finisher's reads and a contributor's store) through one
 * SM at its L2 rate. Fitted with every plan of 37 small-M and mid-sized
 * problems timed on the H200 (dev/probes/plan_all.sh): the picks ran 1.96%
 * slower than the best plans on geometric mean, against 4.8% with a flat
 * stream efficiency (1024x1024x8192 bf16 then took 128x256 tiles shared 4
 * ways, 36.8 us, over 128x128 shared 2 ways, 31.8). */
#define TESS_FILL_FIXUP_LATENCY_S 2.0e-6
/* In fill mode, tiles that pad M with rows TMA fills with zeros stream
 * slower than their real rows account for: TMA fills a box's rows past the
 * tensor's edge at about half the streaming rate (dev/probes/tma_oob.cu;
 * H200, 128x64 stream-K at N = 4096, K = 7168: bf16 35.4, 29.1, 24.9 us at
 * M = 64, 96, 128, i.e. 0.84 and 0.68 of the padded fraction). Kernels load
 * only the rows that exist where they can (tess_sm90_loads_edge_rows_only),
 * so the term stands for the zero-filled boxes left (MN-major operands, B
 * multicast in clusters). With it, every plan of the 47 problems timed on
 * the H200: the picks run 1.02% slower than the best on geometric mean; the
 * worst, 128x8192x8192 bf16, takes 128x128 tiles shared 2 ways, 44.9 us,
 * where 128x64 tiles in one wave ran 42.0 (dev/NOTES.md, "Zero-filled TMA
 * rows"). */
#define TESS_FILL_PADDED_ROWS_COST 0.8

/* Pingpong plans are listed (for --plan and autotuning) but ranked behind
 * the cooperative ones by this factor on their estimate: the schedule has
 * no timings the cost model was fitted to yet. */
#define TESS_SM90_UNMEASURED_SCHEDULE 2.0

double tess_sm90_compute_seconds(const tess_device_info *info, int input, double flops) {
    /* FP8 and INT8 run twice the 16-bit rate, TF32 half of it (the H100 datasheet's dense peaks: 1979 TF/s
     * and 1979 TOPS, 989, 495) */
    const double rate = tess_mma_input_is_fp8(input) || input == TESS_MMA_S8 ? 2.0 : input == TESS_MMA_TF32 ? 0.5 : 1.0;
    return flops / (TESS_SM90_FLOPS_PER_CLOCK * rate * tess_device_sm_hz(info) * TESS_SUSTAINED_CLOCK);
}


/* The fixup after a fill-mode stream-K plan's mainloops (0 for other
 * plans): TESS_FILL_FIXUP_LATENCY_S, plus one partial-sum slot per unit
 * sharing an item through one SM's L2 bandwidth. */
static double fill_fixup_seconds(const tess_device_info *info, const tess_gemm_kernel *k, const tess_sm90_launch *x) {
    if (!tess_split_fills(&x->split))
        return 0.0;
    const double shares = (double)x->split.units / x->split.sk_items;
    const double slot_bytes = (double)k->tile_m * k->tile_n * sizeof(float);
    return TESS_FILL_FIXUP_LATENCY_S + shares * slot_bytes / tess_l2_bytes_per_sm_s(info);
}


/* Estimated run time of a kernel on the problem, in seconds: the longer of
 * its tensor-core time (tile_work at the sustained clock) and the time to
 * stream A, B and D from memory once, at the rate the grid can draw (the
 * sustained copy rate, or each CTA's latency-bound stream of the larger
 * operand, re-read once per tile of the other, where that is slower; a
 * transposed plan's weights once per token tile), plus TESS_OVERLAP_LOSS of
 * the shorter, plus a fill-mode stream-K plan's fixup. */
double tess_sm90_dense_estimate(const tess_device_info *info, const tess_gemm_kernel *k, const tess_gemm_desc *d,
                                const tess_sm90_launch *x, int transposed) {
    const int64_t k_padded = (d->k + k->tile_k - 1) / k->tile_k * k->tile_k;
    const double compute =
        tess_sm90_compute_seconds(info, k->input, tile_work(k, d, x) * 2.0 * (double)k_padded);
    const double a_bytes = (double)d->m * d->k * tess_dtype_size(d->a.dtype);
    const double b_bytes = (double)d->n * d->k * tess_dtype_size(d->b.dtype);
    const double bytes = (double)d->batch * (a_bytes + b_bytes + (double)d->m * d->n * tess_dtype_size(d->d.dtype));
    /* Rows of the larger operand a CTA loads per stage (its share of a
     * multicast B), and the other tile's rows past its matrix (on average
     * over its tiles), tile_k elements each. */
    const int streams_a = a_bytes >= b_bytes;
    const int rows = streams_a ? k->tile_m : k->tile_n / k->cluster_m;
    const int64_t other = streams_a ? d->n : d->m, other_tile = streams_a ? k->tile_n : k->tile_m;
    const int64_t other_tiles = (other + other_tile - 1) / other_tile;
    /* (Rows past the edge cost nothing where the kernel loads only those
     * that exist: edge_map.) */
    const double padded =
        tess_sm90_loads_edge_rows_only(k, d, !streams_a) ? 0.0
                                                          : (double)(other_tiles * other_tile - other) / other_tiles;
    const double row_bytes = (double)k->tile_k * tess_dtype_size(streams_a ? d->a.dtype : d->b.dtype);
    double per_cta = k->stages * (rows + padded) * row_bytes / TESS_LOADED_MEMORY_LATENCY_S;
    if (per_cta > TESS_SM_STREAM_BYTES_PER_S)
        per_cta = TESS_SM_STREAM_BYTES_PER_S;
    const double promoting_draw = (rows + padded) * row_bytes / TESS_PROMOTED_STAGE_S;
    if (k->scaling >= TESS_SCALING_PROMOTE && per_cta > promoting_draw)
        per_cta = promoting_draw;
    per_cta *= rows / (rows + padded);
    if (k->scaling >= TESS_SCALING_PROMOTE)
        per_cta *= k->scaling >= TESS_SCALING_BLOCK_ROWS && !tess_sm90_factor_layouts_by_tma(k, d)
                       ? TESS_COPIED_FACTORS_STREAM_SHARE
                       : TESS_PROMOTED_STREAM_SHARE;
    /* The CTAs' streams carry the larger operand once per tile of the other
     * (a cluster's CTAs share a multicast B). Tiles that run side by side
     * read it at the same time, each at the memory's latency: the tile rows
     * of one group of the tile order (sched.h) where B is streamed, the
     * columns a wave covers of a group where A is. Later tiles re-read it
     * from L2 where it fits there (half of it: the other operand's tiles
     * pass through too), whose shorter latency lets the same bytes in
     * flight draw more (capped as above). Memory delivers each byte once.
     * The slower of the two bounds the time. */
    /* (A CTA's share of a multicast B passes once per tile row it takes,
     * counted in whole clusters: where M ends in a cluster's first tile,
     * the second CTA still streams its share.) */
    const double pass = (double)d->batch * (streams_a ? a_bytes : b_bytes / k->cluster_m);
    const int64_t passes = streams_a ? other_tiles : (other_tiles + k->cluster_m - 1) / k->cluster_m * k->cluster_m;
    const double l2_bytes = tess_device_l2_bytes(info);
    int64_t side_by_side =
        streams_a ? x->grid / k->cluster_m / TESS_SM90_GROUP_M : (int64_t)TESS_SM90_GROUP_M * k->cluster_m;
    if (side_by_side < 1)
        side_by_side = 1;
    const int64_t from_memory = pass > l2_bytes / 2 || passes < side_by_side ? passes : side_by_side;
    double per_cta_l2 = per_cta * TESS_LOADED_MEMORY_LATENCY_S / TESS_LOADED_L2_LATENCY_S;
    if (per_cta_l2 > TESS_SM_STREAM_BYTES_PER_S)
        per_cta_l2 = TESS_SM_STREAM_BYTES_PER_S;
    const double streaming =
        (pass * (double)from_memory / per_cta + pass * (double)(passes - from_memory) / per_cta_l2) / x->grid;
    double memory = tess_memory_seconds(info, bytes);
    if (streaming > memory)
        memory = streaming;
    /* A transposed plan whose token tile is narrower than M streams the
     * weights once per token tile: charged as that many whole streams (an
     * overestimate that ranks such plans behind one tile holding every
     * token). Measured (H200, GPU time, bf16): 64x4096x7168
     * 25.1 us on one 64-token tile, 30.6 on two of 32, 32.5 on four of 16;
     * 64x2112x7168 18.4, 22.5 and 28.1. The weights passing through L2 once
     * per token tile did not show in the memory term, which ranked two
     * 32-token tiles first. */
    if (transposed && streams_a)
        memory *= (double)other_tiles;
    /* Fill mode: tiles whose rows run past M (TMA fills them with zeros)
     * stream slower than their useful rows say, by TESS_FILL_PADDED_ROWS_COST
     * of the padded fraction. */
    if (tess_split_fills(&x->split) && !transposed)
        memory *= 1.0 + TESS_FILL_PADDED_ROWS_COST * padded / (double)other_tile;
    const double seconds = tess_overlapped_seconds(compute, memory) + fill_fixup_seconds(info, k, x);
    return k->pingpong ? seconds * TESS_SM90_UNMEASURED_SCHEDULE : seconds;
}


/* How kernel `kernel` would run `desc`: the grid, the work split and the
 * workspace, data-parallel or stream-K. Returns 0 where that mode does not
 * apply (stream-K: the tiles fill whole waves, or the tail is too thin). */
int tess_sm90_dense_launch(const tess_device_info *info, const tess_gemm_desc *desc, int kernel, int stream_k,
                           tess_sm90_launch *x) {
    const tess_gemm_kernel *k = tess_sm90_kernel(kernel);
    if (!k || (stream_k && k->pingpong) ||
        !launch_split(k, desc, tess_sm90_resident_ctas(kernel, info), stream_k, &x->split, &x->grid))
        return 0;
    if (stream_k && x->grid > TESS_SK_MAX_CTAS)
        return 0;
    x->workspace = stream_k ? sk_workspace_bytes(k, x->grid) : 0;
    return 1;
}

