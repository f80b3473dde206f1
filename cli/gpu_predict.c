/* gpu_predict.c - --predict on a GPU's kernel tables (gpu_predict.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_predict.h"
#include "roofline/rf_engine.h"
#include "roofline/rf_gpu_io.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"

#ifndef RF_GPU_DATA_SRC
#define RF_GPU_DATA_SRC ""
#endif
#ifndef RF_GPU_DATA_INSTALL
#define RF_GPU_DATA_INSTALL "/usr/local/share/roofline/gpu"
#endif

void cli_gpu_free(cli_ctx *ctx)
{
    cli_gpu_call *gpu = &ctx->run.gpu;
    rf_gpu_tables_free(&gpu->tables);
    memset(gpu, 0, sizeof *gpu);
}

int cli_gpu_opt(cli_ctx *ctx, int id, const char *arg)
{
    cli_gpu_call *gpu = &ctx->run.gpu;
    rf_err e;
    switch (id) {
    case CLI_O_BACKEND:
        if (rf_engine_known(arg)) /* step's on_opt takes it: cli_gpu_engine_opt */
            return cli_fail(ctx, RF_EXIT_USAGE, "--backend %s: an engine calibration predicts "
                                                "`step` and `generate` only (docs/llamacpp.md)",
                            arg);
        if (strcmp(arg, "vllm") && strcmp(arg, "trtllm") && strcmp(arg, "sglang"))
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--backend: unknown engine '%s' (vllm, trtllm, sglang, llamacpp)",
                            arg);
        gpu->backend = arg;
        return RF_EXIT_OK;
    case CLI_O_CALIBRATION:
        gpu->calibration = arg;
        return RF_EXIT_OK;
    case CLI_O_QUANT:
        if (rf_gpu_quant_of(arg, &gpu->quant, &e))
            return cli_fail_err(ctx, &e);
        if (ctx->w_given || ctx->a_given)
            return cli_fail(ctx, RF_EXIT_USAGE, "--quant %s sets the weight and activation "
                                                "dtypes: give it or --weight-dtype/--act-dtype",
                            arg);
        gpu->quant_given = true;
        ctx->w = gpu->quant.w, ctx->a = gpu->quant.a;
        ctx->w_given = ctx->a_given = true;
        return RF_EXIT_OK;
    }
    return CLI_NOT_MINE;
}

bool cli_gpu_wanted(const cli_ctx *ctx)
{
    const cli_gpu_call *gpu = &ctx->run.gpu;
    return !gpu->engine && (gpu->backend || gpu->calibration);
}

int cli_gpu_engine_opt(cli_ctx *ctx, const char *arg)
{
    ctx->run.gpu.engine = arg;
    return RF_EXIT_OK;
}

const char *cli_gpu_engine(const cli_ctx *ctx, const char **calibration)
{
    *calibration = ctx->run.gpu.calibration;
    return ctx->run.gpu.engine;
}

const char *cli_gpu_label(const cli_ctx *ctx)
{
    return ctx->run.gpu.label;
}

const rf_gpu_quant *cli_gpu_quant(const cli_ctx *ctx)
{
    const cli_gpu_call *gpu = &ctx->run.gpu;
    return gpu->quant_given ? &gpu->quant : NULL;
}

const char *cli_gpu_data_dir(void)
{
    const char *env = getenv("ROOFLINE_GPU_DATA");
    if (env && *env)
        return env;
    if (*RF_GPU_DATA_SRC && access(RF_GPU_DATA_SRC, F_OK) == 0)
        return RF_GPU_DATA_SRC;
    return RF_GPU_DATA_INSTALL;
}

int cli_gpu_load(cli_ctx *ctx, const rf_gpu_tables **out)
{
    cli_gpu_call *gpu = &ctx->run.gpu;
    char dir[512];
    rf_err e;
    *out = NULL;
    if (gpu->loaded) {
        *out = &gpu->tables;
        return RF_EXIT_OK;
    }
    if (gpu->calibration) {
        snprintf(dir, sizeof dir, "%s", gpu->calibration);
        snprintf(gpu->label, sizeof gpu->label, "%s", gpu->calibration);
    } else if (gpu->backend) {
        char name[sizeof ctx->hw.name];
        snprintf(name, sizeof name, "%s", ctx->hw.name);
        for (char *c = name; *c; c++)
            *c = *c == '-' ? '_' : *c;
        snprintf(dir, sizeof dir, "%s/%s/%s", cli_gpu_data_dir(), name, gpu->backend);
        snprintf(gpu->label, sizeof gpu->label, "preset %s/%s", name, gpu->backend);
        if (access(dir, F_OK) != 0)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--backend %s: no kernel tables for %s (%s not found; "
                            "--calibration DIR reads your own, ROOFLINE_GPU_DATA moves the "
                            "presets' folder)",
                            gpu->backend, ctx->hw.name, dir);
    } else {
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict on a GPU needs --backend "
                                            "vllm|trtllm|sglang or --calibration DIR");
    }
    if (rf_gpu_tables_load(dir, &ctx->hw, &gpu->tables, &e))
        return cli_fail_err(ctx, &e);
    gpu->loaded = true;
    *out = &gpu->tables;
    return RF_EXIT_OK;
}

/* The assumption lines of cli_gpu_assume. */
static void assume_lines(const cli_gpu_call *gpu, rf_report *r, const rf_gpu_tables *g,
                         unsigned missing)
{
    rf_report_assume(r, "predicted on kernel tables: %s (aiconfigurator's format; the presets "
                        "derived from ai-dynamo/aiconfigurator 095f58a5, Apache-2.0, "
                        "data/gpu/README.md)%s%s",
                     gpu->label, gpu->quant_given ? "; --quant " : "",
                     gpu->quant_given ? gpu->quant.name : "");
    rf_report_assume(r, "a predicted figure: t = r x floor, r = measured / floor of the table's "
                        "rows, ln r interpolated linearly in the log of each key; outside a "
                        "key's measured values the edge's r (at least 1) on the query's own "
                        "floor; provenance: in range, interpolated, extrapolated, floor (no "
                        "table)");
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++) {
        const rf_gpu_table *t = &g->t[k];
        if (t->present)
            rf_report_assume(r, "table %s: %zu rows, leave-one-out error median %.1f%%, p90 "
                                "%.1f%% (%zu points)",
                             rf_gpu_kind_file((rf_gpu_kind)k), t->n_rows, 100 * t->loo_median,
                             100 * t->loo_p90, t->loo_n);
    }
    for (int k = 0; k < RF_GPU_NEED_COUNT; k++)
        if (missing & (1u << k) && k < RF_GPU_KIND_COUNT)
            rf_report_assume(r, "NO TABLE: %s (%s) is needed but absent or has no rows of "
                                "these dtypes: predicted on its floor",
                             rf_gpu_need_name(k), rf_gpu_need_what(k));
        else if (missing & (1u << k))
            rf_report_assume(r, "NO TABLE: %s (%s): predicted on its floor",
                             rf_gpu_need_name(k), rf_gpu_need_what(k));
}

/* A warning on the command's error stream for each need in missing. */
static void warn_missing(const cli_ctx *ctx, const rf_gpu_tables *g, unsigned missing)
{
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++)
        if (missing & (1u << k))
            fprintf(ctx->io->err, "roofline %s: warning: no %s rows in %s/%s for this model's "
                            "dtypes: those operators are predicted on their floor\n",
                    ctx->cmd, rf_gpu_kind_name((rf_gpu_kind)k), g->dir,
                    rf_gpu_kind_file((rf_gpu_kind)k));
    for (int k = RF_GPU_KIND_COUNT; k < RF_GPU_NEED_COUNT; k++)
        if (missing & (1u << k))
            fprintf(ctx->io->err, "roofline %s: warning: no table for %s (%s): those operators "
                            "are predicted on their floor\n",
                    ctx->cmd, rf_gpu_need_name(k), rf_gpu_need_what(k));
}

void cli_gpu_assume(const cli_ctx *ctx, rf_report *r, const rf_gpu_tables *g, unsigned missing)
{
    assume_lines(&ctx->run.gpu, r, g, missing);
    warn_missing(ctx, g, missing);
}

/* ---- serve under load ------------------------------------------------------ */

/* The tables and a prepared rf_gpu_sim for steps of at most max_tokens
 * tokens and max_logits logit rows on par's layout (one device without
 * one): *gs and *table to free, also on failure. */
static int prepare(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const cli_budget *b, const cli_par *par,
                   int64_t max_tokens, int64_t max_logits, rf_gpu_sim **gs, double **table)
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

static double band_of(const rf_gpu_sim *gs)
{
    return gs->time_s > 0 ? gs->band_s / gs->time_s : 0;
}

int cli_gpu_serve_load(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                       const rf_roof *roof, const cli_budget *b, const cli_par *par,
                       const cli_sim *s, rf_report *r)
{
    if (s->draft || s->disagg)
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict under load: not with %s",
                        s->draft ? "--draft" : "--disagg");
    rf_gpu_sim *gs = NULL;
    double *table = NULL;
    cli_sim_out *out = calloc(1, sizeof *out); /* results: off the stack */
    cli_sim sp = *s;
    int rc = out ? prepare(ctx, m, o, roof, b, par,
                           s->max_tokens ? s->max_tokens : CLI_SIM_MAX_TOKENS,
                           s->max_seqs ? s->max_seqs : CLI_SIM_MAX_SEQS, &gs, &table)
                 : cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (!rc) {
        sp.predict = rf_gpu_sim_group;
        sp.predict_user = gs;
        rc = cli_sim_run(ctx, m, o, roof, b, par, &sp, out);
    }
    if (!rc) {
        cli_gpu_assume(ctx, r, gs->g, gs->missing);
        rf_report_assume(r, "predicted under load: the same simulation with each step's time "
                            "predicted (rf_gpu_sim: the linear layers, MoE and collectives of a "
                            "device at the step's M rows, lm_head at its logit rows, decode "
                            "attention at the decode tokens' mean context, each chunk's "
                            "attention after its prefix), in place of the floor");
        const rf_sim_result *res = &out->res;
        rf_report_section(r, "predicted", "PREDICTED under load (kernel tables; the floors "
                                          "above are bounds)");
        rf_report_num(r, "ttft_s", "predicted TTFT mean", res->ttft_s.mean, RF_U_SECONDS);
        rf_report_num(r, "tpot_s", "predicted TPOT mean", res->tpot_s.mean, RF_U_SECONDS);
        rf_report_num(r, "ttft_p90_s", "predicted TTFT p90", res->ttft_s.p90, RF_U_SECONDS);
        rf_report_num(r, "tpot_p90_s", "predicted TPOT p90", res->tpot_s.p90, RF_U_SECONDS);
        rf_report_num(r, "tokens_per_s", "predicted output tokens/s", /* as --steady-state's */
                      res->output_tokens_per_s, RF_U_TOK_RATE);
        rf_report_num(r, "band", "error band (tables' leave-one-out median, time-weighted)",
                      band_of(gs), RF_U_PERCENT);
        rf_report_str(r, "source", "tables", cli_gpu_label(ctx));
    }
    free(out);
    free(table);
    free(gs);
    return rc;
}

int cli_gpu_generate(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const cli_budget *b, const cli_par *par,
                     int64_t prompt, int64_t output, int64_t shared_prefix)
{
    if (shared_prefix)
        return cli_fail(ctx, RF_EXIT_USAGE, "--predict on kernel tables: not with "
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
        rf_report_assume(r, "predicted generation: the prefill of %lld x %lld tokens and each "
                            "decode step at every context P + 1 .. P + N - 1, predicted as a "
                            "serving step is (rf_gpu_sim_generate)",
                         (long long)o->batch, (long long)prompt);
        rf_report_section(r, "predicted", "PREDICTED (kernel tables; the floors above are "
                                          "bounds)");
        rf_report_num(r, "ttft_s", "predicted TTFT", p.ttft_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_mean_s", "predicted TPOT mean", p.tpot_mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_first_s", "predicted TPOT first (j = 2)", p.tpot_first_s,
                      RF_U_SECONDS);
        rf_report_num(r, "tpot_last_s", "predicted TPOT last (j = N)", p.tpot_last_s,
                      RF_U_SECONDS);
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

int cli_gpu_frontier(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const cli_budget *b, const cli_par *par,
                     int64_t prompt, int64_t output, rf_frontier_point *points, size_t n)
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
        warn_missing(ctx, gs->g, gs->missing);
    }
    free(table);
    free(gs);
    return rc;
}

void cli_gpu_assume_loaded(const cli_ctx *ctx, rf_report *r)
{
    const cli_gpu_call *gpu = &ctx->run.gpu;
    if (gpu->loaded)
        assume_lines(gpu, r, &gpu->tables, gpu->missing);
}

/* ---- one step ---------------------------------------------------------------- */

int cli_gpu_step(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_model *shard,
                 const rf_layout *l, const rf_step_opts *o, const rf_step *st,
                 const rf_coll *coll, size_t n_coll)
{
    const rf_gpu_tables *g;
    rf_err e;
    int rc = cli_gpu_load(ctx, &g);
    if (rc)
        return rc;
    rf_gpu_step_pred *pp = malloc(sizeof *pp); /* large: off the stack */
    rf_gpu_ctx c = {.g = g, .shard = shard, .model = m, .layout = *l, .opts = o,
                    .quant = cli_gpu_quant(ctx)};
    if (!pp)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (rf_gpu_predict_step(&c, st, coll, n_coll, pp, &e)) {
        free(pp);
        return cli_fail_err(ctx, &e);
    }
    const rf_gpu_step_pred *p = pp;
    cli_gpu_assume(ctx, r, g, p->missing);
    rf_report_table(r, "predicted_ops", "predicted operators (summed over 'count'; t = r x "
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
    rf_report_int(r, "interpolated", "rows interpolated", p->n_how[RF_GPU_INTERPOLATED],
                  RF_U_INT);
    rf_report_int(r, "extrapolated", "rows extrapolated", p->n_how[RF_GPU_EXTRAPOLATED],
                  RF_U_INT);
    rf_report_int(r, "on_floor", "rows on their floor (no table)", p->n_how[RF_GPU_NO_TABLE],
                  RF_U_INT);
    free(pp);
    return RF_EXIT_OK;
}
