/* frontier.c - the latency-throughput frontier that `frontier` and
 * `report` draw (request.h): static batches 1..n on one device or a
 * layout, the KV limit, the weights crossing, the figure, and the curve
 * under load (the simulation at twelve rates). Their views are in
 * src/view/frontier.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "opts.h"
#include "request.h"
#include "roofline/rf_frontier_svg.h"
#include "roofline/rf_load_svg.h"
#include "roofline/rf_view.h"
#include "sim.h"

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
    rf_par_sweep *scratch = malloc(sizeof *scratch); /* every stage's step */
    rf_model shard;
    int64_t first = rf_layout_stage_layers(m->layers, po->layout.pp, 0);
    rf_status s = scratch ? rf_frontier_par_compute(m, o, roof, po, fr->prompt, fr->output, scratch,
                                                    fr->points, (size_t)fr->n, err)
                          : rf_err_set(err, RF_ENOMEM, "out of memory");
    free(scratch);
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
                       const rf_roof *roof, const cli_budget *b, const cli_par *par, int64_t prompt,
                       int64_t output, int64_t max_batch, int64_t fallback, cli_frontier *fr)
{
    rf_err e;
    int64_t positions = prompt + output - 1;
    rf_par_opts po;
    bool layout = par && cli_par_wanted(par);
    int rc = layout ? cli_par_setup(ctx, m, b, par, &po) : RF_EXIT_OK;
    if (rc)
        return rc;
    *fr = (cli_frontier){.prompt = prompt,
                         .output = output,
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

void cli_frontier_summary(rf_report *r, const char *key, const char *label, const cli_frontier *fr)
{
    rf_view_frontier_summary(r, key, label, fr->points, fr->n, fr->cap, fr->cross);
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
    cli_sim_out *out = calloc(1, sizeof *out); /* results: off the stack */
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
    double cap = 0, q = 0, first_over = 0;
    int rc = out ? cli_sim_run(ctx, m, o, roof, b, par, &s, out)
                 : cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (rc)
        goto done;
    cap = out->res.requests_per_s;
    q = out->s.percentile;
    s.concurrency = 0;
    s.requests = 500;
    for (int k = 0; k < LOAD_POINTS; k++) {
        s.rate = cap * (k + 1) / 8;
        if ((rc = cli_sim_run(ctx, m, o, roof, b, par, &s, out)))
            goto done;
        pts[k] =
            (rf_load_point){s.rate, out->res.ttft_s.pq, out->res.tpot_s.pq, out->res.overloaded};
        if (out->res.overloaded && !first_over)
            first_over = s.rate;
    }
    rf_view_load_curve(r, pts, LOAD_POINTS, prompt, output, CLI_SIM_MAX_SEQS, q, cap, first_over);
    rf_load_marks mk = {title, q, marks->slo_ttft, marks->slo_tpot, cap};
    if (rf_load_svg_write(pts, LOAD_POINTS, &mk, svg, &e))
        rc = cli_fail_err(ctx, &e);
done:
    free(out);
    return rc;
}
