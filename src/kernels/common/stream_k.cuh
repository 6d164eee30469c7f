// Stream-K fixup (kernels/common/sched.h): a unit that computed part of an
// item's K blocks hands its accumulators to the unit finishing the item
// through a workspace slot and a ready flag. Written for any warpgroup-wide
// accumulator fragment of N floats per thread.
//
// A slot holds a warpgroup's fragment in thread order (value v of thread t at
// v * 128 + t), so each of the N stores and loads is one coalesced 512-byte
// access. Both go through L2 only (.cg): the slot is written by one SM and
// read by another.
#pragma once

#include "kernels/common/ptx.cuh"

// Writes this warpgroup's partial sums into `slot` and raises `flag` once all
// 128 threads' writes are done (`barrier`: a named barrier of the warpgroup).
template <int N>
TESS_DEVICE void sk_store_partial(const float (&acc)[N], float *slot, int *flag, int t, int barrier) {
#pragma unroll
    for (int v = 0; v < N; v++)
        __stcg(slot + v * 128 + t, acc[v]);
    named_barrier_sync(barrier, 128);
    if (t == 0) {
        __threadfence();
        st_release_gpu(flag, 1);
    }
}

// Waits for `flag`, then adds the partial sums in `slot` to the accumulators.
// Each flag is raised once and read once per launch, so the reader lowers it
// again: a launch leaves every flag down for the next one, which then needs
// no memset of the flags before it (a second operation on the stream, ~2 us
// of a decode GEMM's ~25).
template <int N>
TESS_DEVICE void sk_add_partial(float (&acc)[N], const float *slot, int *flag, int t, int barrier) {
    if (t == 0) {
        while (ld_acquire_gpu(flag) == 0) {
        }
        *(volatile int *)flag = 0;
    }
    named_barrier_sync(barrier, 128);
#pragma unroll
    for (int v = 0; v < N; v++)
        acc[v] += __ldcg(slot + v * 128 + t);
}
