/* rf_measure_calib.h - `roofline measure --calibrate` on the CPU: the kinds
 * of call a forward pass is made of, timed over the shapes that matter,
 * into a calibration (rf_calib.h).
 *
 *   gemm          cblas_sgemv at M = 1, cblas_sgemm (X W^T, W stored (N, K)
 *                 as nn.Linear keeps it) otherwise, as `roofline profile`
 *                 calls them, over M = 1 .. 2048 for (K, N) shapes from a
 *                 1B model's k_proj to an lm_head; W rotated over copies
 *                 that together exceed 16 x the last-level cache (at least
 *                 512 MiB), so no call finds W in cache. A point's call is
 *                 at most RF_CALIB_GEMM_MAX_FLOPS (quick: a quarter): an
 *                 lm_head-sized M = 2048 is left out, and predicted as
 *                 outside the range.
 *   attn_decode   `roofline profile`'s own decode pass (one layer of a
 *                 synthetic decoder, d_h 64 and 128, g = 4) over keys
 *                 S = 64 .. 16384 with B = 16384 / S sequences, so the K and
 *                 V read, 64 MiB, come from memory as they do in a model;
 *   attn_prefill  the same pass in prefill, B = 1, T = 16 .. 512 after no
 *                 context;
 *   norm, rope, act, residual, copy
 *                 the element-wise operators of those passes (rows = B in
 *                 decode, T in prefill; H = 1024, F_ff = 2816).
 * Each point is the median of its calls (decode and prefill: of the steps
 * of the pass, one warm-up first).
 */
#ifndef RF_MEASURE_CALIB_H
#define RF_MEASURE_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_calib.h"
#include "rf_error.h"
#include "rf_forward.h"
#include "rf_hw_profile.h"
#include "rf_measure_lab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_CALIB_GEMM_MAX_FLOPS 3e10

typedef struct rf_calibrate_opts {
    int threads;             /* BLAS threads (>= 1)                         */
    bool quick;              /* fewer shapes and calls (about a third)      */
    bool tiny;               /* the test suite's grid: one small GEMM shape,
                                two of each pass, 16 MiB of cold weights;
                                seconds, figures of no use                  */
    const char *isa;         /* the kernel table's override, as profile's   */
    rf_progress_fn progress; /* NULL = silent                               */
    void *progress_user;
} rf_calibrate_opts;

/* Time every kind above and fit it (rf_calib_fit_all) on the roof of p
 * (its sustained memory roof, else its ceiling, and its fp32 peak): fills
 * p->calib. Errors: RF_EINVAL for a profile with no fp32 peak, RF_ENOMEM,
 * the forward pass's errors, RF_EUNAVAIL without CBLAS. */
rf_status rf_calibrate_cpu(const rf_calibrate_opts *o, rf_hw_profile *p, rf_err *err);

/* A forward pass's operator as an rf_op (its name, shape, FLOPs and bytes,
 * and the kind its id runs as: GEMM, decode or prefill attention by the
 * run's phase, the embed gather, element-wise), for rf_calib_shape_of and
 * rf_calib_predict_op. */
void rf_calib_forward_op(const rf_forward_run *run, const rf_forward_op *op, rf_op *out);

/* A profiled forward pass predicted on a calibration: each operator's one
 * instance, the step as the sum of count x predicted over every operator
 * run (the element-wise ones and the data movement included: a measured
 * step times them all), and the whole model as the run estimates it
 * (layers x L / N + head). error = |predicted - measured| / measured; the
 * floor's error is the same for `roofline step`'s floor (run->floor_s). */
typedef struct rf_forward_pred {
    rf_calib_pred op[RF_FWD_OP_COUNT];   /* run->ops[i]                      */
    double op_error[RF_FWD_OP_COUNT];    /* against run->ops[i].measured_s   */
    double floor_error[RF_FWD_OP_COUNT]; /* floor_s against measured_s     */
    double step_s, layers_s, head_s;
    double step_error, step_floor_error;
    double model_s;             /* layers_s x L / N + head_s                 */
    double tokens_per_s;        /* new tokens of the step / model_s          */
    size_t n_outside;           /* operators outside the calibrated range     */
    double bw_bytes_per_s;      /* the memory roof the predictions used (the
                                 calibration's)                             */
    double peak_flops_per_s;    /* and the compute roof                       */
    double gemv_bw_bytes_per_s; /* the GEMVs' memory roof in step_now_s     */
    double lo_s, hi_s;          /* the step's band (rf_calib_band, summed)    */
    double step_now_s;          /* the step again with the GEMVs (M = 1) on
                                 gemv_bw_bytes_per_s, the rest as step_s   */
    double step_now_error;      /* its |predicted - measured| / measured      */
    double sampled_bw_bytes_per_s, sampled_peak_flops_per_s; /* the roofs
                                 sampled beside the run (0: none)           */
} rf_forward_pred;

/* |predicted - measured| / measured (0 when measured is not positive). */
double rf_calib_error(double predicted_s, double measured_s);

/* Every operator predicted by rf_calib_predict_op on the calibration's
 * roofs (the medians of its points' own: a point set against its own roof
 * has the calibration's as its expected value), exactly as `step
 * --predict` predicts an operator of the same shape: op[], step_s, the
 * model and the band. Beside it, labelled and never in its place,
 * step_now_s: the GEMVs (GEMMs at M = 1) on bw_now_bytes_per_s when it is
 * > 0, the roof sampled beside the run (the probe is itself a GEMV from
 * DRAM, and a GEMV runs at the memory roof, so it moves with it; an
 * operator at a fraction of the roof is held by its kernel, which the
 * bandwidth does not move; docs/profile.md). bw_now_bytes_per_s,
 * peak_now_flops_per_s are kept in out->sampled_* (0: none). Errors of
 * rf_calib_predict_op, RF_ENOMEM. */
rf_status rf_calib_predict_forward(const rf_calib *c, const rf_forward_run *run,
                                   double bw_now_bytes_per_s, double peak_now_flops_per_s,
                                   rf_forward_pred *out, rf_err *err);

/* ---- the roofs sampled beside other work ---------------------------------- */

/* A sample: two bursts of OpenBLAS itself, on the threads the work around
 * it has set (the calibration's, the profiled pass's), so that what slows
 * the GEMMs slows the probe alike: the memory roof is the median of 8
 * GEMVs (K = N = 4096, W a 64 MiB chunk of a set of 16 x the last-level
 * cache, the chunks in turn: W from DRAM) as bytes of W / time, the
 * compute roof the median of 8 in-cache SGEMMs (M = N = K = 256) as
 * FLOP/s; some 30 ms together on the development VM. `measure
 * --calibrate` takes one before a GEMM shape's first point and one after
 * each point of each round, and one before every timed step of a pass and
 * after its last; `profile` the same around its steps. (The lab's own
 * DRAM read and FMA kernels, tried first, follow the contention that slows
 * OpenBLAS's two synchronised threads far less: see docs/measure.md.) */
typedef struct rf_roof_probe rf_roof_probe;

/* set_bytes 0: 16 x the last-level cache (at most a quarter of the memory
 * available); at least one chunk. RF_ENOMEM. */
rf_status rf_roof_probe_open(uint64_t set_bytes, rf_roof_probe **out, rf_err *err);
/* RF_ERANGE past 4096 samples; RF_EINTERNAL for a non-finite result. */
rf_status rf_roof_probe_sample(rf_roof_probe *p, rf_err *err);
size_t rf_roof_probe_count(const rf_roof_probe *p);
/* The medians of samples [from, to) (to past the count: the count); both
 * 0 when there are none. */
void rf_roof_probe_median(const rf_roof_probe *p, size_t from, size_t to, double *bw, double *peak);
void rf_roof_probe_close(rf_roof_probe *p);

/* What rf_forward_profile's progress says before each timed step. */
#define RF_FORWARD_TIMED_STEP "timed step"

/* An rf_forward_opts.progress that samples the probe before each timed
 * step (user: an rf_roof_probe_hook) and then calls next, if any. The
 * first error stops the sampling and is kept in status and err. */
typedef struct rf_roof_probe_hook {
    rf_roof_probe *probe;
    rf_progress_fn next;
    void *next_user;
    rf_status status;
    rf_err err;
} rf_roof_probe_hook;
void rf_roof_probe_progress(void *user, int done, int total, const char *what);

#ifdef __cplusplus
}
#endif
#endif
