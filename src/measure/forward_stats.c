/* forward_stats.c - statistics over the timed steps: each operator's
 * median and spread, the step's residual and who owns it, the whole-model
 * estimate (rf_forward_summarize). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#include "forward_internal.h"
#include "measure_internal.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_op.h"

rf_status rf_forward_summarize(rf_forward_run *run, const rf_forward_times *steps, size_t n,
                               rf_err *err)
{
    if (n < 1 || n > RF_STATS_MAX)
        return rf_err_set(err, RF_EINVAL, "%zu timed steps (1 to %d)", n, RF_STATS_MAX);
    double v[RF_STATS_MAX];
    rf_stats st;
    rf_status s;
    for (size_t i = 0; i < run->n_ops; i++) {
        rf_forward_op *op = &run->ops[i];
        for (size_t k = 0; k < n; k++)
            v[k] = steps[k].op_s[op->id] / (double)op->count;
        if ((s = rf_stats_of(v, n, &st, err)))
            return rf_err_prefix(err, s, "%s", op->name);
        op->measured_s = st.median;
        op->min_s = st.min;
        op->max_s = st.max;
        bool timed = st.median > 0;
        op->flops_per_s = timed ? (double)op->flops / st.median : NAN;
        op->bytes_per_s = timed ? (double)op->bytes / st.median : NAN;
        op->efficiency = timed ? op->floor_s / st.median : NAN;
        op->residual_s = (double)op->count * (st.median - op->floor_s);
    }
    for (size_t k = 0; k < n; k++)
        v[k] = steps[k].step_s;
    if ((s = rf_stats_of(v, n, &st, err)))
        return rf_err_prefix(err, s, "step");
    run->measured_s = st.median;
    run->measured_min_s = st.min;
    run->measured_max_s = st.max;
    run->residual_s = st.median - run->floor_s;
    for (size_t k = 0; k < n; k++)
        v[k] = steps[k].layers_s;
    if ((s = rf_stats_of(v, n, &st, err)))
        return rf_err_prefix(err, s, "layers");
    run->layers_s = st.median;
    for (size_t k = 0; k < n; k++)
        v[k] = steps[k].head_s;
    if ((s = rf_stats_of(v, n, &st, err)))
        return rf_err_prefix(err, s, "head");
    run->head_s = st.median;
    run->estimated_model_s =
        run->opts.layers > 0
            ? run->layers_s * (double)run->model_layers / (double)run->opts.layers + run->head_s
            : NAN;
    double new_tokens =
        (double)run->opts.batch * (run->opts.phase == RF_PREFILL ? (double)run->opts.tokens : 1.0);
    run->estimated_tokens_per_s = new_tokens / run->estimated_model_s;

    /* The residual's owners: operators with the largest positive residual. */
    run->n_owners = 0;
    for (size_t slot = 0; slot < RF_FORWARD_OWNERS; slot++) {
        size_t best = run->n_ops;
        for (size_t i = 0; i < run->n_ops; i++) {
            bool taken = false;
            for (size_t k = 0; k < run->n_owners; k++)
                taken |= run->owners[k] == i;
            if (!taken && run->ops[i].residual_s > 0 &&
                (best == run->n_ops || run->ops[i].residual_s > run->ops[best].residual_s))
                best = i;
        }
        if (best == run->n_ops)
            break;
        run->owner_share[run->n_owners] =
            run->residual_s > 0 ? run->ops[best].residual_s / run->residual_s : NAN;
        run->owners[run->n_owners++] = best;
    }
    run->opts.steps = (int)n;
    return RF_OK;
}
