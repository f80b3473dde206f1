/* rf_predict.h - whole requests predicted on a calibration: a static batch
 * generated to the end, the continuous-batching steady state, and the
 * frontier of static batches, each the sum of predicted steps (predict.c).
 *
 * A predicted step is rf_calib_predict_step's: each operator one instance
 * predicted, t_i = c0 + floor_i / eff_i on the calibration's roof, and the
 * step the sum of count_i x t_i; each sum carries its band, the operators'
 * bands (rf_calib_band) summed the same way (every error one way: the
 * band is wide, never optimistic). The requests are summed as rf_serve.h sums
 * their floors, step by step, with the predicted step in place of the floor:
 *     TTFT      = the prefill step predicted (with a shared prefix, the
 *                 prefix's prefill of 1 x P_s plus the B suffixes' after it)
 *     decode    = sum_{S = P+1}^{P+N-1} pred(S), the decode step at S
 *     TPOT      = decode / (N - 1); latency = TTFT + decode
 *     tokens/s  = B N / latency
 * The sum is exact over every context, not one average step: the decode
 * steps' operators are split into pieces lo..hi of contexts over which
 * every operator's integer shape (keys, FLOPs, bytes) is affine in S
 * (checked exactly at lo, lo + 1, the middle and hi, else the range is
 * halved, so a sliding window's cap costs O(log N) pieces). In a piece an
 * operator whose shape does not move with S (the linear layers, the
 * element-wise operators, the KV write) is predicted once and counted
 * hi - lo + 1 times; one whose shape moves (attention: its keys and K/V
 * read) is predicted at every context of the piece, since its efficiency
 * is interpolated in ln keys and so is not linear in S. N = 100,000 costs
 * about 10^5 interpolations of each attention row.
 *
 * An operator predicted outside the calibrated range (rf_calib_pred's
 * in_range false) is counted, never silent: each row of the prefill and of
 * the decode step once, however many contexts it was outside at. The
 * hybrid stacks' attention-kind rows (Gated DeltaNet's delta rule, Mamba2's
 * SSD scan, their short convolutions, DSA's indexer, chunked attention:
 * rf_step.h) are kernels a calibration does not time, so
 * rf_calib_predict_op puts them on their floor on the calibration's roof
 * (eff 1, no overhead) and marks them outside, never at the efficiency of
 * softmax attention.
 * Pure (core): no I/O, no allocation. */
#ifndef RF_PREDICT_H
#define RF_PREDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_calib.h"
#include "rf_error.h"
#include "rf_serve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A static batch of B requests (o->batch) predicted to the end. */
typedef struct rf_generate_pred {
    int64_t batch, prompt, output; /* B, P, N                              */
    double ttft_s;                 /* the prefill step(s) predicted        */
    int64_t decode_steps;          /* N - 1                                */
    double decode_s;               /* sum of the decode steps predicted    */
    double tpot_mean_s;            /* decode_s / (N - 1); 0 if N = 1       */
    double tpot_first_s;           /* at context P + 1                     */
    double tpot_last_s;            /* at context P + N - 1                 */
    double latency_s;              /* ttft_s + decode_s                    */
    double tokens_per_s;           /* B N / latency_s                      */
    size_t outside_prefill;        /* prefill rows outside the calibration */
    size_t outside_decode;         /* decode rows outside at some context  */
    size_t n_outside;              /* the two                              */
    size_t pieces;                 /* affine pieces of contexts summed     */
    size_t ops_fixed;              /* decode rows predicted once a piece   */
    size_t ops_varying;            /* decode rows predicted every context  */
    /* the bands (rf_calib_pred's lo_s, hi_s summed as the times are) */
    double ttft_lo_s, ttft_hi_s, decode_lo_s, decode_hi_s;
    double tpot_mean_lo_s, tpot_mean_hi_s, latency_lo_s, latency_hi_s;
} rf_generate_pred;

/* Predict rf_generate_prefix_compute's generation (px may be NULL: no
 * shared prefix). roof only builds the steps (their operators' FLOPs and
 * bytes do not depend on it); every time is on the calibration's roof.
 * Errors: those of rf_generate_prefix_compute's sizes and prefix checks,
 * RF_EINVAL for a cascade prefix kernel (its decode attention reads the
 * prefix once a step, a kernel the calibration did not time), and those of
 * rf_calib_predict_op (an operator no kind covers). */
rf_status rf_calib_predict_generate(const rf_calib *c, const rf_model *m, const rf_step_opts *o,
                                    const rf_roof *roof, int64_t prompt, int64_t output,
                                    const rf_prefix *px, rf_generate_pred *out, rf_err *err);

/* The steady state of sv (rf_serve_compute) predicted: its mixed step's
 * operators (linear layers at M = B + T_p, lm_head, decode attention at
 * S_d, chunk attention) each predicted, the step their sum, and
 *     TPOT = pred(step), tokens/s = B / TPOT, TTFT = ceil(P / C) x TPOT
 * (queueing not modelled, as rf_serve). step.tokens_per_s counts every
 * token the step runs, B + T_p. Errors: those of rf_calib_predict_op. */
typedef struct rf_serve_pred {
    rf_step_pred step; /* sv->step's operators, predicted      */
    double tpot_s, ttft_s, tokens_per_s;
    double tpot_lo_s, tpot_hi_s; /* the step's band                      */
    size_t n_outside;            /* step.n_outside                       */
} rf_serve_pred;

rf_status rf_calib_predict_serve(const rf_calib *c, const rf_serve *sv, rf_serve_pred *out,
                                 rf_err *err);

/* rf_frontier_compute's batches B = 1..n predicted: out[i] holds batch B =
 * i + 1 and rf_calib_predict_generate's TTFT, TPOT mean, latency and
 * tokens/s (kv_bytes 0: the floors' point holds it), and both Pareto fronts
 * marked on these predicted figures by rf_frontier_compute's rule;
 * outside[i] (when outside is not NULL) the point's n_outside. Errors:
 * those of rf_calib_predict_generate. */
rf_status rf_calib_predict_frontier(const rf_calib *c, const rf_model *m, const rf_step_opts *o,
                                    const rf_roof *roof, int64_t prompt, int64_t output,
                                    rf_frontier_point *out, size_t *outside, size_t n, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
