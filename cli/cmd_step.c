/* cmd_step.c - `roofline step MODEL`: every operator of one step, then the
 * totals (floors, tokens/s, sum-of-max, blended limit, throughput cap). */
#include <stdio.h>

#include "cli.h"

static const cli_opt opts[] = {CLI_STEP_OPTS, CLI_PREDICT_OPT, CLI_BUDGET_OPTS, CLI_PAR_OPTS,
                               {0}};

typedef struct args {
    rf_step_opts o;
    cli_budget budget; /* for the memory fit */
    cli_par par;       /* many devices */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    int rc = cli_budget_opt(ctx, id, arg, &a->budget);
    if (rc == CLI_NOT_MINE)
        rc = cli_par_opt(ctx, id, arg, &a->par);
    return rc == CLI_NOT_MINE ? cli_step_opt(ctx, id, arg, &a->o) : rc;
}

/* Operator rows: per step, summed over the layers an operator runs in
 * (shared with `report`). */
void cli_op_table(rf_report *r, const char *key, const char *label, const rf_step *st)
{
    cli_op_table_pred(r, key, label, st, NULL);
}

void cli_op_table_pred(rf_report *r, const char *key, const char *label, const rf_step *st,
                       const struct rf_step_pred *pr)
{

    rf_report_table(r, key, label);
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "count", "count", RF_U_INT);
    rf_report_col(r, "m", "M", RF_U_INT);
    cli_expert_cols(r, st->experts_touched > 0);
    rf_report_col(r, "k", "K", RF_U_INT);
    rf_report_col(r, "n", "N", RF_U_INT);
    rf_report_col(r, "flops", "FLOPs", RF_U_FLOPS);
    rf_report_col(r, "bytes", "bytes", RF_U_BYTES);
    rf_report_col(r, "intensity", "FLOP/B", RF_U_INTENSITY);
    rf_report_col(r, "regime", "regime", RF_U_NONE);
    rf_report_col(r, "floor_s", "floor", RF_U_SECONDS);
    rf_report_col(r, "bound_by", "bound by", RF_U_NONE);
    cli_pred_cols(r, pr); /* --predict: predicted_s and calibrated */
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        rf_point p = rf_roof_place(&st->roof, (double)op->flops, (double)op->bytes);
        rf_report_row(r);
        rf_report_cell_str(r, op->name);
        rf_report_cell_int(r, op->count);
        rf_report_cell_int(r, (uint64_t)op->m);
        cli_expert_cells(r, op, st->experts_touched > 0);
        rf_report_cell_int(r, (uint64_t)op->k);
        rf_report_cell_int(r, (uint64_t)op->n);
        rf_report_cell_int(r, op->count * op->flops); /* checked in rf_step_compute */
        rf_report_cell_int(r, op->count * op->bytes);
        rf_report_cell_num(r, p.intensity);
        rf_report_cell_str(r, rf_regime_name(p.regime));
        rf_report_cell_num(r, (double)op->count * p.floor_s);
        rf_report_cell_str(r, p.regime == RF_COMPUTE_BOUND ? "compute" : "memory");
        cli_pred_cells(r, pr, st, i);
    }
}

static void totals(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step *st,
                   const rf_step_opts *o, const cli_budget *b)
{
    rf_fit fit;
    rf_report_section(r, NULL, "step totals");
    if (cli_fit(ctx, r, m, o, b, &fit) == RF_OK)
        cli_assume_fit(r, &fit, ctx);
    cli_context_check(ctx, r, m, rf_step_positions(o), CLI_CTX_LINES | CLI_CTX_KEY);
    rf_report_int(r, "weight_bytes", "weights streamed", st->weight_bytes, RF_U_BYTES);
    rf_report_int(r, "kv_bytes", "KV read", st->kv_bytes, RF_U_BYTES);
    rf_report_int(r, "kv_bytes_per_token", "KV a token (all layers)", st->kv_bytes_per_token,
                  RF_U_INT);
    if (st->extra_bytes)
        rf_report_int(r, "score_bytes", "attention scores (naive)", st->extra_bytes, RF_U_BYTES);
    rf_report_int(r, "total_bytes", "step bytes", st->total_bytes, RF_U_BYTES);
    rf_report_int(r, "flops", "FLOPs", st->flops, RF_U_FLOPS);
    rf_report_int(r, "op_bytes", "bytes over all operators", st->op_bytes, RF_U_BYTES);
    rf_report_num(r, "intensity", "byte-weighted intensity", st->intensity, RF_U_INTENSITY);
    rf_report_num(r, "ridge", "ridge", st->roof.ridge, RF_U_INTENSITY);
    rf_report_str(r, "regime", "regime", rf_regime_name(st->regime));
    rf_report_num(r, "floor_s", "step floor", st->floor_s, RF_U_SECONDS);
    rf_report_num(r, "floor_sum_of_max_s", "sum-of-max floor", st->floor_sum_of_max_s,
                  RF_U_SECONDS);
    rf_report_num(r, "floor_aggregate_s", "aggregate floor", st->floor_aggregate_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "tokens/s ceiling", st->tokens_per_s, RF_U_TOK_RATE);
    if (o->phase == RF_DECODE && st->kv_bytes) {
        rf_report_num(r, "blended_intensity_limit", "blended intensity as B grows",
                      st->blended_intensity_limit, RF_U_INTENSITY);
        rf_report_num(r, "throughput_cap_tokens_per_s", "throughput cap at this context",
                      st->throughput_cap_tokens_per_s, RF_U_TOK_RATE);
    } else { /* both are decode figures: B sequences reading their KV */
        const char *why = o->phase == RF_PREFILL ? "- (decode only)" : "- (no KV read)";
        rf_report_null(r, "blended_intensity_limit", "blended intensity as B grows", why);
        rf_report_null(r, "throughput_cap_tokens_per_s", "throughput cap at this context", why);
    }
    if (st->experts_touched > 0) {
        rf_report_num(r, "experts_touched", "routed experts touched a MoE layer",
                      st->experts_touched, RF_U_SIG3);
        rf_report_num(r, "tokens_per_expert", "tokens a touched expert", st->tokens_per_expert,
                      RF_U_SIG3);
    }
}

/* The step of a layout: a device's operators (those of the slowest stage),
 * then the layout's section. */
static int step_layout(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                       const rf_roof *roof, const args *a)
{
    static rf_par par; /* every stage's step: off the stack */
    static rf_step dev;
    rf_err e;
    int rc = cli_par_check(ctx, m, &a->par);
    if (rc)
        return rc;
    if (cli_par_compute(ctx, m, o, roof, &a->budget, &a->par, &par, &e))
        return cli_fail_err(ctx, &e);
    const rf_par_stage *w = &par.stages[par.slowest];
    dev = w->step;
    dev.n_ops = 0;
    for (size_t i = 0; i < w->step.n_ops; i++)
        if (rf_par_stage_holds(&par, par.slowest, &w->step.ops[i]))
            dev.ops[dev.n_ops++] = w->step.ops[i];
    char title[256], label[128];
    snprintf(title, sizeof title, "%s step: %s on %lld x %s", o->phase == RF_DECODE ? "decode"
             : "prefill", m->name, (long long)par.devices, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_step(ctx, r, &w->shard, o, &dev);
    snprintf(label, sizeof label, "operators of a device of stage %zu (the slowest; summed "
             "over 'count')", par.slowest);
    cli_op_table(r, "ops", label, &dev);
    cli_par_section(ctx, r, &par, &a->par);
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_step(int argc, char **argv)
{
    cli_ctx ctx;
    args a = {rf_step_opts_default(), CLI_BUDGET_DEFAULT, CLI_PAR_DEFAULT};
    rf_step_opts o;
    int pos, rc = cli_parse(&ctx, argc, argv,
                            "step MODEL [--phase decode|prefill] [--batch B] [--context S] "
                            "[--tokens T] [options]",
                            opts, on_opt, &a, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    o = a.o;
    rf_model m;
    rf_roof roof;
    rf_err e;
    static rf_step st; /* ~10 KB: keep it off the stack */
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)))
        return rc;
    if ((rc = cli_predict_refuse(&ctx, cli_par_wanted(&a.par), "layouts")))
        return rc;
    if (rf_step_compute(&m, &o, &roof, &st, &e))
        return cli_step_fail(&ctx, &m, &o, &roof, &e, NULL);
    if (cli_par_wanted(&a.par))
        return step_layout(&ctx, &m, &o, &roof, &a);

    char title[256];
    snprintf(title, sizeof title, "%s step: %s on %s", o.phase == RF_DECODE ? "decode" : "prefill",
             m.name, ctx.hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    const struct rf_step_pred *pr = NULL; /* --predict */
    if ((rc = cli_step_predict(&ctx, &o, &st, &pr))) {
        rf_report_free(r);
        return rc;
    }
    cli_assume_step(&ctx, r, &m, &o, &st);
    cli_op_table_pred(r, "ops", "operators (figures summed over the layers in 'count')", &st, pr);
    totals(&ctx, r, &m, &st, &o, &a.budget);
    cli_pred_totals(r, pr, "predicted");
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
