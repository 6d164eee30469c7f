// The quantization rule the utility kernels (tess_quantize_fp8, its
// cast-transpose form, tess_quantize_int8) and the sm90 epilogue's FP8 D
// share: a block's dequantization factor
// is its amax over the type's largest value, 1 for an all-zero block, and
// q = x * (1 / factor), saturating (int8: rounded to the nearest integer).
#ifndef TESS_KERNELS_UTIL_FP8_FACTOR_CUH
#define TESS_KERNELS_UTIL_FP8_FACTOR_CUH

#include <cuda_fp8.h>

#include "ref/convert.h"
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

// The FP8 code of x in q_type (e4m3, else e5m2): rounded to nearest,
// saturating, NaN kept.
static __device__ __forceinline__ uint32_t fp8_code(tess_dtype q_type, float x) {
    return q_type == TESS_DTYPE_E4M3 ? tess_f32_to_e4m3(x) : tess_f32_to_e5m2(x);
}

// The FP8 codes of lo and hi in q_type as one 16-bit pair, lo in the low
// byte (as the two lie in memory): one conversion instruction for both, the
// same rounding as fp8_code.
static __device__ __forceinline__ uint32_t fp8x2_code(tess_dtype q_type, float lo, float hi) {
    const float2 x = make_float2(lo, hi);
    return q_type == TESS_DTYPE_E4M3 ? __nv_cvt_float2_to_fp8x2(x, __NV_SATFINITE, __NV_E4M3)
                                     : __nv_cvt_float2_to_fp8x2(x, __NV_SATFINITE, __NV_E5M2);
}

// Largest of v over each group of LANES consecutive lanes (a power of two
// up to 32), in every lane of the group.
template <int LANES>
static __device__ __forceinline__ float lanes_max(float v) {
    for (int o = LANES / 2; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Largest of v over the 32 lanes of a warp.
static __device__ __forceinline__ float warp_max(float v) { return lanes_max<32>(v); }

#endif
