/* The 4-bit weight kernels (W4A16): the packer that rewrites a checkpoint's
 * codes into the order the GEMV reads, the dequantizer, and the decode GEMV
 * itself. Called by the API in core/int4.c after it has validated the
 * arguments.
 *
 * Packed layout (tess_pack_int4): the weight's 16-row blocks one after the
 * other; in a block, its K quads (64 k each) one after the other; in a quad,
 * one 16-byte word group per lane of a warp, lane = 4 g + c: its word j
 * (j = 0..3, the quad's four mma.m16n8k16 steps) holds exactly the 8
 * weights that lane's A fragment needs for step j: nibble 4i + 16h (i =
 * 0..3, h = 0, 1) is the code of row g + 8 (i % 2), k slot 2c + 8 (i / 2) +
 * h of the step, which is column 16 c + 4 j + 2 (i / 2) + h of the quad
 * (int4_layout.h's tess_int4_quad_col: a lane's k slots over the four steps
 * are its 16 consecutive columns, so X's matching B fragments are 32
 * contiguous bytes of a token's row). Two codes a fragment register needs
 * are 16 bits apart, so one lop3 turns them into a 16-bit pair
 * (tess_int4_pair). */
#ifndef TESS_KERNELS_INT4_INT4_KERNELS_H
#define TESS_KERNELS_INT4_INT4_KERNELS_H

#include <stdint.h>

#include "kernels/common/epilogue.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows of a packed block (the mma's m16 side) and k of a quad (a lane's
 * 16 bytes: four 16-k mma steps): n and k must be multiples of these. */
#define TESS_INT4_ROW_BLOCK 16
#define TESS_INT4_QUAD_K 64
/* The zero point of every group of a weight without zero points
 * (tess_w4a16_desc.zero_points 0): the middle of the codes 0..15, so that
 * they stand for -8..7. */
#define TESS_INT4_DEFAULT_ZERO 8
/* The tokens the GEMV computes at once: two n8 tiles of the mma. */
#define TESS_W4A16_MAX_M 16
/* K parts of one output row block: warps of a CTA, which add their partial
 * sums through shared memory (8: the CTA's warps). */
#define TESS_W4A16_MAX_SPLIT 8

/* The GEMV's work: D (m x n) = X (m x k) W^T, W = (q - z) s per group. */
typedef struct tess_w4a16_params {
    const void *x;            /* m x k row-major, bf16 or f16, 16-byte aligned, ld_x a multiple of 8 */
    int64_t ld_x;
    int x_f16;                /* 1: X (and the dequantized weights) f16; 0: bf16 */
    const void *codes;        /* tess_pack_int4's layout, 16-byte aligned */
    const void *scales;       /* [k / group][n], ld_scales apart, of scale_type */
    int64_t ld_scales;
    tess_dtype scale_type;
    const uint8_t *zeros;     /* [k / group][n], ld_zeros apart; NULL: 8 */
    int64_t ld_zeros;
    int m, n, k, group;
    int split;                /* K parts of whole groups a CTA's warps take: 1, 2, 4 or 8
                                 (TESS_W4A16_MAX_SPLIT), at most k / group (the launcher's choice) */
    int rows_per_warp;        /* 16-row blocks a warp computes: 1 or 2 (the launcher's choice) */
    tess_epilogue epi;        /* D, its layout, the bias and activation (alpha 1, beta 0); batch g: expert g */
    int early_launch;         /* programmatic stream serialization (tess_handle_early_launch) */
    /* Experts (tess_gemm_w4a16_masked): expert g's x, codes, scales and
     * zero points these strides on from the first's; its rows masked_m[g]
     * clamped to [0, m] (NULL: m rows, one expert). */
    int groups, expected_groups; /* experts, and those expected to have rows (the grid's split) */
    const int32_t *masked_m;
    int64_t x_group_stride;      /* elements */
    int64_t codes_group_stride;  /* bytes */
    int64_t scales_group_stride; /* elements */
    int64_t zeros_group_stride;  /* elements */
} tess_w4a16_params;

/* Bytes of the packed form of an n x k weight (n k / 2). */
static inline uint64_t tess_int4_packed_size(int64_t n, int64_t k) { return (uint64_t)n * (uint64_t)k / 2; }

/* Rewrites src (`format`, tess_int4_format) into the packed layout, queued on `stream`. */
tess_status tess_launch_pack_int4(int format, int64_t n, int64_t k, const int32_t *src, void *packed, void *stream);

/* out (n x k row-major, ld_out, bf16 or f16) = the dequantized weight of p
 * (p's codes, scales, zeros, n, k, group and x_f16 for the rounding; the
 * rest ignored), queued on `stream`. */
tess_status tess_launch_dequantize_int4(const tess_w4a16_params *p, tess_dtype out_type, void *out, int64_t ld_out,
                                        void *stream);

/* The GEMV for p (m <= TESS_W4A16_MAX_M; p->groups experts), queued on
 * `stream`: it sets p->rows_per_warp and p->split (the K parts a CTA's
 * warps share each row block's K in) for the grid with the most CTAs, over
 * the experts expected to have rows, that all fit on `sms` SMs at once;
 * `budgeted` (an SM budget): at most `sms` CTAs, each taking several row
 * chunks and experts. */
tess_status tess_launch_w4a16_gemv(tess_w4a16_params *p, int sms, int budgeted, void *stream);

#ifdef __cplusplus
}
#endif

#endif
