/* `tessera info`: what the GPU is and what this build can run on it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "tessera.h"
#include "tools/tessera/commands.h"

/* Prints the kernel families in `mask`, or a note that there are none. */
static void print_families(uint32_t mask) {
    if (!mask) {
        printf("none in this build for this device\n");
        return;
    }
    const char *sep = "";
    for (uint32_t bit = 1; bit != 0 && bit <= mask; bit <<= 1) {
        if (mask & bit) {
            printf("%s%s", sep, tess_kernel_family_name((tess_kernel_family)bit));
            sep = ", ";
        }
    }
    printf("\n");
}

static const cli_option info_options[] = {
    {"device", CLI_VALUE, "N", "the CUDA device to describe; default 0"},
    {NULL, 0, NULL, NULL},
};

const cli_command info_command = {
    "tessera info",
    "[--device=N]\n"
    "The GPU (SMs, shared memory, L2, clocks, compute capability) and the kernel\n"
    "families this build runs on it; without a GPU, one line saying why (exit 1).",
    info_options,
    NULL,
};

/* cli_apply_fn of `tessera info`: its one option, --device. */
static int apply_info(void *ctx, int index, const char *value) {
    long long device;
    if (index != 0 || !cli_int(value, 0, INT_MAX, &device))
        return 0;
    *(int *)ctx = (int)device;
    return 1;
}

int cmd_info(int argc, char **argv) {
    int device = 0;
    const int parsed = cli_parse(&info_command, argc, argv, apply_info, &device);
    if (parsed != CLI_OK)
        return parsed == CLI_HELP ? 0 : 2;
    tess_device_info d;
    if (query_device(device, &d, "tessera info"))
        return 1;
    /* Peak DRAM rate: two transfers per memory clock (DDR) over the bus width. */
    double peak_gbs = 2.0 * d.mem_clock_khz * 1e3 * (d.mem_bus_width_bits / 8.0) / 1e9;
    printf("device %d: %s\n", d.device, d.name);
    printf("  compute capability  %d.%d\n", d.cc_major, d.cc_minor);
    printf("  multiprocessors     %d\n", d.sm_count);
    printf("  shared memory       %zu KiB per block (opt-in), %zu KiB per SM\n", d.smem_per_block_optin >> 10,
           d.smem_per_sm >> 10);
    printf("  L2 cache            %zu MiB\n", d.l2_bytes >> 20);
    printf("  global memory       %.1f GiB\n", d.global_mem_bytes / (double)(1 << 30));
    printf("  clocks (peak)       SM %d MHz, memory %d MHz x %d bits (%.0f GB/s)\n", d.sm_clock_khz / 1000,
           d.mem_clock_khz / 1000, d.mem_bus_width_bits, peak_gbs);
    printf("  driver / runtime    %d.%d / %d.%d\n", d.driver_version / 1000, d.driver_version % 1000 / 10,
           d.runtime_version / 1000, d.runtime_version % 1000 / 10);
    printf("  library             tessera %s\n", tess_version_string());
    printf("  native code here    %s\n", d.has_native_code ? "yes" : "no (this build has no code for this GPU)");
    printf("  kernel families     ");
    print_families(d.kernel_families);
    return 0;
}
