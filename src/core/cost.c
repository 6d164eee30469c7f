/* The device rates of core/cost.h. */
#include "core/cost.h"

/* Where no device is asked (CPU tests): an H100 SXM's peaks. */
#define TESS_DEFAULT_SM_HZ 1.98e9
#define TESS_DEFAULT_MEMORY_BYTES_PER_S 3.352e12
/* L2 bytes where no device is asked: an H100's 50 MB. */
#define TESS_DEFAULT_L2_BYTES 50e6
/* What the SMs draw from L2 together, in bytes per SM per clock at the peak
 * SM clock: fitted to grouped kernels whose tiles re-read weights from L2
 * (H200, 4096x7168, G=256 x 16 tokens, 128-row tiles: bf16 22.5 GB of tile
 * loads in 3.64 ms, 6.2 TB/s; FP8 12.9 GB in 2.01 ms, 6.4 TB/s; 132 SMs at
 * 1.98 GHz; bench/results/h200-moe.csv), well below L2's nominal rate. */
#define TESS_L2_BYTES_PER_SM_CLOCK 24.0

int tess_device_sms(const tess_device_info *info) {
    return info && info->sm_count > 0 ? info->sm_count : TESS_DEFAULT_SMS;
}

double tess_device_l2_bytes(const tess_device_info *info) {
    return info && info->l2_bytes ? (double)info->l2_bytes : TESS_DEFAULT_L2_BYTES;
}

double tess_device_sm_hz(const tess_device_info *info) {
    return info && info->sm_clock_khz > 0 ? info->sm_clock_khz * 1e3 : TESS_DEFAULT_SM_HZ;
}

double tess_device_memory_bytes_per_s(const tess_device_info *info) {
    return info && info->mem_clock_khz > 0 ? 2.0 * info->mem_clock_khz * 1e3 * info->mem_bus_width_bits / 8
                                           : TESS_DEFAULT_MEMORY_BYTES_PER_S;
}

double tess_memory_seconds(const tess_device_info *info, double bytes) {
    return bytes / (tess_device_memory_bytes_per_s(info) * TESS_SUSTAINED_MEMORY);
}

double tess_l2_bytes_per_sm_s(const tess_device_info *info) {
    return TESS_L2_BYTES_PER_SM_CLOCK * tess_device_sm_hz(info);
}

double tess_l2_read_seconds(const tess_device_info *info, double bytes) {
    return bytes / (tess_device_sms(info) * tess_l2_bytes_per_sm_s(info));
}

double tess_overlapped_seconds(double compute, double memory) {
    return compute > memory ? compute + TESS_OVERLAP_LOSS * memory : memory + TESS_OVERLAP_LOSS * compute;
}
