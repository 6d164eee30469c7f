/* The parameter block of the sm90 GEMM kernels, shared by the host code that
 * fills it and the kernels that read it (passed by value, __grid_constant__). */
#ifndef TESS_KERNELS_SM90_GEMM_PARAMS_H
#define TESS_KERNELS_SM90_GEMM_PARAMS_H

#include <cuda.h>
#include <stdint.h>

#include "core/hd.h"
#include "core/scale.h"
#include "kernels/common/epilogue.h"
#include "kernels/common/sched.h"
#include "tessera.h"

/* Consumer warpgroups per CTA at most (each owns TESS_SM90_CONSUMER_ROWS
 * of the tile: two for 128-row tiles, one for 64-row ones); the stream-K
 * workspace holds one ready flag per consumer warpgroup. */
#define TESS_SM90_CONSUMERS 2
#define TESS_SM90_CONSUMER_ROWS 64
/* Stream-K launches have at most this many CTAs (one per SM: an H100 has
 * 132, a full GH100 144; 1024 leaves room for any GPU these kernels may
 * meet, and the planner refuses stream-K beyond it) and their ready flags,
 * TESS_SK_FLAG_BYTES (1024 CTAs x 2 warpgroups x 4 bytes = 8 KiB), belong
 * to the handle (core/handle.h): zeroed at creation, and every launch
 * leaves them down. */
#define TESS_SK_MAX_CTAS 1024
#define TESS_SK_FLAG_BYTES (TESS_SK_MAX_CTAS * TESS_SM90_CONSUMERS * 4)

/* The operand types a kernel multiplies (its IN template parameter): one
 * 16-bit type for both, an FP8 pair (A type, B type), f32 read as TF32, or
 * int8. */
enum tess_mma_input {
    TESS_MMA_BF16,
    TESS_MMA_F16,
    TESS_MMA_E4M3_E4M3,
    TESS_MMA_E4M3_E5M2,
    TESS_MMA_E5M2_E4M3,
    TESS_MMA_E5M2_E5M2,
    TESS_MMA_TF32,
    TESS_MMA_S8 /* s8 x s8, int32 accumulators (the float registers hold their bits until the epilogue) */
};

/* Whether a kernel input is an FP8 pair (promotion, block scales, FP8's rate). */
TESS_HD int tess_mma_input_is_fp8(int input) { return input >= TESS_MMA_E4M3_E4M3 && input <= TESS_MMA_E5M2_E5M2; }

/* How a kernel accumulates and applies dequantization factors (its SCALING
 * template parameter). Per-tensor and per-row/column factors are constant
 * along K, so every kind applies them once, to the finished accumulators. */
enum tess_scaling {
    /* The tensor cores accumulate all of K (16-bit inputs; FP8 fast accumulation). */
    TESS_SCALING_PLAIN,
    /* FP8: the partial sum of each 128-K block is added into float32
     * registers ("promotion"), which keeps float32 accuracy over long K. */
    TESS_SCALING_PROMOTE,
    /* FP8 block scales, applied at each promotion: one factor per row of A
     * (1x128, or 128x128 repeated over its 128 rows) times one per 128
     * columns of B (128x128: a whole tile's columns). */
    TESS_SCALING_BLOCK_ROWS,
    /* The same with one factor per column of B (1x128). */
    TESS_SCALING_BLOCK_ROWS_COLS
};

/* What a kernel's `grouped` says (its GROUPED_ template parameter): a dense
 * GEMM, a grouped one whose groups split M (X's rows are A's: the tokens
 * fill 128-row tiles), or a grouped one run transposed, whose groups split
 * N (the token-tile kernels: W is A, X's rows are B's, a few tokens a tile),
 * or a k-grouped one (tess_grouped_wgrad: the dense batched machinery, each
 * batch reducing over its own K rows, tess_gemm_params.k_offs). */
enum tess_grouped_kind { TESS_GROUPED_NONE, TESS_GROUPED_ROWS, TESS_GROUPED_TOKENS, TESS_GROUPED_K };

/* Rows a grouped kernel's TMA box of 1x128 A factors holds beyond the
 * tile's (gemm_cfg.cuh A_FACTOR_BOX): the box starts at the 16-byte aligned
 * row at or before the tile's first. */
#define TESS_GROUPED_FACTOR_BOX_EXTRA 4

/* K blocks per TMA box of 128x128 B factors (16 bytes, the least a box row
 * may have): a stage's factor is the box's first, the other three unused. */
#define TESS_TMA_FACTOR_BOX_K 4

/* Rows of A factors in the edge tile's box (tma_scale_a_edge): its rows
 * rounded up to 4 floats, 16 bytes. */
TESS_HD int tess_edge_factor_rows(int rows) { return (rows + 3) / 4 * 4; }

typedef struct tess_gemm_params {
    CUtensorMap tma_a; /* A: K-major (box 64 x BM) or M-major (box 64 x 64) */
    CUtensorMap tma_b; /* B: K-major (box 64 x BN) or N-major (box 64 x 64) */
    CUtensorMap tma_d; /* D stored by TMA: 64 x 64 boxes, 128-byte swizzle (16-bit) or 64-byte (FP8, row-major) */
    /* A dense GEMM's K-major A (B, in clusters of 1) whose rows end inside
     * the last tile row (column): a map of the same matrix whose box holds
     * just the a_edge_rows (b_edge_rows) rows that exist there, used for
     * those tiles; 0 rows: no such map. TMA fills a box's rows past the
     * tensor's edge with zeros at about half the streaming rate
     * (dev/probes/tma_oob.cu), so padded tiles (M = 64 on 128-row tiles)
     * would stream at half speed. The shared-memory rows past the edge are
     * left as they were: they feed only accumulator rows (columns) that are
     * never stored. */
    CUtensorMap tma_a_edge, tma_b_edge;
    int a_edge_rows, b_edge_rows;
    int m, n; /* D's rows and columns, as the int the epilogue's bounds checks compare */
    int m_tiles, n_tiles;
    int group_m;
    /* The work split (kernels/common/sched.h) over the grid's clusters: the
     * first dp_items items (cluster tiles) whole, the last sk_items stream-K. */
    tess_work_split split;
    /* Stream-K workspace (sk_items > 0): one BM x BN float slot of partial
     * sums per CTA (kernels/common/stream_k.cuh), and one ready flag per
     * consumer warpgroup of each CTA (the handle's), down before the launch
     * and left down after it. */
    float *partials;
    int *flags;
    int a_batch_shared, b_batch_shared; /* 1: batch stride 0, every batch reads matrix 0 */
    /* D = alpha * sum + beta * C (kernels/common/epilogue.h); an f32 D is written from registers. */
    tess_epilogue epi;
    /* 1: D is written from registers (f32 D, a column-major FP8 D, or a D
     * that TMA cannot store exactly: TMA clips stores at 16-byte granularity,
     * so D's contiguous extent must be a whole number of 16 bytes, and D aligned). */
    int d_direct;
    /* A dense GEMM's aux output stored like D (tess_sm90_params_set_aux): 1
     * when tma_aux maps it (aux 16-bit and TMA-storable, D stored by TMA),
     * so that the inline fused store writes it by TMA as well; 0: the
     * staged store writes it. */
    int aux_by_tma;
    CUtensorMap tma_aux; /* aux's map where aux_by_tma: tma_d's boxes and swizzle */
    /* Dequantization factors of A (per row of M) and B (per column of N). */
    tess_scale_operand scale_a, scale_b;
    /* Block-scaled kernels: 1 when each stage's factors come by TMA with its
     * tiles (tma_scale_a: BM row factors, box BM x 1 K block, from a 1x128 A
     * with rows contiguous; tma_scale_b: box 4 K blocks x B_FACTORS of a
     * 128x128 B with K blocks contiguous, or BN x 1 of a 1x128 B with columns
     * contiguous), 0 when the producer warp copies them (any other strides). */
    int scales_by_tma;
    CUtensorMap tma_scale_a, tma_scale_b;
    /* With a_edge_rows, A's factors for the tile where A's rows end: a box of
     * a_edge_rows rounded up to 4 (16 bytes, the least a box row may hold). */
    CUtensorMap tma_scale_a_edge;
    /* Grouped kernels (Mixture-of-Experts; kernels/sm90/grouped.cuh): group
     * g multiplies its rows of A by B (and B's factors) of batch g. The
     * group sizes lie on the device in group_rows: the cumulative row ends
     * of a contiguous A and D (TESS_GROUP_CONTIGUOUS: one m-row matrix each),
     * or the rows used of each batch of m rows (TESS_GROUP_MASKED: A, D and
     * A's factors batched by group). Values are clamped into [0, m], so that
     * no tile reads or writes outside the matrices. Tiles are walked in
     * group_order (tess_group_order); split.dp_items is set by the kernel.
     * group_split_tails: clusters of 2 split a group's last tile row of at
     * most one tile's rows along N (kernels/common/sched.h), where the
     * host allows it (an even number of n tiles, not M_FASTEST).
     * Groups with fewer than group_min_rows or more than group_max_rows
     * rows are left to another launch (a mixed plan's two kernels). */
    int groups, group_layout, group_order, group_split_tails, group_min_rows, group_max_rows;
    const int32_t *group_rows;
    /* A k-grouped kernel (TESS_GROUPED_K: an MoE layer's weight gradient,
     * dW[g] = dY_g^T X_g): batch g reduces over K (token) rows
     * [k_offs[g - 1], k_offs[g]) of A and B (k_offs[-1] = 0), the cumulative
     * token ends on the device, clamped into [0, k_tokens] and made
     * non-decreasing; k_tokens: the tokens of all groups (A's columns, B's
     * rows: the problem's K, which may be 0). */
    const int32_t *k_offs;
    int k_tokens;
    int early_launch; /* host only: launch with programmatic stream serialization (tess_handle_early_launch) */
} tess_gemm_params;

#endif
