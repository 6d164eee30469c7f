/* Looks for grouped kernels that hang now and then: gpu_grouped's random
 * cases (its make_case), every plan of each, launched REPS times in bursts
 * of BURST (back to back on one stream, so programmatic early launch
 * overlaps them), each burst watched for WATCH_S seconds. A burst that does
 * not finish names the case and plan and ends the process (which frees the
 * GPU of the hung kernel).
 *   CASES=40 REPS=20 BURST=4 TESS_SEED=... ./grouped_hang   (grouped_trial.sh builds it the same way)
 * BUDGET=n: under an SM budget of n; PLAN_MATCH=s: only plans named with s; SKIP_CASE=1:
 * gpu_grouped's test_skip_after_compute first. */
#define main gpu_grouped_main
#include "gpu/test_grouped.c"
#undef main

static int env_int(const char *name, int usual) {
    const char *v = getenv(name);
    return v ? atoi(v) : usual;
}

int main(void) {
    GPU_TEST_MAIN_START(h, workspace);
    const int cases = env_int("CASES", 40), reps = env_int("REPS", 20), burst = env_int("BURST", 4);
    const double watch = env_int("WATCH_S", 3);
    if (getenv("BUDGET")) /* an SM budget: plans launched without programmatic early launch */
        CHECK_STATUS(tess_set_sm_budget(h, env_int("BUDGET", 132)), TESS_STATUS_SUCCESS);
    const char *only = getenv("PLAN_MATCH"); /* only the plans whose names hold this */
    if (getenv("SKIP_CASE")) /* gpu_grouped's fixed case first: it fails and ends the run on a hang */
        test_skip_after_compute(h);
    long launches = 0;
    for (int trial = 0; trial < cases; trial++) {
        grouped_case c;
        int recipe, unused_plan;
        draw_random_case(&c, trial, &recipe, &unused_plan);
        char what[256];
        describe_case(&c, recipe, what, sizeof what);
        tess_grouped_gemm_desc *g = &c.g;
        case_device dev = case_upload(&c);
        tess_plan plans[MAX_PLANS];
        int count = 0;
        CHECK_STATUS(tess_grouped_gemm_plans(h, g, plans, MAX_PLANS, &count), TESS_STATUS_SUCCESS);
        for (int p = 0; p < count; p++) {
            if (only && !strstr(plans[p].name, only))
                continue;
            for (int r = 0; r < reps; r += burst) {
                for (int b = 0; b < burst; b++, launches++)
                    if (case_launch(h, &c, &plans[p], &dev) != TESS_STATUS_SUCCESS) {
                        printf("case %d, %s: %s\n", trial, plans[p].name, tess_last_error());
                        break;
                    }
                if (!gpu_finished_within(watch)) {
                    printf("HANG or error (%s) after %ld launches: case %d %s, plan %s, rep %d\n",
                           cudaGetErrorString(cudaStreamQuery(0)), launches, trial, what, plans[p].name, r);
                    fflush(stdout);
                    _Exit(3);
                }
            }
        }
        case_device_free(&dev);
        free_case(&c);
        printf("case %d: %d plans x %d, %ld launches so far\n", trial, count, reps, launches);
    }
    printf("no hang in %ld launches\n", launches);
    GPU_TEST_MAIN_END(h, workspace, "grouped_hang");
}
