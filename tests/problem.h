/* Random GEMM problems for the tests: every dtype, order, leading dimension,
 * batch stride (including 0, broadcast), alpha/beta and scale recipe, with
 * host buffers filled with normal values. */
#ifndef TESS_TESTS_PROBLEM_H
#define TESS_TESTS_PROBLEM_H

#include "ref/random.h"
#include "ref/ref_gemm.h"

typedef struct test_problem {
    tess_ref_gemm p;                /* pointers refer to the host buffers below */
    void *a, *b, *c;
    float *a_scale, *b_scale;
    size_t a_bytes, b_bytes, c_bytes, d_bytes, a_scale_bytes, b_scale_bytes;
    char text[256];                 /* a one-line description for failure messages */
} test_problem;

/* Draws a problem with M, N, K in [1, max_dim] (often exactly 1 or a multiple
 * of 128 plus a ragged edge) and allocates and fills its inputs. */
void test_problem_random(test_problem *t, tess_rng *r, int64_t max_dim);

/* A host buffer holding a batch of `d`'s whole span (padding included) of
 * normal(0, 1) values; its size in *bytes. */
void *test_matrix_random(const tess_matrix_desc *d, int64_t batch, tess_rng *r, size_t *bytes);

/* Random positive factors of `mode` for an operand of `outer` rows of A (or
 * columns of B) and depth k, in a random layout (outer index or K blocks
 * contiguous, padded strides and batch stride); with allow_none, sometimes
 * none at all (NULL: factors of 1). Returns the host array (free() it). */
float *test_scale_random(tess_scale_operand *op, tess_rng *r, tess_scale_mode mode, int64_t outer, int64_t k,
                         int64_t batch, int allow_none, size_t *bytes);
/* The same in the layout DeepGEMM and cuBLASLt use (tess_scale_layout_query's,
 * with 128x128 factors' rows padded to 16 bytes): the layout the kernels
 * read by TMA when its strides allow. Never NULL. */
float *test_scale_packed(tess_scale_operand *op, tess_rng *r, tess_scale_mode mode, int64_t outer, int64_t k,
                         int64_t batch, size_t *bytes);

/* A random fused epilogue for an m x n output in `batch` batches (grouped:
 * groups, bias per column only): none half the time, else a bias (per
 * column or row, bf16/f16/f32, shared or one per batch) and/or an
 * activation. */
void test_epilogue_random(tess_epilogue_desc *e, tess_rng *r, int64_t m, int64_t n, int64_t batch, int grouped);
/* A host buffer of normal values holding every bias vector `e` reads (NULL
 * without a bias), its size in *bytes. */
void *test_bias_random(const tess_epilogue_desc *e, tess_rng *r, int64_t m, int64_t n, int64_t batch, size_t *bytes);
/* A group's size (rows or tokens): empty, one, a few (2 to 20), a whole or
 * ragged number of blocks (1 to max_blocks blocks of `block`, up to
 * `jitter` either side), or any from 0 to max. */
int64_t test_group_size(tess_rng *r, int64_t max, int64_t block, int64_t max_blocks, int64_t jitter);
/* A one-line description of an epilogue ("" when none), for failure messages. */
const char *test_epilogue_name(const tess_epilogue_desc *e, char *buf, size_t size);

/* Bytes of D's storage (its whole span, padding included). */
size_t test_problem_d_bytes(const test_problem *t);

void test_problem_free(test_problem *t);

/* How a value is rounded into `dtype`: unit roundoff (half an ulp, relative),
 * the smallest subnormal step, and the largest finite value. */
typedef struct dtype_rounding {
    double unit, tiny, max;
} dtype_rounding;
dtype_rounding test_dtype_rounding(tess_dtype dtype);

#endif
