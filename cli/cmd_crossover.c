/* cmd_crossover.c - `roofline crossover MODEL`: the tokens in flight at which
 * each linear layer becomes compute-bound, the square-projection T*, and
 * the prefill-attention S*. */
#include <stdio.h>
#include <stdlib.h>

#include "assume.h"
#include "cli.h"
#include "opts.h"
#include "output.h"
#include "par_opts.h"
#include "resolve.h"
#include "step_opts.h"
#include "roofline/rf_view.h"
#include "roofline/rf_op.h"

enum { O_SQUARE = 1000 };

static const cli_opt opts[] = {
    {"square", 1, O_SQUARE, "LIST", "also T* of square d x d projections for these d"},
    {0},
};

/* the step options crossover takes (cli_step_opt's ids), in its words */
static const cli_opt step_opts[] = {
    {"moe-experts", 1, CLI_O_MOE, "uniform|all",
     "routing that turns an expert's M* into tokens in flight (default uniform)"},
    CLI_CAUSAL_OPT,
    CLI_NO_CAUSAL_OPT,
    {0},
};

/* the layout's degrees (cli_par_opt's ids) */
static const cli_opt par_opts[] = {
    {"tp", 1, CLI_O_TP, "T", "the shard one of T tensor-parallel devices runs (default 1)"},
    {"pp", 1, CLI_O_PP, "P", "pipeline stages (default 1): a stage runs the same shapes"},
    {"ep", 1, CLI_O_EP, "E", "expert-parallel devices: TP groups of E / T replicas (default 1)"},
    {"dp", 1, CLI_O_DP, "D", "data-parallel replicas (default 1)"},
    {0},
};

typedef struct args {
    const char *square;
    rf_step_opts o;
    cli_par par; /* --tp, --pp, --ep, --dp */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    a->square = arg; /* --square, the one option */
    return RF_EXIT_OK;
}

int cmd_crossover(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {NULL, rf_step_opts_default(), CLI_PAR_DEFAULT};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "crossover MODEL [--square LIST] [--moe-experts "
                            "uniform|all] [--no-causal]",
                            (const cli_opt_group[]){{opts, on_opt, &a},
                                                    {step_opts, cli_step_opt, &a.o},
                                                    {par_opts, cli_par_group_opt, &a.par},
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_refuse_unused(&ctx, CLI_G_MEM, "crossing points need no memory size")))
        return rc;
    rf_model m;
    rf_roof roof;
    rf_err e;
    rf_crossover cx;
    rf_report *r = NULL;
    int64_t *ds = NULL;
    size_t nd = 0;
    rf_step_opts o = a.o;
    if ((rc = cli_causal_default(&ctx, &o)) ||
        (rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (a.square && (rc = cli_range(&ctx, "--square", a.square, RF_DIM_MAX, &ds, &nd))) ||
        (rc = cli_par_check(&ctx, &m, &a.par)))
        goto out;
    const rf_layout *l = &a.par.layout;
    if (!rf_layout_is_single(l) && rf_layout_shard(&m, l, 0, m.layers, &m, &e)) {
        rc = cli_fail_err(&ctx, &e);
        goto out;
    }
    if ((ctx.step_given & CLI_GIVEN_MOE) && !m.n_experts) {
        rc = cli_fail(&ctx, RF_EXIT_USAGE, "--moe-experts: %s has no routed experts", m.name);
        goto out;
    }
    if (rf_crossover_compute(&m, &o, &roof, &cx, &e)) {
        rc = cli_fail_err(&ctx, &e);
        goto out;
    }
    /* under EP the expert group routes the tokens of its E / T replicas:
     * B* of a replica is the group's over E / T */
    for (size_t i = 0; i < cx.n_ops; i++)
        if (cx.ops[i].expert)
            cx.ops[i].tokens_star /= (double)(l->ep / l->tp);
    char title[256];
    snprintf(title, sizeof title, "crossing points: %s on %s (ridge %.1f FLOP/byte)", m.name,
             ctx.hw.name, roof.ridge);
    if (!(r = rf_report_new(title))) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    char wd[64];
    cli_assume_roof(&ctx, r, &o, &roof);
    cli_assume_math(r, &m, &o, &roof);
    rf_report_assume(r,
                     "M* = I* b_w K N / (2 K N - I* b_a (K + N)), exact with activation "
                     "traffic; never when the denominator is <= 0; each GEMM in its own "
                     "weights' dtype, a square d x d projection in attention's (%s)",
                     rf_dtype_describe(cx.square_w, wd, sizeof wd));
    cli_assume_attn(r, &o, true); /* S* is prefill's */
    cli_assume_arch(r, &m, &o);
    if (l->tp > 1)
        rf_report_assume(r,
                         "the shapes one of %lld tensor-parallel devices runs (q/k/v, gate "
                         "and up split by N, o and down by K, lm_head by vocabulary)",
                         (long long)l->tp);
    if (l->pp > 1 || l->dp > 1)
        rf_report_assume(r, "PP %lld x DP %lld: every stage and replica runs these shapes",
                         (long long)l->pp, (long long)l->dp);
    if (l->ep > 1)
        rf_report_assume(r,
                         "EP %lld: a device holds whole experts (%lld of %lld); the expert "
                         "group routes the tokens of %lld replicas, so an expert GEMM's B* is "
                         "a replica's, the group's over %lld",
                         (long long)l->ep, (long long)(m.n_experts / l->ep), (long long)m.n_experts,
                         (long long)(l->ep / l->tp), (long long)(l->ep / l->tp));
    rf_view_crossover(r, &cx, &m, "ops", NULL);
    rf_report_num(r, "square_never_below_d",
                  "square GEMMs never cross for d <=", cx.square_never_below_d, RF_U_INTENSITY);
    if (nd) {
        rf_report_table(r, "square", "square d x d projections: T* = I* b d / (2 (d - I* b))");
        rf_report_col(r, "d", "d", RF_U_INT);
        rf_report_col(r, "t_star", "T*", RF_U_INTENSITY);
        for (size_t i = 0; i < nd; i++) {
            double t;
            rf_report_row(r);
            rf_report_cell_int(r, (uint64_t)ds[i]);
            if (rf_crossover_square(&cx, ds[i], &t))
                rf_report_cell_num(r, t);
            else
                rf_report_cell_null(r, "never");
        }
    }
    rc = cli_emit(&ctx, r);
out:
    rf_report_free(r);
    free(ds);
    return rc;
}
