/* cmd_capacity.c - `roofline capacity MODEL`: the KV pool, vLLM style. */
#include <stdio.h>

#include "assume.h"
#include "budget.h"
#include "cli.h"
#include "opts.h"
#include "output.h"
#include "par_opts.h"
#include "resolve.h"
#include "step_opts.h"
#include "roofline/rf_view.h"
#include "roofline/rf_parse.h"

enum { O_CONTEXT = 1000 };

static const cli_opt opts[] = {
    {"context", 1, O_CONTEXT, "S",
     "context a sequence, for the sequence count (default " CLI_STR(CLI_DEFAULT_CONTEXT) ")"},
    {0},
};

/* the layout's degrees alone (cli_par_opt's ids) */
static const cli_opt par_opts[] = {
    {"tp", 1, CLI_O_TP, "T", "tensor-parallel devices (default 1)"},
    {"pp", 1, CLI_O_PP, "P", "pipeline stages (default 1)"},
    {"ep", 1, CLI_O_EP, "E", "expert-parallel devices: TP groups of E / T replicas (default 1)"},
    {"dp", 1, CLI_O_DP, "D", "data-parallel replicas (default 1)"},
    {0},
};

typedef struct args {
    cli_budget budget;
    int64_t context;
    cli_par par; /* a layout: the pool a device */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    ctx->step_given |= CLI_GIVEN_CONTEXT; /* --context, the one option */
    return cli_i64(ctx, "--context", arg, 0, RF_DIM_MAX, &a->context);
}

/* The assumption lines: the pool's rule and dtypes, where the memory
 * figure comes from, and why a pool is empty. */
static void assume_capacity(const cli_ctx *ctx, rf_report *r, const rf_model *m,
                            const rf_step_opts *o, const rf_capacity *c)
{
    char kv[64], w[288], stated[96];
    rf_report_assume(r,
                     "pool = util x usable memory - resident weights - reserve; resident "
                     "weights: every parameter (a tied embedding once) in %s; KV %s",
                     cli_weights_text(m, o, w, sizeof w), rf_dtype_describe(o->kv, kv, sizeof kv));
    snprintf(stated, sizeof stated, "the preset's usable memory: %.4g GB stated x 79.65 / 80 GiB",
             ctx->hw.mem_stated_gb);
    rf_report_assume(r, "memory: %s (%s)", ctx->mem_bytes ? "--mem" : ctx->hw.name,
                     ctx->mem_bytes ? "given"
                     : ctx->hw.mem_usable
                         ? stated
                         : "the stated capacity (datasheet or profile); --mem gives what "
                           "your runtime can use");
    if (!c->weights_fit) {
        char wb[32], budget[32], over[32];
        rf_fmt((double)c->resident_bytes, RF_U_BYTES_BIN, wb, sizeof wb);
        rf_fmt(c->pool_bytes + (double)c->resident_bytes, RF_U_BYTES_BIN, budget, sizeof budget);
        rf_fmt(-c->pool_bytes, RF_U_BYTES_BIN, over, sizeof over);
        rf_report_assume(r,
                         "no room for KV: the weights (%s) do not fit the %s that util x "
                         "memory - reserve leaves; they need %s more, so the pool holds "
                         "no token",
                         wb, budget, over);
    }
}

int cmd_capacity(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    /* The book chapter's budget: 0.92 x 79.65 GiB - weights - 6 GiB (its
     * 8k context is --context 8192; the default is every command's
     * CLI_DEFAULT_CONTEXT) */
    args a = {CLI_BUDGET_DEFAULT, CLI_DEFAULT_CONTEXT, CLI_PAR_DEFAULT};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "capacity MODEL [--util U] [--reserve SIZE] [--context S]",
                            (const cli_opt_group[]){CLI_BUDGET_GROUP(&a.budget),
                                                    {opts, on_opt, &a},
                                                    {par_opts, cli_par_group_opt, &a.par},
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    rf_model m;
    rf_err e;
    rf_capacity c;
    rf_step_opts o = rf_step_opts_default();
    if (ctx.peak_tflops > 0 || ctx.bw_tbps > 0 || ctx.ridge > 0)
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "--peak, --bw and --ridge set a roof; capacity uses "
                        "memory alone (--mem)");
    if (ctx.a_given)
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "--act-dtype: capacity counts weights and KV; "
                        "activations are in --reserve");
    if ((rc = cli_model_hw_setup(&ctx, argc, argv, pos, &m, &o)))
        return rc;
    if (!(ctx.step_given & CLI_GIVEN_CONTEXT))
        a.context = cli_default_context(&ctx, &m);
    if (rf_capacity_compute(&m, &o, ctx.hw.mem_bytes, a.budget.util, a.budget.reserve_bytes,
                            a.context, &c, &e))
        return cli_fail_err(&ctx, &e);
    char title[256];
    snprintf(title, sizeof title, "KV capacity: %s on %s", m.name, ctx.hw.name);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    assume_capacity(&ctx, r, &m, &o, &c);
    cli_assume_state(r, &m, c.state_bytes_per_seq);
    cli_context_check(&ctx, r, &m, c.context, CLI_CTX_LINES | CLI_CTX_KEY);
    rf_view_capacity_figures(r, &c);
    if (cli_par_wanted(&a.par)) {
        rf_par_capacity pc;
        rf_par_opts po = cli_par_opts(&ctx, &a.budget, &a.par);
        if (rf_par_capacity_compute(&m, &o, &po, a.context, &pc, &e)) {
            rf_report_free(r);
            return cli_fail_err(&ctx, &e);
        }
        rf_view_capacity_layout(r, &pc);
    }
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
