/* attn_kernels.h - decode attention's two inner products, reachable only
 * through the kernel table (attn_scores_f32, attn_values_f32 of
 * src/measure/kernel_table.c), which the forward pass chooses once per
 * pass. Private to rf_measure.
 *
 * Contract shared by every variant (the reference in attn_ref.c is the
 * oracle the others are tested against):
 *   scores  sc[h nk + s] = scale sum_i q[h dh + i] K[s dh + i]
 *           for h < g query heads and s < nk keys: q (g, dh), K (nk, dh)
 *           row-major, sc (g, nk)
 *   values  out[h dh + i] = sum_s p[h nk + s] V[s dh + i]
 *           p (g, nk), V (nk, dh), out (g, dh); out is overwritten
 * K and V are each read once from memory (a block of rows is reused from
 * L1 by all g heads). Any g, nk >= 1; dh >= 1 (the AVX2 variant needs
 * dh % 8 == 0: the table's attn_dh_multiple).
 */
#ifndef RF_ATTN_KERNELS_H
#define RF_ATTN_KERNELS_H

#include <stdint.h>

typedef void (*rf_attn_scores_fn)(const float *q, const float *K, int64_t g, int64_t nk, int64_t dh,
                                  float scale, float *sc);
typedef void (*rf_attn_values_fn)(const float *p, const float *V, int64_t g, int64_t nk, int64_t dh,
                                  float *out);

/* Portable C (vectorized only as far as the build's baseline ISA allows). */
void rf_kern_attn_scores_ref_f32(const float *q, const float *K, int64_t g, int64_t nk, int64_t dh,
                                 float scale, float *sc);
void rf_kern_attn_values_ref_f32(const float *p, const float *V, int64_t g, int64_t nk, int64_t dh,
                                 float *out);

#if defined(__x86_64__) || defined(__i386__)
/* AVX2 + FMA, 256-bit: scores four keys at a time per head, values eight
 * accumulators of eight lanes per head over blocks of 64 keys. */
void rf_kern_attn_scores_avx2_f32(const float *q, const float *K, int64_t g, int64_t nk, int64_t dh,
                                  float scale, float *sc);
void rf_kern_attn_values_avx2_f32(const float *p, const float *V, int64_t g, int64_t nk, int64_t dh,
                                  float *out);
#endif

#endif
