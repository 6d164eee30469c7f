// tessera.h compiles as C++ (-Wall -Wextra -pedantic -Werror) with C linkage for every function.
#include <cstdio>
#include <cstring>

#include "tessera.h"
#include "tessera/layout.h"

int main() {
    tess_handle h = nullptr;
    tess_status s = tess_destroy(h);
    if (s != TESS_STATUS_SUCCESS || tess_version() != TESS_VERSION || std::strlen(tess_dtype_name(TESS_DTYPE_E4M3)) != 4) {
        std::printf("header_cxx: unexpected result\n");
        return 1;
    }
    tess_layout *l = nullptr;
    if (tess_layout_parse("(4,8):(1,4)", &l) != TESS_STATUS_SUCCESS || tess_layout_kind_of(l) != TESS_LAYOUT_PLAIN) {
        std::printf("header_cxx: layout parse failed\n");
        return 1;
    }
    tess_layout_free(l);
    std::printf("header_cxx: ok\n");
    return 0;
}
