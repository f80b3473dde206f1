/* cmd_profile.c - `roofline profile MODEL`: run N real decoder layers on the
 * CPU, time every operator, and set each beside its floor on the measured
 * roofline; the step's residual and its owners; the whole-model estimate. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "step_opts.h"
#include "lab_view.h"
#include "measure_view.h"
#include "roofline/rf_forward.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_measure_calib.h"
#include "roofline/rf_view.h"

enum { O_LAYERS = 1000, O_DTYPE, O_THREADS, O_STEPS };

static const cli_opt opts[] = {
    {"phase", 1, CLI_O_PHASE, "decode|prefill", "step phase (default decode)"},
    {"batch", 1, CLI_O_BATCH, "B", "sequences in the step (default 1)"},
    {"context", 1, CLI_O_CONTEXT, "S",
     "decode: keys per sequence, the new token's included (default 1024); prefill: cached "
     "positions before the new tokens (default 0)"},
    {"tokens", 1, CLI_O_TOKENS, "T", "prefill: new tokens per sequence (default 512)"},
    {"layers", 1, O_LAYERS, "N", "decoder layers run (default 2); the model is estimated"},
    {"dtype", 1, O_DTYPE, "fp32", "weights, activations and KV (only fp32 runs)"},
    {"threads", 1, O_THREADS, "N", "BLAS threads (default: one per core)"},
    {"steps", 1, O_STEPS, "N", "timed steps (default: as many as fill 2 s, 3 to 20)"},
    CLI_PREDICT_OPT,
    {0},
};

typedef struct args {
    rf_step_opts step; /* phase, batch, context, tokens as the step options */
    rf_forward_opts fwd;
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    int64_t v;
    int rc;
    switch (id) {
    case O_LAYERS:
        return cli_i64(ctx, "--layers", arg, 1, RF_MODEL_MAX_LAYERS, &a->fwd.layers);
    case O_DTYPE:
        if (strcmp(arg, "fp32"))
            return cli_fail(ctx, RF_EXIT_USAGE, "--dtype: '%s' is not run on the CPU (only fp32)",
                            arg);
        return RF_EXIT_OK;
    case O_THREADS:
        if ((rc = cli_i64(ctx, "--threads", arg, 1, 4096, &v)))
            return rc;
        a->fwd.threads = (int)v;
        return RF_EXIT_OK;
    case O_STEPS:
        if ((rc = cli_i64(ctx, "--steps", arg, 1, RF_STATS_MAX, &v)))
            return rc;
        a->fwd.steps = (int)v;
        return RF_EXIT_OK;
    default:
        return cli_step_opt(ctx, id, arg, &a->step);
    }
}

/* Progress on the command's error stream (user), one line rewritten in
 * place, only on a terminal. */
static void progress(void *user, int done, int total, const char *what)
{
    fprintf(user, "\r  profiling [%2d/%2d] %-48s", done + 1, total, what);
    fflush(user);
}

/* The calibration of a --hw profile that has one (*out, to free), NULL
 * otherwise; --predict without one is refused before anything runs. The
 * profile is read here once, into ctx->run, for the roof after it too (a
 * profile that does not load is refused by --predict, or by the roof). */
static int load_calibration(cli_ctx *ctx, rf_calib **out)
{
    *out = NULL;
    bool asked = ctx->step_given & CLI_GIVEN_PREDICT;
    rf_err e;
    if (ctx->hw_name && access(ctx->hw_name, F_OK) == 0)
        (void)cli_read_profile(ctx, ctx->hw_name, &e);
    if (!asked && !ctx->run.calibrated)
        return RF_EXIT_OK;
    if (!(*out = malloc(sizeof **out)))
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    int rc = cli_calib_load(ctx, *out);
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

int cmd_profile(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.step = rf_step_opts_default(), .fwd = rf_forward_opts_default()};
    a.step.context = -1; /* defaults depend on the phase */
    a.step.tokens = -1;
    int pos,
        rc = cli_parse(&ctx, io, argc, argv,
                       "profile MODEL [--phase decode|prefill] [--batch B] [--context S] "
                       "[--tokens T] [--layers N] [--dtype fp32] [--threads N] [--steps N] "
                       "[--hw PROFILE (default: measure now)] [--predict] [--mem SIZE (a limit)]",
                       (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (argc - pos != 1)
        return cli_fail(&ctx, RF_EXIT_USAGE, "expected one MODEL (a preset or a config.json)");
    if ((ctx.w_given && ctx.w.kind != RF_FP32) || (ctx.a_given && ctx.a.kind != RF_FP32) ||
        (ctx.kv_given && ctx.kv.kind != RF_FP32))
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "profile runs fp32 weights, activations and KV (see --dtype)");
    rf_model m;
    if ((rc = cli_resolve_model(&ctx, argv[pos], &m)))
        return rc;
    rf_forward_opts *o = &a.fwd;
    o->phase = a.step.phase;
    o->batch = a.step.batch;
    o->context = a.step.context >= 0 ? a.step.context : o->phase == RF_DECODE ? 1024 : 0;
    o->tokens = a.step.tokens >= 0 ? a.step.tokens : o->phase == RF_PREFILL ? 512 : 1;
    if (o->phase == RF_DECODE && a.step.tokens >= 0)
        return cli_fail(&ctx, RF_EXIT_USAGE, "--tokens is for --phase prefill");

    o->mem_limit_bytes = ctx.mem_bytes; /* --mem: at most this much */
    o->isa = getenv("RF_ISA");          /* the kernel table's override   */

    /* Everything that can be refused is refused before the measurement. */
    rf_err e;
    rf_status fit = rf_forward_fit(&m, o, 0, &e);
    if (fit == RF_ENOMEM && ctx.mem_bytes) /* the limit was the user's: bad input */
        return cli_fail(&ctx, RF_EXIT_USAGE, "--mem: %s", e.msg);
    if (fit)
        return cli_fail_err(&ctx, &e);
    const char *inputs[] = {ctx.hw_name, NULL};
    if ((rc = cli_check_output(&ctx, ctx.out_path, inputs)))
        return rc;
    bool tty = io->err_tty;
    rf_calib *cal = NULL;
    if ((rc = load_calibration(&ctx, &cal)))
        return rc;
    rf_roof roof;
    if ((rc = cli_measured_roof(&ctx, o->threads, RF_FP32, &roof))) {
        free(cal);
        return rc;
    }
    o->progress = tty ? progress : NULL;
    o->progress_user = io->err;
    rf_forward_run *run = malloc(sizeof *run);
    rf_forward_pred *pr = cal ? malloc(sizeof *pr) : NULL;
    if (!run || (cal && !pr)) {
        free(run), free(pr), free(cal);
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    }
    /* With a calibration, the roofs sampled as the calibration sampled them
     * beside its points, before each timed step and after the last, and
     * reported beside the prediction (which is on the calibration's). */
    size_t pr_samples = 0;
    rf_roof_probe_hook hook = {.next = o->progress, .next_user = o->progress_user};
    rf_status s = cal ? rf_roof_probe_open(0, &hook.probe, &e) : RF_OK;
    if (s == RF_OK && cal)
        o->progress = rf_roof_probe_progress, o->progress_user = &hook;
    if (s == RF_OK)
        s = rf_forward_profile(&m, o, &roof, run, &e);
    if (tty)
        fprintf(io->err, "\r%-72s\r", "");
    if (s == RF_OK && cal && hook.status != RF_OK)
        e = hook.err, s = hook.status;
    if (s == RF_OK && cal)
        s = rf_roof_probe_sample(hook.probe, &e);
    if (s == RF_OK && cal) {
        double bw, peak;
        rf_roof_probe_median(hook.probe, 0, rf_roof_probe_count(hook.probe), &bw, &peak);
        pr_samples = rf_roof_probe_count(hook.probe);
        s = rf_calib_predict_forward(cal, run, bw, peak, pr, &e);
    }
    rf_roof_probe_close(hook.probe);
    free(cal);
    if (s) {
        free(run), free(pr);
        return cli_fail_err(&ctx, &e);
    }
    rf_report *r = rf_view_profile(&m, run, pr, pr_samples, ctx.hw_origin);
    free(run);
    free(pr);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
