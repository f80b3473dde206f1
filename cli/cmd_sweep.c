/* cmd_sweep.c - `roofline sweep MODEL --batch RANGE [--context RANGE]`:
 * one decode step per (batch, context) point, streamed (a million points
 * would not fit a report's cells; see rf_rows in rf_report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "roofline/rf_file.h"

enum { O_BATCHES = 1000, O_CONTEXTS };

static const cli_opt opts[] = {
    {"batch", 1, O_BATCHES, "RANGE", "batch sizes: 1..1024, 1..64:1 or 1,16,256 (required)"},
    {"context", 1, O_CONTEXTS, "RANGE",
     "contexts (default " CLI_STR(CLI_DEFAULT_CONTEXT) "; 0: weights only)"},
    {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"},
    CLI_CAUSAL_OPT,
    CLI_TRAFFIC_OPTS,
    {"moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"},
    CLI_BUDGET_OPTS,
    {0},
};

typedef struct args {
    const char *batch, *context;
    rf_step_opts o;
    cli_budget budget; /* for each point's memory fit */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (id == O_BATCHES)
        a->batch = arg;
    else if (id == O_CONTEXTS) {
        ctx->step_given |= CLI_GIVEN_CONTEXT;
        a->context = arg;
    }
    else {
        int rc = cli_budget_opt(ctx, id, arg, &a->budget);
        return rc == CLI_NOT_MINE ? cli_step_opt(ctx, id, arg, &a->o) : rc;
    }
    return RF_EXIT_OK;
}

static const rf_rowcol cols[] = {
    {"batch", "batch", RF_U_INT, 7},
    {"context", "context", RF_U_INT, 9},
    {"floor_s", "floor", RF_U_SECONDS, 9},
    {"tokens_per_s", "tokens/s", RF_U_TOK_RATE, 16},
    {"intensity", "FLOP/B", RF_U_INTENSITY, 9},
    {"regime", "regime", RF_U_NONE, 13},
    {"total_bytes", "step bytes", RF_U_BYTES, 10},
    {"kv_bytes", "KV bytes", RF_U_BYTES, 10},
    {"floor_sum_of_max_s", "sum-of-max", RF_U_SECONDS, 10},
    {"fits", "fits", RF_U_NONE, 5},
    {"memory_needed_bytes", "memory", RF_U_BYTES_BIN, 10},
};
#define N_COLS (sizeof cols / sizeof cols[0])

int cmd_sweep(int argc, char **argv)
{
    cli_ctx ctx;
    args a = {NULL, CLI_STR(CLI_DEFAULT_CONTEXT), rf_step_opts_default(), CLI_BUDGET_DEFAULT};
    int pos, rc = cli_parse(&ctx, argc, argv, "sweep MODEL --batch RANGE [--context RANGE]", opts,
                            on_opt, &a, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (!a.batch)
        return cli_fail(&ctx, RF_EXIT_USAGE, "--batch RANGE is required");
    int64_t *bs = NULL, *ss = NULL;
    size_t nb = 0, ns = 0;
    rf_model m;
    rf_roof roof;
    rf_err e;
    rf_report *head = NULL;
    rf_sweep *sw = NULL;
    cli_out o = {0}; /* opened once the sweep is known to run: rows stream through it */
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &a.o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &a.o, false)) ||
        (rc = cli_range(&ctx, "--batch", a.batch, RF_DIM_MAX, &bs, &nb)))
        goto out;
    if (!strcmp(a.context, "0")) { /* weights only: no KV */
        if (!(ss = calloc(1, sizeof *ss))) {
            rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
            goto out;
        }
        ns = 1;
    } else if ((rc = cli_range(&ctx, "--context", a.context, RF_DIM_MAX, &ss, &ns))) {
        goto out;
    }
    if (!(ctx.step_given & CLI_GIVEN_CONTEXT))
        ss[0] = cli_default_context(&ctx, &m); /* the one default point */
    char title[256];
    snprintf(title, sizeof title, "decode sweep: %s on %s, %zu x %zu %s", m.name, ctx.hw.name,
             nb, ns, cli_plural((int64_t)(nb * ns), "point", "points"));
    if (!(sw = malloc(sizeof *sw)) || !(head = rf_report_new(title))) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    /* FLOPs and bytes grow with B and s, so the corner (largest B, largest
     * s) is where a sweep would overflow first: try it before any row is
     * streamed, so that a refused sweep leaves nothing half-written. */
    int64_t b_max = bs[0], s_max = ss[0];
    for (size_t i = 1; i < nb; i++)
        b_max = bs[i] > b_max ? bs[i] : b_max;
    for (size_t j = 1; j < ns; j++)
        s_max = ss[j] > s_max ? ss[j] : s_max;
    rf_sweep_point corner;
    a.o.batch = b_max;
    if (rf_sweep_prepare(sw, &m, &a.o, &roof, &e) || rf_sweep_eval(sw, s_max, &corner, &e)) {
        rf_step_opts at = a.o; /* the corner as a step, to name the option */
        at.context = s_max;
        rc = cli_step_fail(&ctx, &m, &at, &roof, &e, NULL);
        goto out;
    }
    /* the assumption lines of the first point describe every point */
    a.o.batch = bs[0];
    if (rf_sweep_prepare(sw, &m, &a.o, &roof, &e)) {
        rc = cli_fail_err(&ctx, &e);
        goto out;
    }
    cli_assume_roof(&ctx, head, &a.o, &roof);
    cli_assume_math(head, &m, &a.o, &roof);
    cli_assume_model(head, &m, &a.o, NULL);
    rf_report_assume(head, "each point: decode step of B sequences at context s; floor = "
                           "max(FLOPs/pi, (weights + KV)/beta); tokens/s = B / floor");
    /* each point's memory fit: the weights once, B x KV(s) a point */
    rf_fit fit = {0};
    bool judged = rf_fit_prepare(&m, &a.o, ctx.hw.mem_bytes, a.budget.util,
                                 a.budget.reserve_bytes, &fit, &e) == RF_OK;
    if (judged)
        cli_assume_fit(head, &fit, &ctx);
    else
        rf_report_assume(head, "memory fit: not judged (%s)", e.msg);
    cli_context_check(&ctx, head, &m, s_max, CLI_CTX_LINES);
    if ((rc = cli_out_open(&ctx, ctx.out_path, &o)))
        goto out;
    rf_rows w;
    rf_rows_begin(&w, &o.buf, ctx.format, head, "points", cols, N_COLS);
    for (size_t i = 0; i < nb && !rc && !o.buf.failed; i++) {
        a.o.batch = bs[i];
        if (i && rf_sweep_prepare(sw, &m, &a.o, &roof, &e)) {
            rc = cli_fail_err(&ctx, &e);
            break;
        }
        for (size_t j = 0; j < ns; j++) {
            rf_sweep_point p;
            if (rf_sweep_eval(sw, ss[j], &p, &e)) {
                rc = cli_fail_err(&ctx, &e);
                break;
            }
            if (judged && rf_fit_at(&fit, &m, a.o.kv, p.batch, p.context, &e)) {
                rc = cli_fail_err(&ctx, &e);
                break;
            }
            rf_cell c[N_COLS] = {
                {.kind = RF_CELL_INT, .i = (uint64_t)p.batch},
                {.kind = RF_CELL_INT, .i = (uint64_t)p.context},
                {.kind = RF_CELL_NUM, .num = p.floor_s},
                {.kind = RF_CELL_NUM, .num = p.tokens_per_s},
                {.kind = RF_CELL_NUM, .num = p.intensity},
                {.kind = RF_CELL_STR, .str = rf_regime_name(p.regime)},
                {.kind = RF_CELL_INT, .i = p.total_bytes},
                {.kind = RF_CELL_INT, .i = p.kv_bytes},
                {.kind = RF_CELL_NUM, .num = p.floor_sum_of_max_s},
                {.kind = judged ? RF_CELL_BOOL : RF_CELL_NULL, .i = fit.fits},
                {.kind = judged ? RF_CELL_INT : RF_CELL_NULL, .i = fit.needed_bytes},
            };
            rf_rows_add(&w, &o.buf, c);
            if (o.buf.failed) /* the output takes no more: cli_out_close says why */
                break;
        }
    }
    if (!rc)
        rf_rows_end(&w, &o.buf);
out:
    rc = cli_out_close(&o, rc);
    rf_report_free(head);
    free(sw);
    free(bs);
    free(ss);
    return rc;
}
