/* stream_avx2.c - AVX2 streaming kernels (256-bit). Built with -mavx2 -mfma;
 * reached only through the kernel table after cpuid said yes. */
#include <immintrin.h>

#include "kernels.h"

double rf_kern_read_avx2_f64(const double *a, size_t n)
{
    /* Eight accumulators: two 256-bit loads a cycle against a 3-4 cycle add. */
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    __m256d s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_add_pd(s0, _mm256_load_pd(a + i));
        s1 = _mm256_add_pd(s1, _mm256_load_pd(a + i + 4));
        s2 = _mm256_add_pd(s2, _mm256_load_pd(a + i + 8));
        s3 = _mm256_add_pd(s3, _mm256_load_pd(a + i + 12));
        s4 = _mm256_add_pd(s4, _mm256_load_pd(a + i + 16));
        s5 = _mm256_add_pd(s5, _mm256_load_pd(a + i + 20));
        s6 = _mm256_add_pd(s6, _mm256_load_pd(a + i + 24));
        s7 = _mm256_add_pd(s7, _mm256_load_pd(a + i + 28));
    }
    __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)),
                              _mm256_add_pd(_mm256_add_pd(s4, s5), _mm256_add_pd(s6, s7)));
    double lanes[4];
    _mm256_storeu_pd(lanes, s);
    double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; i++)
        total += a[i];
    return total;
}

void rf_kern_copy_avx2_f64(double *dst, const double *src, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_store_pd(dst + i, _mm256_load_pd(src + i));
        _mm256_store_pd(dst + i + 4, _mm256_load_pd(src + i + 4));
        _mm256_store_pd(dst + i + 8, _mm256_load_pd(src + i + 8));
        _mm256_store_pd(dst + i + 12, _mm256_load_pd(src + i + 12));
    }
    for (; i < n; i++)
        dst[i] = src[i];
}

void rf_kern_copy_nt_avx2_f64(double *dst, const double *src, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_stream_pd(dst + i, _mm256_load_pd(src + i));
        _mm256_stream_pd(dst + i + 4, _mm256_load_pd(src + i + 4));
        _mm256_stream_pd(dst + i + 8, _mm256_load_pd(src + i + 8));
        _mm256_stream_pd(dst + i + 12, _mm256_load_pd(src + i + 12));
    }
    _mm_sfence();
    for (; i < n; i++)
        dst[i] = src[i];
}

void rf_kern_triad_avx2_f64(double *a, const double *b, const double *c, double s, size_t n)
{
    const __m256d vs = _mm256_set1_pd(s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_store_pd(a + i, _mm256_fmadd_pd(vs, _mm256_load_pd(c + i), _mm256_load_pd(b + i)));
        _mm256_store_pd(a + i + 4,
                        _mm256_fmadd_pd(vs, _mm256_load_pd(c + i + 4), _mm256_load_pd(b + i + 4)));
    }
    for (; i < n; i++)
        a[i] = b[i] + s * c[i];
}

void rf_kern_triad_nt_avx2_f64(double *a, const double *b, const double *c, double s, size_t n)
{
    const __m256d vs = _mm256_set1_pd(s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_stream_pd(a + i, _mm256_fmadd_pd(vs, _mm256_load_pd(c + i), _mm256_load_pd(b + i)));
        _mm256_stream_pd(a + i + 4,
                         _mm256_fmadd_pd(vs, _mm256_load_pd(c + i + 4), _mm256_load_pd(b + i + 4)));
    }
    _mm_sfence();
    for (; i < n; i++)
        a[i] = b[i] + s * c[i];
}
