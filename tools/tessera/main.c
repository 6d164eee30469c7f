/* `tessera`: the command-line tool (device info, benchmarks; later the layout calculator). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"
#include "tools/tessera/commands.h"

static void usage(FILE *out) {
    fprintf(out,
            "usage: tessera <command> [options]\n"
            "\n"
            "commands:\n"
            "  info [--device N]           the GPU, and which kernel families this build runs on it\n"
            "  bench copy [--bytes N] [--iterations N] [--device N]\n"
            "                              device-to-device copy bandwidth (the memory ceiling)\n"
            "  bench gemm --m M --n N --k K [--A=bf16:row --B=bf16:col --D=bf16:row ...] [--hold=SECONDS]\n"
            "                              tessera vs cuBLASLt, with SM MHz, board W, TF/s per GHz and TF/J;\n"
            "                              --hold: each provider held SECONDS (at most 60) at the power cap\n"
            "                              (see tools/tessera/bench_gemm.c for all flags)\n"
            "  layout EXPR [--table] [--latex] [--explain COORD] [--svg FILE]\n"
            "  layout --atom NAME [--operand A|B|C] [--explain COORD] [--svg FILE]\n"
            "                              the layout algebra calculator (tessera layout --help)\n"
            "  version                     library version and the GPU architectures built\n"
            "  help                        this text\n");
}

const char *option_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] == '\0' && *i + 1 < argc)
        return argv[++*i];
    return NULL;
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
        return cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 2, argv + 2);
    if (strcmp(cmd, "layout") == 0)
        return cmd_layout(argc - 2, argv + 2);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("tessera %s\n", tess_version_string());
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "tessera: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
