/* Statuses, last-error sentences, dtypes, version, and handle misuse. */
#include <string.h>

#include "check.h"
#include "core/error.h"

static const tess_status all_statuses[] = {
    TESS_STATUS_SUCCESS,        TESS_STATUS_NOT_INITIALIZED, TESS_STATUS_ALLOC_FAILED,
    TESS_STATUS_INVALID_VALUE,  TESS_STATUS_ARCH_MISMATCH,   TESS_STATUS_EXECUTION_FAILED,
    TESS_STATUS_INTERNAL_ERROR, TESS_STATUS_NOT_SUPPORTED,   TESS_STATUS_INSUFFICIENT_WORKSPACE,
    TESS_STATUS_NO_DEVICE};
#define N_STATUSES (sizeof all_statuses / sizeof all_statuses[0])

static void test_status_names(void) {
    for (size_t i = 0; i < N_STATUSES; i++) {
        const char *name = tess_status_name(all_statuses[i]);
        CHECKF(strncmp(name, "TESS_STATUS_", 12) == 0 && strcmp(name, "TESS_STATUS_UNKNOWN") != 0,
               "status %d has name %s", (int)all_statuses[i], name);
        CHECK(strlen(tess_status_string(all_statuses[i])) > 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(name, tess_status_name(all_statuses[j])) != 0);
    }
    CHECK(strcmp(tess_status_name((tess_status)12345), "TESS_STATUS_UNKNOWN") == 0);
    /* Values shared with cublasStatus_t keep cuBLAS's numbers. */
    CHECK(TESS_STATUS_INVALID_VALUE == 7 && TESS_STATUS_NOT_SUPPORTED == 15 && TESS_STATUS_ARCH_MISMATCH == 8);
}

static void test_last_error(void) {
    CHECK(tess_fail(TESS_STATUS_INVALID_VALUE, "K=%d: needs K %% 16 == 0", 100) == TESS_STATUS_INVALID_VALUE);
    CHECK(strcmp(tess_last_error(), "K=100: needs K % 16 == 0") == 0);
    /* A sentence longer than the buffer is truncated, not overflowed. */
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tess_fail(TESS_STATUS_INVALID_VALUE, "%s", big);
    size_t len = strlen(tess_last_error());
    CHECKF(len > 100 && len < sizeof big - 1, "truncated length %zu", len);
}

static void test_dtypes(void) {
    const tess_dtype all[] = {TESS_DTYPE_F32, TESS_DTYPE_F16, TESS_DTYPE_BF16, TESS_DTYPE_E4M3, TESS_DTYPE_E5M2};
    const size_t sizes[] = {4, 2, 2, 1, 1};
    for (int i = 0; i < 5; i++) {
        CHECK(tess_dtype_size(all[i]) == sizes[i]);
        tess_dtype parsed = (tess_dtype)-1;
        CHECK_STATUS(tess_dtype_from_name(tess_dtype_name(all[i]), &parsed), TESS_STATUS_SUCCESS);
        CHECK(parsed == all[i]);
    }
    /* Values are cudaDataType_t's (CUDA_R_32F=0, 16F=2, 16BF=14, 8F_E4M3=28, 8F_E5M2=29). */
    CHECK(TESS_DTYPE_F32 == 0 && TESS_DTYPE_F16 == 2 && TESS_DTYPE_BF16 == 14);
    CHECK(TESS_DTYPE_E4M3 == 28 && TESS_DTYPE_E5M2 == 29);
    tess_dtype d;
    CHECK_STATUS(tess_dtype_from_name("float8_e4m3fn", &d), TESS_STATUS_SUCCESS);
    CHECK(d == TESS_DTYPE_E4M3);
    CHECK_STATUS(tess_dtype_from_name("bfloat16", &d), TESS_STATUS_SUCCESS);
    CHECK(d == TESS_DTYPE_BF16);
    CHECK_STATUS(tess_dtype_from_name("int8", &d), TESS_STATUS_SUCCESS);
    CHECK(d == TESS_DTYPE_S8 && TESS_DTYPE_S8 == 3 && tess_dtype_size(d) == 1 && strcmp(tess_dtype_name(d), "s8") == 0);
    CHECK_STATUS(tess_dtype_from_name("int4", &d), TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "int4") != NULL);
    CHECK_STATUS(tess_dtype_from_name(NULL, &d), TESS_STATUS_INVALID_VALUE);
    CHECK(tess_dtype_size((tess_dtype)7) == 0);
    CHECK(strcmp(tess_dtype_name((tess_dtype)7), "invalid") == 0);
}

static void test_version(void) {
    CHECK(tess_version() == TESS_VERSION);
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d ", TESS_VERSION_MAJOR, TESS_VERSION_MINOR, TESS_VERSION_PATCH);
    CHECKF(strncmp(tess_version_string(), want, strlen(want)) == 0, "version string '%s'", tess_version_string());
    CHECK(strstr(tess_version_string(), "90a") != NULL);
}

static void test_handle_misuse(void) {
    CHECK_STATUS(tess_create(NULL, 0), TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_set_stream(NULL, NULL), TESS_STATUS_NOT_INITIALIZED);
    CHECK(strstr(tess_last_error(), "tess_set_stream") != NULL);
    CHECK_STATUS(tess_set_workspace(NULL, NULL, 0), TESS_STATUS_NOT_INITIALIZED);
    CHECK_STATUS(tess_get_device_info(NULL, NULL), TESS_STATUS_NOT_INITIALIZED);
    CHECK_STATUS(tess_set_sm_budget(NULL, 66), TESS_STATUS_NOT_INITIALIZED);
    CHECK(strstr(tess_last_error(), "tess_set_sm_budget") != NULL);
    CHECK_STATUS(tess_get_sm_budget(NULL, NULL), TESS_STATUS_NOT_INITIALIZED);
    /* Epilogue pointers of no version (struct_size unset) are refused by name. */
    const tess_epilogue_ptrs unset = {.struct_size = 0};
    CHECK_STATUS(tess_gemm_fused(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &unset),
                 TESS_STATUS_INVALID_VALUE);
    CHECK(strstr(tess_last_error(), "sizeof(tess_epilogue_ptrs)") != NULL);
    CHECK_STATUS(tess_grouped_gemm_fused(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &unset),
                 TESS_STATUS_INVALID_VALUE);
    CHECK_STATUS(tess_destroy(NULL), TESS_STATUS_SUCCESS);

    tess_handle h = (tess_handle)(uintptr_t)0x1;
    tess_status s = tess_create(&h, 0);
    if (s == TESS_STATUS_NO_DEVICE) {
        /* No GPU here (CI): the handle is NULL and the sentence says why. */
        CHECK(h == NULL);
        CHECKF(strlen(tess_last_error()) > 10, "sentence '%s'", tess_last_error());
    } else {
        CHECK_STATUS(s, TESS_STATUS_SUCCESS);
        CHECK_STATUS(tess_set_workspace(h, (void *)(uintptr_t)0x1000, 0), TESS_STATUS_INVALID_VALUE);
        CHECK_STATUS(tess_set_workspace(h, (void *)(uintptr_t)0x1010, 4096), TESS_STATUS_INVALID_VALUE);
        CHECK(strstr(tess_last_error(), "256-byte") != NULL);
        CHECK_STATUS(tess_set_workspace(h, (void *)(uintptr_t)0x1000, 4096), TESS_STATUS_SUCCESS);
        void *ws = NULL;
        size_t bytes = 0;
        CHECK_STATUS(tess_get_workspace(h, &ws, &bytes), TESS_STATUS_SUCCESS);
        CHECK(ws == (void *)(uintptr_t)0x1000 && bytes == 4096);
        tess_device_info info = {.struct_size = 8};
        CHECK_STATUS(tess_get_device_info(h, &info), TESS_STATUS_INVALID_VALUE);
        CHECK_STATUS(tess_destroy(h), TESS_STATUS_SUCCESS);
    }
    CHECK_STATUS(tess_create(&h, -1), TESS_STATUS_NO_DEVICE);
    CHECK_STATUS(tess_create(&h, 1 << 20), TESS_STATUS_NO_DEVICE);
}

int main(void) {
    test_status_names();
    test_last_error();
    test_dtypes();
    test_version();
    test_handle_misuse();
    return check_finish("unit_status");
}
