/* Prints every plan the planners rank for a fixed set of random dense and
 * grouped problems (an H100 and an H200 described, no GPU needed), so that
 * a change that should not move the planner can be checked by diffing two
 * builds' output:
 *   cc -Iinclude -Isrc dev/plan_snapshot.c BUILD/lib/libtessera.a -lstdc++ ... > plans.txt
 * (dev/plan_snapshot.sh builds and runs it against a build directory). */
#include <stdio.h>
#include <string.h>

#include "core/gemm.h"
#include "core/matrix.h"

static unsigned long long state = 88172645463325252ull;

/* A uniform integer in [lo, hi] (xorshift64). */
static long long pick(long long lo, long long hi) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return lo + (long long)(state % (unsigned long long)(hi - lo + 1));
}

static tess_matrix_desc mat(tess_dtype t, tess_order o, int64_t rows, int64_t cols, int64_t align) {
    tess_matrix_desc d = {t, o, rows, cols, o == TESS_ORDER_ROW ? cols : rows, 0};
    d.ld = (d.ld + align - 1) / align * align;
    return d;
}

static void print_plans(const char *what, const tess_plan *p, int count, int cap) {
    printf("%s: %d plans\n", what, count);
    for (int i = 0; i < count && i < cap; i++)
        printf("  %s tile %dx%dx%d s%d c%d grid %d tiles %d sk %d ws %llu order %d tr %d large %d/%d/%d\n", p[i].name,
               p[i].tile_m, p[i].tile_n, p[i].tile_k, p[i].stages, p[i].cluster_m, p[i].grid, p[i].tiles,
               p[i].stream_k, (unsigned long long)p[i].workspace_bytes, p[i].group_order, p[i].transposed,
               p[i].large_min_rows, p[i].large_order, p[i].large_grid);
}

enum { CAP = 1024 };
static tess_plan plans[CAP];

static void dense(const tess_device_info *info, int trial) {
    int64_t m = pick(0, 3) == 0 ? pick(1, 64) : pick(0, 1) ? 128 * pick(1, 64) : pick(1, 9000);
    int64_t n = pick(0, 1) ? 128 * pick(1, 64) : pick(1, 9000), k = pick(0, 1) ? 128 * pick(1, 64) : pick(1, 9000);
    tess_gemm_desc g;
    tess_gemm_desc_init(&g);
    const int fp8 = pick(0, 1);
    k = (k + 15) / 16 * 16;
    g.m = m, g.n = n, g.k = k;
    if (fp8) {
        g.a = mat(pick(0, 1) ? TESS_DTYPE_E4M3 : TESS_DTYPE_E5M2, TESS_ORDER_ROW, m, k, 16);
        g.b = mat(pick(0, 1) ? TESS_DTYPE_E4M3 : TESS_DTYPE_E5M2, TESS_ORDER_COL, k, n, 16);
        static const tess_scale_mode pairs[][2] = {{TESS_SCALE_TENSOR, TESS_SCALE_TENSOR},
                                                   {TESS_SCALE_OUTER_VEC, TESS_SCALE_OUTER_VEC},
                                                   {TESS_SCALE_BLOCK_1x128, TESS_SCALE_BLOCK_128x128},
                                                   {TESS_SCALE_BLOCK_1x128, TESS_SCALE_BLOCK_1x128},
                                                   {TESS_SCALE_BLOCK_128x128, TESS_SCALE_BLOCK_1x128}};
        const int r = (int)pick(0, 4);
        tess_scale_layout_query(pairs[r][0], m, k, &g.a_scale, NULL, NULL, NULL);
        tess_scale_layout_query(pairs[r][1], n, k, &g.b_scale, NULL, NULL, NULL);
        g.fast_accum = (int32_t)pick(0, 1);
    } else {
        const tess_dtype t = pick(0, 1) ? TESS_DTYPE_BF16 : TESS_DTYPE_F16;
        g.a = mat(t, pick(0, 1) ? TESS_ORDER_ROW : TESS_ORDER_COL, m, k, pick(0, 1) ? 8 : 64);
        g.b = mat(t, pick(0, 1) ? TESS_ORDER_ROW : TESS_ORDER_COL, k, n, pick(0, 1) ? 8 : 64);
        g.batch = pick(0, 3) ? 1 : pick(2, 4);
    }
    g.d = mat(pick(0, 2) ? TESS_DTYPE_BF16 : TESS_DTYPE_F32, TESS_ORDER_ROW, m, n, 8);
    g.c = g.d;
    if (g.batch > 1) {
        g.a.batch_stride = tess_matrix_span(&g.a, 1) / 8 * 8 + 8;
        g.d.batch_stride = g.c.batch_stride = tess_matrix_span(&g.d, 1);
    }
    static const _Alignas(16) char stand_in[16];
    if (tess_gemm_validate(NULL, &g, stand_in, (const float *)stand_in, stand_in, (const float *)stand_in, stand_in,
                           stand_in) != TESS_STATUS_SUCCESS) {
        printf("dense %d invalid: %s\n", trial, tess_last_error());
        return;
    }
    const size_t limit = pick(0, 3) ? TESS_GEMM_WORKSPACE_BYTES : 0;
    char what[160];
    snprintf(what, sizeof what, "dense %d %lldx%lldx%lld b%lld %s%s %s%s ws%zu", trial, (long long)m, (long long)n,
             (long long)k, (long long)g.batch, tess_dtype_name(g.a.dtype), tess_dtype_name(g.b.dtype),
             g.a.order == TESS_ORDER_ROW ? "t" : "n", g.b.order == TESS_ORDER_COL ? "n" : "t", limit);
    print_plans(what, plans, tess_gemm_candidates(info, &g, limit, plans, CAP), CAP);
}

static void grouped(const tess_device_info *info, int trial) {
    tess_grouped_gemm_desc d;
    tess_grouped_gemm_desc_init(&d);
    const tess_dtype t = pick(0, 2) == 0 ? TESS_DTYPE_E4M3 : pick(0, 1) ? TESS_DTYPE_BF16 : TESS_DTYPE_F16;
    d.layout = pick(0, 1) ? TESS_GROUP_CONTIGUOUS : TESS_GROUP_MASKED;
    d.groups = pick(1, 300);
    const int64_t tokens = pick(0, 1) ? pick(1, 64) : pick(1, 6000);
    d.m = d.layout == TESS_GROUP_MASKED ? tokens : tokens * d.groups;
    d.n = 128 * pick(1, 60), d.k = 128 * pick(1, 60);
    if (pick(0, 1))
        d.expected_m = pick(1, 5000);
    d.x = mat(t, TESS_ORDER_ROW, d.m, d.k, 16);
    d.w = mat(t, TESS_ORDER_COL, d.k, d.n, 16), d.w.batch_stride = d.k * d.n;
    d.y = mat(TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, d.n, 8);
    if (d.layout == TESS_GROUP_MASKED)
        d.x.batch_stride = d.m * d.k, d.y.batch_stride = d.m * d.n;
    if (t == TESS_DTYPE_E4M3 && pick(0, 1)) {
        tess_scale_layout_query(TESS_SCALE_BLOCK_1x128, d.m, d.k, &d.x_scale, NULL, NULL, NULL);
        tess_scale_layout_query(TESS_SCALE_BLOCK_128x128, d.n, d.k, &d.w_scale, NULL, NULL, NULL);
    }
    char what[160];
    snprintf(what, sizeof what, "grouped %d %s G%lld m%lld %lldx%lld e%lld %s", trial,
             d.layout == TESS_GROUP_MASKED ? "masked" : "contig", (long long)d.groups, (long long)d.m,
             (long long)d.n, (long long)d.k, (long long)d.expected_m, tess_dtype_name(t));
    print_plans(what, plans, tess_grouped_candidates(info, &d, plans, CAP), CAP);
}

int main(void) {
    tess_device_info h200;
    memset(&h200, 0, sizeof h200);
    h200.struct_size = sizeof h200;
    h200.cc_major = 9, h200.sm_count = 132, h200.l2_bytes = (size_t)60 << 20, h200.has_native_code = 1;
    h200.sm_clock_khz = 1980000, h200.mem_clock_khz = 3201000, h200.mem_bus_width_bits = 6016;
    for (int trial = 0; trial < 1500; trial++)
        dense(trial % 2 ? &h200 : NULL, trial);
    for (int trial = 0; trial < 500; trial++)
        grouped(trial % 2 ? &h200 : NULL, trial);
    return 0;
}
