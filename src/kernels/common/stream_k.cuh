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

// The partial sums a unit finishing an item adds, in this order: those of
// `count` contributors, the i-th with its slot at slot + i * slot_step floats
// and its ready flag at flag + i * flag_step ints.
struct sk_contributors {
    const float *slot;
    int *flag;
    int64_t slot_step;
    int flag_step, count;
};

// Waits for every contributor's flag, then adds their partial sums to the
// accumulators, contributor 0 first: the same additions in the same order
// every run. Written for latency, which is what a decode GEMM's fixup costs
// (a 20-us kernel whose tiles have up to 7 contributors each): the flags are
// polled by as many threads at once, and the slots are read BATCH at a time,
// their loads in flight together; one by one, each contributor cost two
// round trips to L2 in turn.
// Each flag is raised once and read once per launch, so the reader lowers it
// again: a launch leaves every flag down for the next one, which then needs
// no memset of the flags before it (a second operation on the stream, ~2 us
// of a decode GEMM's ~25).
template <int N>
TESS_DEVICE void sk_add_partials(float (&acc)[N], const sk_contributors &c, int t, int barrier) {
    for (int i = t; i < c.count; i += 128) {
        int *flag = c.flag + i * c.flag_step;
        while (ld_acquire_gpu(flag) == 0) {
        }
        *(volatile int *)flag = 0;
    }
    named_barrier_sync(barrier, 128);
    // Slots read at once: 64 / N of them (64 loaded values) for narrow
    // tiles, one (N values) from N = 64 on. A last, partial batch reads
    // only the contributors left (no padding with zeros: -0 + 0 is +0, which
    // would change the sum's bits).
    constexpr int BATCH = N >= 64 ? 1 : 64 / N;
    for (int i = 0; i < c.count; i += BATCH) {
        float part[BATCH][N];
#pragma unroll
        for (int b = 0; b < BATCH; b++)
            if (i + b < c.count)
#pragma unroll
                for (int v = 0; v < N; v++)
                    part[b][v] = __ldcg(c.slot + (i + b) * c.slot_step + v * 128 + t);
#pragma unroll
        for (int b = 0; b < BATCH; b++)
            if (i + b < c.count)
#pragma unroll
                for (int v = 0; v < N; v++)
                    acc[v] += part[b][v];
    }
}
