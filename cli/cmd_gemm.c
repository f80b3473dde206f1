/* cmd_gemm.c - `roofline gemm M K N`: one GEMM on the roofline. */
#include "assume.h"
#include "cli.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_op.h"
#include "roofline/rf_view.h"

int cmd_gemm(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    int pos, rc = cli_parse(&ctx, io, argc, argv, "gemm M K N [options]", NULL, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_refuse_unused(&ctx, CLI_G_KVDT, "a GEMM reads no KV cache")) ||
        (rc = cli_refuse_unused(&ctx, CLI_G_MEM, "a GEMM's floor needs no memory size")) ||
        (rc = cli_refuse_unused(&ctx, CLI_G_FAMILY, "gemm reads no MODEL")))
        return rc;
    if (argc - pos != 3)
        return cli_fail(&ctx, RF_EXIT_USAGE, "expected M K N (got %d arguments)", argc - pos);
    int64_t d[3];
    const char *names[3] = {"M", "K", "N"};
    for (int i = 0; i < 3; i++)
        if ((rc = cli_i64(&ctx, names[i], argv[pos + i], 1, RF_DIM_MAX, &d[i])))
            return rc;
    rf_step_opts o = rf_step_opts_default();
    cli_apply_dtypes(&ctx, NULL, &o);
    rf_roof roof;
    if ((rc = cli_resolve_roof(&ctx, rf_dtype_math(o.w, o.a), &roof)))
        return rc;
    rf_op op;
    rf_err e;
    rf_dtype y = rf_step_out_dtype(&o);
    if (rf_op_gemm_out("gemm", d[0], d[1], d[2], o.w, o.a, y, &op, &e))
        return cli_fail_err(&ctx, &e);
    rf_report *r = rf_report_new("GEMM Y[M,N] = X[M,K] W[K,N]");
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_roof(&ctx, r, &o, &roof);
    rf_view_gemm(r, &op, &o, y, &roof);
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
