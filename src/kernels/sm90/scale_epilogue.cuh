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
// only) read in a few batches of loads; a per-tensor B is one factor.
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
    // Per-column B: the thread's columns n0 + col + 8 j + {0, 1}, stride
    // apart; columns past N skip their load (results never stored).
    const int64_t stride = p.scale_b.layout.stride_mn;
    const float *factors = p.scale_b.data + tess_scale_offset(&p.scale_b.layout, bb, 0, 0) + (n0 + col) * stride;
    const int left = p.n - n0 - col; // the thread's columns 8 j + {0, 1} are inside N while below this
    const bool contiguous = stride == 1; // the layout tess_scale_layout_query gives
#pragma unroll
    for (int j = 0; j < Cfg::BN / 8; j++) { // the thread's 2 columns in each 8-column group
        // Contiguous factors are immediate offsets from one address. Strided
        // ones need an address each: ptxas would hoist all 64 loads with
        // their addresses beside the 128 accumulators and spill, so a warp
        // barrier every 8 groups keeps 16 loads in flight.
        if (!contiguous && j % 8 == 0 && j > 0)
            __syncwarp();
        const float *f = contiguous ? factors + 8 * j : factors + 8 * j * stride;
        const float c0 = 8 * j < left ? __ldg(f) : 1.0f;
        const float c1 = 8 * j + 1 < left ? __ldg(f + (contiguous ? 1 : stride)) : 1.0f;
        acc[4 * j + 0] *= r0 * c0, acc[4 * j + 1] *= r0 * c1;
        acc[4 * j + 2] *= r1 * c0, acc[4 * j + 3] *= r1 * c1;
    }
}
