/* names.h - private to src/core: the "(known: a, b, c)" list of an error. */
#ifndef RF_CORE_NAMES_H
#define RF_CORE_NAMES_H

#include <stddef.h>

/* Join name_at(0..n-1) with ", " into out (cut at cap); returns out. */
char *rf__join_names(char *out, size_t cap, size_t n, const char *(*name_at)(size_t));

#endif
