/* cmd_report.c - `roofline report MODEL -o FILE.html`: one self-contained
 * page with Figure 1, the operator tables of both phases, step floors and
 * tokens/s, crossing points, KV capacity, a batch sweep, the frontier
 * (Figure 3) and the curve under load (Figure 4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assume.h"
#include "budget.h"
#include "cli.h"
#include "figure.h"
#include "measure_view.h"
#include "opts.h"
#include "output.h"
#include "par_opts.h"
#include "request.h"
#include "sim.h"
#include "step_opts.h"
#include "roofline/rf_view.h"
#include "roofline/rf_explorer.h"
#include "roofline/rf_file.h"
#include "roofline/rf_parse.h"

enum { O_PART = 1000 };

static const cli_opt opts[] = {
    {"part", 1, O_PART, "step",
     "write only the page's step sections (both phases' totals and operator tables; no "
     "figures, no explorer): the explorer's fast path"},
    {0}};
static const cli_opt par_opts[] = {CLI_PAR_OPTS, {0}};
static const cli_opt slo_opts[] = {CLI_SIM_SLO_OPTS, {0}}; /* Figure 4's */

typedef struct args {
    cli_budget budget;
    cli_par par;    /* many devices: a section for the layout */
    bool step_part; /* --part step */
    cli_sim sim;    /* Figure 4's SLO lines and percentile */
} args;

/* --part step, the one option of report's own */
static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (strcmp(arg, "step"))
        return cli_fail(ctx, RF_EXIT_USAGE, "--part: '%s' is not a part (step)", arg);
    a->step_part = true;
    return RF_EXIT_OK;
}

static void phase_totals(const cli_ctx *ctx, rf_report *r, const char *key, const char *label,
                         const cli_figure *f, const rf_step_opts *o, const rf_step *st,
                         const cli_budget *b)
{
    rf_report_section(r, key, label);
    cli_fit(ctx, r, &f->model, o, b, NULL);
    cli_context_check(ctx, r, &f->model, rf_step_positions(o), CLI_CTX_KEY);
    rf_view_phase_totals(r, o, st);
}

/* The assumption lines: the decode step's, the prefill's phase and
 * attention, the capacity rule, --measured, the context limit, the fit. */
static void assume_report(const cli_ctx *ctx, rf_report *r, const cli_figure *f,
                          const cli_budget *b)
{
    rf_err e;
    rf_fit fit;
    cli_assume_step(ctx, r, &f->model, &f->decode, &f->decode_step);
    cli_assume_phase(r, &f->prefill);
    cli_assume_attn(r, &f->prefill, true);
    rf_report_assume(r, "KV capacity: pool = %.2f x usable memory - resident weights - reserve",
                     b->util);
    if (f->measured_path)
        rf_report_assume(r, "measured: %s (%s)", f->measured_path,
                         f->measured.name[0] ? f->measured.name : "no name");
    int64_t longest = rf_step_positions(&f->decode) > rf_step_positions(&f->prefill)
                          ? rf_step_positions(&f->decode)
                          : rf_step_positions(&f->prefill);
    cli_context_check(ctx, r, &f->model, longest, CLI_CTX_LINES);
    if (rf_step_fit(&f->model, &f->decode, ctx->hw.mem_bytes, b->util, b->reserve_bytes, &fit,
                    &e) == RF_OK)
        cli_assume_fit(r, &fit, ctx);
}

/* Both phases' totals and operators, the measured operators, the
 * crossing points, the KV capacity and the batch sweep; without a chart
 * (--part step) the totals and operators alone. */
static void sections(const cli_ctx *ctx, rf_report *r, const cli_figure *f, const cli_budget *b,
                     const rf_crossover *cx, const rf_batch_chart *chart, rf_status cap_s,
                     const rf_capacity *cap, const rf_err *cap_err,
                     const struct rf_step_pred *const pred[2])
{
    char label[160];
    phase_totals(ctx, r, "decode", "decode step: floors and throughput", f, &f->decode,
                 &f->decode_step, b);
    phase_totals(ctx, r, "prefill", "prefill step: floors and throughput", f, &f->prefill,
                 &f->prefill_step, b);
    snprintf(label, sizeof label, "decode operators (B = %lld at s = %lld)",
             (long long)f->decode.batch, (long long)f->decode.context);
    rf_view_op_table(r, "decode_ops", label, &f->decode_step, pred[0]);
    snprintf(label, sizeof label, "prefill operators (B = %lld, T = %lld)",
             (long long)f->prefill.batch, (long long)f->prefill.tokens);
    rf_view_op_table(r, "prefill_ops", label, &f->prefill_step, pred[1]);
    rf_view_pred_totals(r, pred[0], "decode_predicted",
                        "decode step PREDICTED (the calibration's)");
    rf_view_pred_totals(r, pred[1], "prefill_predicted",
                        "prefill step PREDICTED (the calibration's)");
    if (!chart) /* --part step: these sections only */
        return;
    if (f->measured_path && f->measured.n_ops)
        rf_view_measured(r, &f->plot);
    rf_view_crossover(r, cx, &f->model, "crossover", "crossover_other");
    rf_view_capacity(r, cap_s, cap, cap_err);
    rf_view_batch_sweep(r, chart);
}

/* --part step: the page of the two phases' totals and operator tables
 * alone (what the explorer swaps into the page at once, before the whole
 * report follows), with the report's title. */
static int step_part(cli_ctx *ctx, const cli_figure *f, const args *a)
{
    const cli_budget *b = &a->budget;
    const struct rf_step_pred *pred[2] = {NULL, NULL};
    int rc;
    if ((rc = cli_predict_refuse(ctx, cli_par_wanted(&a->par), "layouts")) ||
        (rc = cli_step_predict(ctx, &f->decode, &f->decode_step, &pred[0])) ||
        (rc = cli_step_predict(ctx, &f->prefill, &f->prefill_step, &pred[1])))
        return rc;
    char title[300];
    snprintf(title, sizeof title, "Roofline report: %s on %s", f->model.name, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    sections(ctx, r, f, b, NULL, NULL, RF_OK, NULL, NULL, pred);
    rf_err e;
    rf_buf html;
    rf_buf_init(&html);
    if (rf_report_write_html(r, NULL, 0, &html, &e))
        rc = cli_fail_err(ctx, &e);
    else
        rc = cli_write_file(ctx, ctx->out_path, html.data, html.len);
    rf_buf_free(&html);
    rf_report_free(r);
    return rc;
}

/* The frontier's prompt and output: the report's prefill (--tokens) and
 * this many output tokens. */
enum { FRONTIER_OUTPUT = 128 };

/* Figure 3 and its section: the latency-throughput frontier of static
 * batches up to the KV limit (64 when none fits or it is unknown; at most
 * 1024), at P = the prefill's tokens and N = FRONTIER_OUTPUT, as `frontier`
 * draws it: on one device, or on the layout par names (a replica's KV
 * limit, tokens/s a device). Its SVG goes into svg. */
static int frontier_section(const cli_ctx *ctx, rf_report *r, const cli_figure *f,
                            const cli_budget *b, const cli_par *par, rf_buf *svg)
{
    cli_frontier fr;
    char title[256];
    int64_t p = f->prefill.tokens;
    rf_buf_init(svg);
    int rc = cli_frontier_build(ctx, &f->model, &f->decode, &f->roof, b, par, p, FRONTIER_OUTPUT, 0,
                                64, &fr);
    if (!rc && fr.n > 1024) { /* a figure's worth */
        cli_frontier_free(&fr);
        rc = cli_frontier_build(ctx, &f->model, &f->decode, &f->roof, b, par, p, FRONTIER_OUTPUT,
                                1024, 64, &fr);
    }
    if (rc)
        return rc;
    bool layout = par && cli_par_wanted(par);
    rf_report_assume(r,
                     "frontier (Figure 3): static batches 1..%lld of requests of %lld prompt "
                     "tokens (the prefill's) and %d output tokens %s, as "
                     "`roofline frontier%s` counts them",
                     (long long)fr.n, (long long)p, FRONTIER_OUTPUT,
                     layout ? "on a replica of the layout (tokens/s a device, the KV limit a "
                              "replica's)"
                            : "on one device",
                     layout ? " --tp ..." : "");
    cli_frontier_summary(r, "frontier", "latency-throughput frontier", &fr);
    snprintf(title, sizeof title, "frontier: %s on %s, prompt %lld, output %d", f->model.name,
             ctx->hw.name, (long long)p, FRONTIER_OUTPUT);
    if ((rc = cli_frontier_svg(ctx, &fr, title, svg)))
        rf_buf_free(svg);
    cli_frontier_free(&fr);
    return rc;
}

/* Figure 4 and its section: the curve under load (P_q TTFT and TPOT
 * against the request rate, the SLO lines and the capacity knee), at the
 * frontier's prompt and output, as `frontier --load-svg` draws it. Its SVG
 * goes into svg; where the weights leave no KV pool (on one device or a
 * device of the layout) the section says so and svg stays empty. */
static int load_section(const cli_ctx *ctx, rf_report *r, const cli_figure *f, const args *a,
                        rf_buf *svg)
{
    char title[256];
    rf_buf_init(svg);
    rf_err e;
    int64_t blocks;
    rf_par_opts po;
    bool layout = cli_par_wanted(&a->par);
    int rc = layout ? cli_par_setup(ctx, &f->model, &a->budget, &a->par, &po) : RF_EXIT_OK;
    if (rc)
        return rc;
    if (layout ? rf_sim_par_pool_blocks(&f->model, &f->decode, &po, CLI_SIM_BLOCK, &blocks, &e)
               : rf_sim_pool_blocks(&f->model, &f->decode, ctx->hw.mem_bytes, a->budget.util,
                                    a->budget.reserve_bytes, CLI_SIM_BLOCK, &blocks, &e)) {
        rf_report_section(r, "load", "under load");
        rf_report_null(r, "capacity_requests_per_s", "capacity (closed loop, requests/s)", e.msg);
        return RF_EXIT_OK;
    }
    snprintf(title, sizeof title, "under load: %s on %s, prompt %lld, output %d", f->model.name,
             ctx->hw.name, (long long)f->prefill.tokens, FRONTIER_OUTPUT);
    rc = cli_load_curve(ctx, r, &f->model, &f->decode, &f->roof, &a->budget, &a->par,
                        f->prefill.tokens, FRONTIER_OUTPUT, &a->sim, title, svg);
    if (rc)
        rf_buf_free(svg);
    return rc;
}

/* The explorer into html: the arguments after "report" but -o FILE, and
 * the files among them (a config.json, a profile: at most 8 of 256 KiB),
 * which the page's module reads again. */
static int add_explorer(const cli_ctx *ctx, rf_buf *html, int argc, char **argv)
{
    enum { MAX_ARGS = 128, MAX_FILES = 8, FILE_MAX_BYTES = 256 << 10 };
    const char *kept[MAX_ARGS];
    rf_explorer_file files[MAX_FILES];
    char *texts[MAX_FILES] = {0};
    size_t na = 0, nf = 0;
    for (int i = 1; i < argc && na < MAX_ARGS; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            i++;
            continue;
        }
        if (!strncmp(argv[i], "--output=", 9) || !strncmp(argv[i], "-o", 2))
            continue;
        kept[na++] = argv[i];
        rf_err ignored;
        size_t len;
        if (nf < MAX_FILES && argv[i][0] != '-' &&
            !rf_file_read_all(argv[i], FILE_MAX_BYTES, &texts[nf], &len, &ignored)) {
            files[nf] = (rf_explorer_file){argv[i], texts[nf], len};
            nf++;
        }
    }
    rf_err e;
    int rc = rf_explorer_append(html, kept, na, files, nf, &e) ? cli_fail_err(ctx, &e) : 0;
    for (size_t i = 0; i < nf; i++)
        free(texts[i]);
    return rc;
}

/* The page: r with Figure 1 and the batch chart (and the explorer, where
 * built), written to -o. */
static int write_page(const cli_ctx *ctx, rf_report *r, const cli_figure *f, rf_buf *svg3,
                      rf_buf *svg4, const rf_batch_chart *chart, int argc, char **argv)
{
    rf_err e;
    int rc;
    rf_buf svg1, svg2, html;
    rf_buf_init(&svg1);
    rf_buf_init(&svg2);
    rf_buf_init(&html);
    if (rf_plot_write_svg(&f->plot, &svg1, &e) || rf_batch_chart_write_svg(chart, &svg2, &e)) {
        rc = cli_fail_err(ctx, &e);
        goto out;
    }
    rf_html_figure figs[] = {
        {svg1.data, rf_view_figure1_caption(&f->plot), NULL},
        {svg2.data,
         "Figure 2. Decode step floor and tokens/s ceiling against batch at this "
         "context; the shaded region needs more KV cache than the memory holds.",
         "capacity"},
        {svg3->data,
         "Figure 3. Output tokens/s against TPOT and TTFT for static batches of "
         "1, 2, ... requests (log axes); filled points are on the Pareto front, the "
         "KV limit and the batch where the KV read reaches the weights ringed.",
         "frontier"},
        {svg4->data,
         "Figure 4. The engine under load: TTFT (solid) and TPOT (dashed) at "
         "P99 (or --percentile's) against the request rate, each point an open "
         "loop of 500 Poisson requests simulated request by request on the step "
         "floors (hollow: the queue grows without bound); the capacity knee (the "
         "closed loop's throughput) and any SLO given (--slo-ttft, --slo-tpot) "
         "marked.",
         "load"},
    };
    cli_assume_family(ctx, r); /* last: the explorer swaps the first sections by position */
    if (rf_report_write_html(r, figs, svg4->len ? 4 : 3, &html, &e))
        rc = cli_fail_err(ctx, &e);
    else if (!rf_explorer_built() || !(rc = add_explorer(ctx, &html, argc, argv)))
        rc = cli_write_file(ctx, ctx->out_path, html.data, html.len);
out:
    rf_buf_free(&svg1);
    rf_buf_free(&svg2);
    rf_buf_free(svg3);
    rf_buf_free(svg4);
    rf_buf_free(&html);
    return rc;
}

/* Many devices: Figure 1 of a device of the layout (its operators and
 * collectives on the link roofs) and the layout's section, from the decode
 * step on it. */
static int layout_section(cli_ctx *ctx, rf_report *r, cli_figure *f, const args *a, rf_par *dec,
                          rf_par *pre)
{
    int rc = cli_figure_layout(ctx, f, &a->budget, &a->par, dec, pre);
    if (!rc)
        cli_par_section(ctx, r, dec, &a->par);
    return rc;
}

/* What report computes, large: the figure (~60 KB), the crossing points,
 * the batch chart, and under a layout both steps on it. cmd_report owns
 * it, on the heap. */
typedef struct report_run {
    cli_figure f;
    rf_crossover cx;
    rf_batch_chart chart;
    rf_par dec, pre;
} report_run;

static int report(const cli_io *io, int argc, char **argv, void *state)
{
    report_run *run = state;
    cli_ctx ctx;
    cli_figure *fig = &run->f;
    rf_buf svg3, svg4; /* Figure 3, the frontier; Figure 4, the curve under load */
    args a = {CLI_BUDGET_DEFAULT, CLI_PAR_DEFAULT, false, {0}};
    int rc = cli_figure_start(&ctx, io, argc, argv,
                              "report MODEL [--hw NAME|PROFILE] [--batch B] [--context S] "
                              "[--tokens T] [--measured FILE.json] [--util U] [--reserve SIZE] "
                              "[--slo-ttft X] [--slo-tpot Y] [--part step] [-o FILE.html]",
                              (const cli_opt_group[]){CLI_FIGURE_GROUP(fig),
                                                      {cli_predict_opts, cli_figure_opt, fig},
                                                      CLI_BUDGET_GROUP(&a.budget),
                                                      {par_opts, cli_par_group_opt, &a.par},
                                                      {slo_opts, cli_sim_group_opt, &a.sim},
                                                      {opts, on_opt, &a},
                                                      {0}},
                              fig);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (a.step_part)
        return step_part(&ctx, fig, &a);
    rf_err e, cap_err;
    rf_capacity cap;
    rf_status cap_s =
        rf_capacity_compute(&fig->model, &fig->decode, ctx.hw.mem_bytes, a.budget.util,
                            a.budget.reserve_bytes, fig->decode.context, &cap, &cap_err);
    if (rf_crossover_compute(&fig->model, &fig->decode, &fig->roof, &run->cx, &e) ||
        rf_batch_chart_build(&run->chart, &fig->model, &fig->decode, &fig->roof, 0,
                             cap_s ? -1 : cap.sequences, &e))
        return cli_fail_err(&ctx, &e);
    const struct rf_step_pred *pred[2] = {NULL, NULL}; /* --predict: decode, prefill */
    if ((rc = cli_predict_refuse(&ctx, cli_par_wanted(&a.par), "layouts")) ||
        (rc = cli_step_predict(&ctx, &fig->decode, &fig->decode_step, &pred[0])) ||
        (rc = cli_step_predict(&ctx, &fig->prefill, &fig->prefill_step, &pred[1])))
        return rc;
    char title[300];
    snprintf(title, sizeof title, "Roofline report: %s on %s", fig->model.name, ctx.hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    assume_report(&ctx, r, fig, &a.budget);
    sections(&ctx, r, fig, &a.budget, &run->cx, &run->chart, cap_s, &cap, &cap_err, pred);
    if (cli_par_wanted(&a.par) && (rc = layout_section(&ctx, r, fig, &a, &run->dec, &run->pre))) {
        rf_report_free(r);
        return rc;
    }
    if (rf_explorer_note())
        rf_report_note(r, "%s", rf_explorer_note());
    if (!(rc = frontier_section(&ctx, r, fig, &a.budget, &a.par, &svg3))) {
        if (!(rc = load_section(&ctx, r, fig, &a, &svg4)))
            rc = write_page(&ctx, r, fig, &svg3, &svg4, &run->chart, argc, argv);
        else
            rf_buf_free(&svg3);
    }
    rf_report_free(r);
    return rc;
}

int cmd_report(const cli_io *io, int argc, char **argv)
{
    return cli_with_state(io, argc, argv, sizeof(report_run), report);
}
