/* Internal: the device rates every family's cost model builds on (its peak
 * SM clock and memory rate, and what of them large kernels sustain), so
 * that the families' estimates are in the same seconds and can be ranked
 * together. Where no device is given (the CPU tests), an H100 SXM's. */
#ifndef TESS_CORE_COST_H
#define TESS_CORE_COST_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SMs assumed where no device is asked (the CPU tests): an H100's or H200's 132. */
#define TESS_DEFAULT_SMS 132
/* Sustained fractions of the device's peaks, measured on an H100: the SM
 * clock under tensor-core load settles near 0.8 of its peak (1.57-1.59 of
 * 1.98 GHz, power-bound), and a device-to-device copy moves 0.9 of the
 * memory's peak bytes (2994 of 3352 GB/s; bench/results/h100-dense.csv and
 * `tessera bench copy`). */
#define TESS_SUSTAINED_CLOCK 0.8
#define TESS_SUSTAINED_MEMORY 0.9
/* How far the shorter of compute and memory time fails to hide under the
 * longer one: the tie-break between plans that stream the same bytes,
 * favouring the one that computes fewer padded rows. */
#define TESS_OVERLAP_LOSS 0.25

/* The device's SMs (TESS_DEFAULT_SMS where none is asked). */
int tess_device_sms(const tess_device_info *info);
/* The device's L2 cache, bytes. */
double tess_device_l2_bytes(const tess_device_info *info);
/* The device's peak SM clock, Hz. */
double tess_device_sm_hz(const tess_device_info *info);
/* The device's peak memory rate, bytes/s (DDR: two transfers a clock). */
double tess_device_memory_bytes_per_s(const tess_device_info *info);
/* Seconds to move `bytes` through memory at the sustained copy rate. */
double tess_memory_seconds(const tess_device_info *info, double bytes);
/* What one SM draws from L2, bytes/s. */
double tess_l2_bytes_per_sm_s(const tess_device_info *info);
/* Seconds for the SMs to read `bytes` from L2 (tile loads that hit). */
double tess_l2_read_seconds(const tess_device_info *info, double bytes);
/* The time of compute and memory work that overlap: the longer, plus
 * TESS_OVERLAP_LOSS of the shorter. */
double tess_overlapped_seconds(double compute, double memory);

#ifdef __cplusplus
}
#endif

#endif
