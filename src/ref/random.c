/* xoshiro256** (Blackman and Vigna), seeded through splitmix64. */
#include <math.h>

#include "ref/convert.h"
#include "ref/random.h"

/* 2 pi, for the Box-Muller angle. */
#define TWO_PI 6.283185307179586476925286766559

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void tess_rng_seed(tess_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t tess_rng_next(tess_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double tess_rng_uniform(tess_rng *r) { return (double)(tess_rng_next(r) >> 11) * 0x1.0p-53; }

double tess_rng_normal(tess_rng *r) {
    double u1 = 1.0 - tess_rng_uniform(r); /* (0, 1]: log stays finite */
    double u2 = tess_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

int64_t tess_rng_range(tess_rng *r, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)(hi - lo) + 1u;
    return lo + (int64_t)(span ? tess_rng_next(r) % span : tess_rng_next(r));
}

void tess_fill_normal(void *dst, tess_dtype dtype, int64_t count, double stddev, tess_rng *r) {
    /* Marsaglia's polar method: two normals per accepted point of the unit disc, with one log, one
     * sqrt and no trigonometry (the GPU tests fill matrices of tens of millions of elements on the
     * host; this is several times faster than a Box-Muller value each). */
    int64_t i = 0;
    while (i < count) {
        const double u = 2.0 * tess_rng_uniform(r) - 1.0, v = 2.0 * tess_rng_uniform(r) - 1.0, s = u * u + v * v;
        if (s >= 1.0 || s == 0.0)
            continue;
        const double scale = stddev * sqrt(-2.0 * log(s) / s);
        tess_store_from_f32(dtype, dst, i++, (float)(u * scale));
        if (i < count)
            tess_store_from_f32(dtype, dst, i++, (float)(v * scale));
    }
}
