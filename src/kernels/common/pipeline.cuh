// The shared-memory ring that feeds the tensor cores: STAGES slots, each with
// a "full" mbarrier (the producer's TMA bytes have landed) and an "empty" one
// (every consumer is done reading). Producer and consumers each walk the ring
// with a (stage, phase) cursor; the phase bit flips on every wrap.
#pragma once

#include "kernels/common/ptx.cuh"

typedef struct pipe_cursor {
    int stage;
    uint32_t phase;
} pipe_cursor;

TESS_DEVICE void pipe_advance(pipe_cursor &c, int stages) {
    if (++c.stage == stages) {
        c.stage = 0;
        c.phase ^= 1u;
    }
}

// Moves the cursor past `blocks` fills it does not read (a pingpong
// consumer passing the other consumer's tile).
TESS_DEVICE void pipe_skip(pipe_cursor &c, int blocks, int stages) {
    const int at = c.stage + blocks;
    c.stage = at % stages;
    c.phase ^= (uint32_t)(at / stages) & 1u;
}

// Producer: waits until the slot is free (its consumers released the previous fill).
TESS_DEVICE void pipe_producer_acquire(uint64_t *empty, const pipe_cursor &c) { mbar_wait(&empty[c.stage], c.phase ^ 1u); }

// Consumer: waits until the slot's bytes have arrived.
TESS_DEVICE void pipe_consumer_wait(uint64_t *full, const pipe_cursor &c) { mbar_wait(&full[c.stage], c.phase); }
