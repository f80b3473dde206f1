/* gpu_sim.c - the commands' predictions on a GPU's kernel tables
 * (gpu_sim.h): serve under load, generate, frontier and one step. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_predict.h"
#include "gpu_sim.h"
#include "opts.h"
#include "roofline/rf_gpu_io.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"

/* ---- serve under load ------------------------------------------------------ */

/* The tables and a prepared rf_gpu_sim for steps of at most max_tokens
 * tokens and max_logits logit rows on par's layout (one device without
 * one): *gs and *table to free, also on failure. */
static int prepare(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                   const cli_budget *b, const cli_par *par, int64_t max_tokens, int64_t max_logits,
                   rf_gpu_sim **gs, double **table)
{
    const rf_gpu_tables *g;
    rf_err e;
    rf_par_opts po;
    *gs = NULL, *table = NULL;
    int rc = cli_gpu_load(ctx, &g);
    if (rc)
        return rc;
    if (cli_par_wanted(par)) {
        if ((rc = cli_par_setup(ctx, m, b, par, &po)))
            return rc;
    } else {
        po = cli_par_opts(ctx, b, par);
        po.layout = rf_layout_single();
    }
    if (max_tokens > RF_DIM_MAX / po.layout.pp)
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict: %lld tokens a step on %lld stages",
                        (long long)max_tokens, (long long)po.layout.pp);
    size_t len = rf_gpu_sim_table_len(po.layout.pp, max_tokens, max_logits);
    *gs = calloc(1, sizeof **gs);
    *table = malloc(len * sizeof **table);
    if (!*gs || !*table)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (rf_gpu_sim_prepare(*gs, g, cli_gpu_quant(ctx), m, o, roof, &po, max_tokens, max_logits,
                           *table, len, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

static double band_of(const rf_gpu_sim *gs) { return gs->time_s > 0 ? gs->band_s / gs->time_s : 0; }

/* A closed loop's TTFT (rf_closed_loop.h): t1, the simulated TTFT of one
 * client a replica alone (the same engine, tables and lengths, 8 requests a
 * client), then the --backend's factor at the run's clients a replica
 * (rf_closed_loop_apply). found is false where the file holds none (tables
 * of your own without --backend, an engine it does not hold), and an open
 * loop or a trace gets neither: the simulation's TTFT stands there. */
typedef struct closed_ttft {
    double t1, c;
    bool varied; /* a length drawn from a distribution, not fixed */
    bool found;
    rf_closed_loop law;
    rf_closed_loop_ttft ttft;
} closed_ttft;

static int closed_loop(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                       const cli_budget *b, const cli_par *par, const cli_sim *sp,
                       const cli_sim_out *out, closed_ttft *q)
{
    const rf_sim_result *res = &out->res;
    q->ttft = rf_closed_loop_apply(NULL, 0, 0, res->ttft_s.mean, res->ttft_s.p90);
    if (out->w.arrival != RF_SIM_CLOSED)
        return RF_EXIT_OK;
    int64_t dp = par->layout.dp > 1 ? par->layout.dp : 1;
    cli_sim lone = *sp;
    lone.concurrency = dp, lone.requests = 8 * dp;
    cli_sim_out *one = calloc(1, sizeof *one);
    if (!one)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    int rc = cli_sim_run(ctx, m, o, roof, b, par, &lone, one);
    q->t1 = one->res.ttft_s.mean;
    free(one);
    q->c = (double)sp->concurrency / (double)dp;
    q->varied = out->w.prompt.dist != RF_SIM_FIXED || out->w.output.dist != RF_SIM_FIXED;
    const char *engine = ctx->run.gpu.backend;
    if (rc || !engine)
        return rc;
    char path[600];
    rf_err e;
    snprintf(path, sizeof path, "%s/closed_loop_ttft.json", cli_gpu_data_dir());
    if (rf_closed_loop_load(path, engine, q->varied, &q->law, &q->found, &e))
        return cli_fail_err(ctx, &e);
    if (q->found)
        q->ttft = rf_closed_loop_apply(&q->law, q->c, q->t1, res->ttft_s.mean, res->ttft_s.p90);
    return RF_EXIT_OK;
}

static void closed_loop_assume(const cli_ctx *ctx, rf_report *r, const cli_sim_out *out,
                               const closed_ttft *q)
{
    if (out->w.arrival != RF_SIM_CLOSED)
        return;
    if (!q->found) {
        rf_report_assume(r,
                         "predicted TTFT: the simulation's; no closed-loop factor for %s in "
                         "closed_loop_ttft.json (docs/gpu-predict.md)",
                         ctx->run.gpu.backend ? ctx->run.gpu.backend : "tables of your own");
        return;
    }
    if (!q->ttft.applied) {
        rf_report_assume(r,
                         "predicted TTFT: the simulation's; %.4g clients a replica is outside "
                         "the concurrencies %s's closed-loop factor was fitted at (%g to %g)",
                         q->c, ctx->run.gpu.backend, q->law.c_min, q->law.c_max);
        return;
    }
    rf_report_assume(r,
                     "predicted TTFT of a closed loop: f = %.3g x t1, the TTFT of one client a "
                     "replica alone (%.3g ms, simulated with 8 requests a client), its p90 the "
                     "simulation's scaled alike; f is %s's factor at %.4g clients a replica, %s "
                     "lengths (fitted on %lld runs: %s; each model predicted from the others: "
                     "median error %.1f%%, p90 %.1f%%); the simulation's TTFT is %.3g ms",
                     q->ttft.f, q->t1 * 1e3, ctx->run.gpu.backend, q->c,
                     q->varied ? "varied" : "fixed", (long long)q->law.runs, q->law.source,
                     100 * q->law.held_out_median, 100 * q->law.held_out_p90,
                     out->res.ttft_s.mean * 1e3);
}

int cli_gpu_serve_load(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                       const cli_budget *b, const cli_par *par, const cli_sim *s, rf_report *r)
{
    if (s->draft || s->disagg)
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict under load: not with %s",
                        s->draft ? "--draft" : "--disagg");
    rf_gpu_sim *gs = NULL;
    double *table = NULL;
    cli_sim_out *out = calloc(1, sizeof *out); /* results: off the stack */
    cli_sim sp = *s;
    closed_ttft q = {0};
    int rc =
        out ? prepare(ctx, m, o, roof, b, par, s->max_tokens ? s->max_tokens : CLI_SIM_MAX_TOKENS,
                      s->max_seqs ? s->max_seqs : CLI_SIM_MAX_SEQS, &gs, &table)
            : cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (!rc) {
        sp.predict = rf_gpu_sim_group;
        sp.predict_user = gs;
        rc = cli_sim_run(ctx, m, o, roof, b, par, &sp, out);
    }
    if (!rc)
        rc = closed_loop(ctx, m, o, roof, b, par, &sp, out, &q);
    if (!rc) {
        cli_gpu_assume(ctx, r, gs->g, gs->missing);
        rf_report_assume(r, "predicted under load: the same simulation with each step's time "
                            "predicted (rf_gpu_sim: the linear layers, MoE and collectives of a "
                            "device at the step's M rows, lm_head at its logit rows, decode "
                            "attention at the decode tokens' mean context, each chunk's "
                            "attention after its prefix), in place of the floor");
        closed_loop_assume(ctx, r, out, &q);
        const rf_sim_result *res = &out->res;
        rf_report_section(r, "predicted",
                          "PREDICTED under load (kernel tables; the floors "
                          "above are bounds)");
        rf_report_num(r, "ttft_s", "predicted TTFT mean", q.ttft.mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_s", "predicted TPOT mean", res->tpot_s.mean, RF_U_SECONDS);
        rf_report_num(r, "ttft_p90_s", "predicted TTFT p90", q.ttft.p90_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_p90_s", "predicted TPOT p90", res->tpot_s.p90, RF_U_SECONDS);
        rf_report_num(r, "tokens_per_s", "predicted output tokens/s", /* as --steady-state's */
                      res->output_tokens_per_s, RF_U_TOK_RATE);
        rf_report_num(r, "band", "error band (tables' leave-one-out median, time-weighted)",
                      band_of(gs), RF_U_PERCENT);
        if (q.t1 > 0) {
            rf_report_str(r, "ttft_how", "TTFT from",
                          q.ttft.applied ? "closed-loop factor x lone TTFT" : "simulation");
            rf_report_num(r, "ttft_simulated_s", "TTFT mean, simulated", res->ttft_s.mean,
                          RF_U_SECONDS);
            rf_report_num(r, "ttft_lone_s", "TTFT of one client a replica alone (t1)", q.t1,
                          RF_U_SECONDS);
            rf_report_num(r, "clients_per_replica", "clients a replica", q.c, RF_U_SIG3);
        }
        if (q.ttft.applied) {
            rf_report_num(r, "ttft_factor", "closed-loop factor f (TTFT / t1)", q.ttft.f,
                          RF_U_SIG3);
            rf_report_num(r, "ttft_band", "TTFT error band (f's held-out median)",
                          q.law.held_out_median, RF_U_PERCENT);
        }
        rf_report_str(r, "source", "tables", cli_gpu_label(ctx));
        rc = cli_gpu_serving_error(ctx, r, s->concurrency);
    }
    free(out);
    free(table);
    free(gs);
    return rc;
}

int cli_gpu_generate(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const cli_budget *b, const cli_par *par, int64_t prompt,
                     int64_t output, int64_t shared_prefix)
{
    if (shared_prefix)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--predict on kernel tables: not with "
                        "--shared-prefix");
    if (o->batch > RF_DIM_MAX / prompt)
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict: a prefill of %lld x %lld tokens",
                        (long long)o->batch, (long long)prompt);
    rf_gpu_sim *gs;
    double *table;
    rf_gpu_generate p;
    rf_err e;
    int rc = prepare(ctx, m, o, roof, b, par, o->batch * prompt, o->batch, &gs, &table);
    if (!rc && rf_gpu_sim_generate(gs, o->batch, prompt, output, &p, &e))
        rc = cli_fail_err(ctx, &e);
    if (!rc) {
        cli_gpu_assume(ctx, r, gs->g, gs->missing);
        rf_report_assume(r,
                         "predicted generation: the prefill of %lld x %lld tokens and each "
                         "decode step at every context P + 1 .. P + N - 1, predicted as a "
                         "serving step is (rf_gpu_sim_generate)",
                         (long long)o->batch, (long long)prompt);
        rf_report_section(r, "predicted",
                          "PREDICTED (kernel tables; the floors above are "
                          "bounds)");
        rf_report_num(r, "ttft_s", "predicted TTFT", p.ttft_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_mean_s", "predicted TPOT mean", p.tpot_mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_first_s", "predicted TPOT first (j = 2)", p.tpot_first_s,
                      RF_U_SECONDS);
        rf_report_num(r, "tpot_last_s", "predicted TPOT last (j = N)", p.tpot_last_s, RF_U_SECONDS);
        rf_report_num(r, "decode_s", "predicted decode time", p.decode_s, RF_U_SECONDS);
        rf_report_num(r, "latency_s", "predicted latency", p.latency_s, RF_U_SECONDS);
        rf_report_num(r, "tokens_per_s", "predicted output tokens/s", p.tokens_per_s,
                      RF_U_TOK_RATE);
        rf_report_num(r, "band", "error band (tables' leave-one-out median, time-weighted)",
                      band_of(gs), RF_U_PERCENT);
        rf_report_str(r, "source", "tables", cli_gpu_label(ctx));
    }
    free(table);
    free(gs);
    return rc;
}

int cli_gpu_frontier(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                     const cli_budget *b, const cli_par *par, int64_t prompt, int64_t output,
                     rf_frontier_point *points, size_t n)
{
    if ((int64_t)n > RF_DIM_MAX / prompt)
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict: a prefill of %zu x %lld tokens", n,
                        (long long)prompt);
    rf_gpu_sim *gs;
    double *table;
    rf_err e;
    int rc = prepare(ctx, m, o, roof, b, par, (int64_t)n * prompt, (int64_t)n, &gs, &table);
    if (!rc && rf_gpu_sim_frontier(gs, prompt, output, points, n, &e))
        rc = cli_fail_err(ctx, &e);
    if (!rc) {
        ctx->run.gpu.missing = gs->missing;
        cli_gpu_warn(ctx, gs->g, gs->missing);
    }
    free(table);
    free(gs);
    return rc;
}

/* ---- one step ---------------------------------------------------------------- */

int cli_gpu_step(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_model *shard,
                 const rf_layout *l, const rf_step_opts *o, const rf_step *st, const rf_coll *coll,
                 size_t n_coll)
{
    const rf_gpu_tables *g;
    rf_err e;
    int rc = cli_gpu_load(ctx, &g);
    if (rc)
        return rc;
    rf_gpu_step_pred *pp = malloc(sizeof *pp); /* large: off the stack */
    rf_gpu_ctx c = {
        .g = g, .shard = shard, .model = m, .layout = *l, .opts = o, .quant = cli_gpu_quant(ctx)};
    if (!pp)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (rf_gpu_predict_step(&c, st, coll, n_coll, pp, &e)) {
        free(pp);
        return cli_fail_err(ctx, &e);
    }
    const rf_gpu_step_pred *p = pp;
    cli_gpu_assume(ctx, r, g, p->missing);
    rf_report_table(r, "predicted_ops",
                    "predicted operators (summed over 'count'; t = r x "
                    "floor of the table's kind)");
    rf_report_col(r, "operator", "operator", RF_U_NONE);
    rf_report_col(r, "count", "count", RF_U_INT);
    rf_report_col(r, "predicted_s", "predicted", RF_U_SECONDS);
    rf_report_col(r, "ratio", "r", RF_U_SIG3);
    rf_report_col(r, "how", "provenance", RF_U_NONE);
    rf_report_col(r, "band", "band", RF_U_PERCENT);
    rf_report_col(r, "table", "table", RF_U_NONE);
    for (size_t i = 0; i < st->n_ops + n_coll; i++) {
        bool is_op = i < st->n_ops;
        const rf_gpu_pred *q = is_op ? &p->op[i] : &p->coll[i - st->n_ops];
        uint64_t count = is_op ? st->ops[i].count : coll[i - st->n_ops].count;
        rf_report_row(r);
        rf_report_cell_str(r, is_op ? st->ops[i].name : coll[i - st->n_ops].name);
        rf_report_cell_int(r, count);
        rf_report_cell_num(r, (double)count * q->time_s);
        rf_report_cell_num(r, q->ratio);
        rf_report_cell_str(r, rf_gpu_how_name(q->how));
        rf_report_cell_num(r, q->band);
        rf_report_cell_str(r, q->table ? rf_gpu_kind_file(q->table->kind) : "-");
    }
    rf_report_section(r, "predicted", "PREDICTED (kernel tables; the floors above are bounds)");
    rf_report_num(r, "time_s", "predicted step", p->time_s, RF_U_SECONDS);
    rf_report_num(r, "ops_s", "  operators", p->ops_s, RF_U_SECONDS);
    rf_report_num(r, "collectives_s", "  collectives", p->coll_s, RF_U_SECONDS);
    rf_report_num(r, "band", "error band (leave-one-out median, time-weighted)", p->band,
                  RF_U_PERCENT);
    double tokens = (double)o->batch * (double)(o->phase == RF_PREFILL ? o->tokens : 1);
    rf_report_num(r, "tokens_per_s", "predicted tokens/s (a replica)", tokens / p->time_s,
                  RF_U_TOK_RATE);
    rf_report_int(r, "in_range", "rows in range", p->n_how[RF_GPU_IN_RANGE], RF_U_INT);
    rf_report_int(r, "interpolated", "rows interpolated", p->n_how[RF_GPU_INTERPOLATED], RF_U_INT);
    rf_report_int(r, "extrapolated", "rows extrapolated", p->n_how[RF_GPU_EXTRAPOLATED], RF_U_INT);
    rf_report_int(r, "on_floor", "rows on their floor (no table)", p->n_how[RF_GPU_NO_TABLE],
                  RF_U_INT);
    free(pp);
    return RF_EXIT_OK;
}
