/* stream_ref.c - portable streaming kernels: the scalar ISA level and the
 * oracle for every vector variant. Built with -fno-tree-vectorize so the
 * "scalar" figures are scalar. */
#include "kernels.h"

double rf_kern_read_ref_f64(const double *a, size_t n)
{
    /* Four accumulators hide the add latency; the sums are exact for the
     * integer-valued data used, so the order does not change the result. */
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i];
        s1 += a[i + 1];
        s2 += a[i + 2];
        s3 += a[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i];
    return (s0 + s1) + (s2 + s3);
}

void rf_kern_copy_ref_f64(double *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
}

void rf_kern_triad_ref_f64(double *a, const double *b, const double *c, double s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}
