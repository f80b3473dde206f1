/* fma_avx512.c - register-resident FMA chains, AVX-512F (512-bit). Sixteen
 * independent accumulators exceed FMA latency (4) x pipes (2). Built with
 * -mavx512f; reached only through the kernel table after cpuid said yes. */
#include <immintrin.h>

#include "kernels.h"

void rf_kern_fma_avx512_f32(float *chains, size_t iters, float mul, float add)
{
    const __m512 vm = _mm512_set1_ps(mul), va = _mm512_set1_ps(add);
    __m512 x0 = _mm512_loadu_ps(chains + 0), x1 = _mm512_loadu_ps(chains + 16);
    __m512 x2 = _mm512_loadu_ps(chains + 32), x3 = _mm512_loadu_ps(chains + 48);
    __m512 x4 = _mm512_loadu_ps(chains + 64), x5 = _mm512_loadu_ps(chains + 80);
    __m512 x6 = _mm512_loadu_ps(chains + 96), x7 = _mm512_loadu_ps(chains + 112);
    __m512 x8 = _mm512_loadu_ps(chains + 128), x9 = _mm512_loadu_ps(chains + 144);
    __m512 x10 = _mm512_loadu_ps(chains + 160), x11 = _mm512_loadu_ps(chains + 176);
    __m512 x12 = _mm512_loadu_ps(chains + 192), x13 = _mm512_loadu_ps(chains + 208);
    __m512 x14 = _mm512_loadu_ps(chains + 224), x15 = _mm512_loadu_ps(chains + 240);
    for (size_t i = 0; i < iters; i++) {
        x0 = _mm512_fmadd_ps(x0, vm, va);
        x1 = _mm512_fmadd_ps(x1, vm, va);
        x2 = _mm512_fmadd_ps(x2, vm, va);
        x3 = _mm512_fmadd_ps(x3, vm, va);
        x4 = _mm512_fmadd_ps(x4, vm, va);
        x5 = _mm512_fmadd_ps(x5, vm, va);
        x6 = _mm512_fmadd_ps(x6, vm, va);
        x7 = _mm512_fmadd_ps(x7, vm, va);
        x8 = _mm512_fmadd_ps(x8, vm, va);
        x9 = _mm512_fmadd_ps(x9, vm, va);
        x10 = _mm512_fmadd_ps(x10, vm, va);
        x11 = _mm512_fmadd_ps(x11, vm, va);
        x12 = _mm512_fmadd_ps(x12, vm, va);
        x13 = _mm512_fmadd_ps(x13, vm, va);
        x14 = _mm512_fmadd_ps(x14, vm, va);
        x15 = _mm512_fmadd_ps(x15, vm, va);
    }
    _mm512_storeu_ps(chains + 0, x0), _mm512_storeu_ps(chains + 16, x1);
    _mm512_storeu_ps(chains + 32, x2), _mm512_storeu_ps(chains + 48, x3);
    _mm512_storeu_ps(chains + 64, x4), _mm512_storeu_ps(chains + 80, x5);
    _mm512_storeu_ps(chains + 96, x6), _mm512_storeu_ps(chains + 112, x7);
    _mm512_storeu_ps(chains + 128, x8), _mm512_storeu_ps(chains + 144, x9);
    _mm512_storeu_ps(chains + 160, x10), _mm512_storeu_ps(chains + 176, x11);
    _mm512_storeu_ps(chains + 192, x12), _mm512_storeu_ps(chains + 208, x13);
    _mm512_storeu_ps(chains + 224, x14), _mm512_storeu_ps(chains + 240, x15);
}

void rf_kern_fma_avx512_f64(double *chains, size_t iters, double mul, double add)
{
    const __m512d vm = _mm512_set1_pd(mul), va = _mm512_set1_pd(add);
    __m512d x0 = _mm512_loadu_pd(chains + 0), x1 = _mm512_loadu_pd(chains + 8);
    __m512d x2 = _mm512_loadu_pd(chains + 16), x3 = _mm512_loadu_pd(chains + 24);
    __m512d x4 = _mm512_loadu_pd(chains + 32), x5 = _mm512_loadu_pd(chains + 40);
    __m512d x6 = _mm512_loadu_pd(chains + 48), x7 = _mm512_loadu_pd(chains + 56);
    __m512d x8 = _mm512_loadu_pd(chains + 64), x9 = _mm512_loadu_pd(chains + 72);
    __m512d x10 = _mm512_loadu_pd(chains + 80), x11 = _mm512_loadu_pd(chains + 88);
    __m512d x12 = _mm512_loadu_pd(chains + 96), x13 = _mm512_loadu_pd(chains + 104);
    __m512d x14 = _mm512_loadu_pd(chains + 112), x15 = _mm512_loadu_pd(chains + 120);
    for (size_t i = 0; i < iters; i++) {
        x0 = _mm512_fmadd_pd(x0, vm, va);
        x1 = _mm512_fmadd_pd(x1, vm, va);
        x2 = _mm512_fmadd_pd(x2, vm, va);
        x3 = _mm512_fmadd_pd(x3, vm, va);
        x4 = _mm512_fmadd_pd(x4, vm, va);
        x5 = _mm512_fmadd_pd(x5, vm, va);
        x6 = _mm512_fmadd_pd(x6, vm, va);
        x7 = _mm512_fmadd_pd(x7, vm, va);
        x8 = _mm512_fmadd_pd(x8, vm, va);
        x9 = _mm512_fmadd_pd(x9, vm, va);
        x10 = _mm512_fmadd_pd(x10, vm, va);
        x11 = _mm512_fmadd_pd(x11, vm, va);
        x12 = _mm512_fmadd_pd(x12, vm, va);
        x13 = _mm512_fmadd_pd(x13, vm, va);
        x14 = _mm512_fmadd_pd(x14, vm, va);
        x15 = _mm512_fmadd_pd(x15, vm, va);
    }
    _mm512_storeu_pd(chains + 0, x0), _mm512_storeu_pd(chains + 8, x1);
    _mm512_storeu_pd(chains + 16, x2), _mm512_storeu_pd(chains + 24, x3);
    _mm512_storeu_pd(chains + 32, x4), _mm512_storeu_pd(chains + 40, x5);
    _mm512_storeu_pd(chains + 48, x6), _mm512_storeu_pd(chains + 56, x7);
    _mm512_storeu_pd(chains + 64, x8), _mm512_storeu_pd(chains + 72, x9);
    _mm512_storeu_pd(chains + 80, x10), _mm512_storeu_pd(chains + 88, x11);
    _mm512_storeu_pd(chains + 96, x12), _mm512_storeu_pd(chains + 104, x13);
    _mm512_storeu_pd(chains + 112, x14), _mm512_storeu_pd(chains + 120, x15);
}
