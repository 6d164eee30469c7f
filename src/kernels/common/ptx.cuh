// Thin wrappers over the sm_90a PTX instructions tessera's kernels use: one
// function per instruction form, named after it. Section names are the PTX
// ISA's. Everything is `static __device__ __forceinline__` (C style).
#pragma once

#include <cuda.h>
#include <stdint.h>
#ifdef TESS_DEBUG_HANG
#include <cstdio>
#endif

#define TESS_DEVICE static __device__ __forceinline__

// ---- addresses and warpgroups ------------------------------------------------

// The shared-memory (state-space) address of a generic pointer into shared memory.
TESS_DEVICE uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// Index of the warpgroup (4 consecutive warps) the thread belongs to, uniform across it.
TESS_DEVICE int warpgroup_index() { return __shfl_sync(0xffffffff, (int)(threadIdx.x / 128), 0); }

// True in one lane of the (converged, whole) warp. Code under it is known to
// run in a single lane, so ptxas moves its operands to uniform registers
// directly; under `lane == 0` it cannot know that and wraps each TMA
// instruction in a loop over the lanes' distinct operands.
TESS_DEVICE bool elect_one_sync() {
    uint32_t elected;
    asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(elected));
    return elected != 0;
}

// ---- mbarrier ("Parallel Synchronization and Communication Instructions: mbarrier") ----

TESS_DEVICE void mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}

// Makes barrier initialisation visible to the async proxy and the cluster.
TESS_DEVICE void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// Arrives once and adds `bytes` to the transaction count the phase waits for.
TESS_DEVICE void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}

TESS_DEVICE void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// Arrives on the barrier at the same offset in cluster CTA `cta` (itself
// included), with the default (CTA-scope release) semantics: a cluster-scope
// release would wait for this thread's outstanding memory traffic first.
TESS_DEVICE void mbar_arrive_cluster(uint64_t *bar, uint32_t cta) {
    asm volatile(
        "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
        " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
        "r"(cta)
        : "memory");
}

// Waits until the phase of parity `parity` has completed. A fresh barrier is in
// phase 0, so waiting on parity 1 returns at once (the producer's first pass).
#ifdef TESS_DEBUG_HANG
// How long a debugging build's wait lasts before it reports a hang: 2 s of
// globaltimer (ns), a thousand times the longest wait a running kernel has.
#define TESS_DEBUG_HANG_NS 2000000000ull
// A debugging build's wait (-DTESS_DEBUG_HANG, dev/probes/grouped_hang_debug.sh):
// a thread waiting over 2 s names its barrier (shared-memory offset), the
// parity, its CTA and thread (lane 0 of each warp), then traps, ending the grid with an error.
TESS_DEVICE void mbar_wait(uint64_t *bar, uint32_t parity) {
    uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (;;) {
        uint32_t done;
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(smem_u32(bar)), "r"(parity)
                     : "memory");
        if (done)
            return;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > TESS_DEBUG_HANG_NS) {
            if (threadIdx.x % 32 == 0)
                printf("hang: block %d thread %d waits on barrier at smem %u parity %u\n", (int)blockIdx.x,
                       (int)threadIdx.x, smem_u32(bar), parity);
            __trap();
        }
    }
}
#else
TESS_DEVICE void mbar_wait(uint64_t *bar, uint32_t parity) {
    asm volatile(
        "{\n .reg .pred done;\n"
        "wait_%=:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        " @!done bra wait_%=;\n}\n" ::"r"(smem_u32(bar)),
        "r"(parity)
        : "memory");
}
#endif

// ---- cp.async ("Data Movement and Conversion Instructions: cp.async") ---------

// Copies 4 bytes from global to shared memory asynchronously; with valid
// false nothing is read and the 4 bytes are zero-filled (src-size 0).
TESS_DEVICE void cp_async_4(void *dst, const void *src, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_u32(dst)), "l"(src),
                 "r"(valid ? 4 : 0)
                 : "memory");
}

// Copies 16 bytes from global to shared memory asynchronously (both 16-byte
// aligned), reading only the first src_bytes (0 to 16) and zero-filling the
// rest; .cg: cached in L2 only (the data is read once).
TESS_DEVICE void cp_async_16(void *dst, const void *src, uint32_t src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes)
                 : "memory");
}

// Waits until every cp.async copy of this thread has landed.
TESS_DEVICE void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Arrives on `bar` once this thread's earlier cp.async copies have landed,
// counting against the barrier's expected arrivals (.noinc).
TESS_DEVICE void cp_async_mbar_arrive_noinc(uint64_t *bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// ---- loads and math ("Data Movement...: ld", "Floating-Point Instructions") ---

// The 32 bits at `at` (wide) or the 16 at `at` (else), zero-extended, through
// the read-only path; 0 unless `in`. Two predicated loads into one register,
// of which one is issued: no branch on the width.
TESS_DEVICE uint32_t ld_nc_b32_or_u16(const void *at, bool in, bool wide) {
    uint32_t bits;
    asm("{\n\t.reg .pred i, w, n;\n\t"
        "setp.ne.b32 i, %3, 0;\n\t"
        "setp.ne.and.b32 w, %2, 0, i;\n\t" // in and wide
        "setp.eq.and.b32 n, %2, 0, i;\n\t" // in and narrow
        "mov.b32 %0, 0;\n\t"
        "@w ld.global.nc.b32 %0, [%1];\n\t"
        "@n ld.global.nc.u16 %0, [%1];\n\t}"
        : "=r"(bits)
        : "l"(at), "r"((int)wide), "r"((int)in));
    return bits;
}

// 2^x and 1 / x by the hardware's approximations (MUFU.EX2, MUFU.RCP: a few
// ulp), without the range fix-ups of exp2f or division; subnormal results
// flush to 0 (ftz).
TESS_DEVICE float ex2_approx_ftz(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
TESS_DEVICE float rcp_approx_ftz(float x) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// ---- fences and barriers -----------------------------------------------------

// Orders this thread's ordinary shared-memory writes before later async-proxy
// reads (TMA stores, wgmma) of the same memory.
TESS_DEVICE void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads.
TESS_DEVICE void named_barrier_sync(uint32_t id, uint32_t threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Arrives on named barrier `id` without waiting (the waiting side calls
// named_barrier_sync with the same thread count).
TESS_DEVICE void named_barrier_arrive(uint32_t id, uint32_t threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

TESS_DEVICE uint32_t cluster_cta_rank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

TESS_DEVICE void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The float at shared address `addr` of this CTA's layout in cluster CTA
// `rank`'s shared memory (distributed shared memory: mapa, then
// ld.shared::cluster); ordered after that CTA's writes by a cluster_sync.
TESS_DEVICE float ld_shared_cluster_f32(uint32_t addr, uint32_t rank) {
    uint32_t remote;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
    return v;
}

// ---- read-only global loads ("Data Movement and Conversion Instructions: ld") ----

// 16 bytes of global memory, read-only for the kernel's life. STREAMED:
// data read once (weights): kept out of L1, which then holds what every
// warp of the SM reads (tokens), with L2 asked to fetch the next 256 bytes
// along with them. Else read through L1. Volatile with a memory clobber:
// never moved above griddepcontrol.wait, and kept in program order with
// the other loads (an __ldg may move across them, and then the next
// chunk's streamed loads sink below the arithmetic that waits for the
// others).
template <bool STREAMED>
TESS_DEVICE uint4 ld_global_nc_16(const void *p) {
    uint4 v;
    if constexpr (STREAMED)
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
    else
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
    return v;
}

// ---- flags between CTAs ("Memory Consistency Model": release and acquire) ----

// Reads a flag with GPU-scope acquire: writes released before the flag was
// set are visible to this thread afterwards.
TESS_DEVICE int ld_acquire_gpu(const int *flag) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    return v;
}

// Sets a flag with GPU-scope release: this thread's earlier writes (and those
// it has observed, e.g. through a barrier) are visible to whoever acquires it.
TESS_DEVICE void st_release_gpu(int *flag, int v) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(flag), "r"(v) : "memory");
}

// ---- programmatic dependent launch ("Parallel Synchronization and Communication Instructions: griddepcontrol") ----

// Waits until the grids this one depends on have completed and their memory
// operations are visible to it. A grid launched with programmatic stream
// serialization may start while its predecessor still runs: everything
// before this wait must not read what the predecessor writes. Without that
// launch attribute it returns at once.
TESS_DEVICE void grid_dependency_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Lets the next grid in the stream (if launched with programmatic stream
// serialization) be scheduled before this one ends; it still waits in
// grid_dependency_wait for this grid's completion before touching memory.
TESS_DEVICE void grid_dependents_launch() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// ---- register reallocation ("Miscellaneous Instructions: setmaxnreg") ----------

template <int N>
TESS_DEVICE void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

template <int N>
TESS_DEVICE void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// ---- TMA ("cp.async.bulk.tensor") ------------------------------------------

TESS_DEVICE void tma_prefetch_descriptor(const CUtensorMap *map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// Loads one 3-D box (coordinates innermost first) into shared memory; the
// barrier's transaction count receives the bytes.
TESS_DEVICE void tma_load_3d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem_u32(dst)),
        "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}

// The same box written into every cluster CTA in `cta_mask`, at the same offset,
// signalling each one's barrier at the same offset.
TESS_DEVICE void tma_load_3d_multicast(void *dst, const CUtensorMap *map, uint64_t *bar, uint16_t cta_mask, int c0,
                                       int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(smem_u32(dst)),
        "l"(map), "r"(smem_u32(bar)), "h"(cta_mask), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}

// Stores one 3-D box from shared memory; completion is tracked by bulk groups.
TESS_DEVICE void tma_store_3d(const CUtensorMap *map, const void *src, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
                 "r"(smem_u32(src)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

TESS_DEVICE void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most N committed store groups still read shared memory.
template <int N>
TESS_DEVICE void tma_store_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Waits until at most N committed store groups are incomplete (writes visible).
template <int N>
TESS_DEVICE void tma_store_wait() {
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// ---- wgmma ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate") --------

TESS_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
TESS_DEVICE void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

template <int N>
TESS_DEVICE void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Makes the accumulator registers' values visible to (and from) the async wgmma unit.
TESS_DEVICE void wgmma_fence_operand(float &r) { asm volatile("" : "+f"(r)::"memory"); }

// Stores the low 16 bits of v at a shared-memory address (an FP8 D's pair of codes).
TESS_DEVICE void st_shared_u16(uint32_t addr, uint32_t v) {
    asm volatile("st.shared.u16 [%0], %1;" ::"r"(addr), "h"((unsigned short)v) : "memory");
}

// ---- stmatrix ("Warp-level matrix store instruction: stmatrix") ----------------

// Four 8x8 b16 matrices: lanes 8i..8i+7 give the row addresses of matrix i;
// register ri holds this lane's two elements of matrix i.
TESS_DEVICE void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}

// The same, each matrix stored transposed (rows become columns).
TESS_DEVICE void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

// ---- mma ("Warp-level matrix multiply-accumulate instructions: mma") ----------

// D = A B + D for one warp, m16n8k16, 16-bit A (row) and B (col), float32
// accumulators: a holds this lane's 8 elements of A (rows lane/4 and
// lane/4 + 8), b its 4 of B (column lane/4), d its 4 of D (rows lane/4 and
// lane/4 + 8, columns 2 (lane % 4) and the next). F16 selects f16 inputs,
// else bf16.
template <bool F16>
TESS_DEVICE void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// D = A B + D for one warp, m16n8k32, e4m3 A (row) and B (col), float32
// accumulators: a holds this lane's 16 elements of A (rows lane/4 and
// lane/4 + 8, four to a register), b its 8 of B (column lane/4), d as in
// mma_m16n8k16.
TESS_DEVICE void mma_m16n8k32_e4m3(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
