/* rf_measure_bench.h - one kernel timed: memory bandwidth over a working
 * set, the FMA peak, the core clock.
 *
 * Conventions (as STREAM and likwid-bench count):
 *   - bandwidth counts the bytes the algorithm moves, never write-allocate
 *     traffic: read 8 B/element, copy 16, triad 24 (f64 elements);
 *   - a working set is the bytes of all arrays of all threads together;
 *   - every kernel's result is checked after timing (a read's sum, the
 *     destination's checksum, every FMA chain against the reference), so no
 *     figure comes from work the compiler removed. A failed check is
 *     RF_EINTERNAL naming the kernel. */
#ifndef RF_MEASURE_BENCH_H
#define RF_MEASURE_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_measure_kernels.h"
#include "rf_measure_stats.h"
#include "rf_measure_team.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rf_bw_kind {
    RF_BW_READ = 0, /* sum a                  8 B/element                   */
    RF_BW_COPY,     /* b = a                 16 B/element                   */
    RF_BW_COPY_NT,  /* b = a, streaming      16 B/element                   */
    RF_BW_TRIAD,    /* a = b + s c           24 B/element, 2 FLOP            */
    RF_BW_TRIAD_NT, /* the same, streaming                                   */
    RF_BW_COUNT
} rf_bw_kind;

/* A kernel described by its streams (likwid-bench style); rates follow. */
typedef struct rf_bw_desc {
    const char *op;     /* "read", "copy", "copy_nt", "triad", "triad_nt" */
    int arrays;         /* arrays in the working set                    */
    int bytes_per_elem; /* bytes moved per element (8 per stream)       */
    bool nt;            /* non-temporal stores                          */
} rf_bw_desc;

const rf_bw_desc *rf_bw_desc_of(rf_bw_kind kind);

/* One timed kernel. */
typedef struct rf_measurement {
    char name[48];               /* "read_avx2_f64", "fma_avx2_f32", "clock_add_chain" */
    uint64_t bytes;              /* working set (all arrays, all threads); 0 = registers */
    uint64_t reps;               /* kernel calls per thread per trial (calibrated)      */
    double work;                 /* bytes, FLOPs or cycles one trial does (all threads) */
    rf_stats rate;               /* bytes/s, FLOP/s or Hz over trials                   */
    double sample[RF_STATS_MAX]; /* each trial's rate, in order (rate.n)      */
} rf_measurement;

/* Bandwidth of one kernel over a working set of about working_set_bytes
 * (rounded down so every thread's slice is a whole number of 512-byte
 * blocks; the size used is in out->bytes). Each thread first-touches its
 * slice; large sets ask for transparent huge pages. Errors: RF_EINVAL for a
 * set too small for the team, RF_ENOMEM, RF_EINTERNAL on a bad checksum. */
rf_status rf_bw_measure(rf_team *team, const rf_kernel_table *t, rf_bw_kind kind,
                        uint64_t working_set_bytes, rf_timing timing, rf_measurement *out,
                        rf_err *err);

/* The same in three steps, so one set can be timed in bursts spread over a
 * run without being allocated and touched again. A read set may be read a
 * chunk per call, the chunks in rotation (chunk_bytes, rounded down to
 * whole slices; the set to whole chunks; 0 = the whole set per call): a
 * trial then lasts milliseconds however large the set, and no chunk is
 * read again before every other one has been, so a set much larger than
 * the last-level cache is still read from DRAM. Only RF_BW_READ takes a
 * chunk (RF_EINVAL otherwise). */
typedef struct rf_bw_set rf_bw_set;
rf_status rf_bw_open(rf_team *team, const rf_kernel_table *t, rf_bw_kind kind,
                     uint64_t working_set_bytes, uint64_t chunk_bytes, rf_bw_set **out,
                     rf_err *err);
rf_status rf_bw_time(rf_bw_set *set, rf_timing timing, rf_measurement *out, rf_err *err);
uint64_t rf_bw_set_bytes(const rf_bw_set *set); /* as rounded: all arrays, threads */
void rf_bw_close(rf_bw_set *set);

/* Peak FLOP/s of the FMA kernel for dtype (RF_FP32 or RF_FP64) on every
 * thread at once: the sum of the threads' rates, each thread's FLOPs
 * (2 x chains x iters x reps) over its own time (the kernel lives in
 * registers, so cores share nothing and a thread the scheduler paused lowers
 * only its own rate). Bandwidth kernels instead divide all threads' bytes by
 * the slowest thread's time: they share the memory. */
rf_status rf_fma_measure(rf_team *team, const rf_kernel_table *t, rf_dtype_kind dtype,
                         rf_timing timing, rf_measurement *out, rf_err *err);

/* The dot-product peaks, one kernel each (rf_kernel_table has them). */
typedef enum rf_dot_kind {
    RF_DOT_BF16 = 0, /* vdpbf16ps: bf16 pairs into fp32 lanes              */
    RF_DOT_FP16,     /* fp16 converted (F16C) into fp32 FMAs, a 4 x 4 tile  */
    RF_DOT_INT8,     /* vpdpbusd: u8 x s8 quads into int32 lanes            */
    RF_DOT_Q8_0,     /* llama.cpp q8_0 blocks x q8_0, through int8 dots     */
    RF_DOT_Q4_0,     /* llama.cpp q4_0 blocks x q8_0, unpacked to int8 dots */
    RF_DOT_COUNT
} rf_dot_kind;

/* "bf16", "fp16", "int8", "q8_0", "q4_0". */
const char *rf_dot_name(rf_dot_kind kind);

/* The dtype whose peak the kernel measures: bf16, fp16, int8; the block
 * formats compute in int8 (their figure is a kernel's, not the peak). */
rf_dtype_kind rf_dot_dtype(rf_dot_kind kind);

/* The table has the kernel (the CPU has its instructions). */
bool rf_dot_available(const rf_kernel_table *t, rf_dot_kind kind);

/* Peak of one dot-product kernel on every thread at once, counted as
 * rf_fma_measure counts (each thread's own time, rates summed). FLOPs (for
 * int8, operations) as the instruction does them: a multiply and an add a
 * product; the block kernels count 2 a weight ("weight-FLOPs": 64 a block
 * of 32), whatever unpacking costs. The register kernels run in registers;
 * the block kernels read a row of 128 blocks (4,096 weights) and its
 * activations, which stay in L1. Every result is checked after timing
 * against the reference (dot_ref.c). RF_EUNAVAIL when the table lacks it. */
rf_status rf_dot_measure(rf_team *team, const rf_kernel_table *t, rf_dot_kind kind,
                         rf_timing timing, rf_measurement *out, rf_err *err);

/* The core clock: a chain of dependent integer adds (one cycle each on
 * every x86 core) run on every thread at once, each thread timed on its own;
 * the rate (Hz) is the mean of the threads' clocks, so clock x threads x
 * FLOPs per cycle is the theoretical counterpart of rf_fma_measure. The TSC
 * rate is not the core clock on a VM or under boost. RF_EUNAVAIL off x86. */
rf_status rf_clock_measure(rf_team *team, rf_timing timing, rf_measurement *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
