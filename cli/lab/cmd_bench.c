/* cmd_bench.c - `roofline bench gemm MODEL`: the model's linear shapes
 * timed through CBLAS over M, each set against the roofline (the course
 * lesson's lab as one command). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab_view.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_measure.h"

enum { O_TOKENS = 1000, O_DTYPE, O_THREADS, O_DEVICE, O_TRIALS };

static const cli_opt opts[] = {
    {"tokens", 1, O_TOKENS, "LIST", "tokens M (default 1,4,16,64,256,1024)"},
    {"dtype", 1, O_DTYPE, "DT",
     "GEMM dtype: fp32 (default), fp64, bf16 where OpenBLAS has "
     "cblas_sbgemm"},
    {"threads", 1, O_THREADS, "N", "BLAS threads (default: one per core)"},
    {"trials", 1, O_TRIALS, "N",
     "timed trials per point (default: CPU, about 3 s of the "
     "call's roofline time, 3 to 15; CUDA, the backend's 7)"},
    {"device", 1, O_DEVICE, "DEV", "cpu (default); cuda[:N] needs the CUDA backend"},
    {0},
};

typedef struct args {
    const char *tokens;
    rf_dtype_kind dtype;
    int64_t threads;
    int64_t trials;
    const char *device;
    bool tokens_given, dtype_given; /* the CUDA sweep has its own defaults */
    bool trials_given;              /* else short calls get more trials       */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_TOKENS:
        a->tokens = arg;
        a->tokens_given = true;
        return RF_EXIT_OK;
    case O_DTYPE: {
        rf_dtype dt;
        rf_err e;
        if (rf_dtype_parse(arg, &dt, &e) || dt.group_size || dt.ggml)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--dtype: '%s' is not a plain dtype (fp32, fp64, "
                            "bf16, ...)",
                            arg);
        a->dtype = dt.kind;
        a->dtype_given = true;
        return RF_EXIT_OK;
    }
    case O_THREADS:
        return cli_i64(ctx, "--threads", arg, 1, 4096, &a->threads);
    case O_TRIALS:
        a->trials_given = true;
        return cli_i64(ctx, "--trials", arg, 1, RF_STATS_MAX, &a->trials);
    default:
        a->device = arg;
        return RF_EXIT_OK;
    }
}

/* Progress names the operators: the points and their shapes. */
typedef struct sweep_names {
    const rf_gemm_sweep_point *pts;
    const size_t *shape_of;
    const rf_gemm_shape *shapes;
    FILE *err; /* the command's error stream, a terminal */
} sweep_names;

static void sweep_progress(void *user, int pass, int passes, const rf_gemm_sweep_point *p)
{
    const sweep_names *nm = user;
    if (!p)
        fprintf(nm->err, "\r  DRAM read, burst %d of %d%-50s", pass + 1, passes + 1, "");
    else
        fprintf(nm->err, "\r  pass %d of %d: timing %-24s M = %-6lld %s     ", pass + 1, passes,
                nm->shapes[nm->shape_of[p - nm->pts]].ops, (long long)p->opts.m,
                p->opts.gemv ? "gemv" : "gemm");
    fflush(nm->err);
}

/* The course lesson's stretch goal: the M = 1 case at bandwidth x 2/b, within 20%. */
static const char *m1_verdict(double of_bw_2b)
{
    if (of_bw_2b > 1.2)
        return "above the memory roof by more than 20% (the roof was measured low)";
    if (of_bw_2b >= 0.8)
        return "on the memory roof (within 20%)";
    return "below the memory roof by more than 20%";
}

static void row(rf_report *r, const rf_gemm_shape *sh, const rf_gemm_bench_result *g,
                const rf_gemm_placed *p)
{
    rf_report_row(r);
    rf_report_cell_str(r, sh->ops);
    rf_report_cell_int(r, (uint64_t)g->m);
    rf_report_cell_int(r, (uint64_t)g->k);
    rf_report_cell_int(r, (uint64_t)g->n);
    rf_report_cell_str(r, g->routine);
    rf_report_cell_num(r, p->time_s_median);
    rf_report_cell_num(r, g->flops_per_s.median);
    rf_report_cell_num(r, g->flops_per_s.best);
    rf_report_cell_num(r, g->bytes_per_s.best);
    rf_report_cell_num(r, p->point.intensity);
    rf_report_cell_num(r, p->point.attainable_flops_per_s);
    rf_report_cell_num(r, p->of_roof);
    rf_report_cell_str(r, rf_regime_name(p->point.regime));
}

/* One CPU sweep: the options, what was resolved for them, the points. */
typedef struct sweep {
    args a;
    rf_model m;
    int64_t *toks; /* --tokens, nt of them                       */
    size_t nt;
    rf_cpu cpu;
    rf_roof roof;
    rf_gemm_shape shapes[RF_STEP_MAX_OPS]; /* the decode step's, distinct  */
    size_t n_shapes;
    uint64_t cold_bytes;      /* W rotated over at least this              */
    rf_gemm_sweep_point *pts; /* table order; n_pts                        */
    size_t *shape_of;         /* each point's shape                        */
    size_t n_pts;
    rf_dram_sampler *sampler; /* when the roof is measured now             */
} sweep;

/* The tokens, the CPU, the roof and the model's linear shapes (the decode
 * step's GEMMs, de-duplicated). */
static int sweep_resolve(cli_ctx *ctx, sweep *w)
{
    rf_err e;
    int rc = cli_range(ctx, "--tokens", w->a.tokens, (int64_t)1 << 20, &w->toks, &w->nt);
    if (rc)
        return rc;
    if (rf_cpu_query(&w->cpu, &e))
        return cli_fail_err(ctx, &e);
    if (!w->a.threads)
        w->a.threads = w->cpu.cores;
    if ((rc = cli_measured_roof(ctx, (int)w->a.threads, w->a.dtype, &w->roof)))
        return rc;
    if ((rc = cli_gemm_shapes(ctx, &w->m, w->a.dtype, &w->roof, w->shapes, &w->n_shapes)))
        return rc;
    w->cold_bytes = rf_cpu_cold_bytes(&w->cpu);
    return RF_EXIT_OK;
}

/* Every point in table order: each shape at each M, at M = 1 the GEMV
 * too. */
static int sweep_points(cli_ctx *ctx, sweep *w)
{
    w->pts = calloc(w->n_shapes * w->nt * 2 + 1, sizeof *w->pts);
    w->shape_of = calloc(w->n_shapes * w->nt * 2 + 1, sizeof *w->shape_of);
    if (!w->pts || !w->shape_of)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    for (size_t s = 0; s < w->n_shapes; s++)
        for (size_t t = 0; t < w->nt; t++)
            for (int gemv = 0; gemv < (w->toks[t] == 1 ? 2 : 1); gemv++) {
                w->shape_of[w->n_pts] = s;
                w->pts[w->n_pts++].opts = (rf_gemm_bench_opts){.m = w->toks[t],
                                                               .k = w->shapes[s].k,
                                                               .n = w->shapes[s].n,
                                                               .dtype = w->a.dtype,
                                                               .gemv = gemv,
                                                               .threads = (int)w->a.threads,
                                                               .cold_bytes = w->cold_bytes};
            }
    return RF_EXIT_OK;
}

/* Time the points. When the roof was measured now, the DRAM read is
 * sampled again between passes, so the memory roof and the GEMVs set
 * against it see the same moments of this shared machine, and the roof is
 * raised to the best it showed. */
static int sweep_run(cli_ctx *ctx, sweep *w)
{
    rf_err e;
    if (!ctx->hw_name) {
        rf_measure_opts mo = {.threads = (int)w->a.threads, .isa = getenv("RF_ISA")};
        if (rf_dram_sampler_open(&mo, &w->sampler, &e))
            return cli_fail_err(ctx, &e);
    }
    sweep_names names = {w->pts, w->shape_of, w->shapes, ctx->io->err};
    rf_gemm_sweep_opts sw = {.roof = &w->roof,
                             .trials = w->a.trials_given ? (int)w->a.trials : 0,
                             .mem_avail_bytes = w->cpu.mem_avail_bytes,
                             .sampler = w->sampler,
                             .progress = ctx->io->err_tty ? sweep_progress : NULL,
                             .progress_user = &names};
    if (rf_gemm_sweep(&sw, w->pts, w->n_pts, &e))
        return cli_fail_err(ctx, &e);
    if (sw.progress)
        fprintf(ctx->io->err, "\r%-78s\r", "");
    if (w->sampler) {
        rf_dram_sampler_raise(w->sampler, &ctx->hw);
        if (rf_hw_roof(&ctx->hw, w->a.dtype, &w->roof, &e))
            return cli_fail_err(ctx, &e);
    }
    return RF_EXIT_OK;
}

/* The title, the assumption lines and the table's columns. */
static rf_report *sweep_report(const cli_ctx *ctx, const sweep *w)
{
    char title[256], pk[32], bw[32], cold[32], trials[64];
    const args *a = &w->a;
    snprintf(title, sizeof title, "GEMM sweep: %s linear shapes, %s, OpenBLAS on %lld thread%s",
             w->m.name, rf_dtype_name(a->dtype), (long long)a->threads, a->threads == 1 ? "" : "s");
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    rf_report_assume(r, "roof: %s: %s %s, %s, ridge %.1f FLOP/byte", ctx->hw_origin,
                     rf_fmt(w->roof.peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk),
                     rf_dtype_name(a->dtype),
                     rf_fmt(w->roof.bw_bytes_per_s, RF_U_BW, bw, sizeof bw), w->roof.ridge);
    int bursts = 0;
    const rf_measurement *dm = w->sampler ? rf_dram_sampler_result(w->sampler, &bursts) : NULL;
    if (dm)
        rf_report_assume(r,
                         "DRAM read sampled again beside the GEMMs: %d bursts of %zu trials, "
                         "before each pass and after the last, best %s; the memory roof is "
                         "the better of it and the --quick figure",
                         bursts, dm->rate.n / (size_t)bursts,
                         rf_fmt(dm->rate.best, RF_U_BW, pk, sizeof pk));
    rf_report_assume(r,
                     "Y[M,N] = X[M,K] W^T with W stored [N,K] as nn.Linear stores it; F = 2 M "
                     "K N, Q = (M K + K N + M N) b; at M = 1 %s is timed too",
                     rf_gemm_routine(a->dtype, true));
    if (a->trials_given)
        snprintf(trials, sizeof trials, "%lld", (long long)a->trials);
    else
        snprintf(trials, sizeof trials, "%d to %d (about %.0f s of the call's roofline time)",
                 RF_GEMM_TRIALS_MIN, RF_GEMM_TRIALS_MAX, RF_GEMM_TRIAL_BUDGET_S);
    rf_report_assume(r,
                     "W rotated over copies totalling >= %s (16 x the reported last-level "
                     "cache), so no call finds its weights in cache; best of %s trials of >= "
                     "%.0f ms after a warm-up, a point with %d or more timed in %d passes over "
                     "the sweep and pooled; %% of roof = best / roofline",
                     rf_fmt((double)w->cold_bytes, RF_U_BYTES_BIN, cold, sizeof cold), trials,
                     RF_GEMM_MIN_TRIAL_S * 1e3, 2 * RF_GEMM_SWEEP_PASSES, RF_GEMM_SWEEP_PASSES);
    cli_gemm_table(r, false);
    return r;
}

/* The rows, each point placed on the roof, then the notes: the memory roof
 * of a GEMV, each M = 1 against it (a GEMV point follows the GEMM at M = 1
 * of its shape), each M >= 1024 against the peak. */
static int sweep_rows(const cli_ctx *ctx, const sweep *w, rf_report *r)
{
    rf_gemm_placed *placed = calloc(w->n_pts + 1, sizeof *placed);
    if (!placed)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    for (size_t i = 0; i < w->n_pts; i++) {
        const rf_gemm_shape *sh = &w->shapes[w->shape_of[i]];
        const rf_gemm_bench_result *g = &w->pts[i].result;
        if (g->scaled)
            rf_report_note(r,
                           "note: %s scaled down to N = %lld (from %lld) at M = %lld to fit "
                           "in the memory this run may use",
                           sh->ops, (long long)g->n, (long long)sh->n, (long long)g->m);
        rf_gemm_place(g, &w->roof, &placed[i]);
        row(r, sh, g, &placed[i]);
    }
    char bw[32];
    rf_report_note(r, "memory roof of a GEMV: bandwidth x 2/b = %s x %s FLOP/byte",
                   rf_fmt(w->roof.bw_bytes_per_s, RF_U_BW, bw, sizeof bw),
                   w->a.dtype == RF_BF16   ? "1"
                   : w->a.dtype == RF_FP32 ? "0.5"
                                           : "0.25");
    const char *gemm_name = rf_gemm_routine(w->a.dtype, false);
    for (size_t i = 1; i < w->n_pts; i++)
        if (w->pts[i].opts.gemv)
            rf_report_note(r, "M = 1 %-22s %s at %.2f x bandwidth x 2/b: %s; %s at %.2f x",
                           w->shapes[w->shape_of[i]].ops, w->pts[i].result.routine,
                           placed[i].of_bw_2b, m1_verdict(placed[i].of_bw_2b), gemm_name,
                           placed[i - 1].of_bw_2b);
    for (size_t i = 0; i < w->n_pts; i++)
        if (w->pts[i].opts.m >= 1024)
            rf_report_note(
                r, "M = %lld %-22s %s: %.1f%% of the %s peak%s", (long long)w->pts[i].opts.m,
                w->shapes[w->shape_of[i]].ops, w->pts[i].result.routine, 100 * placed[i].of_peak,
                rf_dtype_name(w->a.dtype), placed[i].of_peak >= 0.7 ? " (>= 70%)" : " (below 70%)");
    free(placed);
    return RF_EXIT_OK;
}

/* `bench gemm MODEL`: parse, then `--device cuda[:N]` goes to
 * bench_cuda.c (exit 3 without the backend or a device); the CPU sweep
 * resolves, builds its points, runs them and reports. */
int cmd_bench(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    sweep w = {
        .a = {.tokens = "1,4,16,64,256,1024", .dtype = RF_FP32, .trials = 3, .device = "cpu"}};
    rf_report *r = NULL;
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "bench gemm MODEL [--tokens LIST] [--dtype DT] [--threads N] "
                            "[--json]",
                            (const cli_opt_group[]){{opts, on_opt, &w.a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (argc - pos < 1 || strcmp(argv[pos], "gemm"))
        return cli_fail(&ctx, RF_EXIT_USAGE, "expected 'bench gemm MODEL' (got '%s')",
                        argc - pos < 1 ? "" : argv[pos]);
    if (argc - pos != 2)
        return cli_fail(&ctx, RF_EXIT_USAGE, "expected one MODEL after 'bench gemm'");
    if ((rc = cli_resolve_model(&ctx, argv[pos + 1], &w.m)))
        return rc;
    if (strcmp(w.a.device, "cpu"))
        return cli_cuda_bench(&ctx, w.a.device, w.a.tokens_given ? w.a.tokens : NULL,
                              w.a.dtype_given ? &w.a.dtype : NULL,
                              w.a.trials_given ? (int)w.a.trials : 0, &w.m);
    const char *inputs[] = {argv[pos + 1], ctx.hw_name, NULL}; /* -o, before any work */
    if ((rc = cli_check_output(&ctx, ctx.out_path, inputs)))
        return rc;
    rf_err e; /* a dtype OpenBLAS has no GEMM in: said before any work, exit 3 */
    if (rf_gemm_dtype_check(w.a.dtype, &e))
        return cli_fail(&ctx, cli_exit_for(e.status), "--dtype %s: %s", rf_dtype_name(w.a.dtype),
                        e.msg);
    if (!(rc = sweep_resolve(&ctx, &w)) && !(rc = sweep_points(&ctx, &w)) &&
        !(rc = sweep_run(&ctx, &w))) {
        if (!(r = sweep_report(&ctx, &w)))
            rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        else if (!(rc = sweep_rows(&ctx, &w, r)))
            rc = cli_emit(&ctx, r);
    }
    rf_dram_sampler_close(w.sampler);
    free(w.toks);
    free(w.pts);
    free(w.shape_of);
    rf_report_free(r);
    return rc;
}
