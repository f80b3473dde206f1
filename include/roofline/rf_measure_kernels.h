/* rf_measure_kernels.h - the kernel table: one ISA's hardware kernels
 * behind function pointers, the reference kernels first (always built, the
 * oracle of every variant), chosen once at start-up from cpuid or an
 * override (RF_ISA). */
#ifndef RF_MEASURE_KERNELS_H
#define RF_MEASURE_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_measure_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Function pointers to one ISA's kernels, filled with the reference
 * kernels first and then overridden by the ISA's own (BLIS style). The
 * contract of each operation is in src/kernels/kernels.h and
 * src/kernels/attn_kernels.h; in short: f64 arrays 64-byte aligned, read
 * returns the sum, copy dst = src, triad a = b + s c, _nt with non-temporal
 * stores, fma runs fma_chains[dtype] independent chains x = x * mul + add
 * for iters steps; decode attention's scores sc (g, nk) = scale q (g, dh)
 * K (nk, dh)^T and values out (g, dh) = p (g, nk) V (nk, dh), K and V each
 * read once. */
struct rf_kern_q8_0; /* llama.cpp's blocks, src/kernels/kernels.h */
struct rf_kern_q4_0;

typedef struct rf_kernel_table {
    rf_isa isa;
    double (*read_f64)(const double *a, size_t n);
    void (*copy_f64)(double *dst, const double *src, size_t n);
    void (*copy_nt_f64)(double *dst, const double *src, size_t n);
    void (*triad_f64)(double *a, const double *b, const double *c, double s, size_t n);
    void (*triad_nt_f64)(double *a, const double *b, const double *c, double s, size_t n);
    void (*fma_f32)(float *chains, size_t iters, float mul, float add);
    void (*fma_f64)(double *chains, size_t iters, double mul, double add);
    size_t fma_chains_f32; /* independent chains (accumulators x lanes)     */
    size_t fma_chains_f64;
    bool fma_fused; /* one rounding per step (FMA); else mul, add   */
    bool nt_stores; /* the _nt kernels really stream (not scalar)    */
    void (*attn_scores_f32)(const float *q, const float *K, int64_t g, int64_t nk, int64_t dh,
                            float scale, float *sc);
    void (*attn_values_f32)(const float *p, const float *V, int64_t g, int64_t nk, int64_t dh,
                            float *out);
    rf_isa attn_isa;          /* the attention kernels' own ISA: AVX-512 tables
                               keep AVX2's (there is no 512-bit variant)    */
    int64_t attn_dh_multiple; /* they need d_h % this == 0; else the caller
                               takes the reference table's                  */
    /* Dot-product peaks (src/kernels/kernels.h has the contract); NULL where
     * the CPU or the table's ISA lacks the instructions (they need the
     * AVX-512 table): dot_bf16 (AVX-512 BF16), fp16_tile (F16C conversion
     * into fp32 FMAs), dot_int8 (AVX-512 VNNI) count RF_KERN_DOT_CHAINS
     * register chains up; dot_q8_0 / dot_q4_0 are llama.cpp's blocks
     * through VNNI, one row against q8_0 activations. */
    void (*dot_bf16)(float *chains, size_t iters);
    void (*fp16_tile)(float *chains, size_t iters);
    void (*dot_int8)(int32_t *chains, size_t iters);
    float (*dot_q8_0)(const struct rf_kern_q8_0 *x, const struct rf_kern_q8_0 *y, size_t blocks);
    float (*dot_q4_0)(const struct rf_kern_q4_0 *x, const struct rf_kern_q8_0 *y, size_t blocks);
    const char *dot_isa[3]; /* "avx512bf16", "avx512f16c", "avx512vnni":
                               the names of bf16's, fp16's and int8's (and
                               the blocks') kernels                        */
} rf_kernel_table;

#define RF_FMA_MAX_CHAINS 256

/* The table for one ISA. RF_EUNAVAIL when the ISA was not compiled in or
 * the CPU lacks it ("isa avx512 not supported by this CPU (best: avx2)"). */
rf_status rf_kernels_for(const rf_cpu *cpu, rf_isa isa, rf_kernel_table *out, rf_err *err);

/* Choose once at start-up: the ISA named by override (an option or the
 * RF_ISA environment variable, passed in by the caller; NULL or "" = none)
 * or else the best the CPU supports. */
rf_status rf_kernels_choose(const rf_cpu *cpu, const char *override, rf_kernel_table *out,
                            rf_err *err);

/* "read_avx2_f64", "fma_scalar_f32", ...: operation, ISA name
 * (rf_isa_name, or a profile's isa), dtype. */
void rf_kernel_name(const char *isa, const char *op, const char *dtype, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
