/* fma_sse.c - SSE multiply-add chains: SSE has no FMA, so each step is a
 * multiply then an add (two roundings, two FLOPs). Twelve accumulators
 * cover the mul + add latency on two pipes of each. */
#include <emmintrin.h>

#include "kernels.h"

void rf_kern_muladd_sse_f32(float *chains, size_t iters, float mul, float add)
{
    const __m128 vm = _mm_set1_ps(mul), va = _mm_set1_ps(add);
    __m128 x[12];
    for (int j = 0; j < 12; j++)
        x[j] = _mm_loadu_ps(chains + 4 * j);
    __m128 x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5];
    __m128 x6 = x[6], x7 = x[7], x8 = x[8], x9 = x[9], x10 = x[10], x11 = x[11];
    for (size_t i = 0; i < iters; i++) {
        x0 = _mm_add_ps(_mm_mul_ps(x0, vm), va);
        x1 = _mm_add_ps(_mm_mul_ps(x1, vm), va);
        x2 = _mm_add_ps(_mm_mul_ps(x2, vm), va);
        x3 = _mm_add_ps(_mm_mul_ps(x3, vm), va);
        x4 = _mm_add_ps(_mm_mul_ps(x4, vm), va);
        x5 = _mm_add_ps(_mm_mul_ps(x5, vm), va);
        x6 = _mm_add_ps(_mm_mul_ps(x6, vm), va);
        x7 = _mm_add_ps(_mm_mul_ps(x7, vm), va);
        x8 = _mm_add_ps(_mm_mul_ps(x8, vm), va);
        x9 = _mm_add_ps(_mm_mul_ps(x9, vm), va);
        x10 = _mm_add_ps(_mm_mul_ps(x10, vm), va);
        x11 = _mm_add_ps(_mm_mul_ps(x11, vm), va);
    }
    x[0] = x0, x[1] = x1, x[2] = x2, x[3] = x3, x[4] = x4, x[5] = x5;
    x[6] = x6, x[7] = x7, x[8] = x8, x[9] = x9, x[10] = x10, x[11] = x11;
    for (int j = 0; j < 12; j++)
        _mm_storeu_ps(chains + 4 * j, x[j]);
}

void rf_kern_muladd_sse_f64(double *chains, size_t iters, double mul, double add)
{
    const __m128d vm = _mm_set1_pd(mul), va = _mm_set1_pd(add);
    __m128d x[12];
    for (int j = 0; j < 12; j++)
        x[j] = _mm_loadu_pd(chains + 2 * j);
    __m128d x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5];
    __m128d x6 = x[6], x7 = x[7], x8 = x[8], x9 = x[9], x10 = x[10], x11 = x[11];
    for (size_t i = 0; i < iters; i++) {
        x0 = _mm_add_pd(_mm_mul_pd(x0, vm), va);
        x1 = _mm_add_pd(_mm_mul_pd(x1, vm), va);
        x2 = _mm_add_pd(_mm_mul_pd(x2, vm), va);
        x3 = _mm_add_pd(_mm_mul_pd(x3, vm), va);
        x4 = _mm_add_pd(_mm_mul_pd(x4, vm), va);
        x5 = _mm_add_pd(_mm_mul_pd(x5, vm), va);
        x6 = _mm_add_pd(_mm_mul_pd(x6, vm), va);
        x7 = _mm_add_pd(_mm_mul_pd(x7, vm), va);
        x8 = _mm_add_pd(_mm_mul_pd(x8, vm), va);
        x9 = _mm_add_pd(_mm_mul_pd(x9, vm), va);
        x10 = _mm_add_pd(_mm_mul_pd(x10, vm), va);
        x11 = _mm_add_pd(_mm_mul_pd(x11, vm), va);
    }
    x[0] = x0, x[1] = x1, x[2] = x2, x[3] = x3, x[4] = x4, x[5] = x5;
    x[6] = x6, x[7] = x7, x[8] = x8, x[9] = x9, x[10] = x10, x[11] = x11;
    for (int j = 0; j < 12; j++)
        _mm_storeu_pd(chains + 2 * j, x[j]);
}
