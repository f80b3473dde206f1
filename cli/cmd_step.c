/* cmd_step.c - `roofline step MODEL`: every operator of one step, then the
 * totals (floors, tokens/s, sum-of-max, blended limit, throughput cap). */
#include <stdio.h>
#include <string.h>

#include "assume.h"
#include "budget.h"
#include "cli.h"
#include "engine_predict.h"
#include "gpu_predict.h"
#include "gpu_sim.h"
#include "measure_view.h"
#include "opts.h"
#include "output.h"
#include "par_opts.h"
#include "resolve.h"
#include "step_opts.h"
#include "roofline/rf_view.h"
#include "roofline/rf_engine.h"
#include "roofline/rf_serve.h"

enum { O_DECODE = 1000, O_CHUNK, O_CHUNK_CONTEXT };

static const cli_opt opts[] = {
    {"decode", 1, O_DECODE, "B_d", "--phase mixed: decode tokens, one a sequence (at --context)"},
    {"chunk", 1, O_CHUNK, "C", "--phase mixed: prompt tokens of the prefill chunk"},
    {"chunk-context", 1, O_CHUNK_CONTEXT, "S_c",
     "--phase mixed: positions of the chunk's prompt cached before it (default 0)"},
    {0},
};

static const cli_opt par_opts[] = {CLI_PAR_OPTS, {0}};

typedef struct args {
    rf_step_opts o;
    cli_budget budget; /* for the memory fit */
    cli_par par;       /* many devices */
    bool mixed;        /* --phase mixed */
    bool batch_given;
    rf_mixed_opts mo; /* --decode, --chunk, --chunk-context (-1: not given) */
} args;

/* What step computes, large (a step ~10 KB, a layout's every stage): the
 * step, the one shown (a device's operators, the mixed step's rows), a
 * layout's steps and the mixed rows' names. cmd_step owns it, on the heap. */
typedef struct step_run {
    rf_step st, shown;
    rf_par par;
    char names[RF_STEP_MAX_OPS][48];
} step_run;

/* The step options, with --phase mixed and --batch's being given seen
 * first (cli_step_opt's ids). */
static int step_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (id == CLI_O_PHASE) {
        a->mixed = !strcmp(arg, "mixed");
        if (a->mixed || !strcmp(arg, "decode") || !strcmp(arg, "prefill"))
            return a->mixed ? RF_EXIT_OK : cli_step_opt(ctx, id, arg, &a->o);
        return cli_fail(ctx, RF_EXIT_USAGE, "--phase: '%s' is not decode, prefill or mixed", arg);
    }
    a->batch_given |= id == CLI_O_BATCH;
    return cli_step_opt(ctx, id, arg, &a->o);
}

/* --backend, --quant, --calibration: an engine's calibration file
 * (--backend llamacpp), or --predict on kernel tables. */
static int gpu_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    if (id == CLI_O_BACKEND && rf_engine_known(arg))
        return cli_gpu_engine_opt(ctx, arg);
    return cli_gpu_opt(ctx, id, arg);
}

/* --decode, --chunk, --chunk-context: the mixed step's. */
static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_DECODE:
        return cli_i64(ctx, "--decode", arg, 0, RF_DIM_MAX, &a->mo.decode_batch);
    case O_CHUNK:
        return cli_i64(ctx, "--chunk", arg, 1, RF_DIM_MAX, &a->mo.chunk);
    default:
        return cli_i64(ctx, "--chunk-context", arg, 0, RF_DIM_MAX, &a->mo.chunk_context);
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
    rf_view_step_totals(r, o, st);
}

/* The step of a layout: a device's operators (those of the slowest stage),
 * then the layout's section. */
static int step_layout(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                       const args *a, step_run *run)
{
    rf_par *par = &run->par;
    rf_step *dev = &run->shown; /* a device's operators */
    rf_err e;
    int rc = cli_par_check(ctx, m, &a->par);
    if (rc)
        return rc;
    if (cli_par_compute(ctx, m, o, roof, &a->budget, &a->par, par, &e))
        return cli_fail_err(ctx, &e);
    const rf_par_stage *w = &par->stages[par->slowest];
    *dev = w->step;
    dev->n_ops = 0;
    for (size_t i = 0; i < w->step.n_ops; i++)
        if (rf_par_stage_holds(par, par->slowest, &w->step.ops[i]))
            dev->ops[dev->n_ops++] = w->step.ops[i];
    char title[256], label[128];
    snprintf(title, sizeof title, "%s step: %s on %lld x %s",
             o->phase == RF_DECODE ? "decode" : "prefill", m->name, (long long)par->devices,
             ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_step(ctx, r, &w->shard, o, dev);
    snprintf(label, sizeof label,
             "operators of a device of stage %zu (the slowest; summed "
             "over 'count')",
             par->slowest);
    rf_view_op_table(r, "ops", label, dev, NULL);
    cli_par_section(ctx, r, par, &a->par);
    if ((ctx->step_given & CLI_GIVEN_PREDICT) && /* on kernel tables: gpu_predict.c */
        (rc = cli_gpu_step(ctx, r, m, &w->shard, &a->par.layout, o, dev, w->coll, w->n_coll))) {
        rf_report_free(r);
        return rc;
    }
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

/* --phase mixed wants --decode and --chunk, and none of --batch, --tokens
 * or a layout; the mixed options want --phase mixed. */
static int mixed_check(const cli_ctx *ctx, const args *a)
{
    const rf_mixed_opts *mo = &a->mo;
    bool given = mo->decode_batch >= 0 || mo->chunk >= 0 || mo->chunk_context >= 0;
    if (!a->mixed)
        return given ? cli_fail(ctx, RF_EXIT_USAGE,
                                "--decode, --chunk and --chunk-context "
                                "need --phase mixed")
                     : RF_EXIT_OK;
    if (mo->decode_batch < 0 || mo->chunk < 0)
        return cli_fail(ctx, RF_EXIT_USAGE, "--phase mixed: give --decode B_d and --chunk C");
    if (a->batch_given || (ctx->step_given & CLI_GIVEN_TOKENS))
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--phase mixed: --batch and --tokens are a plain "
                        "step's; give --decode B_d and --chunk C");
    if (cli_par_wanted(&a->par))
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--phase mixed on many devices is not modelled: "
                        "drop --tp/--pp/--ep/--dp and the link options");
    return RF_EXIT_OK;
}

/* The mixed step's operator rows, each attention named by its part (the
 * names written into names, one a row). */
static void mixed_rows(const rf_step *st, rf_step *out, char (*names)[48])
{
    *out = *st;
    for (size_t i = 0; i < out->n_ops; i++) {
        rf_op *op = &out->ops[i];
        if (op->kind != RF_OP_ATTN_DECODE && op->kind != RF_OP_ATTN_PREFILL)
            continue;
        snprintf(names[i], sizeof names[i], "%s (%s)", op->name,
                 op->kind == RF_OP_ATTN_DECODE ? "decode" : "chunk");
        op->name = names[i];
    }
}

static void mixed_totals(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                         const args *a, const rf_step *st)
{
    const rf_mixed_opts *mo = &a->mo;
    rf_fit fit;
    rf_err e;
    char text[160];
    rf_report_section(r, NULL, "mixed step totals");
    if (rf_mixed_fit(m, o, mo, ctx->hw.mem_bytes, a->budget.util, a->budget.reserve_bytes, &fit,
                     &e)) {
        rf_report_null(r, "fits", "memory",
                       ctx->hw.mem_bytes ? e.msg : "- (no memory size: give --mem)");
        rf_report_null(r, "memory_needed_bytes", "memory needed (weights + KV)", "-");
    } else {
        cli_assume_fit(r, &fit, ctx);
        rf_report_bool(r, "fits", "memory", fit.fits, cli_fit_text(&fit, text, sizeof text));
        rf_report_int(r, "memory_needed_bytes", "memory needed (weights + KV)", fit.needed_bytes,
                      RF_U_BYTES_BIN);
    }
    int64_t chunk_pos = mo->chunk_context + mo->chunk;
    cli_context_check(ctx, r, m, chunk_pos > mo->decode_context ? chunk_pos : mo->decode_context,
                      CLI_CTX_LINES | CLI_CTX_KEY);
    rf_view_mixed_totals(r, mo, st);
}

/* `step --phase mixed`: B_d decode tokens and one prefill chunk in one
 * forward pass (rf_mixed_step_compute). */
static int step_mixed(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                      args *a, step_run *run)
{
    rf_step *st = &run->st, *shown = &run->shown;
    rf_err e;
    a->mo.decode_context = o->context;
    a->mo.chunk_context = a->mo.chunk_context < 0 ? 0 : a->mo.chunk_context;
    a->mo.chunks = 1;
    if (rf_mixed_step_compute(m, o, roof, &a->mo, st, &e))
        return cli_fail_err(ctx, &e);
    const rf_mixed_opts *mo = &a->mo;
    char title[256];
    snprintf(title, sizeof title, "mixed step: %s on %s", m->name, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_roof(ctx, r, o, roof);
    cli_assume_math(r, m, o, roof);
    rf_report_assume(r,
                     "mixed: %lld decode %s at context %lld and a prefill chunk of %lld "
                     "tokens after %lld cached, one forward pass (chunked prefill, as vLLM "
                     "and Sarathi-Serve schedule it); linear layers at M = %lld + %lld = "
                     "%lld, weights read once; lm_head on one position a sequence (%lld)",
                     (long long)mo->decode_batch, cli_plural(mo->decode_batch, "token", "tokens"),
                     (long long)mo->decode_context, (long long)mo->chunk,
                     (long long)mo->chunk_context, (long long)mo->decode_batch,
                     (long long)mo->chunk, (long long)(mo->decode_batch + mo->chunk),
                     (long long)(mo->decode_batch + 1));
    rf_report_assume(r,
                     "attention by kind: (decode) rows are the %lld sequences' one query "
                     "against their %lld keys, (chunk) rows the chunk's %lld queries against "
                     "%lld + %lld keys; each reads its own KV once",
                     (long long)mo->decode_batch, (long long)mo->decode_context,
                     (long long)mo->chunk, (long long)mo->chunk_context, (long long)mo->chunk);
    rf_step_opts chunk_o = *o; /* the attention line describes the chunk's */
    chunk_o.phase = RF_PREFILL;
    cli_assume_model(r, m, &chunk_o, st);
    mixed_rows(st, shown, run->names);
    rf_view_op_table(r, "ops", "operators (figures summed over the layers in 'count')", shown,
                     NULL);
    mixed_totals(ctx, r, m, o, a, st);
    int rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

/* step's body on ctx, the command's context (step frees what its run holds). */
static int step_on(cli_ctx *ctx, const cli_io *io, int argc, char **argv, step_run *run)
{
    args a = {rf_step_opts_default(),
              CLI_BUDGET_DEFAULT,
              CLI_PAR_DEFAULT,
              false,
              false,
              {.decode_batch = -1, .chunk = -1, .chunk_context = -1}};
    rf_step_opts o;
    int pos, rc = cli_parse(ctx, io, argc, argv,
                            "step MODEL [--phase decode|prefill] [--batch B] [--context S] "
                            "[--tokens T] [options]\n"
                            "       roofline step MODEL --phase mixed --decode B_d [--context S] "
                            "--chunk C [--chunk-context S_c] [options]",
                            (const cli_opt_group[]){{cli_step_opts, step_opt, &a},
                                                    CLI_PREDICT_GROUP(&a.o),
                                                    {cli_gpu_opts, gpu_opt, NULL},
                                                    {opts, on_opt, &a},
                                                    CLI_BUDGET_GROUP(&a.budget),
                                                    {par_opts, cli_par_group_opt, &a.par},
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = mixed_check(ctx, &a)))
        return rc;
    o = a.o;
    rf_model m;
    rf_roof roof;
    rf_err e;
    rf_step *st = &run->st;
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(ctx, &m, &o, false)))
        return rc;
    bool gpu = (ctx->step_given & CLI_GIVEN_PREDICT) && cli_gpu_wanted(ctx); /* kernel tables */
    const char *engine_file, *engine = cli_gpu_engine(ctx, &engine_file); /* --backend llamacpp */
    bool on_engine = (ctx->step_given & CLI_GIVEN_PREDICT) && engine;
    if ((rc = cli_predict_refuse(ctx, a.mixed || (cli_par_wanted(&a.par) && !gpu),
                                 gpu ? "--phase mixed" : "--phase mixed and layouts")))
        return rc;
    if (a.mixed)
        return step_mixed(ctx, &m, &o, &roof, &a, run);
    if (rf_step_compute(&m, &o, &roof, st, &e))
        return cli_step_fail(ctx, &m, &o, &roof, &e, NULL);
    if (cli_par_wanted(&a.par))
        return step_layout(ctx, &m, &o, &roof, &a, run);

    char title[256];
    snprintf(title, sizeof title, "%s step: %s on %s", o.phase == RF_DECODE ? "decode" : "prefill",
             m.name, ctx->hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    const struct rf_step_pred *pr = NULL; /* --predict */
    if (!gpu && !on_engine && (rc = cli_step_predict(ctx, &o, st, &pr))) {
        rf_report_free(r);
        return rc;
    }
    cli_assume_step(ctx, r, &m, &o, st);
    rf_view_op_table(r, "ops", "operators (figures summed over the layers in 'count')", st, pr);
    totals(ctx, r, &m, st, &o, &a.budget);
    rf_view_pred_totals(r, pr, "predicted",
                        "PREDICTED (from the calibration; the floors above are bounds)");
    rf_layout one = rf_layout_single();
    if ((on_engine && (rc = cli_engine_step(ctx, r, engine, engine_file, &m, &o, st))) ||
        (gpu && (rc = cli_gpu_step(ctx, r, &m, &m, &one, &o, st, NULL, 0)))) {
        rf_report_free(r);
        return rc;
    }
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

static int step(const cli_io *io, int argc, char **argv, void *state)
{
    cli_ctx ctx = {0};
    int rc = step_on(&ctx, io, argc, argv, state);
    cli_gpu_free(&ctx);
    return rc;
}

int cmd_step(const cli_io *io, int argc, char **argv)
{
    return cli_with_state(io, argc, argv, sizeof(step_run), step);
}
