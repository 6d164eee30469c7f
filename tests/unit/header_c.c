/* tessera.h compiles as strict C99 with -pedantic -Werror, and links against libtessera. */
#include <stdio.h>
#include <string.h>

#include "tessera.h"
#include "tessera/layout.h"

int main(void) {
    tess_matrix_desc d = {TESS_DTYPE_BF16, TESS_ORDER_ROW, 1, 1, 1, 0};
    (void)d;
    if (tess_version() != TESS_VERSION || strcmp(tess_status_name(TESS_STATUS_SUCCESS), "TESS_STATUS_SUCCESS") != 0) {
        printf("header_c: version or status name mismatch\n");
        return 1;
    }
    printf("header_c: ok (%s)\n", tess_version_string());
    return 0;
}
