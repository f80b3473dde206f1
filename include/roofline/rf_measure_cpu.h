/* rf_measure_cpu.h - the CPU this runs on: its instruction-set levels,
 * what cpuid and sysfs report, and the pure decisions made from that (which
 * ISA is best, how many FLOPs a cycle, how large a set no cache holds),
 * testable with a made-up rf_cpu. */
#ifndef RF_MEASURE_CPU_H
#define RF_MEASURE_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Instruction-set level of a kernel variant, lowest first. */
typedef enum rf_isa {
    RF_ISA_SCALAR = 0, /* portable C, not vectorized: the reference        */
    RF_ISA_SSE,        /* SSE2, 128-bit, multiply then add                 */
    RF_ISA_AVX2,       /* AVX2 + FMA, 256-bit                              */
    RF_ISA_AVX512,     /* AVX-512F, 512-bit                                */
    RF_ISA_COUNT
} rf_isa;

/* "scalar", "sse", "avx2", "avx512". */
const char *rf_isa_name(rf_isa isa);

/* Parse one of the names above; RF_EINVAL "unknown ISA 'x' (known: ...)". */
rf_status rf_isa_parse(const char *text, rf_isa *out, rf_err *err);

/* What cpuid, XGETBV and sysfs say about this machine. Cache sizes are the
 * reported size of one instance (the lab does not trust them for levels;
 * they only bound the sweep and size the DRAM sets). */
typedef struct rf_cpu {
    char vendor[16];        /* "AuthenticAMD", "GenuineIntel"              */
    char brand[64];         /* cpuid brand string, trimmed                  */
    unsigned family, model; /* display family and model                     */
    bool sse2, avx, fma, avx2, avx512f;
    bool f16c, avx512bw, avx512vl;              /* the dot-product kernels' prerequisites */
    bool avx512_bf16, avx512_vnni, avx512_fp16; /* dot products by dtype    */
    bool amx_bf16, amx_int8;                    /* AMX tiles (seen and recorded; no kernel yet) */
    bool os_ymm, os_zmm;                        /* the OS saves YMM / ZMM state (XCR0)          */
    int cpus;                                   /* CPUs this process may run on                  */
    int cores;                                  /* distinct physical cores among them            */
    uint64_t l1d_bytes, l2_bytes, l3_bytes;     /* one instance, 0 = unknown     */
    uint64_t mem_bytes;                         /* MemTotal                                     */
    uint64_t mem_avail_bytes;                   /* MemAvailable                               */
} rf_cpu;

/* Query cpuid, XGETBV, the affinity mask, sysfs and /proc/meminfo.
 * On a non-x86 machine only the scalar level is reported. */
rf_status rf_cpu_query(rf_cpu *out, rf_err *err);

/* Pure decisions on a queried rf_cpu (testable with a made-up one). */
bool rf_isa_supported(const rf_cpu *cpu, rf_isa isa);
rf_isa rf_isa_best(const rf_cpu *cpu);

/* Bytes that no cache can hold: 16x the reported last-level cache, at
 * least 512 MiB. At 2-4x, a last-level cache's replacement policy still
 * keeps part of a cyclic stream, so a set that size reads faster than DRAM
 * (docs/measure.md has the figures). The lab's DRAM sets and bench gemm's
 * rotated weights use it. */
uint64_t rf_cpu_cold_bytes(const rf_cpu *cpu);

/* Theoretical FLOPs per cycle per core for the FMA kernels of an ISA
 * (fp32 or fp64): 2 pipes x lanes x 2 with FMA (AVX2, AVX-512), 2 pipes x
 * lanes x 1 without (scalar, SSE: each pipe a multiply or an add; cores
 * with separate add pipes can beat this). Two FMA pipes are assumed
 * (Haswell and later, Zen 2 and later); Zen 1 runs 256-bit work on 128-bit
 * pipes, Zen 4 runs 512-bit work on 256-bit pipes. 0 for other dtypes. */
int rf_cpu_flops_per_cycle(const rf_cpu *cpu, rf_isa isa, rf_dtype_kind dtype);

#ifdef __cplusplus
}
#endif
#endif
