/* cmd_plot.c - `roofline plot MODEL`: Figure 1, every operator of a prefill
 * and a decode step on the roofline, as SVG. Also what `report` shares:
 * the figure options, the figure, the output-path check. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "roofline/rf_file.h"

void cli_figure_init(cli_figure *f)
{
    memset(f, 0, sizeof *f);
    f->opts = rf_step_opts_default(); /* context and tokens: cli_step_defaults */
}

int cli_figure_opt(cli_ctx *ctx, int id, const char *arg, cli_figure *f)
{
    if (id == CLI_O_MEASURED) {
        if (!*arg)
            return cli_fail(ctx, RF_EXIT_USAGE, "--measured: empty path");
        f->measured_path = arg;
        return RF_EXIT_OK;
    }
    return cli_step_opt(ctx, id, arg, &f->opts);
}

/* The figure of both steps, or under a layout (dec and pre not NULL) of a
 * device of it: its operators and collectives (rf_plot_add_layout). */
static rf_status figure_plot(const cli_ctx *ctx, cli_figure *f, const rf_par *dec,
                             const rf_par *pre, rf_err *e)
{
    rf_plot *p = &f->plot;
    double ba = rf_dtype_bytes_per_elem(f->decode.a);
    rf_plot_init(p, &ctx->hw, &f->roof);
    rf_plot_describe(p, f->model.name, ctx->hw.name, &f->decode, &f->prefill);
    rf_status s = dec ? rf_plot_add_layout(p, dec, RF_DECODE, ba, e)
                      : rf_plot_add_step(p, &f->decode_step, RF_DECODE, e);
    if (!s)
        s = pre ? rf_plot_add_layout(p, pre, RF_PREFILL, ba, e)
                : rf_plot_add_step(p, &f->prefill_step, RF_PREFILL, e);
    if (!s && f->measured_path)
        s = rf_plot_add_measured(p, &f->measured, e);
    cli_plot_sustained(ctx, p); /* the profile's sustained memory roof, dashed */
    rf_plot_fit(p);
    return s;
}

int cli_figure_layout(cli_ctx *ctx, cli_figure *f, const cli_budget *b, const cli_par *p,
                      rf_par *dec, rf_par *pre)
{
    rf_err e;
    int rc = cli_par_check(ctx, &f->model, p);
    if (rc)
        return rc;
    if (cli_par_compute(ctx, &f->model, &f->decode, &f->roof, b, p, dec, &e) ||
        cli_par_compute(ctx, &f->model, &f->prefill, &f->roof, b, p, pre, &e) ||
        figure_plot(ctx, f, dec, pre, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

/* Resolve MODEL and the roof, compute both steps, read --measured, and
 * lay the figure out. */
static int figure_build(cli_ctx *ctx, int argc, char **argv, int pos, cli_figure *f)
{
    rf_err e;
    int rc;
    if (ctx->format != RF_FMT_TABLE)
        return cli_fail(ctx, RF_EXIT_USAGE, "--json and --csv do not apply: %s writes %s",
                        ctx->cmd, strcmp(ctx->cmd, "plot") ? "HTML" : "SVG");
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &f->model, &f->opts, &f->roof)) ||
        (rc = cli_step_defaults(ctx, &f->model, &f->opts, true)))
        return rc;
    f->decode = f->opts;
    f->decode.phase = RF_DECODE;
    f->prefill = f->opts;
    f->prefill.phase = RF_PREFILL;
    f->prefill.context = 0; /* fresh prompts: T new tokens, nothing cached */
    if (rf_step_compute(&f->model, &f->decode, &f->roof, &f->decode_step, &e))
        return cli_step_fail(ctx, &f->model, &f->decode, &f->roof, &e, NULL);
    if (rf_step_compute(&f->model, &f->prefill, &f->roof, &f->prefill_step, &e))
        return cli_step_fail(ctx, &f->model, &f->prefill, &f->roof, &e, NULL);
    if (f->measured_path && rf_measured_load(f->measured_path, &f->measured, &e))
        return cli_fail_err(ctx, &e);
    if (figure_plot(ctx, f, NULL, NULL, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

int cli_check_output(const cli_ctx *ctx, const char *path, const char *const *inputs)
{
    rf_err e;
    if (!path || !strcmp(path, "-") || rf_file_check_dest(path, inputs, &e) == RF_OK)
        return RF_EXIT_OK;
    return cli_fail_err(ctx, &e);
}

int cli_figure_start(cli_ctx *ctx, const cli_io *io, int argc, char **argv, const char *usage,
                     const cli_opt_group *groups, cli_figure *f)
{
    int pos, rc;
    cli_figure_init(f);
    if ((rc = cli_parse(ctx, io, argc, argv, usage, groups, &pos)))
        return rc;
    const char *inputs[] = {f->measured_path, NULL};
    if ((rc = cli_check_output(ctx, ctx->out_path, inputs)))
        return rc;
    return figure_build(ctx, argc, argv, pos, f);
}

static const cli_opt opts[] = {CLI_FIGURE_OPTS, CLI_BUDGET_OPTS, CLI_PAR_OPTS, {0}};

typedef struct args {
    cli_figure *fig;
    cli_budget budget; /* the decode batch's memory fit */
    cli_par par;       /* many devices: a device's figure */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    int rc = cli_budget_opt(ctx, id, arg, &a->budget);
    if (rc == CLI_NOT_MINE)
        rc = cli_par_opt(ctx, id, arg, &a->par);
    return rc == CLI_NOT_MINE ? cli_figure_opt(ctx, id, arg, a->fig) : rc;
}

/* The subtitle's fit: the decode batch's on one device, or under a layout
 * its most loaded device's. */
static void note_fit(const cli_ctx *ctx, cli_figure *f, const cli_budget *b, const rf_par *dec)
{
    char text[160];
    size_t n = strlen(f->plot.subtitle), cap = sizeof f->plot.subtitle;
    rf_err e;
    rf_fit fit;
    if (dec) {
        const rf_par_stage *w = &dec->stages[0];
        for (size_t i = 1; i < dec->n_stages; i++)
            w = dec->stages[i].needed_bytes > w->needed_bytes ? &dec->stages[i] : w;
        char need[32], budget[32];
        rf_fmt((double)w->needed_bytes, RF_U_BYTES, need, sizeof need);
        rf_fmt(w->budget_bytes, RF_U_BYTES, budget, sizeof budget);
        snprintf(f->plot.subtitle + n, cap - n, " \xc2\xb7 decode batch %s: a device needs %s of a "
                 "%s budget", dec->fits ? "fits" : "does not fit", need, budget);
    } else if (rf_step_fit(&f->model, &f->decode, ctx->hw.mem_bytes, b->util, b->reserve_bytes,
                           &fit, &e) == RF_OK)
        snprintf(f->plot.subtitle + n, cap - n, " \xc2\xb7 decode batch %s",
                 cli_fit_text(&fit, text, sizeof text));
}

int cmd_plot(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    static cli_figure f; /* ~60 KB: keep it off the stack */
    static rf_par dec, pre; /* under a layout: large, off the stack */
    args a = {&f, CLI_BUDGET_DEFAULT, CLI_PAR_DEFAULT};
    int rc = cli_figure_start(&ctx, io, argc, argv,
                              "plot MODEL [--hw NAME|PROFILE] [--batch B] [--context S] "
                              "[--tokens T] [--measured FILE.json] [--tp T] [--pp P] [--ep E] "
                              "[--dp D] [-o FILE.svg]",
                              (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &f);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (a.par.overlap)
        return cli_fail(&ctx, RF_EXIT_USAGE, "--overlap does not apply to plot: it bounds a "
                        "step's floor (step and report print it)");
    bool layout = cli_par_wanted(&a.par);
    if (layout && (rc = cli_figure_layout(&ctx, &f, &a.budget, &a.par, &dec, &pre)))
        return rc;
    rf_buf b;
    rf_err e;
    /* the decode batch's memory fit (--util, --reserve), the model's
     * context limit and a family read with --family, in the subtitle; the
     * figure is fitted again so its heading wraps them */
    note_fit(&ctx, &f, &a.budget, layout ? &dec : NULL);
    int64_t longest = f.decode.context > f.prefill.tokens ? f.decode.context : f.prefill.tokens;
    if (rf_model_context_beyond(&f.model, longest)) {
        size_t n = strlen(f.plot.subtitle);
        snprintf(f.plot.subtitle + n, sizeof f.plot.subtitle - n,
                 " \xc2\xb7 WARNING: %lld positions beyond the model's %lld", (long long)longest,
                 (long long)f.model.max_context);
    }
    if (ctx.family_as[0]) { /* the SVG has no assumption lines: --family said here */
        size_t n = strlen(f.plot.subtitle);
        snprintf(f.plot.subtitle + n, sizeof f.plot.subtitle - n,
                 " \xc2\xb7 read as %s (--family); model_type was %s", ctx.family_as,
                 ctx.family_from);
    }
    rf_plot_fit(&f.plot);
    rf_buf_init(&b);
    if (rf_plot_write_svg(&f.plot, &b, &e))
        rc = cli_fail_err(&ctx, &e);
    else
        rc = cli_write_file(&ctx, ctx.out_path, b.data, b.len);
    rf_buf_free(&b);
    return rc;
}
