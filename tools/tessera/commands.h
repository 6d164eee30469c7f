/* The subcommands of the `tessera` command-line tool. Each takes the
 * arguments after its name and returns the process exit code. */
#ifndef TESS_TOOLS_COMMANDS_H
#define TESS_TOOLS_COMMANDS_H

int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_layout(int argc, char **argv);
/* `tessera bench gemm` (bench_gemm.c). */
int bench_gemm(int argc, char **argv);

/* Parses "--name=value" or "--name value" at argv[*i]; returns the value (advancing
 * *i past a separate value) or NULL if argv[*i] is not that option. */
const char *option_value(int argc, char **argv, int *i, const char *name);

/* Fills `info` for `device`; on failure prints "<cmd>: <sentence>" on one line and returns 1. */
struct tess_device_info;
int query_device(int device, struct tess_device_info *info, const char *cmd);

/* Parses a non-negative integer with an optional K/M/G (binary) suffix; -1 if malformed. */
long long parse_size(const char *text);

#endif
