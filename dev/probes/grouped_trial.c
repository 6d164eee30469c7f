/* Reruns one random case of gpu_grouped (tests/gpu/test_grouped.c) by
 * itself: the case TESS_SEED's trial TRIAL draws, with plan index PLAN (or,
 * without an argument, lists the case and its plans). For a case that hangs
 * or fails: run each plan under `timeout` to see which ones do.
 *   cc ... dev/probes/grouped_trial.c tests/problem.c (see grouped_trial.sh)
 *   TESS_SEED=... ./grouped_trial TRIAL [PLAN]
 * AFTER_EVERY_PLAN=1 runs the test's parts before its random cases first (they draw from the seed too). */
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
        test_skip_after_compute(h);
    }
    for (int trial = 0; trial <= want; trial++) { /* test_random's draws, in its order */
        grouped_case c;
        int recipe, drawn_plan;
        draw_random_case(&c, trial, &recipe, &drawn_plan);
        if (trial < want) {
            free_case(&c);
            continue;
        }
        tess_plan plans[MAX_PLANS];
        int count = 0;
        char what[256];
        describe_case(&c, recipe, what, sizeof what);
        CHECK_STATUS(tess_grouped_gemm_plans(h, &c.g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        printf("trial %d: %s; the test's plan index %d\n", trial, what, drawn_plan);
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
