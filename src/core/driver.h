/* Internal: CUDA driver-API functions (tensor maps) reached through the
 * runtime's cudaGetDriverEntryPointByVersion, so that nothing links libcuda and
 * the library loads on machines with no driver at all. */
#ifndef TESS_CORE_DRIVER_H
#define TESS_CORE_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The driver's cuTensorMapEncodeTiled (ABI of CUDA 12.0), looked up once per
 * process. Fails with NO_DEVICE and a sentence where the driver lacks it. */
tess_status tess_driver_tensor_map_encode_tiled(PFN_cuTensorMapEncodeTiled_v12000 *fn);

/* The driver's cuTensorMapReplaceAddress (ABI of CUDA 12.0): an encoded
 * map's base address changed in place, looked up once per process. */
tess_status tess_driver_tensor_map_replace_address(PFN_cuTensorMapReplaceAddress_v12000 *fn);

#ifdef __cplusplus
}
#endif

#endif
