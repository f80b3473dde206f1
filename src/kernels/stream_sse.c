/* stream_sse.c - SSE2 streaming kernels (128-bit, the x86-64 baseline). */
#include <emmintrin.h>

#include "kernels.h"

double rf_kern_read_sse_f64(const double *a, size_t n)
{
    /* Eight accumulators: two loads a cycle against a 3-4 cycle add. */
    __m128d s0 = _mm_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    __m128d s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm_add_pd(s0, _mm_load_pd(a + i));
        s1 = _mm_add_pd(s1, _mm_load_pd(a + i + 2));
        s2 = _mm_add_pd(s2, _mm_load_pd(a + i + 4));
        s3 = _mm_add_pd(s3, _mm_load_pd(a + i + 6));
        s4 = _mm_add_pd(s4, _mm_load_pd(a + i + 8));
        s5 = _mm_add_pd(s5, _mm_load_pd(a + i + 10));
        s6 = _mm_add_pd(s6, _mm_load_pd(a + i + 12));
        s7 = _mm_add_pd(s7, _mm_load_pd(a + i + 14));
    }
    __m128d s = _mm_add_pd(_mm_add_pd(_mm_add_pd(s0, s1), _mm_add_pd(s2, s3)),
                           _mm_add_pd(_mm_add_pd(s4, s5), _mm_add_pd(s6, s7)));
    double lanes[2];
    _mm_storeu_pd(lanes, s);
    double total = lanes[0] + lanes[1];
    for (; i < n; i++)
        total += a[i];
    return total;
}

void rf_kern_copy_sse_f64(double *dst, const double *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_store_pd(dst + i, _mm_load_pd(src + i));
        _mm_store_pd(dst + i + 2, _mm_load_pd(src + i + 2));
        _mm_store_pd(dst + i + 4, _mm_load_pd(src + i + 4));
        _mm_store_pd(dst + i + 6, _mm_load_pd(src + i + 6));
    }
    for (; i < n; i++)
        dst[i] = src[i];
}

void rf_kern_copy_nt_sse_f64(double *dst, const double *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_stream_pd(dst + i, _mm_load_pd(src + i));
        _mm_stream_pd(dst + i + 2, _mm_load_pd(src + i + 2));
        _mm_stream_pd(dst + i + 4, _mm_load_pd(src + i + 4));
        _mm_stream_pd(dst + i + 6, _mm_load_pd(src + i + 6));
    }
    _mm_sfence();
    for (; i < n; i++)
        dst[i] = src[i];
}

void rf_kern_triad_sse_f64(double *a, const double *b, const double *c, double s, size_t n)
{
    const __m128d vs = _mm_set1_pd(s);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        _mm_store_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(vs, _mm_load_pd(c + i))));
        _mm_store_pd(a + i + 2,
                     _mm_add_pd(_mm_load_pd(b + i + 2), _mm_mul_pd(vs, _mm_load_pd(c + i + 2))));
    }
    for (; i < n; i++)
        a[i] = b[i] + s * c[i];
}

void rf_kern_triad_nt_sse_f64(double *a, const double *b, const double *c, double s, size_t n)
{
    const __m128d vs = _mm_set1_pd(s);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        _mm_stream_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(vs, _mm_load_pd(c + i))));
        _mm_stream_pd(a + i + 2,
                      _mm_add_pd(_mm_load_pd(b + i + 2), _mm_mul_pd(vs, _mm_load_pd(c + i + 2))));
    }
    _mm_sfence();
    for (; i < n; i++)
        a[i] = b[i] + s * c[i];
}
