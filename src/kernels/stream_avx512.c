/* stream_avx512.c - AVX-512F streaming kernels (512-bit). Built with
 * -mavx512f; reached only through the kernel table after cpuid said yes. */
#include <immintrin.h>

#include "kernels.h"

double rf_kern_read_avx512_f64(const double *a, size_t n)
{
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    __m512d s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_add_pd(s0, _mm512_load_pd(a + i));
        s1 = _mm512_add_pd(s1, _mm512_load_pd(a + i + 8));
        s2 = _mm512_add_pd(s2, _mm512_load_pd(a + i + 16));
        s3 = _mm512_add_pd(s3, _mm512_load_pd(a + i + 24));
        s4 = _mm512_add_pd(s4, _mm512_load_pd(a + i + 32));
        s5 = _mm512_add_pd(s5, _mm512_load_pd(a + i + 40));
        s6 = _mm512_add_pd(s6, _mm512_load_pd(a + i + 48));
        s7 = _mm512_add_pd(s7, _mm512_load_pd(a + i + 56));
    }
    __m512d s = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)),
                              _mm512_add_pd(_mm512_add_pd(s4, s5), _mm512_add_pd(s6, s7)));
    double lanes[8];
    _mm512_storeu_pd(lanes, s);
    double total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                   ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < n; i++)
        total += a[i];
    return total;
}

void rf_kern_copy_avx512_f64(double *dst, const double *src, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm512_store_pd(dst + i, _mm512_load_pd(src + i));
        _mm512_store_pd(dst + i + 8, _mm512_load_pd(src + i + 8));
        _mm512_store_pd(dst + i + 16, _mm512_load_pd(src + i + 16));
        _mm512_store_pd(dst + i + 24, _mm512_load_pd(src + i + 24));
    }
    for (; i < n; i++)
        dst[i] = src[i];
}

void rf_kern_copy_nt_avx512_f64(double *dst, const double *src, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm512_stream_pd(dst + i, _mm512_load_pd(src + i));
        _mm512_stream_pd(dst + i + 8, _mm512_load_pd(src + i + 8));
        _mm512_stream_pd(dst + i + 16, _mm512_load_pd(src + i + 16));
        _mm512_stream_pd(dst + i + 24, _mm512_load_pd(src + i + 24));
    }
    _mm_sfence();
    for (; i < n; i++)
        dst[i] = src[i];
}

void rf_kern_triad_avx512_f64(double *a, const double *b, const double *c, double s, size_t n)
{
    const __m512d vs = _mm512_set1_pd(s);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_store_pd(a + i, _mm512_fmadd_pd(vs, _mm512_load_pd(c + i), _mm512_load_pd(b + i)));
        _mm512_store_pd(a + i + 8,
                        _mm512_fmadd_pd(vs, _mm512_load_pd(c + i + 8), _mm512_load_pd(b + i + 8)));
    }
    for (; i < n; i++)
        a[i] = b[i] + s * c[i];
}

void rf_kern_triad_nt_avx512_f64(double *a, const double *b, const double *c, double s, size_t n)
{
    const __m512d vs = _mm512_set1_pd(s);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_stream_pd(a + i, _mm512_fmadd_pd(vs, _mm512_load_pd(c + i), _mm512_load_pd(b + i)));
        _mm512_stream_pd(a + i + 8,
                         _mm512_fmadd_pd(vs, _mm512_load_pd(c + i + 8), _mm512_load_pd(b + i + 8)));
    }
    _mm_sfence();
    for (; i < n; i++)
        a[i] = b[i] + s * c[i];
}
