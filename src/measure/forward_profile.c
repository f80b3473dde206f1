/* forward_profile.c - the whole profile: plan, check, build, warm up, time
 * the steps, summarize (rf_forward_profile). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "forward_internal.h"
#include "measure_internal.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_measure_calib.h"
#include "roofline/rf_op.h"

#define MIN_STEPS 3
#define MAX_STEPS 20

static void progress(const rf_forward_opts *o, int done, int total, const char *what)
{
    if (o->progress)
        o->progress(o->progress_user, done, total, what);
}

rf_status rf_forward_profile(const rf_model *m, const rf_forward_opts *o, const rf_roof *roof,
                             rf_forward_run *run, rf_err *err)
{
    rf_forward *f = NULL;
    rf_forward_times *t = NULL;
    rf_status s;
    double check_err = 0;
    if ((s = rf_forward_plan(m, o, roof, run, err)))
        return s;
    progress(o, 0, 3, "checking the pass against the scalar reference");
    if ((s = rf_forward_check(m, o->isa, &check_err, err)))
        return s;
    run->check_max_err = check_err;
    progress(o, 1, 3, "filling random weights and the KV cache");
    if ((s = rf_forward_new(m, o, &f, err)))
        return s;
    run->opts.threads = f->o.threads;
    snprintf(run->attn_kernel, sizeof run->attn_kernel, "%s", f->attn_kernel);
    t = calloc(RF_STATS_MAX, sizeof *t);
    if (!t) {
        s = rf_err_set(err, RF_ENOMEM, "out of memory");
        goto done;
    }
    progress(o, 2, 3, "warm-up");
    for (int w = 0; w < o->warmup; w++)
        if ((s = rf_forward_step(f, &t[0], err)))
            goto done;
    int n = o->steps;
    if (n == 0) { /* enough steps to fill min_time_s, within [3, 20] */
        double per = t[0].step_s > 0 ? t[0].step_s : 1e-3;
        double want = ceil(o->min_time_s / per);
        n = want < MIN_STEPS ? MIN_STEPS : want > MAX_STEPS ? MAX_STEPS : (int)want;
    }
    for (int k = 0; k < n; k++) {
        progress(o, k, n, RF_FORWARD_TIMED_STEP);
        if ((s = rf_forward_step(f, &t[k], err)))
            goto done;
    }
    s = rf_forward_summarize(run, t, (size_t)n, err);
done:
    free(t);
    rf_forward_free(f);
    return s;
}
