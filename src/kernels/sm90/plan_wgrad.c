/* The sm90 family's planner for the grouped weight gradient (an MoE
 * layer's dW[g] = dY_g^T X_g): the k-grouped kernels (TESS_GROUPED_K) of
 * the problem's types, each data-parallel over the dense batched view's
 * tiles (tess_grouped_wgrad_as_batch: groups x n tiles x k tiles), ranked by
 * the dense cost model with the expected tokens per group as K; and the
 * launch, the plan found again by its name. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/gemm.h"
#include "core/handle.h"
#include "kernels/sm90/sm90.h"

/* Tokens per group the planner assumes: the hint, else an even split; at
 * least 1 (a K the dense cost model can take). */
static int64_t expected_tokens(const tess_grouped_wgrad_desc *d) {
    const int64_t e = d->expected_tokens > 0 ? d->expected_tokens : (d->tokens + d->groups - 1) / d->groups;
    return e < 1 ? 1 : e;
}

/* Whether kernel k is a k-grouped kernel that runs the problem's view (its types; MN-major operands). */
static int wgrad_kernel_runs(const tess_gemm_kernel *k, const tess_gemm_desc *view) {
    return k->grouped == TESS_GROUPED_K && tess_sm90_kernel_serves(k, view);
}

/* The plan of kernel k for problem d launched as x says. */
static void wgrad_describe(const tess_gemm_kernel *k, const tess_grouped_wgrad_desc *d, const tess_gemm_desc *view,
                           const tess_sm90_launch *x, tess_plan *p) {
    tess_sm90_plan_begin(p, k, tess_sm90_work_tiles(k, view), x->grid);
    char cluster[16];
    snprintf(p->name, sizeof p->name, "sm90_%s_wgrad_%dx%dx%d_s%d%s", tess_dtype_name(d->dy.dtype), k->tile_m,
             k->tile_n, k->tile_k, k->stages, tess_sm90_cluster_suffix(k, cluster));
}

void tess_sm90_wgrad_plans(const tess_device_info *info, const tess_grouped_wgrad_desc *d, tess_plan_list *out) {
    const tess_gemm_desc view = tess_grouped_wgrad_as_batch(d);
    /* The cost model's problem: each group's expected tokens as its K. */
    tess_gemm_desc typical = view;
    typical.k = expected_tokens(d);
    typical.a.cols = typical.b.rows = typical.k;
    for (int i = 0; i < tess_sm90_kernel_count(); i++) {
        const tess_gemm_kernel *k = tess_sm90_kernel(i);
        tess_sm90_launch x, xt;
        if (!wgrad_kernel_runs(k, &view) || !tess_sm90_dense_launch(info, &view, i, 0, &x) ||
            !tess_sm90_dense_launch(info, &typical, i, 0, &xt))
            continue;
        tess_plan *p = tess_plan_list_offer(out, tess_sm90_dense_estimate(info, k, &typical, &xt, 0));
        if (p)
            wgrad_describe(k, d, &view, &x, p);
    }
}

/* The kernel of the plan named plan->name for problem d and its launch
 * (*x), or -1. */
static int resolve(const tess_device_info *info, const tess_grouped_wgrad_desc *d, const tess_plan *plan,
                   tess_sm90_launch *x) {
    const tess_gemm_desc view = tess_grouped_wgrad_as_batch(d);
    for (int i = 0; i < tess_sm90_kernel_count(); i++) {
        const tess_gemm_kernel *k = tess_sm90_kernel(i);
        if (!wgrad_kernel_runs(k, &view) || !tess_sm90_dense_launch(info, &view, i, 0, x))
            continue;
        tess_plan made;
        wgrad_describe(k, d, &view, x, &made);
        if (strcmp(made.name, plan->name) == 0)
            return i;
    }
    return -1;
}

int tess_sm90_wgrad_plan_kernel(const tess_device_info *info, const tess_grouped_wgrad_desc *d,
                                const tess_plan *plan) {
    tess_sm90_launch x;
    return resolve(info, d, plan, &x);
}

tess_status tess_sm90_wgrad_run(tess_handle h, const tess_grouped_wgrad_desc *d, const tess_plan *plan,
                                const tess_operands *o) {
    tess_sm90_launch x;
    const int index = resolve(&h->info, d, plan, &x);
    if (index < 0)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: plan %s is none of the plans tess_grouped_wgrad_plans makes for this "
                         "problem on this device",
                         plan->name);
    if (x.grid != plan->grid)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_grouped_wgrad: plan %s was made for another problem, device or SM budget (its grid "
                         "differs)",
                         plan->name);
    const tess_gemm_kernel *k = tess_sm90_kernel(index);
    const tess_gemm_desc view = tess_grouped_wgrad_as_batch(d);
    /* Without tokens dY and X are never read (k_tokens 0 empties every
     * group): their maps point at the handle's flags, device memory that
     * TMA's alignment rules accept. */
    const void *dy = d->tokens > 0 ? o->a : (const void *)h->sk_flags;
    const void *xs = d->tokens > 0 ? o->b : (const void *)h->sk_flags;
    tess_gemm_params p;
    tess_status s = tess_sm90_params_init(&p, k, &view, dy, NULL, xs, NULL, o->c, o->d, NULL, NULL);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    p.k_offs = o->group_rows;
    p.k_tokens = (int)d->tokens;
    p.split = x.split;
    p.early_launch = tess_handle_early_launch(h);
    return k->launch(&p, x.grid, h->stream);
}
