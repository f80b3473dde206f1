/* cmd_serve.c - `roofline serve MODEL --prompt P --output-tokens N --concurrency C`
 * or `--rate R`: an engine's scheduler simulated request by request under
 * a closed or open loop (rf_sim.h through sim.h: latency percentiles,
 * throughput, goodput, KV use, preemptions). `--steady-state --concurrency
 * B` keeps the older model, continuous batching in steady state with
 * chunked prefill (rf_serve.h):
 * the mixed step every iteration runs, TPOT, TTFT, tokens/s, the KV in use
 * against the pool and the largest concurrency the pool admits; with
 * --tp/--pp/--ep/--dp the same steady state on a layout (rf_serve_par); with
 * --predict its step predicted on the --hw profile's calibration (rf_predict.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "assume.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "gpu_predict.h"
#include "gpu_sim.h"
#include "measure_view.h"
#include "request.h"
#include "sim.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_view.h"

enum { O_CONCURRENCY = 1000, O_CHUNK, O_MAX_TOKENS };

/* The options in --help's order, a table a group (cmd_serve's list): each
 * goes to its own group's handler, so an id means something to it alone. */
static const cli_opt loop_opts[] = {
    {"concurrency", 1, O_CONCURRENCY, "C",
     "closed loop: C clients (--steady-state: B requests in flight)"},
    {0}};
static const cli_opt load_opts[] = {CLI_SIM_LOAD_OPTS, {0}};
static const cli_opt step_opts[] = {
    {"chunk", 1, O_CHUNK, "C",
     "prompt tokens a chunk at most (default: the step's budget; --steady-state: the prompt)"},
    {"max-batched-tokens", 1, O_MAX_TOKENS, "T",
     "tokens a step at most, decode included (default " CLI_STR(CLI_SIM_MAX_TOKENS) ")"},
    {0}};
static const cli_opt engine_opts[] = {
    CLI_SIM_ENGINE_OPTS,
    CLI_SIM_SCHEDULE_OPTS,
    CLI_SIM_SLO_OPTS,
    {"disagg", 1, CLI_O_DISAGG, "P:D", "disaggregated: P prefill and D decode workers (open loop)"},
    CLI_SIM_DISAGG_OPTS,
    {"steady-state", 0, CLI_O_STEADY, NULL,
     "the steady-state model (one mean step, queueing not modelled) instead of the simulation"},
    {0}};
static const cli_opt par_opts[] = {CLI_PAR_OPTS, {0}};

typedef struct args {
    cli_request rq;
    rf_serve_opts so;
    cli_spec sp;
    cli_par par; /* many devices */
    cli_sim sim; /* the simulation's options, lengths as typed */
} args;

/* What a run computes, too large for the stack: one allocation the
 * command owns (cmd_serve), never static storage, so that two runs in one
 * process (rf_cli_run) share nothing. */
typedef struct results {
    rf_serve sv;        /* --steady-state: holds a step (~10 KB)       */
    rf_par par;         /* on a layout: every stage's step             */
    rf_serve_spec spec; /* --draft                                     */
    rf_model draft;     /* --draft's model                             */
    rf_calib cal;       /* --predict: the profile's calibration (~40 KB) */
    rf_serve_pred pred; /* --predict: a step's predictions             */
    cli_sim_out out;    /* under load: the simulated run               */
} results;

/* --prompt, --output-tokens as typed: a whole number also goes to the
 * steady state's request (with its range check); a distribution only to
 * the simulation. */
static int length(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    *(id == CLI_O_PROMPT ? &a->sim.prompt : &a->sim.output) = arg;
    if (arg[0] && arg[strspn(arg, "+-0123456789 ")] == '\0')
        return cli_request_opt(ctx, id, arg, &a->rq);
    return RF_EXIT_OK;
}

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_CONCURRENCY:
        a->sim.concurrency = 1;
        return cli_i64(ctx, "--concurrency", arg, 1, RF_DIM_MAX, &a->so.concurrency);
    case O_CHUNK:
        return cli_i64(ctx, "--chunk", arg, 1, RF_DIM_MAX, &a->so.chunk);
    case O_MAX_TOKENS:
        return cli_i64(ctx, "--max-batched-tokens", arg, 1, RF_DIM_MAX, &a->so.max_batched_tokens);
    default:
        return CLI_NOT_MINE;
    }
}

/* --draft MODEL: the draft d in the request's dtypes, and the speculative
 * steady state of the same requests. */
static int speculate(cli_ctx *ctx, const args *a, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const rf_serve *sv, rf_model *d, rf_serve_spec *sp)
{
    rf_step_opts draft_o;
    rf_err e;
    int rc = cli_spec_draft(ctx, &a->sp, m, &a->rq.o, d, &draft_o);
    if (rc)
        return rc;
    if (rf_serve_spec_compute(m, d, o, &draft_o, roof, sv, a->sp.k, a->sp.accept, sp, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--draft: %s", e.msg);
    return RF_EXIT_OK;
}

/* The KV held against the pool (the shared prefix once), in the current
 * section; *most gets the largest concurrency the pool admits, or -1. */
static void kv_in_use(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                      const args *a, const rf_serve *sv, double *most)
{
    rf_fit fit;
    rf_err e;
    char text[160];
    if (rf_serve_fit(m, o, sv, ctx->hw.mem_bytes, a->rq.budget.util, a->rq.budget.reserve_bytes,
                     &fit, most, &e)) {
        *most = -1;
        rf_report_null(r, "fits", "memory",
                       ctx->hw.mem_bytes ? e.msg : "- (no memory size: give --mem)");
        rf_report_null(r, "memory_needed_bytes", "memory needed (weights + KV)", "-");
        return;
    }
    cli_assume_fit(r, &fit, ctx);
    rf_report_bool(r, "fits", "memory", fit.fits, cli_fit_text(&fit, text, sizeof text));
    rf_report_int(r, "memory_needed_bytes", "memory needed (weights + KV)", fit.needed_bytes,
                  RF_U_BYTES_BIN);
}

/* The steady state's section: the fit, the step and its rates. */
static void steady_state(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                         const args *a, const rf_serve *sv)
{
    double most;
    rf_report_section(r, NULL, "steady state");
    kv_in_use(ctx, r, m, o, a, sv, &most);
    cli_context_check(ctx, r, m, a->so.prompt + a->so.output - 1, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_view_serve_steady(r, sv, most);
}

/* The steady state on a layout: the layout's section (stages, collectives),
 * then TPOT, TTFT and tokens/s of the deployment and a device. */
static int serve_layout(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                        const args *a, results *x)
{
    rf_serve_par pv;
    rf_err e;
    char title[256];
    rf_par_opts po;
    int rc = cli_par_setup(ctx, m, &a->rq.budget, &a->par, &po);
    if (rc)
        return rc;
    if (a->sp.draft)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--draft on many devices is not modelled (the "
                        "draft's own layout is not given): drop the "
                        "layout options or --draft");
    if (rf_serve_par_compute(m, o, roof, &po, &a->so, &x->sv, &x->par, &pv, &e))
        return cli_fail_err(ctx, &e);
    snprintf(title, sizeof title, "serve: %s on %lld x %s", m->name, (long long)pv.devices,
             ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, m, o, &x->sv.step);
    cli_assume_roof(ctx, r, o, roof);
    rf_view_serve_assume(r, &x->sv, &pv);
    cli_par_section(ctx, r, &x->par, &a->par);
    rf_view_serve_par(r, &pv);
    cli_context_check(ctx, r, m, a->so.prompt + a->so.output - 1, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_view_serve_par_times(r, &x->sv, &pv);
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

/* Under load: the simulation (sim.h) on the floor or the layout's step
 * model, refusing what it does not model in one line. */
static int serve_load(cli_ctx *ctx, int argc, char **argv, int pos, args *a, results *x)
{
    const char *no = !a->sp.draft && (a->sp.k_given || a->sp.accept_given)
                         ? "--spec-k and --accept need --draft MODEL"
                     : a->sp.draft && a->sp.prefix.shared ? "--shared-prefix and --draft: give one"
                     : a->sp.draft && a->sim.disagg       ? "--draft: speculative decoding is not "
                                                            "simulated disaggregated"
                     : a->sp.kernel_given ? "--prefix-kernel: the simulated step reads a shared "
                                            "prefix once a sequence"
                     : a->par.overlap     ? "--overlap: the simulated layout step does not overlap "
                                            "communication"
                     : (ctx->step_given & CLI_GIVEN_PREDICT) && !cli_gpu_wanted(ctx)
                         ? "--predict: predictions under load are made on a GPU's kernel "
                           "tables (--backend or --calibration DIR); --steady-state --predict "
                           "predicts the steady state on a calibrated profile"
                         : NULL;
    if (no)
        return cli_fail(ctx, RF_EXIT_USAGE, "%s", no);
    rf_step_opts o = a->rq.o;
    rf_model m;
    rf_roof roof;
    rf_model *d = &x->draft;
    char title[256];
    int rc;
    a->sim.chunk = a->so.chunk;
    a->sim.max_tokens = a->so.max_batched_tokens;
    a->sim.shared_prefix = a->sp.prefix.shared;
    if (a->sim.concurrency)
        a->sim.concurrency = a->so.concurrency;
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(ctx, &m, &o, false)))
        return rc;
    if (a->sp.draft) {
        if ((rc = cli_spec_draft(ctx, &a->sp, &m, &o, d, &a->sim.draft_o)))
            return rc;
        if (d->vocab != m.vocab)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--draft: draft %s has a vocabulary of %lld tokens, the target %s "
                            "%lld",
                            d->name, (long long)d->vocab, m.name, (long long)m.vocab);
        a->sim.draft = d;
        a->sim.spec_k = a->sp.k;
        a->sim.spec_accept = a->sp.accept;
    }
    if ((rc = cli_sim_run(ctx, &m, &o, &roof, &a->rq.budget, &a->par, &a->sim, &x->out)))
        return rc;
    if (x->out.devices > 1)
        snprintf(title, sizeof title, "serve: %s on %lld x %s under load", m.name,
                 (long long)x->out.devices, ctx->hw.name);
    else
        snprintf(title, sizeof title, "serve: %s on %s under load", m.name, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, &m, &o, NULL);
    cli_assume_roof(ctx, r, &o, &roof);
    rf_view_sim(r, &x->out);
    if (!(ctx->step_given & CLI_GIVEN_PREDICT) ||
        !(rc = cli_gpu_serve_load(ctx, &m, &o, &roof, &a->rq.budget, &a->par, &a->sim, r)))
        rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

/* --predict: the steady-state step predicted on the --hw profile's
 * calibration (rf_calib_predict_serve), or a one-line refusal. */
static int predict(const cli_ctx *ctx, results *x)
{
    rf_err e;
    int rc = cli_calib_load(ctx, &x->cal);
    if (rc)
        return rc;
    return rf_calib_predict_serve(&x->cal, &x->sv, &x->pred, &e) ? cli_fail_err(ctx, &e)
                                                                 : RF_EXIT_OK;
}

/* --steady-state: one mean step (rf_serve_compute), on a layout, with
 * --draft or --predict beside it. */
static int serve_steady(cli_ctx *ctx, int argc, char **argv, int pos, args *a, results *x)
{
    const char *sim_only = cli_sim_given(&a->sim);
    int rc;
    if (sim_only)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "%s: not with --steady-state (it simulates no "
                        "requests)",
                        sim_only);
    if ((a->sim.prompt && !a->rq.prompt) || (a->sim.output && !a->rq.output))
        return cli_fail(ctx, RF_EXIT_USAGE, "%s: --steady-state takes a fixed length",
                        a->sim.prompt && !a->rq.prompt ? "--prompt" : "--output-tokens");
    if ((rc = cli_request_check(ctx, &a->rq)) || (rc = cli_spec_check(ctx, &a->sp, a->rq.prompt)))
        return rc;
    if (!a->so.concurrency)
        return cli_fail(ctx, RF_EXIT_USAGE, "give --concurrency B (requests in flight)");
    a->so.prompt = a->rq.prompt;
    a->so.output = a->rq.output;
    a->so.prefix = a->sp.prefix;
    rf_step_opts o = a->rq.o;
    rf_model m;
    rf_roof roof;
    rf_err e;
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(ctx, &m, &o, false)))
        return rc;
    if ((rc = cli_spec_predict_refuse(ctx, &a->sp, cli_par_wanted(&a->par))))
        return rc;
    if (cli_par_wanted(&a->par))
        return serve_layout(ctx, &m, &o, &roof, a, x);
    if (rf_serve_compute(&m, &o, &roof, &a->so, &x->sv, &e))
        return cli_fail_err(ctx, &e);
    if (a->sp.draft && (rc = speculate(ctx, a, &m, &o, &roof, &x->sv, &x->draft, &x->spec)))
        return rc;
    bool predicting = ctx->step_given & CLI_GIVEN_PREDICT;
    if (predicting && (rc = predict(ctx, x)))
        return rc;

    char title[256];
    snprintf(title, sizeof title, "serve: %s on %s", m.name, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, &m, &o, &x->sv.step);
    cli_assume_roof(ctx, r, &o, &roof);
    rf_view_serve_assume(r, &x->sv, NULL);
    rf_view_op_table(r, "ops", "operators of the steady-state step (summed over 'count')",
                     &x->sv.step, predicting ? &x->pred.step : NULL);
    steady_state(ctx, r, &m, &o, a, &x->sv);
    if (a->sp.draft)
        rf_view_serve_spec(r, &x->draft, &x->spec);
    if (predicting)
        rf_view_serve_pred(r, &x->sv, &x->pred);
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_serve(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.rq = CLI_REQUEST_DEFAULT, .sp = CLI_SPEC_DEFAULT, .par = CLI_PAR_DEFAULT};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "serve MODEL --prompt P|DIST --output-tokens N|DIST (--concurrency C | "
                            "--rate R [--arrival poisson|gamma:CV]) [--requests N] [--seed S] "
                            "[--trace FILE.csv] [--max-batched-tokens T] [--max-seqs S] [--chunk "
                            "C] [--block B] [--shared-prefix P_s] [--no-preempt] [--slo-ttft X "
                            "--slo-tpot Y] [--disagg P:D] [options]; or serve MODEL "
                            "--steady-state --prompt P --output-tokens N --concurrency B [--draft "
                            "MODEL|mtp [--spec-k K] [--accept ALPHA]] [options]",
                            (const cli_opt_group[]){{cli_request_len_opts, length, &a},
                                                    {loop_opts, on_opt, &a},
                                                    {load_opts, cli_sim_group_opt, &a.sim},
                                                    {step_opts, on_opt, &a},
                                                    {engine_opts, cli_sim_group_opt, &a.sim},
                                                    CLI_REQUEST_STEP_GROUPS(&a.rq),
                                                    CLI_REQUEST_SPEC_GROUP(&a.sp),
                                                    CLI_PREDICT_GROUP(&a.rq.o),
                                                    {cli_gpu_opts, cli_sim_gpu_opt, &a.sim},
                                                    {par_opts, cli_par_group_opt, &a.par},
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    results *x = calloc(1, sizeof *x);
    if (!x)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rc = a.sim.steady ? serve_steady(&ctx, argc, argv, pos, &a, x)
                      : serve_load(&ctx, argc, argv, pos, &a, x);
    cli_gpu_free(&ctx);
    free(x);
    return rc;
}
