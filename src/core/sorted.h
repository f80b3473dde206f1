/* sorted.h - order statistics of doubles; not installed. The ascending sort
 * and the median of a few (the fits' error lists, tens of entries: calib.c,
 * engine.c), and selection for long lists (a kernel table's ~10^5
 * leave-one-out errors, gpu_predict.c; gpu_compare.c's ratios). */
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

/* The k-th smallest of v[0..n) (k < n) put at v[k], the smaller before it
 * and the larger after (Hoare's selection, median-of-three pivots): linear
 * time, where a sort of a kernel table's errors was a fifth of a
 * prediction's run. */
static inline void rf__select(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double x = v[lo], y = v[lo + (hi - lo) / 2], z = v[hi];
        double p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < p)
                i++;
            while (v[j] > p)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i++] = v[j];
                v[j] = t;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* The median of v[0..n), reordered in place (0 for none). */
static inline double rf__median(double *v, size_t n)
{
    if (!n)
        return 0.0;
    size_t m = n / 2;
    rf__select(v, n, m);
    if (n % 2)
        return v[m];
    double below = v[0]; /* the (m-1)-th: the largest before m */
    for (size_t i = 1; i < m; i++)
        below = v[i] > below ? v[i] : below;
    return (below + v[m]) / 2;
}

#endif
