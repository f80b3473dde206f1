/* lab_view.c - how measured figures are shown, for the CPU and CUDA
 * branches of `measure` and `bench gemm` alike: the GEMM sweep's table, a
 * profile's kernel tables and its unsteady warning, the roofs and the
 * calibration's fit, and where a measured profile goes (-o FILE, --json,
 * the table). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab_view.h"
#include "opts.h"
#include "output.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_calib.h"
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
                       s->unsteady, p->n_kernels, 100 * RF_SPREAD_WARN, p->kernels[s->worst].name,
                       p->kernels[s->worst].level, 100 * s->kernel_spread[s->worst]);
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

int cli_gemm_shapes(const cli_ctx *ctx, const rf_model *m, rf_dtype_kind dt, const rf_roof *roof,
                    rf_gemm_shape *shapes, size_t *n)
{
    rf_err e;
    rf_step_opts so = rf_step_opts_default();
    so.w = so.a = so.kv = rf_dtype_of(dt);
    rf_step *st = malloc(sizeof *st); /* ~10 KB: off the stack */
    if (!st)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    int rc = RF_EXIT_OK;
    if (rf_step_compute(m, &so, roof, st, &e))
        rc = cli_fail_err(ctx, &e);
    else
        *n = rf_step_gemm_shapes(st, shapes, RF_STEP_MAX_OPS);
    free(st);
    return rc;
}

int cli_profile_emit(const cli_ctx *ctx, rf_report *r)
{
    if (ctx->out_path)
        rf_report_note(r, "profile written to %s (use it with --hw %s)", ctx->out_path,
                       ctx->out_path);
    cli_ctx to_out = *ctx; /* the table to the command's output */
    to_out.out_path = NULL;
    return cli_emit(&to_out, r);
}

/* ---- the sustained roof and the calibration ------------------------------ */

void cli_sustained_row(rf_report *r, const rf_hw_profile *p)
{
    if (p->bandwidth_sustained_bytes_per_s > 0)
        rf_report_num(r, "bandwidth_sustained_bytes_per_s", "memory roof, sustained (median read)",
                      p->bandwidth_sustained_bytes_per_s, RF_U_BW);
}

void cli_memory_roof_rows(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s)
{
    if (!s->roof_bursts) { /* an older profile: its roof alone */
        rf_report_num(r, "bandwidth_bytes_per_s", "memory roof (best DRAM read)",
                      p->bandwidth_bytes_per_s, RF_U_BW);
        return;
    }
    rf_report_num(r, "bandwidth_bytes_per_s", "memory roof (most a DRAM burst read; floors)",
                  p->bandwidth_bytes_per_s, RF_U_BW);
    rf_report_num(r, "roof_typical_bytes_per_s", "  typical: median of the bursts' best",
                  s->roof_typical, RF_U_BW);
    rf_report_num(r, "roof_q1_bytes_per_s", "  bursts' best, lower quartile", s->roof_q1, RF_U_BW);
    rf_report_num(r, "roof_q3_bytes_per_s", "  bursts' best, upper quartile", s->roof_q3, RF_U_BW);
    char how[64];
    snprintf(how, sizeof how, "%d x %d trials, %d run%s", s->roof_bursts, s->roof_trials,
             s->roof_runs, s->roof_runs == 1 ? "" : "s");
    rf_report_str(r, "roof_bursts", "  bursts", how);
}

void cli_memory_roofs_detail(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s)
{
    rf_report_table(r, "memory_roofs",
                    "memory roofs in detail (the DRAM read; the summary shows the first)");
    rf_report_col(r, "roof", "roof", RF_U_NONE);
    rf_report_col(r, "bytes_per_s", "bandwidth", RF_U_BW);
    rf_report_col(r, "used_by", "used by", RF_U_NONE);
    const struct {
        const char *name;
        double v;
        const char *use;
    } rows[] = {
        {"most a burst read (the roof)", p->bandwidth_bytes_per_s, "every floor"},
        {"median of the bursts' best", s->roof_typical, "the typical best of a burst"},
        {"slowest burst's best", s->roof_low, "what a busy stretch allowed"},
        {"sustained: median of every trial", p->bandwidth_sustained_bytes_per_s,
         "predictions without a calibration"},
        {"the calibration's (its points' median)", p->calib.version ? p->calib.bw_bytes_per_s : 0,
         "--predict (the calibration's fit)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!(rows[i].v > 0))
            continue;
        rf_report_row(r);
        rf_report_cell_str(r, rows[i].name);
        rf_report_cell_num(r, rows[i].v);
        rf_report_cell_str(r, rows[i].use);
    }
}

void cli_roof_moves_note(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s)
{
    if (!s->roof_moves)
        return;
    char lo[32], hi[32];
    rf_report_note(r,
                   "warning: the DRAM read's bursts ranged from %s to %s (the slowest %.0f%% "
                   "below the roof, more than %.0f%%): this machine's memory bandwidth moves, "
                   "and a run that met only the slow stretch reads near %s; the roof keeps the "
                   "most shown, and `measure --merge PROFILE` keeps the most over runs",
                   rf_fmt(s->roof_low, RF_U_BW, lo, sizeof lo),
                   rf_fmt(p->bandwidth_bytes_per_s, RF_U_BW, hi, sizeof hi),
                   100 * s->roof_low_below, 100 * RF_ROOF_MOVES, lo);
}

/* "M 1 .. 2,048", "keys 64 .. 8,192" */
static const char *x_label(rf_calib_kind k)
{
    return k == RF_CALIB_GEMM                                        ? "M"
           : k == RF_CALIB_ATTN_DECODE || k == RF_CALIB_ATTN_PREFILL ? "keys"
           : k == RF_CALIB_COPY                                      ? "bytes"
                                                                     : "elements";
}

void cli_calib_tables(rf_report *r, const rf_hw_profile *p)
{
    const rf_calib *c = &p->calib;
    if (!c->version)
        return;
    char bw[32], pk[32];
    rf_report_assume(r,
                     "calibration (version %d, %s): t = c0 + floor / eff per call, floor = "
                     "max(F / pi, Q / beta) on the memory roof %s and the compute peak %s; "
                     "c0 and e fitted per kind (least squares of the relative error), each "
                     "point's own eff kept and interpolated in log space for --predict",
                     c->version, c->backend, rf_fmt(c->bw_bytes_per_s, RF_U_BW, bw, sizeof bw),
                     rf_fmt(c->peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk));
    if (c->round_spread[0][0] > 0 || c->round_spread[1][0] > 0) /* sampled per point */
        rf_report_assume(r,
                         "calibration: roofs sampled beside every point (an OpenBLAS GEMV "
                         "from DRAM, an in-cache SGEMM; the roofs above are their medians); "
                         "the GEMM rounds' median spread "
                         "ln(max/min) of time on the calibration's roof / of eff on the "
                         "points' own: memory %.3f / "
                         "%.3f, so %s; compute %.3f / %.3f, so %s",
                         c->round_spread[0][0], c->round_spread[0][1],
                         c->point_bw ? "each point's own" : "the calibration's",
                         c->round_spread[1][0], c->round_spread[1][1],
                         c->point_peak ? "each point's own" : "the calibration's");
    rf_report_table(r, "calibration",
                    "calibration: the fit per kind (residual = |fit - measured| / measured; "
                    "left out = each inner point predicted from its neighbours)");
    rf_report_col(r, "kind", "kind", RF_U_NONE);
    rf_report_col(r, "points", "points", RF_U_INT);
    rf_report_col(r, "overhead_s", "overhead c0", RF_U_SECONDS);
    rf_report_col(r, "efficiency", "eff (one)", RF_U_PERCENT);
    rf_report_col(r, "rms_residual", "rms resid", RF_U_PERCENT);
    rf_report_col(r, "worst_residual", "worst resid", RF_U_PERCENT);
    rf_report_col(r, "loo_median", "left out median", RF_U_PERCENT);
    rf_report_col(r, "loo_worst", "left out worst", RF_U_PERCENT);
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++) {
        const rf_calib_fit *f = &c->fit[k];
        rf_report_row(r);
        rf_report_cell_str(r, rf_calib_kind_name((rf_calib_kind)k));
        rf_report_cell_int(r, f->n_points);
        rf_report_cell_num(r, f->overhead_s);
        rf_report_cell_num(r, f->efficiency);
        rf_report_cell_num(r, f->rms_residual);
        rf_report_cell_num(r, f->worst_residual);
        rf_report_cell_num(r, f->loo_median);
        rf_report_cell_num(r, f->loo_worst);
    }
    rf_report_table(r, "calibration_series",
                    "calibration: the series (eff = floor / (t - c0) at each point)");
    rf_report_col(r, "kind", "kind", RF_U_NONE);
    rf_report_col(r, "a", "K or d_h", RF_U_INT);
    rf_report_col(r, "b", "N", RF_U_INT);
    rf_report_col(r, "x", "over", RF_U_NONE);
    rf_report_col(r, "x_from", "from", RF_U_INT);
    rf_report_col(r, "x_to", "to", RF_U_INT);
    rf_report_col(r, "points", "points", RF_U_INT);
    rf_report_col(r, "time_from_s", "t first", RF_U_SECONDS);
    rf_report_col(r, "time_to_s", "t last", RF_U_SECONDS);
    rf_report_col(r, "eff_first", "eff first", RF_U_PERCENT);
    rf_report_col(r, "eff_last", "eff last", RF_U_PERCENT);
    rf_report_col(r, "eff_min", "eff min", RF_U_PERCENT);
    rf_report_col(r, "eff_max", "eff max", RF_U_PERCENT);
    for (size_t i = 0; i < c->n_series; i++) {
        const rf_calib_series *s = &c->series[i];
        double lo = s->pt[0].eff, hi = lo;
        for (size_t j = 1; j < s->n; j++) {
            lo = s->pt[j].eff < lo ? s->pt[j].eff : lo;
            hi = s->pt[j].eff > hi ? s->pt[j].eff : hi;
        }
        rf_report_row(r);
        rf_report_cell_str(r, rf_calib_kind_name(s->kind));
        rf_report_cell_int(r, (uint64_t)s->a);
        rf_report_cell_int(r, (uint64_t)s->b);
        rf_report_cell_str(r, x_label(s->kind));
        rf_report_cell_int(r, (uint64_t)s->pt[0].x);
        rf_report_cell_int(r, (uint64_t)s->pt[s->n - 1].x);
        rf_report_cell_int(r, s->n);
        rf_report_cell_num(r, s->pt[0].time_s);
        rf_report_cell_num(r, s->pt[s->n - 1].time_s);
        rf_report_cell_num(r, s->pt[0].eff);
        rf_report_cell_num(r, s->pt[s->n - 1].eff);
        rf_report_cell_num(r, lo);
        rf_report_cell_num(r, hi);
    }
}
