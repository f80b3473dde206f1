/* dot_avx512.c - the dot-product peaks of AVX-512 cores and llama.cpp's
 * quantized blocks through them. Built with -mavx512f -mavx512bw
 * -mavx512vl -mavx512bf16 -mavx512vnni -mf16c -mfma; reached only through
 * the kernel table after cpuid said yes to each extension.
 *
 * The register kernels keep sixteen independent accumulators, as the FMA
 * kernels do, so the pipes, not the dependences, set the rate:
 *   bf16  vdpbf16ps: each fp32 lane += a0 b0 + a1 b1 (4 FLOPs a lane);
 *         a = (1, 0), b = (1, 1), so every lane counts up by one a step;
 *   int8  vpdpbusd: each int32 lane += four u8 x s8 products (8 ops a
 *         lane); all ones, so every lane counts up by four;
 *   fp16  no fp16 arithmetic (no AVX512-FP16): fp16 operands converted by
 *         vcvtph2ps and multiplied in fp32, as a GEMM's 4 x 4 register tile
 *         does: 8 conversions and 16 FMAs a step (2 FLOPs a lane an FMA);
 *         1.0 x 1.0, so every lane counts up by one.
 * An empty asm names the fp16 registers as changed every step, so the
 * compiler cannot hoist the conversions out of the loop.
 *
 * The block kernels are one row of llama.cpp's blocks (32 weights, an fp16
 * scale each: q8_0 34 bytes, q4_0 18) against q8_0 activations, the way
 * llama.cpp's x86 path multiplies them: q4_0's nibbles unpacked to int8
 * (low nibbles the first 16 weights, high the last 16, less 8), the signs
 * moved onto the activations so vpdpbusd takes |x| as unsigned, the int32
 * sum converted and scaled by both blocks' scales. */
#include <immintrin.h>

#include "kernels.h"

#define ACC16(T, load, p, w)                                                                       \
    T x0 = load(p + 0 * w), x1 = load(p + 1 * w), x2 = load(p + 2 * w), x3 = load(p + 3 * w),      \
      x4 = load(p + 4 * w), x5 = load(p + 5 * w), x6 = load(p + 6 * w), x7 = load(p + 7 * w),      \
      x8 = load(p + 8 * w), x9 = load(p + 9 * w), x10 = load(p + 10 * w), x11 = load(p + 11 * w),  \
      x12 = load(p + 12 * w), x13 = load(p + 13 * w), x14 = load(p + 14 * w),                      \
      x15 = load(p + 15 * w)
#define STORE16(store, p, w)                                                                       \
    store(p + 0 * w, x0), store(p + 1 * w, x1), store(p + 2 * w, x2), store(p + 3 * w, x3),        \
        store(p + 4 * w, x4), store(p + 5 * w, x5), store(p + 6 * w, x6), store(p + 7 * w, x7),    \
        store(p + 8 * w, x8), store(p + 9 * w, x9), store(p + 10 * w, x10),                        \
        store(p + 11 * w, x11), store(p + 12 * w, x12), store(p + 13 * w, x13),                    \
        store(p + 14 * w, x14), store(p + 15 * w, x15)
#define STEP16(op)                                                                                 \
    x0 = op(x0), x1 = op(x1), x2 = op(x2), x3 = op(x3), x4 = op(x4), x5 = op(x5), x6 = op(x6),     \
    x7 = op(x7), x8 = op(x8), x9 = op(x9), x10 = op(x10), x11 = op(x11), x12 = op(x12),            \
    x13 = op(x13), x14 = op(x14), x15 = op(x15)

static __m512i loadi(const int32_t *p) { return _mm512_loadu_si512(p); }
static void storei(int32_t *p, __m512i v) { _mm512_storeu_si512(p, v); }

void rf_kern_dot_bf16_avx512(float *chains, size_t iters)
{
    const __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f80);     /* (1.0, 0) */
    const __m512bh b = (__m512bh)_mm512_set1_epi32(0x3f803f80); /* (1.0, 1.0) */
    ACC16(__m512, _mm512_loadu_ps, chains, 16);
#define DPBF(x) _mm512_dpbf16_ps(x, a, b)
    for (size_t i = 0; i < iters; i++)
        STEP16(DPBF);
#undef DPBF
    STORE16(_mm512_storeu_ps, chains, 16);
}

void rf_kern_dot_int8_avx512(int32_t *chains, size_t iters)
{
    const __m512i ones = _mm512_set1_epi8(1);
    ACC16(__m512i, loadi, chains, 16);
#define DPBUSD(x) _mm512_dpbusd_epi32(x, ones, ones)
    for (size_t i = 0; i < iters; i++)
        STEP16(DPBUSD);
#undef DPBUSD
    STORE16(storei, chains, 16);
}

void rf_kern_fp16_tile_avx512(float *chains, size_t iters)
{
    __m256i h0 = _mm256_set1_epi16(0x3c00), h1 = h0, h2 = h0, h3 = h0; /* fp16 1.0 */
    __m256i g0 = h0, g1 = h0, g2 = h0, g3 = h0;
    ACC16(__m512, _mm512_loadu_ps, chains, 16);
    for (size_t i = 0; i < iters; i++) {
        __asm__ volatile("" : "+v"(h0), "+v"(h1), "+v"(h2), "+v"(h3));
        __asm__ volatile("" : "+v"(g0), "+v"(g1), "+v"(g2), "+v"(g3));
        __m512 a0 = _mm512_cvtph_ps(h0), a1 = _mm512_cvtph_ps(h1);
        __m512 a2 = _mm512_cvtph_ps(h2), a3 = _mm512_cvtph_ps(h3);
        __m512 b0 = _mm512_cvtph_ps(g0), b1 = _mm512_cvtph_ps(g1);
        __m512 b2 = _mm512_cvtph_ps(g2), b3 = _mm512_cvtph_ps(g3);
        x0 = _mm512_fmadd_ps(a0, b0, x0), x1 = _mm512_fmadd_ps(a0, b1, x1);
        x2 = _mm512_fmadd_ps(a0, b2, x2), x3 = _mm512_fmadd_ps(a0, b3, x3);
        x4 = _mm512_fmadd_ps(a1, b0, x4), x5 = _mm512_fmadd_ps(a1, b1, x5);
        x6 = _mm512_fmadd_ps(a1, b2, x6), x7 = _mm512_fmadd_ps(a1, b3, x7);
        x8 = _mm512_fmadd_ps(a2, b0, x8), x9 = _mm512_fmadd_ps(a2, b1, x9);
        x10 = _mm512_fmadd_ps(a2, b2, x10), x11 = _mm512_fmadd_ps(a2, b3, x11);
        x12 = _mm512_fmadd_ps(a3, b0, x12), x13 = _mm512_fmadd_ps(a3, b1, x13);
        x14 = _mm512_fmadd_ps(a3, b2, x14), x15 = _mm512_fmadd_ps(a3, b3, x15);
    }
    STORE16(_mm512_storeu_ps, chains, 16);
}

/* acc + one block's int8 dot product (the signs moved onto y: 8 int32
 * sums), scaled. */
static inline __m256 block_dot(__m256 acc, __m256i x, __m256i y, uint16_t dx, uint16_t dy)
{
    __m256i ax = _mm256_sign_epi8(x, x), sy = _mm256_sign_epi8(y, x);
    __m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy);
    float d = _cvtsh_ss(dx) * _cvtsh_ss(dy);
    return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(s), acc);
}

static inline float hsum(__m256 a, __m256 b)
{
    __m256 v = _mm256_add_ps(a, b);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

float rf_kern_dot_q8_0_avx512(const rf_kern_q8_0 *x, const rf_kern_q8_0 *y, size_t blocks)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    size_t b = 0;
    for (; b + 2 <= blocks; b += 2) {
        __m256i x0 = _mm256_loadu_si256((const __m256i *)x[b].qs);
        __m256i y0 = _mm256_loadu_si256((const __m256i *)y[b].qs);
        __m256i x1 = _mm256_loadu_si256((const __m256i *)x[b + 1].qs);
        __m256i y1 = _mm256_loadu_si256((const __m256i *)y[b + 1].qs);
        acc0 = block_dot(acc0, x0, y0, x[b].d, y[b].d);
        acc1 = block_dot(acc1, x1, y1, x[b + 1].d, y[b + 1].d);
    }
    for (; b < blocks; b++)
        acc0 = block_dot(acc0, _mm256_loadu_si256((const __m256i *)x[b].qs),
                         _mm256_loadu_si256((const __m256i *)y[b].qs), x[b].d, y[b].d);
    return hsum(acc0, acc1);
}

/* 16 bytes of nibbles as 32 int8 weights: low nibbles first, less 8. */
static inline __m256i unpack_q4(const uint8_t *qs)
{
    __m128i t = _mm_loadu_si128((const __m128i *)qs);
    __m256i v = _mm256_set_m128i(_mm_srli_epi16(t, 4), t);
    v = _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
    return _mm256_sub_epi8(v, _mm256_set1_epi8(8));
}

float rf_kern_dot_q4_0_avx512(const rf_kern_q4_0 *x, const rf_kern_q8_0 *y, size_t blocks)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    size_t b = 0;
    for (; b + 2 <= blocks; b += 2) {
        __m256i y0 = _mm256_loadu_si256((const __m256i *)y[b].qs);
        __m256i y1 = _mm256_loadu_si256((const __m256i *)y[b + 1].qs);
        acc0 = block_dot(acc0, unpack_q4(x[b].qs), y0, x[b].d, y[b].d);
        acc1 = block_dot(acc1, unpack_q4(x[b + 1].qs), y1, x[b + 1].d, y[b + 1].d);
    }
    for (; b < blocks; b++)
        acc0 = block_dot(acc0, unpack_q4(x[b].qs), _mm256_loadu_si256((const __m256i *)y[b].qs),
                         x[b].d, y[b].d);
    return hsum(acc0, acc1);
}
