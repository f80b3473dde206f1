/* batch_chart.c - the batch-sweep chart as data: decode steps at one
 * context over batch sizes (rf_plot.h); drawn by write_svg.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_impl.h"

rf_status rf_batch_chart_build(rf_batch_chart *c, const rf_model *m, const rf_step_opts *decode,
                               const rf_roof *roof, int64_t max_batch, double capacity_sequences,
                               rf_err *err)
{
    if (max_batch < 0)
        return rf_err_set(err, RF_EINVAL, "batch sweep: largest batch must be >= 1 (got %lld)",
                          (long long)max_batch);
    if (max_batch == 0)
        max_batch = capacity_sequences > 512
                        ? (int64_t)ceil(fmin(2 * capacity_sequences, (double)RF_DIM_MAX))
                        : 1024;
    memset(c, 0, sizeof *c);
    c->width_px = 900;
    c->height_px = 440;
    c->context = decode->context;
    c->capacity_sequences = capacity_sequences;
    snprintf(c->title, sizeof c->title,
             "%s, decode at s = %lld: step floor and tokens/s against batch B", m->name,
             (long long)decode->context);
    /* One rf_sweep per batch, evaluated at the chart's context: the
     * counting stays in core, and the point is rf_step_compute's totals. */
    rf_sweep *sw = malloc(sizeof *sw);
    if (!sw)
        return rf_err_set(err, RF_ENOMEM, "batch sweep: out of memory");
    rf_status s = RF_OK;
    for (int64_t b = 1; b <= max_batch && c->n < RF_CHART_MAX_POINTS; b *= 2) {
        rf_step_opts o = *decode;
        o.phase = RF_DECODE;
        o.batch = b;
        rf_sweep_point pt;
        if ((s = rf_sweep_prepare(sw, m, &o, roof, err)) ||
            (s = rf_sweep_eval(sw, decode->context, &pt, err)))
            break;
        c->batch[c->n] = b;
        c->floor_s[c->n] = pt.floor_s;
        c->tokens_per_s[c->n] = pt.tokens_per_s;
        c->regime[c->n] = pt.regime;
        c->n++;
    }
    free(sw);
    return s;
}
