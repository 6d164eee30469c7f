/* Element types: sizes, names and name parsing. */
#include <string.h>

#include "core/error.h"

TESS_API size_t tess_dtype_size(tess_dtype dtype) {
    switch (dtype) {
    case TESS_DTYPE_F32: return 4;
    case TESS_DTYPE_F16:
    case TESS_DTYPE_BF16: return 2;
    case TESS_DTYPE_E4M3:
    case TESS_DTYPE_E5M2: return 1;
    }
    return 0;
}

TESS_API const char *tess_dtype_name(tess_dtype dtype) {
    switch (dtype) {
    case TESS_DTYPE_F32: return "f32";
    case TESS_DTYPE_F16: return "f16";
    case TESS_DTYPE_BF16: return "bf16";
    case TESS_DTYPE_E4M3: return "e4m3";
    case TESS_DTYPE_E5M2: return "e5m2";
    }
    return "invalid";
}

/* Every spelling accepted for each type: tessera's own name first, then the
 * aliases users bring from PyTorch, NumPy-style names and CUDA. */
static const struct {
    const char *name;
    tess_dtype dtype;
} dtype_aliases[] = {
    {"f32", TESS_DTYPE_F32},        {"float32", TESS_DTYPE_F32},       {"float", TESS_DTYPE_F32},
    {"f16", TESS_DTYPE_F16},        {"float16", TESS_DTYPE_F16},       {"half", TESS_DTYPE_F16},
    {"fp16", TESS_DTYPE_F16},       {"bf16", TESS_DTYPE_BF16},         {"bfloat16", TESS_DTYPE_BF16},
    {"e4m3", TESS_DTYPE_E4M3},      {"float8_e4m3fn", TESS_DTYPE_E4M3}, {"fp8_e4m3", TESS_DTYPE_E4M3},
    {"e4m3fn", TESS_DTYPE_E4M3},    {"e5m2", TESS_DTYPE_E5M2},         {"float8_e5m2", TESS_DTYPE_E5M2},
    {"fp8_e5m2", TESS_DTYPE_E5M2},
};

TESS_API tess_status tess_dtype_from_name(const char *name, tess_dtype *dtype) {
    if (!name || !dtype)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "tess_dtype_from_name: name and dtype must not be NULL");
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++) {
        if (strcmp(name, dtype_aliases[i].name) == 0) {
            *dtype = dtype_aliases[i].dtype;
            return TESS_STATUS_SUCCESS;
        }
    }
    return tess_fail(TESS_STATUS_INVALID_VALUE,
                     "unknown data type '%s': use one of f32, f16, bf16, e4m3, e5m2", name);
}
