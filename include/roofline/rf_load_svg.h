/* rf_load_svg.h - the latency-throughput curve under load (report layer):
 * P_q TTFT and TPOT of simulated runs (rf_sim.h) against the request rate,
 * on a log time axis, with the SLO lines and the capacity knee marked.
 */
#ifndef RF_LOAD_SVG_H
#define RF_LOAD_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "rf_error.h"
#include "rf_report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rf_load_point {
    double rate_per_s;     /* the open loop's arrival rate          */
    double ttft_s, tpot_s; /* at the percentile (> 0)               */
    bool overloaded;       /* the queue grows without bound         */
} rf_load_point;

typedef struct rf_load_marks {
    const char *title;             /* the figure's title (a line)           */
    double percentile;             /* the curves' percentile (99)           */
    double slo_ttft_s, slo_tpot_s; /* dashed lines; 0: none                 */
    double knee_rate_per_s;        /* the capacity knee, a vertical line;
                                     0: none                               */
} rf_load_marks;

/* An SVG of n >= 2 points in rising rate: x the rate (linear, from 0),
 * y seconds (log, whole decades); TTFT solid, TPOT dashed, an overloaded
 * point hollow. Errors: RF_EINVAL for n < 2, a rate not rising, a time
 * not finite and > 0. */
rf_status rf_load_svg_write(const rf_load_point *p, size_t n, const rf_load_marks *mk, rf_buf *out,
                            rf_err *err);

/* Figures one above the other: each of the n complete SVGs (as the
 * writers above append them, the root's width and height in pixels) nested
 * in one root as wide as the widest and as tall as all of them. Errors:
 * RF_EINVAL for n < 1 or a part without a root <svg width height>. */
rf_status rf_svg_stack(const char *const *svgs, size_t n, rf_buf *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
