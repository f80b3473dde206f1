/* bench_cuda.c - `bench gemm MODEL --device cuda[:N]`: the model's
 * linear shapes timed through cuBLASLt (and our bf16 GEMV at M = 1) over M,
 * each set against the device's roofline. Figures all come from the
 * library; this file only lays them out. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab_view.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_cuda.h"
#include "roofline/rf_measured.h"

#define CUDA_TOKENS "1,16,64,256,1024,4096,16384"

/* One CUDA sweep: what was resolved for it and what it keeps. */
typedef struct cuda_sweep {
    const char *device;
    const rf_model *m;
    rf_cuda_ctx *cu;
    int64_t *toks; /* M, nt of them                           */
    size_t nt;
    rf_dtype_kind dts[2]; /* swept, with their roofs                 */
    rf_roof roofs[2];
    size_t n_dts;
    char dropped[RF_ERR_MSG_MAX + 32]; /* a dtype not swept, and why         */
    rf_gemm_shape shapes[RF_STEP_MAX_OPS];
    size_t n_shapes;
    rf_cuda_timing t;
    cli_cuda_talk talk;        /* the roof's measurement, when measured   */
    rf_cuda_gemm_result *kept; /* the overlay's points, n_kept            */
    size_t *kept_shape;
    size_t n_kept;
    rf_err failed; /* the last point that failed its check    */
} cuda_sweep;

/* bf16, and fp8 e4m3 where cuBLASLt runs it, or the one --dtype gives;
 * each must run on this device. */
static int sweep_dtypes(cli_ctx *ctx, cuda_sweep *w, const rf_dtype_kind *dtype)
{
    rf_err e;
    if (dtype) {
        w->dts[w->n_dts++] = *dtype;
    } else {
        w->dts[w->n_dts++] = RF_BF16;
        if (rf_cuda_gemm_supported(w->cu, RF_CUDA_GEMM_CUBLASLT, RF_FP8_E4M3, 16, &e) == RF_OK)
            w->dts[w->n_dts++] = RF_FP8_E4M3;
    }
    for (size_t i = 0; i < w->n_dts; i++)
        if (rf_cuda_gemm_supported(w->cu, RF_CUDA_GEMM_CUBLASLT, w->dts[i], 16, &e))
            return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

/* The roof of each dtype: --hw (a preset or a profile file), else the
 * device measured now with --quick for the dtypes swept. The first dtype
 * must have one; a later one without (a profile measured without fp8) is
 * dropped from the sweep, and w->dropped says so. */
static int sweep_roofs(cli_ctx *ctx, cuda_sweep *w)
{
    rf_err e;
    if (!ctx->hw_name) {
        rf_hw_profile *p = calloc(1, sizeof *p);
        if (!p)
            return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        uint32_t mask = 0;
        for (size_t i = 0; i < w->n_dts; i++)
            mask |= 1u << w->dts[i];
        rf_status st = cli_cuda_profile(ctx, w->cu, w->device, true, mask, 0, p, &w->talk, &e);
        if (st == RF_OK)
            st = rf_hw_profile_to_hw(p, &ctx->hw, &e);
        snprintf(ctx->hw_origin, sizeof ctx->hw_origin,
                 "%s measured now with --quick; --hw PROFILE.json reuses a full `roofline "
                 "measure --device %s`",
                 w->device, w->device);
        free(p);
        if (st != RF_OK)
            return cli_fail_err(ctx, &e);
        if (rf_hw_roof(&ctx->hw, w->dts[0], &w->roofs[0], &e))
            return cli_fail_err(ctx, &e);
    } else {
        int rc = cli_resolve_roof(ctx, w->dts[0], &w->roofs[0]);
        if (rc)
            return rc;
    }
    size_t kept = 1;
    for (size_t i = 1; i < w->n_dts; i++) {
        if (rf_hw_roof(&ctx->hw, w->dts[i], &w->roofs[kept], &e) == RF_OK)
            w->dts[kept++] = w->dts[i];
        else
            snprintf(w->dropped, sizeof w->dropped, "%s not swept: %s", rf_dtype_name(w->dts[i]),
                     e.msg);
    }
    w->n_dts = kept;
    return RF_EXIT_OK;
}

/* The model's GEMM shapes (decode step operators, de-duplicated by K x N). */
static int sweep_shapes(cli_ctx *ctx, cuda_sweep *w)
{
    int rc = cli_gemm_shapes(ctx, w->m, RF_BF16, &w->roofs[0], w->shapes, &w->n_shapes);
    if (rc)
        return rc;
    w->kept = calloc(w->n_shapes * w->nt, sizeof *w->kept);
    w->kept_shape = calloc(w->n_shapes * w->nt, sizeof *w->kept_shape);
    if (!w->kept || !w->kept_shape)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    return RF_EXIT_OK;
}

/* The title, the assumption lines, the notes so far and the columns. */
static rf_report *sweep_report(const cli_ctx *ctx, const cuda_sweep *w)
{
    const rf_cuda_device *d = rf_cuda_ctx_device(w->cu);
    char title[256], pk[32], bw[32];
    snprintf(title, sizeof title, "GEMM sweep: %.96s linear shapes on %.96s (cuda:%d), cuBLASLt",
             w->m->name, d->name, d->index);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    for (size_t i = 0; i < w->n_dts; i++)
        rf_report_assume(
            r, "roof %s: %s: %s, %s, ridge %.1f FLOP/byte", rf_dtype_name(w->dts[i]),
            ctx->hw_origin, rf_fmt(w->roofs[i].peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk),
            rf_fmt(w->roofs[i].bw_bytes_per_s, RF_U_BW, bw, sizeof bw), w->roofs[i].ridge);
    rf_report_assume(r, "Y[M,N] = X[M,K] W^T with W stored [N,K] as nn.Linear stores it; F = 2 M "
                        "K N, Q = (M K + N K) b_in + M N b_out (fp8 e4m3 writes bf16); at M = 1 "
                        "bf16 our gemv kernel is timed too");
    rf_report_assume(r,
                     "buffers rotated over copies totalling >= 4 x L2, fresh random inputs per "
                     "shape, results spot-checked against a CPU reference; CUDA-graph timing, "
                     "median of %d trials; of roof = best / roofline",
                     w->t.trials);
    cli_cuda_talk_report(&w->talk, r);
    if (w->dropped[0])
        rf_report_note(r, "%s", w->dropped);
    cli_gemm_table(r, true);
    return r;
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

/* Time one point (shape s, dtype di, M toks[ti], impl) and add its row; a
 * point the device cannot run is noted, one that fails its check noted and
 * kept in w->failed (the others still run; exit 1 at the end). */
static void sweep_point(cuda_sweep *w, rf_report *r, size_t s, size_t di, size_t ti,
                        rf_cuda_gemm_impl impl)
{
    rf_cuda_gemm_result g;
    rf_err e;
    char bw[32];
    const rf_gemm_shape *sh = &w->shapes[s];
    rf_status st = rf_cuda_gemm_time(w->cu, impl, w->dts[di], w->toks[ti], sh->k, sh->n, &w->t,
                                     &w->roofs[di], &g, &e);
    if (st == RF_EUNAVAIL || st == RF_ENOMEM) {
        rf_report_note(r, "not run: %s", e.msg);
        return;
    }
    if (st != RF_OK) {
        rf_report_note(r, "FAILED: %s", e.msg);
        w->failed = e;
        return;
    }
    bench_row(r, sh, &g);
    if (di == 0 && impl == RF_CUDA_GEMM_CUBLASLT) {
        w->kept_shape[w->n_kept] = s;
        w->kept[w->n_kept++] = g;
    }
    if (w->toks[ti] == 1)
        rf_report_note(r, "M = 1 %s %s %s: %s = %.0f%% of the memory roof",
                       rf_dtype_name(w->dts[di]), sh->ops, rf_cuda_gemm_impl_name(g.impl),
                       rf_fmt(g.bw_bytes_per_s.best, RF_U_BW, bw, sizeof bw), 100 * g.of_roof);
}

/* Every shape, dtype and M through cuBLASLt, and at M = 1 in bf16 through
 * the GEMV kernel too; progress on a terminal. */
static void sweep_all(const cli_io *io, cuda_sweep *w, rf_report *r)
{
    bool shown = io->err_tty;
    for (size_t s = 0; s < w->n_shapes; s++)
        for (size_t di = 0; di < w->n_dts; di++)
            for (size_t ti = 0; ti < w->nt; ti++)
                for (int impl = 0; impl < RF_CUDA_GEMM_IMPL_COUNT; impl++) {
                    if (impl == RF_CUDA_GEMM_GEMV && !(w->toks[ti] == 1 && w->dts[di] == RF_BF16))
                        continue;
                    if (shown)
                        fprintf(io->err, "\r  timing %-24.24s %-8s M = %-6lld %-8s",
                                w->shapes[s].ops, rf_dtype_name(w->dts[di]), (long long)w->toks[ti],
                                rf_cuda_gemm_impl_name((rf_cuda_gemm_impl)impl));
                    sweep_point(w, r, s, di, ti, (rf_cuda_gemm_impl)impl);
                }
    if (shown)
        fprintf(io->err, "\r%-80s\r", "");
}

/* With --json, the first dtype's cuBLASLt points for `plot --measured`. */
static void sweep_overlay(const cli_ctx *ctx, const cuda_sweep *w, rf_report *r)
{
    if (ctx->format != RF_FMT_JSON)
        return;
    if (w->n_kept > RF_MEASURED_MAX_OPS)
        rf_report_note(r,
                       "ops: the first %d of %zu points (roofline plot --measured reads at "
                       "most %d)",
                       RF_MEASURED_MAX_OPS, w->n_kept, RF_MEASURED_MAX_OPS);
    overlay_table(r, w->shapes, w->kept, w->kept_shape,
                  w->n_kept < RF_MEASURED_MAX_OPS ? w->n_kept : RF_MEASURED_MAX_OPS);
}

int cli_cuda_bench(cli_ctx *ctx, const char *device, const char *tokens, const rf_dtype_kind *dtype,
                   int trials, const rf_model *m)
{
    if (trials > RF_CUDA_MAX_TRIALS)
        return cli_fail(ctx, RF_EXIT_USAGE, "--trials: the CUDA sweep takes at most %d",
                        RF_CUDA_MAX_TRIALS);
    cuda_sweep *w = calloc(1, sizeof *w);
    if (!w)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    *w = (cuda_sweep){
        .device = device, .m = m, .t = rf_cuda_timing_default(false), .talk = {.device = device}};
    if (trials) /* --trials; else the library's default */
        w->t.trials = trials;
    rf_report *r = NULL;
    int rc = cli_range(ctx, "--tokens", tokens ? tokens : CUDA_TOKENS, (int64_t)1 << 20, &w->toks,
                       &w->nt);
    if (!rc && !(rc = cli_cuda_open(ctx, device, &w->cu)) && !(rc = sweep_dtypes(ctx, w, dtype)) &&
        !(rc = sweep_roofs(ctx, w)) && !(rc = sweep_shapes(ctx, w))) {
        if (!(r = sweep_report(ctx, w))) {
            rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        } else {
            sweep_all(ctx->io, w, r);
            sweep_overlay(ctx, w, r);
            rc = cli_emit(ctx, r);
            if (!rc && w->failed.msg[0])
                rc = cli_fail_err(ctx, &w->failed);
        }
    }
    free(w->toks);
    free(w->kept);
    free(w->kept_shape);
    rf_report_free(r);
    rf_cuda_ctx_free(w->cu);
    free(w);
    return rc;
}
