/* test_measure.c - the measurement layer: statistics, the CPU decisions,
 * every ISA's kernels against the reference and against checksums derived
 * by hand, level detection on made-up sweeps, smoke runs of each timed
 * kernel and of GEMM through CBLAS. Never absolute speed.
 *
 * `test_measure lab` runs only the --quick lab (seconds; ctest label nosan). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels.h"
#include "roofline/rf_measure.h"

/* ---- statistics ---------------------------------------------------------- */

static void stats_odd_and_even(void **state)
{
    (void)state;
    rf_stats s;
    const double odd[] = {3, 1, 2, 5, 4};
    assert_int_equal(rf_stats_of(odd, 5, &s, NULL), RF_OK);
    assert_true(s.best == 5 && s.max == 5 && s.min == 1 && s.median == 3 && s.n == 5);
    assert_true(fabs(s.spread - 0.4) < 1e-15); /* (5 - 3) / 5 */
    assert_true(rf_stats_unsteady(&s));
    const double even[] = {10, 9.6, 9.8, 10};
    assert_int_equal(rf_stats_of(even, 4, &s, NULL), RF_OK);
    assert_true(s.median == 9.9);               /* (9.8 + 10) / 2 */
    assert_true(fabs(s.spread - 0.01) < 1e-12); /* (10 - 9.9) / 10: steady */
    assert_false(rf_stats_unsteady(&s));
    const double one = 7;
    assert_int_equal(rf_stats_of(&one, 1, &s, NULL), RF_OK);
    assert_true(s.best == 7 && s.median == 7 && s.spread == 0);
}

static void stats_refused(void **state)
{
    (void)state;
    rf_stats s;
    rf_err e;
    double v[RF_STATS_MAX + 1] = {1, -2};
    assert_int_equal(rf_stats_of(v, 0, &s, &e), RF_EINVAL);
    assert_int_equal(rf_stats_of(v, 2, &s, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "sample 1"));
    v[1] = NAN;
    assert_int_equal(rf_stats_of(v, 2, &s, &e), RF_EINVAL);
    v[1] = 1;
    assert_int_equal(rf_stats_of(v, RF_STATS_MAX + 1, &s, &e), RF_ERANGE);
}

/* ---- CPU decisions on made-up CPUs ----------------------------------------- */

static rf_cpu made_up(const char *vendor, unsigned family, unsigned model)
{
    rf_cpu c;
    memset(&c, 0, sizeof c);
    snprintf(c.vendor, sizeof c.vendor, "%s", vendor);
    c.family = family;
    c.model = model;
    c.sse2 = c.avx = c.fma = c.avx2 = c.os_ymm = true;
    return c;
}

static void isa_choice(void **state)
{
    (void)state;
    rf_cpu c = made_up("AuthenticAMD", 0x19, 0x01); /* this lab's EPYC (Zen 3) */
    assert_int_equal(rf_isa_best(&c), RF_ISA_AVX2);
    c.avx512f = true; /* the CPU has it but the OS does not save ZMM state */
    assert_int_equal(rf_isa_best(&c), RF_ISA_AVX2);
    c.os_zmm = true;
    assert_int_equal(rf_isa_best(&c), RF_ISA_AVX512);
    c.avx512f = c.os_zmm = false;
    c.fma = false; /* AVX2 without FMA (no such x86, but the rule holds) */
    assert_int_equal(rf_isa_best(&c), RF_ISA_SSE);
    c.os_ymm = false;
    c.fma = true;
    assert_int_equal(rf_isa_best(&c), RF_ISA_SSE);
    c.sse2 = false;
    assert_int_equal(rf_isa_best(&c), RF_ISA_SCALAR);
    assert_true(rf_isa_supported(&c, RF_ISA_SCALAR));

    rf_kernel_table t;
    rf_err e;
    c = made_up("AuthenticAMD", 0x19, 0x01);
    assert_int_equal(rf_kernels_for(&c, RF_ISA_AVX512, &t, &e), RF_EUNAVAIL);
    assert_non_null(strstr(e.msg, "avx512 not supported"));
    assert_int_equal(rf_kernels_choose(&c, "avx9", &t, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "avx9"));
    assert_int_equal(rf_kernels_choose(&c, "scalar", &t, &e), RF_OK);
    assert_int_equal(t.isa, RF_ISA_SCALAR);
    assert_false(t.nt_stores);
    rf_isa isa;
    assert_int_equal(rf_isa_parse("sse", &isa, NULL), RF_OK);
    assert_int_equal(isa, RF_ISA_SSE);
    char name[48];
    rf_kernel_name(rf_isa_name(t.isa), "copy", "f64", name, sizeof name);
    assert_string_equal(name, "copy_scalar_f64");
}

static void flops_per_cycle(void **state)
{
    (void)state;
    /* 2 FMA pipes x lanes x 2 FLOP: AVX2 fp32 = 2 x 8 x 2 = 32 (Haswell and
     * later, Zen 2 and later); fp64 half that. */
    rf_cpu zen3 = made_up("AuthenticAMD", 0x19, 0x01);
    assert_int_equal(rf_cpu_flops_per_cycle(&zen3, RF_ISA_AVX2, RF_FP32), 32);
    assert_int_equal(rf_cpu_flops_per_cycle(&zen3, RF_ISA_AVX2, RF_FP64), 16);
    /* Zen 4 runs AVX-512 on 256-bit pipes: still 32. */
    assert_int_equal(rf_cpu_flops_per_cycle(&zen3, RF_ISA_AVX512, RF_FP32), 32);
    /* Zen 1 (family 17h, model 01h): 128-bit pipes, AVX2 fp32 = 2 x 4 x 2. */
    rf_cpu zen1 = made_up("AuthenticAMD", 0x17, 0x01);
    assert_int_equal(rf_cpu_flops_per_cycle(&zen1, RF_ISA_AVX2, RF_FP32), 16);
    /* Skylake-SP with two 512-bit FMA units: 2 x 16 x 2. */
    rf_cpu skx = made_up("GenuineIntel", 6, 0x55);
    assert_int_equal(rf_cpu_flops_per_cycle(&skx, RF_ISA_AVX512, RF_FP32), 64);
    /* SSE: two pipes, each a multiply or an add on 4 lanes; scalar: 2 x 1. */
    assert_int_equal(rf_cpu_flops_per_cycle(&skx, RF_ISA_SSE, RF_FP32), 8);
    assert_int_equal(rf_cpu_flops_per_cycle(&skx, RF_ISA_SCALAR, RF_FP64), 2);
    assert_int_equal(rf_cpu_flops_per_cycle(&skx, RF_ISA_AVX2, RF_BF16), 0);
}

/* ---- kernels: every ISA this CPU has, against checksums and the oracle -- */

#define N_SMALL 1037 /* not a multiple of any unroll, so tails run too */

static double *aligned(size_t n)
{
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 64, n * sizeof(double)), 0);
    return p;
}

/* sum over i < n of (i mod 16): 120 per full 16, then 0 + 1 + ... + (r-1). */
static double mod16_sum(size_t n)
{
    size_t r = n % 16;
    return 120.0 * (double)(n / 16) + (double)(r * (r - 1) / 2);
}

static void kernels_one_isa(const rf_kernel_table *t)
{
    double *a = aligned(N_SMALL), *b = aligned(N_SMALL), *c = aligned(N_SMALL);
    double *want = aligned(N_SMALL);
    for (size_t i = 0; i < N_SMALL; i++) {
        b[i] = (double)(i % 16);
        c[i] = (double)(i % 8);
    }
    /* read: N_SMALL = 1037 = 64 x 16 + 13, so 120 x 64 + 78 = 7758 */
    assert_true(mod16_sum(N_SMALL) == 7758);
    assert_true(t->read_f64(b, N_SMALL) == 7758);
    assert_true(t->read_f64(b, 0) == 0);

    void (*copies[])(double *, const double *, size_t) = {t->copy_f64, t->copy_nt_f64};
    for (int k = 0; k < 2; k++) {
        memset(a, 0, N_SMALL * sizeof *a);
        copies[k](a, b, N_SMALL);
        assert_memory_equal(a, b, N_SMALL * sizeof *a);
    }
    void (*triads[])(double *, const double *, const double *, double, size_t) = {t->triad_f64,
                                                                                  t->triad_nt_f64};
    rf_kern_triad_ref_f64(want, b, c, 3.0, N_SMALL);
    /* checksum: sum b + 3 sum c = 7758 + 3 x (28 x 129 + 10) = 7758 + 10866 */
    assert_true(rf_kern_read_ref_f64(want, N_SMALL) == 7758 + 3 * (28.0 * 129 + 10));
    for (int k = 0; k < 2; k++) {
        memset(a, 0, N_SMALL * sizeof *a);
        triads[k](a, b, c, 3.0, N_SMALL);
        assert_memory_equal(a, want, N_SMALL * sizeof *a);
    }

    /* FMA chains: each chain equals the one-chain oracle, bit for bit, after
     * few enough steps (500) that no chain has reached its fixed point. */
    float cf[RF_FMA_MAX_CHAINS];
    double cd[RF_FMA_MAX_CHAINS];
    const float mf = 1.0f - 1.0f / 4096, af = 1.0f / 1024;
    for (size_t j = 0; j < RF_FMA_MAX_CHAINS; j++) {
        cf[j] = 1.0f + (float)j / 1024;
        cd[j] = 1.0 + (double)j / 1024;
    }
    t->fma_f32(cf, 500, mf, af);
    t->fma_f64(cd, 500, (double)mf, (double)af);
    for (size_t j = 0; j < t->fma_chains_f32; j++)
        assert_true(cf[j] ==
                    rf_kern_chain_ref_f32(1.0f + (float)j / 1024, 500, mf, af, t->fma_fused));
    for (size_t j = 0; j < t->fma_chains_f64; j++)
        assert_true(cd[j] == rf_kern_chain_ref_f64(1.0 + (double)j / 1024, 500, (double)mf,
                                                   (double)af, t->fma_fused));
    /* distinct chains stayed distinct: nothing was computed once and copied */
    assert_true(cf[0] != cf[t->fma_chains_f32 - 1] || t->fma_chains_f32 == 1);
    free(a), free(b), free(c), free(want);
}

static void kernels_every_isa(void **state)
{
    (void)state;
    rf_cpu cpu;
    assert_int_equal(rf_cpu_query(&cpu, NULL), RF_OK);
    int tested = 0;
    for (int isa = 0; isa < RF_ISA_COUNT; isa++) {
        rf_kernel_table t;
        if (!rf_isa_supported(&cpu, (rf_isa)isa)) {
            print_message("  %s: not on this CPU, skipped\n", rf_isa_name((rf_isa)isa));
            continue;
        }
        assert_int_equal(rf_kernels_for(&cpu, (rf_isa)isa, &t, NULL), RF_OK);
        assert_int_equal(t.isa, isa);
        assert_true(t.fma_chains_f32 <= RF_FMA_MAX_CHAINS && t.fma_chains_f64 <= RF_FMA_MAX_CHAINS);
        kernels_one_isa(&t);
        tested++;
    }
    assert_true(tested >= 1);
}

static void fixed_point_stop(void **state)
{
    (void)state;
    /* x -> x (1 - 2^-12) + 2^-10 has the exact fixed point 4:
     * 4 - 4 x 2^-12 + 2^-10 = 4. The oracle stops there, so a billion steps
     * cost what convergence costs. */
    assert_true(rf_kern_chain_ref_f32(4.0f, 1000000000, 1.0f - 1.0f / 4096, 1.0f / 1024, 1) ==
                4.0f);
    double x = rf_kern_chain_ref_f64(1.0, 1000000000, 1.0 - 1.0 / 4096, 1.0 / 1024, 1);
    assert_true(fabs(x - 4.0) < 1e-12);
}

/* ---- the dot-product kernels against dot_ref.c ---------------------------- */

/* The oracle's fp16 decoding on values the format fixes (IEEE 754 binary16):
 * 0x3c00 = 1, 0x3800 = 0.5, 0xc000 = -2, 0x7bff = 65504 (the largest),
 * 0x0001 = 2^-24 (the smallest subnormal), 0x0400 = 2^-14 (the smallest
 * normal). */
static void half_reference(void **state)
{
    (void)state;
    assert_true(rf_kern_half_to_float(0x3c00) == 1.0f);
    assert_true(rf_kern_half_to_float(0x3800) == 0.5f);
    assert_true(rf_kern_half_to_float(0xc000) == -2.0f);
    assert_true(rf_kern_half_to_float(0x7bff) == 65504.0f);
    assert_true(rf_kern_half_to_float(0x0001) == ldexpf(1.0f, -24));
    assert_true(rf_kern_half_to_float(0x0400) == ldexpf(1.0f, -14));
    assert_true(rf_kern_half_to_float(0x8000) == 0.0f);
    /* q4_0's weight i: the low nibble of qs[i] less 8 (i < 16), the high
     * nibble of qs[i - 16] less 8: qs[0] = 0x2f gives weights 7 and -6;
     * against y[0] = 1, y[16] = 1 and d 1 x 1: 7 - 6 = 1 */
    rf_kern_q4_0 x = {.d = 0x3c00};
    rf_kern_q8_0 y = {.d = 0x3c00};
    for (int i = 0; i < RF_KERN_QK / 2; i++)
        x.qs[i] = 0x88; /* both weights 0 */
    x.qs[0] = 0x2f;
    y.qs[0] = 1, y.qs[16] = 1;
    assert_true(rf_kern_dot_q4_0_ref(&x, &y, 1) == 1.0f);
}

/* A fixed pseudo-random sequence (the LCG of Numerical Recipes). */
static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* Blocks of full-range values (q8_0 weights and activations in [-127, 127],
 * as llama.cpp's quantizer writes them; q4_0 bytes any value) and scales
 * 2^-4 .. 2^3 (exact products): each block's integer sum is exact, so the
 * kernel and the oracle differ only in the order of adding blocks' scaled
 * sums, at most one rounding (2^-24 relative) a block of the sum of the
 * terms' magnitudes. */
static void fill_random_blocks(rf_kern_q8_0 *x8, rf_kern_q4_0 *x4, rf_kern_q8_0 *y8, size_t n,
                               uint32_t seed)
{
    for (size_t b = 0; b < n; b++) {
        x8[b].d = x4[b].d = (uint16_t)((11 + lcg(&seed) % 8) << 10); /* 2^-4 .. 2^3 */
        y8[b].d = (uint16_t)((11 + lcg(&seed) % 8) << 10);
        for (int i = 0; i < RF_KERN_QK; i++) {
            x8[b].qs[i] = (int8_t)((int)(lcg(&seed) % 255) - 127);
            y8[b].qs[i] = (int8_t)((int)(lcg(&seed) % 255) - 127);
        }
        for (int i = 0; i < RF_KERN_QK / 2; i++)
            x4[b].qs[i] = (uint8_t)lcg(&seed);
    }
}

/* Sum over blocks and weights of |d_x d_y x_i y_i|: it bounds every partial
 * sum either order of adding forms, so n + 1 roundings of 2^-24 of it bound
 * their difference. */
static double blocks_magnitude(const rf_kern_q8_0 *x, const rf_kern_q8_0 *y, size_t n)
{
    double m = 0;
    for (size_t b = 0; b < n; b++) {
        double d = fabs((double)rf_kern_half_to_float(x[b].d) * rf_kern_half_to_float(y[b].d));
        for (int i = 0; i < RF_KERN_QK; i++)
            m += d * abs(x[b].qs[i] * y[b].qs[i]);
    }
    return m;
}

static void dots_one_table(const rf_kernel_table *t)
{
    /* register kernels: every chain counts up from its start by one a step
     * (int8: four, one quad of ones a lane), 37 steps (odd, and not a
     * multiple of any unrolling) */
    float f[RF_KERN_DOT_CHAINS];
    int32_t i32[RF_KERN_DOT_CHAINS];
    void (*fkern[])(float *, size_t) = {t->dot_bf16, t->fp16_tile};
    const char *fname[] = {"bf16", "fp16"};
    for (int k = 0; k < 2; k++) {
        if (!fkern[k]) {
            print_message("  %s dot product: not on this CPU (%s table), skipped\n", fname[k],
                          rf_isa_name(t->isa));
            continue;
        }
        for (int c = 0; c < RF_KERN_DOT_CHAINS; c++)
            f[c] = (float)c;
        fkern[k](f, 37);
        for (int c = 0; c < RF_KERN_DOT_CHAINS; c++)
            assert_true(f[c] == rf_kern_count_ref_f32((float)c, 37));
    }
    if (t->dot_int8) {
        for (int c = 0; c < RF_KERN_DOT_CHAINS; c++)
            i32[c] = -c;
        t->dot_int8(i32, 37);
        for (int c = 0; c < RF_KERN_DOT_CHAINS; c++)
            assert_int_equal(i32[c], -c + 4 * 37);
    } else {
        print_message("  int8 dot product (VNNI): not on this CPU (%s table), skipped\n",
                      rf_isa_name(t->isa));
    }
    if (!t->dot_q8_0 || !t->dot_q4_0) {
        print_message("  q8_0 / q4_0 blocks (VNNI): not on this CPU (%s table), skipped\n",
                      rf_isa_name(t->isa));
        return;
    }
    /* the blocks: odd counts (the kernels take two blocks a step and one
     * left over), each against the oracle */
    enum { MAX_BLOCKS = 131 };
    rf_kern_q8_0 *x8 = calloc(MAX_BLOCKS, sizeof *x8), *y8 = calloc(MAX_BLOCKS, sizeof *y8);
    rf_kern_q4_0 *x4 = calloc(MAX_BLOCKS, sizeof *x4);
    rf_kern_q8_0 *w8 = calloc(MAX_BLOCKS, sizeof *w8);
    assert_true(x8 && y8 && x4 && w8);
    const size_t counts[] = {0, 1, 2, 3, 7, 64, 129, MAX_BLOCKS};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        size_t n = counts[c];
        fill_random_blocks(x8, x4, y8, MAX_BLOCKS, 7u + (uint32_t)c);
        double want8 = rf_kern_dot_q8_0_ref(x8, y8, n), want4 = rf_kern_dot_q4_0_ref(x4, y8, n);
        double got8 = t->dot_q8_0(x8, y8, n), got4 = t->dot_q4_0(x4, y8, n);
        double tol8 = blocks_magnitude(x8, y8, n) * (double)(n + 1) * ldexp(1, -23);
        /* q4_0's magnitude: its weights as q8_0 blocks (|w| <= 8) */
        for (size_t b = 0; b < n; b++) {
            w8[b].d = x4[b].d;
            for (int i = 0; i < RF_KERN_QK / 2; i++) {
                w8[b].qs[i] = (int8_t)((x4[b].qs[i] & 0xf) - 8);
                w8[b].qs[i + RF_KERN_QK / 2] = (int8_t)((x4[b].qs[i] >> 4) - 8);
            }
        }
        double tol4 = blocks_magnitude(w8, y8, n) * (double)(n + 1) * ldexp(1, -23);
        /* the unpacked weights are the q4_0 row: one oracle agrees with the other */
        assert_true(fabs(rf_kern_dot_q8_0_ref(w8, y8, n) - want4) <= tol4);
        if (fabs(got8 - want8) > tol8 || fabs(got4 - want4) > tol4)
            fail_msg("%zu blocks: q8_0 %.9g (reference %.9g), q4_0 %.9g (reference %.9g)", n, got8,
                     want8, got4, want4);
    }
    /* exact data: sums within fp32's integers, so the order cannot matter */
    for (size_t b = 0; b < MAX_BLOCKS; b++) {
        x8[b].d = x4[b].d = y8[b].d = 0x3c00;
        for (int i = 0; i < RF_KERN_QK; i++) {
            x8[b].qs[i] = (int8_t)((int)((b * 32 + (size_t)i) * 7 % 15) - 7);
            y8[b].qs[i] = (int8_t)((int)((b * 32 + (size_t)i) * 11 % 31) - 15);
        }
        for (int i = 0; i < RF_KERN_QK / 2; i++)
            x4[b].qs[i] = (uint8_t)((b * 16 + (size_t)i) * 37 % 256);
    }
    assert_true(t->dot_q8_0(x8, y8, MAX_BLOCKS) == rf_kern_dot_q8_0_ref(x8, y8, MAX_BLOCKS));
    assert_true(t->dot_q4_0(x4, y8, MAX_BLOCKS) == rf_kern_dot_q4_0_ref(x4, y8, MAX_BLOCKS));
    free(x8), free(y8), free(x4), free(w8);
}

static void dots_every_isa(void **state)
{
    (void)state;
    rf_cpu cpu;
    assert_int_equal(rf_cpu_query(&cpu, NULL), RF_OK);
    for (int isa = 0; isa < RF_ISA_COUNT; isa++) {
        rf_kernel_table t;
        if (!rf_isa_supported(&cpu, (rf_isa)isa))
            continue;
        assert_int_equal(rf_kernels_for(&cpu, (rf_isa)isa, &t, NULL), RF_OK);
        /* a kernel only where cpuid has its extension */
        assert_true(!t.dot_bf16 || cpu.avx512_bf16);
        assert_true(!t.dot_int8 || cpu.avx512_vnni);
        assert_true(!t.fp16_tile || cpu.f16c);
        if (isa != RF_ISA_AVX512) {
            assert_true(!t.dot_bf16 && !t.fp16_tile && !t.dot_int8 && !t.dot_q8_0);
            continue;
        }
        dots_one_table(&t);
    }
    if (!rf_isa_supported(&cpu, RF_ISA_AVX512))
        print_message("  dot products: no AVX-512 on this CPU, every kernel skipped\n");
}

/* ---- levels from made-up sweeps ----------------------------------------- */

static rf_measurement point(uint64_t bytes, double gbps)
{
    rf_measurement m;
    memset(&m, 0, sizeof m);
    m.bytes = bytes;
    m.rate.best = m.rate.median = m.rate.min = m.rate.max = gbps * 1e9;
    return m;
}

static void levels_plateaus(void **state)
{
    (void)state;
    /* Shaped like this lab's EPYC: L1 ~280, L2 ~160, L3 ~120 GB/s, the L3
     * edge between 11.6 and 16 MiB, DRAM ~18. Points near edges straddle. */
    const double gb[] = {255, 265, 280, 279, 281, 168, 165, 160, 159, 165, 158, 141,
                         133, 130, 124, 123, 120, 121, 122, 121, 84,  26,  22,  13};
    rf_measurement sweep[24];
    for (size_t i = 0; i < 24; i++)
        sweep[i] = point((uint64_t)(16384 * pow(2, i / 2.0)), gb[i]);
    rf_measurement dram = point(256u << 20, 18);
    rf_levels lv;
    assert_int_equal(rf_levels_detect(sweep, 24, &dram, 3, &lv, NULL), RF_OK);
    assert_int_equal(lv.n, 4);
    assert_string_equal(lv.level[0].name, "L1");
    assert_string_equal(lv.level[3].name, "DRAM");
    assert_true(lv.level[0].bandwidth_bytes_per_s == 280e9); /* best, not the edge point 281 */
    assert_true(lv.level[1].bandwidth_bytes_per_s == 165e9 ||
                lv.level[1].bandwidth_bytes_per_s == 168e9);
    assert_true(lv.level[2].bandwidth_bytes_per_s >= 120e9 &&
                lv.level[2].bandwidth_bytes_per_s <= 133e9);
    assert_true(lv.level[3].bandwidth_bytes_per_s == 18e9);
    assert_true(lv.level[3].bytes == 256u << 20);
    /* 84 falls from 121 to 26 (over 10% each side): on the edge; 26 and
     * below are within 1.6 x DRAM: DRAM's side of the last edge */
    assert_int_equal(lv.first[3], 20);
    assert_int_equal(lv.end[3], 24);
    for (size_t l = 0; l + 1 < lv.n; l++) {
        assert_true(lv.first[l] < lv.end[l] && lv.end[l] == lv.first[l + 1]);
        assert_true(lv.point[l] >= lv.first[l] && lv.point[l] < lv.end[l]);
        assert_true(lv.level[l].bandwidth_bytes_per_s > lv.level[l + 1].bandwidth_bytes_per_s);
    }
}

/* Two runs measured here (roofline measure, 2026-12-01). In both the L2
 * and L3 plateaus are close (160-175 and 122-148 GB/s) and the points past
 * the L3 fall steeply to DRAM. Falling points are edges, not levels: cut
 * as levels they are cheaper than the L2/L3 edge (in log bandwidth, a lone
 * 65 after 122 costs ln(122/65)^2 x 8/9 = 0.35, the L2/L3 edge
 * ln(160/122)^2 x 6 x 8 / 14 = 0.25), and the real L3 would vanish into
 * the L2. */
static void levels_edge_point(void **state)
{
    (void)state;
    const double gb[] = {220, 279, 264, 268,                     /* L1: 16-45 KiB     */
                         160, 155, 159, 159, 165, 150,           /* L2: 64-512 KiB    */
                         125, 128, 126, 123, 122, 106, 125, 120, /* L3: 724 KiB-8 MiB */
                         65,                                     /* the fall (11 MiB) */
                         37,  25,  21};                          /* DRAM's side       */
    rf_measurement sweep[25];
    for (size_t i = 0; i < 22; i++)
        sweep[i] = point((uint64_t)(16384 * pow(2, i / 2.0)), gb[i]);
    rf_measurement dram = point(512u << 20, 25.8);
    rf_levels lv;
    assert_int_equal(rf_levels_detect(sweep, 22, &dram, 3, &lv, NULL), RF_OK);
    assert_int_equal(lv.n, 4);
    assert_true(lv.level[0].bandwidth_bytes_per_s == 279e9);
    assert_true(lv.level[1].bandwidth_bytes_per_s == 165e9);
    /* the L3's figure is its best point away from the edges: 128 */
    assert_true(lv.level[2].bandwidth_bytes_per_s == 128e9);
    assert_int_equal(lv.first[2], 10);
    assert_int_equal(lv.end[2], 18); /* 65 falls 46% (from 120), then 43%: DRAM's side */

    /* The second: two falling points past the L3, the first of them (40)
     * faster than 1.6 x DRAM = 38.4, so only the edge rule keeps it out. */
    const double gb2[] = {261, 268, 279, 288, 257,                /* L1, 64 KiB falls */
                          168, 160, 163, 170, 157, 156, 147,      /* L2: 90-724 KiB   */
                          130, 126, 126, 125, 126, 129, 126, 124, /* L3: 1-11.3 MiB   */
                          69,  40,                                /* 16, 22.6 MiB     */
                          33,  31};                               /* 32, 45 MiB       */
    for (size_t i = 0; i < 24; i++)
        sweep[i] = point((uint64_t)(16384 * pow(2, i / 2.0)), gb2[i]);
    dram = point(512u << 20, 24.0);
    assert_int_equal(rf_levels_detect(sweep, 24, &dram, 3, &lv, NULL), RF_OK);
    assert_int_equal(lv.n, 4);
    assert_true(lv.level[0].bandwidth_bytes_per_s == 288e9);
    assert_true(lv.level[1].bandwidth_bytes_per_s == 170e9);
    assert_true(lv.level[2].bandwidth_bytes_per_s == 129e9);
    assert_int_equal(lv.first[3], 20); /* 69 and 40 fall: DRAM's side */
}

static void levels_merge_and_refuse(void **state)
{
    (void)state;
    /* Two plateaus 5% apart are one level; three levels asked, two found. */
    const double gb[] = {200, 200, 200, 190, 190, 190, 60, 60, 60, 60};
    rf_measurement sweep[10];
    for (size_t i = 0; i < 10; i++)
        sweep[i] = point(65536u << i, gb[i]);
    rf_measurement dram = point(1u << 30, 10);
    rf_levels lv;
    assert_int_equal(rf_levels_detect(sweep, 10, &dram, 3, &lv, NULL), RF_OK);
    assert_int_equal(lv.n, 3);
    assert_true(lv.level[0].bandwidth_bytes_per_s == 200e9);
    assert_true(lv.level[1].bandwidth_bytes_per_s == 60e9);
    assert_string_equal(lv.level[2].name, "DRAM");
    /* no cache region at all: only DRAM */
    assert_int_equal(rf_levels_detect(sweep, 0, &dram, 3, &lv, NULL), RF_OK);
    assert_int_equal(lv.n, 1);
    rf_err e;
    sweep[3].bytes = sweep[2].bytes;
    assert_int_equal(rf_levels_detect(sweep, 10, &dram, 3, &lv, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "does not grow"));
    assert_int_equal(rf_levels_detect(sweep, 2, &dram, 0, &lv, &e), RF_EINVAL);
}

/* ---- timed kernels, tiny sizes ------------------------------------------- */

/* This CPU, its best kernels and a team of one thread. */
static rf_team *one_thread(rf_cpu *cpu, rf_kernel_table *t)
{
    rf_team *team = NULL;
    assert_int_equal(rf_cpu_query(cpu, NULL), RF_OK);
    assert_int_equal(rf_kernels_choose(cpu, NULL, t, NULL), RF_OK);
    assert_int_equal(rf_team_new(cpu, 1, &team, NULL), RF_OK);
    return team;
}

static void timed_kernels(void **state)
{
    (void)state;
    rf_cpu cpu;
    rf_kernel_table t;
    rf_err e;
    rf_team *team = one_thread(&cpu, &t);
    assert_int_equal(rf_team_size(team), 1);
    rf_timing tm = {0.002, 2};
    for (int k = 0; k < RF_BW_COUNT; k++) {
        rf_measurement m;
        const rf_bw_desc *d = rf_bw_desc_of((rf_bw_kind)k);
        assert_int_equal(rf_bw_measure(team, &t, (rf_bw_kind)k, 100000, tm, &m, &e), RF_OK);
        /* rounded down to whole 512-byte slices per array: 100000 / 8 / arrays,
         * to a multiple of 64 elements */
        uint64_t per = 100000 / (8u * (uint64_t)d->arrays);
        per -= per % 64;
        assert_true(m.bytes == per * 8u * (uint64_t)d->arrays);
        assert_true(m.rate.best > 0 && m.rate.median > 0 && m.reps >= 1);
        assert_non_null(strstr(m.name, d->op));
    }
    rf_measurement m;
    assert_int_equal(rf_bw_measure(team, &t, RF_BW_TRIAD, 100, tm, &m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "too small"));
    assert_int_equal(rf_fma_measure(team, &t, RF_FP32, tm, &m, &e), RF_OK);
    assert_true(m.rate.best > 0);
    assert_int_equal(rf_fma_measure(team, &t, RF_FP64, tm, &m, &e), RF_OK);
    assert_int_equal(rf_fma_measure(team, &t, RF_BF16, tm, &m, &e), RF_EINVAL);
    /* the dot products: timed and checked (rf_dot_measure compares every
     * thread's result with dot_ref.c after timing), or refused by name */
    for (int k = 0; k < RF_DOT_COUNT; k++) {
        rf_status ds = rf_dot_measure(team, &t, (rf_dot_kind)k, tm, &m, &e);
        if (!rf_dot_available(&t, (rf_dot_kind)k)) {
            assert_int_equal(ds, RF_EUNAVAIL);
            assert_non_null(strstr(e.msg, rf_dot_name((rf_dot_kind)k)));
            print_message("  %s dot product: not on this CPU, skipped\n",
                          rf_dot_name((rf_dot_kind)k));
            continue;
        }
        if (ds != RF_OK)
            fail_msg("%s", e.msg);
        assert_true(m.rate.best > 0 && m.rate.median > 0);
        assert_non_null(strstr(m.name, rf_dot_name((rf_dot_kind)k)));
    }
    assert_int_equal(rf_dot_measure(team, &t, RF_DOT_COUNT, tm, &m, &e), RF_EINVAL);
    rf_status s = rf_clock_measure(team, tm, &m, &e);
    assert_true(s == RF_OK || s == RF_EUNAVAIL);
    if (s == RF_OK)
        assert_true(m.rate.best > 1e8); /* any core this century runs above 100 MHz */
    rf_timing bad = {0.001, 0};
    assert_int_equal(rf_fma_measure(team, &t, RF_FP32, bad, &m, &e), RF_EINVAL);
    rf_team_free(team);
    assert_int_equal(rf_team_new(&cpu, cpu.cpus + 1, &team, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "threads"));
    rf_team_free(NULL);
}

/* A read set kept open and read a chunk per call, in rotation: the set is
 * rounded to whole chunks, a call reads one chunk, the checksum checked over
 * many calls that wrap around the set; only the read takes a chunk. */
static void bw_set_chunks(void **state)
{
    (void)state;
    rf_cpu cpu;
    rf_kernel_table t;
    rf_err e;
    rf_team *team = one_thread(&cpu, &t);
    rf_bw_set *set = NULL;
    /* 1 MiB read by 1 thread = 131072 elements; a 100000 B chunk is 12500
     * elements, 12480 as whole 64-element slices; the set rounds down to 10
     * whole chunks = 124800 elements = 998400 B. */
    assert_int_equal(rf_bw_open(team, &t, RF_BW_READ, 1 << 20, 100000, &set, &e), RF_OK);
    assert_true(rf_bw_set_bytes(set) == 998400);
    rf_measurement m;
    for (int burst = 0; burst < 3; burst++) { /* 3 x (calibration + 4 trials) calls wrap */
        assert_int_equal(rf_bw_time(set, (rf_timing){0.0005, 4}, &m, &e), RF_OK);
        /* a call reads one chunk: 12480 elements x 8 B on the one thread */
        assert_true(m.bytes == 998400 && m.work == (double)m.reps * 12480 * 8);
        assert_true(m.rate.best > 0 && m.rate.n == 4);
    }
    rf_bw_close(set);
    /* without a chunk a call reads the whole set */
    assert_int_equal(rf_bw_open(team, &t, RF_BW_READ, 1 << 20, 0, &set, &e), RF_OK);
    assert_int_equal(rf_bw_time(set, (rf_timing){0.0005, 2}, &m, &e), RF_OK);
    assert_true(m.bytes == 1 << 20 && m.work == (double)m.reps * (1 << 20));
    rf_bw_close(set);
    rf_bw_close(NULL);
    assert_int_equal(rf_bw_open(team, &t, RF_BW_COPY, 1 << 20, 100000, &set, &e), RF_EINVAL);
    assert_null(set);
    assert_non_null(strstr(e.msg, "only read"));
    assert_int_equal(rf_bw_open(team, &t, RF_BW_READ, 1 << 20, 100, &set, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "chunk"));
    rf_team_free(team);
}

/* ---- GEMM through CBLAS --------------------------------------------------- */

static void gemm_small(void **state)
{
    (void)state;
    const rf_dtype_kind dts[] = {RF_FP32, RF_FP64};
    for (int d = 0; d < 2; d++)
        for (int gemv = 0; gemv < 2; gemv++) {
            rf_gemm_bench_opts o = {.m = gemv ? 1 : 5,
                                    .k = 96,
                                    .n = 72,
                                    .dtype = dts[d],
                                    .gemv = gemv,
                                    .threads = 1,
                                    .cold_bytes = 1 << 20,
                                    .timing = {0.002, 2}};
            rf_gemm_bench_result g;
            rf_err e;
            assert_int_equal(rf_gemm_bench(&o, &g, &e), RF_OK);
            /* F = 2 M K N; Q = (M K + K N + M N) b */
            uint64_t b = dts[d] == RF_FP32 ? 4 : 8;
            assert_true(g.flops == 2u * (uint64_t)o.m * 96 * 72);
            assert_true(g.bytes == ((uint64_t)o.m * 96 + 96 * 72 + (uint64_t)o.m * 72) * b);
            /* 1 MiB of copies of a 96 x 72 W: ceil(2^20 / (6912 b)) */
            assert_true(g.copies == (uint32_t)((1048576 + 6912 * b - 1) / (6912 * b)));
            assert_true(g.flops_per_s.best > 0 && g.max_rel_err < 1e-5);
            assert_false(g.scaled);
            rf_roof roof = {
                .math = dts[d], .peak_flops_per_s = 1e12, .bw_bytes_per_s = 1e11, .ridge = 10};
            rf_gemm_placed p;
            rf_gemm_place(&g, &roof, &p);
            assert_true(fabs(p.point.intensity - (double)g.flops / (double)g.bytes) < 1e-12);
            assert_true(p.of_roof > 0 && p.time_s_median > 0);
            /* a second pass pools its trials: 2 + 2 samples, the best of
             * all, bytes/s = FLOP/s x Q / F */
            rf_gemm_bench_result g2;
            assert_int_equal(rf_gemm_bench(&o, &g2, &e), RF_OK);
            double best =
                g.flops_per_s.best > g2.flops_per_s.best ? g.flops_per_s.best : g2.flops_per_s.best;
            /* an empty (zeroed) result takes the first pass whole */
            static rf_gemm_bench_result empty;
            memset(&empty, 0, sizeof empty);
            assert_int_equal(rf_gemm_bench_merge(&empty, &g2, &e), RF_OK);
            assert_true(empty.flops_per_s.n == 2 && empty.flops_per_s.best == g2.flops_per_s.best);
            assert_int_equal(rf_gemm_bench_merge(&g, &g2, &e), RF_OK);
            assert_int_equal(g.flops_per_s.n, 4);
            assert_true(g.flops_per_s.best == best);
            assert_true(fabs(g.bytes_per_s.best - best * (double)g.bytes / (double)g.flops) <=
                        1e-9 * g.bytes_per_s.best);
        }
    /* pooling another shape is refused */
    rf_gemm_bench_opts o1 = {.m = 4,
                             .k = 32,
                             .n = 32,
                             .dtype = RF_FP32,
                             .threads = 1,
                             .timing = {0.001, 1}},
                       o2 = o1;
    o2.n = 16;
    rf_gemm_bench_result g1, g2;
    rf_err e;
    assert_int_equal(rf_gemm_bench(&o1, &g1, &e), RF_OK);
    assert_int_equal(rf_gemm_bench(&o2, &g2, &e), RF_OK);
    assert_int_equal(rf_gemm_bench_merge(&g1, &g2, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "another shape"));
}

/* A sweep in RF_GEMM_SWEEP_PASSES (3) passes: with 7 trials a point is
 * spread (7 >= 2 x 3) and pools 3 + 2 + 2 = 7; with 5 it is timed once,
 * all 5 in the first pass; the progress hook sees every timing; the sweep
 * sets each point's timing and memory limit (half the free memory). */
typedef struct sweep_seen {
    int calls[3][2]; /* per pass: point 0, point 1 */
} sweep_seen;

static void sweep_hook(void *user, int pass, int passes, const rf_gemm_sweep_point *p)
{
    sweep_seen *seen = user;
    assert_int_equal(passes, 3);
    assert_non_null(p); /* no sampler: no bursts */
    seen->calls[pass][p->opts.n == 40 ? 0 : 1]++;
}

static void gemm_sweep_passes(void **state)
{
    (void)state;
    rf_gemm_sweep_point pts[2] = {
        {.opts = {.m = 3, .k = 48, .n = 40, .dtype = RF_FP32, .threads = 1}},
        {.opts = {.m = 1, .k = 48, .n = 24, .dtype = RF_FP64, .gemv = true, .threads = 1}},
    };
    for (int trials = 7; trials >= 5; trials -= 2) {
        sweep_seen seen = {0};
        rf_gemm_sweep_opts o = {.trials = trials,
                                .mem_avail_bytes = 1 << 30,
                                .progress = sweep_hook,
                                .progress_user = &seen};
        rf_err e;
        assert_int_equal(rf_gemm_sweep(&o, pts, 2, &e), RF_OK);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(pts[i].result.flops_per_s.n, trials);
            assert_true(pts[i].opts.mem_limit_bytes == 1 << 29);
            assert_true(pts[i].opts.timing.min_time_s == RF_GEMM_MIN_TRIAL_S);
        }
        for (int pass = 0; pass < 3; pass++)
            for (int i = 0; i < 2; i++)
                assert_int_equal(seen.calls[pass][i], trials == 7 || pass == 0);
    }
    assert_true(pts[0].result.flops == 2u * 3 * 48 * 40 && pts[0].result.max_rel_err < 1e-5);
    assert_string_equal(pts[1].result.routine, "cblas_dgemv");
    rf_err e;
    rf_gemm_sweep_opts none = {.trials = 0}; /* a budget needs a roof */
    assert_int_equal(rf_gemm_sweep(&none, pts, 2, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "roof"));
}

/* The trial budget: 3 s of roofline time, 3 to 15 trials. On a roof of
 * 1 TFLOP/s and 1 TB/s (ridge 1), a 4096^2 GEMV in fp32 is memory-bound:
 * Q = (4096 + 4096^2 + 4096) x 4 = 67,141,632 B, 67.1 us, so 3 s wants
 * 44,682 trials: 15; M = 4096, K = N = 65536 takes 2 x 4096 x 65536^2 =
 * 3.52e13 FLOPs, 35.2 s: 3; and --trials wins over the budget. */
static void gemm_sweep_budget(void **state)
{
    (void)state;
    rf_roof roof = {.math = RF_FP32, .peak_flops_per_s = 1e12, .bw_bytes_per_s = 1e12, .ridge = 1};
    rf_gemm_sweep_opts o = {.roof = &roof};
    rf_gemm_bench_opts gemv = {.m = 1, .k = 4096, .n = 4096, .dtype = RF_FP32};
    rf_gemm_bench_opts big = {.m = 4096, .k = 65536, .n = 65536, .dtype = RF_FP32};
    assert_int_equal(rf_gemm_sweep_trials(&o, &gemv), RF_GEMM_TRIALS_MAX);
    assert_int_equal(rf_gemm_sweep_trials(&o, &big), RF_GEMM_TRIALS_MIN);
    /* between: K = N = 8192, M = 4096: 5.50e11 FLOPs, 0.55 s, ceil(3 / 0.55) = 6 */
    rf_gemm_bench_opts mid = {.m = 4096, .k = 8192, .n = 8192, .dtype = RF_FP32};
    assert_int_equal(rf_gemm_sweep_trials(&o, &mid), 6);
    o.trials = 9;
    assert_int_equal(rf_gemm_sweep_trials(&o, &big), 9);
}

static void gemm_refused_and_scaled(void **state)
{
    (void)state;
    rf_gemm_bench_opts o = {.m = 2,
                            .k = 64,
                            .n = 64,
                            .dtype = RF_FP32,
                            .gemv = true,
                            .threads = 1,
                            .timing = {0.001, 1}};
    rf_gemm_bench_result g;
    rf_err e;
    assert_int_equal(rf_gemm_bench(&o, &g, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "M = 1"));
    o.gemv = false;
    /* bf16 through cblas_sbgemm where the loaded OpenBLAS has it (checked
     * against the reference dot like fp32), else refused by name; no
     * OpenBLAS has an fp16 or int8 GEMM */
    o.dtype = RF_BF16;
    rf_status s = rf_gemm_bench(&o, &g, &e);
    assert_int_equal(s, rf_gemm_dtype_check(RF_BF16, NULL) == RF_OK ? RF_OK : RF_EUNAVAIL);
    if (s == RF_OK) {
        assert_string_equal(g.routine, "cblas_sbgemm");
        assert_true(g.max_rel_err <= 1e-3 && g.flops_per_s.best > 0);
    } else {
        assert_non_null(strstr(e.msg, "cblas_sbgemm"));
        print_message("  bf16 GEMM: %s; skipped\n", e.msg);
    }
    o.dtype = RF_FP16;
    assert_int_equal(rf_gemm_bench(&o, &g, &e), RF_EUNAVAIL);
    assert_non_null(strstr(e.msg, "no fp16 GEMM"));
    assert_string_equal(rf_gemm_routine(RF_BF16, true), "cblas_sbgemv");
    o.dtype = RF_FP32;
    o.n = 0;
    assert_int_equal(rf_gemm_bench(&o, &g, &e), RF_EINVAL);
    /* X, W and Y in fp32 take (M K + K N + M N) 4 = (128 + 66 N) 4 bytes:
     * N = 64 needs 17,408 B, over a 10,000 B limit; N = 32 needs 8,960 B */
    o.n = 64;
    o.mem_limit_bytes = 10000;
    assert_int_equal(rf_gemm_bench(&o, &g, &e), RF_OK);
    assert_true(g.scaled && g.n == 32);
    o.mem_limit_bytes = 100; /* N = 1 still needs 776 B */
    assert_int_equal(rf_gemm_bench(&o, &g, &e), RF_ENOMEM);
}

/* ---- the memory roof's bursts: summary and --merge ------------------------- */

static void roof_bursts_and_merge(void **state)
{
    (void)state;
    rf_hw_profile *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_true(a && b);
    snprintf(a->cpu, sizeof a->cpu, "cpu");
    snprintf(a->isa, sizeof a->isa, "avx512");
    a->threads = 2;
    a->n_levels = 1;
    /* bursts 50, 60, 40, 62, 61 GB/s: sorted 40 50 60 61 62, so the median
     * is 60, the quartiles (linear, positions 1 and 3 of 0..4) 50 and 61,
     * the slowest 40: 35% below the 62 roof, more than RF_ROOF_MOVES */
    a->bandwidth_bytes_per_s = a->levels[0].bandwidth_bytes_per_s = 62e9;
    a->peak_flops_per_s[RF_FP32] = 400e9;
    a->dram_bursts = (rf_hw_profile_bursts){
        .n = 5, .trials = 16, .runs = 1, .best = {50e9, 60e9, 40e9, 62e9, 61e9}};
    rf_hw_profile_summary s;
    rf_hw_profile_summarize(a, &s);
    assert_true(s.roof_typical == 60e9 && s.roof_q1 == 50e9 && s.roof_q3 == 61e9);
    assert_true(s.roof_low == 40e9 && s.roof_bursts == 5 && s.roof_trials == 16);
    assert_true(s.roof_moves);
    /* four bursts 10 20 30 40: quartiles at positions 0.75 and 2.25: 17.5
     * and 32.5, the median 25; within 10% of the roof nothing moves */
    rf_hw_profile_bursts four = {.n = 4, .trials = 1, .runs = 1, .best = {40, 10, 30, 20}};
    *b = *a;
    b->dram_bursts = four;
    b->bandwidth_bytes_per_s = 40;
    rf_hw_profile_summarize(b, &s);
    assert_true(s.roof_q1 == 17.5 && s.roof_typical == 25 && s.roof_q3 == 32.5);
    b->dram_bursts = (rf_hw_profile_bursts){.n = 2, .trials = 1, .runs = 1, .best = {39, 40}};
    rf_hw_profile_summarize(b, &s);
    assert_false(s.roof_moves);

    /* --merge: the new run (b) read a lower roof and a higher fp32 peak; the
     * higher of each is kept, the DRAM level with the roof, the bursts pooled
     * oldest first, the runs counted */
    *b = *a;
    b->bandwidth_bytes_per_s = b->levels[0].bandwidth_bytes_per_s = 38e9;
    b->peak_flops_per_s[RF_FP32] = 450e9;
    b->dram_bursts = (rf_hw_profile_bursts){.n = 2, .trials = 16, .runs = 1, .best = {37e9, 38e9}};
    rf_err e;
    assert_int_equal(rf_hw_profile_merge(a, b, &e), RF_OK);
    assert_true(b->bandwidth_bytes_per_s == 62e9 && b->levels[0].bandwidth_bytes_per_s == 62e9);
    assert_true(b->peak_flops_per_s[RF_FP32] == 450e9);
    assert_int_equal(b->dram_bursts.n, 7);
    assert_int_equal(b->dram_bursts.runs, 2);
    assert_true(b->dram_bursts.best[0] == 50e9 && b->dram_bursts.best[6] == 38e9);
    /* past RF_HW_PROFILE_MAX_BURSTS the oldest go: 7 + 60 = 67, 3 dropped */
    b->dram_bursts.n = 60;
    for (int i = 0; i < 60; i++)
        b->dram_bursts.best[i] = 1e9 * (i + 1);
    b->bandwidth_bytes_per_s = 62e9;
    rf_hw_profile *c = calloc(1, sizeof *c);
    assert_non_null(c);
    *c = *a;
    c->dram_bursts =
        (rf_hw_profile_bursts){.n = 7, .trials = 16, .runs = 2, .best = {1, 2, 3, 4, 5, 6, 7}};
    assert_int_equal(rf_hw_profile_merge(c, b, &e), RF_OK);
    assert_int_equal(b->dram_bursts.n, RF_HW_PROFILE_MAX_BURSTS);
    assert_true(b->dram_bursts.best[0] == 4 && b->dram_bursts.best[63] == 60e9);
    assert_int_equal(b->dram_bursts.runs, 4); /* c's 2 and b's 2 (one merge already) */
    /* another machine or setup is refused, by what differs */
    b->threads = 1;
    assert_int_equal(rf_hw_profile_merge(a, b, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "threads"));
    free(a), free(b), free(c);
}

/* ---- the --quick lab: sane figures ---------------------------------------- */

static void quick_lab(void **state)
{
    (void)state;
    rf_hw_profile *p = calloc(1, sizeof *p);
    rf_err e;
    rf_measure_opts o = {.quick = true};
    assert_non_null(p);
    if (rf_measure_cpu(&o, p, &e) != RF_OK)
        fail_msg("%s", e.msg);
    assert_true(p->threads >= 1 && p->clock_hz > 0);
    assert_true(p->bandwidth_bytes_per_s > 0);
    assert_true(p->peak_flops_per_s[RF_FP32] > 0 && p->peak_flops_per_s[RF_FP64] > 0);
    assert_true(p->theoretical_flops_per_s[RF_FP32] > 0);
    /* kernels: the sweep (>= 7 points: 8 KiB a thread to at least 64 x
     * that, by 2), the DRAM read, the clock, 2 FMA, and copy and triad at
     * >= 2 levels: at least 7 + 1 + 1 + 2 + 2 x 2 = 15 */
    assert_true(p->n_levels >= 2 && p->n_kernels >= 15);
    assert_string_equal(p->levels[p->n_levels - 1].name, "DRAM");
    /* the roof is the DRAM level's read figure, and L1 is at least as fast */
    assert_true(p->levels[p->n_levels - 1].bandwidth_bytes_per_s == p->bandwidth_bytes_per_s);
    assert_true(p->levels[0].bandwidth_bytes_per_s >= p->bandwidth_bytes_per_s);
    for (size_t i = 0; i < p->n_kernels; i++)
        assert_true(p->kernels[i].best > 0 && p->kernels[i].min <= p->kernels[i].median &&
                    p->kernels[i].median <= p->kernels[i].best);
    /* ridge = peak / bandwidth, through the summary and through the roof */
    rf_hw_profile_summary s;
    rf_hw_profile_summarize(p, &s);
    assert_true(s.ridge[RF_FP32] == p->peak_flops_per_s[RF_FP32] / p->bandwidth_bytes_per_s);
    rf_hw hw;
    rf_roof roof;
    assert_int_equal(rf_hw_profile_to_hw(p, &hw, NULL), RF_OK);
    assert_int_equal(rf_hw_roof(&hw, RF_FP64, &roof, NULL), RF_OK);
    assert_true(roof.ridge == p->peak_flops_per_s[RF_FP64] / p->bandwidth_bytes_per_s);
    /* a peak for every dtype the CPU has a kernel for, each named in the
     * summary by the kernel that measured it; fp16 through F16C computes in
     * fp32, so its peak is at least fp32's */
    rf_cpu cpu;
    rf_kernel_table t;
    assert_int_equal(rf_cpu_query(&cpu, NULL), RF_OK);
    assert_int_equal(rf_kernels_choose(&cpu, NULL, &t, NULL), RF_OK);
    const rf_dtype_kind dts[] = {RF_BF16, RF_FP16, RF_INT8};
    const rf_dot_kind dks[] = {RF_DOT_BF16, RF_DOT_FP16, RF_DOT_INT8};
    for (size_t i = 0; i < 3; i++) {
        bool has = rf_dot_available(&t, dks[i]);
        assert_true((p->peak_flops_per_s[dts[i]] > 0) == has);
        assert_true((s.peak_kernel[dts[i]] >= 0) == has);
        if (!has)
            print_message("  %s peak: no kernel on this CPU, skipped\n", rf_dtype_name(dts[i]));
    }
    if (rf_dot_available(&t, RF_DOT_FP16) && !cpu.avx512_fp16) {
        assert_true(p->peak_flops_per_s[RF_FP16] >= p->peak_flops_per_s[RF_FP32]);
        assert_true(p->peak_flops_per_s[RF_FP16] == p->kernels[s.peak_kernel[RF_FP16]].best ||
                    s.peak_is_fp32[RF_FP16]);
    }
    assert_true(s.peak_kernel[RF_FP32] >= 0 && !s.peak_is_fp32[RF_FP32]);
    /* the roof is the most a DRAM burst read, every burst recorded */
    const rf_hw_profile_bursts *bu = &p->dram_bursts;
    rf_measure_plan plan = rf_measure_plan_of(true);
    assert_int_equal(bu->n, plan.roof_bursts);
    assert_int_equal(bu->runs, 1);
    double most = 0;
    for (int i = 0; i < bu->n; i++)
        most = bu->best[i] > most ? bu->best[i] : most;
    assert_true(most == p->bandwidth_bytes_per_s);
    assert_true(s.roof_q1 <= s.roof_typical && s.roof_typical <= s.roof_q3 &&
                s.roof_q3 <= p->bandwidth_bytes_per_s);
    free(p);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest lab[] = {cmocka_unit_test(quick_lab)};
    if (argc > 1 && !strcmp(argv[1], "lab"))
        return cmocka_run_group_tests_name("measure_lab", lab, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stats_odd_and_even),
        cmocka_unit_test(stats_refused),
        cmocka_unit_test(isa_choice),
        cmocka_unit_test(flops_per_cycle),
        cmocka_unit_test(kernels_every_isa),
        cmocka_unit_test(fixed_point_stop),
        cmocka_unit_test(half_reference),
        cmocka_unit_test(dots_every_isa),
        cmocka_unit_test(levels_plateaus),
        cmocka_unit_test(levels_merge_and_refuse),
        cmocka_unit_test(levels_edge_point),
        cmocka_unit_test(timed_kernels),
        cmocka_unit_test(bw_set_chunks),
        cmocka_unit_test(gemm_small),
        cmocka_unit_test(gemm_refused_and_scaled),
        cmocka_unit_test(gemm_sweep_passes),
        cmocka_unit_test(gemm_sweep_budget),
        cmocka_unit_test(roof_bursts_and_merge),
    };
    return cmocka_run_group_tests_name("measure", tests, NULL, NULL);
}
