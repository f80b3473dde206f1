/* rf_frontier_svg.h - the latency-throughput frontier as an SVG figure.
 *
 * Output tokens/s (y) against latency (x), both log axes, for the points of
 * rf_frontier_compute: TPOT mean (one series) and TTFT (another), each
 * point a batch size; points on the series' Pareto front filled, the others
 * hollow, the front joined by a line. Two batches are ringed and named when
 * they are among the points: the largest the KV pool admits (capacity) and
 * the one where the KV read reaches the weights (rf_frontier_weights_cross).
 */
#ifndef RF_FRONTIER_SVG_H
#define RF_FRONTIER_SVG_H

#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_report.h"
#include "rf_serve.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rf_frontier_marks {
    const char *title;      /* the figure's title (a line)                */
    int64_t capacity_batch; /* 0: none among the points                   */
    int64_t weights_batch;  /* 0: none among the points                   */
} rf_frontier_marks;

/* Append the figure to out. RF_EINVAL for no points or a point whose
 * latency or throughput is not positive and finite. */
rf_status rf_frontier_svg_write(const rf_frontier_point *p, size_t n, const rf_frontier_marks *mk,
                                rf_buf *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
