/* rf_hw_profile.h - a measured hardware profile (CPU or CUDA device).
 *
 * `roofline measure` fills one of these and writes it as JSON with the
 * stable keys documented in docs/measure.md:
 *   name, cpu, device, threads, clock_hz, date, bandwidth_bytes_per_s (the
 *   memory roof), peak_flops_per_s {fp32, fp64, bf16, ...}, levels [{name,
 *   bandwidth_bytes_per_s, bytes}], kernels [{name, level, bytes, best,
 *   median, min, max, unit}], spread.
 * A profile file is accepted everywhere --hw is: rf_hw_profile_to_hw converts.
 * This header is the data type and its pure conversion (core); the reader and
 * writer of its JSON file are in rf_hw_profile_io.h (io).
 */
#ifndef RF_HW_PROFILE_H
#define RF_HW_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "rf_calib.h"
#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_cluster.h"
#include "rf_hw.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_HW_PROFILE_MAX_LEVELS 8
#define RF_HW_PROFILE_MAX_KERNELS 64

typedef struct rf_hw_profile_level {
    char name[16];                /* "L1", "L2", "L3", "DRAM", "HBM"          */
    double bandwidth_bytes_per_s; /* best read-only bandwidth at this level   */
    uint64_t bytes;               /* working set it was measured with         */
} rf_hw_profile_level;

/* The memory roof's evidence: the best read of each DRAM burst, the bursts
 * spread over the run (and over the runs `measure --merge` pooled). The roof
 * (bandwidth_bytes_per_s) is the most any burst showed; the bursts' median
 * is the typical best-of-k, their quartiles its spread. */
#define RF_HW_PROFILE_MAX_BURSTS 64
typedef struct rf_hw_profile_bursts {
    int n;                                 /* bursts (0: not recorded, an older profile) */
    int trials;                            /* trials a burst (k)                         */
    int runs;                              /* measure runs pooled (--merge adds one)     */
    double best[RF_HW_PROFILE_MAX_BURSTS]; /* each burst's best, B/s, oldest first */
} rf_hw_profile_bursts;

typedef struct rf_hw_profile_kernel {
    char name[48];                 /* "read_avx2_f64", "triad_nt", "sgemm" ... */
    char level[16];                /* level the working set sits in            */
    uint64_t bytes;                /* working set                              */
    char unit[16];                 /* "bytes_per_s" or "flops_per_s"           */
    double best, median, min, max; /* over trials                              */
} rf_hw_profile_kernel;

typedef struct rf_hw_profile {
    char name[64];    /* profile name (hostname or device name)   */
    char cpu[128];    /* CPU model string                          */
    char device[128]; /* GPU name, "" for CPU profiles             */
    char isa[32];     /* kernels' ISA: "avx512", "avx2", ...       */
    char date[32];    /* ISO 8601 UTC                              */
    int threads;
    int sm_count;                                   /* CUDA only                                 */
    double clock_hz;                                /* measured core clock (GPU: reported)       */
    uint64_t mem_bytes;                             /* memory size                               */
    uint64_t l2_bytes;                              /* GPU L2 (CUDA)                             */
    double bandwidth_bytes_per_s;                   /* the memory roof                           */
    double bandwidth_sustained_bytes_per_s;         /* median of the DRAM read's pooled
                                     bursts (0: not measured); predictions use it */
    rf_hw_profile_bursts dram_bursts;               /* the roof's bursts (CPU profiles)       */
    double peak_flops_per_s[RF_DTYPE_COUNT];        /* measured peaks, 0 = not measured */
    double spread;                                  /* worst (best - median) / best over kernels */
    int cores;                                      /* CPU: physical cores (0 = not recorded)    */
    uint64_t cache_bytes[3];                        /* CPU: reported L1d, L2, L3, one instance   */
    char flags[128];                                /* CPU: ISA flags seen, "sse2 avx fma avx2"  */
    double theoretical_flops_per_s[RF_DTYPE_COUNT]; /* CPU: pipes x lanes x
                                     FLOP/lane x measured clock x threads     */
    rf_hw_profile_level levels[RF_HW_PROFILE_MAX_LEVELS];
    size_t n_levels;
    rf_hw_profile_kernel kernels[RF_HW_PROFILE_MAX_KERNELS];
    size_t n_kernels;
    rf_calib calib;     /* measure --calibrate (version 0: none)     */
    rf_cluster cluster; /* measure --mpi: nodes and links (ranks 0:
                                     none); the figures above are rank 0's node */
} rf_hw_profile;

/* Convert to the analytic hardware description (name, source line saying
 * "measured on <date>", peaks, bandwidth, memory). */
rf_status rf_hw_profile_to_hw(const rf_hw_profile *p, rf_hw *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
