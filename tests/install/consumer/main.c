/* A downstream program: links tessera and calls it. */
#include <stdio.h>

#include <tessera.h>

int main(void) {
    if (tess_version() != TESS_VERSION)
        return 1;
    tess_handle h = NULL;
    tess_status s = tess_create(&h, 0);
    printf("consumer: tessera %s; tess_create: %s%s%s\n", tess_version_string(), tess_status_name(s),
           s == TESS_STATUS_SUCCESS ? "" : ": ", s == TESS_STATUS_SUCCESS ? "" : tess_last_error());
    tess_destroy(h);
    return s == TESS_STATUS_SUCCESS || s == TESS_STATUS_NO_DEVICE ? 0 : 1;
}
