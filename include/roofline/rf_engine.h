/* rf_engine.h - an engine's calibration: what one inference engine's own
 * kernels achieve on a machine, fitted from whole steps timed through the
 * engine, and the prediction it turns a step's floors into.
 *
 * A CPU calibration (rf_calib.h) times OpenBLAS's fp32 calls, operator by
 * operator. An engine is not OpenBLAS: llama.cpp multiplies q4_0 blocks in
 * int8 dot products, f16 weights through F16C, and runs its own attention,
 * each at its own efficiency. Its operators cannot be timed one by one from
 * outside, but its steps can (a prefill of T tokens, a decode token at
 * context S), on small models of chosen shapes. Per weight dtype and phase,
 * a step's time is fitted as
 *
 *     t = k_gemm G + k_attn A + E + c L + c_v V + c0
 *
 * G: the step's GEMMs at their floors, sum count x max(F / pi, Q / beta),
 * A: its attention the same, E: every other operator at its floor, L: the
 * model's layers, V its vocabulary (the logits a step hands the sampler),
 * and pi and beta the calibration's own roofs (the profile
 * the fit was made on), so a prediction needs nothing but this struct.
 * k_gemm and k_attn are the engine's slowdowns over the roof (1 / the
 * efficiency), c its fixed cost a layer (graph nodes, thread barriers) and
 * c_v a logit's (the sampler reads, sorts and draws from every logit of
 * the step: on a 152k vocabulary that is milliseconds a token, which no
 * floor counts) and c0 a step's (the call into the engine). The fit is a
 * non-negative least squares of the relative error with k >= 1 and c,
 * c_v, c0 >= 0: a prediction is never under the floor on those roofs.
 * c_v is fitted only where a (weights, phase) group's shapes differ in
 * vocabulary; on one vocabulary it is 0 and c0 carries that cost. Its
 * band is the leave-one-out error: each timed step predicted from the
 * others. Pure (core): no I/O, no allocation.
 */
#ifndef RF_ENGINE_H
#define RF_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"
#include "rf_model.h"
#include "rf_predict.h"
#include "rf_step.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_ENGINE_VERSION 1
#define RF_ENGINE_MAX_FITS 16
#define RF_ENGINE_MAX_POINTS 256

/* The engines a calibration may name: "llamacpp" (llama.cpp's CPU
 * kernels). NULL past the end. */
const char *rf_engine_name(size_t i);

/* Whether name is one of them (NULL: false). */
bool rf_engine_known(const char *name);

/* The short name a fit is keyed by: "q4_0", "q8_0" for llama.cpp's blocks,
 * else rf_dtype_name of the kind ("fp16", "fp32"). */
const char *rf_engine_dtype_key(rf_dtype w);

/* One timed step, with its floors split as the model splits them. */
typedef struct rf_engine_point {
    char model[48];   /* what was timed ("llama-3.2-1b, 4 layers")     */
    char weights[16]; /* rf_engine_dtype_key                           */
    rf_phase phase;
    int64_t tokens;  /* prefill: T; decode: 1                         */
    int64_t context; /* positions cached before the step              */
    double gemm_s;   /* G                                             */
    double attn_s;   /* A                                             */
    double other_s;  /* E                                             */
    double layers;   /* L                                             */
    double vocab;    /* V                                             */
    double time_s;   /* measured                                      */
} rf_engine_point;

/* One (weights, phase) fit. */
typedef struct rf_engine_fit {
    char weights[16];
    rf_phase phase;
    double k_gemm, k_attn; /* >= 1                                          */
    double layer_s;        /* c >= 0                                        */
    double vocab_s;        /* c_v >= 0                                      */
    double step_s;         /* c0 >= 0                                       */
    size_t n_points;
    double rms_residual; /* sqrt(mean ((t_fit - t) / t)^2)                */
    double worst_residual;
    double loo_median; /* each point predicted by a fit without it:
                             median |pred - t| / t (0 with under 5 points) */
    double loo_worst;
} rf_engine_fit;

typedef struct rf_engine_calib {
    int version;                             /* RF_ENGINE_VERSION; 0 = none                   */
    char engine[16];                         /* rf_engine_name                                */
    char detail[160];                        /* "llama.cpp (node-llama-cpp 3.22.1), CPU, 2
                             threads"                                      */
    char date[32];                           /* ISO 8601 UTC of the fit                       */
    char roofs_from[160];                    /* the profile whose roofs the floors used       */
    double bw_bytes_per_s;                   /* beta                       */
    double peak_flops_per_s[RF_DTYPE_COUNT]; /* pi per math dtype (0 none) */
    rf_dtype act, kv;                        /* the engine's activations and KV cache (for
                             llama.cpp fp32 and fp16)                     */
    size_t n_fits;
    rf_engine_fit fit[RF_ENGINE_MAX_FITS];
    size_t n_points; /* the timed steps the fits are made from        */
    rf_engine_point pt[RF_ENGINE_MAX_POINTS];
} rf_engine_calib;

/* A timed step made a point: the step of model m (batch 1, causal
 * prefill, the calibration's activation and KV dtypes, weights w) computed
 * and split (rf_engine_split); model names it in messages. Errors of
 * rf_step_compute and rf_engine_split. */
rf_status rf_engine_point_make(const rf_engine_calib *c, const rf_model *m, const char *model,
                               rf_dtype w, rf_phase phase, int64_t tokens, int64_t context,
                               double measured_s, rf_engine_point *out, rf_err *err);

/* The step options of a point: what rf_engine_point_make computes. */
rf_step_opts rf_engine_step_opts(const rf_engine_calib *c, const rf_model *m, rf_dtype w,
                                 rf_phase phase, int64_t tokens, int64_t context);

/* A step's floors split into G, A and E on the calibration's roofs (each
 * operator on the peak of its math dtype, rf_dtype_math of the step's
 * weights and activations; attention and the element-wise operators on
 * the activations'; a dtype the calibration has no peak for on the fastest
 * peak it has, so the floor stays a floor). RF_EUNAVAIL when it has no
 * peak at all. */
rf_status rf_engine_split(const rf_engine_calib *c, const rf_step *st, const rf_step_opts *o,
                          double *gemm_s, double *attn_s, double *other_s, rf_err *err);

/* Fit every (weights, phase) present in c->pt into c->fit, replacing c's
 * fits. Each group needs at least 4 points (four unknowns);
 * every point needs a positive finite time, non-negative finite floors
 * with G + A > 0 and L >= 1. RF_EINVAL naming the point (its index) or
 * the group. */
rf_status rf_engine_fit_all(rf_engine_calib *c, rf_err *err);

/* The fitted time of a timed step (its own fit's model). */
double rf_engine_fitted_s(const rf_engine_fit *f, const rf_engine_point *p);

/* Check a calibration's header: version, a known engine, a positive
 * finite bandwidth and peaks; and each fit's k >= 1, c >= 0, errors >= 0,
 * finite, no (weights, phase) twice. RF_EINVAL naming what is wrong. */
rf_status rf_engine_check(const rf_engine_calib *c, rf_err *err);

/* The fit for (weights, phase), or NULL. */
const rf_engine_fit *rf_engine_find(const rf_engine_calib *c, rf_dtype w, rf_phase phase);

/* A step predicted. */
typedef struct rf_engine_pred {
    double time_s; /* k_gemm G + k_attn A + E + c L + c_v V + c0     */
    double gemm_s, attn_s, other_s, layers_s, vocab_s, step_s; /* its six terms */
    double floor_s;    /* G + A + E on the calibration's roofs          */
    double band;       /* the fit's leave-one-out worst (its worst
                             residual when it has no leave-one-out)        */
    double lo_s, hi_s; /* time_s x (1 -+ band), lo not below floor_s    */
    const rf_engine_fit *fit;
} rf_engine_pred;

/* Predict st (computed with options o, of a model with `layers` layers
 * and a vocabulary of `vocab`).
 * RF_EINVAL for a batch other than 1 (the fits are of one sequence's
 * steps), or when the calibration has no fit for the step's weights and
 * phase, naming both and listing the fits it has; errors of
 * rf_engine_split. */
rf_status rf_engine_predict(const rf_engine_calib *c, const rf_step *st, const rf_step_opts *o,
                            double layers, double vocab, rf_engine_pred *out, rf_err *err);

/* A whole generation predicted, one sequence: the prompt's prefill, then
 * the decode step at every context prompt + 1 .. prompt + output - 1,
 * summed (as rf_calib_predict_generate does for the CPU calibration). */
typedef struct rf_engine_gen {
    rf_generate_pred g; /* the figures, as the profile's calibration gives
                             them (batch 1; no operator is "outside" and
                             no context piece is skipped: pieces and
                             ops_* 0, every decode step predicted)        */
    const rf_engine_fit *prefill_fit, *decode_fit; /* decode: NULL when
                                                      output < 2           */
} rf_engine_gen;

/* o: the dtypes (and attention options) of the generation, batch 1;
 * roof: any positive roof (only the operators' F and Q are used); st:
 * scratch for one step. RF_EINVAL for prompt < 1 or output < 1; errors of
 * rf_step_compute and rf_engine_predict (a batch other than 1 among
 * them). */
rf_status rf_engine_predict_generate(const rf_engine_calib *c, const rf_model *m,
                                     const rf_step_opts *o, const rf_roof *roof, int64_t prompt,
                                     int64_t output, rf_step *st, rf_engine_gen *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
