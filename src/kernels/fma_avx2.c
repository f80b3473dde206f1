/* fma_avx2.c - register-resident FMA chains, AVX2 + FMA (256-bit). Twelve
 * independent accumulators exceed FMA latency (4) x pipes (2) on current
 * cores, so the pipes, not the dependences, set the rate. */
#include <immintrin.h>

#include "kernels.h"

void rf_kern_fma_avx2_f32(float *chains, size_t iters, float mul, float add)
{
    const __m256 vm = _mm256_set1_ps(mul), va = _mm256_set1_ps(add);
    __m256 x0 = _mm256_loadu_ps(chains), x1 = _mm256_loadu_ps(chains + 8);
    __m256 x2 = _mm256_loadu_ps(chains + 16), x3 = _mm256_loadu_ps(chains + 24);
    __m256 x4 = _mm256_loadu_ps(chains + 32), x5 = _mm256_loadu_ps(chains + 40);
    __m256 x6 = _mm256_loadu_ps(chains + 48), x7 = _mm256_loadu_ps(chains + 56);
    __m256 x8 = _mm256_loadu_ps(chains + 64), x9 = _mm256_loadu_ps(chains + 72);
    __m256 x10 = _mm256_loadu_ps(chains + 80), x11 = _mm256_loadu_ps(chains + 88);
    for (size_t i = 0; i < iters; i++) {
        x0 = _mm256_fmadd_ps(x0, vm, va);
        x1 = _mm256_fmadd_ps(x1, vm, va);
        x2 = _mm256_fmadd_ps(x2, vm, va);
        x3 = _mm256_fmadd_ps(x3, vm, va);
        x4 = _mm256_fmadd_ps(x4, vm, va);
        x5 = _mm256_fmadd_ps(x5, vm, va);
        x6 = _mm256_fmadd_ps(x6, vm, va);
        x7 = _mm256_fmadd_ps(x7, vm, va);
        x8 = _mm256_fmadd_ps(x8, vm, va);
        x9 = _mm256_fmadd_ps(x9, vm, va);
        x10 = _mm256_fmadd_ps(x10, vm, va);
        x11 = _mm256_fmadd_ps(x11, vm, va);
    }
    _mm256_storeu_ps(chains, x0), _mm256_storeu_ps(chains + 8, x1);
    _mm256_storeu_ps(chains + 16, x2), _mm256_storeu_ps(chains + 24, x3);
    _mm256_storeu_ps(chains + 32, x4), _mm256_storeu_ps(chains + 40, x5);
    _mm256_storeu_ps(chains + 48, x6), _mm256_storeu_ps(chains + 56, x7);
    _mm256_storeu_ps(chains + 64, x8), _mm256_storeu_ps(chains + 72, x9);
    _mm256_storeu_ps(chains + 80, x10), _mm256_storeu_ps(chains + 88, x11);
}

void rf_kern_fma_avx2_f64(double *chains, size_t iters, double mul, double add)
{
    const __m256d vm = _mm256_set1_pd(mul), va = _mm256_set1_pd(add);
    __m256d x0 = _mm256_loadu_pd(chains), x1 = _mm256_loadu_pd(chains + 4);
    __m256d x2 = _mm256_loadu_pd(chains + 8), x3 = _mm256_loadu_pd(chains + 12);
    __m256d x4 = _mm256_loadu_pd(chains + 16), x5 = _mm256_loadu_pd(chains + 20);
    __m256d x6 = _mm256_loadu_pd(chains + 24), x7 = _mm256_loadu_pd(chains + 28);
    __m256d x8 = _mm256_loadu_pd(chains + 32), x9 = _mm256_loadu_pd(chains + 36);
    __m256d x10 = _mm256_loadu_pd(chains + 40), x11 = _mm256_loadu_pd(chains + 44);
    for (size_t i = 0; i < iters; i++) {
        x0 = _mm256_fmadd_pd(x0, vm, va);
        x1 = _mm256_fmadd_pd(x1, vm, va);
        x2 = _mm256_fmadd_pd(x2, vm, va);
        x3 = _mm256_fmadd_pd(x3, vm, va);
        x4 = _mm256_fmadd_pd(x4, vm, va);
        x5 = _mm256_fmadd_pd(x5, vm, va);
        x6 = _mm256_fmadd_pd(x6, vm, va);
        x7 = _mm256_fmadd_pd(x7, vm, va);
        x8 = _mm256_fmadd_pd(x8, vm, va);
        x9 = _mm256_fmadd_pd(x9, vm, va);
        x10 = _mm256_fmadd_pd(x10, vm, va);
        x11 = _mm256_fmadd_pd(x11, vm, va);
    }
    _mm256_storeu_pd(chains, x0), _mm256_storeu_pd(chains + 4, x1);
    _mm256_storeu_pd(chains + 8, x2), _mm256_storeu_pd(chains + 12, x3);
    _mm256_storeu_pd(chains + 16, x4), _mm256_storeu_pd(chains + 20, x5);
    _mm256_storeu_pd(chains + 24, x6), _mm256_storeu_pd(chains + 28, x7);
    _mm256_storeu_pd(chains + 32, x8), _mm256_storeu_pd(chains + 36, x9);
    _mm256_storeu_pd(chains + 40, x10), _mm256_storeu_pd(chains + 44, x11);
}
