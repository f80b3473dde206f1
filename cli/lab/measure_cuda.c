/* measure_cuda.c - `measure --device cuda[:N]`: open the device, run
 * the CUDA backend (rf_cuda.h), build the report; with --calibrate -o DIR
 * the calibration as kernel tables too; `measure --compare-calibration A B`,
 * two folders of kernel tables side by side; and what bench gemm's CUDA
 * branch shares with it (opening the device, a measurement's progress and
 * notes). Figures all come from the library; this file only lays them out. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab_view.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_cuda.h"
#include "roofline/rf_gpu_compare.h"
#include "roofline/rf_gpu_io.h"
#include "roofline/rf_view.h"

static void progress(void *user, const char *stage)
{
    const cli_cuda_talk *t = user;
    fprintf(t->err, "\r  %s: %-66.66s", t->device, stage);
    fflush(t->err);
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
    *talk = (cli_cuda_talk){.device = device, .err = ctx->io->err, .shown = ctx->io->err_tty};
    rf_cuda_measure_opts o = {.quick = quick,
                              .dtype_mask = dtype_mask,
                              .gemm_dim = gemm_dim,
                              .progress = talk->shown ? progress : NULL,
                              .note = note,
                              .user = talk};
    rf_status st = rf_cuda_measure(cu, &o, p, err);
    if (talk->shown)
        fprintf(ctx->io->err, "\r%-80s\r", "");
    for (int i = 0; i < talk->n_notes; i++)
        fprintf(ctx->io->err, "roofline %s: warning: %s\n", ctx->cmd, talk->notes[i]);
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
    rf_report_assume(r,
                     "device: %s memory, %s L2, SM clock %.2f GHz (the driver's peak); CUDA "
                     "runtime %d.%d, driver supports %d.%d",
                     rf_fmt((double)p->mem_bytes, RF_U_BYTES, b1, sizeof b1),
                     rf_fmt((double)p->l2_bytes, RF_U_BYTES_BIN, b2, sizeof b2), p->clock_hz / 1e9,
                     d->runtime_version / 1000, d->runtime_version % 1000 / 10,
                     d->driver_version / 1000, d->driver_version % 1000 / 10);
    rf_report_assume(r, "bandwidth: 16-byte vector loads and stores, one full wave of blocks "
                        "(resident blocks per SM x SMs), device-memory buffers far larger than "
                        "L2; copy counts bytes read + written, read counts bytes read; every "
                        "result checked");
    rf_cuda_timing t = rf_cuda_timing_default(quick);
    rf_report_assume(r,
                     "timing: CUDA events around a CUDA graph of the calls, after %d warm-up "
                     "calls; trials of >= %.0f ms, median of %d; best = the roof, median = "
                     "what a run typically sees",
                     t.warmup, t.min_trial_s * 1e3, t.trials);
    rf_report_assume(r,
                     "GEMMs: cuBLASLt at %lld x %lld x %lld, the fastest of up to %d "
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
    rf_cuda_calib_opts o = {
        .quick = quick, .progress = talk->shown ? progress : NULL, .user = (void *)talk};
    rf_err e;
    rf_status st = rf_cuda_calibrate(cu, &o, p, &e);
    if (talk->shown)
        fprintf(ctx->io->err, "\r%-80s\r", "");
    return st == RF_OK ? RF_EXIT_OK : cli_fail_err(ctx, &e);
}

/* The GEMM dtypes timed for the tables beside the calibration's bf16. */
static const rf_dtype_kind table_dtypes[] = {RF_FP16, RF_FP32, RF_FP8_E4M3};
#define N_TABLE_DTYPES (sizeof table_dtypes / sizeof table_dtypes[0])

/* A warning on the command's error stream now, and in the report's notes. */
static void warn(const cli_ctx *ctx, cli_cuda_talk *talk, const char *line)
{
    fprintf(ctx->io->err, "roofline %s: warning: %s\n", ctx->cmd, line);
    note(talk, line);
}

/* --calibrate -o DIR: the calibration's GEMMs again in each of
 * table_dtypes (a dtype the device cannot run is left out with a
 * warning), every point written as kernel tables in dir
 * (rf_cuda_calib_tables, rf_gpu_tables_write) and the copy as
 * mem_copy_perf.csv; what was written goes into *written. */
static int write_tables(cli_ctx *ctx, rf_cuda_ctx *cu, cli_cuda_talk *talk, bool quick,
                        const rf_hw_profile *p, const char *dir, char *written, size_t cap)
{
    rf_calib *more[N_TABLE_DTYPES] = {NULL};
    rf_cuda_calib_part parts[N_TABLE_DTYPES + 1] = {{RF_BF16, &p->calib}};
    size_t n = 1;
    rf_gpu_tables tabs;
    rf_gpu_table copy;
    bool built = false;
    rf_err e;
    int rc = RF_EXIT_OK;
    rf_cuda_calib_opts o = {
        .quick = quick, .progress = talk->shown ? progress : NULL, .user = talk};
    for (size_t i = 0; i < N_TABLE_DTYPES; i++) {
        char line[RF_ERR_MSG_MAX + 64];
        int skipped = 0;
        if (!(more[i] = calloc(1, sizeof *more[i]))) {
            rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
            goto out;
        }
        rf_status st = rf_cuda_calib_gemm_dtype(cu, &o, table_dtypes[i], more[i], &skipped, &e);
        if (talk->shown)
            fprintf(ctx->io->err, "\r%-80s\r", "");
        if (st == RF_ENOMEM || st == RF_EIO) {
            rc = cli_fail_err(ctx, &e);
            goto out;
        }
        if (st != RF_OK) { /* unavailable, or a result that failed its check */
            snprintf(line, sizeof line, "%s GEMMs left out of the tables: %s",
                     rf_dtype_name(table_dtypes[i]), e.msg);
            warn(ctx, talk, line);
            continue;
        }
        if (skipped) {
            snprintf(line, sizeof line,
                     "%s: %d GEMM shapes without a cuBLASLt algorithm, "
                     "left out of the tables",
                     rf_dtype_name(table_dtypes[i]), skipped);
            warn(ctx, talk, line);
        }
        parts[n++] = (rf_cuda_calib_part){table_dtypes[i], more[i]};
    }
    if (rf_cuda_calib_tables(parts, n, p->l2_bytes, &tabs, &copy, &e) != RF_OK) {
        rc = cli_fail_err(ctx, &e);
        goto out;
    }
    built = true;
    char path[4096];
    snprintf(path, sizeof path, "%s/mem_copy_perf.csv", dir);
    if (rf_gpu_tables_write(&tabs, dir, &e) != RF_OK ||
        (copy.n_rows && rf_gpu_table_write(&copy, path, &e) != RF_OK)) {
        rc = cli_fail_err(ctx, &e);
        goto out;
    }
    size_t len = (size_t)snprintf(written, cap,
                                  "kernel tables written to %s (--calibration %s "
                                  "reads them):",
                                  dir, dir);
    for (int k = 0; k < RF_GPU_KIND_COUNT && len < cap; k++)
        if (tabs.t[k].n_rows)
            len += (size_t)snprintf(written + len, cap - len, " %s (%zu rows)",
                                    rf_gpu_kind_file((rf_gpu_kind)k), tabs.t[k].n_rows);
    if (copy.n_rows && len < cap)
        snprintf(written + len, cap - len, " mem_copy_perf.csv (%zu rows)", copy.n_rows);
out:
    if (built) {
        rf_gpu_tables_free(&tabs);
        rf_gpu_table_free(&copy);
    }
    for (size_t i = 0; i < N_TABLE_DTYPES; i++)
        free(more[i]);
    return rc;
}

/* -o DIR of --calibrate: refused when it names something that is not a
 * folder, before any work. */
static int check_dir(const cli_ctx *ctx, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "-o %s: with --device cuda --calibrate, -o names a "
                        "folder (the kernel tables and profile.json); %s is "
                        "not one",
                        dir, dir);
    if (strlen(dir) > 3000)
        return cli_fail(ctx, RF_EXIT_USAGE, "-o: a folder name of %zu characters is too long",
                        strlen(dir));
    return RF_EXIT_OK;
}

int cli_cuda_measure(cli_ctx *ctx, const char *device, bool quick, bool calibrate_too,
                     rf_hw_profile *p)
{
    rf_cuda_ctx *cu = NULL;
    rf_report *r = NULL;
    rf_err e;
    const char *dir = NULL, *out_path = ctx->out_path;
    char profile_path[4096], written[1024] = "";
    if (calibrate_too && out_path && strcmp(out_path, "-")) {
        int rc = check_dir(ctx, out_path);
        if (rc)
            return rc;
        dir = out_path;
        snprintf(profile_path, sizeof profile_path, "%s/profile.json", dir);
    }
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
    if (dir && (rc = write_tables(ctx, cu, &talk, quick, p, dir, written, sizeof written)))
        goto out;
    if (dir)
        ctx->out_path = profile_path; /* the profile beside the tables */
    if ((rc = cli_profile_json(ctx, p, &printed)) || printed)
        goto out;
    if (!(r = measure_report(p, rf_cuda_ctx_device(cu), quick, dim))) {
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    cli_cuda_talk_report(&talk, r);
    if (*written)
        rf_report_note(r, "%s", written);
    rc = cli_profile_emit(ctx, r);
out:
    ctx->out_path = out_path;
    rf_report_free(r);
    rf_cuda_ctx_free(cu);
    return rc;
}

/* ---- measure --compare-calibration A B ------------------------------------ */

int cli_calibration_compare(cli_ctx *ctx, const char *a_dir, int n, char **pos, bool other)
{
    rf_gpu_tables a, b;
    rf_gpu_cmp_row *rows = NULL;
    double *scratch = NULL;
    rf_report *r = NULL;
    rf_gpu_cmp cmp;
    rf_err e;
    if (other)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--compare-calibration reads two folders and times "
                        "nothing: give it with --hw, --json, -o alone");
    if (n != 1)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--compare-calibration %s: give one folder B to "
                        "compare it with (%d given)",
                        a_dir, n);
    int rc = cli_refuse_unused(ctx, CLI_G_FAMILY | CLI_G_DTYPES,
                               "--compare-calibration reads two folders of tables: no MODEL, "
                               "their dtypes are the tables' own");
    if (rc || (rc = cli_resolve_hw(ctx)))
        return rc;
    if (rf_gpu_tables_load(a_dir, &ctx->hw, &a, &e))
        return cli_fail_err(ctx, &e);
    if (rf_gpu_tables_load(pos[0], &ctx->hw, &b, &e)) {
        rf_gpu_tables_free(&a);
        return cli_fail_err(ctx, &e);
    }
    size_t len = rf_gpu_compare_len(&a);
    rows = calloc(len + 1, sizeof *rows);
    scratch = calloc(len + 1, sizeof *scratch);
    if (!rows || !scratch)
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    else if (rf_gpu_compare(&a, &b, rows, scratch, len, &cmp, &e))
        rc = cli_fail_err(ctx, &e);
    else if (!(r = rf_view_gpu_compare(ctx->hw_origin, a_dir, pos[0], &a, &cmp)))
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    else
        rc = cli_emit(ctx, r);
    rf_report_free(r);
    free(rows);
    free(scratch);
    rf_gpu_tables_free(&a);
    rf_gpu_tables_free(&b);
    return rc;
}
