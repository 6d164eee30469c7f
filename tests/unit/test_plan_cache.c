/* The handle's plan cache (core/plan_cache.c), without a GPU:
 *  - a problem's key is equal for equal problems, whatever padding bytes
 *    their descriptors hold, and differs when any field the planners read
 *    differs (each field of dense and grouped problems, the workspace);
 *  - the cache finds what it was given, keeps the last
 *    TESS_PLAN_CACHE_ENTRIES problems and forgets the oldest first. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/family.h"
#include "core/plan_cache.h"
#include "ref/random.h"

static tess_rng rng;

static tess_gemm_desc dense_problem(void) {
    tess_gemm_desc d;
    tess_gemm_desc_init(&d);
    d.m = 300, d.n = 4096, d.k = 7168, d.batch = 1;
    d.a = (tess_matrix_desc){TESS_DTYPE_E4M3, TESS_ORDER_ROW, d.m, d.k, d.k, 0};
    d.b = (tess_matrix_desc){TESS_DTYPE_E4M3, TESS_ORDER_COL, d.k, d.n, d.k, 0};
    d.c = d.d = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, d.n, d.n, 0};
    d.a_scale = (tess_scale_desc){TESS_SCALE_BLOCK_1x128, 1, 300, 0};
    d.b_scale = (tess_scale_desc){TESS_SCALE_BLOCK_128x128, 56, 1, 0};
    return d;
}

static tess_grouped_gemm_desc grouped_problem(void) {
    tess_grouped_gemm_desc d;
    tess_grouped_gemm_desc_init(&d);
    d.layout = TESS_GROUP_MASKED, d.groups = 8, d.m = 256, d.n = 4096, d.k = 7168, d.expected_m = 200;
    d.x = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, d.k, d.k, d.m * d.k};
    d.w = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_COL, d.k, d.n, d.k, d.n * d.k};
    d.y = (tess_matrix_desc){TESS_DTYPE_BF16, TESS_ORDER_ROW, d.m, d.n, d.n, d.m * d.n};
    return d;
}

static tess_plan_key key_of_dense(const tess_gemm_desc *d, size_t workspace) {
    const tess_problem p = {d, NULL, NULL};
    tess_plan_key k;
    tess_plan_key_of(&p, workspace, &k);
    return k;
}

static tess_plan_key key_of_grouped(const tess_grouped_gemm_desc *d, size_t workspace) {
    const tess_problem p = {NULL, d, NULL};
    tess_plan_key k;
    tess_plan_key_of(&p, workspace, &k);
    return k;
}

static int same(const tess_plan_key *a, const tess_plan_key *b) {
    return a->count == b->count && memcmp(a->word, b->word, sizeof(int64_t) * (size_t)a->count) == 0;
}

/* The int64 fields of a matrix descriptor, as pointers into it. */
static int matrix_fields(tess_matrix_desc *m, int64_t **f) {
    f[0] = &m->rows, f[1] = &m->cols, f[2] = &m->ld, f[3] = &m->batch_stride;
    return 4;
}

static void test_dense_keys(void) {
    tess_gemm_desc base = dense_problem();
    tess_plan_key k0 = key_of_dense(&base, 1 << 20);
    CHECKF(k0.count < TESS_PLAN_KEY_WORDS, "a dense key of %d words fills the key's %d: one may be dropped", k0.count,
           TESS_PLAN_KEY_WORDS);
    /* the same fields in a descriptor whose padding holds other bytes */
    tess_gemm_desc noisy;
    memset(&noisy, 0xa5, sizeof noisy);
    noisy.struct_size = base.struct_size, noisy.m = base.m, noisy.n = base.n, noisy.k = base.k;
    noisy.batch = base.batch, noisy.alpha = base.alpha, noisy.beta = base.beta, noisy.fast_accum = base.fast_accum;
    noisy.a = base.a, noisy.b = base.b, noisy.c = base.c, noisy.d = base.d;
    noisy.a_scale = base.a_scale, noisy.b_scale = base.b_scale;
    noisy.epilogue = base.epilogue, noisy.allow_tf32 = base.allow_tf32, noisy.residual = base.residual;
    noisy.gate = base.gate, noisy.gate_limit = base.gate_limit, noisy.d_scale = base.d_scale, noisy.aux = base.aux;
    tess_plan_key k1 = key_of_dense(&noisy, 1 << 20);
    CHECKF(same(&k0, &k1), "equal problems, other padding: keys differ");
    k1 = key_of_dense(&base, 2 << 20);
    CHECKF(!same(&k0, &k1), "another workspace limit: same key");
    /* every field the planners read, changed alone */
    int changed = 0;
    for (int field = 0;; field++) {
        tess_gemm_desc d = base;
        int64_t *f[48];
        int n = 0;
        f[n++] = &d.m, f[n++] = &d.n, f[n++] = &d.k, f[n++] = &d.batch;
        n += matrix_fields(&d.a, f + n), n += matrix_fields(&d.b, f + n);
        n += matrix_fields(&d.c, f + n), n += matrix_fields(&d.d, f + n), n += matrix_fields(&d.residual, f + n);
        n += matrix_fields(&d.aux, f + n);
        f[n++] = &d.a_scale.stride_mn, f[n++] = &d.a_scale.stride_k, f[n++] = &d.a_scale.batch_stride;
        f[n++] = &d.b_scale.stride_mn, f[n++] = &d.b_scale.stride_k, f[n++] = &d.b_scale.batch_stride;
        f[n++] = &d.epilogue.bias_batch_stride;
        f[n++] = &d.d_scale.stride_mn, f[n++] = &d.d_scale.stride_k, f[n++] = &d.d_scale.batch_stride;
        /* alpha, beta, fast_accum, 8 dtypes and orders, a scale mode, the epilogue's bias, bias type and
         * activation, allow_tf32, the residual's dtype, the gate and its limit, an FP8 D's form, aux's dtype
         * and order */
        const int others = 22;
        if (field >= n + others)
            break;
        if (field < n) {
            *f[field] += 1 + tess_rng_range(&rng, 0, 5);
        } else {
            switch (field - n) {
            case 0: d.alpha = 0.5f; break;
            case 1: d.beta = -0.0f; break; /* beta 0 and -0 are told apart */
            case 2: d.fast_accum = 1; break;
            case 3: d.a.dtype = TESS_DTYPE_E5M2; break;
            case 4: d.b.dtype = TESS_DTYPE_E5M2; break;
            case 5: d.c.dtype = TESS_DTYPE_F32; break;
            case 6: d.d.dtype = TESS_DTYPE_F16; break;
            case 7: d.a.order = TESS_ORDER_COL; break;
            case 8: d.b.order = TESS_ORDER_ROW; break;
            case 9: d.c.order = TESS_ORDER_COL; break;
            case 10: d.d.order = TESS_ORDER_COL; break;
            case 11: d.b_scale.mode = TESS_SCALE_BLOCK_1x128; break;
            case 12: d.epilogue.bias = TESS_BIAS_COLUMNS; break;
            case 13: d.epilogue.bias_type = TESS_DTYPE_BF16; break;
            case 14: d.epilogue.activation = TESS_ACT_SILU; break;
            case 15: d.allow_tf32 = 1; break;
            case 16: d.residual.dtype = TESS_DTYPE_BF16; break;
            case 17: d.gate = TESS_GATE_INTERLEAVED; break;
            case 18: d.gate_limit = 7.0f; break;
            case 19: d.d_scale.mode = TESS_SCALE_BLOCK_1x128; break;
            case 20: d.aux.dtype = TESS_DTYPE_BF16; break;
            default: d.aux.order = TESS_ORDER_ROW; break;
            }
        }
        tess_plan_key k = key_of_dense(&d, 1 << 20);
        CHECKF(!same(&k0, &k), "dense field %d changed: same key", field);
        changed++;
    }
    printf("dense keys: %d fields each change the key\n", changed);
}

static void test_grouped_keys(void) {
    tess_grouped_gemm_desc base = grouped_problem();
    const tess_plan_key k0 = key_of_grouped(&base, 1 << 20);
    tess_gemm_desc dense = dense_problem();
    const tess_plan_key kd = key_of_dense(&dense, 1 << 20);
    CHECKF(!same(&k0, &kd), "a grouped and a dense problem: same key");
    int changed = 0;
    for (int field = 0;; field++) {
        tess_grouped_gemm_desc d = base;
        int64_t *f[32];
        int n = 0;
        f[n++] = &d.groups, f[n++] = &d.m, f[n++] = &d.n, f[n++] = &d.k, f[n++] = &d.expected_m;
        n += matrix_fields(&d.x, f + n), n += matrix_fields(&d.w, f + n), n += matrix_fields(&d.y, f + n);
        f[n++] = &d.x_scale.stride_mn, f[n++] = &d.w_scale.stride_k, f[n++] = &d.y_scale.stride_mn;
        if (field >= n + 6)
            break;
        if (field < n)
            *f[field] += 1;
        else if (field == n)
            d.layout = TESS_GROUP_CONTIGUOUS;
        else if (field == n + 1)
            d.x.dtype = TESS_DTYPE_F16;
        else if (field == n + 2)
            d.w_scale.mode = TESS_SCALE_BLOCK_128x128;
        else if (field == n + 3)
            d.gate = TESS_GATE_INTERLEAVED;
        else if (field == n + 4)
            d.gate_limit = 7.0f;
        else
            d.y_scale.mode = TESS_SCALE_BLOCK_1x128;
        const tess_plan_key k = key_of_grouped(&d, 1 << 20);
        CHECKF(!same(&k0, &k), "grouped field %d changed: same key", field);
        changed++;
    }
    printf("grouped keys: %d fields each change the key\n", changed);
}

static void test_replacement(void) {
    tess_plan_cache cache;
    memset(&cache, 0, sizeof cache);
    tess_gemm_desc d = dense_problem();
    const int extra = 5, total = TESS_PLAN_CACHE_ENTRIES + extra;
    for (int i = 0; i < total; i++) {
        d.m = 100 + i;
        const tess_plan_key k = key_of_dense(&d, 0);
        CHECKF(tess_plan_cache_find(&cache, &k) == NULL, "problem %d found before it was put", i);
        tess_plan p;
        memset(&p, 0, sizeof p);
        snprintf(p.name, sizeof p.name, "plan_%d", i);
        p.tile_m = i;
        tess_plan_cache_put(&cache, &k, &p);
    }
    for (int i = 0; i < total; i++) {
        d.m = 100 + i;
        const tess_plan_key k = key_of_dense(&d, 0);
        const tess_plan *p = tess_plan_cache_find(&cache, &k);
        if (i < extra) {
            CHECKF(p == NULL, "problem %d, among the %d oldest, still remembered", i, extra);
        } else {
            char want[64];
            snprintf(want, sizeof want, "plan_%d", i);
            CHECKF(p && p->tile_m == i && strcmp(p->name, want) == 0, "problem %d: remembered %s", i,
                   p ? p->name : "nothing");
        }
    }
}

int main(void) {
    tess_rng_seed(&rng, check_seed());
    test_dense_keys();
    test_grouped_keys();
    test_replacement();
    return check_finish("unit_plan_cache");
}
