// Dequantization factors that are constant along K (per tensor, per row of
// A, per column of B), applied once to a warpgroup's finished accumulators
// before the epilogue. Block factors were applied during promotion.
#pragma once

#include "core/scale.h"
#include "kernels/common/epilogue.cuh"
#include "kernels/common/fragment.h"
#include "kernels/sm90/gemm_cfg.cuh"

// Multiplies a warpgroup's 64 x BN accumulators of tile `tile` (its rows
// from m0) by their row factor of A and column factor of B. Runs once per tile, so
// it stays cheap: one factor per row, and per-column factors (per-column B
// only) read by plain pointer steps; a per-tensor B is one factor.
template <class Cfg>
TESS_DEVICE void apply_outer_scales(const tess_gemm_params &p, float (&acc)[Cfg::BN / 2], int t,
                                    const tile_coord &tile, int m0) {
    if (Cfg::BLOCK_SCALED) // block factors pair only with block factors (tess_gemm_check_scales): all applied
        return;
    const int n0 = tile.n0, ba = a_factor_batch(p, tile), bb = b_factor_batch(p, tile);
    const bool rows = p.scale_a.data && !tess_scale_is_block(p.scale_a.layout.mode);
    const bool cols = p.scale_b.data && !tess_scale_is_block(p.scale_b.layout.mode);
    if (!rows && !cols)
        return;
    int row, col;
    tess_wgmma_acc_coord(t, 0, &row, &col);
    // Rows and columns past the matrix read the last factor (their results are never stored).
    float r0 = tess_outer_factor(p.scale_a, ba, min(m0 + row, p.m - 1)),
          r1 = tess_outer_factor(p.scale_a, ba, min(m0 + row + 8, p.m - 1));
    if (!cols || p.scale_b.layout.mode == TESS_SCALE_TENSOR) {
        const float c = tess_outer_factor(p.scale_b, bb, 0);
        r0 *= c, r1 *= c;
#pragma unroll
        for (int v = 0; v < Cfg::BN / 2; v++) // value v: row + 8 ((v / 2) % 2)
            acc[v] *= (v / 2) % 2 ? r1 : r0;
        return;
    }
    // Column 0's factor; column n is n * stride_mn further (per-column B).
    const float *factors =
        p.scale_b.data + tess_scale_offset(&p.scale_b.layout, bb, 0, 0);
    const int64_t stride = p.scale_b.layout.stride_mn;
#pragma unroll
    for (int j = 0; j < Cfg::BN / 8; j++) { // the thread's 2 columns in each 8-column group
        const int n = n0 + 8 * j + col; // columns past N read the last one (never stored)
        const float c0 = __ldg(factors + (n < p.n ? n : p.n - 1) * stride);
        const float c1 = __ldg(factors + (n + 1 < p.n ? n + 1 : p.n - 1) * stride);
        acc[4 * j + 0] *= r0 * c0, acc[4 * j + 1] *= r0 * c1;
        acc[4 * j + 2] *= r1 * c0, acc[4 * j + 3] *= r1 * c1;
    }
}
