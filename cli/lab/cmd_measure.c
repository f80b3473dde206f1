/* cmd_measure.c - `roofline measure`: this machine's real roofline, written
 * as a profile that --hw accepts. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure_mpi.h"
#include "lab_view.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_measure_calib.h"

enum {
    O_THREADS = 1000,
    O_QUICK,
    O_ISA,
    O_DEVICE,
    O_MPI,
    O_TIMEOUT,
    O_CALIBRATE,
    O_MERGE,
    O_COMPARE
};

static const cli_opt opts[] = {
    {"threads", 1, O_THREADS, "N", "threads, pinned one per core (default: one per core)"},
    {"quick", 0, O_QUICK, NULL, "fewer sizes and shorter trials (about 5 s)"},
    {"isa", 1, O_ISA, "NAME",
     "kernels: scalar, sse, avx2, avx512 (default: best by cpuid; "
     "or RF_ISA)"},
    {"device", 1, O_DEVICE, "DEV", "cpu (default); cuda[:N] needs the CUDA backend"},
    {"mpi", 0, O_MPI, NULL,
     "a cluster, under mpirun -np N: node roofs and the links between ranks"},
    {"timeout", 1, O_TIMEOUT, "S", "with --mpi: a rank still running after S seconds fails"},
    {"calibrate", 0, O_CALIBRATE, NULL,
     "also time GEMMs, attention and element-wise kernels "
     "over their shapes and fit them, for predictions (at "
     "most 90 s; quick: 30 s); with --device cuda and -o "
     "DIR, also as kernel tables in DIR"},
    {"merge", 1, O_MERGE, "PROFILE",
     "pool an earlier run of this machine: the higher roofs "
     "and peaks, the bursts of both"},
    {"compare-calibration", 1, O_COMPARE, "A",
     "kernel tables of folder A against those of "
     "folder B (the argument), row by row; floors on "
     "--hw; times nothing"},
    {0},
};

typedef struct args {
    int64_t threads;
    bool quick;
    const char *isa;
    const char *device;
    bool mpi;
    double timeout_s;
    bool calibrate;
    const char *merge;
    const char *compare; /* --compare-calibration A */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_THREADS:
        return cli_i64(ctx, "--threads", arg, 1, 4096, &a->threads);
    case O_QUICK:
        a->quick = true;
        return RF_EXIT_OK;
    case O_ISA:
        if (!*arg)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--isa: empty (give scalar, sse, avx2 or avx512, "
                            "or leave it out for the best by cpuid)");
        a->isa = arg;
        return RF_EXIT_OK;
    case O_MPI:
        a->mpi = true;
        return RF_EXIT_OK;
    case O_CALIBRATE:
        a->calibrate = true;
        return RF_EXIT_OK;
    case O_TIMEOUT:
        return cli_f64(ctx, "--timeout", arg, 1e-3, 1e6, &a->timeout_s);
    case O_MERGE:
        a->merge = arg;
        return RF_EXIT_OK;
    case O_COMPARE:
        a->compare = arg;
        return RF_EXIT_OK;
    default:
        a->device = arg;
        return RF_EXIT_OK;
    }
}

/* Progress on the command's error stream (user), one line rewritten in
 * place, only on a terminal. */
static void progress(void *user, int done, int total, const char *what)
{
    fprintf(user, "\r  measuring [%2d/%2d] %-40s", done + 1, total, what);
    fflush(user);
}

static void calib_progress(void *user, int done, int total, const char *what)
{
    fprintf(user, "\r  calibrating [%3d/%3d] %-44s", done + 1, total, what);
    fflush(user);
}

/* --calibrate: rf_calibrate_cpu on p's roof with progress on a terminal;
 * fills p->calib. An exit code. */
static int calibrate(const cli_ctx *ctx, rf_hw_profile *p, bool quick, const char *isa)
{
    bool tty = ctx->io->err_tty;
    rf_calibrate_opts o = {.threads = p->threads > 0 ? p->threads : 1,
                           .quick = quick,
                           .isa = isa,
                           .progress = tty ? calib_progress : NULL,
                           .progress_user = ctx->io->err};
    rf_err e;
    rf_status s = rf_calibrate_cpu(&o, p, &e);
    if (tty)
        fprintf(ctx->io->err, "\r%-76s\r", "");
    return s == RF_OK ? RF_EXIT_OK : cli_fail_err(ctx, &e);
}

static void level_table(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s)
{
    rf_report_table(r, "levels",
                    "memory levels (found by sweeping the working set; best of trials)");
    rf_report_col(r, "level", "level", RF_U_NONE);
    rf_report_col(r, "bytes", "working set", RF_U_BYTES_BIN);
    for (int b = 0; b < RF_BW_COUNT; b++)
        rf_report_col(r, rf_bw_desc_of((rf_bw_kind)b)->op, rf_bw_desc_of((rf_bw_kind)b)->op,
                      RF_U_BW);
    rf_report_col(r, "ridge_fp32", "ridge fp32", RF_U_INTENSITY);
    rf_report_col(r, "ridge_fp64", "ridge fp64", RF_U_INTENSITY);
    for (size_t l = 0; l < p->n_levels; l++) {
        rf_report_row(r);
        rf_report_cell_str(r, p->levels[l].name);
        rf_report_cell_int(r, p->levels[l].bytes);
        for (int b = 0; b < RF_BW_COUNT; b++)
            if (s->level_rate[l][b] > 0)
                rf_report_cell_num(r, s->level_rate[l][b]);
            else
                rf_report_cell_null(r, "-");
        rf_report_cell_num(r, s->level_ridge[l][RF_FP32]);
        rf_report_cell_num(r, s->level_ridge[l][RF_FP64]);
    }
}

static rf_report *build_report(const rf_hw_profile *p, bool quick, const char *isa_from)
{
    rf_hw_profile_summary s;
    rf_hw_profile_summarize(p, &s);
    char title[256], b1[32], b2[32], b3[32];
    snprintf(title, sizeof title, "measured roofline: %s, %d thread%s, %s kernels", p->cpu,
             p->threads, p->threads == 1 ? "" : "s", p->isa);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    rf_report_assume(r,
                     "kernels: %s, %s (cpuid: %s); threads pinned one per core, each "
                     "first-touching its own part of every array",
                     p->isa, isa_from, p->flags);
    rf_report_assume(r,
                     "caches reported (one instance): L1d %s, L2 %s, L3 %s; the levels below "
                     "come from the sweep, not from these",
                     rf_fmt((double)p->cache_bytes[0], RF_U_BYTES_BIN, b1, sizeof b1),
                     rf_fmt((double)p->cache_bytes[1], RF_U_BYTES_BIN, b2, sizeof b2),
                     rf_fmt((double)p->cache_bytes[2], RF_U_BYTES_BIN, b3, sizeof b3));
    rf_report_assume(r, "bytes counted as the kernel moves them (read 8, copy 16, triad 24 B per "
                        "f64 element; no write-allocate); a working set is all arrays of all "
                        "threads");
    rf_measure_plan plan = rf_measure_plan_of(quick);
    rf_report_assume(r,
                     "timing: warm-up, repetitions calibrated to a minimum trial, then "
                     "trials: bandwidth kernels %d of >= %.0f ms; clock and FMA %d rounds of %d "
                     "of >= %.0f ms (the clock once more at the end), the dot products in %d "
                     "of them; DRAM read %d bursts of "
                     "%d of >= %.0f ms, each call reading the next 1/%d of the set; bursts "
                     "spread over the run and pooled; best = the roof, median = what a run "
                     "typically sees",
                     plan.bandwidth.trials, plan.bandwidth.min_time_s * 1e3, plan.core_bursts,
                     plan.core.trials, plan.core.min_time_s * 1e3, plan.dot_rounds,
                     plan.roof_bursts, plan.roof.trials, plan.roof.min_time_s * 1e3,
                     plan.roof_chunks);

    rf_report_section(r, "roof", "roof");
    cli_memory_roof_rows(r, p, &s); /* one memory roof, its spread beside */
    /* every dtype's peak the profile has, fp32 and fp64 first */
    rf_dtype_kind dts[RF_DTYPE_COUNT] = {RF_FP32, RF_FP64};
    size_t n = 2;
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        if (k != RF_FP32 && k != RF_FP64 && p->peak_flops_per_s[k] > 0)
            dts[n++] = (rf_dtype_kind)k;
    for (size_t i = 0; i < n; i++) {
        rf_dtype_kind k = dts[i];
        const char *dt = rf_dtype_name(k);
        char key[48], label[96];
        int ki = s.peak_kernel[k];
        snprintf(key, sizeof key, "peak_%s", dt);
        if (s.peak_is_fp32[k])
            snprintf(label, sizeof label, "%s peak (computed in fp32: fp32's)", dt);
        else
            snprintf(label, sizeof label, "%s peak (%s, measured)", dt,
                     k == RF_FP32 || k == RF_FP64 ? "FMA"
                     : ki >= 0                    ? p->kernels[ki].name
                                                  : "-");
        rf_report_num(r, key, label, p->peak_flops_per_s[k], RF_U_FLOP_RATE);
        if (s.peak_is_fp32[k]) {
            snprintf(key, sizeof key, "kernel_%s", dt);
            snprintf(label, sizeof label, "  %s with its conversions", p->kernels[ki].name);
            rf_report_num(r, key, label, p->kernels[ki].best, RF_U_FLOP_RATE);
        }
        if (p->theoretical_flops_per_s[k] > 0) {
            snprintf(key, sizeof key, "theoretical_%s", dt);
            snprintf(label, sizeof label, "%s peak at the measured clock", dt);
            rf_report_num(r, key, label, p->theoretical_flops_per_s[k], RF_U_FLOP_RATE);
            snprintf(key, sizeof key, "of_theoretical_%s", dt);
            rf_report_num(r, key, "  measured / theoretical", s.of_theoretical[k], RF_U_PERCENT);
        }
        snprintf(key, sizeof key, "ridge_%s", dt);
        snprintf(label, sizeof label, "ridge %s (FLOP/byte)", dt);
        rf_report_num(r, key, label, s.ridge[k], RF_U_INTENSITY);
    }
    rf_report_num(r, "clock_ghz", "core clock, GHz (dependent adds)", p->clock_hz / 1e9, RF_U_NONE);

    cli_memory_roofs_detail(r, p, &s);
    level_table(r, p, &s);
    cli_kernel_table(r, p, &s, "bytes_per_s", "bandwidth", "bandwidth kernels", RF_U_BW);
    cli_kernel_table(r, p, &s, "flops_per_s", "compute", "compute kernels", RF_U_FLOP_RATE);
    cli_unsteady_note(r, p, &s);
    cli_roof_moves_note(r, p, &s);
    cli_calib_tables(r, p); /* --calibrate's fit and residuals */
    return r;
}

/* --merge PROFILE: a CPU profile that loads, read before any work. */
static int load_merge(const cli_ctx *ctx, const char *path, rf_hw_profile **out)
{
    rf_hw_profile *p = malloc(sizeof *p);
    rf_err e;
    if (!p)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (rf_hw_profile_load(path, p, &e)) {
        free(p);
        return cli_fail(ctx, cli_exit_for(e.status), "--merge: %s", e.msg);
    }
    if (p->device[0] || p->cluster.ranks) {
        free(p);
        return cli_fail(ctx, RF_EXIT_USAGE, "--merge: %s is not one CPU's profile", path);
    }
    rf_cpu cpu; /* another CPU: refused now, not after the measurement */
    if (rf_cpu_query(&cpu, &e) == RF_OK && strcmp(cpu.brand, p->cpu)) {
        int rc = cli_fail(ctx, RF_EXIT_USAGE,
                          "--merge: %s was measured on another CPU ('%s', "
                          "this one '%s')",
                          path, p->cpu, cpu.brand);
        free(p);
        return rc;
    }
    *out = p;
    return RF_EXIT_OK;
}

/* The global options that change nothing here (measure times this machine:
 * it reads no roof, no dtype, no MODEL), all of them named. */
static int refuse_unused(const cli_ctx *ctx)
{
    const struct {
        bool given;
        const char *name;
    } g[] = {{ctx->hw_name != NULL, "--hw"},   {ctx->ridge > 0, "--ridge"},
             {ctx->peak_tflops > 0, "--peak"}, {ctx->bw_tbps > 0, "--bw"},
             {ctx->mem_bytes != 0, "--mem"},   {ctx->w_given, "--weight-dtype"},
             {ctx->a_given, "--act-dtype"},    {ctx->kv_given, "--kv-dtype"},
             {ctx->y_given, "--out-dtype"},    {ctx->group_size != 0, "--group-size"}};
    /* --family: cli_refuse_unused */
    char names[160] = "";
    int n = 0;
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (g[i].given) {
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", n ? ", " : "", g[i].name);
            n++;
        }
    if (!n)
        return RF_EXIT_OK;
    return cli_fail(ctx, RF_EXIT_USAGE,
                    "%s: measure times this machine and reads no roof, dtype or MODEL; %s "
                    "nothing here",
                    names, n == 1 ? "it changes" : "they change");
}

int cmd_measure(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.device = "cpu"};
    int pos, rc = cli_parse(
                 &ctx, io, argc, argv,
                 "measure [--threads N] [--quick] [--calibrate] [--isa NAME] [--merge PROFILE] "
                 "[-o PROFILE.json|DIR] [--json]; "
                 "measure --compare-calibration A B [--hw HW]",
                 (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (a.compare) /* measure_cuda.c: reads two folders, times nothing */
        return cli_calibration_compare(&ctx, a.compare, argc - pos, argv + pos,
                                       a.calibrate || a.quick || a.mpi || a.merge ||
                                           strcmp(a.device, "cpu") || a.threads || a.isa);
    if (argc - pos != 0)
        return cli_fail(&ctx, RF_EXIT_USAGE, "unexpected argument '%s'", argv[pos]);
    if ((rc = cli_refuse_unused(&ctx, CLI_G_FAMILY, "measure reads no MODEL")) ||
        (rc = refuse_unused(&ctx)))
        return rc;
    /* -o (it may name the --merge profile: rewritten in place) */
    const char *inputs[] = {NULL};
    bool to_dir = a.calibrate && strcmp(a.device, "cpu"); /* -o DIR: measure_cuda.c */
    if (!to_dir && (rc = cli_check_output(&ctx, ctx.out_path, inputs)))
        return rc;
    if (a.merge && (a.mpi || strcmp(a.device, "cpu")))
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "--merge: a CPU profile only (not with --mpi or "
                        "--device)");
    rf_hw_profile *old = NULL; /* --merge: read before the work */
    if (a.merge && (rc = load_merge(&ctx, a.merge, &old)))
        return rc;
    rf_hw_profile *p = calloc(1, sizeof *p);
    rf_report *r = NULL;
    rf_err e;
    if (!p) {
        free(old);
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    }
    if (a.timeout_s > 0 && !a.mpi) {
        rc = cli_fail(&ctx, RF_EXIT_USAGE, "--timeout: only with --mpi");
        goto out;
    }
    if (a.mpi && strcmp(a.device, "cpu")) {
        rc = cli_fail(&ctx, RF_EXIT_USAGE,
                      "--device: with --mpi each rank measures its own "
                      "GPU; give neither");
        goto out;
    }
    if (a.mpi) { /* measure_mpi.c; exit 3 without MPI */
        cli_mpi_args ma = {a.threads, a.quick, a.isa ? a.isa : getenv("RF_ISA"), a.timeout_s};
        rc = cli_mpi_measure(&ctx, &ma, p);
        goto out;
    }
    if (strcmp(a.device, "cpu")) { /* measure_cuda.c; exit 3 without a device */
        rc = cli_cuda_measure(&ctx, a.device, a.quick, a.calibrate, p);
        goto out;
    }
    rf_measure_opts mo = {
        .threads = (int)a.threads,
        .quick = a.quick,
        .isa = a.isa ? a.isa : getenv("RF_ISA"),
        .progress = io->err_tty ? progress : NULL,
        .progress_user = io->err,
    };
    rf_status st = rf_measure_cpu(&mo, p, &e);
    if (mo.progress)
        fprintf(io->err, "\r%-70s\r", "");
    if (st != RF_OK) {
        rc = cli_fail_err(&ctx, &e);
        goto out;
    }
    if (a.calibrate && (rc = calibrate(&ctx, p, a.quick, mo.isa)))
        goto out;
    if (old && rf_hw_profile_merge(old, p, &e)) {
        rc = cli_fail(&ctx, RF_EXIT_USAGE, "--merge %s: %s", a.merge, e.msg);
        goto out;
    }
    bool printed;
    if ((rc = cli_profile_json(&ctx, p, &printed)) || printed)
        goto out;
    const char *isa_from = a.isa                                   ? "forced by --isa"
                           : getenv("RF_ISA") && *getenv("RF_ISA") ? "forced by RF_ISA"
                                                                   : "the best this CPU has";
    if (!(r = build_report(p, a.quick, isa_from))) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    rc = cli_profile_emit(&ctx, r);
out:
    rf_report_free(r);
    free(p);
    free(old);
    return rc;
}
