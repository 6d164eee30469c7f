/* Internal: what a tess_handle holds, and the check every entry point makes on it. */
#ifndef TESS_CORE_HANDLE_H
#define TESS_CORE_HANDLE_H

#include "core/plan_cache.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arbitrary tag ("TESS") marking a live handle; cleared on destroy so that a
 * handle used after tess_destroy is likely to be caught rather than trusted. */
#define TESS_HANDLE_MAGIC 0x54455353u

/* Device memory each handle keeps for its plans' ready flags (stream-K
 * plans that share a tile's K between CTAs: one int per consumer
 * warpgroup of each CTA); zeroed at creation, and every launch leaves them
 * down. A family that uses them checks its need fits (sm90: gemm_params.h). */
#define TESS_HANDLE_FLAG_BYTES 8192

struct tess_handle_s {
    uint32_t magic;
    int device;
    void *stream;           /* cudaStream_t */
    void *workspace;
    size_t workspace_bytes;
    int *sk_flags;          /* ready flags (TESS_HANDLE_FLAG_BYTES of device memory): zeroed at
                               creation, and every launch leaves them down, so no launch needs a memset */
    tess_device_info info;  /* filled once at creation; sm_count is the SM budget's (tess_set_sm_budget),
                               so every planner sizes its grids and estimates by it */
    int device_sms;         /* the device's streaming multiprocessors */
    tess_plan_cache plans;  /* the heuristic's recent choices (empty at creation) */
};

/* SUCCESS for a live handle; NOT_INITIALIZED with a sentence naming `caller` otherwise. */
tess_status tess_handle_check(tess_handle h, const char *caller);

/* Makes the handle's device current for a run call's CUDA work, remembering
 * the caller's in *previous; tess_handle_leave gives it back. */
tess_status tess_handle_enter(tess_handle h, int *previous);
void tess_handle_leave(tess_handle h, int previous);

/* Whether the handle has an SM budget below the device's count (tess_set_sm_budget). */
static inline int tess_handle_budgeted(tess_handle h) { return h->info.sm_count < h->device_sms; }

/* Whether the handle's kernels may launch early (programmatic stream
 * serialization: a kernel's CTAs start while the previous kernel in the
 * stream finishes, and wait there). Not under an SM budget: the waiting
 * CTAs would take the SMs the budget leaves to kernels on other streams. */
static inline int tess_handle_early_launch(tess_handle h) { return !tess_handle_budgeted(h); }

/* Fills `info` (all fields, struct_size included) for `device`. */
tess_status tess_device_query(int device, tess_device_info *info);

#ifdef __cplusplus
}
#endif

#endif
