/* `tessera bench gemm`'s options (bench_options.h): one table gives their
 * spelling, their --help and, through apply(), their meaning. The flags
 * follow cutlass_profiler's (--m --n --k, --A=bf16:row, --providers, ...). */
#include "tools/tessera/bench_options.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/names.h"

/* The options, in the table's order (the index cli_parse passes to apply). */
enum {
    OPT_M, OPT_N, OPT_K, OPT_A, OPT_B, OPT_C, OPT_D, OPT_ALPHA, OPT_BETA, OPT_BATCH, OPT_SCALE_A, OPT_SCALE_B,
    OPT_FAST_ACCUM, OPT_BIAS, OPT_BIAS_TYPE, OPT_ACT, OPT_RESIDUAL, OPT_AUX, OPT_GATE, OPT_GATE_LIMIT, OPT_OUT_SCALE,
    OPT_AMAX, OPT_GROUP_SIZE, OPT_ZEROS, OPT_PROVIDERS,
    OPT_PLAN, OPT_WARMUP, OPT_ITERATIONS, OPT_ROUNDS,
    OPT_CHAIN, OPT_HOLD, OPT_SMS, OPT_VERIFY, OPT_SUITE, OPT_OUTPUT, OPT_DRY_RUN, OPT_COUNT
};

static const cli_option bench_gemm_options[OPT_COUNT + 1] = {
    [OPT_M] = {"m", CLI_VALUE, "LIST", "M values: a,b,c and start:end:step ranges (each M x N x K runs)"},
    [OPT_N] = {"n", CLI_VALUE, "LIST", "N values, as --m"},
    [OPT_K] = {"k", CLI_VALUE, "LIST", "K values, as --m"},
    [OPT_A] = {"A", CLI_VALUE, "TYPE:ORDER",
               "A (M x K): f32|f16|bf16|e4m3|e5m2 : row|col (also column, t, n);\n"
               "default bf16:row"},
    [OPT_B] = {"B", CLI_VALUE, "TYPE:ORDER",
               "B (K x N), as --A; default bf16:col (the weight of x @ w.T); or\n"
               "int4:col, a 4-bit weight (tess_gemm_w4a16, M <= 16: A bf16 or f16,\n"
               "scales of A's type, --group-size, --zeros; tessera's alone)"},
    [OPT_C] = {"C", CLI_VALUE, "TYPE:ORDER", "C (M x N), read where beta != 0; default D's type and order"},
    [OPT_D] = {"D", CLI_VALUE, "TYPE:ORDER", "D (M x N), the result; default bf16:row"},
    [OPT_ALPHA] = {"alpha", CLI_VALUE, "X", "D = alpha A B + beta C; default 1"},
    [OPT_BETA] = {"beta", CLI_VALUE, "X", "default 0"},
    [OPT_BATCH] = {"batch", CLI_VALUE, "N", "strided batches; default 1"},
    [OPT_SCALE_A] = {"scale-a", CLI_VALUE, "RECIPE",
                     "FP8 dequantization factors of A: none|tensor|outer|block1x128|\n"
                     "block128x128 (also rowwise, vec128, blk128x128); default none;\n"
                     "cuBLASLt runs the same recipe"},
    [OPT_SCALE_B] = {"scale-b", CLI_VALUE, "RECIPE", "FP8 factors of B, as --scale-a"},
    [OPT_FAST_ACCUM] = {"fast-accum", CLI_OPTIONAL_VALUE, "BOOL",
                        "FP8: accumulate in the tensor cores' precision, without promotion\n"
                        "every 128 K; default false"},
    [OPT_BIAS] = {"bias", CLI_VALUE, "WHERE",
                  "fused bias, one vector shared by the batch: none|columns (length N,\n"
                  "added to every row)|rows (length M); default none"},
    [OPT_BIAS_TYPE] = {"bias-type", CLI_VALUE, "TYPE",
                       "the bias's type: bf16|f16|f32; default D's type where D is\n"
                       "16-bit, else f32"},
    [OPT_ACT] = {"act", CLI_VALUE, "NAME",
                 "fused activation, after the bias: none|relu|gelu (erf)|gelu_tanh|\n"
                 "silu; default none (cuBLASLt has relu and gelu_tanh only)"},
    [OPT_RESIDUAL] = {"residual", CLI_OPTIONAL_VALUE, "BOOL",
                      "fused residual, added after the activation: an M x N matrix of D's\n"
                      "type and order (random normal); default false (cuBLASLt runs it\n"
                      "as C with beta 1 where there is no bias or activation)"},
    [OPT_AUX] = {"aux", CLI_OPTIONAL_VALUE, "BOOL",
                 "aux output: the values before the activation (and the residual)\n"
                 "written beside D, in D's type and order (needs --act); default\n"
                 "false (cuBLASLt's GELU_AUX with --act=gelu_tanh)"},
    [OPT_GATE] = {"gate", CLI_VALUE, "NAME",
                  "gated activation (GLU): none|interleaved (the product's columns 2j\n"
                  "and 2j+1 are gate and up; D = act(gate) * up is M x N/2, as the\n"
                  "residual; N even, beta 0); default none (cuBLASLt has none)"},
    [OPT_GATE_LIMIT] = {"gate-limit", CLI_VALUE, "X",
                        "with --gate: gate clamped to at most X, up to [-X, X] before the\n"
                        "activation; default 0, no clamp"},
    [OPT_OUT_SCALE] = {"out-scale", CLI_VALUE, "RECIPE",
                       "an FP8 D's factors (--D=e4m3 or e5m2): tensor (D = fp8(v), one\n"
                       "factor of 1) or block1x128 (a factor per row and 128 columns,\n"
                       "written beside D); default tensor (cuBLASLt's rows: not run)"},
    [OPT_AMAX] = {"amax", CLI_OPTIONAL_VALUE, "BOOL",
                  "with an FP8 D per tensor: max |v| computed into a float too;\n"
                  "default false"},
    [OPT_GROUP_SIZE] = {"group-size", CLI_VALUE, "G",
                        "with --B=int4:col: k per scale and zero point, 64 or 128; default 128"},
    [OPT_ZEROS] = {"zeros", CLI_OPTIONAL_VALUE, "BOOL",
                   "with --B=int4:col: uint8 zero points per group (AWQ); default false\n"
                   "(symmetric codes: every zero point 8)"},
    [OPT_PROVIDERS] = {"providers", CLI_VALUE, "LIST", "who is timed: tessera,cublas (either or both); default both"},
    [OPT_PLAN] = {"plan", CLI_VALUE, "I|SUFFIX|all",
                  "tessera's plan: the I-th of tess_gemm_plans, the first whose name\n"
                  "ends in SUFFIX (e.g. c2x1_sk; where none does, the plans are\n"
                  "listed), or every plan, best-ranked first; default the planner's"},
    [OPT_WARMUP] = {"warmup-iterations", CLI_VALUE, "N", "untimed runs before timing; default 10"},
    [OPT_ITERATIONS] = {"profiling-iterations", CLI_VALUE, "N", "timed runs per round (their median); default 50"},
    [OPT_ROUNDS] = {"rounds", CLI_VALUE, "R",
                    "timing rounds, 1 to 9, the providers taking turns first (the\n"
                    "median round is reported); default 4"},
    [OPT_CHAIN] = {"chain", CLI_VALUE, "N",
                   "N calls back to back per timed run, 1 to 64, as a decode step\n"
                   "queues its layers; the time per call is reported; default 1"},
    [OPT_SMS] = {"sms", CLI_VALUE, "N",
                 "tessera's SM budget (tess_set_sm_budget): its GEMMs use at most N\n"
                 "streaming multiprocessors; default 0, all of them"},
    [OPT_HOLD] = {"hold", CLI_VALUE, "SECONDS",
                  "at the power cap: each provider runs 1 s untimed, then SECONDS\n"
                  "(at most 60) timed, in 2 rounds, the second in reverse order;\n"
                  "rows give round 2"},
    [OPT_VERIFY] = {"verify", CLI_OPTIONAL_VALUE, "BOOL",
                    "check each provider's result against the GPU reference GEMM\n"
                    "first; default true"},
    [OPT_SUITE] = {"suite", CLI_VALUE, "FILE",
                   "problems from FILE, a line of these options each ('#' starts a\n"
                   "comment) over the command line's (not --suite, --output, --dry-run),\n"
                   "which are over those of the file's '#!' line (its defaults)"},
    [OPT_OUTPUT] = {"output", CLI_VALUE, "FILE", "also write the rows to FILE, as CSV"},
    [OPT_DRY_RUN] = {"dry-run", CLI_NO_VALUE, NULL,
                     "list the problems and their settings, then exit: no GPU is used,\n"
                     "no file written"},
    [OPT_COUNT] = {NULL, 0, NULL, NULL},
};

const cli_command bench_gemm_command = {
    "tessera bench gemm",
    "--m=LIST --n=LIST --k=LIST [options]\n"
    "tessera against cuBLASLt on the same random-normal inputs, in one process:\n"
    "GPU time per call (median after warm-up, inputs rotated through more than\n"
    "twice the L2), the host's time to queue a call, SM MHz, board W, TF/s per GHz\n"
    "and TF/J; each result is checked against the GPU reference GEMM first.",
    bench_gemm_options,
    NULL,
};

static void defaults(bench_options *o) {
    memset(o, 0, sizeof *o);
    o->ta = o->tb = o->tc = o->td = TESS_DTYPE_BF16;
    o->oa = TESS_ORDER_ROW, o->ob = TESS_ORDER_COL, o->oc = o->od = TESS_ORDER_ROW;
    o->alpha = 1.0f;
    o->batch = 1;
    o->tessera = o->cublas = o->verify = 1;
    o->warmup = 10, o->iterations = 50, o->plan = -1, o->rounds = 4;
    o->scale_a = o->scale_b = -1;
    o->bias_type = -1;
    o->chain = 1;
    o->out_scale = TESS_SCALE_TENSOR;
    o->int4_group = 128;
}

/* --bias's names, with their tess_bias_mode. */
static const tess_named bias_names[] = {
    {TESS_BIAS_NONE, "none"},
    {TESS_BIAS_COLUMNS, "columns"},
    {TESS_BIAS_ROWS, "rows"},
};

/* --act's names, with their tess_activation ("gelu" is erf's, as PyTorch's F.gelu). */
static const tess_named act_names[] = {
    {TESS_ACT_NONE, "none"},
    {TESS_ACT_RELU, "relu"},
    {TESS_ACT_GELU_ERF, "gelu"},
    {TESS_ACT_GELU_ERF, "gelu_erf"},
    {TESS_ACT_GELU_TANH, "gelu_tanh"},
    {TESS_ACT_SILU, "silu"},
};

/* --gate's names, with their tess_gate. */
static const tess_named gate_names[] = {
    {TESS_GATE_NONE, "none"},
    {TESS_GATE_INTERLEAVED, "interleaved"},
};

/* The value of the row of `table` named `v`; -1 where no row is. */
static int value_named(const tess_named *table, size_t count, const char *v) {
    for (size_t i = 0; i < count; i++)
        if (!strcmp(v, table[i].name))
            return table[i].value;
    return -1;
}

/* Parses --bias, --bias-type, --act, --gate or --gate-limit (`index`) into
 * *o; -1 after saying which values it takes (`where`: "FILE:LINE: " in a
 * suite's line, else ""). */
static int parse_epilogue(int index, const char *v, bench_options *o, const char *where) {
    tess_dtype t;
    int x;
    char *end = NULL;
    double limit;
    switch (index) {
    case OPT_GATE:
        if ((x = value_named(gate_names, sizeof gate_names / sizeof gate_names[0], v)) >= 0)
            return (o->gate = x), 1;
        fprintf(stderr, "tessera bench gemm: %s--gate=%s: expected none or interleaved\n", where, v);
        return -1;
    case OPT_GATE_LIMIT:
        limit = strtod(v, &end);
        if (end != v && *end == '\0' && limit >= 0.0 && limit <= FLT_MAX)
            return (o->gate_limit = (float)limit), 1;
        fprintf(stderr, "tessera bench gemm: %s--gate-limit=%s: expected a finite number >= 0 (0: no clamp)\n",
                where, v);
        return -1;
    case OPT_BIAS:
        if ((x = value_named(bias_names, sizeof bias_names / sizeof bias_names[0], v)) >= 0)
            return (o->bias = x), 1;
        fprintf(stderr, "tessera bench gemm: %s--bias=%s: expected none, columns (length N) or rows (length M)\n",
                where, v);
        return -1;
    case OPT_BIAS_TYPE:
        if (tess_dtype_from_name(v, &t) == TESS_STATUS_SUCCESS &&
            (t == TESS_DTYPE_BF16 || t == TESS_DTYPE_F16 || t == TESS_DTYPE_F32))
            return (o->bias_type = (int)t), 1;
        fprintf(stderr, "tessera bench gemm: %s--bias-type=%s: a bias is bf16, f16 or f32\n", where, v);
        return -1;
    default: /* OPT_ACT */
        if ((x = value_named(act_names, sizeof act_names / sizeof act_names[0], v)) >= 0)
            return (o->act = x), 1;
        fprintf(stderr, "tessera bench gemm: %s--act=%s: expected none, relu, gelu (erf), gelu_tanh or silu\n", where,
                v);
        return -1;
    }
}

/* Parses a scale recipe: none, tensor, outer (rowwise), block1x128, block128x128. */
static int parse_scale(const char *v, int *mode) {
    static const struct {
        const char *name;
        int mode;
    } names[] = {{"none", -1},
                 {"tensor", TESS_SCALE_TENSOR},
                 {"outer", TESS_SCALE_OUTER_VEC},
                 {"rowwise", TESS_SCALE_OUTER_VEC},
                 {"block1x128", TESS_SCALE_BLOCK_1x128},
                 {"vec128", TESS_SCALE_BLOCK_1x128},
                 {"block128x128", TESS_SCALE_BLOCK_128x128},
                 {"blk128x128", TESS_SCALE_BLOCK_128x128}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(v, names[i].name))
            return (*mode = names[i].mode), 1;
    return 0;
}

/* Reads a whole number in [1, BENCH_MAX_EXTENT] at *text, leaving *text after it; 0 if there is none. */
static int read_count(const char **text, long long *out) {
    char *end = NULL;
    if (**text < '0' || **text > '9')
        return 0;
    *out = strtoll(*text, &end, 10);
    *text = end;
    return *out >= 1 && *out <= BENCH_MAX_EXTENT;
}

/* Parses "a,b,c" and "start:end:step" (or "start:end") into values, at most
 * BENCH_MAX_VALUES of them; 0 on malformed input. */
static int parse_values(const char *text, int64_t *out, int *count) {
    *count = 0;
    for (const char *at = text;; at++) {
        long long a, b, step = 1;
        if (!read_count(&at, &a))
            return 0;
        b = a;
        if (*at == ':' && (++at, !read_count(&at, &b)))
            return 0;
        if (*at == ':' && (++at, !read_count(&at, &step)))
            return 0;
        if (b < a || (*at != ',' && *at != '\0'))
            return 0;
        for (long long v = a; v <= b && *count < BENCH_MAX_VALUES; v += step)
            out[(*count)++] = v;
        if (*at == '\0')
            return 1;
    }
}

/* Parses "bf16:row" / "f16:col" / "f32:row" (also cutlass_profiler's "row"/"column", "t"/"n"). */
static int parse_operand(const char *text, tess_dtype *t, tess_order *o) {
    char type[32] = "", order[32] = "row";
    if (sscanf(text, "%31[^:]:%31s", type, order) < 1)
        return 0;
    if (tess_dtype_from_name(type, t) != TESS_STATUS_SUCCESS)
        return 0;
    if (!strcmp(order, "row") || !strcmp(order, "t") || !strcmp(order, "row-major"))
        *o = TESS_ORDER_ROW;
    else if (!strcmp(order, "col") || !strcmp(order, "column") || !strcmp(order, "n") || !strcmp(order, "col-major"))
        *o = TESS_ORDER_COL;
    else
        return 0;
    return 1;
}

/* Parses --B: parse_operand's forms, or "int4[:col]" (a 4-bit weight, K-major: N x K). */
static int parse_weight(const char *text, bench_options *o) {
    if (!strncmp(text, "int4", 4) && (text[4] == ':' || text[4] == '\0')) {
        tess_dtype ignored;
        char spelled[48];
        snprintf(spelled, sizeof spelled, "bf16%s", text[4] ? text + 4 : ":col"); /* the order, parse_operand's */
        if (!parse_operand(spelled, &ignored, &o->ob) || o->ob != TESS_ORDER_COL)
            return 0;
        o->b_int4 = 1, o->tb = TESS_DTYPE_BF16;
        return 1;
    }
    o->b_int4 = 0;
    return parse_operand(text, &o->tb, &o->ob);
}

/* Parses a number that all of `text` spells (strtod's forms). */
static int parse_number(const char *text, double *out) {
    char *end = NULL;
    *out = strtod(text, &end);
    return end != text && *end == '\0';
}

/* Parses --providers: a comma list of tessera and cublas (or cublaslt). */
static int parse_providers(const char *text, bench_options *o) {
    static const struct {
        const char *name;
        int tessera;
    } names[] = {{"tessera", 1}, {"cublas", 0}, {"cublaslt", 0}, {"cublasLt", 0}};
    o->tessera = o->cublas = 0;
    for (const char *at = text;;) {
        const size_t len = strcspn(at, ",");
        size_t i = 0;
        while (i < sizeof names / sizeof names[0] && (strlen(names[i].name) != len || strncmp(at, names[i].name, len)))
            i++;
        if (i == sizeof names / sizeof names[0])
            return 0;
        *(names[i].tessera ? &o->tessera : &o->cublas) = 1;
        if (at[len] == '\0')
            return 1;
        at += len + 1;
    }
}

/* Parses --plan: "all", an index (digits only), or a name suffix ("128x128x128_s6_c1x1_blk"). */
static int parse_plan(const char *v, bench_options *o) {
    long long index;
    o->plan = -1, o->plan_name = NULL, o->all_plans = 0;
    if (!*v)
        return 0;
    if (!strcmp(v, "all"))
        o->all_plans = 1;
    else if (strspn(v, "0123456789") == strlen(v) && cli_int(v, 0, INT_MAX, &index))
        o->plan = (int)index;
    else
        o->plan_name = v;
    return 1;
}

/* Parses --hold's seconds: a number in (0, BENCH_MAX_HOLD_SECONDS]; -1 after
 * saying why (`where`: "FILE:LINE: " in a suite's line, else ""). */
static int parse_hold(const char *v, double *seconds, const char *where) {
    double x;
    if (!parse_number(v, &x) || !(x > 0.0 && x <= BENCH_MAX_HOLD_SECONDS)) {
        fprintf(stderr, "tessera bench gemm: %s--hold=%s: expected seconds above 0 and at most %g, e.g. --hold=2.5\n",
                where, v, BENCH_MAX_HOLD_SECONDS);
        return -1;
    }
    *seconds = x;
    return 1;
}

/* An int option's value in [lo, hi]; 1, or 0 when malformed or out of range. */
static int set_int(const char *v, long long lo, long long hi, int *out) {
    long long x;
    return cli_int(v, lo, hi, &x) ? (*out = (int)x), 1 : 0;
}

/* What apply() fills: the settings, and (on the command line only) the run. */
typedef struct parse_state {
    bench_options *o;
    bench_run *run;    /* NULL in a suite's line */
    const char *where; /* "FILE:LINE: " in a suite's line, else "" (messages begin with it) */
} parse_state;

/* cli_apply_fn for bench gemm's options. */
static int apply(void *ctx, int index, const char *v) {
    parse_state *st = ctx;
    bench_options *o = st->o;
    double x;
    long long batch;
    switch (index) {
    case OPT_M: return parse_values(v, o->m, &o->nm);
    case OPT_N: return parse_values(v, o->n, &o->nn);
    case OPT_K: return parse_values(v, o->k, &o->nk);
    case OPT_A: return parse_operand(v, &o->ta, &o->oa);
    case OPT_B: return parse_weight(v, o);
    case OPT_C: return (o->c_given = 1), parse_operand(v, &o->tc, &o->oc);
    case OPT_D: return parse_operand(v, &o->td, &o->od);
    case OPT_ALPHA: return parse_number(v, &x) ? (o->alpha = (float)x), 1 : 0;
    case OPT_BETA: return parse_number(v, &x) ? (o->beta = (float)x), 1 : 0;
    case OPT_BATCH: return cli_int(v, 1, INT_MAX, &batch) ? (o->batch = batch), 1 : 0;
    case OPT_SCALE_A: return parse_scale(v, &o->scale_a);
    case OPT_SCALE_B: return parse_scale(v, &o->scale_b);
    case OPT_FAST_ACCUM: return cli_bool(v, &o->fast_accum);
    case OPT_BIAS:
    case OPT_BIAS_TYPE:
    case OPT_ACT:
    case OPT_GATE:
    case OPT_GATE_LIMIT: return parse_epilogue(index, v, o, st->where);
    case OPT_RESIDUAL: return cli_bool(v, &o->residual);
    case OPT_AUX: return cli_bool(v, &o->aux);
    case OPT_OUT_SCALE: return parse_scale(v, &o->out_scale);
    case OPT_AMAX: return cli_bool(v, &o->amax);
    case OPT_GROUP_SIZE: return set_int(v, 64, 128, &o->int4_group) && (o->int4_group == 64 || o->int4_group == 128);
    case OPT_ZEROS: return cli_bool(v, &o->int4_zeros);
    case OPT_PROVIDERS: return parse_providers(v, o);
    case OPT_PLAN: return parse_plan(v, o);
    case OPT_WARMUP: return set_int(v, 0, INT_MAX, &o->warmup);
    case OPT_ITERATIONS: return set_int(v, 1, INT_MAX, &o->iterations);
    case OPT_ROUNDS: return set_int(v, 1, BENCH_MAX_ROUNDS, &o->rounds);
    case OPT_CHAIN: return set_int(v, 1, BENCH_MAX_CHAIN, &o->chain);
    case OPT_HOLD: return parse_hold(v, &o->hold, st->where);
    case OPT_SMS: return set_int(v, 0, INT_MAX, &o->sms);
    case OPT_VERIFY: return cli_bool(v, &o->verify);
    case CLI_ARGUMENT: return 0; /* bench gemm takes no arguments: cli_parse says so */
    default: break;
    }
    if (!st->run) {
        fprintf(stderr, "tessera bench gemm: %s--%s belongs on the command line, not in a suite's line\n", st->where,
                bench_gemm_options[index].name);
        return -1;
    }
    switch (index) {
    case OPT_SUITE: return (st->run->suite = v), 1;
    case OPT_OUTPUT: return (st->run->output = v), 1;
    default: return (st->run->dry_run = 1); /* OPT_DRY_RUN */
    }
}

int bench_parse_args(int argc, char **argv, bench_options *o, bench_run *run) {
    defaults(o);
    memset(run, 0, sizeof *run);
    parse_state st = {o, run, ""};
    return cli_parse(&bench_gemm_command, argc, argv, apply, &st);
}

/* Most words in a suite's line. */
#define MAX_LINE_WORDS 32

int bench_suite_defaults(int argc, char **argv, bench_options *o, bench_run *run) {
    FILE *f = fopen(run->suite, "r");
    if (!f)
        return 0; /* bench_suite says it cannot read the file */
    char line[1024];
    int number = 1, found = 0;
    for (; fgets(line, sizeof line, f); number++)
        if (strncmp(line, "#!", 2) == 0) {
            found = 1;
            break;
        }
    fclose(f);
    if (!found)
        return 0;
    defaults(o);
    if (bench_parse_line(line + 2, run->suite, number, o) < 0)
        return -1;
    const char *suite = run->suite; /* argv's, re-read below */
    memset(run, 0, sizeof *run);
    parse_state st = {o, run, ""};
    if (cli_parse(&bench_gemm_command, argc, argv, apply, &st) != CLI_OK)
        return -1;
    run->suite = suite;
    return 0;
}

int bench_parse_line(char *line, const char *suite, int number, bench_options *o) {
    char *words[MAX_LINE_WORDS + 1] = {"suite line"}; /* words[0] stands for the command's word */
    int n = 1;
    for (char *tok = strtok(line, " \t\r\n"); tok && tok[0] != '#'; tok = strtok(NULL, " \t\r\n")) {
        if (n == MAX_LINE_WORDS + 1) {
            fprintf(stderr, "tessera bench gemm: %s:%d: more than %d words\n", suite, number, MAX_LINE_WORDS);
            return -1;
        }
        words[n++] = tok;
    }
    if (n == 1)
        return 0;
    char where[512], prefix[520];
    snprintf(where, sizeof where, "%s:%d", suite, number);
    snprintf(prefix, sizeof prefix, "%s: ", where);
    cli_command cmd = bench_gemm_command;
    cmd.where = where;
    o->nm = o->nn = o->nk = 0;
    parse_state st = {o, NULL, prefix};
    return cli_parse(&cmd, n, words, apply, &st) == CLI_OK ? 1 : -1;
}

const char *bench_order_name(tess_order order) { return order == TESS_ORDER_ROW ? "row" : "col"; }

const char *bench_scale_name(int mode) {
    static const tess_named names[] = {
        {TESS_SCALE_TENSOR, "tensor"},
        {TESS_SCALE_OUTER_VEC, "outer"},
        {TESS_SCALE_BLOCK_1x128, "1x128"},
        {TESS_SCALE_BLOCK_128x128, "128x128"},
    };
    return TESS_NAME_OF(names, mode, "none");
}

const char *bench_bias_name(int mode) { return TESS_NAME_OF(bias_names, mode, "invalid"); }

const char *bench_act_name(int act) { return TESS_NAME_OF(act_names, act, "invalid"); }

const char *bench_gate_name(int gate) { return TESS_NAME_OF(gate_names, gate, "invalid"); }

tess_dtype bench_bias_type(const bench_options *o) {
    if (o->bias_type >= 0)
        return (tess_dtype)o->bias_type;
    return o->td == TESS_DTYPE_BF16 || o->td == TESS_DTYPE_F16 ? o->td : TESS_DTYPE_F32;
}

void bench_b_type_name(const bench_options *o, char *buf, size_t cap) {
    if (o->b_int4)
        snprintf(buf, cap, "int4g%d%s", o->int4_group, o->int4_zeros ? "z" : "");
    else
        snprintf(buf, cap, "%s", tess_dtype_name(o->tb));
}

void bench_problem_label(const bench_options *o, int64_t m, int64_t n, int64_t k, char *buf, size_t cap) {
    char scales[48] = "", bias[40] = "", act[24] = "", gate[48] = "", out[32] = "";
    const char *residual = o->residual ? (o->aux ? " residual aux" : " residual") : o->aux ? " aux" : "";
    if (o->td == TESS_DTYPE_E4M3 || o->td == TESS_DTYPE_E5M2)
        snprintf(out, sizeof out, " out:%s%s", bench_scale_name(o->out_scale), o->amax ? " amax" : "");
    if (o->scale_a >= 0 || o->scale_b >= 0)
        snprintf(scales, sizeof scales, " s:%s,%s%s", bench_scale_name(o->scale_a), bench_scale_name(o->scale_b),
                 o->fast_accum ? " fast" : "");
    if (o->bias != TESS_BIAS_NONE)
        snprintf(bias, sizeof bias, " bias:%s:%s", bench_bias_name(o->bias), tess_dtype_name(bench_bias_type(o)));
    if (o->act != TESS_ACT_NONE)
        snprintf(act, sizeof act, " act:%s", bench_act_name(o->act));
    if (o->gate != TESS_GATE_NONE && o->gate_limit > 0.0f)
        snprintf(gate, sizeof gate, " gate:%s:%g", bench_gate_name(o->gate), o->gate_limit);
    else if (o->gate != TESS_GATE_NONE)
        snprintf(gate, sizeof gate, " gate:%s", bench_gate_name(o->gate));
    char b_type[24];
    bench_b_type_name(o, b_type, sizeof b_type);
    snprintf(buf, cap, "%lldx%lldx%lld b%lld %s:%s,%s:%s->%s:%s%s%s%s%s%s%s", (long long)m, (long long)n,
             (long long)k, (long long)o->batch, tess_dtype_name(o->ta), bench_order_name(o->oa), b_type,
             bench_order_name(o->ob), tess_dtype_name(o->td), bench_order_name(o->od), scales, bias, act, gate,
             residual, out);
}

void bench_print_dry_run(const bench_options *o) {
    char plan[80], c[48];
    if (o->all_plans)
        snprintf(plan, sizeof plan, "all");
    else if (o->plan_name)
        snprintf(plan, sizeof plan, "*%s", o->plan_name);
    else if (o->plan >= 0)
        snprintf(plan, sizeof plan, "#%d", o->plan);
    else
        snprintf(plan, sizeof plan, "planner");
    if (o->c_given)
        snprintf(c, sizeof c, "%s:%s", tess_dtype_name(o->tc), bench_order_name(o->oc));
    else
        snprintf(c, sizeof c, "D");
    for (int a = 0; a < o->nm; a++)
        for (int b = 0; b < o->nn; b++)
            for (int i = 0; i < o->nk; i++) {
                char label[200];
                bench_problem_label(o, o->m[a], o->n[b], o->k[i], label, sizeof label);
                printf("%-44s C=%s alpha=%g beta=%g providers=%s%s%s plan=%s verify=%d warmup=%d iterations=%d "
                       "rounds=%d chain=%d hold=%g\n",
                       label, c, o->alpha, o->beta, o->cublas ? "cublas" : "", o->cublas && o->tessera ? "," : "",
                       o->tessera ? "tessera" : "", plan, o->verify, o->warmup, o->iterations, o->rounds, o->chain,
                       o->hold);
            }
}
