/* Addressing of dequantization factors (tess_scale_desc), shared by the
 * kernels, the reference GEMM and the host checks. */
#ifndef TESS_CORE_SCALE_H
#define TESS_CORE_SCALE_H

#include "core/hd.h"
#include "tessera.h"

/* Extent of a scale block along K (and along M or N for 128x128 blocks), in
 * elements: the DeepSeek-V3 recipe's 128, also cuBLASLt's VEC128/BLK128x128. */
#define TESS_SCALE_BLOCK 128

/* Offset of factor (mn, K block kb) of batch `batch` in an array laid out as `s`. */
TESS_HD int64_t tess_scale_offset(const tess_scale_desc *s, int64_t batch, int64_t mn, int64_t kb) {
    int64_t at = batch * s->batch_stride;
    switch (s->mode) {
    case TESS_SCALE_TENSOR: break;
    case TESS_SCALE_OUTER_VEC: at += mn * s->stride_mn; break;
    case TESS_SCALE_BLOCK_1x128: at += mn * s->stride_mn + kb * s->stride_k; break;
    case TESS_SCALE_BLOCK_128x128: at += (mn / TESS_SCALE_BLOCK) * s->stride_mn + kb * s->stride_k; break;
    }
    return at;
}

/* Whether a mode's factors vary along K (the block recipes). */
TESS_HD int tess_scale_is_block(tess_scale_mode mode) {
    return mode == TESS_SCALE_BLOCK_1x128 || mode == TESS_SCALE_BLOCK_128x128;
}

/* Where one operand's float32 dequantization factors are (data NULL: all 1). */
typedef struct tess_scale_operand {
    const float *data;
    tess_scale_desc layout;
} tess_scale_operand;

#endif
