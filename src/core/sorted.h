/* sorted.h - the ascending sort and the median of a few doubles, for the
 * fits' error lists (calib.c, engine.c); not installed. Insertion sort:
 * the lists are tens of entries. */
#ifndef RF_CORE_SORTED_H
#define RF_CORE_SORTED_H

#include <stddef.h>

static inline void rf__sort(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* The median of v[0..n) once sorted (0 for none). */
static inline double rf__median_sorted(const double *v, size_t n)
{
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0.0;
}

#endif
