/* Prints the planner's ranking (best first, with each plan's estimated
 * time) of FP8 block-scaled problems (1x128 A factors, 128x128 B factors,
 * e4m3, bf16 D), or with ",bf16" after M,N,K of bf16 ones, on an H100 as
 * the planner describes it, no GPU needed: to see what a cost-model or
 * kernel-list change picks before timing it (dev/plan_eval.py compares the
 * picks with every plan's measured time).
 *   cc -std=c11 -Iinclude -Isrc -IBUILD/generated dev/plan_rank.c BUILD/lib/libtessera.a \
 *      -L/usr/local/cuda/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt -o /tmp/plan_rank
 *   /tmp/plan_rank TOP M,N,K[,bf16] [M,N,K[,bf16] ...]
 * Grouped FP8 problems (1x128 X, 128x128 W factors): masked:G,E,N,K[@M]
 * (G groups of at most M rows, by default align(1.3 E, 128), expected_m E, as
 * ../shared/peers fp8.py makes them) or contig:G,E,N,K (G x E rows);
 * ",bf16" after K for bf16 ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/family.h"
#include "core/gemm.h"
#include "core/matrix.h"

enum { CAP = 256 };
static tess_plan plans[CAP];
static double seconds[CAP];

/* Prints the ranking of one grouped problem, "masked:G,E,N,K" or "contig:G,E,N,K". */
static void rank_grouped(const char *arg, int top) {
    long long g, e, n, k;
    char kind[8] = "fp8";
    if (sscanf(arg + 7, "%lld,%lld,%lld,%lld,%7[a-z0-9]", &g, &e, &n, &k, kind) < 4) {
        fprintf(stderr, "plan_rank: '%s' is not masked:G,E,N,K or contig:G,E,N,K\n", arg);
        exit(2);
    }
    const int masked = !strncmp(arg, "masked:", 7);
    tess_grouped_gemm_desc d;
    tess_grouped_gemm_desc_init(&d);
    d.layout = masked ? TESS_GROUP_MASKED : TESS_GROUP_CONTIGUOUS;
    d.groups = g, d.n = n, d.k = k, d.expected_m = e;
    const char *at = strchr(arg, '@'); /* masked: "@M" gives the rows a group may hold */
    d.m = masked ? (at ? atoll(at + 1) : (e * 13 / 10 + 127) / 128 * 128) : g * e;
    d.x = (tess_matrix_desc){TESS_DTYPE_E4M3, TESS_ORDER_ROW, d.m, k, k, masked ? d.m * k : 0};
    d.w = (tess_matrix_desc){TESS_DTYPE_E4M3, TESS_ORDER_COL, k, n, k, n * k};
    d.y = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, n, n, masked ? d.m * n : 0};
    if (strcmp(kind, "bf16") == 0) {
        d.x.dtype = d.w.dtype = TESS_DTYPE_BF16;
    } else {
        tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, d.m, k, &d.x_scale, NULL, NULL, NULL);
        tess_scale_layout_query(TESS_SCALE_BLOCK_128x128, n, k, &d.w_scale, NULL, NULL, NULL);
    }
    tess_plan_list list = {plans, seconds, 0, CAP};
    const tess_problem problem = {NULL, &d, NULL};
    for (int f = 0; tess_family_at(f); f++)
        tess_family_at(f)->plans(NULL, &problem, TESS_GEMM_WORKSPACE_BYTES, &list);
    const int count = list.count < CAP ? list.count : CAP;
    printf("%s: %d plans\n", arg, list.count);
    for (int i = 0; i < count && i < top; i++)
        printf("  %2d %8.2f us  %s grid %d\n", i, seconds[i] * 1e6, plans[i].name, plans[i].grid);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: plan_rank TOP M,N,K[,bf16] [M,N,K[,bf16] ...]\n");
        return 2;
    }
    const int top = atoi(argv[1]);
    for (int a = 2; a < argc; a++) {
        long long m, n, k;
        if (!strncmp(argv[a], "masked:", 7) || !strncmp(argv[a], "contig:", 7)) {
            rank_grouped(argv[a], top);
            continue;
        }
        char kind[8] = "fp8";
        if (sscanf(argv[a], "%lld,%lld,%lld,%7s", &m, &n, &k, kind) < 3) {
            fprintf(stderr, "plan_rank: '%s' is not M,N,K\n", argv[a]);
            return 2;
        }
        tess_gemm_desc g;
        tess_gemm_desc_init(&g);
        g.m = m, g.n = n, g.k = k;
        g.a = (tess_matrix_desc){TESS_DTYPE_E4M3, TESS_ORDER_ROW, m, k, k, 0};
        g.b = (tess_matrix_desc){TESS_DTYPE_E4M3, TESS_ORDER_COL, k, n, k, 0};
        g.d = g.c = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, m, n, n, 0};
        if (strcmp(kind, "bf16") == 0) {
            g.a.dtype = g.b.dtype = TESS_DTYPE_BF16;
        } else {
            tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, m, k, &g.a_scale, NULL, NULL, NULL);
            tess_scale_layout_query(TESS_SCALE_BLOCK_128x128, n, k, &g.b_scale, NULL, NULL, NULL);
        }
        /* Every family's plans, ranked as the API ranks them (info NULL: a 132-SM H100). */
        tess_plan_list list = {plans, seconds, 0, CAP};
        const tess_problem problem = {&g, NULL, NULL};
        for (int f = 0; tess_family_at(f); f++)
            tess_family_at(f)->plans(NULL, &problem, TESS_GEMM_WORKSPACE_BYTES, &list);
        const int count = list.count < CAP ? list.count : CAP;
        printf("%lldx%lldx%lld: %d plans\n", m, n, k, list.count);
        for (int i = 0; i < count && i < top; i++)
            printf("  %2d %8.2f us  %s grid %d\n", i, seconds[i] * 1e6, plans[i].name, plans[i].grid);
    }
    return 0;
}
