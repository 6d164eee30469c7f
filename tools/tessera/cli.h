/* Options of the `tessera` tool's commands. Each command lists its options in
 * one table; cli_parse reads the command line with getopt_long from that
 * table and cli_print_help prints the same table as the command's --help, so
 * an option parses exactly when its help lists it. */
#ifndef TESS_TOOLS_CLI_H
#define TESS_TOOLS_CLI_H

#include <stdio.h>

/* Whether an option takes a value: --name, --name=VALUE (or --name VALUE), or
 * either of --name and --name=VALUE (never a separate word). getopt_long's
 * no_argument, required_argument and optional_argument. */
enum { CLI_NO_VALUE = 0, CLI_VALUE = 1, CLI_OPTIONAL_VALUE = 2 };

typedef struct cli_option {
    const char *name;  /* written --name */
    int has_value;     /* CLI_NO_VALUE, CLI_VALUE or CLI_OPTIONAL_VALUE */
    const char *value; /* the value's placeholder in --help ("LIST"); NULL without a value */
    const char *help;  /* what it does; '\n' starts another line */
} cli_option;

typedef struct cli_command {
    const char *name;          /* "tessera bench gemm": begins every message and the usage */
    const char *usage;         /* what follows the name in the usage line, then lines about it */
    const cli_option *options; /* ends with {NULL} */
    const char *where;         /* where the words came from, after the name in messages ("FILE:LINE"), or NULL */
} cli_command;

/* The index given to cli_apply_fn for a word that is not an option (an
 * expression, a subcommand's name). */
#define CLI_ARGUMENT (-1)

/* Applies one option, in command-line order: `index` into the command's
 * options (or CLI_ARGUMENT), `value` as written (NULL where none was given).
 * Returns 1 when applied, 0 when the value (or the argument) is not one it
 * takes (cli_parse then says so), -1 after printing its own sentence. */
typedef int (*cli_apply_fn)(void *ctx, int index, const char *value);

/* What cli_parse found: every option applied; --help printed (exit 0); or a
 * usage error, printed as one sentence (exit 2). */
enum { CLI_OK = 0, CLI_HELP = 1, CLI_ERROR = 2 };

/* Parses argv[1..argc) (argv[0] is the command's own word) against cmd's
 * options, calling `apply` for each; -h and --help print the help to
 * stdout. Options must be written out in full (no abbreviations, so that a
 * new option never changes what an old command line means). */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_apply_fn apply, void *ctx);

/* Prints cmd's usage line, its lines about it, and one line per option. */
void cli_print_help(FILE *out, const cli_command *cmd);

/* Values shared by several commands: a whole decimal integer in [lo, hi]
 * (1, or 0 when malformed), and a boolean (true/false, 1/0, yes/no, on/off;
 * NULL, a flag written without a value, is true). */
int cli_int(const char *text, long long lo, long long hi, long long *out);
int cli_bool(const char *text, int *out);

#endif
