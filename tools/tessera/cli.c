/* The `tessera` tool's option parser (cli.h): getopt_long over a command's
 * option table, with one sentence for each kind of usage error, and the
 * table printed as --help. */
#include "tools/tessera/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's `val` for the table's option i: above every character, so
 * that it never reads as a short option (optopt tells the two apart). */
#define CLI_LONG_BASE 256
/* Where --help's descriptions begin (the option column's width). */
#define CLI_HELP_COLUMN 28

/* Prints "<command>[: <where>]: <message>" as one line on stderr. */
static void complain(const cli_command *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cmd->name);
    if (cmd->where)
        fprintf(stderr, "%s: ", cmd->where);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Writes how an option is spelled with its value: --m=LIST, --verify[=BOOL], --table. */
static void spell(char *buf, size_t cap, const cli_option *o) {
    const char *value = o->value ? o->value : "VALUE";
    if (o->has_value == CLI_VALUE)
        snprintf(buf, cap, "--%s=%s", o->name, value);
    else if (o->has_value == CLI_OPTIONAL_VALUE)
        snprintf(buf, cap, "--%s[=%s]", o->name, value);
    else
        snprintf(buf, cap, "--%s", o->name);
}

/* Prints "  <lead>" and `text`'s lines from column CLI_HELP_COLUMN (below
 * the lead where the lead is too wide). */
static void print_described(FILE *out, const char *lead, const char *text) {
    int used = fprintf(out, "  %s", lead);
    if (used >= CLI_HELP_COLUMN - 1) {
        fputc('\n', out);
        used = 0;
    }
    for (const char *line = text; line;) {
        const char *end = strchr(line, '\n');
        const int len = end ? (int)(end - line) : (int)strlen(line);
        fprintf(out, "%*s%.*s\n", CLI_HELP_COLUMN - used, "", len, line);
        used = 0;
        line = end ? end + 1 : NULL;
    }
}

void cli_print_help(FILE *out, const cli_command *cmd) {
    fprintf(out, "usage: %s %s\n\noptions:\n", cmd->name, cmd->usage);
    char buf[96];
    for (const cli_option *o = cmd->options; o->name; o++) {
        spell(buf, sizeof buf, o);
        print_described(out, buf, o->help);
    }
    print_described(out, "-h, --help", "this text");
}

/* The command-line word that held the option getopt_long just returned:
 * the one before its value when the value came as a separate word. */
static const char *option_word(char **argv) {
    if (optarg && optind >= 2 && optarg == argv[optind - 1])
        return argv[optind - 2];
    return argv[optind - 1];
}

/* 1 if `word` spells --name in full (alone or with =VALUE); getopt_long also
 * takes any unambiguous beginning of a name, which is refused here. */
static int spelled_out(const char *word, const char *name) {
    const size_t n = strlen(name);
    return strncmp(word, "--", 2) == 0 && strncmp(word + 2, name, n) == 0 && (word[2 + n] == '\0' || word[2 + n] == '=');
}

/* Hands one word that is not an option to `apply`; CLI_OK, or CLI_ERROR after saying why. */
static int apply_argument(const cli_command *cmd, cli_apply_fn apply, void *ctx, const char *word) {
    const int applied = apply(ctx, CLI_ARGUMENT, word);
    if (applied == 0)
        complain(cmd, "unexpected argument '%s' (%s --help lists the options)", word, cmd->name);
    return applied == 1 ? CLI_OK : CLI_ERROR;
}

/* Says why getopt_long returned '?': an unknown option, or a known one given a value it does not take. */
static void complain_unknown(const cli_command *cmd, char **argv) {
    if (optopt >= CLI_LONG_BASE || optopt == 'h')
        complain(cmd, "--%s takes no value ('%s')", optopt == 'h' ? "help" : cmd->options[optopt - CLI_LONG_BASE].name,
                 argv[optind - 1]);
    else if (optopt > 0) /* a short option: getopt may still be inside its word */
        complain(cmd, "unknown option '-%c' (%s --help lists the options)", optopt, cmd->name);
    else
        complain(cmd, "unknown option '%s' (%s --help lists the options)", argv[optind - 1], cmd->name);
}

/* Applies the option of table index `index` that getopt_long returned; CLI_OK or CLI_ERROR. */
static int apply_option(const cli_command *cmd, cli_apply_fn apply, void *ctx, char **argv, int index) {
    const cli_option *o = &cmd->options[index];
    const char *word = option_word(argv);
    if (!spelled_out(word, o->name)) {
        complain(cmd, "'%s': write the option out in full, --%s", word, o->name);
        return CLI_ERROR;
    }
    const int applied = apply(ctx, index, optarg);
    if (applied == 0) {
        char spelled[96];
        spell(spelled, sizeof spelled, o);
        complain(cmd, "cannot use '--%s%s%s' (expected %s; %s --help says more)", o->name, optarg ? "=" : "",
                 optarg ? optarg : "", spelled, cmd->name);
    }
    return applied == 1 ? CLI_OK : CLI_ERROR;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_apply_fn apply, void *ctx) {
    int n = 0;
    while (cmd->options[n].name)
        n++;
    struct option *longopts = calloc((size_t)n + 2, sizeof *longopts);
    if (!longopts) {
        complain(cmd, "out of memory");
        return CLI_ERROR;
    }
    for (int i = 0; i < n; i++)
        longopts[i] = (struct option){cmd->options[i].name, cmd->options[i].has_value, NULL, CLI_LONG_BASE + i};
    longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
    /* optind = 0 restarts getopt's scan from scratch (glibc and musl), as a
     * second parse in one process needs (a suite's lines). "-": words that are
     * not options come back in order, as 1; ":": a missing value comes back as
     * ':'; opterr = 0: getopt prints nothing itself. */
    optind = 0;
    opterr = 0;
    int rc = CLI_OK, c;
    while (rc == CLI_OK && (c = getopt_long(argc, argv, "-:h", longopts, NULL)) != -1) {
        if (c == 1) {
            rc = apply_argument(cmd, apply, ctx, optarg);
        } else if (c == 'h') {
            const char *word = argv[optind - 1];
            if (strcmp(word, "-h") != 0 && !spelled_out(word, "help")) {
                complain(cmd, "'%s': write the option out in full, --help", word);
                rc = CLI_ERROR;
            } else {
                cli_print_help(stdout, cmd);
                rc = CLI_HELP;
            }
        } else if (c == ':') {
            if (optopt >= CLI_LONG_BASE) {
                const cli_option *o = &cmd->options[optopt - CLI_LONG_BASE];
                complain(cmd, "--%s needs a value: --%s=%s", o->name, o->name, o->value ? o->value : "VALUE");
            } else {
                complain(cmd, "'%s' needs a value", argv[optind - 1]);
            }
            rc = CLI_ERROR;
        } else if (c == '?') {
            complain_unknown(cmd, argv);
            rc = CLI_ERROR;
        } else {
            rc = apply_option(cmd, apply, ctx, argv, c - CLI_LONG_BASE);
        }
    }
    /* The words after "--" are arguments, whatever they look like. */
    for (int i = optind; rc == CLI_OK && i < argc; i++)
        rc = apply_argument(cmd, apply, ctx, argv[i]);
    free(longopts);
    return rc;
}

int cli_int(const char *text, long long lo, long long hi, long long *out) {
    if (!text || !*text)
        return 0;
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(text, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int cli_bool(const char *text, int *out) {
    static const char *const yes[] = {"true", "1", "yes", "on"}, *const no[] = {"false", "0", "no", "off"};
    if (!text)
        return (*out = 1);
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!strcmp(text, yes[i]))
            return (*out = 1);
        if (!strcmp(text, no[i]))
            return (*out = 0), 1;
    }
    return 0;
}
