/* cmd_info.c - `roofline info MODEL`: what was read from a preset or a
 * config.json: the family, every shape, parameter counts (total, streamed
 * by one decode token, active a token for MoE), the weights by module and
 * their dtypes, the KV bytes a token, and the assumptions applied (the
 * tables: rf_view_info, src/view/info.c). */
#include <stdio.h>
#include <stdlib.h>

#include "assume.h"
#include "cli.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_view.h"

/* info's report of MODEL, its decode step in st. */
static int info(cli_ctx *ctx, int argc, char **argv, int pos, rf_step *st)
{
    rf_step_opts o = rf_step_opts_default();
    rf_model m;
    rf_roof roof;
    rf_err e;
    rf_param_counts p;
    int rc;
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &m, &o, &roof)))
        return rc;
    /* a batch-1 decode step without KV: the weights one token streams */
    if (rf_model_params(&m, &p, &e) || rf_step_compute(&m, &o, &roof, st, &e))
        return cli_fail_err(ctx, &e);

    char title[256], w[64], a[64];
    snprintf(title, sizeof title, "model %s (%s)", m.name, m.family);
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    rf_report_assume(r, "source: %s", argv[pos]);
    rf_report_assume(r, "parameters: matrix weights only (norms and biases not counted); "
                        "streamed = what one decode token at batch 1 reads: every dense matrix, "
                        "k routed + the shared experts, the lm_head; the embedding is a gather");
    rf_report_assume(r, "dtypes: weights %s, activations %s", rf_dtype_describe(o.w, w, sizeof w),
                     rf_dtype_describe(o.a, a, sizeof a));
    cli_assume_arch(r, &m, &o);
    if (rf_view_info(r, &m, &o, st, &p, &e)) {
        rf_report_free(r);
        return cli_fail_err(ctx, &e);
    }
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    return rc;
}

int cmd_info(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    int pos, rc = cli_parse(&ctx, io, argc, argv, "info MODEL [--weight-dtype DT] [--json|--csv]",
                            NULL, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_refuse_unused(&ctx, CLI_G_ROOF, "info reads the model alone, no hardware")) ||
        (rc = cli_refuse_unused(&ctx, CLI_G_ADT,
                                "info counts weights and KV; activations are "
                                "not stored")))
        return rc;
    rf_step *st = malloc(sizeof *st); /* ~10 KB: the command's, off the stack */
    if (!st)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rc = info(&ctx, argc, argv, pos, st);
    free(st);
    return rc;
}
