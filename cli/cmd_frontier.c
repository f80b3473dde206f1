/* cmd_frontier.c - `roofline frontier MODEL --prompt P --output-tokens N`: static
 * batches of 1..B requests (rf_frontier_compute): TTFT, TPOT, tokens/s a
 * device, the two Pareto fronts, optionally cost and an SVG figure; with
 * --predict every point predicted on the --hw profile's calibration and
 * both fronts marked again on the predicted figures (rf_predict.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "gpu_predict.h"
#include "measure_view.h"
#include "request.h"
#include "roofline/rf_frontier_svg.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_load_svg.h"
#include "sim.h"

enum { O_MAX_BATCH = 1000, O_SVG, O_PRICE, O_LOAD_SVG };

static const cli_opt opts[] = {
    CLI_REQUEST_LEN_OPTS,
    {"max-batch", 1, O_MAX_BATCH, "B", "largest batch (default the KV pool's limit)"},
    {"svg", 1, O_SVG, "FILE",
     "also write the figure: tokens/s against TPOT and TTFT, and below it the curve under load"},
    {"price-per-hour", 1, O_PRICE, "USD", "a device's price an hour: USD per million tokens"},
    {"load-svg", 1, O_LOAD_SVG, "FILE",
     "also the curve under load: P99 TTFT and TPOT against the request rate (simulated)"},
    CLI_SIM_SLO_OPTS,
    CLI_REQUEST_STEP_OPTS,
    CLI_PREDICT_OPT,
    CLI_GPU_OPTS,
    CLI_PAR_OPTS,
    {0},
};

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
    case CLI_O_SLO_TTFT:
    case CLI_O_SLO_TPOT:
    case CLI_O_PERCENTILE:
        return cli_sim_opt(ctx, id, arg, &a->sim);
    case CLI_O_PREDICT:
        return cli_step_opt(ctx, id, arg, &a->rq.o);
    case CLI_O_BACKEND:
        a->sim.engine = arg; /* the load curve's default schedule */
        return cli_gpu_opt(ctx, id, arg);
    case CLI_O_QUANT:
    case CLI_O_CALIBRATION: /* --predict on kernel tables */
        return cli_gpu_opt(ctx, id, arg);
    default: {
        int rc = cli_par_opt(ctx, id, arg, &a->par);
        return rc == CLI_NOT_MINE ? cli_request_opt(ctx, id, arg, &a->rq) : rc;
    }
    }
}

/* --predict: the points predicted and each one's operators outside the
 * calibration (NULL without it). */
typedef struct predicted {
    rf_frontier_point *points;
    size_t *outside;
} predicted;

/* The predicted columns of point i (none without --predict). */
static void pred_cols(rf_report *r, const predicted *pr)
{
    if (!pr->points)
        return;
    rf_report_col(r, "predicted_ttft_s", "pred TTFT", RF_U_SECONDS);
    rf_report_col(r, "predicted_tpot_s", "pred TPOT", RF_U_SECONDS);
    rf_report_col(r, "predicted_latency_s", "pred latency", RF_U_SECONDS);
    rf_report_col(r, "predicted_tokens_per_s", "pred tok/s", RF_U_TOK_RATE);
    rf_report_col(r, "predicted_front_tpot", "pred front (TPOT)", RF_U_NONE);
    rf_report_col(r, "predicted_front_ttft", "pred front (TTFT)", RF_U_NONE);
    rf_report_col(r, "predicted_outside", "outside", RF_U_INT);
}

static void pred_cells(rf_report *r, const predicted *pr, size_t i)
{
    if (!pr->points)
        return;
    const rf_frontier_point *p = &pr->points[i];
    rf_report_cell_num(r, p->ttft_s);
    if (p->tpot_s > 0)
        rf_report_cell_num(r, p->tpot_s);
    else
        rf_report_cell_null(r, "-");
    rf_report_cell_num(r, p->latency_s);
    rf_report_cell_num(r, p->tokens_per_s);
    rf_report_cell_str(r, p->pareto_tpot ? "yes" : "no");
    rf_report_cell_str(r, p->pareto_ttft ? "yes" : "no");
    rf_report_cell_int(r, pr->outside[i]);
}

static void table(rf_report *r, const rf_frontier_point *p, size_t n, int64_t cap, double price,
                  double watts, bool layout, const predicted *pr)
{
    rf_report_table(r, "points", layout ? "static batches a replica (tokens/s a device)"
                                         : "static batches (one device)");
    rf_report_col(r, "batch", "B", RF_U_INT);
    rf_report_col(r, "ttft_s", "TTFT", RF_U_SECONDS);
    rf_report_col(r, "tpot_s", "TPOT", RF_U_SECONDS);
    rf_report_col(r, "latency_s", "latency", RF_U_SECONDS);
    rf_report_col(r, "tokens_per_s", "tokens/s", RF_U_TOK_RATE);
    rf_report_col(r, "front_tpot", "front (TPOT)", RF_U_NONE);
    rf_report_col(r, "front_ttft", "front (TTFT)", RF_U_NONE);
    rf_report_col(r, "fits", "fits", RF_U_NONE);
    if (price > 0)
        rf_report_col(r, "usd_per_mtok", "USD / M tokens", RF_U_SIG3);
    if (watts > 0)
        rf_report_col(r, "energy_per_token_j", "J / token", RF_U_SIG3);
    pred_cols(r, pr);
    for (size_t i = 0; i < n; i++) {
        rf_report_row(r);
        rf_report_cell_int(r, (uint64_t)p[i].batch);
        rf_report_cell_num(r, p[i].ttft_s);
        if (p[i].tpot_s > 0)
            rf_report_cell_num(r, p[i].tpot_s);
        else
            rf_report_cell_null(r, "-");
        rf_report_cell_num(r, p[i].latency_s);
        rf_report_cell_num(r, p[i].tokens_per_s);
        rf_report_cell_str(r, p[i].pareto_tpot ? "yes" : "no");
        rf_report_cell_str(r, p[i].pareto_ttft ? "yes" : "no");
        rf_report_cell_str(r, cap < 0 ? "?" : p[i].batch <= cap ? "yes" : "no");
        if (price > 0)
            rf_report_cell_num(r, rf_cost_per_mtok(price, 1, p[i].tokens_per_s));
        if (watts > 0)
            rf_report_cell_num(r, rf_energy_per_token_j(watts, 1, p[i].tokens_per_s));
        pred_cells(r, pr, i);
    }
}

/* The largest batch the KV pool admits at the requests' last position (a
 * replica's on a layout po), or -1 when the hardware gives no memory size
 * (or the count fails). */
static int64_t kv_limit(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                        const cli_budget *b, const rf_par_opts *po, int64_t positions)
{
    rf_capacity c;
    rf_par_capacity pc;
    rf_err e;
    if (!ctx->hw.mem_bytes)
        return -1;
    if (po)
        return rf_par_capacity_compute(m, o, po, positions, &pc, &e) ? -1
                                                                      : (int64_t)floor(pc.sequences);
    if (rf_capacity_compute(m, o, ctx->hw.mem_bytes, b->util, b->reserve_bytes, positions, &c,
                            &e) == RF_OK)
        return (int64_t)floor(c.sequences);
    return -1;
}

/* The points on a layout, and the weights crossing of a device of its
 * first stage. */
static rf_status layout_points(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                               const rf_par_opts *po, cli_frontier *fr, rf_err *err)
{
    static rf_par_sweep scratch; /* every stage's step: off the stack */
    rf_model shard;
    int64_t first = rf_layout_stage_layers(m->layers, po->layout.pp, 0);
    rf_status s = rf_frontier_par_compute(m, o, roof, po, fr->prompt, fr->output, &scratch,
                                          fr->points, (size_t)fr->n, err);
    if (s || (s = rf_layout_shard(m, &po->layout, 0, first, &shard, err)))
        return s;
    return rf_frontier_weights_cross(&shard, o, roof, fr->prompt, fr->output, &fr->cross, err);
}

/* Batches 1..n to draw: max_batch, else the KV limit, else `fallback`;
 * none is an error. */
static int batch_count(const cli_ctx *ctx, int64_t max_batch, int64_t fallback, int64_t cap,
                       int64_t positions, int64_t *n)
{
    *n = max_batch ? max_batch : cap > 0 ? cap : fallback;
    if (*n < 1)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        cap == 0 ? "no request of %lld positions fits the KV pool (see "
                                   "capacity); give --max-batch to draw it anyway"
                                 : "no memory size for the KV limit (%lld positions): give "
                                   "--max-batch or --mem",
                        (long long)positions);
    if (*n > (1 << 20))
        *n = 1 << 20;
    return RF_EXIT_OK;
}

int cli_frontier_build(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                       const rf_roof *roof, const cli_budget *b, const cli_par *par,
                       int64_t prompt, int64_t output, int64_t max_batch, int64_t fallback,
                       cli_frontier *fr)
{
    rf_err e;
    int64_t positions = prompt + output - 1;
    rf_par_opts po;
    bool layout = par && cli_par_wanted(par);
    int rc = layout ? cli_par_setup(ctx, m, b, par, &po) : RF_EXIT_OK;
    if (rc)
        return rc;
    *fr = (cli_frontier){.prompt = prompt, .output = output,
                         .cap = kv_limit(ctx, m, o, b, layout ? &po : NULL, positions)};
    if ((rc = batch_count(ctx, max_batch, fallback, fr->cap, positions, &fr->n)))
        return rc;
    if (!(fr->points = calloc((size_t)fr->n, sizeof *fr->points)))
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (layout ? layout_points(m, o, roof, &po, fr, &e)
               : rf_frontier_compute(m, o, roof, prompt, output, fr->points, (size_t)fr->n, &e) ||
                     rf_frontier_weights_cross(m, o, roof, prompt, output, &fr->cross, &e)) {
        cli_frontier_free(fr);
        return cli_fail_err(ctx, &e);
    }
    return RF_EXIT_OK;
}

void cli_frontier_free(cli_frontier *fr)
{
    free(fr->points);
    fr->points = NULL;
}

void cli_frontier_summary(rf_report *r, const char *key, const char *label,
                          const cli_frontier *fr)
{
    rf_report_section(r, key, label);
    rf_report_int(r, "batches", "batch sizes", (uint64_t)fr->n, RF_U_INT);
    if (fr->cap >= 0)
        rf_report_int(r, "kv_limit_batch", "largest batch the KV pool admits", (uint64_t)fr->cap,
                      RF_U_INT);
    else
        rf_report_null(r, "kv_limit_batch", "largest batch the KV pool admits",
                       "- (no memory size: give --mem)");
    rf_report_int(r, "weights_cross_batch", "batch where the KV read reaches the weights",
                  (uint64_t)fr->cross, RF_U_INT);
    uint64_t on_tpot = 0, on_ttft = 0;
    for (int64_t i = 0; i < fr->n; i++) {
        on_tpot += fr->points[i].pareto_tpot;
        on_ttft += fr->points[i].pareto_ttft;
    }
    rf_report_int(r, "front_tpot_points", "on the TPOT front", on_tpot, RF_U_INT);
    rf_report_int(r, "front_ttft_points", "on the TTFT front", on_ttft, RF_U_INT);
}

int cli_frontier_svg(const cli_ctx *ctx, const cli_frontier *fr, const char *title, rf_buf *out)
{
    rf_err e;
    int64_t n = fr->n;
    rf_frontier_marks mk = {title, fr->cap > 0 && fr->cap <= n ? fr->cap : 0,
                            fr->cross <= n ? fr->cross : 0};
    return rf_frontier_svg_write(fr->points, (size_t)n, &mk, out, &e) ? cli_fail_err(ctx, &e)
                                                                       : RF_EXIT_OK;
}

static void assume(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const args *a, int64_t cap)
{
    cli_assume_model(r, m, o, NULL);
    cli_assume_roof(ctx, r, o, roof);
    if (cli_par_wanted(&a->par)) {
        rf_par_opts po = cli_par_opts(ctx, &a->rq.budget, &a->par);
        cli_par_assume(r, &po.links, &po.layout);
        rf_report_assume(r, "each point: a static batch of B identical requests a replica run "
                            "to the end, as `generate --tp ...` counts it (each step the "
                            "layout's cycle), its tokens/s a device = D B N / latency / %lld "
                            "devices; the KV limit a replica's, the weights crossing a device's "
                            "of the first stage",
                         (long long)rf_layout_devices(&po.layout));
    } else
        rf_report_assume(r, "each point: a static batch of B identical requests run to the end, "
                            "as `generate` counts it (TTFT the prefill, TPOT the mean of the "
                            "decode floors summed exactly, tokens/s = B N / latency, one "
                            "device)");
    rf_report_assume(r, "Pareto front: no other batch has a latency at most this one's and a "
                        "throughput at least its own (one strictly); one front for TPOT, one "
                        "for TTFT");
    if (cap >= 0)
        rf_report_assume(r, "KV limit: %lld requests of %lld positions fit the pool (util x "
                            "memory - weights - reserve, as `capacity`)",
                         (long long)cap, (long long)(a->rq.prompt + a->rq.output - 1));
    if (a->price > 0)
        rf_report_assume(r, "cost: USD per million output tokens = %g USD an hour / (tokens/s "
                            "x 3600) x 1e6, one device",
                         a->price);
    if (ctx->hw.board_power_w > 0)
        rf_report_assume(r, "energy a token = board power %g W (the TDP, an upper bound) / "
                            "output tokens/s, joules",
                         ctx->hw.board_power_w);
}

/* --predict: every batch predicted (pr->points and pr->outside, n of
 * each, to free), both fronts marked on the predicted figures. */
static int predict(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const args *a, const cli_frontier *fr, predicted *pr)
{
    static rf_calib cal; /* ~40 KB: off the stack */
    rf_err e;
    int rc = cli_gpu_wanted() ? RF_EXIT_OK : cli_calib_load(ctx, &cal);
    if (rc)
        return rc;
    pr->points = calloc((size_t)fr->n, sizeof *pr->points);
    pr->outside = calloc((size_t)fr->n, sizeof *pr->outside);
    if (!pr->points || !pr->outside)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (cli_gpu_wanted()) /* on kernel tables (gpu_predict.c); outside stays 0 */
        return cli_gpu_frontier(ctx, m, o, roof, &a->rq.budget, &a->par, a->rq.prompt,
                                a->rq.output, pr->points, (size_t)fr->n);
    if (rf_calib_predict_frontier(&cal, m, o, roof, a->rq.prompt, a->rq.output, pr->points,
                                  pr->outside, (size_t)fr->n, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

/* The predicted part of the head: how the points are predicted, and the
 * points on each predicted front. */
static void pred_summary(rf_report *r, const predicted *pr, int64_t n)
{
    if (!pr->points)
        return;
    if (cli_gpu_wanted())
        cli_gpu_assume_loaded(r); /* the kernel tables' lines */
    else
        cli_pred_assume(r);
    rf_report_assume(r, "predicted points: each batch's generation as `generate --predict` sums "
                        "it (TTFT the prefill predicted, the decode steps predicted at every "
                        "context); the Pareto fronts marked a second time on the predicted "
                        "TPOT, TTFT and tokens/s ('pred front' columns); the 'front' columns "
                        "are the floors'");
    uint64_t on_tpot = 0, on_ttft = 0, outside = 0;
    for (int64_t i = 0; i < n; i++) {
        on_tpot += pr->points[i].pareto_tpot;
        on_ttft += pr->points[i].pareto_ttft;
        outside += pr->outside[i] > 0;
    }
    rf_report_int(r, "predicted_front_tpot_points", "on the predicted TPOT front", on_tpot,
                  RF_U_INT);
    rf_report_int(r, "predicted_front_ttft_points", "on the predicted TTFT front", on_ttft,
                  RF_U_INT);
    rf_report_int(r, "predicted_outside_points", "points with operators outside the calibration",
                  outside, RF_U_INT);
}

/* The curve under load (--load-svg, --svg, report's Figure 4). The
 * capacity X is the closed loop's throughput at the engine's default cap
 * of CLI_SIM_MAX_SEQS clients; the open loop runs at X k / 8,
 * k = 1 .. LOAD_POINTS (up to 1.5 X: the open loop sustains more than the
 * closed loop, whose clients start together), 500 requests each. */
#define LOAD_POINTS 12
int cli_load_curve(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const cli_budget *b, const cli_par *par, int64_t prompt,
                   int64_t output, const struct cli_sim *marks, const char *title, rf_buf *svg)
{
    static cli_sim_out out; /* results: off the stack */
    rf_load_point pts[LOAD_POINTS];
    char p[32], n[32];
    rf_err e;
    cli_sim s = *marks;
    snprintf(p, sizeof p, "%lld", (long long)prompt);
    snprintf(n, sizeof n, "%lld", (long long)output);
    s.prompt = p;
    s.output = n;
    s.concurrency = CLI_SIM_MAX_SEQS;
    s.requests = 4 * CLI_SIM_MAX_SEQS;
    int rc = cli_sim_run(ctx, m, o, roof, b, par, &s, &out);
    if (rc)
        return rc;
    double cap = out.res.requests_per_s, q = out.s.percentile, first_over = 0;
    s.concurrency = 0;
    s.requests = 500;
    for (int k = 0; k < LOAD_POINTS; k++) {
        s.rate = cap * (k + 1) / 8;
        if ((rc = cli_sim_run(ctx, m, o, roof, b, par, &s, &out)))
            return rc;
        pts[k] = (rf_load_point){s.rate, out.res.ttft_s.pq, out.res.tpot_s.pq,
                                 out.res.overloaded};
        if (out.res.overloaded && !first_over)
            first_over = s.rate;
    }
    rf_report_assume(r, "under load: the engine simulated as serve's defaults at prompt %lld, "
                        "output %lld; capacity = the closed loop's throughput at %d clients; the "
                        "open loop (Poisson, 500 requests, seed 1) at 0.125 .. 1.5 x that rate; "
                        "P%g of each",
                     (long long)prompt, (long long)output, CLI_SIM_MAX_SEQS, q);
    rf_report_section(r, "load", "under load");
    rf_report_num(r, "capacity_requests_per_s", "capacity (closed loop, requests/s)", cap,
                  RF_U_SIG3);
    if (first_over)
        rf_report_num(r, "first_overloaded_rate_per_s", "first overloaded rate", first_over,
                      RF_U_SIG3);
    else
        rf_report_null(r, "first_overloaded_rate_per_s", "first overloaded rate", "none");
    rf_report_table(r, "load_points", "under load, rate by rate");
    rf_report_col(r, "rate_per_s", "rate", RF_U_SIG3);
    rf_report_col(r, "ttft_s", "TTFT", RF_U_SECONDS);
    rf_report_col(r, "tpot_s", "TPOT", RF_U_SECONDS);
    rf_report_col(r, "overloaded", "overloaded", RF_U_NONE);
    for (int k = 0; k < LOAD_POINTS; k++) {
        rf_report_row(r);
        rf_report_cell_num(r, pts[k].rate_per_s);
        rf_report_cell_num(r, pts[k].ttft_s);
        rf_report_cell_num(r, pts[k].tpot_s);
        rf_report_cell_str(r, pts[k].overloaded ? "yes" : "no");
    }
    rf_load_marks mk = {title, q, marks->slo_ttft, marks->slo_tpot, cap};
    return rf_load_svg_write(pts, LOAD_POINTS, &mk, svg, &e) ? cli_fail_err(ctx, &e)
                                                              : RF_EXIT_OK;
}

/* --svg and --load-svg: the figures. --svg holds the frontier and, below
 * it, the curve under load; --load-svg the curve alone. */
static int figures(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const args *a, const cli_frontier *fr,
                   const char *title)
{
    rf_buf front, load, both;
    rf_buf_init(&front);
    rf_buf_init(&load);
    rf_buf_init(&both);
    rf_err e;
    int rc = cli_load_curve(ctx, r, m, o, roof, &a->rq.budget, &a->par, a->rq.prompt,
                            a->rq.output, &a->sim, title, &load);
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
                  const args *a, const cli_frontier *fr, const predicted *pr)
{
    char title[256];
    snprintf(title, sizeof title, "frontier: %s on %s, prompt %lld, output %lld", m->name,
             ctx->hw.name, (long long)a->rq.prompt, (long long)a->rq.output);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    assume(ctx, r, m, o, roof, a, fr->cap);
    cli_frontier_summary(r, NULL, "frontier", fr);
    pred_summary(r, pr, fr->n);
    table(r, fr->points, (size_t)fr->n, fr->cap, a->price, ctx->hw.board_power_w,
          cli_par_wanted(&a->par), pr);
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
    cli_gpu_reset(); /* nothing of an earlier run (rf_cli_run) */
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "frontier MODEL --prompt P --output-tokens N [--max-batch B] [--svg "
                            "FILE] [--price-per-hour USD] [--load-svg FILE [--slo-ttft X] "
                            "[--slo-tpot Y]] [options]",
                            (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_request_check(&ctx, &a.rq)) ||
        (rc = cli_predict_refuse(&ctx, cli_par_wanted(&a.par) && !cli_gpu_wanted(), "layouts")))
        return rc;
    const char *inputs[] = {NULL};
    const char *const out_names[] = {"-o", "--svg", "--load-svg"}; /* issue 28, findings 7-8 */
    const char *const out_paths[] = {ctx.out_path, a.svg, a.load_svg};
    if ((rc = cli_outputs_distinct(&ctx, 3, out_names, out_paths)) ||
        (rc = cli_check_output(&ctx, a.svg, inputs)) ||
        (rc = cli_check_output(&ctx, a.load_svg, inputs)))
        return rc;
    if (!a.load_svg && !a.svg && (a.sim.slo_ttft || a.sim.slo_tpot || a.sim.percentile))
        return cli_fail(&ctx, RF_EXIT_USAGE, "--slo-ttft, --slo-tpot and --percentile mark the "
                                             "curve under load: give --svg or --load-svg FILE");
    rf_step_opts o = a.rq.o;
    rf_model m;
    rf_roof roof;
    cli_frontier fr;
    predicted pr = {NULL, NULL};
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)) ||
        (rc = cli_frontier_build(&ctx, &m, &o, &roof, &a.rq.budget, &a.par, a.rq.prompt,
                                 a.rq.output, a.max_batch, 0, &fr)))
        return rc;
    if (!(ctx.step_given & CLI_GIVEN_PREDICT) ||
        !(rc = predict(&ctx, &m, &o, &roof, &a, &fr, &pr)))
        rc = report(&ctx, &m, &o, &roof, &a, &fr, &pr);
    free(pr.points);
    free(pr.outside);
    cli_frontier_free(&fr);
    return rc;
}
