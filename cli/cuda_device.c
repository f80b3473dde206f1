/* cuda_device.c - the `--device cuda[:N]` branch of `measure` and of
 * `bench gemm`: open the device, run the CUDA backend (rf_cuda.h), build
 * the report. Figures all come from the library; this file only lays them
 * out. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "roofline/rf_cuda.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_measured.h"
#include "roofline/rf_hw_profile.h"

#define CUDA_TOKENS "1,16,64,256,1024,4096,16384"

#define CUDA_NOTES 8

/* What a measurement tells the user while it runs: progress on a terminal,
 * and notes (a dtype left out and why) kept for stderr and the report. */
typedef struct cuda_talk {
    const char *device;
    bool shown;                               /* stderr is a terminal       */
    char notes[CUDA_NOTES][RF_ERR_MSG_MAX + 64];
    int n_notes;
} cuda_talk;

static void progress(void *user, const char *stage)
{
    const cuda_talk *t = user;
    fprintf(stderr, "\r  %s: %-66.66s", t->device, stage);
    fflush(stderr);
}

static void note(void *user, const char *line)
{
    cuda_talk *t = user;
    if (t->n_notes < CUDA_NOTES)
        snprintf(t->notes[t->n_notes++], sizeof t->notes[0], "%s", line);
}

static rf_cuda_measure_opts talk_opts(cuda_talk *t, const char *device, bool quick)
{
    *t = (cuda_talk){.device = device, .shown = isatty(STDERR_FILENO)};
    return (rf_cuda_measure_opts){.quick = quick, .progress = t->shown ? progress : NULL,
                                  .note = note, .user = t};
}

/* Clear the progress line and print the notes as warnings. */
static void talk_end(const cli_ctx *ctx, const cuda_talk *t)
{
    if (t->shown)
        fprintf(stderr, "\r%-80s\r", "");
    for (int i = 0; i < t->n_notes; i++)
        fprintf(stderr, "roofline %s: warning: %s\n", ctx->cmd, t->notes[i]);
}

static void talk_report(const cuda_talk *t, rf_report *r)
{
    for (int i = 0; i < t->n_notes; i++)
        rf_report_note(r, "warning: %s", t->notes[i]);
}

static void progress_end(bool shown)
{
    if (shown)
        fprintf(stderr, "\r%-80s\r", "");
}

/* Open the device a spec names. Prints and returns the exit code. */
static int open_device(cli_ctx *ctx, const char *spec, rf_cuda_ctx **out)
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

static rf_report *measure_report(const rf_hw_profile *p, const rf_cuda_device *d, bool quick,
                                 int64_t dim)
{
    rf_hw_profile_summary s;
    rf_hw_profile_summarize(p, &s);
    char title[256], b1[32], b2[32];
    snprintf(title, sizeof title, "measured roofline: %s, cuda:%d (%s, %d SMs)", p->device,
             d->index, p->isa, p->sm_count);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
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

    rf_report_section(r, "roof", "roof");
    rf_report_num(r, "bandwidth_bytes_per_s", "memory roof (best device-memory read)",
                  p->bandwidth_bytes_per_s, RF_U_BW);
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
        rf_report_num(r, key, label, s.ridge[k], RF_U_INTENSITY);
    }

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
    return r;
}

int cli_cuda_measure(cli_ctx *ctx, const char *device, bool quick, rf_hw_profile *p)
{
    rf_cuda_ctx *cu = NULL;
    rf_report *r = NULL;
    rf_err e;
    int rc = open_device(ctx, device, &cu);
    if (rc)
        return rc;
    cuda_talk talk;
    rf_cuda_measure_opts o = talk_opts(&talk, device, quick);
    int64_t dim = quick ? 4096 : 8192;
    o.gemm_dim = dim;
    rf_status st = rf_cuda_measure(cu, &o, p, &e);
    talk_end(ctx, &talk);
    bool printed;
    if (st != RF_OK) {
        rc = cli_fail_err(ctx, &e);
        goto out;
    }
    if ((rc = cli_profile_json(ctx, p, &printed)) || printed)
        goto out;
    if (!(r = measure_report(p, rf_cuda_ctx_device(cu), quick, dim))) {
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    talk_report(&talk, r);
    rc = cli_profile_emit(ctx, r);
out:
    rf_report_free(r);
    rf_cuda_ctx_free(cu);
    return rc;
}

/* ---- bench gemm --device cuda ------------------------------------------ */

/* The model's GEMM shapes (decode step operators, de-duplicated by K x N). */
static int shapes_of(cli_ctx *ctx, const rf_model *m, const rf_roof *roof, rf_gemm_shape *out,
                     size_t *n_out)
{
    static rf_step st;
    rf_err e;
    rf_step_opts so = rf_step_opts_default();
    so.w = so.a = so.kv = rf_dtype_of(RF_BF16);
    if (rf_step_compute(m, &so, roof, &st, &e))
        return cli_fail_err(ctx, &e);
    *n_out = rf_step_gemm_shapes(&st, out, RF_STEP_MAX_OPS);
    return RF_EXIT_OK;
}

/* The roof of each dtype: --hw (a preset or a profile file), else the
 * device measured now with --quick for the dtypes swept. The first dtype
 * must have one; a later one without (a profile measured without fp8) is
 * dropped from the sweep, and *dropped says so. */
static int bench_roofs(cli_ctx *ctx, rf_cuda_ctx *cu, cuda_talk *talk, rf_dtype_kind *dts,
                       size_t *n_dts, rf_roof *roofs, char *dropped, size_t cap)
{
    rf_err e;
    const char *device = talk->device;
    if (!ctx->hw_name) {
        rf_hw_profile *p = calloc(1, sizeof *p);
        if (!p)
            return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        rf_cuda_measure_opts o = talk_opts(talk, device, true);
        for (size_t i = 0; i < *n_dts; i++)
            o.dtype_mask |= 1u << dts[i];
        rf_status st = rf_cuda_measure(cu, &o, p, &e);
        talk_end(ctx, talk);
        if (st == RF_OK)
            st = rf_hw_profile_to_hw(p, &ctx->hw, &e);
        snprintf(ctx->hw_origin, sizeof ctx->hw_origin,
                 "%s measured now with --quick; --hw PROFILE.json reuses a full `roofline "
                 "measure --device %s`",
                 device, device);
        free(p);
        if (st != RF_OK)
            return cli_fail_err(ctx, &e);
        if (rf_hw_roof(&ctx->hw, dts[0], &roofs[0], &e))
            return cli_fail_err(ctx, &e);
    } else {
        int rc = cli_resolve_roof(ctx, dts[0], &roofs[0]);
        if (rc)
            return rc;
    }
    size_t kept = 1;
    for (size_t i = 1; i < *n_dts; i++) {
        if (rf_hw_roof(&ctx->hw, dts[i], &roofs[kept], &e) == RF_OK)
            dts[kept++] = dts[i];
        else
            snprintf(dropped, cap, "%s not swept: %s", rf_dtype_name(dts[i]), e.msg);
    }
    *n_dts = kept;
    return RF_EXIT_OK;
}

/* For `roofline plot --measured` (rf_measured.h): the first dtype's cuBLASLt
 * points as operators of a decode step. At M = 1 a point takes its first
 * operator's name, so it joins that operator's prediction at batch 1; other
 * M are named "q_proj M=256" and drawn on their own. */
static void overlay_table(rf_report *r, const rf_gemm_shape *shapes, const rf_cuda_gemm_result *g,
                          const size_t *shape_of, size_t n)
{
    rf_report_table(r, "ops", "measured operators (roofline plot --measured)");
    rf_report_col(r, "name", "name", RF_U_NONE);
    rf_report_col(r, "phase", "phase", RF_U_NONE);
    rf_report_col(r, "flops", "FLOPs", RF_U_FLOPS);
    rf_report_col(r, "bytes", "bytes", RF_U_BYTES);
    rf_report_col(r, "measured_s", "time (median)", RF_U_SECONDS);
    for (size_t i = 0; i < n; i++) {
        char name[48];
        const char *ops = shapes[shape_of[i]].ops;
        int first = (int)strcspn(ops, ",");
        if (g[i].m == 1)
            snprintf(name, sizeof name, "%.*s", first, ops);
        else
            snprintf(name, sizeof name, "%.*s M=%lld", first, ops, (long long)g[i].m);
        rf_report_row(r);
        rf_report_cell_str(r, name);
        rf_report_cell_str(r, "decode");
        rf_report_cell_int(r, g[i].flops);
        rf_report_cell_int(r, g[i].bytes);
        rf_report_cell_num(r, g[i].time_s_median);
    }
}

static void bench_row(rf_report *r, const rf_gemm_shape *sh, const rf_cuda_gemm_result *g)
{
    rf_report_row(r);
    rf_report_cell_str(r, sh->ops);
    rf_report_cell_str(r, rf_dtype_name(g->dtype));
    rf_report_cell_int(r, (uint64_t)g->m);
    rf_report_cell_int(r, (uint64_t)g->k);
    rf_report_cell_int(r, (uint64_t)g->n);
    rf_report_cell_str(r, rf_cuda_gemm_impl_name(g->impl));
    rf_report_cell_num(r, g->time_s_median);
    rf_report_cell_num(r, g->flops_per_s.median);
    rf_report_cell_num(r, g->flops_per_s.best);
    rf_report_cell_num(r, g->bw_bytes_per_s.best);
    rf_report_cell_num(r, g->intensity);
    rf_report_cell_num(r, g->roof_flops_per_s);
    rf_report_cell_num(r, g->of_roof);
    rf_report_cell_str(r, rf_regime_name(g->regime));
}

int cli_cuda_bench(cli_ctx *ctx, const char *device, const char *tokens,
                   const rf_dtype_kind *dtype, int trials, const rf_model *m)
{
    rf_cuda_ctx *cu = NULL;
    rf_report *r = NULL;
    int64_t *toks = NULL;
    size_t nt = 0, n_shapes = 0, n_dts = 0;
    rf_dtype_kind dts[2];
    rf_roof roofs[2];
    rf_gemm_shape shapes[RF_STEP_MAX_OPS];
    rf_cuda_gemm_result *kept = NULL; /* the overlay's points */
    size_t *kept_shape = NULL;
    rf_err e;
    if (trials > RF_CUDA_MAX_TRIALS)
        return cli_fail(ctx, RF_EXIT_USAGE, "--trials: the CUDA sweep takes at most %d",
                        RF_CUDA_MAX_TRIALS);
    int rc = cli_range(ctx, "--tokens", tokens ? tokens : CUDA_TOKENS, (int64_t)1 << 20, &toks,
                       &nt);
    if (rc)
        return rc;
    if ((rc = open_device(ctx, device, &cu)))
        goto out;
    if (dtype) {
        dts[n_dts++] = *dtype;
    } else {
        dts[n_dts++] = RF_BF16;
        if (rf_cuda_gemm_supported(cu, RF_CUDA_GEMM_CUBLASLT, RF_FP8_E4M3, 16, &e) == RF_OK)
            dts[n_dts++] = RF_FP8_E4M3;
    }
    for (size_t i = 0; i < n_dts; i++)
        if (rf_cuda_gemm_supported(cu, RF_CUDA_GEMM_CUBLASLT, dts[i], 16, &e)) {
            rc = cli_fail_err(ctx, &e);
            goto out;
        }
    char dropped[RF_ERR_MSG_MAX + 32] = "";
    cuda_talk talk = {.device = device};
    if ((rc = bench_roofs(ctx, cu, &talk, dts, &n_dts, roofs, dropped, sizeof dropped)))
        goto out;
    if ((rc = shapes_of(ctx, m, &roofs[0], shapes, &n_shapes)))
        goto out;

    const rf_cuda_device *d = rf_cuda_ctx_device(cu);
    char title[256], pk[32], bw[32];
    snprintf(title, sizeof title, "GEMM sweep: %.96s linear shapes on %.96s (cuda:%d), cuBLASLt",
             m->name, d->name, d->index);
    if (!(r = rf_report_new(title))) {
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n_dts; i++)
        rf_report_assume(r, "roof %s: %s: %s, %s, ridge %.1f FLOP/byte", rf_dtype_name(dts[i]),
                         ctx->hw_origin,
                         rf_fmt(roofs[i].peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk),
                         rf_fmt(roofs[i].bw_bytes_per_s, RF_U_BW, bw, sizeof bw), roofs[i].ridge);
    rf_cuda_timing t = rf_cuda_timing_default(false);
    if (trials) /* --trials; else the library's default */
        t.trials = trials;
    rf_report_assume(r, "Y[M,N] = X[M,K] W^T with W stored [N,K] as nn.Linear stores it; F = 2 M "
                        "K N, Q = (M K + N K) b_in + M N b_out (fp8 e4m3 writes bf16); at M = 1 "
                        "bf16 our gemv kernel is timed too");
    rf_report_assume(r, "buffers rotated over copies totalling >= 4 x L2, fresh random inputs per "
                        "shape, results spot-checked against a CPU reference; CUDA-graph timing, "
                        "median of %d trials; of roof = best / roofline",
                     t.trials);
    talk_report(&talk, r);
    if (dropped[0])
        rf_report_note(r, "%s", dropped);
    cli_gemm_table(r, true);

    rf_err failed = {.status = RF_OK, .msg = ""};
    bool shown = isatty(STDERR_FILENO);
    size_t n_kept = 0;
    kept = calloc(n_shapes * nt, sizeof *kept);
    kept_shape = calloc(n_shapes * nt, sizeof *kept_shape);
    if (!kept || !kept_shape) {
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    for (size_t s = 0; s < n_shapes; s++)
        for (size_t di = 0; di < n_dts; di++)
            for (size_t ti = 0; ti < nt; ti++)
                for (int impl = 0; impl < RF_CUDA_GEMM_IMPL_COUNT; impl++) {
                    rf_cuda_gemm_result g;
                    if (impl == RF_CUDA_GEMM_GEMV && !(toks[ti] == 1 && dts[di] == RF_BF16))
                        continue;
                    if (shown)
                        fprintf(stderr, "\r  timing %-24.24s %-8s M = %-6lld %-8s", shapes[s].ops,
                                rf_dtype_name(dts[di]), (long long)toks[ti],
                                rf_cuda_gemm_impl_name((rf_cuda_gemm_impl)impl));
                    rf_status st = rf_cuda_gemm_time(cu, (rf_cuda_gemm_impl)impl, dts[di],
                                                     toks[ti], shapes[s].k, shapes[s].n, &t,
                                                     &roofs[di], &g, &e);
                    if (st == RF_EUNAVAIL || st == RF_ENOMEM) {
                        rf_report_note(r, "not run: %s", e.msg);
                        continue;
                    }
                    if (st != RF_OK) { /* the other points still run; exit 1 at the end */
                        rf_report_note(r, "FAILED: %s", e.msg);
                        failed = e;
                        continue;
                    }
                    bench_row(r, &shapes[s], &g);
                    if (di == 0 && impl == RF_CUDA_GEMM_CUBLASLT) {
                        kept_shape[n_kept] = s;
                        kept[n_kept++] = g;
                    }
                    if (toks[ti] == 1)
                        rf_report_note(r, "M = 1 %s %s %s: %s = %.0f%% of the memory roof",
                                       rf_dtype_name(dts[di]), shapes[s].ops,
                                       rf_cuda_gemm_impl_name(g.impl),
                                       rf_fmt(g.bw_bytes_per_s.best, RF_U_BW, bw, sizeof bw),
                                       100 * g.of_roof);
                }
    progress_end(shown);
    if (ctx->format == RF_FMT_JSON) {
        if (n_kept > RF_MEASURED_MAX_OPS)
            rf_report_note(r, "ops: the first %d of %zu points (roofline plot --measured reads "
                              "at most %d)",
                           RF_MEASURED_MAX_OPS, n_kept, RF_MEASURED_MAX_OPS);
        overlay_table(r, shapes, kept, kept_shape,
                      n_kept < RF_MEASURED_MAX_OPS ? n_kept : RF_MEASURED_MAX_OPS);
    }
    rc = cli_emit(ctx, r);
    if (!rc && failed.msg[0])
        rc = cli_fail_err(ctx, &failed);
out:
    free(toks);
    free(kept);
    free(kept_shape);
    rf_report_free(r);
    rf_cuda_ctx_free(cu);
    return rc;
}
