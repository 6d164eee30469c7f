/* Bit-exact conversions between float32 and the narrow types (bf16, f16, OCP
 * FP8 e4m3 and e5m2), written once for the host and for kernels.
 *
 * Rules (float32 -> narrow), all round-to-nearest-even:
 *  - bf16, f16: IEEE. Overflow goes to infinity, subnormals are kept.
 *  - e4m3, e5m2: saturating, as PTX `cvt.rn.satfinite` does: any magnitude
 *    above the largest finite value, infinity included, becomes that value
 *    (448 for e4m3, 57344 for e5m2).
 *  - NaN becomes a NaN (its payload is not preserved).
 * Narrow -> float32 is exact for every code.
 *
 * The *_soft functions are the algorithms, in integer arithmetic, for the host
 * and for the GPU test that checks them against the hardware bit for bit; the
 * plain names are the same functions, which kernels execute with the
 * hardware's own conversion instructions.
 */
#ifndef TESS_REF_CONVERT_H
#define TESS_REF_CONVERT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/hd.h"
#include "tessera.h"

#if defined(__CUDA_ARCH__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

TESS_HD uint32_t tess_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

TESS_HD float tess_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* A binary format narrower than float32, described by its field widths.
 * max_code is the largest finite magnitude's code; overflow_code is what
 * magnitudes above it become (infinity or, saturating, max_code). */
typedef struct tess_small_format {
    int man_bits;
    int bias;
    uint32_t max_code;
    uint32_t overflow_code;
    uint32_t nan_code;
    int sign_shift;    /* position of the sign bit: total width - 1 */
    int ieee_specials; /* the top exponent holds inf/NaN (f16, e5m2); else only nan_code is special (e4m3) */
} tess_small_format;

/* f16: 5 exponent bits (bias 15), 10 mantissa bits; 0x7bff = 65504, 0x7c00 = inf. */
TESS_HD tess_small_format tess_format_f16(void) {
    const tess_small_format f = {10, 15, 0x7bffu, 0x7c00u, 0x7e00u, 15, 1};
    return f;
}

/* e4m3 (OCP "fn"): bias 7, 3 mantissa bits; 0x7e = 448; S.1111.111 is the only NaN. */
TESS_HD tess_small_format tess_format_e4m3(void) {
    const tess_small_format f = {3, 7, 0x7eu, 0x7eu, 0x7fu, 7, 0};
    return f;
}

/* e5m2: bias 15, 2 mantissa bits; 0x7b = 57344; saturating, so overflow stays 0x7b. */
TESS_HD tess_small_format tess_format_e5m2(void) {
    const tess_small_format f = {2, 15, 0x7bu, 0x7bu, 0x7fu, 7, 1};
    return f;
}

/* Rounds float32 to the format `fmt` (round to nearest, ties to even). */
TESS_HD uint32_t tess_f32_to_small(float f, tess_small_format fmt) {
    uint32_t u = tess_f32_bits(f);
    uint32_t sign = (u >> 31) << fmt.sign_shift;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return sign | fmt.nan_code;
    if (a == 0x7f800000u)
        return sign | fmt.overflow_code;
    int drop = 23 - fmt.man_bits; /* float32 mantissa bits that do not fit */
    /* Exponent field of the format's smallest normal, 2^(1 - bias), in float32. */
    uint32_t min_normal = (uint32_t)(128 - fmt.bias) << 23;
    if (a >= min_normal) {
        uint32_t lsb = (a >> drop) & 1u;
        uint32_t rounded = a + ((1u << (drop - 1)) - 1u) + lsb; /* carries into the exponent */
        uint32_t code = (rounded >> drop) - ((uint32_t)(127 - fmt.bias) << fmt.man_bits);
        return sign | (code > fmt.max_code ? fmt.overflow_code : code);
    }
    /* Subnormal in the target: count units of 2^(1 - bias - man_bits). Every
     * float32 subnormal lies far below half a unit for these formats. */
    int exponent = (int)(a >> 23) - 127;
    int shift = 24 - fmt.bias - fmt.man_bits - exponent;
    if ((a >> 23) == 0 || shift > 24)
        return sign;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t r = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (r & 1u)))
        r++; /* may become the smallest normal's code, which is right */
    return sign | r;
}

/* Exact float32 value of a code of `fmt`. */
TESS_HD float tess_small_to_f32(uint32_t code, tess_small_format fmt) {
    uint32_t sign = (code >> fmt.sign_shift) & 1u;
    uint32_t mag = code & ((1u << fmt.sign_shift) - 1u);
    uint32_t e = mag >> fmt.man_bits;
    uint32_t m = mag & ((1u << fmt.man_bits) - 1u);
    uint32_t e_max = (1u << (fmt.sign_shift - fmt.man_bits)) - 1u;
    uint32_t bits;
    if (fmt.ieee_specials && e == e_max) {
        bits = m ? 0x7fc00000u : 0x7f800000u;
    } else if (!fmt.ieee_specials && mag == fmt.nan_code) {
        bits = 0x7fc00000u;
    } else if (e != 0) {
        bits = ((e - (uint32_t)fmt.bias + 127u) << 23) | (m << (23 - fmt.man_bits));
    } else {
        /* m units of 2^(1 - bias - man_bits); a power of two times a small integer is exact. */
        float unit = tess_f32_from_bits((uint32_t)(128 - fmt.bias - fmt.man_bits) << 23);
        bits = tess_f32_bits((float)m * unit);
    }
    return tess_f32_from_bits(bits | (sign << 31));
}

TESS_HD uint16_t tess_f32_to_bf16_soft(float f) {
    uint32_t u = tess_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN, sign kept */
    u += 0x7fffu + ((u >> 16) & 1u);            /* round to nearest even; overflow reaches inf */
    return (uint16_t)(u >> 16);
}

TESS_HD float tess_bf16_to_f32_soft(uint16_t h) { return tess_f32_from_bits((uint32_t)h << 16); }

TESS_HD uint16_t tess_f32_to_f16_soft(float f) { return (uint16_t)tess_f32_to_small(f, tess_format_f16()); }
TESS_HD float tess_f16_to_f32_soft(uint16_t h) { return tess_small_to_f32(h, tess_format_f16()); }
TESS_HD uint8_t tess_f32_to_e4m3_soft(float f) { return (uint8_t)tess_f32_to_small(f, tess_format_e4m3()); }
TESS_HD float tess_e4m3_to_f32_soft(uint8_t c) { return tess_small_to_f32(c, tess_format_e4m3()); }
TESS_HD uint8_t tess_f32_to_e5m2_soft(float f) { return (uint8_t)tess_f32_to_small(f, tess_format_e5m2()); }
TESS_HD float tess_e5m2_to_f32_soft(uint8_t c) { return tess_small_to_f32(c, tess_format_e5m2()); }

/* The conversions kernels and host code use: the hardware's instructions on
 * the device (the same results, proven by tests/gpu/test_convert.cu), the
 * algorithms above on the host. */
#if defined(__CUDA_ARCH__)
TESS_HD uint16_t tess_f32_to_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
TESS_HD float tess_bf16_to_f32(uint16_t h) { return __bfloat162float(__ushort_as_bfloat16(h)); }
TESS_HD uint16_t tess_f32_to_f16(float f) { return __half_as_ushort(__float2half_rn(f)); }
TESS_HD float tess_f16_to_f32(uint16_t h) { return __half2float(__ushort_as_half(h)); }
TESS_HD uint8_t tess_f32_to_e4m3(float f) { return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3); }
TESS_HD float tess_e4m3_to_f32(uint8_t c) { return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, __NV_E4M3))); }
TESS_HD uint8_t tess_f32_to_e5m2(float f) { return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2); }
TESS_HD float tess_e5m2_to_f32(uint8_t c) { return __half2float(__half(__nv_cvt_fp8_to_halfraw(c, __NV_E5M2))); }
#else
TESS_HD uint16_t tess_f32_to_bf16(float f) { return tess_f32_to_bf16_soft(f); }
TESS_HD float tess_bf16_to_f32(uint16_t h) { return tess_bf16_to_f32_soft(h); }
TESS_HD uint16_t tess_f32_to_f16(float f) { return tess_f32_to_f16_soft(f); }
TESS_HD float tess_f16_to_f32(uint16_t h) { return tess_f16_to_f32_soft(h); }
TESS_HD uint8_t tess_f32_to_e4m3(float f) { return tess_f32_to_e4m3_soft(f); }
TESS_HD float tess_e4m3_to_f32(uint8_t c) { return tess_e4m3_to_f32_soft(c); }
TESS_HD uint8_t tess_f32_to_e5m2(float f) { return tess_f32_to_e5m2_soft(f); }
TESS_HD float tess_e5m2_to_f32(uint8_t c) { return tess_e5m2_to_f32_soft(c); }
#endif

/* v rounded to the nearest integer (ties to even) and saturated to
 * [-127, 127]: symmetric INT8 quantization (-128 unused, as SmoothQuant's);
 * NaN gives 0. */
TESS_HD int8_t tess_f32_to_s8(float v) {
    if (!(v == v))
        return 0;
    const float r = rintf(v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v);
    return (int8_t)r;
}

/* Element `idx` of an array of `dtype`, as float32. */
TESS_HD float tess_load_as_f32(tess_dtype dtype, const void *base, int64_t idx) {
    switch (dtype) {
    case TESS_DTYPE_F32: return ((const float *)base)[idx];
    case TESS_DTYPE_F16: return tess_f16_to_f32(((const uint16_t *)base)[idx]);
    case TESS_DTYPE_BF16: return tess_bf16_to_f32(((const uint16_t *)base)[idx]);
    case TESS_DTYPE_E4M3: return tess_e4m3_to_f32(((const uint8_t *)base)[idx]);
    case TESS_DTYPE_S8: return (float)((const int8_t *)base)[idx];
    case TESS_DTYPE_E5M2: break;
    }
    return tess_e5m2_to_f32(((const uint8_t *)base)[idx]);
}

/* Rounds `v` to `dtype` and stores it as element `idx`. */
TESS_HD void tess_store_from_f32(tess_dtype dtype, void *base, int64_t idx, float v) {
    switch (dtype) {
    case TESS_DTYPE_F32: ((float *)base)[idx] = v; return;
    case TESS_DTYPE_F16: ((uint16_t *)base)[idx] = tess_f32_to_f16(v); return;
    case TESS_DTYPE_BF16: ((uint16_t *)base)[idx] = tess_f32_to_bf16(v); return;
    case TESS_DTYPE_E4M3: ((uint8_t *)base)[idx] = tess_f32_to_e4m3(v); return;
    case TESS_DTYPE_S8: ((int8_t *)base)[idx] = tess_f32_to_s8(v); return;
    case TESS_DTYPE_E5M2: break;
    }
    ((uint8_t *)base)[idx] = tess_f32_to_e5m2(v);
}

#ifdef __cplusplus
}
#endif

#endif
