/* rf_measure_gemm.h - GEMMs timed through CBLAS (OpenBLAS): one shape,
 * placed on a roof, and a sweep of shapes spread over a run. */
#ifndef RF_MEASURE_GEMM_H
#define RF_MEASURE_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_hw.h"
#include "rf_measure_lab.h"
#include "rf_measure_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Y[M,N] = X[M,K] W^T, W stored [N,K] row-major as nn.Linear keeps it. */
typedef struct rf_gemm_bench_opts {
    int64_t m, k, n;
    rf_dtype_kind dtype;      /* RF_FP32 (sgemm/sgemv), RF_FP64, or RF_BF16
                                 (sbgemm/sbgemv, Y in fp32) where OpenBLAS
                                 has them (rf_gemm_dtype_check)             */
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
    int64_t m, k, n;     /* as run (n may be scaled down)               */
    bool scaled;         /* n was reduced to fit mem_limit_bytes        */
    uint32_t copies;     /* copies of W rotated                         */
    const char *routine; /* "cblas_sgemm", "cblas_dgemv", ...           */
    uint64_t flops;      /* per call: 2 M K N                           */
    uint64_t bytes;      /* per call: (M K + K N + M N) b (the counts of
                                 rf_op_gemm, bf16's Y counted as bf16)      */
    rf_stats flops_per_s;
    rf_stats bytes_per_s;
    double max_rel_err;          /* sampled outputs against a long-double dot   */
    double sample[RF_STATS_MAX]; /* each trial's FLOP/s (flops_per_s.n)      */
} rf_gemm_bench_result;

/* A timed GEMM placed on a roof (rf_hw.h). */
typedef struct rf_gemm_placed {
    rf_point point;       /* intensity F/Q, attainable min(pi, I beta)    */
    double time_s_median; /* one call at the median rate                  */
    double of_roof;       /* best / attainable                            */
    double of_peak;       /* best / pi                                    */
    double of_bw_2b;      /* best / (beta x 2 / b): 1 = on the memory roof
                                 of a GEMV (the course lesson's M = 1 check)  */
} rf_gemm_placed;

void rf_gemm_place(const rf_gemm_bench_result *g, const rf_roof *roof, rf_gemm_placed *out);

/* Whether this OpenBLAS has a GEMM in dtype: fp32 and fp64 always, bf16
 * where the loaded library has cblas_sbgemm and cblas_sbgemv (a build with
 * BUILD_BFLOAT16; looked up at run time), no other dtype. RF_EUNAVAIL with
 * a message saying why not. */
rf_status rf_gemm_dtype_check(rf_dtype_kind dtype, rf_err *err);

/* "cblas_sgemm", "cblas_dgemv", "cblas_sbgemm", ...; "-" for none. */
const char *rf_gemm_routine(rf_dtype_kind dtype, bool gemv);

/* Time one GEMM (or GEMV) shape after checking sampled outputs against a
 * reference dot product (relative error within 1e-3 fp32 and bf16 (whose
 * inputs are rounded to bf16 first, the reference reading the same
 * values), 1e-9 fp64, else RF_EINTERNAL). Errors: RF_EINVAL (bad shape,
 * gemv with m != 1), RF_EUNAVAIL (a dtype this OpenBLAS has no GEMM in),
 * RF_ENOMEM (does not fit even at n = 1). */
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
    const rf_roof *roof;      /* the roofline the trial budget reads        */
    int trials;               /* trials a point, or 0 for the budget        */
    uint64_t mem_avail_bytes; /* each GEMM may use half of it, less the
                                    sampler's set                              */
    rf_dram_sampler *sampler; /* NULL, or a DRAM burst before each pass and
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
