// The k-grouped GEMM of an MoE layer's weight gradient (Cfg::K_GROUPED,
// tess_grouped_wgrad): dW[g] = dY_g^T X_g, each batch g of the dense
// batched view reducing over its own tokens, the K rows [k_offs[g - 1],
// k_offs[g]) of A (dY^T, M-major) and B (X, N-major). A tile's K blocks
// start at its group's first token, so that TMA reads only the group's
// tokens and those after it; the tokens of the last block past the group
// (the next group's, or zeros past the matrices) are zeroed in shared
// memory by the consumers before their wgmmas read the block.
#pragma once

#include "kernels/common/ptx.cuh"
#include "kernels/sm90/gemm_cfg.cuh"

// What a consumer warpgroup of a k-grouped kernel needs to zero its last
// K block's tokens past the group (k_group_zero_tail): the rings, its
// 64-row block, the group's tokens in that block (BK: none to zero), its
// thread index and barrier.
struct k_tail {
    char *smem_a, *smem_b;
    int row_block, tokens, t, barrier;
};

// A group's tokens: the first, and how many.
struct k_group_span {
    int first, tokens;
};

// Group g's tokens, clamped into [0, k_tokens] as the M-grouped kernels
// clamp their group sizes (grouped.cuh group_row_range), so that bad
// offsets on the device never move a load outside the matrices.
TESS_DEVICE k_group_span k_group_span_of(const tess_gemm_params &p, int g) {
    const int extent = p.k_tokens;
    const int start = g ? min(max(__ldg(p.k_offs + g - 1), 0), extent) : 0;
    return {start, min(max(__ldg(p.k_offs + g), start), extent) - start};
}

// The K blocks of a tile of group g: [0, *k_end) from token *k_origin on;
// returns the group's tokens in its last block (BK where that block is
// full). Other kernels keep the split's range and origin 0 (and return BK).
template <class Cfg>
TESS_DEVICE int k_group_blocks(const tess_gemm_params &p, int g, int *k_begin, int *k_end, int *k_origin) {
    if constexpr (Cfg::K_GROUPED) {
        const k_group_span s = k_group_span_of(p, g);
        *k_begin = 0, *k_end = (s.tokens + Cfg::BK - 1) / Cfg::BK, *k_origin = s.first;
        return s.tokens % Cfg::BK ? s.tokens % Cfg::BK : Cfg::BK;
    }
    return Cfg::BK;
}

// Zeroes K rows [tail, BK) of ring stage `stage` where consumer
// warpgroup row_block's wgmmas read them: its own 64-row chunk of A and
// every chunk of B (both MN-major: a K row is one 128-byte row of a
// 64-element chunk, so the swizzle, which permutes 16-byte pieces within a
// row, leaves the row whole). The other consumer warpgroup zeroes B's rows
// too, writing the zeros already there, so neither waits for the other.
// The async proxy's reads (the wgmmas) and the next fill by TMA come after
// the proxy fence; the warpgroup's barrier (128 threads, `barrier`) has
// every warp's zeros in place before any warp's wgmma.
template <class Cfg>
TESS_DEVICE void k_group_zero_tail(char *smem_a, char *smem_b, int stage, int row_block, int tail, int t,
                                   int barrier) {
    static_assert(Cfg::A_MN && Cfg::B_MN && Cfg::ELEM_BYTES == 2, "MN-major 16-bit operands: a K row is 128 bytes");
    constexpr int PIECES = TESS_SM90_BK_BYTES / 16; // 16-byte stores a K row takes
    constexpr int CHUNKS = 1 + Cfg::BN / 64;        // A's chunk and B's
    const int per_chunk = (Cfg::BK - tail) * PIECES;
    const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int c = 0; c < CHUNKS; c++) {
        char *chunk = c == 0 ? smem_a + stage * Cfg::A_STAGE_BYTES + row_block * Cfg::MN_CHUNK_BYTES
                             : smem_b + stage * Cfg::B_STAGE_BYTES + (c - 1) * Cfg::MN_CHUNK_BYTES;
        uint4 *rows = (uint4 *)(chunk + tail * TESS_SM90_BK_BYTES);
        for (int i = t; i < per_chunk; i += 128)
            rows[i] = zero;
    }
    fence_proxy_async_smem();
    named_barrier_sync(barrier, 128);
}
