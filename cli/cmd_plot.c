/* cmd_plot.c - `roofline plot MODEL`: Figure 1, every operator of a prefill
 * and a decode step on the roofline, as SVG (the figure: figure.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "cli.h"
#include "figure.h"
#include "opts.h"
#include "output.h"
#include "par_opts.h"
#include "roofline/rf_file.h"

static const cli_opt par_opts[] = {CLI_PAR_OPTS, {0}};

typedef struct args {
    cli_budget budget; /* the decode batch's memory fit */
    cli_par par;       /* many devices: a device's figure */
} args;

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
        snprintf(f->plot.subtitle + n, cap - n,
                 " \xc2\xb7 decode batch %s: a device needs %s of a "
                 "%s budget",
                 dec->fits ? "fits" : "does not fit", need, budget);
    } else if (rf_step_fit(&f->model, &f->decode, ctx->hw.mem_bytes, b->util, b->reserve_bytes,
                           &fit, &e) == RF_OK)
        snprintf(f->plot.subtitle + n, cap - n, " \xc2\xb7 decode batch %s",
                 cli_fit_text(&fit, text, sizeof text));
}

/* What plot computes, large (~60 KB and more): the figure, and under a
 * layout both steps on it. cmd_plot owns it, on the heap. */
typedef struct plot_run {
    cli_figure f;
    rf_par dec, pre;
} plot_run;

static int plot(const cli_io *io, int argc, char **argv, void *state)
{
    plot_run *run = state;
    cli_ctx ctx;
    cli_figure *fig = &run->f;
    args a = {CLI_BUDGET_DEFAULT, CLI_PAR_DEFAULT};
    int rc = cli_figure_start(&ctx, io, argc, argv,
                              "plot MODEL [--hw NAME|PROFILE] [--batch B] [--context S] "
                              "[--tokens T] [--measured FILE.json] [--tp T] [--pp P] [--ep E] "
                              "[--dp D] [-o FILE.svg]",
                              (const cli_opt_group[]){CLI_FIGURE_GROUP(fig),
                                                      CLI_BUDGET_GROUP(&a.budget),
                                                      {par_opts, cli_par_group_opt, &a.par},
                                                      {0}},
                              fig);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (a.par.overlap)
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "--overlap does not apply to plot: it bounds a "
                        "step's floor (step and report print it)");
    bool layout = cli_par_wanted(&a.par);
    if (layout && (rc = cli_figure_layout(&ctx, fig, &a.budget, &a.par, &run->dec, &run->pre)))
        return rc;
    rf_buf b;
    rf_err e;
    /* the decode batch's memory fit (--util, --reserve), the model's
     * context limit and a family read with --family, in the subtitle; the
     * figure is fitted again so its heading wraps them */
    note_fit(&ctx, fig, &a.budget, layout ? &run->dec : NULL);
    int64_t longest =
        fig->decode.context > fig->prefill.tokens ? fig->decode.context : fig->prefill.tokens;
    if (rf_model_context_beyond(&fig->model, longest)) {
        size_t n = strlen(fig->plot.subtitle);
        snprintf(fig->plot.subtitle + n, sizeof fig->plot.subtitle - n,
                 " \xc2\xb7 WARNING: %lld positions beyond the model's %lld", (long long)longest,
                 (long long)fig->model.max_context);
    }
    if (ctx.family_as[0]) { /* the SVG has no assumption lines: --family said here */
        size_t n = strlen(fig->plot.subtitle);
        snprintf(fig->plot.subtitle + n, sizeof fig->plot.subtitle - n,
                 " \xc2\xb7 read as %s (--family); model_type was %s", ctx.family_as,
                 ctx.family_from);
    }
    rf_plot_fit(&fig->plot);
    rf_buf_init(&b);
    if (rf_plot_write_svg(&fig->plot, &b, &e))
        rc = cli_fail_err(&ctx, &e);
    else
        rc = cli_write_file(&ctx, ctx.out_path, b.data, b.len);
    rf_buf_free(&b);
    return rc;
}

int cmd_plot(const cli_io *io, int argc, char **argv)
{
    return cli_with_state(io, argc, argv, sizeof(plot_run), plot);
}
