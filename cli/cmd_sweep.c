/* cmd_sweep.c - `roofline sweep MODEL --batch RANGE [--context RANGE]`:
 * one decode step per (batch, context) point, streamed (a million points
 * would not fit a report's cells; see rf_rows in rf_report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assume.h"
#include "budget.h"
#include "cli.h"
#include "gpu_predict.h"
#include "measure_view.h"
#include "opts.h"
#include "output.h"
#include "par_opts.h"
#include "resolve.h"
#include "step_opts.h"
#include "roofline/rf_view.h"
#include "roofline/rf_file.h"

enum { O_BATCHES = 1000, O_CONTEXTS };

static const cli_opt opts[] = {
    {"batch", 1, O_BATCHES, "RANGE", "batch sizes: 1..1024, 1..64:1 or 1,16,256 (required)"},
    {"context", 1, O_CONTEXTS, "RANGE",
     "contexts (default " CLI_STR(CLI_DEFAULT_CONTEXT) "; 0: weights only)"},
    {0},
};

/* the step options a sweep takes (cli_step_opt's ids) */
static const cli_opt step_opts[] = {
    {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"},
    CLI_CAUSAL_OPT,
    CLI_NO_CAUSAL_OPT,
    CLI_TRAFFIC_OPTS,
    {"moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"},
    {0},
};

static const cli_opt par_opts[] = {CLI_PAR_OPTS, {0}};

typedef struct args {
    const char *batch, *context;
    rf_step_opts o;
    cli_budget budget; /* for each point's memory fit */
    cli_par par;       /* many devices: each point's floor is the layout's */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (id == O_BATCHES)
        a->batch = arg;
    else {
        ctx->step_given |= CLI_GIVEN_CONTEXT;
        a->context = arg;
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
    /* --predict only: */
    {"predicted_s", "predicted", RF_U_SECONDS, 10},
    {"predicted_tokens_per_s", "pred tok/s", RF_U_TOK_RATE, 12},
    /* --predict on kernel tables only: */
    {"predicted_band", "band", RF_U_PERCENT, 7},
    {"predicted_rows", "in/interp/extrap/floor", RF_U_NONE, 22},
};
#define N_COLS (sizeof cols / sizeof cols[0] - 4)

/* One sweep's state, from the parsed options to the streamed rows. */
typedef struct sweep_run {
    cli_ctx ctx;
    args a;
    rf_model m;
    rf_roof roof;
    int64_t *bs, *ss; /* the points' batches and contexts          */
    size_t nb, ns;
    int64_t s_max; /* the largest context                        */
    rf_sweep *sw;
    rf_par_sweep *ps; /* under a layout (cli_par_wanted), else NULL */
    rf_report *head;  /* title and assumption lines                 */
    rf_fit fit;       /* each point's memory fit, when judged       */
    bool judged;
    rf_step *step; /* --predict on a calibration: a point's step  */
    /* --predict on kernel tables: a point's layout (one device without
     * one) predicted */
    const rf_gpu_tables *g;
    rf_par *par;
    rf_gpu_par_work *work;
} sweep_run;

/* The batches of --batch, the contexts of --context (0: weights only, one
 * point with no KV) or the one default point. */
static int read_ranges(sweep_run *s)
{
    int rc = cli_range(&s->ctx, "--batch", s->a.batch, RF_DIM_MAX, &s->bs, &s->nb);
    if (rc)
        return rc;
    if (!strcmp(s->a.context, "0")) {
        if (!(s->ss = calloc(1, sizeof *s->ss)))
            return cli_fail(&s->ctx, RF_EXIT_FAIL, "out of memory");
        s->ns = 1;
    } else if ((rc = cli_range(&s->ctx, "--context", s->a.context, RF_DIM_MAX, &s->ss, &s->ns))) {
        return rc;
    }
    if (!(s->ctx.step_given & CLI_GIVEN_CONTEXT))
        s->ss[0] = cli_default_context(&s->ctx, &s->m);
    return RF_EXIT_OK;
}

static int begin_report(sweep_run *s)
{
    char title[256];
    snprintf(title, sizeof title, "decode sweep: %s on %s, %zu x %zu %s", s->m.name, s->ctx.hw.name,
             s->nb, s->ns, cli_plural((int64_t)(s->nb * s->ns), "point", "points"));
    if (!(s->sw = malloc(sizeof *s->sw)) || !(s->head = rf_report_new(title)))
        return cli_fail(&s->ctx, RF_EXIT_FAIL, "out of memory");
    return RF_EXIT_OK;
}

/* FLOPs and bytes grow with B and s, so the corner (largest B, largest s)
 * is where a sweep would overflow first: try it before any row is
 * streamed, so that a refused sweep leaves nothing half-written. */
static int try_corner(sweep_run *s)
{
    int64_t b_max = s->bs[0];
    s->s_max = s->ss[0];
    for (size_t i = 1; i < s->nb; i++)
        b_max = s->bs[i] > b_max ? s->bs[i] : b_max;
    for (size_t j = 1; j < s->ns; j++)
        s->s_max = s->ss[j] > s->s_max ? s->ss[j] : s->s_max;
    rf_sweep_point corner;
    rf_err e;
    s->a.o.batch = b_max;
    if (rf_sweep_prepare(s->sw, &s->m, &s->a.o, &s->roof, &e) ||
        rf_sweep_eval(s->sw, s->s_max, &corner, &e)) {
        rf_step_opts at = s->a.o; /* the corner as a step, to name the option */
        at.context = s->s_max;
        return cli_step_fail(&s->ctx, &s->m, &at, &s->roof, &e, NULL);
    }
    return RF_EXIT_OK;
}

/* The assumption lines, those of the first point, which describe every
 * point, and the memory fit's rule: the weights once, B x KV(s) a point. */
static int assume_points(sweep_run *s)
{
    rf_err e;
    s->a.o.batch = s->bs[0];
    if (rf_sweep_prepare(s->sw, &s->m, &s->a.o, &s->roof, &e))
        return cli_fail_err(&s->ctx, &e);
    cli_assume_roof(&s->ctx, s->head, &s->a.o, &s->roof);
    cli_assume_math(s->head, &s->m, &s->a.o, &s->roof);
    cli_assume_model(s->head, &s->m, &s->a.o, NULL);
    cli_assume_family(&s->ctx, s->head); /* its line, and family_forced in JSON */
    rf_report_assume(s->head, "each point: decode step of B sequences at context s; floor = "
                              "max(FLOPs/pi, (weights + KV)/beta); tokens/s = B / floor");
    s->judged = rf_fit_prepare(&s->m, &s->a.o, s->ctx.hw.mem_bytes, s->a.budget.util,
                               s->a.budget.reserve_bytes, &s->fit, &e) == RF_OK;
    if (cli_par_wanted(&s->a.par)) { /* many devices */
        rf_par_opts po = cli_par_opts(&s->ctx, &s->a.budget, &s->a.par);
        int rc = cli_par_check(&s->ctx, &s->m, &s->a.par);
        if (rc)
            return rc;
        if (!(s->ps = malloc(sizeof *s->ps)))
            return cli_fail(&s->ctx, RF_EXIT_FAIL, "out of memory");
        cli_par_assume(s->head, &po.links, &po.layout);
        rf_report_assume(s->head, "under the layout: floor = the slowest stage's; tokens/s = "
                                  "D B / cycle, the whole deployment; FLOP/B, step bytes, KV "
                                  "bytes and sum-of-max stay the whole model's on one device; "
                                  "memory fit: see step");
        s->judged = false;
    }
    if (s->judged)
        cli_assume_fit(s->head, &s->fit, &s->ctx);
    else if (!cli_par_wanted(&s->a.par)) /* a layout's line said "see step" */
        rf_report_assume(s->head, "memory fit: not judged (%s)", e.msg);
    cli_context_check(&s->ctx, s->head, &s->m, s->s_max, CLI_CTX_LINES);
    return RF_EXIT_OK;
}

/* A point (the batch in s->a.o, context ctx) on the kernel tables: its
 * layout's step (one device without one), rf_gpu_predict_par. */
static int predict_point(sweep_run *s, int64_t ctx, rf_gpu_par_pred *q)
{
    rf_err e;
    rf_step_opts o = s->a.o;
    o.context = ctx;
    rf_par_opts po = cli_par_opts(&s->ctx, &s->a.budget, &s->a.par);
    if (!cli_par_wanted(&s->a.par))
        po.layout = rf_layout_single();
    if (rf_par_compute(&s->m, &o, &s->roof, &po, s->par, &e) ||
        rf_gpu_predict_par(s->g, cli_gpu_quant(&s->ctx), &s->m, &o, s->par, s->work, q, &e))
        return cli_fail_err(&s->ctx, &e);
    return RF_EXIT_OK;
}

/* The points of the batch in s->a.o, a row each; stops early when the
 * output takes no more (cli_out_close says why). */
static int stream_batch(sweep_run *s, cli_out *o, rf_rows *w)
{
    rf_err e;
    for (size_t j = 0; j < s->ns; j++) {
        rf_sweep_point p;
        rf_par_point lp;
        if (rf_sweep_eval(s->sw, s->ss[j], &p, &e) ||
            (s->ps && rf_par_sweep_eval(s->ps, s->ss[j], &lp, &e)))
            return cli_fail_err(&s->ctx, &e);
        if (s->ps)
            p.floor_s = lp.floor_s, p.tokens_per_s = lp.tokens_per_s;
        if (s->judged && rf_fit_at(&s->fit, &s->m, s->a.o.kv, p.batch, p.context, &e))
            return cli_fail_err(&s->ctx, &e);
        const struct rf_step_pred *pr = NULL; /* --predict: the point's whole step */
        double pred_s = 0, pred_rate = 0, band = 0;
        char how[64] = "";
        if ((s->ctx.step_given & CLI_GIVEN_PREDICT) && s->g) { /* kernel tables */
            rf_gpu_par_pred q;
            int rc = predict_point(s, s->ss[j], &q);
            if (rc)
                return rc;
            pred_s = q.stage_s[q.slowest], pred_rate = q.tokens_per_s, band = q.band;
            snprintf(how, sizeof how, "%zu/%zu/%zu/%zu", q.n_how[RF_GPU_IN_RANGE],
                     q.n_how[RF_GPU_INTERPOLATED], q.n_how[RF_GPU_EXTRAPOLATED],
                     q.n_how[RF_GPU_NO_TABLE]);
        } else if (s->ctx.step_given & CLI_GIVEN_PREDICT) {
            rf_step_opts po = s->a.o;
            po.context = s->ss[j];
            int rc = rf_step_compute(&s->m, &po, &s->roof, s->step, &e)
                         ? cli_fail_err(&s->ctx, &e)
                         : cli_step_predict(&s->ctx, &po, s->step, &pr);
            if (rc)
                return rc;
            pred_s = rf_view_pred_step_s(pr), pred_rate = rf_view_pred_tokens_per_s(pr);
        }
        rf_cell c[N_COLS + 4] = {
            {.kind = RF_CELL_INT, .i = (uint64_t)p.batch},
            {.kind = RF_CELL_INT, .i = (uint64_t)p.context},
            {.kind = RF_CELL_NUM, .num = p.floor_s},
            {.kind = RF_CELL_NUM, .num = p.tokens_per_s},
            {.kind = RF_CELL_NUM, .num = p.intensity},
            {.kind = RF_CELL_STR, .str = rf_regime_name(p.regime)},
            {.kind = RF_CELL_INT, .i = p.total_bytes},
            {.kind = RF_CELL_INT, .i = p.kv_bytes},
            {.kind = RF_CELL_NUM, .num = p.floor_sum_of_max_s},
            {.kind = s->judged ? RF_CELL_BOOL : RF_CELL_NULL, .i = s->fit.fits},
            {.kind = s->judged ? RF_CELL_INT : RF_CELL_NULL, .i = s->fit.needed_bytes},
            {.kind = RF_CELL_NUM, .num = pred_s},
            {.kind = RF_CELL_NUM, .num = pred_rate},
            {.kind = RF_CELL_NUM, .num = band},
            {.kind = RF_CELL_STR, .str = how},
        };
        rf_rows_add(w, &o->buf, c);
        if (o->buf.failed)
            break;
    }
    return RF_EXIT_OK;
}

static int stream_points(sweep_run *s, cli_out *o)
{
    rf_rows w;
    rf_err e;
    int rc = RF_EXIT_OK;
    bool pred = s->ctx.step_given & CLI_GIVEN_PREDICT;
    if (pred && cli_gpu_wanted(&s->ctx)) { /* kernel tables: the corner's needs, in the head */
        rf_gpu_par_pred q;
        int64_t b = s->a.o.batch;
        s->a.o.batch = s->bs[s->nb - 1];
        if ((rc = cli_gpu_load(&s->ctx, &s->g)) || (rc = predict_point(s, s->ss[s->ns - 1], &q)))
            return rc;
        s->a.o.batch = b;
        cli_gpu_assume(&s->ctx, s->head, s->g, q.missing);
        rf_report_assume(s->head, "predicted: each point's step on the kernel tables "
                                  "(rf_gpu_predict_par): one device's step, or the layout's "
                                  "slowest stage; pred tok/s = D B / the predicted cycle; band: "
                                  "the tables' leave-one-out median, time-weighted; the rows "
                                  "by provenance: in range / interpolated / extrapolated / on "
                                  "their floor");
    } else if (pred) {
        rf_view_pred_assume(s->head);
    }
    rf_rows_begin(&w, &o->buf, s->ctx.format, s->head, "points", cols,
                  N_COLS + (pred ? 2 : 0) + (pred && s->g ? 2 : 0));
    for (size_t i = 0; i < s->nb && !rc && !o->buf.failed; i++) {
        s->a.o.batch = s->bs[i];
        if (i && rf_sweep_prepare(s->sw, &s->m, &s->a.o, &s->roof, &e))
            return cli_fail_err(&s->ctx, &e);
        if (s->ps) {
            rf_par_opts po = cli_par_opts(&s->ctx, &s->a.budget, &s->a.par);
            if (rf_par_sweep_prepare(s->ps, &s->m, &s->a.o, &s->roof, &po, &e))
                return cli_fail_err(&s->ctx, &e);
        }
        rc = stream_batch(s, o, &w);
    }
    if (!rc)
        rf_rows_end(&w, &o->buf);
    return rc;
}

static int sweep_alloc(sweep_run *s)
{
    if (!(s->ctx.step_given & CLI_GIVEN_PREDICT))
        return RF_EXIT_OK;
    bool gpu = cli_gpu_wanted(&s->ctx);
    if (gpu ? !(s->par = malloc(sizeof *s->par)) || !(s->work = malloc(sizeof *s->work))
            : !(s->step = malloc(sizeof *s->step)))
        return cli_fail(&s->ctx, RF_EXIT_FAIL, "out of memory");
    return RF_EXIT_OK;
}

int cmd_sweep(const cli_io *io, int argc, char **argv)
{
    sweep_run s = {.a = {NULL, CLI_STR(CLI_DEFAULT_CONTEXT), rf_step_opts_default(),
                         CLI_BUDGET_DEFAULT, CLI_PAR_DEFAULT}};
    cli_out o = {0}; /* opened once the sweep is known to run: rows stream through it */
    int pos, rc = cli_parse(&s.ctx, io, argc, argv, "sweep MODEL --batch RANGE [--context RANGE]",
                            (const cli_opt_group[]){{opts, on_opt, &s.a},
                                                    {step_opts, cli_step_opt, &s.a.o},
                                                    CLI_BUDGET_GROUP(&s.a.budget),
                                                    {par_opts, cli_par_group_opt, &s.a.par},
                                                    CLI_PREDICT_GROUP(&s.a.o),
                                                    CLI_GPU_GROUP,
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (!s.a.batch)
        return cli_fail(&s.ctx, RF_EXIT_USAGE, "--batch RANGE is required");
    if (!(rc = cli_predict_refuse(&s.ctx, cli_par_wanted(&s.a.par) && !cli_gpu_wanted(&s.ctx),
                                  "layouts")) &&
        !(rc = sweep_alloc(&s)) &&
        !(rc = cli_model_setup(&s.ctx, argc, argv, pos, &s.m, &s.a.o, &s.roof)) &&
        !(rc = cli_step_defaults(&s.ctx, &s.m, &s.a.o, false)) && !(rc = read_ranges(&s)) &&
        !(rc = begin_report(&s)) && !(rc = try_corner(&s)) && !(rc = assume_points(&s)) &&
        !(rc = cli_out_open(&s.ctx, s.ctx.out_path, &o)))
        rc = stream_points(&s, &o);
    rc = cli_out_close(&o, rc);
    cli_gpu_free(&s.ctx);
    rf_report_free(s.head);
    free(s.sw);
    free(s.ps);
    free(s.bs);
    free(s.ss);
    free(s.step);
    free(s.par);
    free(s.work);
    return rc;
}
