/* figure.c - Figure 1 as plot and report draw it: the figure options, both
 * steps computed, --measured read, and the plot laid out (on one device or
 * a layout's). */
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "figure.h"
#include "measure_view.h"
#include "opts.h"
#include "par_opts.h"
#include "resolve.h"
#include "step_opts.h"

void cli_figure_init(cli_figure *f)
{
    memset(f, 0, sizeof *f);
    f->opts = rf_step_opts_default(); /* context and tokens: cli_step_defaults */
}

const cli_opt cli_figure_opts[] = {CLI_FIGURE_OPTS, {0}};

int cli_figure_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    cli_figure *f = user;
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
        return cli_fail(ctx, RF_EXIT_USAGE, "--json and --csv do not apply: %s writes %s", ctx->cmd,
                        strcmp(ctx->cmd, "plot") ? "HTML" : "SVG");
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
