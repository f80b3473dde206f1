/* measure_view.c - a measured profile as the analytic commands use it: its
 * calibration (--predict on step, report, sweep, generate, serve and
 * frontier), whether it has one, its sustained memory roof on Figure 1, and
 * --predict's columns and totals. (How the lab shows what it measures is
 * lab/lab_view.c's.) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_predict.h"
#include "measure_view.h"
#include "opts.h"
#include "step_opts.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_calib.h"
#include "roofline/rf_predict.h"

int cli_calib_load(const cli_ctx *ctx, rf_calib *out)
{
    static const char how[] = "make one with `roofline measure --calibrate -o calibrated.json` "
                              "and pass --hw calibrated.json";
    if (cli_gpu_wanted(ctx)) /* --backend / --calibration: kernel tables, gpu_predict.c */
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--predict on kernel tables (--backend, "
                        "--calibration) is not wired into %s: step, generate "
                        "and serve (under load) take it",
                        ctx->cmd);
    if (!ctx->hw_name || access(ctx->hw_name, F_OK) != 0)
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict needs a calibrated profile: %s", how);
    if (ctx->run.profile) { /* --hw resolved: the profile was read then */
        if (!ctx->run.calibrated)
            return cli_fail(ctx, RF_EXIT_USAGE, "--predict: %s has no calibration: %s",
                            ctx->hw_name, how);
        if (out != &ctx->run.calib)
            *out = ctx->run.calib;
        return RF_EXIT_OK;
    }
    rf_hw_profile *p = malloc(sizeof *p);
    if (!p)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    rf_err e;
    int rc = RF_EXIT_OK;
    if (rf_hw_profile_load(ctx->hw_name, p, &e))
        rc = cli_fail_err(ctx, &e);
    else if (!p->calib.version)
        rc =
            cli_fail(ctx, RF_EXIT_USAGE, "--predict: %s has no calibration: %s", ctx->hw_name, how);
    else
        *out = p->calib;
    free(p);
    return rc;
}

/* The profile at path, when it is one that loads (to free), else NULL. */
static rf_hw_profile *profile_at(const char *path)
{
    rf_hw_profile *p = path && access(path, F_OK) == 0 ? malloc(sizeof *p) : NULL;
    rf_err e;
    if (p && rf_hw_profile_load(path, p, &e) != RF_OK) {
        free(p);
        p = NULL;
    }
    return p;
}

void cli_plot_sustained(const cli_ctx *ctx, rf_plot *plot)
{
    double bw = ctx->run.sustained_bw; /* --hw resolved as a profile */
    if (!ctx->run.profile) {
        rf_hw_profile *p = profile_at(ctx->hw_name);
        bw = p ? p->bandwidth_sustained_bytes_per_s : 0;
        free(p);
    }
    if (!(bw > 0) || plot->n_lines >= RF_PLOT_MAX_LINES || !(plot->peak_flops_per_s > 0))
        return;
    rf_plot_line *l = &plot->lines[plot->n_lines++];
    char rate[32];
    memset(l, 0, sizeof *l);
    l->role = RF_PLOT_MEASURED; /* dashed, as a measured roof */
    l->sloped = true;
    l->value = bw;
    l->to_intensity = plot->peak_flops_per_s / bw; /* up to the compute roof */
    snprintf(l->label, sizeof l->label, "sustained %s (median read)",
             rf_fmt(bw, RF_U_BW, rate, sizeof rate));
    if (!plot->measured_name[0])
        snprintf(plot->measured_name, sizeof plot->measured_name,
                 "the profile's sustained memory roof");
}

/* ---- --predict on step, report and sweep ---------------------------------- */

int cli_predict_refuse(const cli_ctx *ctx, bool unsupported, const char *what)
{
    if (unsupported && (ctx->step_given & CLI_GIVEN_PREDICT))
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict: not for %s", what);
    return RF_EXIT_OK;
}

int cli_step_predict(cli_ctx *ctx, const rf_step_opts *o, const rf_step *st,
                     const struct rf_step_pred **out)
{
    cli_run *run = &ctx->run;
    *out = NULL;
    if (!(ctx->step_given & CLI_GIVEN_PREDICT))
        return RF_EXIT_OK;
    if (!run->calibrated) { /* read once: a sweep asks per point */
        int rc = cli_calib_load(ctx, &run->calib);
        if (rc)
            return rc;
        run->calibrated = true;
    }
    rf_step_pred *p = &run->pred[run->next_pred++ % 2];
    double tokens = (double)o->batch * (double)(o->phase == RF_PREFILL ? o->tokens : 1);
    rf_err e;
    if (rf_calib_predict_step(&run->calib, st, tokens, p, &e))
        return cli_fail_err(ctx, &e);
    *out = p;
    return RF_EXIT_OK;
}
