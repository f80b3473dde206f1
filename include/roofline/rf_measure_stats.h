/* rf_measure_stats.h - the clock, repeated trials of a rate and their
 * summary, and how long a kernel is timed.
 *
 * A rate's "best" is the highest trial (the roof), "median" what a user will
 * see; spread = (best - median) / best. */
#ifndef RF_MEASURE_STATS_H
#define RF_MEASURE_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock (CLOCK_MONOTONIC); only differences mean
 * anything. */
double rf_time_now_s(void);

#define RF_STATS_MAX 256    /* most samples one rf_stats_of accepts      */
#define RF_SPREAD_WARN 0.05 /* best and median further apart: unsteady   */

/* Summary of repeated trials of a rate (higher is better). */
typedef struct rf_stats {
    double best;   /* highest sample: the roof                             */
    double median; /* middle sample (mean of the two middle ones if even)  */
    double min;
    double max;    /* == best                                              */
    double spread; /* (best - median) / best, 0 when best is 0             */
    size_t n;      /* samples                                              */
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

#ifdef __cplusplus
}
#endif
#endif
