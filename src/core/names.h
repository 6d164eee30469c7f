/* Internal: the names of enum values, kept as tables of (value, name) rows
 * so that each name is written once beside its value. */
#ifndef TESS_CORE_NAMES_H
#define TESS_CORE_NAMES_H

#include <stddef.h>

typedef struct tess_named {
    int value;
    const char *name;
} tess_named;

/* The name of `value` in `table` (`count` rows; the first row that has it),
 * or `otherwise` where no row has it. */
static inline const char *tess_name_of(const tess_named *table, size_t count, int value, const char *otherwise) {
    for (size_t i = 0; i < count; i++)
        if (table[i].value == value)
            return table[i].name;
    return otherwise;
}

/* tess_name_of over a whole array `table`. */
#define TESS_NAME_OF(table, value, otherwise) \
    tess_name_of(table, sizeof(table) / sizeof((table)[0]), (int)(value), otherwise)

#endif
