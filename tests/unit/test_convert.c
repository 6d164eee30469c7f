/* Conversions float32 <-> bf16, f16, e4m3, e5m2 against an independent oracle:
 * decoding every code of every format from its fields with ldexp, and
 * encoding by nearest-value search over the table of all codes (ties to the
 * even code). Inputs: every code's value, every midpoint between neighbouring
 * codes and the floats either side of it, the overflow and underflow edges,
 * specials, and a sweep over float32 bit patterns. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "ref/convert.h"

/* Marks "the oracle says NaN" (any NaN code is right). */
#define ANY_NAN 0xffffffffu

typedef struct format {
    const char *name;
    int exp_bits, man_bits, bias;
    int saturating;     /* overflow clamps to the largest finite value (fp8) */
    int ieee_specials;  /* top exponent is inf/NaN; otherwise all-ones is the only NaN */
    uint32_t (*encode)(float);
    float (*decode)(uint32_t);
    /* Filled by build_table: values of codes 0..max_code, all finite and non-negative. */
    uint32_t max_code;
    double *values;
} format;

static uint32_t enc_bf16(float f) { return tess_f32_to_bf16(f); }
static uint32_t enc_f16(float f) { return tess_f32_to_f16(f); }
static uint32_t enc_e4m3(float f) { return tess_f32_to_e4m3(f); }
static uint32_t enc_e5m2(float f) { return tess_f32_to_e5m2(f); }
static float dec_bf16(uint32_t c) { return tess_bf16_to_f32((uint16_t)c); }
static float dec_f16(uint32_t c) { return tess_f16_to_f32((uint16_t)c); }
static float dec_e4m3(uint32_t c) { return tess_e4m3_to_f32((uint8_t)c); }
static float dec_e5m2(uint32_t c) { return tess_e5m2_to_f32((uint8_t)c); }

static int width(const format *f) { return 1 + f->exp_bits + f->man_bits; }

static double oracle_decode(const format *f, uint32_t code) {
    int w = width(f);
    uint32_t sign = (code >> (w - 1)) & 1u, mag = code & ((1u << (w - 1)) - 1u);
    uint32_t e = mag >> f->man_bits, m = mag & ((1u << f->man_bits) - 1u);
    if (f->ieee_specials && e == (1u << f->exp_bits) - 1u)
        return m ? NAN : (sign ? -INFINITY : INFINITY);
    if (!f->ieee_specials && mag == (1u << (w - 1)) - 1u)
        return NAN;
    double v = e == 0 ? ldexp((double)m, 1 - f->bias - f->man_bits)
                      : ldexp((double)((1u << f->man_bits) + m), (int)e - f->bias - f->man_bits);
    return sign ? -v : v;
}

static void build_table(format *f) {
    uint32_t top = (1u << (width(f) - 1)) - 1u;
    f->max_code = 0;
    for (uint32_t c = 0; c <= top; c++)
        if (isfinite(oracle_decode(f, c)))
            f->max_code = c;
    f->values = malloc(sizeof(double) * (f->max_code + 1));
    for (uint32_t c = 0; c <= f->max_code; c++)
        f->values[c] = oracle_decode(f, c);
}

/* The code round-to-nearest-even gives for x, or ANY_NAN. */
static uint32_t oracle_encode(const format *f, double x) {
    if (isnan(x))
        return ANY_NAN;
    uint32_t sign = signbit(x) ? 1u << (width(f) - 1) : 0u;
    double a = fabs(x), maxval = f->values[f->max_code];
    if (a > maxval) {
        if (f->saturating)
            return sign | f->max_code;
        double half_ulp = (maxval - f->values[f->max_code - 1]) / 2;
        /* The max code is odd, infinity (max_code + 1) even: the tie goes to infinity. */
        return sign | (a >= maxval + half_ulp ? f->max_code + 1 : f->max_code);
    }
    uint32_t lo = 0, hi = f->max_code; /* largest code with value <= a */
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (f->values[mid] <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (f->values[lo] == a || lo == f->max_code)
        return sign | lo;
    double below = a - f->values[lo], above = f->values[lo + 1] - a;
    if (below < above)
        return sign | lo;
    if (above < below)
        return sign | (lo + 1);
    return sign | ((lo & 1u) ? lo + 1 : lo);
}

/* Checks encode(x) against the oracle. Returns 1 if they agree. */
static int check_encode(const format *f, float x) {
    uint32_t want = oracle_encode(f, x), got = f->encode(x);
    if (want == ANY_NAN) {
        int ok = isnan(oracle_decode(f, got));
        CHECKF(ok, "%s: encode(NaN) gave non-NaN code 0x%x", f->name, got);
        return ok;
    }
    int ok = got == want;
    CHECKF(ok, "%s: encode(%a) = 0x%x, oracle 0x%x", f->name, (double)x, got, want);
    return ok;
}

static void test_decode_all_codes(const format *f) {
    uint32_t codes = 1u << width(f);
    int bad = 0;
    for (uint32_t c = 0; c < codes && bad < 5; c++) {
        double want = oracle_decode(f, c), got = f->decode(c);
        int ok = isnan(want) ? isnan(got) : (got == want && signbit(got) == signbit(want));
        if (!ok)
            bad++;
        CHECKF(ok, "%s: decode(0x%x) = %a, oracle %a", f->name, c, got, want);
    }
}

static void test_round_trip_all_codes(const format *f) {
    uint32_t codes = 1u << width(f);
    for (uint32_t c = 0; c < codes; c++) {
        float v = f->decode(c);
        if (isnan(v))
            continue;
        if (isinf(v) && f->saturating)
            continue;
        CHECKF(f->encode(v) == c, "%s: encode(decode(0x%x)) = 0x%x", f->name, c, f->encode(v));
    }
}

/* Every midpoint between neighbouring codes, and the floats either side. */
static void test_midpoints(const format *f) {
    int bad = 0;
    for (uint32_t c = 0; c < f->max_code && bad < 5; c++) {
        double mid = (f->values[c] + f->values[c + 1]) / 2;
        float fm = (float)mid;
        CHECKF((double)fm == mid, "%s: midpoint %a not a float", f->name, mid);
        const float xs[] = {fm, nextafterf(fm, 0.0f), nextafterf(fm, INFINITY)};
        for (int i = 0; i < 3; i++) {
            bad += !check_encode(f, xs[i]);
            bad += !check_encode(f, -xs[i]);
        }
    }
}

static void test_edges(const format *f) {
    double maxval = f->values[f->max_code];
    double half_ulp = (maxval - f->values[f->max_code - 1]) / 2;
    const float xs[] = {0.0f, -0.0f, (float)maxval, (float)(maxval + half_ulp),
                        nextafterf((float)(maxval + half_ulp), 0.0f), nextafterf((float)(maxval + half_ulp), INFINITY),
                        (float)(2 * maxval), FLT_MAX, INFINITY, NAN, FLT_MIN, FLT_TRUE_MIN, 1e-30f,
                        (float)(f->values[1] / 2), nextafterf((float)(f->values[1] / 2), 1.0f)};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        check_encode(f, xs[i]);
        check_encode(f, -xs[i]);
    }
    if (f->saturating) {
        CHECK(f->encode(INFINITY) == f->max_code);
        CHECK(f->decode(f->encode(1e6f)) == (float)maxval);
    }
}

/* Every 509th float32 bit pattern (about 8.4 million), all signs and exponents. */
static void test_sweep(const format *f) {
    int bad = 0;
    for (uint64_t u = 0; u < (UINT64_C(1) << 32) && bad < 5; u += 509)
        bad += !check_encode(f, tess_f32_from_bits((uint32_t)u));
}

static void test_element_access(void) {
    const tess_dtype all[] = {TESS_DTYPE_F32, TESS_DTYPE_F16, TESS_DTYPE_BF16, TESS_DTYPE_E4M3, TESS_DTYPE_E5M2,
                              TESS_DTYPE_S8};
    const float values[] = {1.0f, -2.5f, 0.3f, 300.0f};
    for (int d = 0; d < 6; d++) {
        unsigned char buf[16];
        for (int i = 0; i < 4; i++)
            tess_store_from_f32(all[d], buf, i, values[i]);
        for (int i = 0; i < 4; i++) {
            float want = values[i];
            switch (all[d]) {
            case TESS_DTYPE_F16: want = tess_f16_to_f32(tess_f32_to_f16(want)); break;
            case TESS_DTYPE_BF16: want = tess_bf16_to_f32(tess_f32_to_bf16(want)); break;
            case TESS_DTYPE_E4M3: want = tess_e4m3_to_f32(tess_f32_to_e4m3(want)); break;
            case TESS_DTYPE_E5M2: want = tess_e5m2_to_f32(tess_f32_to_e5m2(want)); break;
            case TESS_DTYPE_S8: want = want > 127.0f ? 127.0f : rintf(want); break; /* -2.5 -> -2 (to even) */
            case TESS_DTYPE_F32: break;
            }
            CHECKF(tess_load_as_f32(all[d], buf, i) == want, "%s element %d", tess_dtype_name(all[d]), i);
        }
    }
}

int main(void) {
    format formats[] = {
        {"bf16", 8, 7, 127, 0, 1, enc_bf16, dec_bf16, 0, NULL},
        {"f16", 5, 10, 15, 0, 1, enc_f16, dec_f16, 0, NULL},
        {"e4m3", 4, 3, 7, 1, 0, enc_e4m3, dec_e4m3, 0, NULL},
        {"e5m2", 5, 2, 15, 1, 1, enc_e5m2, dec_e5m2, 0, NULL},
    };
    for (int i = 0; i < 4; i++) {
        format *f = &formats[i];
        build_table(f);
        test_decode_all_codes(f);
        test_round_trip_all_codes(f);
        test_midpoints(f);
        test_edges(f);
        test_sweep(f);
        free(f->values);
    }
    /* Known values, from the formats' definitions. */
    CHECK(formats[2].max_code == 0x7e && tess_e4m3_to_f32(0x7e) == 448.0f);
    CHECK(formats[3].max_code == 0x7b && tess_e5m2_to_f32(0x7b) == 57344.0f);
    CHECK(tess_f16_to_f32(0x7bff) == 65504.0f && tess_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    CHECK(tess_e4m3_to_f32(0x01) == ldexpf(1.0f, -9));
    CHECK(tess_f32_to_bf16(1.0f) == 0x3f80 && tess_f32_to_f16(1.0f) == 0x3c00);
    CHECK(tess_f32_to_e4m3(1.0f) == 0x38 && tess_f32_to_e5m2(1.0f) == 0x3c);
    test_element_access();
    return check_finish("unit_convert");
}
