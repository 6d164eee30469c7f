/* A handle's memory of the heuristic's choices (plan_cache.h). */
#include "core/plan_cache.h"

#include <string.h>

#include "core/family.h"

/* Appends one word to a key (the key holds TESS_PLAN_KEY_WORDS; a problem
 * has fewer fields, so none is ever dropped). */
static void put(tess_plan_key *k, int64_t v) {
    if (k->count < TESS_PLAN_KEY_WORDS)
        k->word[k->count++] = v;
}

/* A float's bits, so that -0.0 and 0.0 (or two NaNs) are told apart. */
static int64_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (int64_t)u;
}

static void put_matrix(tess_plan_key *k, const tess_matrix_desc *m) {
    put(k, m->dtype), put(k, m->order), put(k, m->rows), put(k, m->cols), put(k, m->ld), put(k, m->batch_stride);
}

static void put_scale(tess_plan_key *k, const tess_scale_desc *s) {
    put(k, s->mode), put(k, s->stride_mn), put(k, s->stride_k), put(k, s->batch_stride);
}

static void put_epilogue(tess_plan_key *k, const tess_epilogue_desc *e) {
    put(k, e->bias), put(k, e->bias_type), put(k, e->bias_batch_stride), put(k, e->activation);
}

void tess_plan_key_of(const tess_problem *problem, size_t workspace_limit, tess_plan_key *key) {
    key->count = 0;
    put(key, (int64_t)workspace_limit);
    if (problem->gemm) {
        const tess_gemm_desc *d = problem->gemm;
        put(key, 1);
        put(key, d->m), put(key, d->n), put(key, d->k), put(key, d->batch);
        put(key, bits(d->alpha)), put(key, bits(d->beta)), put(key, d->fast_accum);
        put_matrix(key, &d->a), put_matrix(key, &d->b), put_matrix(key, &d->c), put_matrix(key, &d->d);
        put_scale(key, &d->a_scale), put_scale(key, &d->b_scale);
        put_epilogue(key, &d->epilogue), put(key, d->allow_tf32), put_matrix(key, &d->residual);
        put(key, d->gate), put(key, bits(d->gate_limit)), put_scale(key, &d->d_scale), put_matrix(key, &d->aux);
    } else if (problem->wgrad) {
        const tess_grouped_wgrad_desc *d = problem->wgrad;
        put(key, 3);
        put(key, d->groups), put(key, d->tokens), put(key, d->n), put(key, d->k), put(key, d->expected_tokens);
        put(key, bits(d->alpha)), put(key, bits(d->beta));
        put_matrix(key, &d->dy), put_matrix(key, &d->x), put_matrix(key, &d->c), put_matrix(key, &d->dw);
    } else {
        const tess_grouped_gemm_desc *d = problem->grouped;
        put(key, 2);
        put(key, d->layout), put(key, d->groups), put(key, d->m), put(key, d->n), put(key, d->k);
        put(key, d->expected_m);
        put_matrix(key, &d->x), put_matrix(key, &d->w), put_matrix(key, &d->y);
        put_scale(key, &d->x_scale), put_scale(key, &d->w_scale);
        put_epilogue(key, &d->epilogue), put(key, d->gate), put(key, bits(d->gate_limit));
        put_scale(key, &d->y_scale);
    }
}

static int same_key(const tess_plan_key *a, const tess_plan_key *b) {
    return a->count == b->count && memcmp(a->word, b->word, sizeof(int64_t) * (size_t)a->count) == 0;
}

const tess_plan *tess_plan_cache_find(const tess_plan_cache *cache, const tess_plan_key *key) {
    for (int i = 0; i < cache->used; i++)
        if (same_key(&cache->key[i], key))
            return &cache->plan[i];
    return NULL;
}

void tess_plan_cache_put(tess_plan_cache *cache, const tess_plan_key *key, const tess_plan *plan) {
    const int i = cache->next;
    cache->key[i] = *key;
    cache->plan[i] = *plan;
    cache->next = (i + 1) % TESS_PLAN_CACHE_ENTRIES;
    if (cache->used < TESS_PLAN_CACHE_ENTRIES)
        cache->used++;
}

void tess_plan_cache_clear(tess_plan_cache *cache) { cache->used = cache->next = 0; }
