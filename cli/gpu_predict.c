/* gpu_predict.c - --predict on a GPU's kernel tables (gpu_predict.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_predict.h"
#include "opts.h"
#include "step_opts.h"
#include "roofline/rf_engine.h"
#include "roofline/rf_gpu_io.h"

#ifndef RF_GPU_DATA_SRC
#define RF_GPU_DATA_SRC ""
#endif
#ifndef RF_GPU_DATA_INSTALL
#define RF_GPU_DATA_INSTALL "/usr/local/share/roofline/gpu"
#endif

void cli_gpu_free(cli_ctx *ctx)
{
    cli_gpu_call *gpu = &ctx->run.gpu;
    rf_gpu_tables_free(&gpu->tables);
    memset(gpu, 0, sizeof *gpu);
}

int cli_gpu_opt(cli_ctx *ctx, int id, const char *arg)
{
    cli_gpu_call *gpu = &ctx->run.gpu;
    rf_err e;
    switch (id) {
    case CLI_O_BACKEND:
        if (rf_engine_known(arg)) /* step's on_opt takes it: cli_gpu_engine_opt */
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--backend %s: an engine calibration predicts "
                            "`step` and `generate` only (docs/llamacpp.md)",
                            arg);
        if (strcmp(arg, "vllm") && strcmp(arg, "trtllm") && strcmp(arg, "sglang"))
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--backend: unknown engine '%s' (vllm, trtllm, sglang, llamacpp)", arg);
        gpu->backend = arg;
        return RF_EXIT_OK;
    case CLI_O_CALIBRATION:
        gpu->calibration = arg;
        return RF_EXIT_OK;
    case CLI_O_QUANT:
        if (rf_gpu_quant_of(arg, &gpu->quant, &e))
            return cli_fail_err(ctx, &e);
        if (ctx->w_given || ctx->a_given)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--quant %s sets the weight and activation "
                            "dtypes: give it or --weight-dtype/--act-dtype",
                            arg);
        gpu->quant_given = true;
        ctx->w = gpu->quant.w, ctx->a = gpu->quant.a;
        ctx->w_given = ctx->a_given = true;
        return RF_EXIT_OK;
    }
    return CLI_NOT_MINE;
}

bool cli_gpu_wanted(const cli_ctx *ctx)
{
    const cli_gpu_call *gpu = &ctx->run.gpu;
    return !gpu->engine && (gpu->backend || gpu->calibration);
}

int cli_gpu_engine_opt(cli_ctx *ctx, const char *arg)
{
    ctx->run.gpu.engine = arg;
    return RF_EXIT_OK;
}

const char *cli_gpu_engine(const cli_ctx *ctx, const char **calibration)
{
    *calibration = ctx->run.gpu.calibration;
    return ctx->run.gpu.engine;
}

const char *cli_gpu_label(const cli_ctx *ctx) { return ctx->run.gpu.label; }

const rf_gpu_quant *cli_gpu_quant(const cli_ctx *ctx)
{
    const cli_gpu_call *gpu = &ctx->run.gpu;
    return gpu->quant_given ? &gpu->quant : NULL;
}

const char *cli_gpu_data_dir(void)
{
    const char *env = getenv("ROOFLINE_GPU_DATA");
    if (env && *env)
        return env;
    if (*RF_GPU_DATA_SRC && access(RF_GPU_DATA_SRC, F_OK) == 0)
        return RF_GPU_DATA_SRC;
    return RF_GPU_DATA_INSTALL;
}

/* The --hw preset's folder of tables under the data folder: the system
 * its tables measured (rf_hw_tables_system: h200 is h200_sxm), else its
 * name with '-' as '_' (a folder of your own under ROOFLINE_GPU_DATA). */
static void preset_folder(const cli_ctx *ctx, char *name, size_t cap)
{
    const char *system = rf_hw_tables_system(ctx->hw.name);
    snprintf(name, cap, "%s", system ? system : ctx->hw.name);
    for (char *c = name; *c; c++)
        *c = *c == '-' ? '_' : *c;
}

int cli_gpu_load(cli_ctx *ctx, const rf_gpu_tables **out)
{
    cli_gpu_call *gpu = &ctx->run.gpu;
    char dir[512];
    rf_err e;
    *out = NULL;
    if (gpu->loaded) {
        *out = &gpu->tables;
        return RF_EXIT_OK;
    }
    if (gpu->calibration) {
        snprintf(dir, sizeof dir, "%s", gpu->calibration);
        snprintf(gpu->label, sizeof gpu->label, "%s", gpu->calibration);
    } else if (gpu->backend) {
        char name[sizeof ctx->hw.name];
        preset_folder(ctx, name, sizeof name);
        snprintf(dir, sizeof dir, "%s/%s/%s", cli_gpu_data_dir(), name, gpu->backend);
        snprintf(gpu->label, sizeof gpu->label, "preset %s/%s", name, gpu->backend);
        if (access(dir, F_OK) != 0)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--backend %s: no kernel tables for %s (%s not found; "
                            "--calibration DIR reads your own, ROOFLINE_GPU_DATA moves the "
                            "presets' folder)",
                            gpu->backend, ctx->hw.name, dir);
    } else {
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--predict on a GPU needs --backend "
                        "vllm|trtllm|sglang or --calibration DIR");
    }
    if (rf_gpu_tables_load(dir, &ctx->hw, &gpu->tables, &e))
        return cli_fail_err(ctx, &e);
    gpu->loaded = true;
    *out = &gpu->tables;
    return RF_EXIT_OK;
}

/* The assumption lines of cli_gpu_assume. */
static void assume_lines(const cli_gpu_call *gpu, rf_report *r, const rf_gpu_tables *g,
                         unsigned missing)
{
    rf_report_assume(r,
                     "predicted on kernel tables: %s (aiconfigurator's format; the presets "
                     "derived from ai-dynamo/aiconfigurator 095f58a5, Apache-2.0, "
                     "data/gpu/README.md)%s%s",
                     gpu->label, gpu->quant_given ? "; --quant " : "",
                     gpu->quant_given ? gpu->quant.name : "");
    rf_report_assume(r, "a predicted figure: t = r x floor, r = measured / floor of the table's "
                        "rows, ln r interpolated linearly in the log of each key; outside a "
                        "key's measured values the edge's r (at least 1) on the query's own "
                        "floor; provenance: in range, interpolated, extrapolated, floor (no "
                        "table)");
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++) {
        const rf_gpu_table *t = &g->t[k];
        if (t->present)
            rf_report_assume(r,
                             "table %s: %zu rows, leave-one-out error median %.1f%%, p90 "
                             "%.1f%% (%zu points)",
                             rf_gpu_kind_file((rf_gpu_kind)k), t->n_rows, 100 * t->loo_median,
                             100 * t->loo_p90, t->loo_n);
    }
    for (int k = 0; k < RF_GPU_NEED_COUNT; k++)
        if (missing & (1u << k) && k < RF_GPU_KIND_COUNT)
            rf_report_assume(r,
                             "NO TABLE: %s (%s) is needed but absent or has no rows of "
                             "these dtypes: predicted on its floor",
                             rf_gpu_need_name(k), rf_gpu_need_what(k));
        else if (missing & (1u << k))
            rf_report_assume(r, "NO TABLE: %s (%s): predicted on its floor", rf_gpu_need_name(k),
                             rf_gpu_need_what(k));
}

void cli_gpu_warn(const cli_ctx *ctx, const rf_gpu_tables *g, unsigned missing)
{
    for (int k = 0; k < RF_GPU_KIND_COUNT; k++)
        if (missing & (1u << k))
            fprintf(ctx->io->err,
                    "roofline %s: warning: no %s rows in %s/%s for this model's "
                    "dtypes: those operators are predicted on their floor\n",
                    ctx->cmd, rf_gpu_kind_name((rf_gpu_kind)k), g->dir,
                    rf_gpu_kind_file((rf_gpu_kind)k));
    for (int k = RF_GPU_KIND_COUNT; k < RF_GPU_NEED_COUNT; k++)
        if (missing & (1u << k))
            fprintf(ctx->io->err,
                    "roofline %s: warning: no table for %s (%s): those operators "
                    "are predicted on their floor\n",
                    ctx->cmd, rf_gpu_need_name(k), rf_gpu_need_what(k));
}

void cli_gpu_assume(const cli_ctx *ctx, rf_report *r, const rf_gpu_tables *g, unsigned missing)
{
    assume_lines(&ctx->run.gpu, r, g, missing);
    cli_gpu_warn(ctx, g, missing);
}

void cli_gpu_assume_loaded(const cli_ctx *ctx, rf_report *r)
{
    const cli_gpu_call *gpu = &ctx->run.gpu;
    if (gpu->loaded)
        assume_lines(gpu, r, &gpu->tables, gpu->missing);
}

int cli_gpu_serving_error(cli_ctx *ctx, rf_report *r, int64_t concurrency)
{
    const cli_gpu_call *gpu = &ctx->run.gpu;
    if (gpu->calibration || !gpu->backend) {
        rf_report_assume(r, "measured error: none for tables of your own (--calibration); the "
                            "band is the kernels' alone, not the schedule's");
        return RF_EXIT_OK;
    }
    char name[sizeof ctx->hw.name], path[600];
    preset_folder(ctx, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s/serving_error.json", cli_gpu_data_dir(), name);
    rf_gpu_serving_error m;
    bool found;
    rf_err e;
    if (rf_gpu_serving_error_load(path, gpu->backend, concurrency, &m, &found, &e))
        return cli_fail_err(ctx, &e);
    if (!found) {
        rf_report_assume(r,
                         "measured error: none for %s (%s %s); the band is the kernels' alone, "
                         "not the schedule's",
                         gpu->label,
                         access(path, F_OK) ? "no measured serving runs of"
                                            : "no entry for it in the serving_error.json of",
                         name);
        return RF_EXIT_OK;
    }
    rf_report_assume(r, "measured error: %s (serving_error.json beside the tables)%s", m.source,
                     concurrency ? ""
                                 : "; those runs were closed loops and this one is open (--rate): "
                                   "the figures of all of them, not of a load like this one");
    rf_report_num(r, "measured_ttft_error_median", "measured error, TTFT median", m.ttft_median,
                  RF_U_PERCENT);
    rf_report_num(r, "measured_tpot_error_median", "measured error, TPOT median", m.tpot_median,
                  RF_U_PERCENT);
    rf_report_num(r, "measured_ttft_error_p90", "measured error, TTFT p90", m.ttft_p90,
                  RF_U_PERCENT);
    rf_report_num(r, "measured_tpot_error_p90", "measured error, TPOT p90", m.tpot_p90,
                  RF_U_PERCENT);
    rf_report_int(r, "measured_runs", "measured error: real runs of this engine", (uint64_t)m.runs,
                  RF_U_INT);
    char span[48] = "every run";
    if (m.c_max)
        snprintf(span, sizeof span, "%lld-%lld", (long long)m.c_min, (long long)m.c_max);
    rf_report_str(r, "measured_concurrency", "measured error: the runs' concurrency", span);
    return RF_EXIT_OK;
}
