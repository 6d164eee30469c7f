/* `tessera`: the command-line tool (device info, benchmarks, the layout calculator). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"
#include "tools/tessera/commands.h"

/* The commands, then every command's options (the same text as each one's --help). */
static void usage(FILE *out) {
    fprintf(out,
            "usage: tessera <command> [options]\n"
            "\n"
            "commands:\n"
            "  info                        the GPU, and which kernel families this build runs on it\n"
            "  bench copy                  device-to-device copy bandwidth (the memory ceiling)\n"
            "  bench gemm                  tessera vs cuBLASLt, with SM MHz, board W, TF/s per GHz and TF/J\n"
            "  layout                      the layout algebra calculator\n"
            "  version, --version          library version and the GPU architectures built\n"
            "  help, --help, -h            this text\n"
            "\n"
            "`tessera <command> --help` prints one command's part of what follows.\n");
    const cli_command *commands[] = {&info_command, &bench_copy_command, &bench_gemm_command, &layout_command};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        fputc('\n', out);
        cli_print_help(out, commands[i]);
    }
}

int query_device(int device, tess_device_info *info, const char *cmd) {
    tess_handle h = NULL;
    if (tess_create(&h, device) != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "%s: %s\n", cmd, tess_last_error());
        return 1;
    }
    info->struct_size = sizeof *info;
    tess_status s = tess_get_device_info(h, info);
    tess_destroy(h);
    if (s != TESS_STATUS_SUCCESS) {
        fprintf(stderr, "%s: %s\n", cmd, tess_last_error());
        return 1;
    }
    return 0;
}

long long parse_size(const char *text) {
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (end == text || v < 0)
        return -1;
    switch (*end) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    return *end == '\0' ? v : -1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "layout") == 0)
        return cmd_layout(argc - 1, argv + 1);
    const int version = strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0;
    const int help = strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0;
    if ((version || help) && argc > 2) {
        fprintf(stderr, "tessera: %s takes nothing after it ('%s')\n", cmd, argv[2]);
        return 2;
    }
    if (version) {
        printf("tessera %s\n", tess_version_string());
        return 0;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "tessera: unknown %s '%s' (tessera --help lists them)\n", cmd[0] == '-' ? "option" : "command",
            cmd);
    return 2;
}
