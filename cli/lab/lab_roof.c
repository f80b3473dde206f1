/* lab_roof.c - the roof of the commands that run on this machine (bench,
 * profile): --hw when given, else this CPU measured now with measure's
 * quick lab. Built with the lab (roofline-lab, libroofline-cli), not into
 * the analytic `roofline` binary, which links no measure layer. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "opts.h"
#include "resolve.h"
#include "roofline/rf_measure.h"

/* Progress on the command's error stream (user), only on a terminal. */
static void measure_progress(void *user, int done, int total, const char *what)
{
    fprintf(user, "\r  measuring the roof [%2d/%2d] %-40s", done + 1, total, what);
    fflush(user);
}

int cli_measured_roof(cli_ctx *ctx, int threads, rf_dtype_kind math, rf_roof *roof)
{
    if (ctx->hw_name)
        return cli_resolve_roof(ctx, math, roof);
    if (ctx->peak_tflops > 0 || ctx->bw_tbps > 0 || ctx->ridge > 0)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--peak, --bw and --ridge adjust a roof given by --hw; without --hw the "
                        "roof is measured now");
    rf_hw_profile *p = malloc(sizeof *p);
    if (!p)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    bool tty = ctx->io->err_tty;
    rf_measure_opts mo = {.threads = threads,
                          .quick = true,
                          .isa = getenv("RF_ISA"),
                          .progress = tty ? measure_progress : NULL,
                          .progress_user = ctx->io->err};
    rf_err e;
    rf_status s = rf_measure_cpu(&mo, p, &e);
    if (tty)
        fprintf(ctx->io->err, "\r%-78s\r", "");
    if (s == RF_OK)
        s = rf_hw_profile_to_hw(p, &ctx->hw, &e);
    if (s == RF_OK)
        s = rf_hw_roof_for(&ctx->hw, math, cli_math_given(ctx, math), roof, &e);
    snprintf(ctx->hw_origin, sizeof ctx->hw_origin,
             "measured now (measure --quick, %d thread%s; give --hw PROFILE for a full one)",
             p->threads, p->threads == 1 ? "" : "s");
    free(p);
    return s == RF_OK ? RF_EXIT_OK : cli_fail_err(ctx, &e);
}
