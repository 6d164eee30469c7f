/* Element types: sizes, names and name parsing. */
#include <string.h>

#include "core/error.h"
#include "core/names.h"

TESS_API size_t tess_dtype_size(tess_dtype dtype) {
    switch (dtype) {
    case TESS_DTYPE_F32: return 4;
    case TESS_DTYPE_F16:
    case TESS_DTYPE_BF16: return 2;
    case TESS_DTYPE_E4M3:
    case TESS_DTYPE_E5M2:
    case TESS_DTYPE_S8: return 1;
    }
    return 0;
}

/* Every spelling accepted for each type: tessera's own name first (the one
 * tess_dtype_name gives), then the aliases users bring from PyTorch,
 * NumPy-style names and CUDA. */
static const tess_named dtype_names[] = {
    {TESS_DTYPE_F32, "f32"},   {TESS_DTYPE_F32, "float32"},  {TESS_DTYPE_F32, "float"},
    {TESS_DTYPE_F16, "f16"},   {TESS_DTYPE_F16, "float16"},  {TESS_DTYPE_F16, "half"},  {TESS_DTYPE_F16, "fp16"},
    {TESS_DTYPE_BF16, "bf16"}, {TESS_DTYPE_BF16, "bfloat16"},
    {TESS_DTYPE_E4M3, "e4m3"}, {TESS_DTYPE_E4M3, "float8_e4m3fn"}, {TESS_DTYPE_E4M3, "fp8_e4m3"},
    {TESS_DTYPE_E4M3, "e4m3fn"},
    {TESS_DTYPE_E5M2, "e5m2"}, {TESS_DTYPE_E5M2, "float8_e5m2"},   {TESS_DTYPE_E5M2, "fp8_e5m2"},
    {TESS_DTYPE_S8, "s8"},     {TESS_DTYPE_S8, "int8"},
};

TESS_API const char *tess_dtype_name(tess_dtype dtype) { return TESS_NAME_OF(dtype_names, dtype, "invalid"); }

TESS_API tess_status tess_dtype_from_name(const char *name, tess_dtype *dtype) {
    if (!name || !dtype)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_dtype_from_name: name and dtype must not be NULL");
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++) {
        if (strcmp(name, dtype_names[i].name) == 0) {
            *dtype = (tess_dtype)dtype_names[i].value;
            return TESS_STATUS_SUCCESS;
        }
    }
    return tess_fail(TESS_STATUS_INVALID_VALUE,
                     "unknown data type '%s': use one of f32, f16, bf16, e4m3, e5m2", name);
}
