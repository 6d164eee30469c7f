/* Internal: predicates on element types, shared by the API checks and the families. */
#ifndef TESS_CORE_DTYPE_H
#define TESS_CORE_DTYPE_H

#include "core/hd.h"
#include "tessera.h"

/* bf16 or f16: the 16-bit tensor-core inputs. */
TESS_HD int tess_dtype_is_16bit(tess_dtype t) { return t == TESS_DTYPE_BF16 || t == TESS_DTYPE_F16; }

/* e4m3 or e5m2. */
TESS_HD int tess_dtype_is_fp8(tess_dtype t) { return t == TESS_DTYPE_E4M3 || t == TESS_DTYPE_E5M2; }

#endif
