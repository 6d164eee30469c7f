/* Internal: nested integer tuples and layouts as trees, built in an arena.
 *
 * One node type serves both: a leaf holds a value (the shape, for layouts)
 * and a stride; a tuple holds children. Layout trees are congruent by
 * construction (each leaf carries its own stride), so "shape" and "stride"
 * are two views of one tree. A stride is an integer, or an integer times a
 * basis vector e_i of a coordinate codomain (CuTe's ScaledBasis, written
 * "k@i"), which is what identity (coordinate-valued) layouts are made of.
 *
 * Every operation takes a tl_ctx: the arena all results live in, and the
 * first error (status plus sentence) met; after an error, operations return
 * NULL and callers unwind. Arithmetic is checked: nothing overflows silently.
 */
#ifndef TESS_LAYOUT_TREE_H
#define TESS_LAYOUT_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "tessera.h"

/* Deepest nesting accepted anywhere (parsing, building): far beyond any real
 * layout, and shallow enough that recursion cannot exhaust the stack. */
#define TL_MAX_DEPTH 32
/* Most modes in one tuple, likewise. */
#define TL_MAX_RANK 256

/* Kinds of node: a tuple of modes, an integer leaf, CuTe's underscore '_', and
 * a tiler: a tuple whose modes are tilers, layouts or '_' (CuTe's Tile<...>). */
typedef enum { TL_TUPLE = 0, TL_INT = 1, TL_UNDER = 2, TL_TILER = 3 } tl_kind;

/* Largest basis index of a coordinate-valued stride (e_0 .. e_15). */
#define TL_MAX_BASIS 16

/* A stride: `value`, times the basis vector e_basis when basis >= 0. */
typedef struct tl_stride {
    int64_t value;
    int32_t basis; /* -1: a plain integer */
} tl_stride;

typedef struct tl_node tl_node;
struct tl_node {
    tl_kind kind;
    int32_t rank;      /* children of a tuple; 1 for a leaf */
    int64_t value;     /* leaf: the integer (the shape of a layout leaf) */
    tl_stride stride;  /* leaf of a layout: its stride */
    tl_node **child;   /* tuple: rank children */
};

typedef struct tl_block tl_block;
typedef struct tl_ctx {
    tl_block *blocks;
    tess_status status; /* first failure, TESS_STATUS_SUCCESS while none */
} tl_ctx;

void tl_init(tl_ctx *c);
/* Frees every node the context made. */
void tl_release(tl_ctx *c);
/* Records the first failure (status INVALID_VALUE unless given otherwise) and returns NULL. */
void *tl_fail(tl_ctx *c, const char *fmt, ...) TESS_PRINTF(2, 3);
void *tl_alloc(tl_ctx *c, size_t bytes);

/* ---- checked arithmetic (record an error on overflow) ---- */
int64_t tl_mul(tl_ctx *c, int64_t a, int64_t b);
int64_t tl_add(tl_ctx *c, int64_t a, int64_t b);
/* Ceiling division for b > 0, any a; floor division and modulo (Python's). */
int64_t tl_ceil_div(int64_t a, int64_t b);
int64_t tl_floor_div(int64_t a, int64_t b);
int64_t tl_floor_mod(int64_t a, int64_t b);

/* ---- strides ---- */
tl_stride tl_int_stride(int64_t v);
int tl_stride_eq(tl_stride a, tl_stride b);
tl_stride tl_stride_scale(tl_ctx *c, tl_stride d, int64_t k);

/* ---- construction ---- */
tl_node *tl_leaf(tl_ctx *c, int64_t value, tl_stride stride);
tl_node *tl_int(tl_ctx *c, int64_t value);
tl_node *tl_under(tl_ctx *c);
/* A tuple of n children (copied pointers; children are shared, never mutated). */
tl_node *tl_tuple(tl_ctx *c, int n, tl_node *const *children);
/* A tiler of n modes (each a tiler, a layout or '_'). */
tl_node *tl_tiler(tl_ctx *c, int n, tl_node *const *children);
tl_node *tl_tuple2(tl_ctx *c, tl_node *a, tl_node *b);
/* A growable list of nodes, for building tuples. */
typedef struct tl_list {
    tl_node **item;
    int n, cap;
} tl_list;
void tl_push(tl_ctx *c, tl_list *l, tl_node *x);
tl_node *tl_list_tuple(tl_ctx *c, const tl_list *l);

/* ---- structure ---- */
int tl_is_tuple(const tl_node *x);
/* Mode i: the child of a tuple or tiler; a leaf is its own mode 0. */
tl_node *tl_get(const tl_node *x, int i);
int tl_rank(const tl_node *x);
int tl_depth(const tl_node *x);
/* Product of the leaf values (the size of a shape or of a layout). */
int64_t tl_product(tl_ctx *c, const tl_node *x);
/* The leaves, in order, as one tuple (a leaf stays a leaf inside a 1-tuple). */
void tl_flatten_into(tl_ctx *c, const tl_node *x, tl_list *out);
tl_node *tl_flatten(tl_ctx *c, const tl_node *x);
int tl_congruent(const tl_node *a, const tl_node *b);
int tl_has_under(const tl_node *x);
int tl_has_basis(const tl_node *x);
tl_node *tl_copy(tl_ctx *c, const tl_node *x);

/* ---- text ---- */
/* Appends to a growable string. */
typedef struct tl_text {
    char *s;
    size_t len, cap;
    tl_ctx *ctx;
} tl_text;
void tl_text_put(tl_text *t, const char *s);
void tl_text_printf(tl_text *t, const char *fmt, ...) TESS_PRINTF(2, 3);
/* CuTe notation: shapes as "(4,(2,2))" (1-tuples "(8)"), layouts as "shape:stride". */
void tl_print_shape(tl_text *t, const tl_node *x);
void tl_print_stride(tl_text *t, const tl_node *x);
void tl_print_layout(tl_text *t, const tl_node *x);
/* A tiler as CuTe prints one: <2:1,_,(2,4):(1,8)>. */
void tl_print_tiler(tl_text *t, const tl_node *x);

/* A coordinate-valued result: a plain integer part and one per basis vector. */
typedef struct tl_vec {
    int64_t plain;
    int64_t e[TL_MAX_BASIS];
} tl_vec;
/* v += k * d (checked). */
void tl_vec_add(tl_ctx *c, tl_vec *v, tl_stride d, int64_t k);
int tl_vec_eq(const tl_vec *a, const tl_vec *b);

#endif
