/* Library version, as a number and as text naming the architectures built. */
#include "build_info.h"
#include "tessera.h"

TESS_API int tess_version(void) { return TESS_VERSION; }

TESS_API const char *tess_version_string(void) {
    return TESS_VERSION_TEXT " (cuda archs " TESS_CUDA_ARCHS_TEXT ")";
}
