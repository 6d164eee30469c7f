/* The sm90 family's kernel parameters for a problem: tensor maps of the
 * operands, of D and of block factors, shapes and tile counts, the
 * epilogue's inputs. */
#include <string.h>

#include "core/dtype.h"
#include "core/matrix.h"
#include "core/scale.h"
#include "core/tensor_map.h"
#include "kernels/sm90/sm90.h"

/* TMA's rules for a matrix it loads or stores: 16-byte aligned base, and row
 * and batch strides multiples of 16 bytes. */
#define TESS_TMA_ALIGN 16

/* Whether TMA can store D exactly: 16-bit, or an FP8 D stored row-major
 * (the epilogue stages FP8 only that way), with 16-byte aligned rows and
 * batches and a contiguous extent of whole 16-byte chunks (TMA clips stores at
 * that granularity, so a ragged extent would write into D's padding). */
static int d_by_tma(const tess_matrix_desc *d, const void *ptr, int64_t batch) {
    const int fp8 = tess_dtype_is_fp8(d->dtype);
    if (!tess_dtype_is_16bit(d->dtype) && !(fp8 && d->order == TESS_ORDER_ROW))
        return 0;
    const int64_t per = TESS_TMA_ALIGN / (int64_t)tess_dtype_size(d->dtype); /* elements per 16 bytes */
    return (uintptr_t)ptr % TESS_TMA_ALIGN == 0 && d->ld % per == 0 && tess_matrix_inner(d) % per == 0 &&
           (batch == 1 || d->batch_stride % per == 0);
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
int tess_sm90_factor_layouts_by_tma(const tess_gemm_kernel *k, const tess_gemm_desc *d) {
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
    p->scales_by_tma = tess_sm90_factor_layouts_by_tma(k, desc) && a->data && b->data &&
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


/* Whether operand x, A (R x K) or B when of_b (K x N), has K contiguous. */
int tess_sm90_operand_k_major(const tess_matrix_desc *x, int of_b) {
    return of_b ? x->order == TESS_ORDER_COL : x->order == TESS_ORDER_ROW;
}

/* Whether a dense kernel loads just the rows that exist of operand A (B when
 * of_b) in the tile where the operand's rows end (tess_sm90_params_init's
 * edge maps: K-major, and for B clusters of 1), rather than a box whose
 * rows past the edge TMA fills with zeros. */
int tess_sm90_loads_edge_rows_only(const tess_gemm_kernel *k, const tess_gemm_desc *d, int of_b) {
    return !k->grouped && tess_sm90_operand_k_major(of_b ? &d->b : &d->a, of_b) && (!of_b || k->cluster_m == 1);
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
    return matrix_map(map, x, ptr, batch, tess_sm90_operand_k_major(x, k_is_rows) ? tile_rows : 64);
}

/* For operand A (B when of_b) of a kernel that loads just the rows that
 * exist where they end inside its last tile (tess_sm90_loads_edge_rows_only): a map
 * whose box holds those rows, and their count (gemm_params.h tma_a_edge);
 * 0 rows where the operand fills its tiles or the kernel keeps zero-filled
 * boxes. */
static tess_status edge_map(CUtensorMap *map, int *rows, const tess_gemm_kernel *k, const tess_gemm_desc *desc,
                            const void *ptr, int of_b) {
    const int64_t extent = of_b ? desc->n : desc->m, tile_rows = of_b ? k->tile_n : k->tile_m;
    *rows = tess_sm90_loads_edge_rows_only(k, desc, of_b) ? (int)(extent % tile_rows) : 0;
    return *rows ? matrix_map(map, of_b ? &desc->b : &desc->a, ptr, desc->batch, *rows) : TESS_STATUS_SUCCESS;
}

/* Sets aux_by_tma and tma_aux for a validated problem's aux output (desc.aux,
 * pointer aux; none: aux_by_tma 0): where D is stored by TMA and aux (D's
 * dtype and order) can be too, the same 64 x 64 boxes. A map the driver
 * refuses leaves aux to the staged store, which writes any layout. */
void tess_sm90_params_set_aux(tess_gemm_params *p, const tess_gemm_desc *desc, void *aux) {
    p->aux_by_tma = 0;
    const tess_matrix_desc *x = &desc->aux;
    if (!aux || x->rows <= 0 || x->cols <= 0 || p->d_direct || !tess_dtype_is_16bit(x->dtype) ||
        !d_by_tma(x, aux, desc->batch))
        return;
    p->aux_by_tma = matrix_map(&p->tma_aux, x, aux, desc->batch, 64) == TESS_STATUS_SUCCESS;
}

/* Fills a kernel's parameters for a validated problem: tensor maps of A, B,
 * D and the block factors, shapes, tile counts, scales; the work split is
 * the caller's. */
tess_status tess_sm90_params_init(tess_gemm_params *p, const tess_gemm_kernel *k, const tess_gemm_desc *desc,
                                  const void *a, const float *a_scale, const void *b, const float *b_scale,
                                  const void *c, void *d, const void *bias, const void *residual) {
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
    if (!p->d_direct) { /* the epilogue's 64 x 64 sub-tiles: 128-byte rows, or an FP8 D's 64-byte ones */
        const tess_matrix_desc *x = &desc->d;
        s = tess_dtype_is_fp8(x->dtype)
                ? tess_tensor_map_matrix_sw64(&p->tma_d, x->dtype, d, tess_matrix_inner(x), tess_matrix_outer(x),
                                              x->ld, batch, x->batch_stride, 64, 64)
                : matrix_map(&p->tma_d, x, d, batch, 64);
        if (s)
            return s;
    }
    p->m = (int)desc->m, p->n = (int)desc->n;
    p->m_tiles = (p->m + k->tile_m - 1) / k->tile_m;
    p->n_tiles = (p->n + k->tile_n - 1) / k->tile_n;
    p->group_m = TESS_SM90_GROUP_M;
    p->a_batch_shared = desc->a.batch_stride == 0;
    p->b_batch_shared = desc->b.batch_stride == 0;
    p->epi = tess_epilogue_of(desc, c, d, bias, residual);
    p->scale_a.data = a_scale, p->scale_a.layout = desc->a_scale;
    p->scale_b.data = b_scale, p->scale_b.layout = desc->b_scale;
    return scale_maps(p, k, desc);
}
