/* cmd_frontier.c - `roofline frontier MODEL --prompt P --output-tokens N`: static
 * batches of 1..B requests (rf_frontier_compute): TTFT, TPOT, tokens/s a
 * device, the two Pareto fronts, optionally cost and an SVG figure; with
 * --predict every point predicted on the --hw profile's calibration and
 * both fronts marked again on the predicted figures (rf_predict.h). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "assume.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "gpu_predict.h"
#include "gpu_sim.h"
#include "measure_view.h"
#include "request.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_view.h"
#include "sim.h"

enum { O_MAX_BATCH = 1000, O_SVG, O_PRICE, O_LOAD_SVG };

/* The options in --help's order, each table a group (cmd_frontier's list). */
static const cli_opt opts[] = {
    {"max-batch", 1, O_MAX_BATCH, "B", "largest batch (default the KV pool's limit)"},
    {"svg", 1, O_SVG, "FILE",
     "also write the figure: tokens/s against TPOT and TTFT, and below it the curve under load"},
    {"price-per-hour", 1, O_PRICE, "USD", "a device's price an hour: USD per million tokens"},
    {"load-svg", 1, O_LOAD_SVG, "FILE",
     "also the curve under load: P99 TTFT and TPOT against the request rate (simulated)"},
    {0},
};
static const cli_opt slo_opts[] = {CLI_SIM_SLO_OPTS, {0}};
static const cli_opt par_opts[] = {CLI_PAR_OPTS, {0}};

typedef struct args {
    cli_request rq;
    int64_t max_batch;
    const char *svg;
    double price;
    cli_par par; /* many devices */
    const char *load_svg;
    cli_sim sim; /* --load-svg: the SLOs and percentile */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_MAX_BATCH:
        return cli_i64(ctx, "--max-batch", arg, 1, 1 << 20, &a->max_batch);
    case O_SVG:
        a->svg = arg;
        return RF_EXIT_OK;
    case O_PRICE:
        return cli_f64(ctx, "--price-per-hour", arg, 1e-9, 1e9, &a->price);
    case O_LOAD_SVG:
        a->load_svg = arg;
        return RF_EXIT_OK;
    default:
        return CLI_NOT_MINE;
    }
}

/* What a run holds, one allocation the command owns (cmd_frontier), never
 * static storage: the points, and with --predict their predictions and a
 * profile's calibration (~40 KB). */
typedef struct results {
    cli_frontier fr;
    rf_frontier_point *pred; /* --predict: fr.n of them, or NULL          */
    size_t *outside;         /* and each one's operators outside the calibration */
    rf_calib cal;
} results;

/* --predict: every batch predicted (x->pred and x->outside, n of each),
 * both fronts marked on the predicted figures. */
static int predict(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                   const args *a, results *x)
{
    rf_err e;
    size_t n = (size_t)x->fr.n;
    int rc = cli_gpu_wanted(ctx) ? RF_EXIT_OK : cli_calib_load(ctx, &x->cal);
    if (rc)
        return rc;
    x->pred = calloc(n, sizeof *x->pred);
    x->outside = calloc(n, sizeof *x->outside);
    if (!x->pred || !x->outside)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (cli_gpu_wanted(ctx)) /* on kernel tables (gpu_predict.c); outside stays 0 */
        return cli_gpu_frontier(ctx, m, o, roof, &a->rq.budget, &a->par, a->rq.prompt, a->rq.output,
                                x->pred, n);
    if (rf_calib_predict_frontier(&x->cal, m, o, roof, a->rq.prompt, a->rq.output, x->pred,
                                  x->outside, n, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

/* --svg and --load-svg: the figures. --svg holds the frontier and, below
 * it, the curve under load; --load-svg the curve alone. */
static int figures(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const args *a, const cli_frontier *fr, const char *title)
{
    rf_buf front, load, both;
    rf_buf_init(&front);
    rf_buf_init(&load);
    rf_buf_init(&both);
    rf_err e;
    int rc = cli_load_curve(ctx, r, m, o, roof, &a->rq.budget, &a->par, a->rq.prompt, a->rq.output,
                            &a->sim, title, &load);
    if (!rc && a->svg && !(rc = cli_frontier_svg(ctx, fr, title, &front))) {
        const char *parts[2] = {front.data, load.data};
        rc = rf_svg_stack(parts, 2, &both, &e) ? cli_fail_err(ctx, &e)
                                               : cli_write_file(ctx, a->svg, both.data, both.len);
    }
    if (!rc && a->load_svg)
        rc = cli_write_file(ctx, a->load_svg, load.data, load.len);
    rf_buf_free(&front);
    rf_buf_free(&load);
    rf_buf_free(&both);
    return rc;
}

/* The report of batches 1..n: title, assumptions, the summary, the table. */
static int report(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                  const args *a, const results *x)
{
    const cli_frontier *fr = &x->fr;
    bool layout = cli_par_wanted(&a->par);
    double watts = ctx->hw.board_power_w;
    char title[256];
    snprintf(title, sizeof title, "frontier: %s on %s, prompt %lld, output %lld", m->name,
             ctx->hw.name, (long long)a->rq.prompt, (long long)a->rq.output);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    rf_par_opts po = cli_par_opts(ctx, &a->rq.budget, &a->par);
    cli_assume_model(r, m, o, NULL);
    cli_assume_roof(ctx, r, o, roof);
    rf_view_frontier_assume(r, layout ? &po : NULL, fr->cap, a->rq.prompt + a->rq.output - 1,
                            a->price, watts);
    rf_view_frontier_summary(r, NULL, "frontier", fr->points, fr->n, fr->cap, fr->cross);
    if (x->pred && cli_gpu_wanted(ctx))
        cli_gpu_assume_loaded(ctx, r); /* the kernel tables' lines */
    else if (x->pred)
        rf_view_pred_assume(r);
    if (x->pred)
        rf_view_frontier_pred(r, x->pred, x->outside, fr->n);
    rf_view_frontier_table(r, fr->points, (size_t)fr->n, fr->cap, a->price, watts, layout, x->pred,
                           x->outside);
    int rc = a->svg || a->load_svg ? figures(ctx, r, m, o, roof, a, fr, title) : RF_EXIT_OK;
    if (!rc)
        rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_frontier(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.rq = CLI_REQUEST_DEFAULT, .par = CLI_PAR_DEFAULT};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "frontier MODEL --prompt P --output-tokens N [--max-batch B] [--svg "
                            "FILE] [--price-per-hour USD] [--load-svg FILE [--slo-ttft X] "
                            "[--slo-tpot Y]] [options]",
                            (const cli_opt_group[]){CLI_REQUEST_LEN_GROUP(&a.rq),
                                                    {opts, on_opt, &a},
                                                    {slo_opts, cli_sim_group_opt, &a.sim},
                                                    CLI_REQUEST_STEP_GROUPS(&a.rq),
                                                    CLI_PREDICT_GROUP(&a.rq.o),
                                                    /* --backend: the load curve's schedule */
                                                    {cli_gpu_opts, cli_sim_gpu_opt, &a.sim},
                                                    {par_opts, cli_par_group_opt, &a.par},
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_request_check(&ctx, &a.rq)) ||
        (rc = cli_predict_refuse(&ctx, cli_par_wanted(&a.par) && !cli_gpu_wanted(&ctx), "layouts")))
        return rc;
    const char *inputs[] = {NULL};
    const char *const out_names[] = {"-o", "--svg", "--load-svg"}; /* issue 28, findings 7-8 */
    const char *const out_paths[] = {ctx.out_path, a.svg, a.load_svg};
    if ((rc = cli_outputs_distinct(&ctx, 3, out_names, out_paths)) ||
        (rc = cli_check_output(&ctx, a.svg, inputs)) ||
        (rc = cli_check_output(&ctx, a.load_svg, inputs)))
        return rc;
    if (!a.load_svg && !a.svg && (a.sim.slo_ttft || a.sim.slo_tpot || a.sim.percentile))
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "--slo-ttft, --slo-tpot and --percentile mark the "
                        "curve under load: give --svg or --load-svg FILE");
    rf_step_opts o = a.rq.o;
    rf_model m;
    rf_roof roof;
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)))
        return rc;
    results *x = calloc(1, sizeof *x);
    if (!x)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rc = cli_frontier_build(&ctx, &m, &o, &roof, &a.rq.budget, &a.par, a.rq.prompt, a.rq.output,
                            a.max_batch, 0, &x->fr);
    if (!rc && (ctx.step_given & CLI_GIVEN_PREDICT))
        rc = predict(&ctx, &m, &o, &roof, &a, x);
    if (!rc)
        rc = report(&ctx, &m, &o, &roof, &a, x);
    cli_gpu_free(&ctx);
    free(x->pred);
    free(x->outside);
    cli_frontier_free(&x->fr);
    free(x);
    return rc;
}
