/* cmd_generate.c - `roofline generate MODEL --prompt P --output-tokens N`: a static
 * batch of B identical requests to the end (rf_serve.h): TTFT, TPOT (mean,
 * first, last), latency, tokens/s, the memory fit at the last context,
 * with --draft a speculative decoding of the same requests, and with
 * --predict the same figures predicted on the --hw profile's calibration
 * (rf_predict.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "assume.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "engine_predict.h"
#include "gpu_predict.h"
#include "gpu_sim.h"
#include "roofline/rf_engine.h"
#include "measure_view.h"
#include "request.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_view.h"

/* The options in --help's order, each table a group (cmd_generate's list). */
static const cli_opt batch_opts[] = {
    {"batch", 1, CLI_O_BATCH, "B", "identical requests in the static batch (default 1)"}, {0}};
static const cli_opt par_opts[] = {CLI_PAR_OPTS, {0}};

typedef struct args {
    cli_request rq;
    cli_spec sp;
    cli_par par; /* many devices */
} args;

/* What a run holds beyond the stack, one allocation the command owns
 * (cmd_generate), never static storage. */
typedef struct results {
    rf_calib cal;         /* --predict on a profile: its calibration (~40 KB) */
    rf_par_sweep scratch; /* on a layout: every stage's step                */
} results;

/* --backend, --quant, --calibration: --backend ENGINE (llamacpp) predicts
 * on an engine calibration file, any other on a GPU's kernel tables. */
static int gpu_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    (void)user;
    if (id == CLI_O_BACKEND && rf_engine_known(arg))
        return cli_gpu_engine_opt(ctx, arg);
    return cli_gpu_opt(ctx, id, arg);
}

/* --draft MODEL: the draft d, in the request's dtypes, and the
 * speculative decoding of the same requests. */
static int speculate(cli_ctx *ctx, const args *a, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const rf_generate *g, rf_model *d, rf_spec *sp)
{
    rf_step_opts draft_o;
    rf_err e;
    int rc;
    if ((rc = cli_spec_draft(ctx, &a->sp, m, &a->rq.o, d, &draft_o)))
        return rc;
    if (rf_spec_compute(m, d, o, &draft_o, roof, g, a->sp.k, a->sp.accept, sp, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--draft: %s", e.msg);
    return RF_EXIT_OK;
}

/* The memory fit at the last context, or why there is none. */
static void memory_fit(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                       const args *a, const rf_generate *g)
{
    rf_fit fit;
    rf_err e;
    char text[160];
    if (rf_generate_fit(m, o, g, ctx->hw.mem_bytes, a->rq.budget.util, a->rq.budget.reserve_bytes,
                        &fit, &e)) {
        rf_report_null(r, "fits", "memory",
                       ctx->hw.mem_bytes ? e.msg : "- (no memory size: give --mem)");
        rf_report_null(r, "memory_needed_bytes", "memory needed (weights + KV)", "-");
    } else {
        cli_assume_fit(r, &fit, ctx);
        rf_report_bool(r, "fits", "memory", fit.fits, cli_fit_text(&fit, text, sizeof text));
        rf_report_int(r, "memory_needed_bytes", "memory needed (weights + KV)", fit.needed_bytes,
                      RF_U_BYTES_BIN);
    }
}

/* --predict: the generation predicted, rows labelled so, beside the
 * floors' section. */
static int predicted(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const args *a, results *x)
{
    rf_generate_pred p;
    rf_err e;
    int rc = cli_calib_load(ctx, &x->cal);
    if (rc)
        return rc;
    if (rf_calib_predict_generate(&x->cal, m, o, roof, a->rq.prompt, a->rq.output, &a->sp.prefix,
                                  &p, &e))
        return cli_fail_err(ctx, &e);
    rf_view_generate_pred(r, &p);
    return RF_EXIT_OK;
}

/* The generation on a layout (rf_generate_par_compute): every time the
 * layout's cycle, tokens/s of the deployment and of a device. */
static int generate_layout(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                           const rf_roof *roof, const args *a, results *x)
{
    rf_generate_par g;
    rf_err e;
    char title[256];
    rf_par_opts po;
    int rc = cli_par_setup(ctx, m, &a->rq.budget, &a->par, &po);
    if (rc)
        return rc;
    if (a->sp.draft || a->sp.prefix.shared)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--draft and --shared-prefix on many devices are "
                        "not modelled: drop the layout options or them");
    if (rf_generate_par_compute(m, o, roof, &po, a->rq.prompt, a->rq.output, &x->scratch, &g, &e))
        return cli_fail_err(ctx, &e);
    snprintf(title, sizeof title, "generate: %s on %lld x %s", m->name, (long long)g.devices,
             ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, m, o, NULL);
    cli_assume_roof(ctx, r, o, roof);
    rf_view_par_assume(r, &po.links, &po.layout);
    rf_view_generate_par(r, &g);
    cli_context_check(ctx, r, m, g.prompt + g.output - 1, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_view_generate_par_times(r, &g, ctx->hw.board_power_w);
    if (ctx->step_given & CLI_GIVEN_PREDICT) /* on kernel tables (gpu_predict.c) */
        rc = cli_gpu_generate(ctx, r, m, o, roof, &a->rq.budget, &a->par, a->rq.prompt,
                              a->rq.output, 0);
    if (!rc)
        rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

/* One device: the generation (rf_generate_prefix_compute), --draft beside
 * it, --predict on the profile, llama.cpp's fit or kernel tables. */
static int generate(cli_ctx *ctx, int argc, char **argv, int pos, const args *a, results *x)
{
    rf_step_opts o = a->rq.o;
    rf_model m, d;
    rf_roof roof;
    rf_err e;
    rf_generate g;
    rf_spec sp;
    int rc;
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(ctx, &m, &o, false)))
        return rc;
    if ((rc = cli_spec_predict_refuse(ctx, &a->sp, cli_par_wanted(&a->par))))
        return rc;
    if (cli_par_wanted(&a->par))
        return generate_layout(ctx, &m, &o, &roof, a, x);
    if (rf_generate_prefix_compute(&m, &o, &roof, a->rq.prompt, a->rq.output, &a->sp.prefix, &g,
                                   &e))
        return cli_fail_err(ctx, &e);
    if (a->sp.draft && (rc = speculate(ctx, a, &m, &o, &roof, &g, &d, &sp)))
        return rc;

    char title[256];
    double watts = ctx->hw.board_power_w;
    snprintf(title, sizeof title, "generate: %s on %s", m.name, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_model(r, &m, &o, NULL);
    cli_assume_roof(ctx, r, &o, &roof);
    rf_view_generate_assume(r, &g, watts, a->sp.draft);
    rf_report_section(r, NULL, "generation");
    memory_fit(ctx, r, &m, &o, a, &g);
    cli_context_check(ctx, r, &m, g.final_positions, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_view_generate_times(r, &g, watts);
    if (a->sp.draft)
        rf_view_spec(r, "speculative decoding", &d, &sp);
    const char *engine_file, *engine = cli_gpu_engine(ctx, &engine_file); /* --backend llamacpp */
    rc = !(ctx->step_given & CLI_GIVEN_PREDICT) ? RF_EXIT_OK
         : engine ? cli_engine_generate(ctx, r, engine, engine_file, &m, &o, &roof, a->rq.prompt,
                                        a->rq.output)
         : cli_gpu_wanted(ctx) /* on kernel tables (gpu_predict.c) */
             ? cli_gpu_generate(ctx, r, &m, &o, &roof, &a->rq.budget, &a->par, a->rq.prompt,
                                a->rq.output, a->sp.prefix.shared)
             : predicted(ctx, r, &m, &o, &roof, a, x);
    if (!rc)
        rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_generate(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.rq = CLI_REQUEST_DEFAULT, .sp = CLI_SPEC_DEFAULT, .par = CLI_PAR_DEFAULT};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "generate MODEL --prompt P --output-tokens N [--batch B] "
                            "[--draft MODEL|mtp [--spec-k K] [--accept ALPHA]] [options]",
                            (const cli_opt_group[]){CLI_REQUEST_LEN_GROUP(&a.rq),
                                                    {batch_opts, cli_step_opt, &a.rq.o},
                                                    CLI_REQUEST_STEP_GROUPS(&a.rq),
                                                    CLI_REQUEST_SPEC_GROUP(&a.sp),
                                                    CLI_PREDICT_GROUP(&a.rq.o),
                                                    {cli_gpu_opts, gpu_opt, NULL},
                                                    {par_opts, cli_par_group_opt, &a.par},
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_request_check(&ctx, &a.rq)) || (rc = cli_spec_check(&ctx, &a.sp, a.rq.prompt)))
        return rc;
    results *x = calloc(1, sizeof *x);
    if (!x)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rc = generate(&ctx, argc, argv, pos, &a, x);
    cli_gpu_free(&ctx);
    free(x);
    return rc;
}
