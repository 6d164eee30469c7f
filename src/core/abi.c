/* Reading the caller's versioned structs (core/abi.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/abi.h"
#include "core/error.h"

tess_status tess_struct_init(void *user, size_t size, const char *what) {
    if (!user)
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s is NULL", what);
    const uint32_t struct_size = (uint32_t)size;
    memset(user, 0, size);
    memcpy(user, &struct_size, sizeof struct_size);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_struct_in(void *full, size_t size, const void *user, size_t min, const char *what,
                           const char *init) {
    uint32_t given;
    memcpy(&given, user, sizeof given);
    if (given < min)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s->struct_size=%u is smaller than any version of the struct (at least %zu); set it with %s",
                         what, given, min, init);
    for (size_t i = size; i < given; i++)
        if (((const unsigned char *)user)[i] != 0)
            return tess_fail(TESS_STATUS_INVALID_VALUE,
                             "%s->struct_size=%u: byte %zu, past this version's %zu bytes, is set: the caller uses "
                             "fields of a later tessera than this one, %s",
                             what, given, i, size, tess_version_string());
    memset(full, 0, size);
    memcpy(full, user, given < size ? given : size);
    return TESS_STATUS_SUCCESS;
}

tess_status tess_plan_accept(const tess_plan *plan, tess_plan *full, const char *caller) {
    char what[96];
    snprintf(what, sizeof what, "%s: plan", caller);
    tess_status s = tess_struct_in(full, sizeof *full, plan, TESS_PLAN_SIZE_V1, what, "the plan queries");
    if (s == TESS_STATUS_SUCCESS && !memchr(full->name, 0, sizeof full->name))
        return tess_fail(TESS_STATUS_INVALID_VALUE, "%s: the plan's name is not NUL-terminated; make plans with the "
                                                    "plan queries", caller);
    return s;
}

tess_status tess_epilogue_ptrs_in(const tess_epilogue_ptrs *ep, tess_epilogue_ptrs *full, const char *caller) {
    memset(full, 0, sizeof *full);
    if (!ep)
        return TESS_STATUS_SUCCESS;
    char what[96];
    snprintf(what, sizeof what, "%s: ep", caller);
    return tess_struct_in(full, sizeof *full, ep, TESS_EPILOGUE_PTRS_SIZE_V1, what, "sizeof(tess_epilogue_ptrs)");
}

tess_status tess_epilogue_ptrs_no_aux(const tess_epilogue_ptrs *ep, const char *caller) {
    if (ep->aux)
        return tess_fail(TESS_STATUS_INVALID_VALUE,
                         "%s: ep's aux is set, but only a dense GEMM (tess_gemm_fused with tess_gemm_desc.aux) writes "
                         "an aux output; leave it NULL",
                         caller);
    return TESS_STATUS_SUCCESS;
}
