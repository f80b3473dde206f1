/* measure_view.c - how measured figures are shown, for the CPU and CUDA
 * branches of `measure` and `bench gemm` alike: the GEMM sweep's table, a
 * profile's kernel tables and its unsteady warning, and where a measured
 * profile goes (-o FILE, --json, the table). */
#include <stdlib.h>
#include <string.h>

#include "measure_view.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_measure_stats.h"

void cli_gemm_table(rf_report *r, bool with_dtype)
{
    rf_report_table(r, "gemm", NULL);
    rf_report_col(r, "ops", "operators", RF_U_NONE);
    if (with_dtype)
        rf_report_col(r, "dtype", "dtype", RF_U_NONE);
    rf_report_col(r, "m", "M", RF_U_INT);
    rf_report_col(r, "k", "K", RF_U_INT);
    rf_report_col(r, "n", "N", RF_U_INT);
    rf_report_col(r, "routine", "routine", RF_U_NONE);
    rf_report_col(r, "time_s", "time (median)", RF_U_SECONDS);
    rf_report_col(r, "flops_per_s_median", "median", RF_U_FLOP_RATE);
    rf_report_col(r, "flops_per_s", "best", RF_U_FLOP_RATE);
    rf_report_col(r, "bw_bytes_per_s", "best B/s", RF_U_BW);
    rf_report_col(r, "intensity", "FLOP/byte", RF_U_INTENSITY4);
    rf_report_col(r, "roof_flops_per_s", "roofline", RF_U_FLOP_RATE);
    rf_report_col(r, "of_roof", "of roof", RF_U_PERCENT);
    rf_report_col(r, "regime", "regime", RF_U_NONE);
}

void cli_kernel_table(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s,
                      const char *unit, const char *key, const char *label, rf_unit u)
{
    rf_report_table(r, key, label);
    rf_report_col(r, "name", "kernel", RF_U_NONE);
    rf_report_col(r, "level", "level", RF_U_NONE);
    rf_report_col(r, "bytes", "working set", RF_U_BYTES_BIN);
    rf_report_col(r, "best", "best", u);
    rf_report_col(r, "median", "median", u);
    rf_report_col(r, "min", "min", u);
    rf_report_col(r, "max", "max", u);
    rf_report_col(r, "spread", "spread", RF_U_PERCENT);
    for (size_t i = 0; i < p->n_kernels; i++) {
        const rf_hw_profile_kernel *k = &p->kernels[i];
        if (strcmp(k->unit, unit))
            continue;
        rf_report_row(r);
        rf_report_cell_str(r, k->name);
        rf_report_cell_str(r, k->level);
        rf_report_cell_int(r, k->bytes);
        rf_report_cell_num(r, k->best);
        rf_report_cell_num(r, k->median);
        rf_report_cell_num(r, k->min);
        rf_report_cell_num(r, k->max);
        rf_report_cell_num(r, s->kernel_spread[i]);
    }
}

void cli_unsteady_note(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s)
{
    if (s->unsteady)
        rf_report_note(r,
                       "warning: %zu of %zu kernels have best and median more than %.0f%% "
                       "apart (worst: %s at %s, %.0f%%): the machine is shared; the best "
                       "figures are the roof, rerun for steadier medians",
                       s->unsteady, p->n_kernels, 100 * RF_SPREAD_WARN,
                       p->kernels[s->worst].name, p->kernels[s->worst].level,
                       100 * s->kernel_spread[s->worst]);
}

int cli_profile_json(const cli_ctx *ctx, const rf_hw_profile *p, bool *printed)
{
    char *json = NULL;
    rf_err e;
    *printed = false;
    if (rf_hw_profile_to_json(p, &json, &e))
        return cli_fail_err(ctx, &e);
    int rc = RF_EXIT_OK;
    bool to_stdout = ctx->out_path && !strcmp(ctx->out_path, "-");
    if (ctx->out_path && !to_stdout)
        rc = cli_write_file(ctx, ctx->out_path, json, strlen(json));
    if (rc == RF_EXIT_OK && (ctx->format == RF_FMT_JSON || to_stdout)) {
        rc = cli_write_file(ctx, "-", json, strlen(json));
        *printed = true;
    }
    free(json);
    return rc;
}

int cli_profile_emit(const cli_ctx *ctx, rf_report *r)
{
    if (ctx->out_path)
        rf_report_note(r, "profile written to %s (use it with --hw %s)", ctx->out_path,
                       ctx->out_path);
    cli_ctx to_stdout = *ctx;
    to_stdout.out_path = NULL;
    return cli_emit(&to_stdout, r);
}
