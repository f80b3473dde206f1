/* kernels.h - every hardware kernel, reachable only through the kernel
 * table (src/measure/kernel_table.c). Private to rf_measure.
 *
 * Contract shared by all variants of one operation (the reference variant
 * in *_ref.c is the oracle the others are tested against):
 *   read      returns sum(a[0..n))                  reads 8n bytes
 *   copy      dst[i] = src[i]                       reads 8n, writes 8n
 *   triad     a[i] = b[i] + s * c[i]                reads 16n, writes 8n
 *   *_nt      the same with non-temporal stores (dst / a 64-byte aligned)
 *   fma       chains[j] = chains[j] * mul + add, iters times, for every
 *             chain j < the variant's chain count; fused (one rounding)
 *             where the table says so, mul then add otherwise.
 * Arrays are 64-byte aligned; n may be any count (tails handled). Sums are
 * exact for the integer-valued data the tests and the lab use, so every
 * variant returns the reference's value bit for bit.
 */
#ifndef RF_KERNELS_H
#define RF_KERNELS_H

#include <stddef.h>

/* Reference: portable C, compiled without vectorization. */
double rf_kern_read_ref_f64(const double *a, size_t n);
void rf_kern_copy_ref_f64(double *dst, const double *src, size_t n);
void rf_kern_triad_ref_f64(double *a, const double *b, const double *c, double s, size_t n);
void rf_kern_muladd_ref_f32(float *chains, size_t iters, float mul, float add);
void rf_kern_muladd_ref_f64(double *chains, size_t iters, double mul, double add);
/* One chain, for checking any variant: fused or mul-then-add. */
float rf_kern_chain_ref_f32(float x, size_t iters, float mul, float add, int fused);
double rf_kern_chain_ref_f64(double x, size_t iters, double mul, double add, int fused);
#define RF_KERN_REF_CHAINS 8

#if defined(__x86_64__) || defined(__i386__)
#define RF_KERN_X86 1

/* SSE2 (baseline x86-64): 128-bit, mul then add (no FMA in SSE). */
double rf_kern_read_sse_f64(const double *a, size_t n);
void rf_kern_copy_sse_f64(double *dst, const double *src, size_t n);
void rf_kern_copy_nt_sse_f64(double *dst, const double *src, size_t n);
void rf_kern_triad_sse_f64(double *a, const double *b, const double *c, double s, size_t n);
void rf_kern_triad_nt_sse_f64(double *a, const double *b, const double *c, double s, size_t n);
void rf_kern_muladd_sse_f32(float *chains, size_t iters, float mul, float add);
void rf_kern_muladd_sse_f64(double *chains, size_t iters, double mul, double add);
#define RF_KERN_SSE_CHAINS_F32 (12 * 4)
#define RF_KERN_SSE_CHAINS_F64 (12 * 2)

/* AVX2 + FMA: 256-bit. 12 accumulators cover FMA latency 4 x 2 pipes
 * (Haswell..Golden Cove, Zen 2..5) with room to spare. */
double rf_kern_read_avx2_f64(const double *a, size_t n);
void rf_kern_copy_avx2_f64(double *dst, const double *src, size_t n);
void rf_kern_copy_nt_avx2_f64(double *dst, const double *src, size_t n);
void rf_kern_triad_avx2_f64(double *a, const double *b, const double *c, double s, size_t n);
void rf_kern_triad_nt_avx2_f64(double *a, const double *b, const double *c, double s, size_t n);
void rf_kern_fma_avx2_f32(float *chains, size_t iters, float mul, float add);
void rf_kern_fma_avx2_f64(double *chains, size_t iters, double mul, double add);
#define RF_KERN_AVX2_CHAINS_F32 (12 * 8)
#define RF_KERN_AVX2_CHAINS_F64 (12 * 4)

/* AVX-512F: 512-bit, 16 accumulators. */
double rf_kern_read_avx512_f64(const double *a, size_t n);
void rf_kern_copy_avx512_f64(double *dst, const double *src, size_t n);
void rf_kern_copy_nt_avx512_f64(double *dst, const double *src, size_t n);
void rf_kern_triad_avx512_f64(double *a, const double *b, const double *c, double s, size_t n);
void rf_kern_triad_nt_avx512_f64(double *a, const double *b, const double *c, double s, size_t n);
void rf_kern_fma_avx512_f32(float *chains, size_t iters, float mul, float add);
void rf_kern_fma_avx512_f64(double *chains, size_t iters, double mul, double add);
#define RF_KERN_AVX512_CHAINS_F32 (16 * 16)
#define RF_KERN_AVX512_CHAINS_F64 (16 * 8)
#endif

#endif
