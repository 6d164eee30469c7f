/* Internal: the seam between the API and the kernel families. A family (a
 * folder of src/kernels: sm90, decode, ...) says which problems it serves by
 * offering plans for them, each with its estimated time; the API ranks every
 * family's plans together and hands the chosen one back to its family to run.
 * The API knows no family's internals, and a family none of the others'.
 * Families register at build time (CMakeLists.txt, TESS_FAMILIES); the
 * registry lists those built for an architecture of TESS_CUDA_ARCHS. */
#ifndef TESS_CORE_FAMILY_H
#define TESS_CORE_FAMILY_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A validated problem, as the families see it: a dense (batched) GEMM, a
 * grouped GEMM (Mixture-of-Experts), or a grouped weight gradient (its
 * k-grouped GEMM); exactly one is set. */
typedef struct tess_problem {
    const tess_gemm_desc *gemm;
    const tess_grouped_gemm_desc *grouped;
    const tess_grouped_wgrad_desc *wgrad;
} tess_problem;

/* The device pointers of one call. A grouped GEMM's X, W and Y are a, b and
 * d (its factors a_scale and b_scale); group_rows are its offs or masked_m.
 * A grouped weight gradient's dY, X, C and dW are a, b, c and d, its offs
 * group_rows. */
typedef struct tess_operands {
    const void *a;
    const float *a_scale;
    const void *b;
    const float *b_scale;
    const void *c;
    void *d;
    const int32_t *group_rows;
    const void *bias;     /* the fused epilogue's bias (tess_epilogue_desc), or NULL */
    const void *residual; /* a dense GEMM's residual (tess_gemm_desc.residual), or NULL */
    const float *d_scale; /* an FP8 D's pointers (tess_epilogue_ptrs), or NULL */
    float *d_amax, *d_scale_out;
    void *aux;            /* a dense GEMM's aux output (tess_gemm_desc.aux), or NULL */
} tess_operands;

/* The ranking of candidate plans across families: the cheapest `capacity`
 * of those offered so far, best first (ties in the order offered), and how
 * many were offered. */
typedef struct tess_plan_list {
    tess_plan *plans;
    double *seconds;
    int count, capacity;
} tess_plan_list;

/* Counts a plan whose estimated time is `seconds` and returns the slot to
 * describe it in (the plans ranked behind it moved down), or NULL when it
 * ranks past the list's capacity. */
tess_plan *tess_plan_list_offer(tess_plan_list *list, double seconds);

typedef struct tess_family {
    /* Its name, which also begins the name of each of its plans ("sm90_..."). */
    const char *name;
    /* The tess_kernel_family bits it provides (tess_device_info.kernel_families). */
    uint32_t kernel_families;
    /* The devices it runs on, for sentences ("compute capability 9.0 (sm_90a)"). */
    const char *devices;
    /* Whether its kernels run on the device (its compute capability, and a
     * kernel image of this build for it); info NULL: the planners' stand-in
     * device (a 132-SM H100), on which it runs. */
    int (*runs_on)(const tess_device_info *info);
    /* Offers each plan it has for the problem that needs at most
     * workspace_limit bytes of workspace (its tess_plan.workspace_bytes),
     * with the plan's estimated time, in seconds. info NULL: a 132-SM H100. */
    void (*plans)(const tess_device_info *info, const tess_problem *problem, size_t workspace_limit,
                  tess_plan_list *out);
    /* Queues `plan` (whose name begins with the family's) for the problem
     * on the handle's stream, its device current. The plan is found again by
     * its name among those plans() makes for this problem and device (a plan
     * saved by another build or for another problem is refused with a
     * sentence, never trusted). */
    tess_status (*run)(tess_handle handle, const tess_problem *problem, const tess_plan *plan,
                       const tess_operands *operands);
} tess_family;

/* Whether the device's compute capability (major * 10 + minor) is one of
 * the `n` in `ccs`, those a family's kernels were compiled for (CMake passes
 * them as TESS_FAMILY_CCS); info NULL (the planners' stand-in device): yes. */
static inline int tess_family_cc_built(const tess_device_info *info, const int *ccs, int n) {
    if (!info)
        return 1;
    for (int i = 0; i < n; i++)
        if (ccs[i] == info->cc_major * 10 + info->cc_minor)
            return 1;
    return 0;
}

/* The families of this build, in registration order (the order in which
 * their plans are offered, so ties between families go to the first). */
int tess_family_count(void);
const tess_family *tess_family_at(int i);

/* The family whose name begins the plan's name; NULL if none of this build. */
const tess_family *tess_family_of_plan(const tess_plan *plan);

/* Every plan of every family that runs on `info`'s device (NULL: a 132-SM
 * H100), best first: up to capacity are written; returns how many exist. */
int tess_family_plans(const tess_device_info *info, const tess_problem *problem, size_t workspace_limit,
                      tess_plan *plans, int capacity);

/* ARCH_MISMATCH with a sentence naming the families of this build and the
 * devices they run on, where none runs on `info`'s device; else SUCCESS.
 * `caller` starts the sentence. */
tess_status tess_family_check_device(const tess_device_info *info, const char *caller);

/* A plan query (tess_gemm_plans, tess_grouped_gemm_plans) for a validated
 * problem: up to `capacity` plans of every family within workspace_limit
 * bytes, best first, and in *count how many there are. Refuses a NULL count
 * (or plans where capacity > 0) and a problem no plan runs. `caller` starts
 * the sentences. */
tess_status tess_family_query(tess_handle handle, const tess_problem *problem, size_t workspace_limit,
                              tess_plan *plans, int capacity, int *count, const char *caller);

/* Work a run call queues before its kernel, once every check has passed
 * (the handle's device current), given the caller's `context`: e.g. the
 * K-major copies of FP8 operands. It may repoint `operands`. */
typedef struct tess_run_prelude {
    tess_status (*queue)(tess_handle handle, const void *context, tess_operands *operands);
    const void *context;
} tess_run_prelude;

/* Runs `plan` (the caller's, read with tess_plan_accept; or, plan NULL, the
 * best plan of every family within workspace_limit bytes) for a validated
 * problem: finds its family, checks the plan's workspace against
 * workspace_limit (at most the handle's), then queues `prelude` (NULL: none) and
 * the plan with the handle's device current. `caller` starts the sentences
 * of refusals. */
tess_status tess_family_run(tess_handle handle, const tess_problem *problem, const tess_plan *plan,
                            size_t workspace_limit, const tess_operands *operands, const tess_run_prelude *prelude,
                            const char *caller);

#ifdef __cplusplus
}
#endif

#endif
