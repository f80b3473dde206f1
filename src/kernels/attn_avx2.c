/* attn_avx2.c - decode attention's inner products with AVX2 + FMA
 * (attn_kernels.h). Compiled with -mavx2 -mfma; reached through the AVX2
 * and AVX-512 kernel tables, which cpuid admits only on a CPU with both, and
 * used only when dh % 8 == 0. */
#include <immintrin.h>
#include <string.h>

#include "attn_kernels.h"

/* The four sums of a, b, c, d's lanes, in that order. */
static __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d)
{
    __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

static float hsum(__m256 a)
{
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}

void rf_kern_attn_scores_avx2_f32(const float *q, const float *K, int64_t g, int64_t nk, int64_t dh,
                                  float scale, float *sc)
{
    int64_t s = 0;
    /* four keys (rows in L1) against every head: 5 loads a 4 FMAs */
    for (; s + 4 <= nk; s += 4) {
        const float *k0 = K + s * dh, *k1 = k0 + dh, *k2 = k1 + dh, *k3 = k2 + dh;
        for (int64_t h = 0; h < g; h++) {
            const float *qh = q + h * dh;
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (int64_t i = 0; i < dh; i += 8) {
                __m256 x = _mm256_loadu_ps(qh + i);
                a0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(k0 + i), a0);
                a1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(k1 + i), a1);
                a2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(k2 + i), a2);
                a3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(k3 + i), a3);
            }
            _mm_storeu_ps(sc + h * nk + s, _mm_mul_ps(hsum4(a0, a1, a2, a3), _mm_set1_ps(scale)));
        }
    }
    for (; s < nk; s++)
        for (int64_t h = 0; h < g; h++) {
            __m256 a = _mm256_setzero_ps();
            for (int64_t i = 0; i < dh; i += 8)
                a = _mm256_fmadd_ps(_mm256_loadu_ps(q + h * dh + i),
                                    _mm256_loadu_ps(K + s * dh + i), a);
            sc[h * nk + s] = scale * hsum(a);
        }
}

#define VBLOCK 64 /* keys a block: 64 x d_h floats stay in L1 for all heads */

void rf_kern_attn_values_avx2_f32(const float *p, const float *V, int64_t g, int64_t nk, int64_t dh,
                                  float *out)
{
    memset(out, 0, (size_t)(g * dh) * sizeof *out);
    for (int64_t s0 = 0; s0 < nk; s0 += VBLOCK) {
        int64_t s1 = s0 + VBLOCK < nk ? s0 + VBLOCK : nk;
        for (int64_t h = 0; h < g; h++) {
            const float *ph = p + h * nk;
            float *oh = out + h * dh;
            int64_t c = 0;
            for (; c + 64 <= dh; c += 64) { /* eight accumulators in registers */
                __m256 a0 = _mm256_loadu_ps(oh + c), a1 = _mm256_loadu_ps(oh + c + 8),
                       a2 = _mm256_loadu_ps(oh + c + 16), a3 = _mm256_loadu_ps(oh + c + 24),
                       a4 = _mm256_loadu_ps(oh + c + 32), a5 = _mm256_loadu_ps(oh + c + 40),
                       a6 = _mm256_loadu_ps(oh + c + 48), a7 = _mm256_loadu_ps(oh + c + 56);
                for (int64_t s = s0; s < s1; s++) {
                    __m256 w = _mm256_set1_ps(ph[s]);
                    const float *v = V + s * dh + c;
                    a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v), a0);
                    a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 8), a1);
                    a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 16), a2);
                    a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 24), a3);
                    a4 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 32), a4);
                    a5 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 40), a5);
                    a6 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 48), a6);
                    a7 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 56), a7);
                }
                _mm256_storeu_ps(oh + c, a0);
                _mm256_storeu_ps(oh + c + 8, a1);
                _mm256_storeu_ps(oh + c + 16, a2);
                _mm256_storeu_ps(oh + c + 24, a3);
                _mm256_storeu_ps(oh + c + 32, a4);
                _mm256_storeu_ps(oh + c + 40, a5);
                _mm256_storeu_ps(oh + c + 48, a6);
                _mm256_storeu_ps(oh + c + 56, a7);
            }
            for (; c < dh; c += 8) { /* a d_h that is not a multiple of 64 */
                __m256 a = _mm256_loadu_ps(oh + c);
                for (int64_t s = s0; s < s1; s++)
                    a = _mm256_fmadd_ps(_mm256_set1_ps(ph[s]), _mm256_loadu_ps(V + s * dh + c), a);
                _mm256_storeu_ps(oh + c, a);
            }
        }
    }
}
