/* The subcommands of the `tessera` command-line tool. Each takes the words
 * from its own name on (argv[0] is "info", "bench", ...) and returns the
 * process exit code: 0, 1 when the work failed, 2 for a usage error. */
#ifndef TESS_TOOLS_COMMANDS_H
#define TESS_TOOLS_COMMANDS_H

#include "tools/tessera/cli.h"

int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_layout(int argc, char **argv);
/* `tessera bench gemm` (bench_gemm.c), from "gemm" on. */
int bench_gemm(int argc, char **argv);

/* The commands' options, for `tessera --help` (each also prints its own --help). */
extern const cli_command info_command, bench_copy_command, bench_gemm_command, layout_command;

/* Fills `info` for `device`; on failure prints "<cmd>: <sentence>" on one line and returns 1. */
struct tess_device_info;
int query_device(int device, struct tess_device_info *info, const char *cmd);

/* Parses a non-negative integer with an optional K/M/G (binary) suffix; -1 if malformed. */
long long parse_size(const char *text);

#endif
