/* budget.c - the memory budget (--util, --reserve) and whether a step's
 * weights and KV fit in it. */
#include <stdio.h>

#include "budget.h"
#include "opts.h"
#include "step_opts.h"
#include "roofline/rf_parse.h"

const cli_opt cli_budget_opts[] = {CLI_BUDGET_OPTS, {0}};

int cli_budget_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    cli_budget *b = user;
    rf_err e;
    switch (id) {
    case CLI_O_UTIL:
        return cli_f64(ctx, "--util", arg, 1e-6, 1.0, &b->util);
    case CLI_O_RESERVE:
        if (rf_parse_size(arg, &b->reserve_bytes, &e))
            return cli_fail(ctx, RF_EXIT_USAGE, "--reserve: %s", e.msg);
        return RF_EXIT_OK;
    }
    return CLI_NOT_MINE;
}

const char *cli_fit_text(const rf_fit *f, char *buf, size_t cap)
{
    char need[32], budget[32], more[32];
    rf_fmt((double)f->needed_bytes, RF_U_BYTES_BIN, need, sizeof need);
    rf_fmt(f->budget_bytes, RF_U_BYTES_BIN, budget, sizeof budget);
    rf_fmt((double)f->needed_bytes - f->budget_bytes, RF_U_BYTES_BIN, more, sizeof more);
    if (f->fits)
        snprintf(buf, cap, "fits: %s of the %s for weights + KV", need, budget);
    else
        snprintf(buf, cap, "does not fit: needs %s, %s more than the %s for weights + KV", need,
                 more, budget);
    return buf;
}

void cli_assume_fit(rf_report *r, const rf_fit *f, const cli_ctx *ctx)
{
    char mem[32], reserve[32], budget[32];
    rf_fmt((double)f->mem_bytes, RF_U_BYTES_BIN, mem, sizeof mem);
    rf_fmt((double)f->reserve_bytes, RF_U_BYTES_BIN, reserve, sizeof reserve);
    rf_fmt(f->budget_bytes, RF_U_BYTES_BIN, budget, sizeof budget);
    rf_report_assume(r,
                     "memory fit: resident weights + B x KV of the positions each sequence "
                     "holds, against util x memory - reserve = %.2f x %s%s - %s = %s "
                     "(capacity's pool rule; --util, --reserve, --mem)",
                     f->util, mem, ctx->mem_bytes ? " (--mem)" : "", reserve, budget);
}

rf_status cli_fit(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                  const cli_budget *b, rf_fit *out)
{
    rf_fit f;
    rf_err e;
    char text[160];
    rf_status s = rf_step_fit(m, o, ctx->hw.mem_bytes, b->util, b->reserve_bytes, &f, &e);
    if (s) {
        rf_report_null(r, "fits", "memory",
                       ctx->hw.mem_bytes ? e.msg : "- (no memory size: give --mem)");
        rf_report_null(r, "memory_needed_bytes", "memory needed (weights + KV)", "-");
    } else {
        rf_report_bool(r, "fits", "memory", f.fits, cli_fit_text(&f, text, sizeof text));
        rf_report_int(r, "memory_needed_bytes", "memory needed (weights + KV)", f.needed_bytes,
                      RF_U_BYTES_BIN);
    }
    if (out && !s)
        *out = f;
    return s;
}
