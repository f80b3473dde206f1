/* gemm_sweep.c - many GEMM points timed in passes over the whole sweep and
 * pooled, with the DRAM read sampled between passes (see rf_gemm_sweep). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "roofline/rf_measure.h"
#include "roofline/rf_op.h"

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

int rf_gemm_sweep_trials(const rf_gemm_sweep_opts *o, const rf_gemm_bench_opts *point)
{
    rf_op op;
    if (o->trials)
        return o->trials;
    if (rf_op_gemm("gemm", point->m, point->k, point->n, rf_dtype_of(point->dtype),
                   rf_dtype_of(point->dtype), &op, NULL) != RF_OK)
        return RF_GEMM_TRIALS_MIN;
    rf_point p = rf_roof_place(o->roof, (double)op.flops, (double)op.bytes);
    double want = p.floor_s > 0 ? ceil(RF_GEMM_TRIAL_BUDGET_S / p.floor_s) : RF_GEMM_TRIALS_MAX;
    return want < RF_GEMM_TRIALS_MIN   ? RF_GEMM_TRIALS_MIN
           : want > RF_GEMM_TRIALS_MAX ? RF_GEMM_TRIALS_MAX
                                       : (int)want;
}

rf_status rf_gemm_sweep(const rf_gemm_sweep_opts *o, rf_gemm_sweep_point *pts, size_t n,
                        rf_err *err)
{
    const int passes = RF_GEMM_SWEEP_PASSES;
    if (o->trials < 0 || o->trials > RF_STATS_MAX || (!o->trials && !o->roof))
        return rf_err_set(err, RF_EINVAL, "GEMM sweep trials (%d) must be 1..%d, or 0 with a roof",
                          o->trials, RF_STATS_MAX);
    /* half the free memory, less what the sampler holds */
    uint64_t held = o->sampler ? rf_dram_sampler_bytes(o->sampler) : 0;
    uint64_t limit = o->mem_avail_bytes > held ? (o->mem_avail_bytes - held) / 2 : 1;
    for (size_t i = 0; i < n; i++) {
        memset(&pts[i].result, 0, sizeof pts[i].result);
        pts[i].opts.mem_limit_bytes = limit;
        pts[i].opts.timing =
            (rf_timing){RF_GEMM_MIN_TRIAL_S, rf_gemm_sweep_trials(o, &pts[i].opts)};
    }
    rf_gemm_bench_result more; /* one pass's trials, before pooling */
    for (int pass = 0; pass <= passes; pass++) {
        if (o->sampler) {
            if (o->progress)
                o->progress(o->progress_user, pass, passes, NULL);
            pause_s(RF_GEMM_SETTLE_S);
            rf_status s = rf_dram_sampler_burst(o->sampler, err);
            if (s != RF_OK)
                return s;
        }
        for (size_t i = 0; pass < passes && i < n; i++) {
            rf_gemm_sweep_point *p = &pts[i];
            bool spread = p->opts.timing.trials >= 2 * passes;
            rf_gemm_bench_opts go = p->opts;
            go.timing.trials = pass_trials(p->opts.timing.trials, spread, pass, passes);
            if (go.timing.trials == 0)
                continue;
            if (o->progress)
                o->progress(o->progress_user, pass, passes, p);
            rf_status s = rf_gemm_bench(&go, &more, err);
            if (s == RF_OK)
                s = rf_gemm_bench_merge(&p->result, &more, err);
            if (s != RF_OK)
                return s;
        }
    }
    return RF_OK;
}
