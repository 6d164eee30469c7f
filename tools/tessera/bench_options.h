/* `tessera bench gemm`'s settings: its options (the table that is also its
 * --help), read from the command line and from a suite's lines, and the
 * listing --dry-run prints instead of running. */
#ifndef TESS_TOOLS_BENCH_OPTIONS_H
#define TESS_TOOLS_BENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "tessera.h"
#include "tools/tessera/cli.h"

/* Most values of one of --m, --n, --k (after expanding ranges). */
#define BENCH_MAX_VALUES 64
/* Most alternating timing rounds (--rounds). */
#define BENCH_MAX_ROUNDS 9
/* --hold: the longest timed part (s). */
#define BENCH_MAX_HOLD_SECONDS 60.0
/* --chain: most calls per timed run (a bound that keeps one timed run short). */
#define BENCH_MAX_CHAIN 64
/* Largest M, N or K taken: no GPU holds a matrix that long, and ranges up to
 * it never overflow while they are expanded. */
#define BENCH_MAX_EXTENT (1ll << 40)

/* The problems and how they are timed: the command line's, then each suite line's over them. */
typedef struct bench_options {
    int64_t m[BENCH_MAX_VALUES], n[BENCH_MAX_VALUES], k[BENCH_MAX_VALUES];
    int nm, nn, nk;
    tess_dtype ta, tb, tc, td;
    tess_order oa, ob, oc, od;
    int c_given;
    float alpha, beta;
    int64_t batch;
    int tessera, cublas, verify, warmup, iterations, plan, rounds;
    int scale_a, scale_b; /* tess_scale_mode, or -1: no factors */
    int fast_accum;
    int bias;              /* --bias: tess_bias_mode (a vector shared by the batch) */
    int bias_type;         /* --bias-type: a tess_dtype, or -1: bench_bias_type's default */
    int act;               /* --act: tess_activation */
    int residual;          /* --residual: a residual of D's type and order, added last */
    int aux;               /* --aux: the values before the activation written beside D (D's type and order) */
    int gate;              /* --gate: tess_gate (D, and the residual, M x N/2) */
    float gate_limit;      /* --gate-limit: the gate's clamp (0: none) */
    int out_scale;         /* --out-scale: an FP8 D's factors, TESS_SCALE_TENSOR (the default) or _BLOCK_1x128 */
    int amax;              /* --amax: an FP8 D's amax computed beside it (per tensor) */
    const char *plan_name; /* --plan=TEXT: the first plan whose name ends with TEXT */
    int all_plans;         /* --plan=all */
    int chain;             /* --chain=N: calls timed back to back, per-call time reported */
    double hold;           /* --hold=SECONDS: held at the power cap for that long (0: bursts) */
    int sms;               /* --sms=N: tessera's SM budget (0: every SM) */
    int b_int4;            /* --B=int4:col: B is a 4-bit weight (tess_gemm_w4a16; tb then names nothing) */
    int int4_group;        /* --group-size: k per scale and zero point of a 4-bit B (64 or 128) */
    int int4_zeros;        /* --zeros: a 4-bit B has uint8 zero points (else every one is 8) */
} bench_options;

/* What only the command line sets. */
typedef struct bench_run {
    const char *suite;  /* --suite=FILE, or NULL */
    const char *output; /* --output=FILE (CSV), or NULL */
    int dry_run;        /* --dry-run: list the problems, run nothing */
} bench_run;

/* The command, for its --help and `tessera --help`. */
extern const cli_command bench_gemm_command;

/* Reads the command line (argv[0] is "gemm") into *o (from the defaults)
 * and *run; CLI_OK, CLI_HELP or CLI_ERROR (after saying why). */
int bench_parse_args(int argc, char **argv, bench_options *o, bench_run *run);

/* With --suite: where the suite has a "#!" line, re-reads the command line
 * (argc, argv) over that line's options, so that o holds the defaults, then
 * the "#!" line's, then the command line's. 0, or -1 after saying why. */
int bench_suite_defaults(int argc, char **argv, bench_options *o, bench_run *run);

/* Applies one line of `suite` (line number `number`; comments from a word
 * starting with '#') over *o, which holds the command line's settings and
 * no problem sizes yet; the line is split in place. Returns 1 if it names
 * problems, 0 if it is empty, -1 after saying what is wrong with it. */
int bench_parse_line(char *line, const char *suite, int number, bench_options *o);

/* The rows' name of a problem: "MxNxK bB a:row,b:col->d:row[ s:A,B[ fast]][ bias:WHERE:TYPE][ act:NAME]
 * [ gate:NAME[:LIMIT]][ residual][ aux][ out:tensor[ amax]|out:1x128]" (out: an FP8 D's factors); a 4-bit
 * B reads "int4gG" (G: --group-size) with a "z" after it where it has zero points. */
void bench_problem_label(const bench_options *o, int64_t m, int64_t n, int64_t k, char *buf, size_t cap);

/* B's type as the rows name it: tess_dtype_name's, or a 4-bit B's "int4gG" (G: --group-size) with a
 * "z" after it where it has zero points. */
void bench_b_type_name(const bench_options *o, char *buf, size_t cap);

/* A scale recipe's name in rows and CSV ("none": no factors), and an order's ("row", "col"). */
const char *bench_scale_name(int mode);
const char *bench_order_name(tess_order order);

/* The names --bias and --act take, as rows and CSV show them: "none",
 * "columns", "rows"; "none", "relu", "gelu" (erf), "gelu_tanh", "silu". */
const char *bench_bias_name(int mode);
const char *bench_act_name(int act);
/* --gate's names: "none", "interleaved". */
const char *bench_gate_name(int gate);

/* The bias's type: --bias-type, else D's type where D is 16-bit, else f32. */
tess_dtype bench_bias_type(const bench_options *o);

/* --dry-run: one line per problem `o` names, with every setting it runs under. */
void bench_print_dry_run(const bench_options *o);

#endif
