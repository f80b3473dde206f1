/* cmd_gemm.c - `roofline gemm M K N`: one GEMM on the roofline. */
#include "cli.h"
#include "roofline/rf_op.h"

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
    rf_point p = rf_roof_place(&roof, (double)op.flops, (double)op.bytes);
    double mstar;
    bool crosses = rf_gemm_mstar(d[1], d[2], o.w, o.a, roof.ridge, &mstar);

    rf_report *r = rf_report_new("GEMM Y[M,N] = X[M,K] W[K,N]");
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_roof(&ctx, r, &o, &roof);
    rf_report_assume(r, "F = 2 M K N; Q = M K b_a + K N b_w + M N b_y (read X, read W, write Y)");
    rf_report_assume(r, "output: Y written in %s (%s)", rf_dtype_name(y.kind),
                     o.has_out ? "--out-dtype"
                     : y.kind == o.a.kind
                         ? "the activations' dtype"
                         : "an 8- or 4-bit input is quantized for the GEMM alone; the engines' "
                           "scaled GEMMs write bf16; --out-dtype sets it");
    rf_report_int(r, "m", "M", (uint64_t)d[0], RF_U_INT);
    rf_report_int(r, "k", "K", (uint64_t)d[1], RF_U_INT);
    rf_report_int(r, "n", "N", (uint64_t)d[2], RF_U_INT);
    rf_report_int(r, "flops", "FLOPs", op.flops, RF_U_INT);
    rf_report_int(r, "bytes", "bytes", op.bytes, RF_U_INT);
    rf_report_int(r, "weight_bytes", "  of which weights", op.weight_bytes, RF_U_INT);
    rf_report_int(r, "act_bytes", "  of which activations", op.act_bytes, RF_U_INT);
    rf_report_num(r, "intensity", "intensity (FLOP/byte)", p.intensity, RF_U_INTENSITY4);
    rf_report_str(r, "regime", "regime", rf_regime_name(p.regime));
    rf_report_num(r, "ridge", "ridge (FLOP/byte)", roof.ridge, RF_U_INTENSITY);
    rf_report_num(r, "attainable_flops_per_s", "attainable", p.attainable_flops_per_s,
                  RF_U_FLOP_RATE);
    rf_report_num(r, "peak_fraction", "of compute peak", p.attainable_flops_per_s / roof.peak_flops_per_s,
                  RF_U_PERCENT);
    rf_report_num(r, "floor_s", "time floor", p.floor_s, RF_U_SECONDS);
    if (crosses)
        rf_report_num(r, "m_star", "compute-bound from M =", mstar, RF_U_INTENSITY);
    else
        rf_report_null(r, "m_star", "compute-bound from M =", "never (2KN <= I* b_a (K+N))");
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
