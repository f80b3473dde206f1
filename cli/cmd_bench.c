/* cmd_bench.c - `roofline bench gemm MODEL`: the model's linear shapes
 * timed through CBLAS over M, each set against the roofline (the course
 * lesson's lab as one command). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "roofline/rf_measure.h"

/* The GEMM sweep's table (CPU and CUDA benches share it; `dtype` is a
 * column when the sweep mixes dtypes). Rows follow in column order. */
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

enum { O_TOKENS = 1000, O_DTYPE, O_THREADS, O_DEVICE, O_TRIALS };

static const cli_opt opts[] = {
    {"tokens", 1, O_TOKENS, "LIST", "tokens M (default 1,4,16,64,256,1024)"},
    {"dtype", 1, O_DTYPE, "fp32|fp64", "GEMM dtype (default fp32)"},
    {"threads", 1, O_THREADS, "N", "BLAS threads (default: one per core)"},
    {"trials", 1, O_TRIALS, "N", "timed trials per point (default: CPU, about 3 s of the "
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
    case O_DTYPE:
        if (!strcmp(arg, "fp32") || !strcmp(arg, "fp64")) {
            a->dtype = arg[2] == '3' ? RF_FP32 : RF_FP64;
            a->dtype_given = true;
            return RF_EXIT_OK;
        }
        return cli_fail(ctx, RF_EXIT_USAGE, "--dtype: '%s' is not fp32 or fp64", arg);
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

/* The CUDA hook: `--device cuda[:N]` lands here (cuda_device.c); without
 * the backend or a device it exits 3. */
static int bench_device(cli_ctx *ctx, const char *device, const args *a, const rf_model *m)
{
    return cli_cuda_bench(ctx, device, a->tokens_given ? a->tokens : NULL,
                          a->dtype_given ? &a->dtype : NULL, a->trials_given ? (int)a->trials : 0,
                          m);
}

/* Progress names the operators: the points and their shapes. */
typedef struct sweep_names {
    const rf_gemm_sweep_point *pts;
    const size_t *shape_of;
    const rf_gemm_shape *shapes;
} sweep_names;

static void sweep_progress(void *user, int pass, int passes, const rf_gemm_sweep_point *p)
{
    const sweep_names *nm = user;
    if (!p)
        fprintf(stderr, "\r  DRAM read, burst %d of %d%-50s", pass + 1, passes + 1, "");
    else
        fprintf(stderr, "\r  pass %d of %d: timing %-24s M = %-6lld %s     ", pass + 1, passes,
                nm->shapes[nm->shape_of[p - nm->pts]].ops, (long long)p->opts.m,
                p->opts.gemv ? "gemv" : "gemm");
    fflush(stderr);
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

int cmd_bench(int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.tokens = "1,4,16,64,256,1024", .dtype = RF_FP32, .trials = 3, .device = "cpu"};
    int pos, rc = cli_parse(&ctx, argc, argv,
                            "bench gemm MODEL [--tokens LIST] [--dtype fp32|fp64] [--threads N] "
                            "[--json]",
                            opts, on_opt, &a, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (argc - pos < 1 || strcmp(argv[pos], "gemm"))
        return cli_fail(&ctx, RF_EXIT_USAGE, "expected 'bench gemm MODEL' (got '%s')",
                        argc - pos < 1 ? "" : argv[pos]);
    if (argc - pos != 2)
        return cli_fail(&ctx, RF_EXIT_USAGE, "expected one MODEL after 'bench gemm'");
    rf_model m;
    if ((rc = cli_resolve_model(&ctx, argv[pos + 1], &m)))
        return rc;
    if (strcmp(a.device, "cpu"))
        return bench_device(&ctx, a.device, &a, &m);

    int64_t *toks = NULL;
    size_t nt = 0;
    rf_report *r = NULL;
    rf_gemm_sweep_point *pts = NULL;
    size_t *shape_of = NULL; /* each point's shape */
    rf_dram_sampler *sampler = NULL;
    static rf_step st;
    rf_err e;
    rf_cpu cpu;
    rf_roof roof;
    if ((rc = cli_range(&ctx, "--tokens", a.tokens, (int64_t)1 << 20, &toks, &nt)))
        goto out;
    if (rf_cpu_query(&cpu, &e)) {
        rc = cli_fail_err(&ctx, &e);
        goto out;
    }
    if (!a.threads)
        a.threads = cpu.cores;
    if ((rc = cli_measured_roof(&ctx, (int)a.threads, a.dtype, &roof)))
        goto out;

    /* The model's linear shapes: the decode step's GEMMs, de-duplicated. */
    rf_step_opts so = rf_step_opts_default();
    so.w = so.a = so.kv = rf_dtype_of(a.dtype);
    if (rf_step_compute(&m, &so, &roof, &st, &e)) {
        rc = cli_fail_err(&ctx, &e);
        goto out;
    }
    rf_gemm_shape shapes[RF_STEP_MAX_OPS];
    size_t n_shapes = rf_step_gemm_shapes(&st, shapes, RF_STEP_MAX_OPS);

    char title[256];
    snprintf(title, sizeof title, "GEMM sweep: %s linear shapes, %s, OpenBLAS on %lld thread%s",
             m.name, rf_dtype_name(a.dtype), (long long)a.threads, a.threads == 1 ? "" : "s");
    if (!(r = rf_report_new(title))) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    uint64_t cold_bytes = rf_cpu_cold_bytes(&cpu);

    /* Every point in table order: each shape at each M, at M = 1 the GEMV
     * too. When the roof was measured now, the DRAM read is sampled again
     * between passes, so the memory roof and the GEMVs set against it see
     * the same moments of this shared machine. */
    pts = calloc(n_shapes * nt * 2 + 1, sizeof *pts);
    shape_of = calloc(n_shapes * nt * 2 + 1, sizeof *shape_of);
    if (!pts || !shape_of) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    size_t n_pts = 0;
    for (size_t s = 0; s < n_shapes; s++)
        for (size_t t = 0; t < nt; t++)
            for (int gemv = 0; gemv < (toks[t] == 1 ? 2 : 1); gemv++) {
                shape_of[n_pts] = s;
                pts[n_pts++].opts = (rf_gemm_bench_opts){
                    .m = toks[t], .k = shapes[s].k, .n = shapes[s].n, .dtype = a.dtype,
                    .gemv = gemv, .threads = (int)a.threads, .cold_bytes = cold_bytes};
            }
    if (!ctx.hw_name) {
        rf_measure_opts mo = {.threads = (int)a.threads, .isa = getenv("RF_ISA")};
        if (rf_dram_sampler_open(&mo, &sampler, &e)) {
            rc = cli_fail_err(&ctx, &e);
            goto out;
        }
    }
    sweep_names names = {pts, shape_of, shapes};
    rf_gemm_sweep_opts sw = {.roof = &roof, .trials = a.trials_given ? (int)a.trials : 0,
                             .mem_avail_bytes = cpu.mem_avail_bytes, .sampler = sampler,
                             .progress = isatty(STDERR_FILENO) ? sweep_progress : NULL,
                             .progress_user = &names};
    if (rf_gemm_sweep(&sw, pts, n_pts, &e)) {
        rc = cli_fail_err(&ctx, &e);
        goto out;
    }
    if (sw.progress)
        fprintf(stderr, "\r%-78s\r", "");
    int bursts = 0;
    const rf_measurement *dm = sampler ? rf_dram_sampler_result(sampler, &bursts) : NULL;
    if (sampler) {
        rf_dram_sampler_raise(sampler, &ctx.hw);
        if (rf_hw_roof(&ctx.hw, a.dtype, &roof, &e)) {
            rc = cli_fail_err(&ctx, &e);
            goto out;
        }
    }
    char pk[32], bw[32], cold[32];
    rf_report_assume(r, "roof: %s: %s %s, %s, ridge %.1f FLOP/byte", ctx.hw_origin,
                     rf_fmt(roof.peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk),
                     rf_dtype_name(a.dtype), rf_fmt(roof.bw_bytes_per_s, RF_U_BW, bw, sizeof bw),
                     roof.ridge);
    if (dm) {
        char bb[32];
        rf_report_assume(r, "DRAM read sampled again beside the GEMMs: %d bursts of %zu trials, "
                            "before each pass and after the last, best %s; the memory roof is "
                            "the better of it and the --quick figure",
                         bursts, dm->rate.n / (size_t)bursts,
                         rf_fmt(dm->rate.best, RF_U_BW, bb, sizeof bb));
    }
    const char *gemm_name = a.dtype == RF_FP32 ? "cblas_sgemm" : "cblas_dgemm";
    rf_report_assume(r, "Y[M,N] = X[M,K] W^T with W stored [N,K] as nn.Linear stores it; F = 2 M "
                        "K N, Q = (M K + K N + M N) b; at M = 1 %s is timed too",
                     a.dtype == RF_FP32 ? "cblas_sgemv" : "cblas_dgemv");
    char trials_text[64];
    if (a.trials_given)
        snprintf(trials_text, sizeof trials_text, "%lld", (long long)a.trials);
    else
        snprintf(trials_text, sizeof trials_text,
                 "%d to %d (about %.0f s of the call's roofline time)", RF_GEMM_TRIALS_MIN,
                 RF_GEMM_TRIALS_MAX, RF_GEMM_TRIAL_BUDGET_S);
    rf_report_assume(r, "W rotated over copies totalling >= %s (16 x the reported last-level "
                        "cache), so no call finds its weights in cache; best of %s trials of >= "
                        "%.0f ms after a warm-up, a point with %d or more timed in %d passes over "
                        "the sweep and pooled; %% of roof = best / roofline",
                     rf_fmt((double)cold_bytes, RF_U_BYTES_BIN, cold, sizeof cold), trials_text,
                     RF_GEMM_MIN_TRIAL_S * 1e3, 2 * RF_GEMM_SWEEP_PASSES, RF_GEMM_SWEEP_PASSES);
    cli_gemm_table(r, false);

    rf_gemm_placed *placed = calloc(n_pts + 1, sizeof *placed);
    if (!placed) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n_pts; i++) {
        const rf_gemm_shape *sh = &shapes[shape_of[i]];
        const rf_gemm_bench_result *g = &pts[i].result;
        if (g->scaled)
            rf_report_note(r, "note: %s scaled down to N = %lld (from %lld) at M = %lld to fit "
                              "in the memory this run may use",
                           sh->ops, (long long)g->n, (long long)sh->n, (long long)g->m);
        rf_gemm_place(g, &roof, &placed[i]);
        row(r, sh, g, &placed[i]);
    }
    rf_report_note(r, "memory roof of a GEMV: bandwidth x 2/b = %s x %s FLOP/byte", bw,
                   a.dtype == RF_FP32 ? "0.5" : "0.25");
    /* a GEMV point follows the GEMM at M = 1 of its shape */
    for (size_t i = 1; i < n_pts; i++)
        if (pts[i].opts.gemv)
            rf_report_note(r, "M = 1 %-22s %s at %.2f x bandwidth x 2/b: %s; %s at %.2f x",
                           shapes[shape_of[i]].ops, pts[i].result.routine, placed[i].of_bw_2b,
                           m1_verdict(placed[i].of_bw_2b), gemm_name, placed[i - 1].of_bw_2b);
    for (size_t i = 0; i < n_pts; i++)
        if (pts[i].opts.m >= 1024)
            rf_report_note(r, "M = %lld %-22s %s: %.1f%% of the %s peak%s",
                           (long long)pts[i].opts.m, shapes[shape_of[i]].ops,
                           pts[i].result.routine, 100 * placed[i].of_peak, rf_dtype_name(a.dtype),
                           placed[i].of_peak >= 0.7 ? " (>= 70%)" : " (below 70%)");
    free(placed);
    rc = cli_emit(&ctx, r);
out:
    rf_dram_sampler_close(sampler);
    free(toks);
    free(pts);
    free(shape_of);
    rf_report_free(r);
    return rc;
}
