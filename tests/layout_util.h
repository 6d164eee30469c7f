/* Test helpers for the layout algebra: make values from text, evaluate them
 * with an evaluator written here (independent of the library's), and compare. */
#ifndef TESS_TESTS_LAYOUT_UTIL_H
#define TESS_TESTS_LAYOUT_UTIL_H

#include <stdint.h>

#include "tessera/layout.h"

/* Parses or evaluates `text` (aborting the test on failure, which is a bug in the test). */
tess_layout *lu_value(const char *text);
/* The calculator's printed result, or NULL (and the sentence in tess_last_error) on failure. */
char *lu_eval(const char *expr);

/* A layout flattened to leaves, from its printed shape and stride. */
typedef struct lu_flat {
    int n;
    int64_t shape[256], stride[256];
} lu_flat;

/* Fills `f` from a PLAIN layout; 0 if it is not one with integer strides. */
int lu_flatten(const tess_layout *x, lu_flat *f);
/* lu_flatten of the layout written in `text`. */
int lu_flatten_text(const char *text, lu_flat *f);
/* Value at index i, colexicographic, the last mode unbounded (CuTe's extension). */
int64_t lu_at(const lu_flat *f, int64_t i);
int64_t lu_size(const lu_flat *f);

#endif
