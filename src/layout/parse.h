/* Internal: reading CuTe notation (and pycute's) into trees. */
#ifndef TESS_LAYOUT_PARSE_H
#define TESS_LAYOUT_PARSE_H

#include "layout/tree.h"

/* A cursor over text, for the layout parser and the expression calculator. */
typedef struct tl_scan {
    const char *text;
    const char *at;
} tl_scan;

void tl_skip_space(tl_scan *s);
/* Consumes `c` (after spaces) and returns 1, or returns 0 leaving the cursor. */
int tl_accept(tl_scan *s, char c);
/* Fails with a sentence that shows where in the text parsing stopped. */
void *tl_scan_fail(tl_ctx *c, const tl_scan *s, const char *what);

/* An integer tuple: 4, -3, _4 (CuTe's static 4), _ (underscore), (a,b,...) with
 * optional spaces and a trailing comma (pycute's "(4,)"). Leaves of stride
 * tuples may be scaled basis vectors "k@i" when allow_basis is set. */
tl_node *tl_parse_tuple(tl_ctx *c, tl_scan *s, int allow_basis);

/* Joins a shape tree and a congruent stride tree into one layout tree. */
tl_node *tl_zip_shape_stride(tl_ctx *c, const tl_node *shape, const tl_node *stride);

/* The compact column-major layout of `shape` whose first stride is `start` (CuTe's LayoutLeft). */
tl_node *tl_compact_col_major(tl_ctx *c, const tl_node *shape, tl_stride start);

#endif
