/* NVML clock and power sampling around timed sections; see energy.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep, pthreads */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "tools/tessera/energy.h"

/* The few NVML declarations used, written out so that nvml.h is not needed.
 * nvmlReturn_t is an enum of which only success is told apart. */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
/* NVML_SUCCESS: the call succeeded. */
#define NVML_OK 0
/* NVML_CLOCK_SM (nvmlClockType_t): the streaming multiprocessors' clock. */
#define NVML_CLOCK_SM 1

/* The NVML entry points, resolved from the loaded library. */
typedef struct nvml_api {
    nvml_return (*init)(void);                                 /* nvmlInit_v2 */
    nvml_return (*shutdown)(void);                             /* nvmlShutdown */
    nvml_return (*count)(unsigned *);                          /* nvmlDeviceGetCount_v2 */
    nvml_return (*by_index)(unsigned, nvml_device *);          /* nvmlDeviceGetHandleByIndex_v2 */
    nvml_return (*by_pci)(const char *, nvml_device *);        /* nvmlDeviceGetHandleByPciBusId_v2 */
    nvml_return (*clock)(nvml_device, int, unsigned *);        /* nvmlDeviceGetClockInfo: MHz */
    nvml_return (*power)(nvml_device, unsigned *);             /* nvmlDeviceGetPowerUsage: mW */
    nvml_return (*energy)(nvml_device, unsigned long long *);  /* nvmlDeviceGetTotalEnergyConsumption: mJ */
    nvml_return (*limit)(nvml_device, unsigned *);             /* nvmlDeviceGetEnforcedPowerLimit: mW */
} nvml_api;

struct energy_meter {
    void *library; /* dlopen handle; NULL where NVML is missing */
    int initialized;
    nvml_api api;
    nvml_device device;
    int available;
    char why[200];
    /* The open window. */
    int open, thread_running;
    pthread_t thread;
    atomic_int stop;
    double t0;
    unsigned long long e0;
    int e0_ok;
    double mhz_sum, w_sum; /* written by the sampler thread only while it runs */
    int samples;
};

/* Seconds on a monotonic clock. */
static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Resolves `name` into *fn (a function pointer of any type); 0 if absent. */
static int resolve(void *library, const char *name, void *fn, size_t size) {
    void *p = dlsym(library, name);
    if (p)
        memcpy(fn, &p, size); /* object to function pointer, as POSIX permits */
    return p != NULL;
}

/* Loads NVML and resolves every entry point; 0 (with m->why) if any is missing. */
static int load(energy_meter *m, const char *library) {
    m->library = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!m->library) {
        snprintf(m->why, sizeof m->why, "NVML not found (%s)", library);
        return 0;
    }
    nvml_api *a = &m->api;
    const struct {
        const char *name;
        void *slot;
        size_t size;
    } entries[] = {
        {"nvmlInit_v2", &a->init, sizeof a->init},
        {"nvmlShutdown", &a->shutdown, sizeof a->shutdown},
        {"nvmlDeviceGetCount_v2", &a->count, sizeof a->count},
        {"nvmlDeviceGetHandleByIndex_v2", &a->by_index, sizeof a->by_index},
        {"nvmlDeviceGetHandleByPciBusId_v2", &a->by_pci, sizeof a->by_pci},
        {"nvmlDeviceGetClockInfo", &a->clock, sizeof a->clock},
        {"nvmlDeviceGetPowerUsage", &a->power, sizeof a->power},
        {"nvmlDeviceGetTotalEnergyConsumption", &a->energy, sizeof a->energy},
        {"nvmlDeviceGetEnforcedPowerLimit", &a->limit, sizeof a->limit},
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        if (!resolve(m->library, entries[i].name, entries[i].slot, entries[i].size)) {
            snprintf(m->why, sizeof m->why, "%s lacks %s", library, entries[i].name);
            return 0;
        }
    return 1;
}

/* Finds the NVML device of CUDA device `cuda_device`: by PCI bus id, or, where
 * CUDA cannot say it, device 0 of a machine NVML sees one GPU in. */
static int find_device(energy_meter *m, int cuda_device) {
    char bus[32] = "";
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, cuda_device) == cudaSuccess &&
        m->api.by_pci(bus, &m->device) == NVML_OK)
        return 1;
    unsigned count = 0;
    if (cuda_device == 0 && m->api.count(&count) == NVML_OK && count == 1 && m->api.by_index(0, &m->device) == NVML_OK)
        return 1;
    snprintf(m->why, sizeof m->why, "NVML has no device for CUDA device %d%s%s", cuda_device, bus[0] ? " at " : "",
             bus);
    return 0;
}

energy_meter *energy_open_library(const char *library, int cuda_device) {
    energy_meter *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    atomic_init(&m->stop, 0);
    if (!load(m, library))
        return m;
    if (m->api.init() != NVML_OK) {
        snprintf(m->why, sizeof m->why, "nvmlInit_v2 failed");
        return m;
    }
    m->initialized = 1;
    m->available = find_device(m, cuda_device);
    return m;
}

energy_meter *energy_open(int cuda_device) { return energy_open_library("libnvidia-ml.so.1", cuda_device); }

int energy_available(const energy_meter *m) { return m && m->available; }

const char *energy_why(const energy_meter *m) {
    return !m ? "no meter (out of memory)" : m->available ? "" : m->why;
}

double energy_power_limit_w(const energy_meter *m) {
    unsigned mw = 0;
    return energy_available(m) && m->api.limit(m->device, &mw) == NVML_OK ? mw / 1000.0 : NAN;
}

/* Adds one clock and power sample to the open window (when both answer). */
static void sample(energy_meter *m) {
    unsigned mhz = 0, mw = 0;
    if (m->api.clock(m->device, NVML_CLOCK_SM, &mhz) == NVML_OK && m->api.power(m->device, &mw) == NVML_OK) {
        m->mhz_sum += mhz;
        m->w_sum += mw / 1000.0;
        m->samples++;
    }
}

/* The sampler thread: a sample every ENERGY_PERIOD_MS until asked to stop. */
static void *sampler(void *arg) {
    energy_meter *m = arg;
    const struct timespec period = {0, ENERGY_PERIOD_MS * 1000000L};
    while (!atomic_load(&m->stop)) {
        nanosleep(&period, NULL);
        if (!atomic_load(&m->stop))
            sample(m);
    }
    return NULL;
}

int energy_start(energy_meter *m) {
    if (!energy_available(m) || m->open)
        return -1;
    m->mhz_sum = m->w_sum = 0.0;
    m->samples = 0;
    atomic_store(&m->stop, 0);
    m->t0 = now_seconds();
    m->e0_ok = m->api.energy(m->device, &m->e0) == NVML_OK;
    sample(m); /* a window shorter than a period still has this one and the last */
    m->open = 1;
    /* Without the thread the window still has its first and last samples. */
    m->thread_running = pthread_create(&m->thread, NULL, sampler, m) == 0;
    return 0;
}

/* Fills *w with NaN: nothing measured. */
static void unmeasured(energy_window *w) {
    w->mean_sm_mhz = w->mean_board_w = w->joules = w->seconds = NAN;
    w->samples = w->from_counter = 0;
}

void energy_stop(energy_meter *m, energy_window *out) {
    unmeasured(out);
    if (!m || !m->open)
        return;
    if (m->thread_running) {
        atomic_store(&m->stop, 1);
        pthread_join(m->thread, NULL);
        m->thread_running = 0;
    }
    sample(m);
    unsigned long long e1 = 0;
    const int e1_ok = m->api.energy(m->device, &e1) == NVML_OK;
    const double seconds = now_seconds() - m->t0;
    m->open = 0;
    out->seconds = seconds;
    out->samples = m->samples;
    if (m->samples == 0)
        return;
    out->mean_sm_mhz = m->mhz_sum / m->samples;
    if (m->e0_ok && e1_ok && e1 > m->e0 && seconds >= ENERGY_COUNTER_MIN_SECONDS) {
        out->joules = (double)(e1 - m->e0) / 1000.0;
        out->from_counter = 1;
    } else {
        out->joules = m->w_sum / m->samples * seconds;
    }
    out->mean_board_w = seconds > 0 ? out->joules / seconds : m->w_sum / m->samples;
}

void energy_close(energy_meter *m) {
    if (!m)
        return;
    if (m->open) {
        energy_window ignored;
        energy_stop(m, &ignored);
    }
    if (m->initialized)
        m->api.shutdown();
    if (m->library)
        dlclose(m->library);
    free(m);
}

void energy_window_merge(energy_window *sum, const energy_window *w) {
    if (sum->samples == 0 && sum->seconds == 0.0) { /* empty: the total is w */
        *sum = *w;
        return;
    }
    const int samples = sum->samples + w->samples;
    /* A window without samples leaves the total's clock unmeasured. */
    sum->mean_sm_mhz = sum->samples && w->samples
                           ? (sum->mean_sm_mhz * sum->samples + w->mean_sm_mhz * w->samples) / samples
                           : NAN;
    sum->joules += w->joules;
    sum->seconds += w->seconds;
    sum->mean_board_w = sum->joules / sum->seconds;
    sum->samples = samples;
    sum->from_counter = sum->from_counter && w->from_counter;
}
