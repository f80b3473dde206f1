/* rf_calib.h - a calibration: what the parts of a forward pass achieved on
 * a measured machine, and the prediction it turns a floor into.
 *
 * `roofline measure --calibrate` times the kinds of call a step is made of
 * (GEMMs over M for a handful of (K, N) shapes, decode attention over the
 * keys, prefill attention over the tokens, the element-wise kernels over
 * their size) and keeps each timing as a point: its shape coordinate x, its
 * FLOPs F and bytes Q, and the median time t of one call. The model, per
 * kind:
 *
 *     t(shape) = c0 + floor(shape) / eff(shape)
 *     floor    = max(F / pi, Q / beta_sustained)
 *
 * c0 is a fixed per-call overhead and eff the achieved fraction of the roof.
 * rf_calib_fit fits c0 (and a single efficiency e, the fit whose residuals
 * say how far one number per kind is from the truth) by least squares of the
 * relative error over the kind's points, then keeps each point's own
 * efficiency eff_i = floor_i / (t_i - c0). rf_calib_predict interpolates
 * ln eff linearly in ln x between the points of a series, and between series
 * of one kind by inverse-squared-distance weights in (ln a, ln b), so it
 * returns t_i exactly at a calibrated shape; a shape outside the calibrated
 * range takes the nearest edge's efficiency and is flagged, never silently.
 *
 * The roofs are sampled beside every point (version 2): a short burst of
 * GEMVs from DRAM and one of in-cache SGEMMs before and after the point's
 * calls, so a point's efficiency can be a fraction of the roofs the
 * machine had while it ran (a shared VM's roofs drift by tens of percent
 * over seconds; point_bw, point_peak say whether it is).
 * The calibration's own roofs (bw_bytes_per_s, peak_flops_per_s) are the
 * medians of the points' (version 1: the sustained DRAM read and the fp32
 * peak of the profile), and stand in for a point without its own. Every
 * prediction uses them, and only them: it needs nothing but this struct,
 * so `step --predict`, `generate --predict` and `profile` give an operator
 * of one shape the same time (rf_calib_predict_op); profile reports the
 * roofs it sampled beside its run, and a step on them, beside it, never in
 * its place. Each prediction carries a band, the kind's leave-one-out
 * error (rf_calib_band). The calibration times fp32 OpenBLAS (CPU) or its
 * backend's dtype (CUDA): an operator of another dtype is predicted at
 * those efficiencies on its own FLOPs and bytes. Pure (core): no I/O, no
 * allocation.
 */
#ifndef RF_CALIB_H
#define RF_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_op.h"
#include "rf_step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The schema's version ("calibration": {"version": 2, ...}). Version 2
 * adds each point's own roofs; a version 1 calibration (every point on the
 * calibration's roofs) still loads and fits. */
#define RF_CALIB_VERSION 2
#define RF_CALIB_MAX_SERIES 32
#define RF_CALIB_MAX_POINTS 32

typedef enum rf_calib_kind {
    RF_CALIB_GEMM = 0,     /* x = M; series a = K, b = N (cblas_sgemv at
                              M = 1, cblas_sgemm otherwise, W cold)       */
    RF_CALIB_ATTN_DECODE,  /* x = keys S; a = d_h, b = 0                   */
    RF_CALIB_ATTN_PREFILL, /* x = keys S (= tokens T after no context);
                              a = d_h, b = 0                               */
    RF_CALIB_NORM,         /* RMSNorm; x = elements (rows x width)         */
    RF_CALIB_ROPE,         /* rotate-half RoPE on q and k; x = elements    */
    RF_CALIB_ACT,          /* silu(gate) x up; x = elements                */
    RF_CALIB_RESIDUAL,     /* residual add; x = elements                   */
    RF_CALIB_COPY,         /* the embed gather and the KV write; x = bytes */
    RF_CALIB_KIND_COUNT
} rf_calib_kind;

/* "gemm", "attn_decode", "attn_prefill", "norm", "rope", "act",
 * "residual", "copy"; NULL outside the enum. */
const char *rf_calib_kind_name(rf_calib_kind k);
/* The kind of a name, or -1. */
int rf_calib_kind_of_name(const char *name);

typedef struct rf_calib_point {
    int64_t x;               /* the series' coordinate (M, keys, elements)    */
    double flops, bytes;     /* of one call                                   */
    double time_s;           /* median of one call                            */
    double bw_bytes_per_s;   /* version 2: the DRAM read sampled beside the
                                point (bursts before and after its calls);
                                0 = the calibration's bw_bytes_per_s       */
    double peak_flops_per_s; /* version 2: the fp32 FMA sampled beside it;
                                0 = the calibration's peak_flops_per_s     */
    double eff;              /* rf_calib_fit: floor on the point's own roofs
                             / (time_s - c0)                               */
} rf_calib_point;

typedef struct rf_calib_series {
    rf_calib_kind kind;
    int64_t a, b; /* the kind's shape besides x (0 when none)      */
    size_t n;     /* points, x strictly increasing                 */
    rf_calib_point pt[RF_CALIB_MAX_POINTS];
} rf_calib_series;

/* One kind's fit. */
typedef struct rf_calib_fit {
    size_t n_points;       /* over every series of the kind                 */
    double overhead_s;     /* c0, within [0, 0.95 x the fastest call]     */
    double efficiency;     /* e of t = c0 + floor / e (one number a kind)   */
    double rms_residual;   /* of that fit: sqrt(mean ((t_fit - t) / t)^2)   */
    double worst_residual; /* max |t_fit - t| / t                            */
    double loo_median;     /* the interpolation with each inner point of a
                             series left out, predicted from the others:
                             median |pred - t| / t (0 with none)           */
    double loo_worst;      /* and the worst                                 */
} rf_calib_fit;

typedef struct rf_calib {
    int version;             /* RF_CALIB_VERSION; 0 = no calibration          */
    char backend[48];        /* "cpu openblas, 2 threads", "cuda cublaslt"    */
    char date[32];           /* ISO 8601 UTC                                  */
    double bw_bytes_per_s;   /* the memory roof: version 2 the median of
                                the points' own, version 1 the sustained
                                DRAM read (predictions use it unless the
                                run's roofs are sampled)                  */
    double peak_flops_per_s; /* the fp32 compute roof (the same)          */
    /* Version 2: whether the fit sets each point against its own memory
     * (compute) roof; false: against the calibration's, the points' own
     * kept as data. `measure --calibrate` turns one on only when it made
     * the GEMM grid's rounds agree better: round_spread[r][0] is the median
     * over GEMM points bound by roof r (0 memory, 1 compute) of ln(max /
     * min) of their time across the rounds, [r][1] the same of their
     * efficiency on their own roofs (0 when not measured). A run is
     * predicted on the calibration's roofs either way (the medians of the
     * points' own). */
    bool point_bw, point_peak;
    double round_spread[2][2];
    rf_calib_series series[RF_CALIB_MAX_SERIES];
    size_t n_series;
    rf_calib_fit fit[RF_CALIB_KIND_COUNT]; /* rf_calib_fit fills them      */
} rf_calib;

/* max(F / pi, Q / beta) on the calibration's roof. */
double rf_calib_floor_s(const rf_calib *c, double flops, double bytes);

/* The same on the roofs of one point: its own where it has them (> 0)
 * and the calibration uses them (point_bw, point_peak), the calibration's
 * otherwise. The efficiency of a point is this floor
 * over its time, so a point timed while a neighbour halved the machine's
 * bandwidth (or took a core) keeps the efficiency it has on a quiet one. */
double rf_calib_point_floor_s(const rf_calib *c, const rf_calib_point *pt);

/* Check a calibration and fit it: the version, a positive roof, at least
 * one series of every kind, every series non-empty with x >= 1 strictly
 * increasing, every point with F + Q > 0, a time that is positive and
 * finite, and its own roofs 0 (none) or positive and finite (versions 1
 * and 2 are read). Then per kind c0 and e by least squares of the relative
 * error, every floor on the point's own roofs,
 * c0 kept within [0, 0.95 x the kind's fastest call] (an overhead is
 * neither negative nor the whole call), each point's eff, and the
 * residuals above. RF_EINVAL naming
 * the series and point ("calibration: gemm K=4096 N=4096: M grid not
 * increasing at point 3 (16 after 32)"). */
rf_status rf_calib_fit_all(rf_calib *c, rf_err *err);

/* The GEMVs from DRAM pooled: every GEMM series whose first point is at
 * M = 1 with a weight of at least min_w_bytes (K N x 4) has that point's
 * time set to bytes / the median of those points' bandwidths (bytes /
 * time), when there are at least 3 of them; returns how many were set (0
 * otherwise, nothing changed). A GEMV whose W is far above the cache reads
 * it at one rate whatever its shape: on the development VM the same GEMVs
 * in a profile agree within 5% (lm_head and gate_proj), while one
 * calibration point of a kind scattered by 20 to 40%. The stored time is
 * the pooled one, so a prediction stays exact at the stored points. Call
 * before rf_calib_fit_all. */
size_t rf_calib_pool_gemv(rf_calib *c, double min_w_bytes);

/* A prediction, with its band: the calibration's own error at predicting a
 * point it did not see (rf_calib_band), applied to this prediction. */
typedef struct rf_calib_pred {
    double time_s;     /* c0 + floor / eff                              */
    double floor_s;    /* on the calibration's roof                     */
    double eff;        /* interpolated                                  */
    bool in_range;     /* false: x or (a, b) outside what was calibrated;
                             the nearest edge's efficiency was used        */
    double band;       /* rf_calib_band of the kind (0: none known)     */
    double lo_s, hi_s; /* time_s x (1 - band) (not below 0), x (1 + band) */
} rf_calib_pred;

/* The relative error band of a kind's predictions: its leave-one-out worst
 * (each inner point of a series predicted from its neighbours, the way a
 * shape between calibrated ones is predicted), or, for a kind with no inner
 * point, the worst residual of its one-efficiency fit; 0 for a kind that
 * is not fitted. */
double rf_calib_band(const rf_calib *c, rf_calib_kind k);

/* Predict one call of kind k at coordinate x and shape (a, b) moving F
 * flops and Q bytes, on a fitted calibration, with its band. RF_EINVAL for
 * x < 1, F + Q not positive, or a kind with no series. */
rf_status rf_calib_predict(const rf_calib *c, rf_calib_kind k, int64_t x, int64_t a, int64_t b,
                           double flops, double bytes, rf_calib_pred *out, rf_err *err);

/* ---- operators and steps (predict.c) ---------------------------------- */

/* The kind and coordinates an operator is predicted at: a GEMM at x = M,
 * (a, b) = (K, N); decode or prefill attention at x = keys (op->n), a = d_h
 * (op->k); the embed gather and the KV write as copy at x = bytes; the
 * other element-wise operators by name (a name with "norm", "rope", "act",
 * "residual") at x = rows x width. False for an operator no kind covers. */
bool rf_calib_shape_of(const rf_op *op, rf_calib_kind *k, int64_t *x, int64_t *a, int64_t *b);

/* One instance of op predicted (rf_calib_shape_of, then rf_calib_predict
 * with the op's own FLOPs and bytes): the one path every command predicts
 * an operator by (step, generate, serve, frontier and report --predict,
 * and profile, whose operators rf_calib_forward_op turns into rf_ops).
 * The hybrid stacks' uncalibrated rows (rf_predict.h) are their floor on
 * the calibration's roof, band 0, outside. RF_EINVAL for an operator no
 * kind covers. */
rf_status rf_calib_predict_op(const rf_calib *c, const rf_op *op, rf_calib_pred *out, rf_err *err);

/* A step predicted: each operator's one instance, and the step as the sum
 * of count x predicted over the operators (the time the operators take
 * one after another, as a measured step is timed). */
typedef struct rf_step_pred {
    rf_calib_pred op[RF_STEP_MAX_OPS]; /* st->ops[i], one instance        */
    double time_s;                     /* sum count_i x op[i].time_s                    */
    double lo_s, hi_s;                 /* sum count_i x op[i].lo_s, .hi_s: the band if
                             every operator's error went one way          */
    double tokens_per_s;               /* new tokens / time_s                           */
    size_t n_outside;                  /* operators predicted outside the calibration   */
} rf_step_pred;

/* new_tokens: B in decode, B T in prefill. Errors of rf_calib_predict_op. */
rf_status rf_calib_predict_step(const rf_calib *c, const rf_step *st, double new_tokens,
                                rf_step_pred *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
