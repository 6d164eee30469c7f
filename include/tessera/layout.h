/*
 * tessera/layout.h: CuTe's layout algebra in C, on the host.
 *
 * A layout maps coordinates to offsets: a shape and a stride, both nested
 * integer tuples of the same nesting, e.g. ((4,8,4),(2,2,8)):((128,1,16),(64,8,512)).
 * The semantics are C++ CuTe's with every integer known (static):
 * colexicographic coordinates, the same operations and results, printed in
 * CuTe notation. Where C++ CuTe would return a layout that is not what the
 * operation promises (its divisibility checks are compile-time only), tessera
 * refuses with TESS_STATUS_INVALID_VALUE and a sentence instead; in
 * particular a composition is returned only if it evaluates as A(B(i)) on all
 * of B's domain (checked at every index up to 2^22 elements, at 65536 spread
 * indices beyond).
 *
 * Values. Every value of the algebra is a `tess_layout`, of one of these kinds:
 *   TESS_LAYOUT_TUPLE     an integer tuple: 4, (2,3), ((2,2),_): shapes, coordinates, profiles
 *   TESS_LAYOUT_PLAIN     shape:stride; strides may be scaled basis vectors "1@0"
 *                         (coordinate-valued layouts, e.g. the identity layout)
 *   TESS_LAYOUT_SWIZZLED  Sw<B,M,S> o offset o layout
 *   TESS_LAYOUT_TILER     <t0,t1,...>: a tuple of tilers (layouts, '_' or tilers), applied mode by mode
 *   TESS_LAYOUT_SWIZZLE   Sw<B,M,S> on its own
 * Where a layout is expected, a tuple S stands for make_layout(S) (compact,
 * column-major); where a tiler is expected, an integer n stands for n:1 and a
 * tuple for the tiler of its modes, as in C++.
 *
 * Memory. Every value is one allocation, owned by the caller and freed by
 * tess_layout_free. Inputs are never modified. Text is exchanged through
 * caller buffers: tess_layout_print works like snprintf.
 */
#ifndef TESSERA_LAYOUT_H
#define TESSERA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tess_layout tess_layout;

typedef enum tess_layout_kind {
    TESS_LAYOUT_TUPLE = 0,
    TESS_LAYOUT_PLAIN = 1,
    TESS_LAYOUT_SWIZZLED = 2,
    TESS_LAYOUT_TILER = 3,
    TESS_LAYOUT_SWIZZLE = 4
} tess_layout_kind;

/* ---- making, reading, printing, freeing ---------------------------------- */

/* Parses any value in CuTe notation: "(4,8):(1,4)", "(2,(2,2))", "_",
 * "Sw<3,4,3> o 0 o (8,64):(64,1)", "Sw<2,0,3>", "<2:1,_,(2,4):(1,8)>". Also
 * accepts pycute's notation ("(4, 8):(1, 4)", "(4,)") and CuTe's static
 * integers ("_4"). A bare shape "(4,8)" is a TUPLE; use tess_layout_make to
 * turn it into a layout. */
TESS_API tess_status tess_layout_parse(const char *text, tess_layout **out);
/* make_layout(shape, stride): stride NULL gives the compact column-major
 * strides (CuTe's LayoutLeft). Both arguments are TUPLEs. */
TESS_API tess_status tess_layout_make(const tess_layout *shape, const tess_layout *stride, tess_layout **out);
/* make_layout(L0, L1, ...): a layout whose modes are the given layouts. */
TESS_API tess_status tess_layout_concat(const tess_layout *const *modes, int count, tess_layout **out);
/* The identity layout of a shape: coordinate -> the same coordinate, as the
 * strides 1@0, 1@1, ... (one basis per top-level mode; nested modes count
 * column-major within their top-level mode). */
TESS_API tess_status tess_layout_make_identity(const tess_layout *shape, tess_layout **out);
/* Sw<bits,base,shift>: x -> x ^ ((x & (2^bits-1) << (base + max(0,shift))) >> shift).
 * Needs bits, base >= 0 and |shift| >= bits. */
TESS_API tess_status tess_layout_make_swizzle(int bits, int base, int shift, tess_layout **out);
/* swizzle o offset o layout. */
TESS_API tess_status tess_layout_make_swizzled(const tess_layout *swizzle, int64_t offset, const tess_layout *layout,
                                               tess_layout **out);
/* A tiler <m0, m1, ...>; a NULL mode is '_'. */
TESS_API tess_status tess_layout_make_tiler(const tess_layout *const *modes, int count, tess_layout **out);
/* An integer as a (rank-0 depth) TUPLE value. */
TESS_API tess_status tess_layout_make_int(int64_t value, tess_layout **out);

/* Writes the value in C++ CuTe notation (no spaces, 1-tuples as "(8)"); returns
 * the length of the full text, excluding the terminating NUL, whatever `cap` is. */
TESS_API size_t tess_layout_print(const tess_layout *x, char *buf, size_t cap);
TESS_API tess_layout_kind tess_layout_kind_of(const tess_layout *x);
/* A copy, to keep or to free separately. */
TESS_API tess_status tess_layout_copy(const tess_layout *x, tess_layout **out);
TESS_API void tess_layout_free(tess_layout *x);
/* 1 if the two values are identical (same kind, nesting, shapes and strides). */
TESS_API int tess_layout_equal(const tess_layout *a, const tess_layout *b);

/* ---- queries ----------------------------------------------------------- */

/* size: the product of the shape (of a TUPLE: the product of its integers). */
TESS_API tess_status tess_layout_size(const tess_layout *x, int64_t *out);
/* cosize: one past the largest offset, C++'s sum of (shape-1)*|stride| plus 1. */
TESS_API tess_status tess_layout_cosize(const tess_layout *x, int64_t *out);
/* rank: the number of top-level modes (1 for an integer); depth: the nesting (0 for an integer). */
TESS_API tess_status tess_layout_rank(const tess_layout *x, int *out);
TESS_API tess_status tess_layout_depth(const tess_layout *x, int *out);
/* The shape and the stride of a layout, as TUPLEs (basis strides print as "k@i"). */
TESS_API tess_status tess_layout_shape(const tess_layout *x, tess_layout **out);
TESS_API tess_status tess_layout_stride(const tess_layout *x, tess_layout **out);
/* Mode i (CuTe's get<i> / layout<i>); an integer or single-leaf layout is its own mode 0. */
TESS_API tess_status tess_layout_mode(const tess_layout *x, int i, tess_layout **out);
/* The value at index `idx` (past the end, the layout extends along its last mode). */
TESS_API tess_status tess_layout_eval(const tess_layout *x, int64_t idx, int64_t *out);
/* The value at a coordinate (a TUPLE, natural or with an integer per mode). */
TESS_API tess_status tess_layout_eval_coord(const tess_layout *x, const tess_layout *coord, int64_t *out);
/* The value of a coordinate-valued layout (or any layout) as a TUPLE: at
 * coordinate `coord`, or at index `idx` when coord is NULL. */
TESS_API tess_status tess_layout_eval_value(const tess_layout *x, const tess_layout *coord, int64_t idx,
                                            tess_layout **out);
/* slice: the sub-layout at a coordinate holding '_' (the modes marked '_')
 * and the offset the fixed coordinates add. */
TESS_API tess_status tess_layout_slice(const tess_layout *x, const tess_layout *coord, tess_layout **out,
                                       int64_t *offset);

/* ---- the algebra ------------------------------------------------------- */

/* coalesce and filter; profile NULL for the whole layout, or a TUPLE to go mode by mode. */
TESS_API tess_status tess_layout_coalesce(const tess_layout *x, const tess_layout *profile, tess_layout **out);
TESS_API tess_status tess_layout_filter(const tess_layout *x, const tess_layout *profile, tess_layout **out);
/* A o B; B a layout or a tiler (mode by mode; A's modes beyond the tiler's are dropped, as in C++). */
TESS_API tess_status tess_layout_composition(const tess_layout *a, const tess_layout *b, tess_layout **out);
/* complement(L, cotarget); cotarget NULL means cosize(filter(L)) (C++'s default), or an integer or shape. */
TESS_API tess_status tess_layout_complement(const tess_layout *x, const tess_layout *cotarget, tess_layout **out);
TESS_API tess_status tess_layout_right_inverse(const tess_layout *x, tess_layout **out);
/* A layout R with L(R(L(i))) = L(i) for all i (and R(L(i)) = i when L is injective). */
TESS_API tess_status tess_layout_left_inverse(const tess_layout *x, tess_layout **out);
TESS_API tess_status tess_layout_logical_divide(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_zipped_divide(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_tiled_divide(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_flat_divide(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_logical_product(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_zipped_product(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_tiled_product(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_flat_product(const tess_layout *a, const tess_layout *tiler, tess_layout **out);
TESS_API tess_status tess_layout_blocked_product(const tess_layout *a, const tess_layout *b, tess_layout **out);
TESS_API tess_status tess_layout_raked_product(const tess_layout *a, const tess_layout *b, tess_layout **out);
/* How many consecutive elements a and b agree on (the widest common vector). */
TESS_API tess_status tess_layout_max_common_vector(const tess_layout *a, const tess_layout *b, int64_t *out);

/* ---- integer tuples ----------------------------------------------------- */

TESS_API tess_status tess_layout_flatten(const tess_layout *x, tess_layout **out);
/* Exclusive prefix product, congruent to the input. */
TESS_API tess_status tess_layout_prefix_product(const tess_layout *x, tess_layout **out);
/* shape_div(a, b): a tuple by an integer folds left to right; each step needs one side to divide the other. */
TESS_API tess_status tess_layout_shape_div(const tess_layout *a, const tess_layout *b, tess_layout **out);
/* The natural coordinate of idx in `shape` (stride NULL: compact column-major), and back. */
TESS_API tess_status tess_layout_idx2crd(int64_t idx, const tess_layout *shape, const tess_layout *stride,
                                         tess_layout **out);
TESS_API tess_status tess_layout_crd2idx(const tess_layout *coord, const tess_layout *shape,
                                         const tess_layout *stride, int64_t *out);
/* 1 if a and b nest the same way. */
TESS_API int tess_layout_congruent(const tess_layout *a, const tess_layout *b);

/* ---- MMA atoms ---------------------------------------------------------- */

/* The thread-value layouts of an MMA instruction: (thread, value) -> the
 * column-major index of the element in the operand tile (A: M x K, B: N x K,
 * C: M x N). Atoms: "wgmma_64x{N}x16_{f32|f16}" (16-bit inputs; N = 8..256 in
 * steps of 8; A from registers), "wgmma_64x{N}x32_{f32|f16}" (8-bit inputs),
 * "mma_16x8x16_f32" and "mma_16x8x32_f32" (sm80 mma.sync),
 * "umma_128x{N}x16_f32" (Blackwell tcgen05.mma.cta_group::1.kind::f16, A and
 * B in shared memory, N = 8..256 in steps of 8) and
 * "umma_2cta_256x{N}x16_f32" (cta_group::2, N = 16..256 in steps of 16). For
 * wgmma, B is read from shared memory by all 128 threads (thread stride 0).
 * For the umma atoms the "thread" is a CTA: each of the pair holds M/2 rows
 * of A and C and N/2 rows of B, as in CuTe's SM100 MMA traits. */
typedef enum tess_mma_operand { TESS_MMA_A = 0, TESS_MMA_B = 1, TESS_MMA_C = 2 } tess_mma_operand;
TESS_API tess_status tess_layout_mma_atom(const char *name, tess_mma_operand operand, tess_layout **tv_layout,
                                          int64_t *rows, int64_t *cols);
/* CuTe's ThrID of an atom: what the first mode of its TV layouts counts.
 * 128:1 (a warpgroup) for wgmma, 32:1 (a warp) for mma.sync; for the umma
 * atoms, issued by one thread, the CTAs: 1:0 (one CTA) or 2:1 (the pair). */
TESS_API tess_status tess_layout_mma_atom_thr_id(const char *name, tess_layout **thr_id);
/* The atom's instruction shape {M, N, K} and the part one CTA computes,
 * {M / size(ThrID), N, K} where ThrID counts CTAs (umma_2cta_256xNx16:
 * 128 x N x 16 per CTA), the whole shape where it counts the threads of one
 * CTA (wgmma, mma.sync, one-CTA umma). Either output may be NULL. */
TESS_API tess_status tess_layout_mma_atom_shape(const char *name, int64_t shape_mnk[3], int64_t cta_tile_mnk[3]);
/* The number of named atoms, and the i-th name (for listings). */
TESS_API int tess_layout_mma_atom_count(void);
TESS_API const char *tess_layout_mma_atom_name(int i);

/* ---- pictures ----------------------------------------------------------- */

/* Text outputs write at most cap bytes (NUL included) and set *length to the
 * full length, so a caller can size a buffer with a first call of cap 0. */

/* CuTe's print_layout text of a rank-2 layout (rank 1 is shown as N x 1, as (L, 1:0)). */
TESS_API tess_status tess_layout_render_table(const tess_layout *x, char *buf, size_t cap, size_t *length);
/* CuTe's print_latex (TikZ) text of a rank-2 layout. */
TESS_API tess_status tess_layout_render_latex(const tess_layout *x, char *buf, size_t cap, size_t *length);
/* An SVG picture: for a TV layout (thread, value) -> index in a rows x cols
 * tile (rows > 0), a grid coloured by thread with T/V labels; otherwise
 * (rows = cols = 0) the offsets of a rank-2 layout or swizzled layout. */
TESS_API tess_status tess_layout_render_svg(const tess_layout *x, int64_t rows, int64_t cols, char *buf, size_t cap,
                                            size_t *length);
/* Walks one coordinate through the layout, step by step, as text: coordinate
 * -> natural coordinate -> the sum of coordinate times stride -> offset, and,
 * when rows > 0, -> (m, n) in a column-major tile with that many rows. */
TESS_API tess_status tess_layout_explain(const tess_layout *x, const tess_layout *coord, int64_t rows, char *buf,
                                         size_t cap, size_t *length);
/* Evaluates an expression of the calculator (see `tessera layout --help`),
 * e.g. "logical_divide((24):(1), (4):(1))", and prints its value. */
TESS_API tess_status tess_layout_eval_expr(const char *expr, char *buf, size_t cap, size_t *length);
/* The usage line of the calculator's i-th function ("composition(A, B)"), NULL past the last. */
TESS_API const char *tess_layout_expr_usage(int i);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_LAYOUT_H */
