/* The table of sm90 GEMM kernels: the per-configuration tables of
 * gemm_f16_*.cu, in the order the planner lists them when costs tie. */
#include "kernels/sm90/gemm_kernels.h"

extern const tess_gemm_kernel tess_gemm_sm90_128x256_c4[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x256_c2[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x256_c1[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x128_c2[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x128_c1[TESS_GEMM_KERNELS_PER_TILE];
extern const tess_gemm_kernel tess_gemm_sm90_128x64_c1[TESS_GEMM_KERNELS_PER_TILE];

static const tess_gemm_kernel *const tables[] = {
    tess_gemm_sm90_128x256_c2, tess_gemm_sm90_128x256_c4, tess_gemm_sm90_128x256_c1,
    tess_gemm_sm90_128x128_c2, tess_gemm_sm90_128x128_c1, tess_gemm_sm90_128x64_c1};

_Static_assert(sizeof tables / sizeof tables[0] * TESS_GEMM_KERNELS_PER_TILE <= TESS_GEMM_MAX_KERNELS,
               "raise TESS_GEMM_MAX_KERNELS");

int tess_gemm_sm90_kernel_count(void) { return (int)(sizeof tables / sizeof tables[0]) * TESS_GEMM_KERNELS_PER_TILE; }

const tess_gemm_kernel *tess_gemm_sm90_kernel(int i) {
    if (i < 0 || i >= tess_gemm_sm90_kernel_count())
        return 0;
    return &tables[i / TESS_GEMM_KERNELS_PER_TILE][i % TESS_GEMM_KERNELS_PER_TILE];
}
