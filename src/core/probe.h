/* Internal: whether this build holds machine code that runs on a device. */
#ifndef TESS_CORE_PROBE_H
#define TESS_CORE_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The SASS version (e.g. 90) of this build's code for `device`, 0 if the
 * build holds none for it. The current device is restored afterwards. */
int tess_probe_native_arch(int device);

#ifdef __cplusplus
}
#endif

#endif
