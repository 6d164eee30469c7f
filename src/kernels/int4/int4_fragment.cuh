// The 4-bit weight kernels' fragment arithmetic (w4a16_gemv.cu, pack.cu):
// two codes of a packed word as a 16-bit pair of X's type, biased so that
// the subtraction of the zero point is exact.
#ifndef TESS_KERNELS_INT4_INT4_FRAGMENT_CUH
#define TESS_KERNELS_INT4_INT4_FRAGMENT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels/common/ptx.cuh"
#include "kernels/int4/int4_kernels.h"

TESS_DEVICE uint32_t pair_bits(__nv_bfloat162 v) { return *reinterpret_cast<uint32_t *>(&v); }
TESS_DEVICE uint32_t pair_bits(__half2 v) { return *reinterpret_cast<uint32_t *>(&v); }

// The zero point of weight row `row` in group `group` (zeros: [k / group][n]
// uint8, ld apart), or TESS_INT4_DEFAULT_ZERO for a weight without zero
// points (zeros NULL), as a T (uint32_t bits or a float).
template <class T>
TESS_DEVICE T int4_zero_point(const uint8_t *zeros, int64_t ld, int64_t group, int64_t row) {
    return zeros ? (T)zeros[group * ld + row] : (T)TESS_INT4_DEFAULT_ZERO;
}

// The bias a code is read with (bias + q): the smallest power of two whose
// last place is 1 in X's type, bf16 128.0 (bits 0x4300), f16 1024.0 (0x6400).
template <bool F16>
struct int4_bias {
    static constexpr float VALUE = F16 ? 1024.0f : 128.0f;
    static constexpr uint32_t PAIR_BITS = F16 ? 0x64006400u : 0x43004300u; // VALUE in both halves
};

// Two codes of `word` (bits shift .. shift + 3 and 16 + shift ..) as a
// 16-bit pair of bias + q: the codes are or-ed into the bias's mantissa.
template <bool F16>
TESS_DEVICE uint32_t tess_int4_pair(uint32_t word, int shift) {
    uint32_t out;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" // 0xEA: (a & b) | c; b keeps one code in each half
        : "=r"(out)
        : "r"(word >> shift), "r"(0x000f000fu), "r"(int4_bias<F16>::PAIR_BITS));
    return out;
}

// A float as both halves of a 16-bit pair of X's type (F16: f16, else bf16).
template <bool F16>
TESS_DEVICE uint32_t pair_of(float v) {
    if constexpr (F16)
        return pair_bits(__float2half2_rn(v));
    else
        return pair_bits(__float2bfloat162_rn(v));
}

// The fragment register of two codes: (bias + q) - (bias + z), exact (both
// are integers below 2^8 in bf16's or 2^11 in f16's mantissa); zero_biased:
// pair_of's.
template <bool F16>
TESS_DEVICE uint32_t zero_shifted_pair(uint32_t biased, uint32_t zero_biased) {
    if constexpr (F16)
        return pair_bits(__hsub2(*reinterpret_cast<const __half2 *>(&biased),
                                 *reinterpret_cast<const __half2 *>(&zero_biased)));
    else
        return pair_bits(__hsub2(*reinterpret_cast<const __nv_bfloat162 *>(&biased),
                                 *reinterpret_cast<const __nv_bfloat162 *>(&zero_biased)));
}

// The pair rounded as 16-bit tensor cores would take the weights: (q - z)
// exactly, times the scale (scale: pair_of's, so rounded to X's type), one
// rounding.
template <bool F16>
TESS_DEVICE uint32_t dequantized_pair(uint32_t biased, uint32_t zero_biased, uint32_t scale) {
    const uint32_t d = zero_shifted_pair<F16>(biased, zero_biased);
    if constexpr (F16)
        return pair_bits(__hmul2(*reinterpret_cast<const __half2 *>(&d), *reinterpret_cast<const __half2 *>(&scale)));
    else
        return pair_bits(__hmul2(*reinterpret_cast<const __nv_bfloat162 *>(&d),
                                 *reinterpret_cast<const __nv_bfloat162 *>(&scale)));
}

#endif
