/* The table of sm90 GEMM kernels: the parts instances.list generates (one
 * per generated .cu file), in the list's order, which is the order in which
 * the planner offers kernels when their estimates tie. */
#include "kernels/sm90/sm90.h"

#include "sm90/kernel_parts.inc" /* generated: TESS_SM90_KERNEL_PARTS, TESS_SM90_KERNEL_COUNT */

typedef struct table_part {
    const tess_gemm_kernel *kernels;
    int count;
} table_part;

static const table_part parts[] = {TESS_SM90_KERNEL_PARTS};

_Static_assert(TESS_SM90_KERNEL_COUNT <= TESS_SM90_KERNEL_SLOTS, "raise TESS_SM90_KERNEL_SLOTS (sm90.h)");

#define PART_COUNT ((int)(sizeof parts / sizeof parts[0]))

int tess_sm90_kernel_count(void) { return TESS_SM90_KERNEL_COUNT; }

const tess_gemm_kernel *tess_sm90_kernel(int i) {
    for (int p = 0; p < PART_COUNT && i >= 0; p++) {
        if (i < parts[p].count)
            return &parts[p].kernels[i];
        i -= parts[p].count;
    }
    return 0;
}
