/* names.c - lists of preset names for error messages. */
#include <stdio.h>

#include "names.h"

char *rf__join_names(char *out, size_t cap, size_t n, const char *(*name_at)(size_t))
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "", name_at(i));
    return out;
}
