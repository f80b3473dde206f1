/* cmd_measure_cuda.c - `measure --device cuda[:N]`: open the device, run
 * the CUDA backend (rf_cuda.h), build the report; and what bench gemm's
 * CUDA branch shares with it (opening the device, a measurement's progress
 * and notes). Figures all come from the library; this file only lays them
 * out. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab_view.h"
#include "roofline/rf_cuda.h"

static void progress(void *user, const char *stage)
{
    const cli_cuda_talk *t = user;
    fprintf(stderr, "\r  %s: %-66.66s", t->device, stage);
    fflush(stderr);
}

static void note(void *user, const char *line)
{
    cli_cuda_talk *t = user;
    if (t->n_notes < CLI_CUDA_NOTES)
        snprintf(t->notes[t->n_notes++], sizeof t->notes[0], "%s", line);
}

rf_status cli_cuda_profile(const cli_ctx *ctx, rf_cuda_ctx *cu, const char *device, bool quick,
                           uint32_t dtype_mask, int64_t gemm_dim, rf_hw_profile *p,
                           cli_cuda_talk *talk, rf_err *err)
{
    *talk = (cli_cuda_talk){.device = device, .shown = isatty(fileno(stderr))};
    rf_cuda_measure_opts o = {.quick = quick, .dtype_mask = dtype_mask, .gemm_dim = gemm_dim,
                              .progress = talk->shown ? progress : NULL, .note = note,
                              .user = talk};
    rf_status st = rf_cuda_measure(cu, &o, p, err);
    if (talk->shown)
        fprintf(stderr, "\r%-80s\r", "");
    for (int i = 0; i < talk->n_notes; i++)
        fprintf(stderr, "roofline %s: warning: %s\n", ctx->cmd, talk->notes[i]);
    return st;
}

void cli_cuda_talk_report(const cli_cuda_talk *talk, rf_report *r)
{
    for (int i = 0; i < talk->n_notes; i++)
        rf_report_note(r, "warning: %s", talk->notes[i]);
}

int cli_cuda_open(cli_ctx *ctx, const char *spec, rf_cuda_ctx **out)
{
    rf_err e;
    int index = 0;
    if (rf_cuda_device_parse(spec, &index, &e) || rf_cuda_ctx_new(index, out, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

static const rf_hw_profile_kernel *kernel_named(const rf_hw_profile *p, const char *name,
                                                const char *level)
{
    for (size_t i = 0; i < p->n_kernels; i++)
        if (!strcmp(p->kernels[i].name, name) && !strcmp(p->kernels[i].level, level))
            return &p->kernels[i];
    return NULL;
}

static const rf_dtype_kind gemm_dtypes[] = {RF_FP32, RF_TF32, RF_BF16, RF_FP16, RF_FP8_E4M3};

/* The device, and how bandwidth, timing and GEMMs were measured. */
static void measure_assumptions(rf_report *r, const rf_hw_profile *p, const rf_cuda_device *d,
                                bool quick, int64_t dim)
{
    char b1[32], b2[32];
    rf_report_assume(r, "device: %s memory, %s L2, SM clock %.2f GHz (the driver's peak); CUDA "
                        "runtime %d.%d, driver supports %d.%d",
                     rf_fmt((double)p->mem_bytes, RF_U_BYTES, b1, sizeof b1),
                     rf_fmt((double)p->l2_bytes, RF_U_BYTES_BIN, b2, sizeof b2),
                     p->clock_hz / 1e9, d->runtime_version / 1000, d->runtime_version % 1000 / 10,
                     d->driver_version / 1000, d->driver_version % 1000 / 10);
    rf_report_assume(r, "bandwidth: 16-byte vector loads and stores, one full wave of blocks "
                        "(resident blocks per SM x SMs), device-memory buffers far larger than "
                        "L2; copy counts bytes read + written, read counts bytes read; every "
                        "result checked");
    rf_cuda_timing t = rf_cuda_timing_default(quick);
    rf_report_assume(r, "timing: CUDA events around a CUDA graph of the calls, after %d warm-up "
                        "calls; trials of >= %.0f ms, median of %d; best = the roof, median = "
                        "what a run typically sees",
                     t.warmup, t.min_trial_s * 1e3, t.trials);
    rf_report_assume(r, "GEMMs: cuBLASLt at %lld x %lld x %lld, the fastest of up to %d "
                        "heuristic candidates, fresh random non-zero inputs, each dtype checked "
                        "against a CPU reference first; fp8 e4m3 with fast accumulation and "
                        "bf16 output",
                     (long long)dim, (long long)dim, (long long)dim, t.max_algos);
}

/* The memory roof, the copy and the interface beside it, each dtype's peak
 * and ridge. */
static void roof_section(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s,
                         const rf_cuda_device *d)
{
    rf_report_section(r, "roof", "roof");
    rf_report_num(r, "bandwidth_bytes_per_s", "memory roof (best device-memory read)",
                  p->bandwidth_bytes_per_s, RF_U_BW);
    cli_sustained_row(r, p); /* the median read, which predictions use */
    const char *mem = p->n_levels ? p->levels[p->n_levels - 1].name : "HBM";
    const rf_hw_profile_kernel *copy = kernel_named(p, "copy_v16", mem);
    if (copy)
        rf_report_num(r, "copy_bytes_per_s", "copy, read + write (best)", copy->best, RF_U_BW);
    rf_report_num(r, "interface_bytes_per_s", "memory interface (2 x clock x bus width)",
                  d->bus_bw_bytes_per_s, RF_U_BW);
    for (size_t i = 0; i < sizeof gemm_dtypes / sizeof gemm_dtypes[0]; i++) {
        rf_dtype_kind k = gemm_dtypes[i];
        char key[48], label[64];
        if (!(p->peak_flops_per_s[k] > 0))
            continue;
        snprintf(key, sizeof key, "peak_%s", rf_dtype_name(k));
        snprintf(label, sizeof label, "%s peak (cuBLASLt, best)", rf_dtype_name(k));
        rf_report_num(r, key, label, p->peak_flops_per_s[k], RF_U_FLOP_RATE);
        snprintf(key, sizeof key, "ridge_%s", rf_dtype_name(k));
        snprintf(label, sizeof label, "  ridge %s (FLOP/byte)", rf_dtype_name(k));
        rf_report_num(r, key, label, s->ridge[k], RF_U_INTENSITY);
    }
}

static rf_report *measure_report(const rf_hw_profile *p, const rf_cuda_device *d, bool quick,
                                 int64_t dim)
{
    rf_hw_profile_summary s;
    rf_hw_profile_summarize(p, &s);
    char title[256];
    snprintf(title, sizeof title, "measured roofline: %s, cuda:%d (%s, %d SMs)", p->device,
             d->index, p->isa, p->sm_count);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    measure_assumptions(r, p, d, quick, dim);
    roof_section(r, p, &s, d);
    rf_report_table(r, "levels", "memory levels (read-only kernel; best of trials)");
    rf_report_col(r, "level", "level", RF_U_NONE);
    rf_report_col(r, "bytes", "working set", RF_U_BYTES_BIN);
    rf_report_col(r, "read", "read", RF_U_BW);
    rf_report_col(r, "ridge_bf16", "ridge bf16", RF_U_INTENSITY);
    for (size_t l = 0; l < p->n_levels; l++) {
        rf_report_row(r);
        rf_report_cell_str(r, p->levels[l].name);
        rf_report_cell_int(r, p->levels[l].bytes);
        rf_report_cell_num(r, p->levels[l].bandwidth_bytes_per_s);
        if (s.level_ridge[l][RF_BF16] > 0)
            rf_report_cell_num(r, s.level_ridge[l][RF_BF16]);
        else
            rf_report_cell_null(r, "-");
    }
    cli_kernel_table(r, p, &s, "bytes_per_s", "bandwidth", "bandwidth kernels", RF_U_BW);
    cli_kernel_table(r, p, &s, "flops_per_s", "compute", "compute kernels (cuBLASLt)",
                     RF_U_FLOP_RATE);
    cli_unsteady_note(r, p, &s);
    cli_calib_tables(r, p); /* --calibrate's fit and residuals */
    return r;
}

/* --calibrate: rf_cuda_calibrate on the measured profile, progress on a
 * terminal; fills p->calib. An exit code. */
static int calibrate(cli_ctx *ctx, rf_cuda_ctx *cu, const cli_cuda_talk *talk, bool quick,
                     rf_hw_profile *p)
{
    rf_cuda_calib_opts o = {.quick = quick, .progress = talk->shown ? progress : NULL,
                            .user = (void *)talk};
    rf_err e;
    rf_status st = rf_cuda_calibrate(cu, &o, p, &e);
    if (talk->shown)
        fprintf(stderr, "\r%-80s\r", "");
    return st == RF_OK ? RF_EXIT_OK : cli_fail_err(ctx, &e);
}

int cli_cuda_measure(cli_ctx *ctx, const char *device, bool quick, bool calibrate_too,
                     rf_hw_profile *p)
{
    rf_cuda_ctx *cu = NULL;
    rf_report *r = NULL;
    rf_err e;
    int rc = cli_cuda_open(ctx, device, &cu);
    if (rc)
        return rc;
    cli_cuda_talk talk;
    int64_t dim = quick ? 4096 : 8192;
    bool printed;
    if (cli_cuda_profile(ctx, cu, device, quick, 0, dim, p, &talk, &e) != RF_OK) {
        rc = cli_fail_err(ctx, &e);
        goto out;
    }
    if (calibrate_too && (rc = calibrate(ctx, cu, &talk, quick, p)))
        goto out;
    if ((rc = cli_profile_json(ctx, p, &printed)) || printed)
        goto out;
    if (!(r = measure_report(p, rf_cuda_ctx_device(cu), quick, dim))) {
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    cli_cuda_talk_report(&talk, r);
    rc = cli_profile_emit(ctx, r);
out:
    rf_report_free(r);
    rf_cuda_ctx_free(cu);
    return rc;
}
