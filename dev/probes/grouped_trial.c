/* Reruns one random case of gpu_grouped (tests/gpu/test_grouped.c) by
 * itself: the case TESS_SEED's trial TRIAL draws, with plan index PLAN (or,
 * without an argument, lists the case and its plans). For a case that hangs
 * or fails: run each plan under `timeout` to see which ones do.
 *   cc ... dev/probes/grouped_trial.c tests/problem.c (see grouped_trial.sh)
 *   TESS_SEED=... ./grouped_trial TRIAL [PLAN]
 * AFTER_EVERY_PLAN=1 runs the test's refusals and every-plan parts first. */
#define main gpu_grouped_main
#include "gpu/test_grouped.c"
#undef main

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: TESS_SEED=S %s TRIAL [PLAN]\n", argv[0]);
        return 2;
    }
    const int want = atoi(argv[1]);
    GPU_TEST_MAIN_START(h, workspace);
    if (getenv("AFTER_EVERY_PLAN")) { /* the test's parts that run before its random cases */
        test_refusals(h);
        test_every_plan(h);
    }
    static const tess_dtype ins[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_E4M3};
    static const tess_dtype outs[3] = {TESS_DTYPE_BF16, TESS_DTYPE_F16, TESS_DTYPE_F32};
    for (int trial = 0; trial <= want; trial++) { /* test_random's draws, in its order */
        grouped_case c;
        const tess_dtype in = ins[trial % 3];
        const int recipe = (int)tess_rng_range(&rng, 0, in == TESS_DTYPE_E4M3 ? 3 : 2);
        const int64_t groups = trial % 10 == 0 ? (trial % 20 ? 300 : 1024) : tess_rng_range(&rng, 1, 40);
        const int64_t n = tess_rng_range(&rng, 0, 2) ? tess_rng_range(&rng, 1, 700) : 128 * tess_rng_range(&rng, 1, 4);
        const int64_t k = tess_rng_range(&rng, 0, 2) ? tess_rng_range(&rng, 1, 900) : 128 * tess_rng_range(&rng, 1, 6);
        make_case(&c, (tess_group_layout)tess_rng_range(&rng, 0, 1), groups, n, k, in, recipe,
                  outs[tess_rng_range(&rng, 0, 4) < 3 ? 0 : tess_rng_range(&rng, 1, 2)], (int)tess_rng_range(&rng, 0, 1));
        if (n % 2 == 0 && tess_rng_range(&rng, 0, 3) == 0)
            make_gated(&c);
        const int drawn_plan = (int)tess_rng_range(&rng, -1, 8);
        if (trial < want) {
            free_case(&c);
            continue;
        }
        tess_plan plans[MAX_PLANS];
        int count = 0;
        CHECK_STATUS(tess_grouped_gemm_plans(h, &c.g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        printf("trial %d: %s G=%lld m=%lld n=%lld k=%lld %s, scales %d x %d, Y %s ld %lld, gate %d, act %d, "
               "expected_m %lld; the test's plan index %d\n",
               trial, c.g.layout == TESS_GROUP_MASKED ? "masked" : "contiguous", (long long)c.g.groups,
               (long long)c.g.m, (long long)n, (long long)k, tess_dtype_name(in), recipes[recipe][0],
               recipes[recipe][1], tess_dtype_name(c.g.y.dtype), (long long)c.g.y.ld, (int)c.g.gate,
               (int)c.g.epilogue.activation, (long long)c.g.expected_m, drawn_plan);
        if (argc < 3) {
            for (int p = 0; p < count; p++)
                printf("  %d %s\n", p, plans[p].name);
        } else {
            char name[64];
            const double t0 = gpu_wall_seconds();
            const double rel = run_case(h, &c, atoi(argv[2]), name);
            printf("  plan %s: rel error %.3g (bound %.3g), %.2f s\n", name, rel, allowance(&c), gpu_wall_seconds() - t0);
        }
        free_case(&c);
    }
    GPU_TEST_MAIN_END(h, workspace, "grouped_trial");
}
