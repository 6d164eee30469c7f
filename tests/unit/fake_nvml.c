/* A stand-in for libnvidia-ml.so.1 with fixed readings, so that the energy
 * meter's sampling path runs on machines without a GPU: one device at
 * FAKE_SM_MHZ drawing FAKE_BOARD_MW, its energy counter advancing with the
 * monotonic clock at that power; with FAKE_NVML_NO_ENERGY set in the
 * environment the counter answers "not supported" (NVML_ERROR_NOT_SUPPORTED). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdlib.h>
#include <time.h>

#define FAKE_SM_MHZ 1500u
#define FAKE_BOARD_MW 400000u
#define FAKE_LIMIT_MW 700000u
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3

typedef struct nvml_device_st *nvml_device;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvml_device *device);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvml_device *device);
int nvmlDeviceGetClockInfo(nvml_device device, int type, unsigned *mhz);
int nvmlDeviceGetPowerUsage(nvml_device device, unsigned *mw);
int nvmlDeviceGetTotalEnergyConsumption(nvml_device device, unsigned long long *mj);
int nvmlDeviceGetEnforcedPowerLimit(nvml_device device, unsigned *mw);

static int the_device; /* its address is the one device's handle */

int nvmlInit_v2(void) { return NVML_SUCCESS; }
int nvmlShutdown(void) { return NVML_SUCCESS; }

int nvmlDeviceGetCount_v2(unsigned *count) {
    *count = 1;
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvml_device *device) {
    *device = (nvml_device)&the_device;
    return index == 0 ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

/* Any bus id names the one device (a GPU machine's CUDA finds one). */
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvml_device *device) {
    (void)bus;
    *device = (nvml_device)&the_device;
    return NVML_SUCCESS;
}

int nvmlDeviceGetClockInfo(nvml_device device, int type, unsigned *mhz) {
    (void)device;
    *mhz = type == 1 ? FAKE_SM_MHZ : 0u; /* 1: NVML_CLOCK_SM */
    return NVML_SUCCESS;
}

int nvmlDeviceGetPowerUsage(nvml_device device, unsigned *mw) {
    (void)device;
    *mw = FAKE_BOARD_MW;
    return NVML_SUCCESS;
}

int nvmlDeviceGetTotalEnergyConsumption(nvml_device device, unsigned long long *mj) {
    (void)device;
    if (getenv("FAKE_NVML_NO_ENERGY"))
        return NVML_ERROR_NOT_SUPPORTED;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    /* W x ms = mJ: the power times the clock in milliseconds. */
    *mj = (unsigned long long)((double)FAKE_BOARD_MW / 1000.0 * ((double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6));
    return NVML_SUCCESS;
}

int nvmlDeviceGetEnforcedPowerLimit(nvml_device device, unsigned *mw) {
    (void)device;
    *mw = FAKE_LIMIT_MW;
    return NVML_SUCCESS;
}
