/* rf_measure.h - measuring the machine: timer, statistics, the CPU and its
 * kernel table, a team of pinned threads, bandwidth, FMA peak, core clock,
 * the whole lab (a profile), and GEMM timing through CBLAS.
 *
 * Everything here measures; nothing prints. Progress goes through a
 * callback; errors are rf_status + rf_err as everywhere else.
 *
 * Conventions (as STREAM and likwid-bench count):
 *   - bandwidth counts the bytes the algorithm moves, never write-allocate
 *     traffic: read 8 B/element, copy 16, triad 24 (f64 elements);
 *   - a working set is the bytes of all arrays of all threads together;
 *   - a rate's "best" is the highest trial (the roof), "median" what a user
 *     will see; spread = (best - median) / best;
 *   - every kernel's result is checked after timing (a read's sum, the
 *     destination's checksum, every FMA chain against the reference), so no
 *     figure comes from work the compiler removed. A failed check is
 *     RF_EINTERNAL naming the kernel.
 */
#ifndef RF_MEASURE_H
#define RF_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_hw.h"
#include "rf_hw_profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- timer ------------------------------------------------------------- */

/* Seconds on the monotonic clock (CLOCK_MONOTONIC); only differences mean
 * anything. */
double rf_time_now_s(void);

/* ---- statistics -------------------------------------------------------- */

#define RF_STATS_MAX 256       /* most samples one rf_stats_of accepts      */
#define RF_SPREAD_WARN 0.05    /* best and median further apart: unsteady   */

/* Summary of repeated trials of a rate (higher is better). */
typedef struct rf_stats {
    double best;    /* highest sample: the roof                             */
    double median;  /* middle sample (mean of the two middle ones if even)  */
    double min;
    double max;     /* == best                                              */
    double spread;  /* (best - median) / best, 0 when best is 0             */
    size_t n;       /* samples                                              */
} rf_stats;

/* Summarise n samples (1 <= n <= RF_STATS_MAX, each finite and >= 0).
 * Errors: RF_EINVAL for n = 0 or a negative or non-finite sample,
 * RF_ERANGE for n > RF_STATS_MAX. */
rf_status rf_stats_of(const double *samples, size_t n, rf_stats *out, rf_err *err);

/* True when spread > RF_SPREAD_WARN: trials disagree (a shared machine). */
bool rf_stats_unsteady(const rf_stats *s);

/* How long and how often to time one kernel. */
typedef struct rf_timing {
    double min_time_s; /* a trial repeats the kernel until it lasts this long */
    int trials;        /* trials after warm-up and calibration (1..RF_STATS_MAX) */
} rf_timing;

/* ---- the CPU ----------------------------------------------------------- */

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
    bool os_ymm, os_zmm;    /* the OS saves YMM / ZMM state (XCR0)          */
    int cpus;               /* CPUs this process may run on                  */
    int cores;              /* distinct physical cores among them            */
    uint64_t l1d_bytes, l2_bytes, l3_bytes; /* one instance, 0 = unknown     */
    uint64_t mem_bytes;     /* MemTotal                                     */
    uint64_t mem_avail_bytes; /* MemAvailable                               */
} rf_cpu;

/* Query cpuid, XGETBV, the affinity mask, sysfs and /proc/meminfo.
 * On a non-x86 machine only the scalar level is reported. */
rf_status rf_cpu_query(rf_cpu *out, rf_err *err);

/* Pure decisions on a queried rf_cpu (testable with a made-up one). */
bool rf_isa_supported(const rf_cpu *cpu, rf_isa isa);
rf_isa rf_isa_best(const rf_cpu *cpu);

/* Bytes that no cache can hold: 16x the reported last-level cache, at
 * least 512 MiB. At 2-4x, a last-level cache's replacement policy keeps part
 * of a cyclic stream (measured on this project's EPYC VM, 32 MiB L3: a read
 * of 64 MiB ran at 23-28 GB/s, 128 MiB at up to 24, 512 MiB and 1 GiB at
 * 15-16). The lab's DRAM sets and bench gemm's rotated weights use it. */
uint64_t rf_cpu_cold_bytes(const rf_cpu *cpu);

/* Theoretical FLOPs per cycle per core for the FMA kernels of an ISA
 * (fp32 or fp64): 2 pipes x lanes x 2 with FMA (AVX2, AVX-512), 2 pipes x
 * lanes x 1 without (scalar, SSE: each pipe a multiply or an add; cores
 * with separate add pipes can beat this). Two FMA pipes are assumed
 * (Haswell and later, Zen 2 and later); Zen 1 runs 256-bit work on 128-bit
 * pipes, Zen 4 runs 512-bit work on 256-bit pipes. 0 for other dtypes. */
int rf_cpu_flops_per_cycle(const rf_cpu *cpu, rf_isa isa, rf_dtype_kind dtype);

/* ---- the kernel table -------------------------------------------------- */

/* Function pointers to one ISA's kernels, filled with the reference
 * kernels first and then overridden by the ISA's own (BLIS style). The
 * contract of each operation is in src/kernels/kernels.h and
 * src/kernels/attn_kernels.h; in short: f64 arrays 64-byte aligned, read
 * returns the sum, copy dst = src, triad a = b + s c, _nt with non-temporal
 * stores, fma runs fma_chains[dtype] independent chains x = x * mul + add
 * for iters steps; decode attention's scores sc (g, nk) = scale q (g, dh)
 * K (nk, dh)^T and values out (g, dh) = p (g, nk) V (nk, dh), K and V each
 * read once. */
typedef struct rf_kernel_table {
    rf_isa isa;
    double (*read_f64)(const double *a, size_t n);
    void (*copy_f64)(double *dst, const double *src, size_t n);
    void (*copy_nt_f64)(double *dst, const double *src, size_t n);
    void (*triad_f64)(double *a, const double *b, const double *c, double s, size_t n);
    void (*triad_nt_f64)(double *a, const double *b, const double *c, double s, size_t n);
    void (*fma_f32)(float *chains, size_t iters, float mul, float add);
    void (*fma_f64)(double *chains, size_t iters, double mul, double add);
    size_t fma_chains_f32;  /* independent chains (accumulators x lanes)     */
    size_t fma_chains_f64;
    bool fma_fused;         /* one rounding per step (FMA); else mul, add   */
    bool nt_stores;         /* the _nt kernels really stream (not scalar)    */
    void (*attn_scores_f32)(const float *q, const float *K, int64_t g, int64_t nk, int64_t dh,
                            float scale, float *sc);
    void (*attn_values_f32)(const float *p, const float *V, int64_t g, int64_t nk, int64_t dh,
                            float *out);
    rf_isa attn_isa;        /* the attention kernels' own ISA: AVX-512 tables
                               keep AVX2's (there is no 512-bit variant)    */
    int64_t attn_dh_multiple; /* they need d_h % this == 0; else the caller
                               takes the reference table's                  */
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

/* ---- a team of pinned threads ------------------------------------------ */

/* Threads pinned one per core (one CPU of each physical core among those
 * this process may use), each owning a slice of every array it touches
 * first. Opaque; rf_team_free accepts NULL. */
typedef struct rf_team rf_team;

/* threads = 0: one per core. RF_EINVAL when threads exceeds the CPUs this
 * process may use (pinning two threads on one CPU measures nothing). */
rf_status rf_team_new(const rf_cpu *cpu, int threads, rf_team **out, rf_err *err);
void rf_team_free(rf_team *t);
int rf_team_size(const rf_team *t);

/* ---- kernels timed ----------------------------------------------------- */

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
    const char *op;          /* "read", "copy", "copy_nt", "triad", "triad_nt" */
    int arrays;              /* arrays in the working set                    */
    int bytes_per_elem;      /* bytes moved per element (8 per stream)       */
    bool nt;                 /* non-temporal stores                          */
} rf_bw_desc;

const rf_bw_desc *rf_bw_desc_of(rf_bw_kind kind);

/* One timed kernel. */
typedef struct rf_measurement {
    char name[48];      /* "read_avx2_f64", "fma_avx2_f32", "clock_add_chain" */
    uint64_t bytes;     /* working set (all arrays, all threads); 0 = registers */
    uint64_t reps;      /* kernel calls per thread per trial (calibrated)      */
    double work;        /* bytes, FLOPs or cycles one trial does (all threads) */
    rf_stats rate;      /* bytes/s, FLOP/s or Hz over trials                   */
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

/* The core clock: a chain of dependent integer adds (one cycle each on
 * every x86 core) run on every thread at once, each thread timed on its own;
 * the rate (Hz) is the mean of the threads' clocks, so clock x threads x
 * FLOPs per cycle is the theoretical counterpart of rf_fma_measure. The TSC
 * rate is not the core clock on a VM or under boost. RF_EUNAVAIL off x86. */
rf_status rf_clock_measure(rf_team *team, rf_timing timing, rf_measurement *out, rf_err *err);

/* ---- levels from a working-set sweep ----------------------------------- */

/* Levels found in a read-bandwidth sweep over growing working sets.
 *   0. A point in the middle of a steep fall (over 10% below the point
 *      before it and over 10% above the one after it, DRAM's after the
 *      last) is on an edge: its set straddles two levels, and it belongs to
 *      no plateau.
 *   1. The cache region ends at the last point off an edge that is faster
 *      than 1.6x the DRAM figure; later points lie on DRAM's side.
 *   2. The cache region's points off an edge are cut into at most
 *      cache_levels runs of adjacent points (a fall between two runs ends
 *      the first), choosing the cuts that minimise the spread of log bandwidth
 *      within runs (exact, by dynamic programming): plateaus, whatever the
 *      reported cache sizes say. A run has two points or more when the
 *      region has enough: a single point is an edge, not a level.
 *   3. Neighbouring runs whose figures are within 10% are one level.
 *   4. A level's figure is its best point, leaving out the points next to an
 *      edge when the level has more: those straddle two levels.
 * Levels are named L1, L2, ... in order; the last is "DRAM" with the dram
 * measurement's figure and set (rf_cpu_cold_bytes). */
typedef struct rf_levels {
    rf_hw_profile_level level[RF_HW_PROFILE_MAX_LEVELS];
    size_t n;
    size_t point[RF_HW_PROFILE_MAX_LEVELS]; /* sweep index of each cache level's
                                            figure (DRAM: the sweep size n)   */
    size_t first[RF_HW_PROFILE_MAX_LEVELS]; /* sweep points [first, end) belong */
    size_t end[RF_HW_PROFILE_MAX_LEVELS];   /* to the level                       */
} rf_levels;

/* Errors: RF_EINVAL for cache_levels outside 1..RF_HW_PROFILE_MAX_LEVELS - 1
 * or sizes that do not grow. */
rf_status rf_levels_detect(const rf_measurement *sweep, size_t n, const rf_measurement *dram,
                           int cache_levels, rf_levels *out, rf_err *err);

/* ---- the lab ----------------------------------------------------------- */

/* Called between kernels: done of total steps, and what runs next. */
typedef void (*rf_progress_fn)(void *user, int done, int total, const char *what);

typedef struct rf_measure_opts {
    int threads;            /* 0 = one per core                             */
    bool quick;             /* fewer sweep points, shorter trials (<= 5 s)  */
    const char *isa;        /* override ("avx2", ...); NULL = best          */
    rf_progress_fn progress;/* NULL = silent                                */
    void *progress_user;
} rf_measure_opts;

/* The lab's schedule (rf_measure_cpu) places its bursts at fixed points of
 * the run; these are its counts, which rf_measure_plan reports. */
#define RF_LAB_CORE_ROUNDS 3
#define RF_LAB_ROOF_BURSTS 5

/* The timing the lab uses. On a shared machine the best of many short
 * trials, taken at several moments of the run, is the figure that moves
 * least from run to run: a few milliseconds often fit between two
 * disturbances, and a neighbour busy for a second spoils one burst, not
 * the roof. */
typedef struct rf_measure_plan {
    rf_timing bandwidth;  /* every bandwidth kernel (3 ms x 11; quick 1 ms x 5)  */
    rf_timing core;       /* one burst of the clock or an FMA kernel (3 ms x 15;
                             quick 3 ms x 9)                                   */
    int core_bursts;      /* clock + FMA rounds spread over the run, pooled: 3
                             (the clock once more at the end)                  */
    rf_timing roof;       /* one burst of the DRAM read (3 ms x 48; quick 1 ms x
                             16)                                               */
    int roof_bursts;      /* DRAM read bursts spread over the run, pooled: 5    */
    int roof_chunks;      /* the DRAM set is read a 1/8 chunk a call, in turn   */
} rf_measure_plan;

rf_measure_plan rf_measure_plan_of(bool quick);

/* Run the whole CPU lab and fill a profile: identity (CPU, cores, caches,
 * flags, date), the clock, FMA peaks (fp32, fp64) and their theoretical
 * value at the measured clock, the read sweep, the levels it finds, copy /
 * triad (with and without streaming stores) at every level, the memory
 * roof (best read-only DRAM figure) and the worst spread. */
rf_status rf_measure_cpu(const rf_measure_opts *o, rf_hw_profile *out, rf_err *err);

/* The memory roof sampled again beside other work, so that the roof and
 * what is set against it are measured at the same moments of a shared
 * machine: the lab's DRAM read (same set, chunks and timing as
 * rf_measure_cpu with o's threads, isa and quick) on a team of its own,
 * each burst pooled. The team sleeps between bursts. A burst is some 0.1 to
 * 0.3 s; RF_ERANGE once RF_STATS_MAX trials are pooled. */
typedef struct rf_dram_sampler rf_dram_sampler;
rf_status rf_dram_sampler_open(const rf_measure_opts *o, rf_dram_sampler **out, rf_err *err);
rf_status rf_dram_sampler_burst(rf_dram_sampler *d, rf_err *err);
const rf_measurement *rf_dram_sampler_result(const rf_dram_sampler *d, int *bursts);
uint64_t rf_dram_sampler_bytes(const rf_dram_sampler *d); /* the set it holds */
/* The memory roof of hw raised to the sampled best when that is higher:
 * what the machine showed it can do at any moment of the run. */
void rf_dram_sampler_raise(const rf_dram_sampler *d, rf_hw *hw);
void rf_dram_sampler_close(rf_dram_sampler *d);

/* Figures derived from a profile for showing it (the CLI does no
 * arithmetic). */
typedef struct rf_hw_profile_summary {
    double ridge[RF_DTYPE_COUNT];          /* peak / memory roof, FLOP/byte (0: no peak) */
    double of_theoretical[RF_DTYPE_COUNT]; /* measured / theoretical peak (0: unknown)   */
    double level_ridge[RF_HW_PROFILE_MAX_LEVELS][RF_DTYPE_COUNT]; /* peak / level's read  */
    double level_rate[RF_HW_PROFILE_MAX_LEVELS][RF_BW_COUNT];    /* best rate of each
                                              bandwidth kernel at each level, B/s; read
                                              is the level's figure; 0 = not measured */
    double kernel_spread[RF_HW_PROFILE_MAX_KERNELS]; /* (best - median) / best            */
    size_t unsteady;                       /* kernels with spread > RF_SPREAD_WARN       */
    size_t worst;                          /* index of the kernel with the most spread   */
} rf_hw_profile_summary;

void rf_hw_profile_summarize(const rf_hw_profile *p, rf_hw_profile_summary *out);

/* ---- GEMM through CBLAS ------------------------------------------------ */

/* Y[M,N] = X[M,K] W^T, W stored [N,K] row-major as nn.Linear keeps it. */
typedef struct rf_gemm_bench_opts {
    int64_t m, k, n;
    rf_dtype_kind dtype;      /* RF_FP32 (sgemm/sgemv) or RF_FP64            */
    bool gemv;                /* time ?gemv instead (m must be 1)            */
    int threads;              /* BLAS threads (>= 1)                         */
    uint64_t cold_bytes;      /* rotate copies of W until together >= this
                                 (rf_cpu_cold_bytes), so no call finds W in
                                 the last-level cache; 0 = one copy, hot     */
    uint64_t mem_limit_bytes; /* X, Y and the copies of W must fit; N is
                                 halved until they do (result.scaled)       */
    rf_timing timing;
} rf_gemm_bench_opts;

typedef struct rf_gemm_bench_result {
    rf_dtype_kind dtype;
    int64_t m, k, n;          /* as run (n may be scaled down)               */
    bool scaled;              /* n was reduced to fit mem_limit_bytes        */
    uint32_t copies;          /* copies of W rotated                         */
    const char *routine;      /* "cblas_sgemm", "cblas_dgemv", ...           */
    uint64_t flops;           /* per call: 2 M K N                           */
    uint64_t bytes;           /* per call: (M K + K N + M N) b               */
    rf_stats flops_per_s;
    rf_stats bytes_per_s;
    double max_rel_err;       /* sampled outputs against a long-double dot   */
    double sample[RF_STATS_MAX]; /* each trial's FLOP/s (flops_per_s.n)      */
} rf_gemm_bench_result;

/* A timed GEMM placed on a roof (rf_hw.h). */
typedef struct rf_gemm_placed {
    rf_point point;           /* intensity F/Q, attainable min(pi, I beta)    */
    double time_s_median;     /* one call at the median rate                  */
    double of_roof;           /* best / attainable                            */
    double of_peak;           /* best / pi                                    */
    double of_bw_2b;          /* best / (beta x 2 / b): 1 = on the memory roof
                                 of a GEMV (seed 000's M = 1 check)           */
} rf_gemm_placed;

void rf_gemm_place(const rf_gemm_bench_result *g, const rf_roof *roof, rf_gemm_placed *out);

/* Time one GEMM (or GEMV) shape after checking sampled outputs against a
 * reference dot product (relative error within 1e-3 fp32, 1e-9 fp64, else
 * RF_EINTERNAL). Errors: RF_EINVAL (bad shape, gemv with m != 1, dtype not
 * fp32/fp64), RF_ENOMEM (does not fit even at n = 1). */
rf_status rf_gemm_bench(const rf_gemm_bench_opts *o, rf_gemm_bench_result *out, rf_err *err);

/* Pool more's trials into into (the same shape timed again, later in the
 * run): the rates are recomputed over all of them, the error is the worse
 * of the two; an empty into (zeroed) takes more whole. RF_EINVAL for
 * another shape, RF_ERANGE past RF_STATS_MAX. */
rf_status rf_gemm_bench_merge(rf_gemm_bench_result *into, const rf_gemm_bench_result *more,
                              rf_err *err);

/* ---- a sweep of GEMM points ---------------------------------------------- */

/* The sweep's plan. A point gets RF_GEMM_TRIAL_BUDGET_S of its roofline
 * time in trials, RF_GEMM_TRIALS_MIN to _MAX of them, each of at least
 * RF_GEMM_MIN_TRIAL_S. A point with at least 2 x RF_GEMM_SWEEP_PASSES
 * trials is timed in every pass, its trials split evenly, and pooled
 * (rf_gemm_bench_merge): on a shared machine one window of trials can be
 * spoiled whole by a neighbour, and its best then comes from moments spread
 * over the run, as a measured roof's does; a point with fewer (a long call)
 * is timed once, in the first pass. A DRAM burst waits RF_GEMM_SETTLE_S
 * first: OpenBLAS's workers spin a while after a call. */
#define RF_GEMM_SWEEP_PASSES 3
#define RF_GEMM_TRIAL_BUDGET_S 3.0
#define RF_GEMM_TRIALS_MIN 3
#define RF_GEMM_TRIALS_MAX 15
#define RF_GEMM_MIN_TRIAL_S 0.01
#define RF_GEMM_SETTLE_S 0.25

typedef struct rf_gemm_sweep_point {
    rf_gemm_bench_opts opts;     /* in: the shape, dtype, threads, cold_bytes;
                                    the sweep sets timing and mem_limit_bytes */
    rf_gemm_bench_result result; /* out: pooled over the passes                */
} rf_gemm_sweep_point;

typedef struct rf_gemm_sweep_opts {
    const rf_roof *roof;         /* the roofline the trial budget reads        */
    int trials;                  /* trials a point, or 0 for the budget        */
    uint64_t mem_avail_bytes;    /* each GEMM may use half of it, less the
                                    sampler's set                              */
    rf_dram_sampler *sampler;    /* NULL, or a DRAM burst before each pass and
                                    after the last                             */
    /* called before each point (p) and each burst (p NULL); may be NULL */
    void (*progress)(void *user, int pass, int passes, const rf_gemm_sweep_point *p);
    void *progress_user;
} rf_gemm_sweep_opts;

/* Trials for one point: o->trials, else the budget above. */
int rf_gemm_sweep_trials(const rf_gemm_sweep_opts *o, const rf_gemm_bench_opts *point);

/* Time every point as the plan above says. Stops at the first error. */
rf_status rf_gemm_sweep(const rf_gemm_sweep_opts *o, rf_gemm_sweep_point *pts, size_t n,
                        rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
