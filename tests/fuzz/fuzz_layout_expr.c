/* libFuzzer target: the layout calculator and parser on arbitrary text must
 * never crash, hang, leak or overflow; they either answer or refuse with a
 * sentence. Built and run by tests/fuzz/run.sh with AddressSanitizer and
 * UndefinedBehaviorSanitizer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    char out[512];
    size_t length = 0;
    if (tess_layout_eval_expr(text, out, sizeof out, &length) == TESS_STATUS_SUCCESS && length < sizeof out) {
        /* What the calculator prints must parse back to the same text. */
        tess_layout *back = NULL;
        if (tess_layout_parse(out, &back) == TESS_STATUS_SUCCESS) {
            char again[512];
            tess_layout_print(back, again, sizeof again);
            if (strcmp(again, out) != 0)
                abort();
            size_t n = 0;
            tess_layout_render_table(back, NULL, 0, &n);
            tess_layout_free(back);
        }
    }
    tess_layout *x = NULL;
    if (tess_layout_parse(text, &x) == TESS_STATUS_SUCCESS) {
        tess_layout *y = NULL;
        int64_t v;
        tess_layout_size(x, &v);
        if (tess_layout_coalesce(x, NULL, &y) == TESS_STATUS_SUCCESS)
            tess_layout_free(y);
        if (tess_layout_left_inverse(x, &y) == TESS_STATUS_SUCCESS)
            tess_layout_free(y);
        tess_layout_free(x);
    }
    free(text);
    return 0;
}
