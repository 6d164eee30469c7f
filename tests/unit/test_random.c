/* The random source: reproducible, in range, and normal where it claims to be. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ref/convert.h"
#include "ref/random.h"

int main(void) {
    uint64_t seed = check_seed();
    tess_rng a, b;
    tess_rng_seed(&a, seed);
    tess_rng_seed(&b, seed);
    int same = 1;
    for (int i = 0; i < 1000; i++)
        same &= tess_rng_next(&a) == tess_rng_next(&b);
    CHECK(same);
    tess_rng_seed(&b, seed + 1);
    CHECK(tess_rng_next(&a) != tess_rng_next(&b));

    /* Moments of 10^6 normals: the standard errors are 0.001 (mean) and 0.0014
     * (variance); 6 of them leaves a false alarm at odds of about 10^-9. */
    const int n = 1000000;
    double sum = 0, sum2 = 0, sum4 = 0;
    for (int i = 0; i < n; i++) {
        double x = tess_rng_normal(&a);
        sum += x;
        sum2 += x * x;
        sum4 += x * x * x * x;
    }
    double mean = sum / n, var = sum2 / n - mean * mean, kurt = sum4 / n;
    CHECKF(fabs(mean) < 0.006, "mean %g", mean);
    CHECKF(fabs(var - 1.0) < 0.009, "variance %g", var);
    CHECKF(fabs(kurt - 3.0) < 0.06, "fourth moment %g (3 for a normal)", kurt);

    int in_range = 1, hit_lo = 0, hit_hi = 0;
    for (int i = 0; i < 10000; i++) {
        int64_t v = tess_rng_range(&a, -3, 4);
        in_range &= v >= -3 && v <= 4;
        hit_lo |= v == -3;
        hit_hi |= v == 4;
        double u = tess_rng_uniform(&a);
        in_range &= u >= 0.0 && u < 1.0;
    }
    CHECK(in_range && hit_lo && hit_hi);

    /* Filling rounds each value to the type and never produces zeros-only data. */
    uint16_t buf[4096];
    tess_fill_normal(buf, TESS_DTYPE_BF16, 4096, 1.0, &a);
    int nonzero = 0, rounded = 1;
    for (int i = 0; i < 4096; i++) {
        float v = tess_bf16_to_f32(buf[i]);
        nonzero += v != 0.0f;
        rounded &= isfinite(v) && fabsf(v) < 10.0f;
    }
    CHECK(nonzero > 4000 && rounded);

    /* The fill is a normal too (here of deviation 2): its mean, variance and the mass within one and
     * two deviations of 2^20 values, each within 6 standard errors (0.002, 0.0055, 0.00045, 0.0002). */
    enum { FILL = 1 << 20 };
    float *f = malloc(sizeof(float) * FILL);
    tess_fill_normal(f, TESS_DTYPE_F32, FILL, 2.0, &a);
    double fsum = 0, fsum2 = 0;
    int64_t within1 = 0, within2 = 0;
    for (int i = 0; i < FILL; i++) {
        fsum += f[i], fsum2 += (double)f[i] * f[i];
        within1 += fabsf(f[i]) < 2.0f, within2 += fabsf(f[i]) < 4.0f;
    }
    const double fmean = fsum / FILL, fvar = fsum2 / FILL - fmean * fmean;
    CHECKF(fabs(fmean) < 0.012 && fabs(fvar - 4.0) < 0.033, "fill: mean %.4f, variance %.4f (want 0, 4)", fmean,
           fvar);
    CHECKF(fabs((double)within1 / FILL - 0.682689) < 0.0027 && fabs((double)within2 / FILL - 0.954500) < 0.0012,
           "fill: %.4f within 1 sd, %.4f within 2 (want 0.6827, 0.9545)", (double)within1 / FILL,
           (double)within2 / FILL);
    free(f);
    return check_finish("unit_random");
}
