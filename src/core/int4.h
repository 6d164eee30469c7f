/* Internal: validation of the 4-bit weight calls (core/int4.c), apart from
 * their launches, so that the CPU tests can check every refusal. */
#ifndef TESS_CORE_INT4_H
#define TESS_CORE_INT4_H

#include <stddef.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The first published size of tess_w4a16_desc: the least struct_size accepted. */
#define TESS_W4A16_DESC_SIZE_V1 (offsetof(tess_w4a16_desc, epilogue) + sizeof(tess_epilogue_desc))

/* Reads the caller's descriptor (any version's struct_size) into `full`. */
tess_status tess_w4a16_accept(const tess_w4a16_desc *desc, tess_w4a16_desc *full, const char *caller);

/* Checks the weight's part of a validated-to-be descriptor (n, k, group
 * size, scale type and leading dimensions) and its pointers. */
tess_status tess_int4_weight_check(const tess_w4a16_desc *desc, const void *w_packed, const void *scales,
                                   const uint8_t *zeros, const char *caller);

/* Checks every rule of tess_gemm_w4a16 (masked 0) or tess_gemm_w4a16_masked
 * (masked 1, with masked_m and the experts) for `desc` and the pointers
 * (bias: the epilogue's, or NULL). */
tess_status tess_w4a16_validate(const tess_w4a16_desc *desc, const int32_t *masked_m, int masked, const void *x,
                                const void *w_packed, const void *scales, const uint8_t *zeros, const void *d,
                                const void *bias);

/* Checks tess_pack_int4's arguments. */
tess_status tess_int4_pack_check(tess_int4_format format, int64_t n, int64_t k, const int32_t *src,
                                 const void *packed);

#ifdef __cplusplus
}
#endif

#endif
