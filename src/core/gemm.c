/* The GEMM entry points: validation (every refusal names the rule broken),
 * planning over the kernel table, and the launch. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "core/matrix.h"
#include "core/scale.h"
#include "core/tensor_map.h"
#include "kernels/decode/gemv_kernels.h"

/* TMA's rules for a matrix it loads or stores: 16-byte aligned base, and row
 * and batch strides multiples of 16 bytes. */
#define TESS_TMA_ALIGN 16
/* Rows of tiles walked together for L2 reuse (kernels/common/sched.h).
 * Measured at 8192^3 on an H200 (2026-11-21): 8 rows 744 TFLOP/s, 16 rows 733,
 * 32 rows 703. $TESS_GROUP_M overrides it (for tuning). */
#define TESS_GROUP_M 8

TESS_API tess_status tess_gemm_desc_init(tess_gemm_desc *desc) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_desc_init: desc is NULL");
    memset(desc, 0, sizeof *desc);
    desc->struct_size = sizeof *desc;
    desc->batch = 1;
    desc->alpha = 1.0f;
    return TESS_STATUS_SUCCESS;
}

static int is16(tess_dtype t) { return t == TESS_DTYPE_BF16 || t == TESS_DTYPE_F16; }
static int is_fp8(tess_dtype t) { return t == TESS_DTYPE_E4M3 || t == TESS_DTYPE_E5M2; }

/* The kernels' input pair (enum tess_mma_input) for operand types ta, tb; -1 if none. */
static int mma_input(tess_dtype ta, tess_dtype tb) {
    if (ta == TESS_DTYPE_BF16 && tb == TESS_DTYPE_BF16)
        return TESS_MMA_BF16;
    if (ta == TESS_DTYPE_F16 && tb == TESS_DTYPE_F16)
        return TESS_MMA_F16;
    if (is_fp8(ta) && is_fp8(tb))
        return TESS_MMA_E4M3_E4M3 + 2 * (ta == TESS_DTYPE_E5M2) + (tb == TESS_DTYPE_E5M2);
    return -1;
}

/* The scaling kind (enum tess_scaling) a problem needs: block scales promote
 * with their factors, FP8 otherwise promotes unless fast_accum. */
static int needed_scaling(const tess_gemm_desc *d) {
    if (!is_fp8(d->a.dtype))
        return TESS_SCALING_PLAIN;
    if (tess_scale_is_block(d->a_scale.mode))
        return d->b_scale.mode == TESS_SCALE_BLOCK_1x128 ? TESS_SCALING_BLOCK_ROWS_COLS : TESS_SCALING_BLOCK_ROWS;
    return d->fast_accum ? TESS_SCALING_PLAIN : TESS_SCALING_PROMOTE;
}

static const char *scale_mode_name(tess_scale_mode m) {
    switch (m) {
    case TESS_SCALE_TENSOR: return "TENSOR";
    case TESS_SCALE_OUTER_VEC: return "OUTER_VEC";
    case TESS_SCALE_BLOCK_1x128: return "BLOCK_1x128";
    case TESS_SCALE_BLOCK_128x128: return "BLOCK_128x128";
    }
    return "invalid";
}

/* One operand's scale layout: a known mode and non-negative strides. */
static tess_status check_scale_desc(const tess_scale_desc *s, const char *name) {
    if (s->mode != TESS_SCALE_TENSOR && s->mode != TESS_SCALE_OUTER_VEC && !tess_scale_is_block(s->mode))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: %s_scale.mode=%d is not a tess_scale_mode (TENSOR 0, OUTER_VEC 3, BLOCK_1x128 4, "
                         "BLOCK_128x128 5)",
                         name, (int)s->mode);
    if (s->stride_mn < 0 || s->stride_k < 0 || s->batch_stride < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: %s_scale strides must be >= 0", name);
    return TESS_STATUS_SUCCESS;
}

/* The scale recipes of a problem: each mode sound, block modes only for FP8
 * and only in pairs, factors present where blocks need them, 4-byte aligned. */
tess_status tess_gemm_check_scales(const tess_gemm_desc *desc, const float *sa, const float *sb) {
    tess_status s;
    if ((s = check_scale_desc(&desc->a_scale, "a")) || (s = check_scale_desc(&desc->b_scale, "b")))
        return s;
    const int ba = tess_scale_is_block(desc->a_scale.mode), bb = tess_scale_is_block(desc->b_scale.mode);
    if (ba != bb)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A's scales are %s but B's are %s; block scales (1x128, 128x128) pair only with "
                         "block scales (e.g. A 1x128 with B 128x128, the DeepSeek-V3 recipe)",
                         scale_mode_name(desc->a_scale.mode), scale_mode_name(desc->b_scale.mode));
    if (ba && !is_fp8(desc->a.dtype))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: block scales need FP8 operands; %s operands take TENSOR or OUTER_VEC factors",
                         tess_dtype_name(desc->a.dtype));
    if (ba && (!sa || !sb))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: block scales need both factor arrays (a_scale and "
                                                    "b_scale must not be NULL)");
    if ((uintptr_t)sa % sizeof(float) || (uintptr_t)sb % sizeof(float))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: scale arrays must be 4-byte aligned float32");
    return TESS_STATUS_SUCCESS;
}

/* TMA alignment of one operand: base address, leading dimension, batch stride. */
tess_status tess_gemm_check_tma(const tess_matrix_desc *x, const void *ptr, int64_t batch, const char *name) {
    size_t es = tess_dtype_size(x->dtype);
    int64_t per = TESS_TMA_ALIGN / (int64_t)es; /* elements per 16 bytes */
    if ((uintptr_t)ptr % TESS_TMA_ALIGN != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s=%p is not 16-byte aligned (TMA needs 16-byte aligned matrices)",
                         name, ptr);
    if (x->ld % per != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: ld=%" PRId64 " is not a multiple of %" PRId64 " elements (16 bytes of %s, TMA's row "
                         "stride rule); pad the leading dimension to %" PRId64,
                         name, x->ld, per, tess_dtype_name(x->dtype), (x->ld + per - 1) / per * per);
    if (batch > 1 && x->batch_stride % per != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: batch_stride=%" PRId64 " is not a multiple of %" PRId64 " elements (16 bytes)", name,
                         x->batch_stride, per);
    /* TMA strides must stay below 2^40 bytes. */
    if ((x->ld * (int64_t)es) >> 40 || (x->batch_stride * (int64_t)es) >> 40)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: a stride of 2^40 bytes or more is beyond TMA", name);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_gemm_validate(const tess_device_info *info, const tess_gemm_desc *desc, const void *a,
                               const float *sa, const void *b, const float *sb, const void *c, const void *d) {
    if (!desc)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: desc is NULL");
    if (desc->struct_size < sizeof(tess_gemm_desc))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: desc->struct_size=%u; initialise the descriptor with tess_gemm_desc_init",
                         desc->struct_size);
    const int64_t m = desc->m, n = desc->n, k = desc->k, batch = desc->batch;
    if (m < 1 || n < 1 || k < 1 || batch < 1)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " batch=%" PRId64 ": all must be >= 1",
                         m, n, k, batch);
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || batch > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: M, N, K and batch must each be below 2^31");
    if (!a || !b || !d)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: A, B and D must not be NULL");
    tess_status s;
    if ((s = tess_matrix_check(&desc->a, batch, "A")) || (s = tess_matrix_check(&desc->b, batch, "B")) ||
        (s = tess_matrix_check(&desc->d, batch, "D")) ||
        (s = tess_matrix_check_shape(&desc->a, m, k, "A", "M x K")) ||
        (s = tess_matrix_check_shape(&desc->b, k, n, "B", "K x N")) ||
        (s = tess_matrix_check_shape(&desc->d, m, n, "D", "M x N")))
        return s;
    /* Every batch needs its own D: batches of D may not overlap. */
    int64_t d_span = tess_matrix_span(&desc->d, 1);
    if (batch > 1 && desc->d.batch_stride < d_span)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "D: batch_stride=%" PRId64 " makes the %" PRId64 " output matrices overlap; it must be at "
                         "least %" PRId64 " (one matrix's span)",
                         desc->d.batch_stride, batch, d_span);
    const int reads_c = desc->beta != 0.0f;
    if (reads_c) {
        if (!c)
            return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: beta=%g reads C, but C is NULL", desc->beta);
        if ((s = tess_matrix_check(&desc->c, batch, "C")) ||
            (s = tess_matrix_check_shape(&desc->c, m, n, "C", "M x N")))
            return s;
        if (desc->c.dtype != TESS_DTYPE_F32 && !is16(desc->c.dtype))
            return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_gemm: C of type %s; C must be f32, f16 or bf16",
                             tess_dtype_name(desc->c.dtype));
    }
    tess_dtype ta = desc->a.dtype, tb = desc->b.dtype, td = desc->d.dtype;
    if (is_fp8(ta) != is_fp8(tb))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s but B is %s; FP8 operands multiply only FP8 operands (quantize the other "
                         "with tess_quantize_fp8)",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if (is_fp8(ta) && (desc->a.order != TESS_ORDER_ROW || desc->b.order != TESS_ORDER_COL))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: FP8 A is %s-major and B %s-major; Hopper's FP8 tensor cores read only K-major "
                         "operands, so A must be row-major and B column-major (the 'TN' layout). Make a K-major copy "
                         "with tess_transpose",
                         desc->a.order == TESS_ORDER_ROW ? "row" : "column",
                         desc->b.order == TESS_ORDER_ROW ? "row" : "column");
    if (!is_fp8(ta) && (!is16(ta) || !is16(tb)))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s and B is %s; tessera multiplies bf16, f16 or FP8 (e4m3, e5m2) operands "
                         "(convert f32 inputs first)",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if (is16(ta) && ta != tb)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED,
                         "tess_gemm: A is %s but B is %s; the tensor cores need both operands of one 16-bit type",
                         tess_dtype_name(ta), tess_dtype_name(tb));
    if (td != TESS_DTYPE_F32 && !is16(td))
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_gemm: D of type %s; D must be bf16, f16 or f32",
                         tess_dtype_name(td));
    if ((s = tess_gemm_check_tma(&desc->a, a, batch, "A")) || (s = tess_gemm_check_tma(&desc->b, b, batch, "B")) ||
        (s = tess_gemm_check_scales(desc, sa, sb)))
        return s;
    if ((uintptr_t)d % tess_dtype_size(td) != 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "D=%p is not aligned to its %s elements", d, tess_dtype_name(td));
    /* Tile indices are ints in the kernels: a bound in the smallest table
     * tile, 128 x 16 (token tiles, clusters of 1; a transposed plan's tiles,
     * M <= 64 wide, are fewer). */
    int64_t tiles = ((m + 127) / 128) * ((n + 15) / 16) * batch;
    if (tiles > INT32_MAX)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: %" PRId64 " output tiles are more than 2^31", tiles);
    if (info && info->cc_major != 9)
        return tess_fail(TESS_STATUS_ARCH_MISMATCH,
                         "tess_gemm: device %d (%s) is compute capability %d.%d; tessera's GEMM kernels need 9.0 "
                         "(Hopper: H100, H200)",
                         info->device, info->name, info->cc_major, info->cc_minor);
    if (info && !info->has_native_code)
        return tess_fail(TESS_STATUS_ARCH_MISMATCH, "tess_gemm: this build holds no sm_90a code (TESS_CUDA_ARCHS)");
    return TESS_STATUS_SUCCESS;
}

/* Whether TMA can store D exactly: 16-bit, 16-byte aligned rows and batches,
 * and a contiguous extent of whole 16-byte chunks (TMA clips stores at that
 * granularity, so a ragged extent would write into D's padding). */
static int d_by_tma(const tess_matrix_desc *d, const void *ptr, int64_t batch) {
    const int64_t per = TESS_TMA_ALIGN / 2; /* 16-bit elements per 16 bytes */
    return is16(d->dtype) && (uintptr_t)ptr % TESS_TMA_ALIGN == 0 && d->ld % per == 0 &&
           tess_matrix_inner(d) % per == 0 && (batch == 1 || d->batch_stride % per == 0);
}

/* Whether a factor array's base and strides (floats) suit a TMA map: 16-byte
 * aligned base, strides of whole 16 bytes. */
static int factors_by_tma(const float *data, int64_t stride, int64_t batch_stride) {
    const int64_t per = TESS_TMA_ALIGN / (int64_t)sizeof(float);
    return (uintptr_t)data % TESS_TMA_ALIGN == 0 && stride % per == 0 && batch_stride % per == 0;
}

/* Whether block-scaled kernel k can load the problem's factors by TMA as
 * far as their layouts say (scale_maps also needs aligned pointers and
 * strides): A 1x128 with rows contiguous, B 128x128 with K blocks
 * contiguous, or, for per-column kernels, B 1x128 with columns contiguous. */
static int factor_layouts_by_tma(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
    const int per_column = k->scaling == TESS_SCALING_BLOCK_ROWS_COLS;
    const tess_scale_desc *a = &d->a_scale, *b = &d->b_scale;
    /* (Grouped token tiles: a TMA box of B's factors would start at a
     * group's first token, which need not be 16-byte aligned.) */
    return k->grouped != TESS_GROUPED_TOKENS && k->scaling >= TESS_SCALING_BLOCK_ROWS &&
           a->mode == TESS_SCALE_BLOCK_1x128 && a->stride_mn == 1 &&
           b->mode == (per_column ? TESS_SCALE_BLOCK_1x128 : TESS_SCALE_BLOCK_128x128) &&
           (per_column ? b->stride_mn : b->stride_k) == 1;
}

/* Tensor maps of a block-scaled kernel's factors, where their layouts allow
 * (p->scales_by_tma; otherwise the producer warp copies them): A 1x128 with
 * rows contiguous (one box of BM row factors per K block), and B either
 * 128x128 with K blocks contiguous (a box of 4 K blocks, the first the
 * stage's, by the tile's 128-column blocks: 1 for tiles within one block, 2 for
 * BN = 192; gemm_cfg.cuh's B_FACTORS, which the stage's byte count expects) or 1x128
 * with columns contiguous (BN column factors) for the kernels with per-column
 * factors. */
static tess_status scale_maps(tess_gemm_params *p, const tess_gemm_kernel *k, const tess_gemm_desc *desc) {
    const tess_scale_operand *a = &p->scale_a, *b = &p->scale_b;
    const int64_t kb = (desc->k + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK;
    const int per_column = k->scaling == TESS_SCALING_BLOCK_ROWS_COLS;
    /* One matrix's batch stride is never used (0 maps a batch extent of 1). */
    const int64_t a_batch = desc->batch > 1 ? a->layout.batch_stride : 0;
    const int64_t b_batch = desc->batch > 1 ? b->layout.batch_stride : 0;
    p->scales_by_tma = factor_layouts_by_tma(k, desc) && a->data && b->data &&
                       factors_by_tma(a->data, a->layout.stride_k, a_batch) &&
                       factors_by_tma(b->data, per_column ? b->layout.stride_k : b->layout.stride_mn, b_batch);
    if (!p->scales_by_tma)
        return TESS_STATUS_SUCCESS;
    /* gemm_cfg.cuh A_FACTOR_BOX */
    const int a_box = k->tile_m + (k->grouped == TESS_GROUPED_ROWS ? TESS_GROUPED_FACTOR_BOX_EXTRA : 0);
    tess_status s = tess_tensor_map_factors(&p->tma_scale_a, a->data, desc->m, kb, a->layout.stride_k, desc->batch,
                                            a_batch, a_box, 1);
    if (s == TESS_STATUS_SUCCESS && p->a_edge_rows) /* gemm_params.h tma_scale_a_edge */
        s = tess_tensor_map_factors(&p->tma_scale_a_edge, a->data, desc->m, kb, a->layout.stride_k, desc->batch,
                                    a_batch, tess_edge_factor_rows(p->a_edge_rows), 1);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (per_column)
        return tess_tensor_map_factors(&p->tma_scale_b, b->data, desc->n, kb, b->layout.stride_k, desc->batch,
                                       b_batch, k->tile_n, 1);
    const int64_t n_blocks = (desc->n + TESS_SCALE_BLOCK - 1) / TESS_SCALE_BLOCK;
    return tess_tensor_map_factors(&p->tma_scale_b, b->data, kb, n_blocks, b->layout.stride_mn, desc->batch, b_batch,
                                   TESS_TMA_FACTOR_BOX_K, TESS_SCALE_BLOCK % k->tile_n == 0 ? 1 : 2);
}

/* Whether kernel k multiplies the problem's input type in its operand
 * majors (MN-major: A column-major, B row-major; the M or N index contiguous)
 * and scaling, dense or grouped alike. */
int tess_gemm_kernel_serves(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
    /* A kernel with per-column B factors also serves 128x128 B (its producer
     * spreads each block's factor over the block's columns). */
    const int scaling = needed_scaling(d);
    const int serves = k->scaling == scaling ||
                       (scaling == TESS_SCALING_BLOCK_ROWS && k->scaling == TESS_SCALING_BLOCK_ROWS_COLS);
    return k->input == mma_input(d->a.dtype, d->b.dtype) && serves &&
           k->a_mn_major == (d->a.order == TESS_ORDER_COL) &&
           k->b_mn_major == (d->b.order == TESS_ORDER_ROW);
}

/* A dense kernel that serves the problem. */
static int kernel_fits(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
    return !k->grouped && tess_gemm_kernel_serves(k, d);
}

/* SMs assumed where no device is asked (the CPU tests): an H100's or H200's 132. */
#define TESS_DEFAULT_SMS 132

/* CTAs of `k` that fit on the device at once: one per SM, in whole clusters
 * (clusters must fit in one GPC, so not every SM may be usable). Asked of the
 * runtime once per kernel and device; sm_count when no device answers. */
int tess_gemm_resident_ctas(int index, const tess_device_info *info) {
    static int cached[TESS_GEMM_MAX_KERNELS][2]; /* [kernel][device + 1, CTAs] */
    const tess_gemm_kernel *k = tess_gemm_sm90_kernel(index);
    int sms = info ? info->sm_count : TESS_DEFAULT_SMS;
    if (!info)
        return sms / k->cluster_m * k->cluster_m;
    if (cached[index][0] != info->device + 1) {
        int clusters = k->max_clusters();
        int ctas = clusters * k->cluster_m;
        cached[index][1] = ctas > 0 && ctas <= sms ? ctas : sms / k->cluster_m * k->cluster_m;
        cached[index][0] = info->device + 1;
    }
    return cached[index][1];
}

/* Units of work a kernel walks: tiles, counted in whole clusters along M. */
static int64_t work_tiles(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
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

/* How a kernel runs a problem: its work split, grid and workspace. */
typedef struct tess_gemm_launch {
    tess_work_split split;
    int grid;
    size_t workspace;
} tess_gemm_launch;

/* The grid and the work split of a kernel on a problem (kernels/common/sched.h),
 * data-parallel or stream-K. Returns 0 when stream-K does not apply: the
 * items fill whole waves, or the tail is too thin to share. */
static int launch_split(const tess_gemm_kernel *k, const tess_gemm_desc *d, int ctas, int stream_k,
                        tess_work_split *s, int *grid) {
    const int items = (int)(work_tiles(k, d) / k->cluster_m), units = ctas / k->cluster_m;
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
    /* Otherwise only a thin last wave is shared: measured on an H100 (2026-11-21),
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
 * rounds (3 waits) against 1 round (H200, 2026-11-24, bench/NOTES.md):
 * 4096x32768x512 (4 K blocks a tile) 722 vs 862 TFLOP/s, 4096x7168x2048 (16)
 * 1041 vs 1091, both 0.26 of a K block a wait. */
#define TESS_EPI_ROUND_WAIT_BLOCKS 0.26

/* Estimated tensor-core time of a kernel on the problem, in units of tile
 * work: waves of persistent tiles (tiles a cluster pads past M count as
 * work), each tile's work over how efficiently the tile feeds the tensor cores.
 * - Tile width, measured with 128-byte aligned rows (4096^3 and 8192^3 bf16,
 *   H100/H200, 2026-11-21): 128x128 reaches ~0.9 of 128x256 (narrower wgmmas
 *   re-read A more), 128x64 ~0.6; 2-CTA clusters sharing B ~1.02x. FP8
 *   tiles 256 wide that promote (in two 128-wide halves) lead the 192-wide
 *   ones by as much or more (H200, 2026-11-24, best plans: block-scaled
 *   8192^3 1222 vs 1055 TFLOP/s, 4096x4096x7168 1187 vs 1103,
 *   4096x24576x1536 1038 vs 1011; per-tensor 8192^3 1257 vs 1226).
 * - With misaligned rows the kernels are bound by L2 reads, so efficiency
 *   follows the tile's intensity, flops per byte read from L2:
 *   BM * BN / (BM + BN / cluster), relative to 128x256 in clusters of 2
 *   (128). Measured at 3000x5000x7000 (H100, 2026-11-21): 128x256 c1 0.67
 *   of c2 (predicted 0.66), 128x128 c2 0.70 (0.66), 128x256 c4 1.31 per
 *   CTA (1.34: 651 TFLOP/s on 120 CTAs against 547 on 132).
 * Stream-K turns the waves into the exact share of items per unit, plus the
 * fixups: each unit writes one partial sum, and the finishing units read on
 * average units / sk_items + 1 of them. */
double tess_tile_width_efficiency(int tile_n) {
    return tile_n >= 256 ? 1.0 : tile_n >= 192 ? 0.95 : tile_n >= 128 ? 0.9 : 0.6;
}

/* Rows of a tile the tensor cores compute: all of them, but where M fits in
 * less than one tile a kernel that skips empty rows (tess_gemm_kernel)
 * computes only the consumer warpgroups' shares holding some. */
static int computed_rows(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
    const int share = k->tile_m / TESS_SM90_CONSUMERS;
    return k->skips_empty_rows && d->m < k->tile_m ? (int)(d->m + share - 1) / share * share : k->tile_m;
}

static double tile_work(const tess_gemm_kernel *k, const tess_gemm_desc *d, const tess_gemm_launch *x) {
    double waves;
    /* Each epilogue round after a tile's first waits for the previous
     * round's stores to read the staging buffer, while the tensor cores
     * idle (the consumers run the epilogue). */
    const double epilogue = 1.0 + (k->epi_rounds - 1) * TESS_EPI_ROUND_WAIT_BLOCKS / x->split.k_blocks;
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
    double efficiency = tess_tile_width_efficiency(k->tile_n);
    /* Clusters of 2 halve B's L2 reads, but tie the two CTAs' rings together.
     * Block-scaled FP8 loses by it (H200, 2026-11-22, c1 against c2: 4096^3
     * 1011 vs 947 TFLOP/s, 4096x7168x2048 933 vs 887), except 192-wide tiles
     * whose factors come by TMA (8192^3 1032 vs 1085, 4096x4096x7168 973 vs
     * 1076; 128-wide ones still lose: 4096x7168x2048 930 vs 891, and M = 64
     * or 128 with K = 16384 236 vs 175 and 469 vs 405). The others gain a
     * little. */
    const int block_scaled_c2_gains = k->tile_n >= 192 && factor_layouts_by_tma(k, d);
    if (k->cluster_m > 1)
        efficiency *= k->scaling >= TESS_SCALING_BLOCK_ROWS && !block_scaled_c2_gains ? 0.95 : 1.02;
    /* Per-column B factors cost loads at every promotion: measured at 8192^3
     * with 128x128 B blocks (H200, 2026-11-21), 128x192 per-column 882
     * TFLOP/s against 990 for 128x128 with one factor per tile. */
    if (k->scaling == TESS_SCALING_BLOCK_ROWS_COLS && d->b_scale.mode == TESS_SCALE_BLOCK_128x128)
        efficiency *= 0.85;
    if (rows_misaligned(d))
        efficiency = (double)k->tile_m * k->tile_n / (k->tile_m + (double)k->tile_n / k->cluster_m) / 128.0;
    return waves * epilogue * computed_rows(k, d) * k->tile_n / efficiency;
}

/* Sustained fractions of the device's peaks (H100, 2026-11-21): the SM clock
 * under tensor-core load settles near 0.8 of its peak (1.57-1.59 of 1.98
 * GHz, power-bound), and a device-to-device copy moves 0.9 of the memory's
 * peak bytes (2994 of 3352 GB/s). */
#define TESS_SUSTAINED_CLOCK 0.8
#define TESS_SUSTAINED_MEMORY 0.9
/* Dense tensor-core flops per SM per clock on sm_90: 4096 for 16-bit inputs, twice that for FP8. */
#define TESS_SM90_FLOPS_PER_CLOCK 4096.0
/* Where no device is asked (CPU tests): an H100 SXM's peaks. */
#define TESS_DEFAULT_SM_HZ 1.98e9
#define TESS_DEFAULT_MEMORY_BYTES_PER_S 3.352e12
/* How far the shorter of compute and memory time fails to hide under the
 * longer one: the tie-break between plans that stream the same bytes,
 * favouring the one that computes fewer padded rows. */
#define TESS_OVERLAP_LOSS 0.25
/* What one CTA's TMA stream draws from memory (Little's law): the bytes
 * its ring holds in flight over the loaded memory latency, at most
 * TESS_SM_STREAM_BYTES_PER_S, of which the streamed operand's rows are the
 * useful part; rows a tile pads past the other operand's edge (filled by
 * TMA) take their share of the stream too. Fitted to H100 GPU times
 * (2026-11-23, the stream held until the call is queued, so no host time):
 * 32 CTAs of 128x16 s12 transposed at M=1, N=4096 add 2680 GB/s of weights
 * per added K (K 14336 -> 28672), 84 useful GB/s per CTA with 220 KB (15
 * of 143 rows padding) in flight: 2.3 us. A small grid thus streams at far
 * more than its share of the SMs. (Every launch also costs about 6 us
 * whatever its size, 1x128x128 included: the same for every plan, so left
 * out.) FP8 token tiles draw less: promoted ones ~74 GB/s per CTA (per-tensor
 * scales, M=1, N=4096, K=7168), block-scaled ones ~45. The 0.55 was fitted
 * where the factors come by copy (transposed 128x128 weight factors) and is
 * applied there only; 1x128 weight factors ran as slowly (27.1 against 26.8
 * us), so the cause is likely the block-scaled mainloop, not the copies
 * (bench/NOTES.md). Refitted to 1.9 us on the H200 (session 18) once
 * 128-row tiles of M <= 64 tokens stopped computing their empty half,
 * every plan timed again: the picks run slower than the best by 0.60% on
 * 18 skinny problems (bench/probes/cases_skinny.txt; 1.64% with 2.3 us,
 * 1.44% with 1.85) and 1.20% on the 47 of bench/probes/plan_all.sh (2.27%
 * with 2.3, 1.40% with 2.0, 1.51% with 1.85). */
#define TESS_LOADED_MEMORY_LATENCY_S 1.9e-6
/* The same for re-reads that hit L2 (a later group of tiles reading the
 * rows again). Taking the memory's latency for those too ranked 3-stage
 * rings far behind 4-stage ones on 4096x32768x512 FP8 (B re-read by 32 tile
 * rows: 0.112 against 0.074 ms of streaming), where they ran fastest (H200,
 * 2026-11-24: 0.159 against 0.190 ms). */
#define TESS_LOADED_L2_LATENCY_S 1.0e-6
/* L2 bytes where no device is asked: an H100's 50 MB. */
#define TESS_DEFAULT_L2_BYTES 50e6
/* The most one CTA's stream draws, whatever its bytes in flight: 95 GB/s
 * fitted on the H100 (2026-11-23, transposed 16-token tiles at M = 1);
 * 60 on the H200's every-plan timings of session 18 (the picks 0.78% from
 * the best over 47 problems and 0.06% over 18 skinny ones, against 1.20%
 * and 0.60% with 95; 55 ties 60, 65 gives 0.96%): plans on more CTAs
 * stream faster than the bytes one CTA holds in flight say. Of the suites'
 * choices only 16x7168x2048 bf16 moved (128x16 transposed 14.0 us -> 128x64
 * tokens-as-A 12.9, timed in the same call). */
#define TESS_SM_STREAM_BYTES_PER_S 60e9
#define TESS_PROMOTED_STREAM_SHARE 0.85
#define TESS_COPIED_FACTORS_STREAM_SHARE 0.55
/* Stream-K in fill mode (every tile's K shared, fewer tiles than SMs, in
 * contiguous shares) streams at the copy rate like any other plan, and then
 * pays a fixup that nothing hides: a contributor stores its partial sums
 * and raises its flag, the finishing unit sees the flag and reads every
 * contributor's sums, all through L2. Timed per CTA with globaltimer stamps
 * (bench/probes/timeline.sh, H200, 2026-11-25): 2.0-2.2 us after the last
 * mainloop for 128x16 tiles shared 7 ways (8 KB sums), 4.7 us for 128x128
 * shared 4 ways (64 KB). Modelled as this latency plus the shares' sums
 * (the finisher's reads and a contributor's store) through one SM at its
 * L2 rate (TESS_L2_BYTES_PER_SM_CLOCK). Fitted with every plan of 37 small-M
 * and mid-sized problems timed on the H200 (bench/probes/plan_all.sh): the
 * planner's picks ran 1.96% slower than the best plans on geometric mean,
 * against 4.8% with the flat 0.7 stream efficiency this replaced (1024 x
 * 1024 x 8192 bf16 had taken 128x256 tiles shared 4 ways, 36.8 us, over
 * 128x128 shared 2 ways, 31.8). */
#define TESS_FILL_FIXUP_LATENCY_S 2.0e-6
/* In fill mode, tiles that pad M with rows TMA fills with zeros stream
 * slower than their real rows account for (H200, 2026-11-25, GPU time,
 * 128x64 stream-K at N=4096, K=7168: bf16 35.4, 29.1, 24.9 us at M = 64,
 * 96, 128, i.e. 0.84 and 0.68 of the padded fraction). The cause, found
 * later: TMA fills a box's rows past the tensor's edge at about half the
 * streaming rate (bench/probes/tma_oob.cu). Kernels now load only the rows
 * that exist where they can (loads_edge_rows_only: those plans have no
 * padded rows here, and ran 35.4 -> 23.9 us at M = 64); the term stays for
 * the zero-filled boxes left (MN-major operands, B multicast in clusters).
 * Fitted in session 16 (with the fixup above: 0.56% regret on 37 problems,
 * 2.19% on 10 held out). With the edge-row loads, every plan of all 47
 * timed again: the picks run 1.02% slower than the best on geometric mean;
 * the worst, 128x8192x8192 bf16 takes 128x128 tiles shared 2 ways, 44.9 us,
 * where 128x64 tiles in one wave ran 42.0 (bench/NOTES.md, session 17). */
#define TESS_FILL_PADDED_ROWS_COST 0.8

/* The device's peak SM clock (Hz) and memory rate (bytes/s; DDR, two
 * transfers a clock), or an H100 SXM's where no device is asked. */
static double device_sm_hz(const tess_device_info *info) {
    return info && info->sm_clock_khz > 0 ? info->sm_clock_khz * 1e3 : TESS_DEFAULT_SM_HZ;
}
static double device_memory_bytes_per_s(const tess_device_info *info) {
    return info && info->mem_clock_khz > 0 ? 2.0 * info->mem_clock_khz * 1e3 * info->mem_bus_width_bits / 8
                                           : TESS_DEFAULT_MEMORY_BYTES_PER_S;
}

double tess_sm_compute_seconds(const tess_device_info *info, int fp8, double flops) {
    return flops / (TESS_SM90_FLOPS_PER_CLOCK * (fp8 ? 2 : 1) * device_sm_hz(info) * TESS_SUSTAINED_CLOCK);
}

double tess_memory_seconds(const tess_device_info *info, double bytes) {
    return bytes / (device_memory_bytes_per_s(info) * TESS_SUSTAINED_MEMORY);
}

/* What the SMs draw from L2 together, in bytes per SM per clock at the
 * peak SM clock: fitted to grouped kernels whose tiles re-read weights
 * from L2 (H200, 2026-11-25, 4096x7168, G=256 x 16 tokens, 128-row tiles:
 * bf16 22.5 GB of tile loads in 3.64 ms, 6.2 TB/s; FP8 12.9 GB in 2.01
 * ms, 6.4 TB/s; 132 SMs at 1.98 GHz), well below L2's nominal rate. */
#define TESS_L2_BYTES_PER_SM_CLOCK 24.0

/* What one SM draws from L2, in bytes per second. */
static double l2_bytes_per_sm_s(const tess_device_info *info) {
    return TESS_L2_BYTES_PER_SM_CLOCK * device_sm_hz(info);
}

double tess_l2_read_seconds(const tess_device_info *info, double bytes) {
    const int sms = info && info->sm_count > 0 ? info->sm_count : TESS_DEFAULT_SMS;
    return bytes / (sms * l2_bytes_per_sm_s(info));
}

double tess_overlapped_seconds(double compute, double memory) {
    return compute > memory ? compute + TESS_OVERLAP_LOSS * memory : memory + TESS_OVERLAP_LOSS * compute;
}

/* The fixup after a fill-mode stream-K plan's mainloops (0 for other
 * plans): TESS_FILL_FIXUP_LATENCY_S, plus one partial-sum slot per unit
 * sharing an item through one SM's L2 bandwidth. */
static double fill_fixup_seconds(const tess_device_info *info, const tess_gemm_kernel *k, const tess_gemm_launch *x) {
    if (!tess_split_fills(&x->split))
        return 0.0;
    const double shares = (double)x->split.units / x->split.sk_items;
    const double slot_bytes = (double)k->tile_m * k->tile_n * sizeof(float);
    return TESS_FILL_FIXUP_LATENCY_S + shares * slot_bytes / l2_bytes_per_sm_s(info);
}

/* Whether operand x, A (R x K) or B when of_b (K x N), has K contiguous. */
static int operand_k_major(const tess_matrix_desc *x, int of_b) {
    return of_b ? x->order == TESS_ORDER_COL : x->order == TESS_ORDER_ROW;
}

/* Whether a dense kernel loads just the rows that exist of operand A (B when
 * of_b) in the tile where the operand's rows end (tess_gemm_params_init's
 * edge maps: K-major, and for B clusters of 1), rather than a box whose
 * rows past the edge TMA fills with zeros. */
static int loads_edge_rows_only(const tess_gemm_kernel *k, const tess_gemm_desc *d, int of_b) {
    return !k->grouped && operand_k_major(of_b ? &d->b : &d->a, of_b) && (!of_b || k->cluster_m == 1);
}

/* Estimated run time of a kernel on the problem, in seconds: the longer of
 * its tensor-core time (tile_work at the sustained clock) and the time to
 * stream A, B and D from memory once, at the rate the grid can draw (the
 * sustained copy rate, or each CTA's latency-bound stream of the larger
 * operand, re-read once per tile of the other, where that is slower; a
 * transposed plan's weights once per token tile), plus TESS_OVERLAP_LOSS of
 * the shorter, plus a fill-mode stream-K plan's fixup. */
static double estimate(const tess_device_info *info, const tess_gemm_kernel *k, const tess_gemm_desc *d,
                       const tess_gemm_launch *x, int transposed) {
    const int64_t k_padded = (d->k + k->tile_k - 1) / k->tile_k * k->tile_k;
    const double compute =
        tess_sm_compute_seconds(info, k->input >= TESS_MMA_E4M3_E4M3, tile_work(k, d, x) * 2.0 * (double)k_padded);
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
        loads_edge_rows_only(k, d, !streams_a) ? 0.0 : (double)(other_tiles * other_tile - other) / other_tiles;
    const double row_bytes = (double)k->tile_k * tess_dtype_size(streams_a ? d->a.dtype : d->b.dtype);
    double per_cta = k->stages * (rows + padded) * row_bytes / TESS_LOADED_MEMORY_LATENCY_S;
    if (per_cta > TESS_SM_STREAM_BYTES_PER_S)
        per_cta = TESS_SM_STREAM_BYTES_PER_S;
    per_cta *= rows / (rows + padded);
    if (k->scaling >= TESS_SCALING_PROMOTE)
        per_cta *= k->scaling >= TESS_SCALING_BLOCK_ROWS && !factor_layouts_by_tma(k, d) ? TESS_COPIED_FACTORS_STREAM_SHARE
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
    const double l2_bytes = info && info->l2_bytes ? (double)info->l2_bytes : TESS_DEFAULT_L2_BYTES;
    int64_t side_by_side = streams_a ? x->grid / k->cluster_m / TESS_GROUP_M : (int64_t)TESS_GROUP_M * k->cluster_m;
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
     * token). Measured (H200, 2026-11-25, GPU time, bf16): 64x4096x7168
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
    return tess_overlapped_seconds(compute, memory) + fill_fixup_seconds(info, k, x);
}

/* Fills plan p for kernel `index` running problem `run`: the user's
 * problem d, or for a transposed plan tess_gemm_transposed_problem(d). The name
 * speaks of d's types and layouts, and of the kernel's tile. */
static void describe(const tess_gemm_kernel *k, const tess_gemm_desc *d, const tess_gemm_desc *run, int index,
                     const tess_gemm_launch *x, tess_plan *p) {
    const int transposed = run != d;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->kernel = index;
    p->tile_m = k->tile_m, p->tile_n = k->tile_n, p->tile_k = k->tile_k, p->stages = k->stages;
    p->cluster_m = k->cluster_m, p->cluster_n = 1;
    p->tiles = (int32_t)work_tiles(k, run);
    p->grid = x->grid;
    p->stream_k = x->split.sk_items > 0;
    p->workspace_bytes = x->workspace;
    p->transposed = transposed;
    /* FP8 names carry both types and the accumulation: _fa fast (tensor
     * cores only), _pr promoted, _blk block-scaled, _blkc with per-column B factors. */
    static const char *const accumulation[] = {"", "_pr", "_blk", "_blkc"};
    const int fp8 = k->input >= TESS_MMA_E4M3_E4M3;
    char types[16];
    if (fp8)
        snprintf(types, sizeof types, "%s%s", tess_dtype_name(d->a.dtype), tess_dtype_name(d->b.dtype));
    else
        snprintf(types, sizeof types, "%s", tess_dtype_name(d->a.dtype));
    snprintf(p->name, sizeof p->name, "sm90_%s_%c%c_%dx%dx%d_s%d_c%dx1%s%s%s%s", types,
             d->a.order == TESS_ORDER_ROW ? 't' : 'n', d->b.order == TESS_ORDER_COL ? 'n' : 't', k->tile_m,
             k->tile_n, k->tile_k, k->stages, k->cluster_m, fp8 && k->scaling == TESS_SCALING_PLAIN ? "_fa" : "",
             accumulation[k->scaling], p->stream_k ? "_sk" : "", transposed ? "_swap" : "");
}

/* How kernel `kernel` would run `desc`: the grid, the work split and the
 * workspace, data-parallel or stream-K. Returns 0 where that mode does not
 * apply (stream-K: the tiles fill whole waves, or the tail is too thin). */
static int gemm_launch(const tess_device_info *info, const tess_gemm_desc *desc, int kernel, int stream_k,
                       tess_gemm_launch *x) {
    const tess_gemm_kernel *k = tess_gemm_sm90_kernel(kernel);
    if (!k || !launch_split(k, desc, tess_gemm_resident_ctas(kernel, info), stream_k, &x->split, &x->grid))
        return 0;
    if (stream_k && x->grid > TESS_SK_MAX_CTAS)
        return 0;
    x->workspace = stream_k ? sk_workspace_bytes(k, x->grid) : 0;
    return 1;
}

int tess_plan_rank_slot(tess_plan *plans, double *cost, int n, int capacity, double c) {
    int at = n < capacity ? n : capacity;
    while (at > 0 && cost[at - 1] > c)
        at--;
    if (at >= capacity)
        return -1;
    for (int j = (n < capacity ? n : capacity - 1); j > at; j--) {
        plans[j] = plans[j - 1];
        cost[j] = cost[j - 1];
    }
    cost[at] = c;
    return at;
}

/* A matrix read the other way: X^T over the same memory. */
static tess_matrix_desc transposed_matrix(const tess_matrix_desc *x) {
    tess_matrix_desc t = *x;
    t.rows = x->cols, t.cols = x->rows;
    t.order = x->order == TESS_ORDER_ROW ? TESS_ORDER_COL : TESS_ORDER_ROW;
    return t;
}

/* The problem a transposed plan's kernel runs (and a grouped token tile's): D^T = B^T A^T (+ beta C^T),
 * with the operands' roles, their factors and M and N swapped (per-row
 * factors of A become per-column factors of the new B, and so on). For
 * small M this puts B's N columns (the weights) on the kernels' 128-row
 * side and the M tokens in a narrow N tile, so no wgmma row is padding. */
tess_gemm_desc tess_gemm_transposed_problem(const tess_gemm_desc *d) {
    tess_gemm_desc t = *d;
    t.m = d->n, t.n = d->m;
    t.a = transposed_matrix(&d->b), t.b = transposed_matrix(&d->a);
    t.c = transposed_matrix(&d->c), t.d = transposed_matrix(&d->d);
    t.a_scale = d->b_scale, t.b_scale = d->a_scale;
    return t;
}

/* Problems of at most this many rows are also planned transposed: M then
 * fits one token tile of at most 64 columns. */
#define TESS_TRANSPOSED_MAX_M 64

/* Whether decode GEMV kernel i (kernels/decode/gemv.cu, its table's index)
 * is offered for the problem. The kernels read A and B with 16-byte loads
 * along K, so both must be K-major (the 'TN' layout of decode: tokens
 * row-major, weights column-major) with K whole 16-byte chunks; one matrix
 * (batch 1); both 16-bit of one type, or e4m3 with block factors on both
 * operands or on neither; K at most TESS_GEMV_MAX_K; M at most the kernel's tokens. Of each family
 * (float32 FMAs, tensor cores of 4 or 8 warps) only the narrowest kernel that holds M is
 * offered: the table lists each family's kernels of a type by token count,
 * smallest first. */
/* The kernels count K in 32-bit ints, rounded up to whole steps of up to 64
 * elements: K must stay that far below 2^31. */
#define TESS_GEMV_MAX_K (INT32_MAX - 64)
static int gemv_offered(const tess_gemm_desc *d, int i) {
    const tess_dtype t = d->a.dtype;
    const int block = tess_scale_is_block(d->a_scale.mode);
    if (d->batch != 1 || d->a.order != TESS_ORDER_ROW || d->b.order != TESS_ORDER_COL || d->b.dtype != t ||
        d->k % (TESS_TMA_ALIGN / (int64_t)tess_dtype_size(t)) != 0 || block != tess_scale_is_block(d->b_scale.mode) ||
        d->k > TESS_GEMV_MAX_K)
        return 0;
    const tess_gemv_kernel *k = tess_gemv_kernel_at(i);
    if (!k || k->input != t || k->block_scaled != block || d->m > k->max_m)
        return 0;
    for (int j = 0; j < i; j++) {
        const tess_gemv_kernel *o = tess_gemv_kernel_at(j);
        if (o->tensor_cores == k->tensor_cores && o->warps == k->warps && o->input == t && o->block_scaled == block &&
            d->m <= o->max_m)
            return 0;
    }
    return 1;
}

/* Estimated run time of the decode GEMV kernel on the problem, on the
 * footing of estimate()'s, which leaves out the ~6 us every sm90 launch
 * costs: the longer of its weight stream and its float32 arithmetic, plus
 * TESS_OVERLAP_LOSS of the shorter, less what its lighter launch saves.
 * Fitted to H100 GPU times (2026-11-23, held stream, bench/NOTES.md "Decode
 * GEMV"): a 1x128x128 call takes 3.9 us against the sm90 kernels' 5.9
 * (TESS_GEMV_LAUNCH_SAVING_S); past that, 1x4096x7168 bf16 streams its
 * 58.7 MB at 2.88 TB/s, 0.95 of the sustained copy rate
 * (TESS_GEMV_STREAM_EFFICIENCY); 64 CTAs (1x256x7168) draw 1.05 TB/s, 16 GB/s
 * each (TESS_GEMV_CTA_BYTES_PER_S: 8-16 KB in flight per CTA); 8 tokens of
 * bf16 (8x4096x7168, 29.7 us) and 4 of e4m3 (4x2112x7168, 13.6 us) are
 * bound by the FMAs and the conversions around them, at 0.34 and 0.2 of the
 * SMs' float32 FMA rate (e4m3 converts each weight and token twice, through
 * f16). */
#define TESS_GEMV_STREAM_EFFICIENCY 0.95
#define TESS_GEMV_CTA_BYTES_PER_S 16e9
#define TESS_GEMV_FMA_EFFICIENCY_16BIT 0.34
#define TESS_GEMV_FMA_EFFICIENCY_E4M3 0.2
#define TESS_GEMV_LAUNCH_SAVING_S 2.0e-6
/* float32 FMAs per SM per clock on sm_90: 128 lanes. */
#define TESS_SM90_FMA_PER_CLOCK 128.0

/* CTAs of decode GEMV kernel k on problem d: one per k->rows weight rows, no split of K. */
static int64_t gemv_grid(const tess_gemv_kernel *k, const tess_gemm_desc *d) { return (d->n + k->rows - 1) / k->rows; }

/* What `ctas` CTAs drawing `per_cta` bytes/s each stream together, at most `cap`. */
static double capped_rate(int64_t ctas, double per_cta, double cap) {
    return (double)ctas * per_cta < cap ? (double)ctas * per_cta : cap;
}

/* The weight stream time of tensor-core GEMV kernel k (16 rows a CTA, N / 16
 * CTAs): no FMAs to speak of, so a 16-bit one takes its stream time (e4m3
 * adds gemv_mma_e4m3_work). Each CTA draws
 * up to TESS_GEMV_MMA_CTA_BYTES_PER_S (32 KB in flight; H100, 2026-11-23:
 * 132 CTAs of 16x2112x7168 streamed 1.86 TB/s), and a grid wider than its
 * resident CTAs (k->ctas_per_sm) streams its last partial wave at that
 * wave's CTAs' rate (16x7168x2048: 448 CTAs on 396 places, 19.5 us against
 * 16.6 for the 8-token kernel, 4 a SM). At 1 token it streams as fast as
 * the float32 kernel (24.6 against 24.4 us at 1x4096x7168). Its launch
 * saves 1 us less than the float32 kernel's: at short K it takes ~2 us more
 * than its stream (4x7168x2048: 16.3 us, 8 tokens 16.6, for 10.3 us of
 * stream and a ~4 us launch), which this stands for where it matters. */
#define TESS_GEMV_MMA_CTA_BYTES_PER_S 14.4e9
#define TESS_GEMV_MMA_LAUNCH_SAVING_S 1.0e-6
/* A CTA of 8 warps keeps twice the bytes in flight but is planned one to an
 * SM (k->ctas_per_sm): where the grid fits one wave (16x2112x7168, 132
 * CTAs; H100, 2026-11-24) it draws 1.06x the 4-warp CTA's rate in bf16 and
 * 1.17x in block-scaled e4m3; where it does not (N=4096, 256 CTAs) its
 * second wave makes it 8-25% slower, as the waves below count. */
#define TESS_GEMV_MMA_W8_RATE_GAIN 1.1
static double gemv_mma_memory(const tess_gemv_kernel *k, int64_t grid, int64_t sms, double bytes, double rate) {
    const int64_t resident = sms * k->ctas_per_sm;
    const double cta_rate = TESS_GEMV_MMA_CTA_BYTES_PER_S * (k->warps == 8 ? TESS_GEMV_MMA_W8_RATE_GAIN : 1.0);
    const int64_t full_waves = grid / resident, tail = grid % resident;
    const double full_rate = capped_rate(resident, cta_rate, rate);
    const double tail_rate = capped_rate(tail, cta_rate, rate);
    const double per_cta = bytes / (double)grid;
    return (double)(full_waves * resident) * per_cta / full_rate + (tail > 0 ? (double)tail * per_cta / tail_rate : 0.0);
}

/* What the e4m3 tensor-core GEMV adds to its stream: each weight is
 * converted to f16 (mma.sync of e4m3 runs as f16 HMMA on sm_90) and, with
 * block factors, each 64-K step's partial sums are scaled by their 128-K
 * block's factors and promoted, once per 8-token tile. The time does not hide under the stream; fitted
 * to H100 GPU times (2026-11-24, bench/gemv_mma_check.sh, 4096x7168):
 * 1.7 us per token tile per tensor factors (4 and 8 tokens 11.0 and 11.2 us
 * against a 10.3 us stream, 16 tokens 12.8), 5.3 us with block factors (4
 * and 8 tokens 15.6 and 15.4; 16 tokens 16.7, less than twice): 66 and 21
 * weights per SM per clock. */
#define TESS_GEMV_MMA_E4M3_WEIGHTS_PER_CLOCK 66.0
#define TESS_GEMV_MMA_E4M3_BLOCK_WEIGHTS_PER_CLOCK 21.0
static double gemv_mma_e4m3_work(const tess_gemv_kernel *k, const tess_gemm_desc *d, double sms, double hz) {
    const double per_clock =
        k->block_scaled ? TESS_GEMV_MMA_E4M3_BLOCK_WEIGHTS_PER_CLOCK : TESS_GEMV_MMA_E4M3_WEIGHTS_PER_CLOCK;
    return (double)(k->max_m / 8) * (double)d->n * (double)d->k / (sms * per_clock * hz);
}

static double gemv_estimate(const tess_device_info *info, const tess_gemv_kernel *k, const tess_gemm_desc *d) {
    const double hz = device_sm_hz(info), peak_bytes = device_memory_bytes_per_s(info);
    const double sms = info && info->sm_count > 0 ? info->sm_count : TESS_DEFAULT_SMS;
    const double bytes = (double)d->k * (double)(d->m + d->n) * tess_dtype_size(d->a.dtype) +
                         (double)d->m * d->n * tess_dtype_size(d->d.dtype) +
                         (d->beta != 0.0f ? (double)d->m * d->n * tess_dtype_size(d->c.dtype) : 0.0);
    /* A small grid draws what its CTAs' loads in flight allow. */
    const int64_t grid = gemv_grid(k, d);
    const double stream_rate = peak_bytes * TESS_SUSTAINED_MEMORY * TESS_GEMV_STREAM_EFFICIENCY;
    if (k->tensor_cores)
        return gemv_mma_memory(k, grid, (int64_t)sms, bytes, stream_rate) - TESS_GEMV_MMA_LAUNCH_SAVING_S +
               (k->input == TESS_DTYPE_E4M3 ? gemv_mma_e4m3_work(k, d, sms, hz) : 0.0);
    const double memory = bytes / capped_rate(grid, TESS_GEMV_CTA_BYTES_PER_S, stream_rate);
    const double fma_efficiency =
        k->input == TESS_DTYPE_E4M3 ? TESS_GEMV_FMA_EFFICIENCY_E4M3 : TESS_GEMV_FMA_EFFICIENCY_16BIT;
    const double compute =
        (double)k->max_m * d->n * d->k / (sms * TESS_SM90_FMA_PER_CLOCK * hz * fma_efficiency);
    const double longer = compute > memory ? compute : memory, shorter = compute > memory ? memory : compute;
    return longer + TESS_OVERLAP_LOSS * shorter - TESS_GEMV_LAUNCH_SAVING_S;
}

/* Fills plan p for decode GEMV kernel `index` (its table's) on problem d. */
static void describe_gemv(const tess_gemv_kernel *k, const tess_gemm_desc *d, int index, tess_plan *p) {
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->kernel = tess_gemm_sm90_kernel_count() + index;
    p->tile_m = k->max_m, p->tile_n = k->rows;
    /* Elements a thread reads of a row per step: a 16-byte chunk, or a tensor-core K step. */
    p->tile_k = (k->tensor_cores ? TESS_GEMV_MMA_STEP_BYTES : TESS_TMA_ALIGN) / (int)tess_dtype_size(d->a.dtype);
    p->stages = k->tensor_cores ? TESS_GEMV_MMA_DEPTH_OF(k->input == TESS_DTYPE_E4M3, k->max_m / 8)
                                : 2; /* steps in flight per thread */
    p->cluster_m = p->cluster_n = 1;
    p->grid = p->tiles = (int32_t)gemv_grid(k, d);
    snprintf(p->name, sizeof p->name, "gemv_%s_tn_m%d_r%d%s%s%s", tess_dtype_name(d->a.dtype), k->max_m, k->rows,
             k->block_scaled ? "_blk" : "", k->tensor_cores ? "_mma" : "", k->warps == 8 ? "_w8" : "");
}

/* Runs the problem on decode GEMV kernel k (validated, k serving it). */
static tess_status run_gemv(tess_handle h, const tess_gemv_kernel *k, const tess_gemm_desc *desc, const void *a,
                            const float *a_scale, const void *b, const float *b_scale, const void *c, void *d) {
    tess_gemv_params p;
    memset(&p, 0, sizeof p);
    p.a = a, p.b = b, p.lda = desc->a.ld, p.ldb = desc->b.ld;
    p.m = (int)desc->m, p.n = (int)desc->n, p.k = (int)desc->k;
    p.alpha = desc->alpha, p.beta = desc->beta;
    p.c = desc->beta != 0.0f ? c : NULL;
    p.d = d;
    p.c_layout = desc->c, p.d_layout = desc->d;
    p.scale_a.data = a_scale, p.scale_a.layout = desc->a_scale;
    p.scale_b.data = b_scale, p.scale_b.layout = desc->b_scale;
    int previous = -1;
    tess_status s = tess_handle_enter(h, &previous);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    s = k->launch(&p, h->stream);
    tess_handle_leave(h, previous);
    return s;
}

int tess_gemm_candidates(const tess_device_info *info, const tess_gemm_desc *desc, size_t workspace_limit,
                         tess_plan *plans, int capacity) {
    enum { MAX_CANDIDATES = 4 * TESS_GEMM_MAX_KERNELS }; /* data-parallel and stream-K, each maybe transposed */
    double cost[MAX_CANDIDATES];
    int n = 0;
    const tess_gemm_desc swapped = tess_gemm_transposed_problem(desc);
    for (int transposed = 0; transposed <= (desc->m <= TESS_TRANSPOSED_MAX_M); transposed++) {
        const tess_gemm_desc *run = transposed ? &swapped : desc;
        for (int i = 0; i < tess_gemm_sm90_kernel_count(); i++) {
            const tess_gemm_kernel *k = tess_gemm_sm90_kernel(i);
            if (!kernel_fits(k, run))
                continue;
            for (int stream_k = 0; stream_k <= 1 && n < MAX_CANDIDATES; stream_k++) {
                tess_gemm_launch x;
                if (!gemm_launch(info, run, i, stream_k, &x) || x.workspace > workspace_limit)
                    continue;
                const int at = tess_plan_rank_slot(plans, cost, n, capacity, estimate(info, k, run, &x, transposed));
                if (at >= 0)
                    describe(k, desc, run, i, &x, &plans[at]);
                n++;
            }
        }
    }
    for (int g = 0; g < tess_gemv_kernel_count() && n < MAX_CANDIDATES; g++) {
        if (!gemv_offered(desc, g))
            continue;
        const tess_gemv_kernel *k = tess_gemv_kernel_at(g);
        const int at = tess_plan_rank_slot(plans, cost, n, capacity, gemv_estimate(info, k, desc));
        if (at >= 0)
            describe_gemv(k, desc, g, &plans[at]);
        n++;
    }
    return n;
}

/* Handle, descriptor and device checks shared by the plan queries and the run. */
static tess_status prepare(tess_handle h, const tess_gemm_desc *desc, const char *caller) {
    tess_status s = tess_handle_check(h, caller);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    /* Plans do not depend on pointers: validate with stand-in aligned ones. */
    static const _Alignas(16) char stand_in[16];
    return tess_gemm_validate(&h->info, desc, stand_in, (const float *)stand_in, stand_in, (const float *)stand_in,
                              stand_in, stand_in);
}

TESS_API tess_status tess_gemm_plans(tess_handle handle, const tess_gemm_desc *desc, tess_plan *plans, int capacity,
                                     int *count) {
    tess_status s = prepare(handle, desc, "tess_gemm_plans");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!count || (capacity > 0 && !plans) || capacity < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_plans: count must not be NULL, nor plans when capacity > 0");
    *count = tess_gemm_candidates(&handle->info, desc, handle->workspace_bytes, plans, capacity);
    if (*count == 0)
        return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_gemm_plans: no kernel in this build runs this problem");
    return TESS_STATUS_SUCCESS;
}

TESS_API tess_status tess_gemm_plan(tess_handle handle, const tess_gemm_desc *desc, tess_plan *plan) {
    int count = 0;
    if (!plan)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_plan: plan is NULL");
    return tess_gemm_plans(handle, desc, plan, 1, &count);
}

TESS_API tess_status tess_gemm_workspace_size(tess_handle handle, const tess_gemm_desc *desc, size_t *bytes) {
    tess_status s = prepare(handle, desc, "tess_gemm_workspace_size");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if (!bytes)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_workspace_size: bytes is NULL");
    tess_plan best;
    *bytes = tess_gemm_candidates(&handle->info, desc, SIZE_MAX, &best, 1) > 0 ? (size_t)best.workspace_bytes : 0;
    return TESS_STATUS_SUCCESS;
}

/* Tensor map of matrix x (a batch of them) read or written in boxes of 128
 * contiguous bytes (64 16-bit or 128 FP8 elements: one swizzle row) by
 * box_outer lines, 128-byte swizzled. */
static tess_status matrix_map(CUtensorMap *map, const tess_matrix_desc *x, const void *ptr, int64_t batch,
                              int box_outer) {
    return tess_tensor_map_matrix(map, x->dtype, ptr, tess_matrix_inner(x), tess_matrix_outer(x), x->ld, batch,
                                  x->batch_stride, 128 / (int)tess_dtype_size(x->dtype), box_outer);
}

/* Tensor map of operand A or B for a kernel: K-major in boxes of 128 bytes x
 * rows, MN-major (16-bit only) in 64 x 64 boxes. */
static tess_status operand_map(CUtensorMap *map, const tess_matrix_desc *x, const void *ptr, int64_t batch,
                               int k_is_rows, int tile_rows) {
    /* k_is_rows: the operand is K x N (B); else R x K (A). */
    return matrix_map(map, x, ptr, batch, operand_k_major(x, k_is_rows) ? tile_rows : 64);
}

/* For operand A (B when of_b) of a kernel that loads just the rows that
 * exist where they end inside its last tile (loads_edge_rows_only): a map
 * whose box holds those rows, and their count (gemm_params.h tma_a_edge);
 * 0 rows where the operand fills its tiles or the kernel keeps zero-filled
 * boxes. */
static tess_status edge_map(CUtensorMap *map, int *rows, const tess_gemm_kernel *k, const tess_gemm_desc *desc,
                            const void *ptr, int of_b) {
    const int64_t extent = of_b ? desc->n : desc->m, tile_rows = of_b ? k->tile_n : k->tile_m;
    *rows = loads_edge_rows_only(k, desc, of_b) ? (int)(extent % tile_rows) : 0;
    return *rows ? matrix_map(map, of_b ? &desc->b : &desc->a, ptr, desc->batch, *rows) : TESS_STATUS_SUCCESS;
}

/* Fills a kernel's parameters for a validated problem: tensor maps of A, B,
 * D and the block factors, shapes, tile counts, scales; the work split is
 * the caller's. */
tess_status tess_gemm_params_init(tess_gemm_params *p, const tess_gemm_kernel *k, const tess_gemm_desc *desc,
                                  const void *a, const float *a_scale, const void *b, const float *b_scale,
                                  const void *c, void *d) {
    tess_status s;
    memset(p, 0, sizeof *p);
    const int64_t batch = desc->batch;
    if ((s = operand_map(&p->tma_a, &desc->a, a, batch, 0, k->tile_m)) ||
        (s = operand_map(&p->tma_b, &desc->b, b, batch, 1, k->tile_n / k->cluster_m))) /* each CTA's share of B */
        return s;
    if ((s = edge_map(&p->tma_a_edge, &p->a_edge_rows, k, desc, a, 0)) ||
        (s = edge_map(&p->tma_b_edge, &p->b_edge_rows, k, desc, b, 1)))
        return s;
    p->d_direct = !d_by_tma(&desc->d, d, batch);
    if (!p->d_direct && (s = matrix_map(&p->tma_d, &desc->d, d, batch, 64))) /* the epilogue's 64 x 64 sub-tiles */
        return s;
    p->m = (int)desc->m, p->n = (int)desc->n;
    p->m_tiles = (p->m + k->tile_m - 1) / k->tile_m;
    p->n_tiles = (p->n + k->tile_n - 1) / k->tile_n;
    const char *group = getenv("TESS_GROUP_M");
    p->group_m = group && atoi(group) > 0 ? atoi(group) : TESS_GROUP_M;
    p->a_batch_shared = desc->a.batch_stride == 0;
    p->b_batch_shared = desc->b.batch_stride == 0;
    p->alpha = desc->alpha, p->beta = desc->beta;
    p->c = desc->beta != 0.0f ? c : NULL;
    p->d = d;
    p->c_layout = desc->c, p->d_layout = desc->d;
    p->scale_a.data = a_scale, p->scale_a.layout = desc->a_scale;
    p->scale_b.data = b_scale, p->scale_b.layout = desc->b_scale;
    return scale_maps(p, k, desc);
}

TESS_API tess_status tess_gemm_scaled(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan,
                                      const void *a, const float *a_scale, const void *b, const float *b_scale,
                                      const void *c, void *d) {
    tess_status s = tess_handle_check(handle, "tess_gemm");
    if (s != TESS_STATUS_SUCCESS)
        return s;
    if ((s = tess_gemm_validate(&handle->info, desc, a, a_scale, b, b_scale, c, d)))
        return s;
    tess_plan chosen;
    if (!plan) {
        if (tess_gemm_candidates(&handle->info, desc, handle->workspace_bytes, &chosen, 1) == 0)
            return tess_fail(TESS_STATUS_NOT_SUPPORTED, "tess_gemm: no kernel in this build runs this problem");
        plan = &chosen;
    }
    const int sm90_kernels = tess_gemm_sm90_kernel_count();
    if (plan->struct_size < sizeof(tess_plan) || plan->kernel < 0 ||
        plan->kernel >= sm90_kernels + tess_gemv_kernel_count())
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: the plan was not made by tess_gemm_plan(s)");
    if (plan->kernel >= sm90_kernels) {
        const int g = plan->kernel - sm90_kernels;
        if (!gemv_offered(desc, g))
            return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: plan %s is for another type, layout or shape",
                             plan->name);
        return run_gemv(handle, tess_gemv_kernel_at(g), desc, a, a_scale, b, b_scale, c, d);
    }
    const tess_gemm_kernel *k = tess_gemm_sm90_kernel(plan->kernel);
    /* A transposed plan's kernel runs D^T = B^T A^T: B is its A, A its B. */
    const tess_gemm_desc swapped = tess_gemm_transposed_problem(desc);
    const int transposed = plan->transposed != 0;
    const tess_gemm_desc *run = transposed ? &swapped : desc;
    if (!kernel_fits(k, run) || (transposed && desc->m > TESS_TRANSPOSED_MAX_M))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: plan %s is for another type, layout or shape",
                         plan->name);

    tess_gemm_params p;
    if ((s = tess_gemm_params_init(&p, k, run, transposed ? b : a, transposed ? b_scale : a_scale,
                                   transposed ? a : b, transposed ? a_scale : b_scale, c, d)))
        return s;
    tess_gemm_launch x;
    if (!gemm_launch(&handle->info, run, plan->kernel, plan->stream_k != 0, &x) || x.grid != plan->grid)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm: plan %s was made for another problem or device",
                         plan->name);
    p.split = x.split;
    if (x.workspace > 0) {
        if (handle->workspace_bytes < x.workspace)
            return tess_fail(TESS_STATUS_INSUFFICIENT_WORKSPACE,
                             "tess_gemm: plan %s needs %zu bytes of workspace and the handle has %zu; give it more "
                             "with tess_set_workspace (tess_gemm_workspace_size says how much)",
                             plan->name, x.workspace, handle->workspace_bytes);
        p.partials = (float *)handle->workspace;
        p.flags = handle->sk_flags;
    }

    int previous = -1;
    if ((s = tess_handle_enter(handle, &previous)))
        return s;
    s = k->launch(&p, x.grid, handle->stream);
    tess_handle_leave(handle, previous);
    return s;
}

TESS_API tess_status tess_gemm(tess_handle handle, const tess_gemm_desc *desc, const tess_plan *plan, const void *a,
                               const void *b, const void *c, void *d) {
    return tess_gemm_scaled(handle, desc, plan, a, NULL, b, NULL, c, d);
}

/* A cuBLAS column-major operand op(X) (rows x cols as it enters the product). */
static tess_matrix_desc cublas_operand(tess_op op, int64_t rows, int64_t cols, tess_dtype t, int64_t ld,
                                       int64_t stride) {
    tess_matrix_desc x = {t, op == TESS_OP_N ? TESS_ORDER_COL : TESS_ORDER_ROW, rows, cols, ld, stride};
    return x;
}

TESS_API tess_status tess_gemm_strided_batched_ex(tess_handle handle, tess_op transa, tess_op transb, int64_t m,
                                                  int64_t n, int64_t k, const float *alpha, const void *a,
                                                  tess_dtype a_type, int64_t lda, int64_t stride_a, const void *b,
                                                  tess_dtype b_type, int64_t ldb, int64_t stride_b,
                                                  const float *beta, void *c, tess_dtype c_type, int64_t ldc,
                                                  int64_t stride_c, int64_t batch) {
    if (!alpha || !beta)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_ex: alpha and beta must point to host floats");
    if ((transa != TESS_OP_N && transa != TESS_OP_T) || (transb != TESS_OP_N && transb != TESS_OP_T))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_gemm_ex: transa and transb are TESS_OP_N (0) or TESS_OP_T (1)");
    tess_gemm_desc desc;
    tess_gemm_desc_init(&desc);
    desc.m = m, desc.n = n, desc.k = k, desc.batch = batch;
    desc.alpha = *alpha, desc.beta = *beta;
    desc.a = cublas_operand(transa, m, k, a_type, lda, stride_a);
    desc.b = cublas_operand(transb, k, n, b_type, ldb, stride_b);
    desc.c = cublas_operand(TESS_OP_N, m, n, c_type, ldc, stride_c);
    desc.d = desc.c;
    return tess_gemm(handle, &desc, NULL, a, b, c, c);
}

TESS_API tess_status tess_gemm_ex(tess_handle handle, tess_op transa, tess_op transb, int64_t m, int64_t n,
                                  int64_t k, const float *alpha, const void *a, tess_dtype a_type, int64_t lda,
                                  const void *b, tess_dtype b_type, int64_t ldb, const float *beta, void *c,
                                  tess_dtype c_type, int64_t ldc) {
    return tess_gemm_strided_batched_ex(handle, transa, transb, m, n, k, alpha, a, a_type, lda, 0, b, b_type, ldb, 0,
                                        beta, c, c_type, ldc, 0, 1);
}
