/* The sm90 family's dense GEMM planner: every kernel that serves a problem
 * (and, for small M, its transpose), data-parallel and stream-K, ranked by
 * cost_dense.c's estimate; plan names; and the launch of a plan, found
 * again by its name. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "core/handle.h"
#include "kernels/sm90/sm90.h"

_Static_assert(TESS_SK_FLAG_BYTES <= TESS_HANDLE_FLAG_BYTES, "the handle's flags hold every stream-K CTA's");

/* A dense kernel that serves the problem d (as run: transposed or not;
 * cooperative 64-row tiles only problems of TESS_SM90_SHORT_TILE_MIN_M to
 * _MAX_M rows; pingpong ones where TESS_SM90_OFFERS_PINGPONG). A gate needs
 * a kernel with the gated epilogue, and run transposed (its pairs become
 * rows) one that stores from registers; an FP8 D's 1x128 factors are not
 * run transposed. */
static int kernel_fits(const tess_gemm_kernel *k, const tess_gemm_desc *d, int transposed) {
    if (k->grouped || !tess_sm90_kernel_serves(k, d) ||
        (d->gate != TESS_GATE_NONE && (!k->gates || (transposed && !k->registers))) ||
        (transposed && tess_epilogue_fp8_form(d) == TESS_EPI_FP8_BLOCK)) /* its rows would be D's columns */
        return 0;
    if (k->pingpong)
        return TESS_SM90_OFFERS_PINGPONG;
    return k->tile_m == 128 || (d->m >= TESS_SM90_SHORT_TILE_MIN_M && d->m <= TESS_SM90_SHORT_TILE_MAX_M);
}

/* Whether problem d has transposed plans: small M. */
static int transposes(const tess_gemm_desc *d) { return d->m <= TESS_SM90_TRANSPOSED_MAX_M; }

/* Fills plan p for kernel `index` running problem `run`: the user's
 * problem d, or for a transposed plan tess_sm90_transposed_problem(d). The
 * name speaks of d's types and layouts, and of the kernel's tile. */
static void describe(const tess_gemm_kernel *k, const tess_gemm_desc *d, const tess_gemm_desc *run,
                     const tess_sm90_launch *x, tess_plan *p) {
    const int transposed = run != d;
    tess_sm90_plan_begin(p, k, tess_sm90_work_tiles(k, run), x->grid);
    p->stream_k = x->split.sk_items > 0;
    p->workspace_bytes = x->workspace;
    p->transposed = transposed;
    /* FP8 names carry both types and the accumulation: _fa fast (tensor
     * cores only), _pr promoted, _blk block-scaled, _blkc with per-column B
     * factors; _pp marks the pingpong schedule. */
    const int fp8 = tess_mma_input_is_fp8(k->input);
    char types[16];
    if (fp8)
        snprintf(types, sizeof types, "%s%s", tess_dtype_name(d->a.dtype), tess_dtype_name(d->b.dtype));
    else
        snprintf(types, sizeof types, "%s", k->input == TESS_MMA_TF32 ? "tf32" : tess_dtype_name(d->a.dtype));
    snprintf(p->name, sizeof p->name, "sm90_%s_%c%c_%dx%dx%d_s%d_c%dx1%s%s%s%s%s", types,
             d->a.order == TESS_ORDER_ROW ? 't' : 'n', d->b.order == TESS_ORDER_COL ? 'n' : 't', k->tile_m,
             k->tile_n, k->tile_k, k->stages, k->cluster_m, k->pingpong ? "_pp" : "",
             fp8 && k->scaling == TESS_SCALING_PLAIN ? "_fa" : "", tess_sm90_scaling_suffix(k->scaling),
             p->stream_k ? "_sk" : "", transposed ? "_swap" : "");
}

void tess_sm90_dense_plans(const tess_device_info *info, const tess_gemm_desc *desc, size_t workspace_limit,
                           tess_plan_list *out) {
    const tess_gemm_desc swapped = tess_sm90_transposed_problem(desc);
    for (int transposed = 0; transposed <= transposes(desc); transposed++) {
        const tess_gemm_desc *run = transposed ? &swapped : desc;
        for (int i = 0; i < tess_sm90_kernel_count(); i++) {
            const tess_gemm_kernel *k = tess_sm90_kernel(i);
            if (!kernel_fits(k, run, transposed))
                continue;
            for (int stream_k = 0; stream_k <= 1; stream_k++) {
                tess_sm90_launch x;
                if (!tess_sm90_dense_launch(info, run, i, stream_k, &x) || x.workspace > workspace_limit)
                    continue;
                tess_plan *p = tess_plan_list_offer(out, tess_sm90_dense_estimate(info, k, run, &x, transposed));
                if (p)
                    describe(k, desc, run, &x, p);
            }
        }
    }
}

/* A dense plan found again: its kernel and how it runs the problem. */
typedef struct resolved {
    int kernel;
    tess_sm90_launch launch;
} resolved;

/* Finds the plan named plan->name among the dense plans of problem d: the
 * kernels whose tile, stages and cluster the plan describes first, then
 * every kernel. Returns 0 where none has the name. */
static int resolve(const tess_device_info *info, const tess_gemm_desc *d, const tess_plan *plan, resolved *r) {
    const tess_gemm_desc swapped = tess_sm90_transposed_problem(d);
    for (int pass = 0; pass < 2; pass++) {
        for (int transposed = 0; transposed <= transposes(d); transposed++) {
            const tess_gemm_desc *run = transposed ? &swapped : d;
            for (int i = 0; i < tess_sm90_kernel_count(); i++) {
                const tess_gemm_kernel *k = tess_sm90_kernel(i);
                const int described = k->tile_m == plan->tile_m && k->tile_n == plan->tile_n &&
                                      k->stages == plan->stages && k->cluster_m == plan->cluster_m &&
                                      transposed == (plan->transposed != 0);
                if ((pass == 0) != described || !kernel_fits(k, run, transposed))
                    continue;
                for (int stream_k = 0; stream_k <= 1; stream_k++) {
                    tess_plan made;
                    if (!tess_sm90_dense_launch(info, run, i, stream_k, &r->launch))
                        continue;
                    describe(k, d, run, &r->launch, &made);
                    if (strcmp(made.name, plan->name) == 0) {
                        r->kernel = i;
                        return 1;
                    }
                }
            }
        }
    }
    return 0;
}

int tess_sm90_dense_plan_kernel(const tess_device_info *info, const tess_gemm_desc *d, const tess_plan *plan) {
    resolved r;
    return resolve(info, d, plan, &r) ? r.kernel : -1;
}

tess_status tess_sm90_dense_run(tess_handle h, const tess_gemm_desc *desc, const tess_plan *plan,
                                const tess_operands *o) {
    resolved r;
    if (!resolve(&h->info, desc, plan, &r))
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: plan %s is none of the plans tess_gemm_plans makes for this problem (another "
                         "type, layout or shape)",
                         plan->name);
    /* (tess_family_run has checked plan->workspace_bytes against the call's workspace.) */
    if (r.launch.grid != plan->grid || r.launch.workspace != plan->workspace_bytes)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "tess_gemm: plan %s was made for another problem, device or SM budget", plan->name);
    const tess_gemm_kernel *k = tess_sm90_kernel(r.kernel);
    /* A transposed plan's kernel runs D^T = B^T A^T: B is its A, A its B. */
    const int transposed = plan->transposed != 0;
    const tess_gemm_desc swapped = tess_sm90_transposed_problem(desc);
    const tess_gemm_desc *run = transposed ? &swapped : desc;
    tess_gemm_params p;
    tess_status s = tess_sm90_params_init(&p, k, run, transposed ? o->b : o->a, transposed ? o->b_scale : o->a_scale,
                                          transposed ? o->a : o->b, transposed ? o->a_scale : o->b_scale, o->c, o->d,
                                          o->bias, o->residual);
    if (s != TESS_STATUS_SUCCESS)
        return s;
    p.epi.gate_rows = transposed && desc->gate != TESS_GATE_NONE; /* D^T's pairs are rows */
    tess_epilogue_set_fp8(&p.epi, run, o->d_scale, o->d_amax, o->d_scale_out);
    tess_epilogue_set_aux(&p.epi, run, o->aux);
    tess_sm90_params_set_aux(&p, run, p.epi.aux);
    /* The CTAs' amax maxima land by atomic max on the float's bits, over a zero. */
    if (p.epi.d_amax &&
        (s = tess_cuda_status(cudaMemsetAsync(p.epi.d_amax, 0, sizeof(float), h->stream), "tess_gemm: zeroing d_amax")))
        return s;
    p.split = r.launch.split;
    if (r.launch.workspace > 0) {
        p.partials = (float *)h->workspace;
        p.flags = h->sk_flags;
    }
    p.early_launch = tess_handle_early_launch(h);
    return k->launch(&p, r.launch.grid, h->stream);
}
