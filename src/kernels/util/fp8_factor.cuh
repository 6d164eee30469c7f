// The quantization rule the utility kernels share (tess_quantize_fp8, its
// cast-transpose form, tess_quantize_int8): a block's dequantization factor
// is its amax over the type's largest value, 1 for an all-zero block, and
// q = x * (1 / factor), saturating (int8: rounded to the nearest integer).
#ifndef TESS_KERNELS_UTIL_FP8_FACTOR_CUH
#define TESS_KERNELS_UTIL_FP8_FACTOR_CUH

#include "tessera.h"

// Largest finite magnitude of a quantized type: e4m3 448, e5m2 57344, int8
// 127 (symmetric: -128 unused).
static __device__ __forceinline__ float fp8_max(tess_dtype t) {
    return t == TESS_DTYPE_E4M3 ? 448.0f : t == TESS_DTYPE_E5M2 ? 57344.0f : 127.0f;
}

// The dequantization factor for a block of largest magnitude amax.
static __device__ __forceinline__ float factor_for(float amax, tess_dtype q_type) {
    return amax > 0.0f ? amax / fp8_max(q_type) : 1.0f;
}

// Largest of v over the 32 lanes of a warp.
static __device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

#endif
