/* rf_closed_loop.h - the TTFT of a closed-loop benchmark as a factor of a
 * lone request's: TTFT(C) = f(C) x t1, with t1 the predicted TTFT of one
 * client alone and f an engine's factor at C clients (docs/gpu-predict.md,
 * "The closed loop's queueing factor").
 *
 * Real engines under C clients that send their next request when the last
 * ends keep the clients in cohorts that queue behind each other's prompts;
 * the measured TTFT is a near-constant multiple of a lone prefill at each
 * C, whatever the prompt's length, while a step-level simulation lets the
 * cohorts dissolve. The factor is fitted on measured runs (the H100 runs
 * of bench/data/serving-runs, tools/closed-loop/fit.py) as an engine's
 * factor x the lengths' factor (fixed or varied) x a curve over C shared
 * by the engines, and is published with its leave-one-model-out error. */
#ifndef RF_CLOSED_LOOP_H
#define RF_CLOSED_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RF_CLOSED_LOOP_MAX_POINTS 32

/* One engine's factor for one kind of lengths. */
typedef struct rf_closed_loop {
    int n;                                /* points, 1 .. RF_CLOSED_LOOP_MAX_POINTS */
    double c[RF_CLOSED_LOOP_MAX_POINTS];  /* concurrencies, increasing, >= 1      */
    double f[RF_CLOSED_LOOP_MAX_POINTS];  /* TTFT / t1 at c, 1e-3 .. 1e6          */
    double c_min, c_max;                  /* where f is known: c[0], c[n - 1]      */
    int64_t runs;                         /* the engine's runs fitted             */
    double in_sample_median;              /* |TTFT - measured| / measured, fitted */
    double held_out_median, held_out_p90; /* each model predicted from the others */
    char source[512];                     /* the runs, the tool and its commit    */
} rf_closed_loop;

/* f at concurrency c (> 0): linear in log f over log c between the points,
 * held at the first and last point beyond them. *extrapolated (may be NULL)
 * is true when c lies outside [c_min, c_max], where the factor was fitted:
 * there `serve --predict` gives the simulation's TTFT instead. */
double rf_closed_loop_factor(const rf_closed_loop *l, double c, bool *extrapolated);

/* A closed loop's predicted TTFT from its simulation: f x t1, its p90 the
 * simulation's scaled alike, where l holds a factor for c (c within
 * [c_min, c_max]); else the simulation's own, applied false. l may be NULL
 * (no factor: an open loop, an engine without one). */
typedef struct rf_closed_loop_ttft {
    double f;             /* the factor at c (0 where l is NULL) */
    double mean_s, p90_s; /* the predicted TTFT's mean and p90  */
    bool applied;
} rf_closed_loop_ttft;
rf_closed_loop_ttft rf_closed_loop_apply(const rf_closed_loop *l, double c, double t1_s,
                                         double sim_mean_s, double sim_p90_s);

#ifdef __cplusplus
}
#endif
#endif
