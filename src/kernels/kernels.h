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
#include <stdint.h>

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

/* Dot products (dot_ref.c is their oracle, dot_avx512.c the kernels):
 *   dot_bf16, dot_int8, fp16_tile  register chains, RF_KERN_DOT_CHAINS of
 *             them, each counting up by one (int8: four) a step from an
 *             integer start; the fp32 ones stop at 2^24 (x + 1 rounds to x);
 *   dot_q8_0, dot_q4_0  one row of llama.cpp's 32-weight blocks against
 *             q8_0 activations: sum over blocks of d_x d_y sum(x_i y_i),
 *             q4_0's weight i the low nibble of qs[i] (i < 16) or the high
 *             one of qs[i - 16], less 8. */
#define RF_KERN_QK 32
typedef struct rf_kern_q8_0 {
    uint16_t d; /* fp16 scale                                   */
    int8_t qs[RF_KERN_QK];
} rf_kern_q8_0; /* 34 bytes                                     */
typedef struct rf_kern_q4_0 {
    uint16_t d;
    uint8_t qs[RF_KERN_QK / 2];
} rf_kern_q4_0; /* 18 bytes                                     */
_Static_assert(sizeof(rf_kern_q8_0) == 34 && sizeof(rf_kern_q4_0) == 18, "llama.cpp's blocks");
float rf_kern_half_to_float(uint16_t h);
float rf_kern_dot_q8_0_ref(const rf_kern_q8_0 *x, const rf_kern_q8_0 *y, size_t blocks);
float rf_kern_dot_q4_0_ref(const rf_kern_q4_0 *x, const rf_kern_q8_0 *y, size_t blocks);
float rf_kern_count_ref_f32(float start, size_t steps);
#define RF_KERN_DOT_CHAINS (16 * 16)

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

/* AVX-512 BF16 / VNNI (+ BW, VL, F16C): the dot-product kernels above. */
void rf_kern_dot_bf16_avx512(float *chains, size_t iters);
void rf_kern_dot_int8_avx512(int32_t *chains, size_t iters);
void rf_kern_fp16_tile_avx512(float *chains, size_t iters);
float rf_kern_dot_q8_0_avx512(const rf_kern_q8_0 *x, const rf_kern_q8_0 *y, size_t blocks);
float rf_kern_dot_q4_0_avx512(const rf_kern_q4_0 *x, const rf_kern_q8_0 *y, size_t blocks);
#endif

#endif
