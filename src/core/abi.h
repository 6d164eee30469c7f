/* Internal: the public structs that carry a struct_size, across versions.
 * Later versions only append fields. A caller built against an older header
 * passes a smaller struct: what it lacks reads as zero (as cuBLASLt and
 * Vulkan do), so every appended field must mean "as before" when zero. */
#ifndef TESS_CORE_ABI_H
#define TESS_CORE_ABI_H

#include <stddef.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The first published size of each struct: the least struct_size accepted. */
#define TESS_GEMM_DESC_SIZE_V1 (offsetof(tess_gemm_desc, fast_accum) + sizeof(int32_t))
#define TESS_GROUPED_GEMM_DESC_SIZE_V1 (offsetof(tess_grouped_gemm_desc, w_scale) + sizeof(tess_scale_desc))
#define TESS_GROUPED_WGRAD_DESC_SIZE_V1 (offsetof(tess_grouped_wgrad_desc, dw) + sizeof(tess_matrix_desc))
#define TESS_PLAN_SIZE_V1 (offsetof(tess_plan, large_grid) + sizeof(int32_t))
#define TESS_DEVICE_INFO_SIZE_V1 (offsetof(tess_device_info, kernel_families) + sizeof(uint32_t))
#define TESS_EPILOGUE_PTRS_SIZE_V1 (offsetof(tess_epilogue_ptrs, bias) + sizeof(const void *))

/* Zeroes the caller's struct `user` of `size` bytes and sets its
 * struct_size (the first member): what each *_init call does first.
 * Refuses NULL with "<what> is NULL". */
tess_status tess_struct_init(void *user, size_t size, const char *what);

/* Copies the caller's struct `user` (its struct_size bytes, the first
 * member) into `full`, this version's struct of `size` bytes, zeroing the
 * fields the caller's version lacks. Refuses (INVALID_VALUE, a sentence
 * naming `what` and `init`, the call that sets struct_size) a struct_size
 * below `min`, or above this version's with nonzero bytes past it: fields
 * of a later version that this one would ignore. */
tess_status tess_struct_in(void *full, size_t size, const void *user, size_t min, const char *what,
                           const char *init);

/* Reads a plan the caller passes back (tess_struct_in), its name a C string. */
tess_status tess_plan_accept(const tess_plan *plan, tess_plan *full, const char *caller);

/* Reads the caller's epilogue pointers (tess_struct_in) into *full; NULL
 * reads as no pointers. */
tess_status tess_epilogue_ptrs_in(const tess_epilogue_ptrs *ep, tess_epilogue_ptrs *full, const char *caller);

/* INVALID_VALUE where the epilogue pointers `ep` (read by
 * tess_epilogue_ptrs_in) carry an aux output for a call that has none (the
 * grouped and W4A16 GEMMs): an output is never silently left unwritten. */
tess_status tess_epilogue_ptrs_no_aux(const tess_epilogue_ptrs *ep, const char *caller);

#ifdef __cplusplus
}
#endif

#endif
