/* gemm_sweep.c - many GEMM points timed in passes over the whole sweep and
 * pooled, with the DRAM read sampled between passes (see rf_gemm_sweep). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <time.h>

#include "roofline/rf_measure.h"

static void pause_s(double s)
{
    if (!(s > 0))
        return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Trials of point p in pass `pass`: all in the first pass when the point
 * is not spread, else an even share (the first passes take the rest). */
static int pass_trials(int trials, bool spread, int pass, int passes)
{
    if (!spread)
        return pass ? 0 : trials;
    return trials / passes + (pass < trials % passes);
}

rf_status rf_gemm_sweep(const rf_gemm_sweep_opts *o, rf_gemm_sweep_point *pts, size_t n,
                        rf_err *err)
{
    if (o->passes < 1 || o->passes > RF_STATS_MAX)
        return rf_err_set(err, RF_EINVAL, "GEMM sweep passes (%d) must be 1..%d", o->passes,
                          RF_STATS_MAX);
    for (size_t i = 0; i < n; i++)
        memset(&pts[i].result, 0, sizeof pts[i].result);
    rf_gemm_bench_result more; /* one pass's trials, before pooling */
    for (int pass = 0; pass <= o->passes; pass++) {
        if (o->sampler) {
            if (o->progress)
                o->progress(o->progress_user, pass, o->passes, NULL);
            pause_s(o->settle_s);
            rf_status s = rf_dram_sampler_burst(o->sampler, err);
            if (s != RF_OK)
                return s;
        }
        for (size_t i = 0; pass < o->passes && i < n; i++) {
            rf_gemm_sweep_point *p = &pts[i];
            bool spread = p->opts.timing.trials >= 2 * o->passes;
            rf_gemm_bench_opts go = p->opts;
            go.timing.trials = pass_trials(p->opts.timing.trials, spread, pass, o->passes);
            if (go.timing.trials == 0)
                continue;
            if (o->progress)
                o->progress(o->progress_user, pass, o->passes, p);
            rf_status s = rf_gemm_bench(&go, &more, err);
            if (s == RF_OK)
                s = rf_gemm_bench_merge(&p->result, &more, err);
            if (s != RF_OK)
                return s;
        }
    }
    return RF_OK;
}
