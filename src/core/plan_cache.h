/* Internal: a handle's memory of the heuristic's choices. Planning a problem
 * walks every kernel's cost model (about 15 us of host time); a model layer
 * calls the same few shapes again and again, so each handle keeps the plan
 * chosen for the last TESS_PLAN_CACHE_ENTRIES problems and reuses it for a
 * problem equal in every field the planners read. Like the rest of the
 * handle, it serves one call at a time (tess_create). */
#ifndef TESS_CORE_PLAN_CACHE_H
#define TESS_CORE_PLAN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Distinct problems remembered per handle (a transformer layer's GEMMs,
 * prefill and decode, with room to spare); the oldest goes first. */
#define TESS_PLAN_CACHE_ENTRIES 32
/* Words of a problem's key (a dense problem's take 64, a grouped one's 44, a weight gradient's 33). */
#define TESS_PLAN_KEY_WORDS 80

typedef struct tess_plan_key {
    int64_t word[TESS_PLAN_KEY_WORDS];
    int count;
} tess_plan_key;

typedef struct tess_plan_cache {
    tess_plan_key key[TESS_PLAN_CACHE_ENTRIES];
    tess_plan plan[TESS_PLAN_CACHE_ENTRIES];
    int used; /* entries filled */
    int next; /* the entry the next new problem replaces */
} tess_plan_cache;

struct tess_problem;

/* The key of a problem (every field of its descriptor, padding aside) and
 * the workspace its plans may use. */
void tess_plan_key_of(const struct tess_problem *problem, size_t workspace_limit, tess_plan_key *key);
/* The plan remembered for `key`, or NULL. */
const tess_plan *tess_plan_cache_find(const tess_plan_cache *cache, const tess_plan_key *key);
/* Remembers `plan` for `key`, replacing the oldest entry when full. */
void tess_plan_cache_put(tess_plan_cache *cache, const tess_plan_key *key, const tess_plan *plan);
/* Forgets every entry (the plans were made for a device view that changed). */
void tess_plan_cache_clear(tess_plan_cache *cache);

#ifdef __cplusplus
}
#endif

#endif
