/* cmd_profile.c - `roofline profile MODEL`: run N real decoder layers on the
 * CPU, time every operator, and set each beside its floor on the measured
 * roofline; the step's residual and its owners; the whole-model estimate. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "lab_view.h"
#include "measure_view.h"
#include "roofline/rf_forward.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_measure_calib.h"

enum { O_LAYERS = 1000, O_DTYPE, O_THREADS, O_STEPS };

static const cli_opt opts[] = {
    {"phase", 1, CLI_O_PHASE, "decode|prefill", "step phase (default decode)"},
    {"batch", 1, CLI_O_BATCH, "B", "sequences in the step (default 1)"},
    {"context", 1, CLI_O_CONTEXT, "S",
     "decode: keys per sequence, the new token's included (default 1024); prefill: cached "
     "positions before the new tokens (default 0)"},
    {"tokens", 1, CLI_O_TOKENS, "T", "prefill: new tokens per sequence (default 512)"},
    {"layers", 1, O_LAYERS, "N", "decoder layers run (default 2); the model is estimated"},
    {"dtype", 1, O_DTYPE, "fp32", "weights, activations and KV (only fp32 runs)"},
    {"threads", 1, O_THREADS, "N", "BLAS threads (default: one per core)"},
    {"steps", 1, O_STEPS, "N", "timed steps (default: as many as fill 2 s, 3 to 20)"},
    CLI_PREDICT_OPT,
    {0},
};

typedef struct args {
    rf_step_opts step; /* phase, batch, context, tokens as the step options */
    rf_forward_opts fwd;
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    int64_t v;
    int rc;
    switch (id) {
    case O_LAYERS:
        return cli_i64(ctx, "--layers", arg, 1, RF_MODEL_MAX_LAYERS, &a->fwd.layers);
    case O_DTYPE:
        if (strcmp(arg, "fp32"))
            return cli_fail(ctx, RF_EXIT_USAGE, "--dtype: '%s' is not run on the CPU (only fp32)",
                            arg);
        return RF_EXIT_OK;
    case O_THREADS:
        if ((rc = cli_i64(ctx, "--threads", arg, 1, 4096, &v)))
            return rc;
        a->fwd.threads = (int)v;
        return RF_EXIT_OK;
    case O_STEPS:
        if ((rc = cli_i64(ctx, "--steps", arg, 1, RF_STATS_MAX, &v)))
            return rc;
        a->fwd.steps = (int)v;
        return RF_EXIT_OK;
    default:
        return cli_step_opt(ctx, id, arg, &a->step);
    }
}

/* Progress on the command's error stream (user), one line rewritten in
 * place, only on a terminal. */
static void progress(void *user, int done, int total, const char *what)
{
    fprintf(user, "\r  profiling [%2d/%2d] %-48s", done + 1, total, what);
    fflush(user);
}

/* Operators with arithmetic go in "ops" (they sit on a log-log roofline,
 * which `roofline plot --measured` draws); pure data movement (embed,
 * kv_write: no FLOPs) in "moves", with the same columns. */
static void op_table(rf_report *r, const rf_forward_run *run, const rf_forward_pred *pr,
                     bool moves)
{
    if (moves)
        rf_report_table(r, "moves", "data movement (no FLOPs, so off a log roofline)");
    else
        rf_report_table(r, "ops",
                        "operators (one instance: a layer, or once for the head)");
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "phase", "phase", RF_U_NONE);
    rf_report_col(r, "count", "count", RF_U_INT);
    rf_report_col(r, "m", "M", RF_U_INT);
    rf_report_col(r, "k", "K", RF_U_INT);
    rf_report_col(r, "n", "N", RF_U_INT);
    rf_report_col(r, "flops", "FLOPs", RF_U_FLOPS);
    rf_report_col(r, "bytes", "bytes", RF_U_BYTES);
    rf_report_col(r, "intensity", "FLOP/B", RF_U_INTENSITY);
    rf_report_col(r, "bound", "roof", RF_U_NONE);
    rf_report_col(r, "floor_s", "floor", RF_U_SECONDS);
    if (pr)
        rf_report_col(r, "predicted_s", "predicted", RF_U_SECONDS);
    rf_report_col(r, "measured_s", "measured", RF_U_SECONDS);
    if (pr) {
        rf_report_col(r, "predicted_error", "pred err", RF_U_PERCENT);
        rf_report_col(r, "floor_error", "floor err", RF_U_PERCENT);
        rf_report_col(r, "predicted_in_range", "calibrated", RF_U_NONE);
    }
    rf_report_col(r, "flops_per_s", "achieved", RF_U_FLOP_RATE);
    rf_report_col(r, "bytes_per_s", "achieved", RF_U_BW);
    rf_report_col(r, "efficiency", "eff", RF_U_PERCENT);
    rf_report_col(r, "residual_s", "residual", RF_U_SECONDS);
    rf_report_col(r, "in_step_floor", "in floor", RF_U_NONE);
    const char *phase = run->opts.phase == RF_DECODE ? "decode" : "prefill";
    for (size_t i = 0; i < run->n_ops; i++) {
        const rf_forward_op *op = &run->ops[i];
        if ((op->flops == 0) != moves)
            continue;
        rf_report_row(r);
        rf_report_cell_str(r, op->name);
        rf_report_cell_str(r, phase);
        rf_report_cell_int(r, op->count);
        rf_report_cell_int(r, (uint64_t)op->m);
        rf_report_cell_int(r, (uint64_t)op->k);
        rf_report_cell_int(r, (uint64_t)op->n);
        rf_report_cell_int(r, op->flops);
        rf_report_cell_int(r, op->bytes);
        rf_report_cell_num(r, op->intensity);
        rf_report_cell_str(r, op->bound == RF_COMPUTE_BOUND ? "compute" : "memory");
        rf_report_cell_num(r, op->floor_s);
        if (pr)
            rf_report_cell_num(r, pr->op[i].time_s);
        rf_report_cell_num(r, op->measured_s);
        if (pr) {
            rf_report_cell_num(r, pr->op_error[i]);
            rf_report_cell_num(r, pr->floor_error[i]);
            rf_report_cell_str(r, pr->op[i].in_range ? "yes" : "outside");
        }
        if (moves)
            rf_report_cell_null(r, "-");
        else
            rf_report_cell_num(r, op->flops_per_s);
        rf_report_cell_num(r, op->bytes_per_s);
        rf_report_cell_num(r, op->efficiency);
        rf_report_cell_num(r, op->residual_s);
        rf_report_cell_str(r, op->in_step_floor ? "yes" : "no");
    }
}

static void step_section(rf_report *r, const rf_forward_run *run, const rf_forward_pred *pr,
                         const char *owners)
{
    const rf_forward_opts *o = &run->opts;
    char label[128];
    rf_report_section(r, "step", "the profiled step");
    snprintf(label, sizeof label, "measured (%lld layer%s + head, median)", (long long)o->layers,
             o->layers == 1 ? "" : "s");
    rf_report_num(r, "measured_s", label, run->measured_s, RF_U_SECONDS);
    rf_report_num(r, "measured_min_s", "fastest step", run->measured_min_s, RF_U_SECONDS);
    rf_report_num(r, "measured_max_s", "slowest step", run->measured_max_s, RF_U_SECONDS);
    rf_report_num(r, "floor_s", "floor (as `roofline step`)", run->floor_s, RF_U_SECONDS);
    if (pr) {
        rf_report_num(r, "predicted_s", "PREDICTED (calibration, sum of the operators)",
                      pr->step_s, RF_U_SECONDS);
        rf_report_num(r, "predicted_lo_s", "  band low (left-out error)", pr->lo_s,
                      RF_U_SECONDS);
        rf_report_num(r, "predicted_hi_s", "  band high", pr->hi_s, RF_U_SECONDS);
        rf_report_num(r, "predicted_error", "  |predicted - measured| / measured",
                      pr->step_error, RF_U_PERCENT);
        rf_report_num(r, "floor_error", "  |floor - measured| / measured", pr->step_floor_error,
                      RF_U_PERCENT);
        rf_report_int(r, "predicted_outside", "  operators outside the calibration",
                      pr->n_outside, RF_U_INT);
        rf_report_num(r, "predicted_bandwidth_bytes_per_s",
                      "  memory roof of the prediction",
                      pr->bw_bytes_per_s, RF_U_BW);
        rf_report_num(r, "predicted_peak_flops_per_s",
                      "  compute roof of the prediction",
                      pr->peak_flops_per_s, RF_U_FLOP_RATE);
        rf_report_num(r, "sampled_bandwidth_bytes_per_s",
                      "  memory roof sampled beside the steps", pr->sampled_bw_bytes_per_s,
                      RF_U_BW);
        rf_report_num(r, "sampled_peak_flops_per_s",
                      "  compute roof sampled beside the steps", pr->sampled_peak_flops_per_s,
                      RF_U_FLOP_RATE);
        if (pr->sampled_bw_bytes_per_s > 0) {
            rf_report_num(r, "predicted_now_s", "the same, GEMVs on the sampled memory roof",
                          pr->step_now_s, RF_U_SECONDS);
            rf_report_num(r, "predicted_now_error", "  |that - measured| / measured",
                          pr->step_now_error, RF_U_PERCENT);
        }
    }
    rf_report_num(r, "floor_sum_of_max_s", "sum-of-max floor", run->floor_sum_of_max_s,
                  RF_U_SECONDS);
    rf_report_num(r, "ops_sum_of_max_s", "sum-of-max, element-wise operators included",
                  run->ops_sum_of_max_s, RF_U_SECONDS);
    rf_report_num(r, "residual_s", "residual (measured - floor)", run->residual_s, RF_U_SECONDS);
    rf_report_str(r, "residual_owners", "residual owned by", owners);
    rf_report_num(r, "layers_s", "the layers", run->layers_s, RF_U_SECONDS);
    rf_report_num(r, "head_s", "embed + final norm + lm_head", run->head_s, RF_U_SECONDS);
    rf_report_int(r, "steps", "timed steps", (uint64_t)o->steps, RF_U_INT);
    snprintf(label, sizeof label, "whole model, ESTIMATED: layers x %lld / %lld + head",
             (long long)run->model_layers, (long long)o->layers);
    rf_report_num(r, "estimated_model_s", label, run->estimated_model_s, RF_U_SECONDS);

    rf_report_section(r, "model", "the whole model (estimated, not run)");
    rf_report_num(r, "estimated_tokens_per_s", "tokens/s at that estimate",
                  run->estimated_tokens_per_s, RF_U_TOK_RATE);
    rf_report_num(r, "model_floor_s", "floor of the whole model", run->model_floor_s,
                  RF_U_SECONDS);
    if (pr) {
        rf_report_num(r, "predicted_model_s", "PREDICTED whole model (layers x L / N + head)",
                      pr->model_s, RF_U_SECONDS);
        rf_report_num(r, "predicted_tokens_per_s", "PREDICTED tokens/s", pr->tokens_per_s,
                      RF_U_TOK_RATE);
    }
    rf_report_num(r, "model_floor_sum_of_max_s", "sum-of-max floor of the whole model",
                  run->model_floor_sum_of_max_s, RF_U_SECONDS);
}

/* The roof, how the pass ran and was timed and checked, its positions,
 * where its figures come from, and the model's own notes. */
static void assumptions(const cli_ctx *ctx, rf_report *r, const rf_model *m,
                        const rf_forward_run *run)
{
    const rf_forward_opts *o = &run->opts;
    char pk[32], bw[32], mem[32];
    rf_fmt(run->roof.peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk);
    rf_fmt(run->roof.bw_bytes_per_s, RF_U_BW, bw, sizeof bw);
    rf_fmt((double)run->mem.total_bytes, RF_U_BYTES_BIN, mem, sizeof mem);
    rf_report_assume(r, "roof: %s: fp32 %s, memory %s, ridge %.1f FLOP/byte", ctx->hw_origin, pk,
                     bw, run->roof.ridge);
    rf_report_assume(r, "run: random fp32 weights of the model's shapes (%s in memory); OpenBLAS "
                        "with %d thread%s, cblas_sgemv at M = 1, cblas_sgemm otherwise; "
                        "decode attention %s and element-wise operators on one thread",
                     mem, o->threads, o->threads == 1 ? "" : "s", run->attn_kernel);
    rf_report_assume(r, "timing: each operator timed on its own; median of %d steps after %d "
                        "warm-up; the KV cache persists between steps",
                     o->steps, o->warmup);
    rf_report_assume(r, "check: matched the scalar reference on a tiny model of the same "
                        "shape family (max error %.2g, tolerance %g)",
                     run->check_max_err, RF_FORWARD_TOLERANCE);
    if (o->phase == RF_DECODE)
        rf_report_assume(r, "decode: the token at position S-1 = %lld writes its K and V and "
                            "attends over S = %lld keys (keys = context, as `roofline step`)",
                         (long long)(o->context - 1), (long long)o->context);
    else
        rf_report_assume(r, "prefill: %lld %s a sequence at positions %lld..%lld, causal "
                            "over %lld keys; each head's T x S scores stay in cache; lm_head on "
                            "the last position",
                         (long long)o->tokens, cli_plural(o->tokens, "token", "tokens"),
                         (long long)o->context,
                         (long long)(o->context + o->tokens - 1),
                         (long long)(o->context + o->tokens));
    rf_report_assume(r, "figures: GEMMs, attention, lm_head and embed from rf_step (fp32, as "
                        "`roofline step`); element-wise operators (in floor = no) counted by "
                        "rf_op.h and outside the step floor; efficiency = floor / measured "
                        "against the roof named");
    if (m->qkv_bias)
        rf_report_assume(r, "q/k/v biases added inside the projections (not in their figures)");
    if (m->notes[0])
        rf_report_assume(r, "%s", m->notes);
}

static rf_report *build(const cli_ctx *ctx, const rf_model *m, const rf_forward_run *run,
                        const rf_forward_pred *pr, size_t samples)
{
    const rf_forward_opts *o = &run->opts;
    char title[256];
    if (o->phase == RF_DECODE)
        snprintf(title, sizeof title, "profile: decode step of %s, B=%lld, S=%lld, fp32, %lld of "
                 "%lld layers run", m->name, (long long)o->batch, (long long)o->context,
                 (long long)o->layers, (long long)m->layers);
    else
        snprintf(title, sizeof title, "profile: prefill step of %s, B=%lld, T=%lld after S=%lld, "
                 "fp32, %lld of %lld layers run", m->name, (long long)o->batch,
                 (long long)o->tokens, (long long)o->context, (long long)o->layers,
                 (long long)m->layers);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    assumptions(ctx, r, m, run);

    /* The roof at the top level, keyed as a profile file keys it, so the
     * JSON carries its own roof for `roofline plot --measured`. */
    rf_report_section(r, NULL, "roof");
    rf_report_str(r, "roof_source", "source", ctx->hw_origin);
    rf_report_num(r, "bandwidth_bytes_per_s", "memory roof", run->roof.bw_bytes_per_s, RF_U_BW);
    rf_report_num(r, "ridge", "ridge (fp32)", run->roof.ridge, RF_U_INTENSITY);
    rf_report_section(r, "peak_flops_per_s", "compute roof");
    rf_report_num(r, "fp32", "fp32 peak", run->roof.peak_flops_per_s, RF_U_FLOP_RATE);

    op_table(r, run, pr, false);
    op_table(r, run, pr, true);

    char owners[256] = "", one[96], t[32];
    for (size_t i = 0; i < run->n_owners; i++) {
        const rf_forward_op *op = &run->ops[run->owners[i]];
        rf_fmt(op->residual_s, RF_U_SECONDS, t, sizeof t);
        snprintf(one, sizeof one, "%s%s %s (%.0f%%)", i ? ", " : "", op->name, t,
                 100 * run->owner_share[i]);
        strncat(owners, one, sizeof owners - strlen(owners) - 1);
    }
    step_section(r, run, pr, run->n_owners ? owners : "none (measured at or under the floor)");
    if (pr) {
        char bw[32], pk[32];
        rf_report_assume(r, "predicted: each operator's one instance from the calibration of "
                            "the --hw profile (t = c0 + floor / eff, eff interpolated in log "
                            "space between calibrated shapes; calibrated = outside: the nearest "
                            "edge's eff); the step's prediction is the sum of count x predicted "
                            "over every operator run");
        char sbw[32], spk[32];
        rf_report_assume(r, "predicted on the calibration's roofs, memory %s and compute %s "
                            "(the medians of the roofs sampled beside its points), each "
                            "operator as `step --predict` predicts it; band: each operator's "
                            "kind's leave-one-out worst error, summed; beside it, labelled, the "
                            "step with the GEMVs (M = 1) on the memory roof sampled beside this "
                            "run, %s (compute sampled %s, not used; medians of %zu samples, one "
                            "before each timed step and one after the last, each a burst of "
                            "OpenBLAS GEMVs from DRAM and one of in-cache SGEMMs)",
                         rf_fmt(pr->bw_bytes_per_s, RF_U_BW, bw, sizeof bw),
                         rf_fmt(pr->peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk),
                         rf_fmt(pr->gemv_bw_bytes_per_s, RF_U_BW, sbw, sizeof sbw),
                         rf_fmt(pr->sampled_peak_flops_per_s, RF_U_FLOP_RATE, spk, sizeof spk),
                         samples);
    }
    char a[32], b[32];
    rf_report_note(r, "residual %s over the %s floor is the budget for overheads and slow "
                      "kernels; most of it sits in %s",
                   rf_fmt(run->residual_s, RF_U_SECONDS, a, sizeof a),
                   rf_fmt(run->floor_s, RF_U_SECONDS, b, sizeof b),
                   run->n_owners ? owners : "no operator");
    if (o->layers < m->layers)
        rf_report_note(r, "whole model: ESTIMATED from %lld of %lld layers (layers x %lld / %lld "
                          "+ head) = %s, not measured",
                       (long long)o->layers, (long long)m->layers, (long long)m->layers,
                       (long long)o->layers,
                       rf_fmt(run->estimated_model_s, RF_U_SECONDS, a, sizeof a));
    else
        rf_report_note(r, "whole model: all %lld layers ran; layers + head = %s",
                       (long long)m->layers,
                       rf_fmt(run->estimated_model_s, RF_U_SECONDS, a, sizeof a));
    return r;
}

/* The calibration of a --hw profile that has one (*out, to free), NULL
 * otherwise; --predict without one is refused before anything runs. The
 * profile is read here once, into ctx->run, for the roof after it too (a
 * profile that does not load is refused by --predict, or by the roof). */
static int load_calibration(cli_ctx *ctx, rf_calib **out)
{
    *out = NULL;
    bool asked = ctx->step_given & CLI_GIVEN_PREDICT;
    rf_err e;
    if (ctx->hw_name && access(ctx->hw_name, F_OK) == 0)
        (void)cli_read_profile(ctx, ctx->hw_name, &e);
    if (!asked && !ctx->run.calibrated)
        return RF_EXIT_OK;
    if (!(*out = malloc(sizeof **out)))
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    int rc = cli_calib_load(ctx, *out);
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

int cmd_profile(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.step = rf_step_opts_default(), .fwd = rf_forward_opts_default()};
    a.step.context = -1; /* defaults depend on the phase */
    a.step.tokens = -1;
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "profile MODEL [--phase decode|prefill] [--batch B] [--context S] "
                            "[--tokens T] [--layers N] [--dtype fp32] [--threads N] [--steps N] "
                            "[--hw PROFILE (default: measure now)] [--predict] [--mem SIZE (a limit)]",
                            (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if (argc - pos != 1)
        return cli_fail(&ctx, RF_EXIT_USAGE, "expected one MODEL (a preset or a config.json)");
    if ((ctx.w_given && ctx.w.kind != RF_FP32) || (ctx.a_given && ctx.a.kind != RF_FP32) ||
        (ctx.kv_given && ctx.kv.kind != RF_FP32))
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "profile runs fp32 weights, activations and KV (see --dtype)");
    rf_model m;
    if ((rc = cli_resolve_model(&ctx, argv[pos], &m)))
        return rc;
    rf_forward_opts *o = &a.fwd;
    o->phase = a.step.phase;
    o->batch = a.step.batch;
    o->context = a.step.context >= 0 ? a.step.context : o->phase == RF_DECODE ? 1024 : 0;
    o->tokens = a.step.tokens >= 0 ? a.step.tokens : o->phase == RF_PREFILL ? 512 : 1;
    if (o->phase == RF_DECODE && a.step.tokens >= 0)
        return cli_fail(&ctx, RF_EXIT_USAGE, "--tokens is for --phase prefill");

    o->mem_limit_bytes = ctx.mem_bytes; /* --mem: at most this much */
    o->isa = getenv("RF_ISA");          /* the kernel table's override   */

    /* Everything that can be refused is refused before the measurement. */
    rf_err e;
    rf_status fit = rf_forward_fit(&m, o, 0, &e);
    if (fit == RF_ENOMEM && ctx.mem_bytes) /* the limit was the user's: bad input */
        return cli_fail(&ctx, RF_EXIT_USAGE, "--mem: %s", e.msg);
    if (fit)
        return cli_fail_err(&ctx, &e);
    const char *inputs[] = {ctx.hw_name, NULL};
    if ((rc = cli_check_output(&ctx, ctx.out_path, inputs)))
        return rc;
    bool tty = io->err_tty;
    rf_calib *cal = NULL;
    if ((rc = load_calibration(&ctx, &cal)))
        return rc;
    rf_roof roof;
    if ((rc = cli_measured_roof(&ctx, o->threads, RF_FP32, &roof))) {
        free(cal);
        return rc;
    }
    o->progress = tty ? progress : NULL;
    o->progress_user = io->err;
    rf_forward_run *run = malloc(sizeof *run);
    rf_forward_pred *pr = cal ? malloc(sizeof *pr) : NULL;
    if (!run || (cal && !pr)) {
        free(run), free(pr), free(cal);
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    }
    /* With a calibration, the roofs sampled as the calibration sampled them
     * beside its points, before each timed step and after the last, and
     * reported beside the prediction (which is on the calibration's). */
    size_t pr_samples = 0;
    rf_roof_probe_hook hook = {.next = o->progress, .next_user = o->progress_user};
    rf_status s = cal ? rf_roof_probe_open(0, &hook.probe, &e) : RF_OK;
    if (s == RF_OK && cal)
        o->progress = rf_roof_probe_progress, o->progress_user = &hook;
    if (s == RF_OK)
        s = rf_forward_profile(&m, o, &roof, run, &e);
    if (tty)
        fprintf(io->err, "\r%-72s\r", "");
    if (s == RF_OK && cal && hook.status != RF_OK)
        e = hook.err, s = hook.status;
    if (s == RF_OK && cal)
        s = rf_roof_probe_sample(hook.probe, &e);
    if (s == RF_OK && cal) {
        double bw, peak;
        rf_roof_probe_median(hook.probe, 0, rf_roof_probe_count(hook.probe), &bw, &peak);
        pr_samples = rf_roof_probe_count(hook.probe);
        s = rf_calib_predict_forward(cal, run, bw, peak, pr, &e);
    }
    rf_roof_probe_close(hook.probe);
    free(cal);
    if (s) {
        free(run), free(pr);
        return cli_fail_err(&ctx, &e);
    }
    rf_report *r = build(&ctx, &m, run, pr, pr_samples);
    free(run);
    free(pr);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
