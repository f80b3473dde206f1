/* profile.c - `profile`'s report: a run of real decoder layers, every
 * operator beside its floor on the measured roof (and with a calibration
 * its prediction), the step's residual and its owners, the whole-model
 * estimate. */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_view.h"

/* Operators with arithmetic go in "ops" (they sit on a log-log roofline,
 * which `roofline plot --measured` draws); pure data movement (embed,
 * kv_write: no FLOPs) in "moves", with the same columns. */
static void op_table(rf_report *r, const rf_forward_run *run, const rf_forward_pred *pr, bool moves)
{
    if (moves)
        rf_report_table(r, "moves", "data movement (no FLOPs, so off a log roofline)");
    else
        rf_report_table(r, "ops", "operators (one instance: a layer, or once for the head)");
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
        rf_report_num(r, "predicted_s", "PREDICTED (calibration, sum of the operators)", pr->step_s,
                      RF_U_SECONDS);
        rf_report_num(r, "predicted_lo_s", "  band low (left-out error)", pr->lo_s, RF_U_SECONDS);
        rf_report_num(r, "predicted_hi_s", "  band high", pr->hi_s, RF_U_SECONDS);
        rf_report_num(r, "predicted_error", "  |predicted - measured| / measured", pr->step_error,
                      RF_U_PERCENT);
        rf_report_num(r, "floor_error", "  |floor - measured| / measured", pr->step_floor_error,
                      RF_U_PERCENT);
        rf_report_int(r, "predicted_outside", "  operators outside the calibration", pr->n_outside,
                      RF_U_INT);
        rf_report_num(r, "predicted_bandwidth_bytes_per_s", "  memory roof of the prediction",
                      pr->bw_bytes_per_s, RF_U_BW);
        rf_report_num(r, "predicted_peak_flops_per_s", "  compute roof of the prediction",
                      pr->peak_flops_per_s, RF_U_FLOP_RATE);
        rf_report_num(r, "sampled_bandwidth_bytes_per_s", "  memory roof sampled beside the steps",
                      pr->sampled_bw_bytes_per_s, RF_U_BW);
        rf_report_num(r, "sampled_peak_flops_per_s", "  compute roof sampled beside the steps",
                      pr->sampled_peak_flops_per_s, RF_U_FLOP_RATE);
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
    rf_report_num(r, "model_floor_s", "floor of the whole model", run->model_floor_s, RF_U_SECONDS);
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
static void assumptions(rf_report *r, const char *roof_source, const rf_model *m,
                        const rf_forward_run *run)
{
    const rf_forward_opts *o = &run->opts;
    char pk[32], bw[32], mem[32];
    rf_fmt(run->roof.peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk);
    rf_fmt(run->roof.bw_bytes_per_s, RF_U_BW, bw, sizeof bw);
    rf_fmt((double)run->mem.total_bytes, RF_U_BYTES_BIN, mem, sizeof mem);
    rf_report_assume(r, "roof: %s: fp32 %s, memory %s, ridge %.1f FLOP/byte", roof_source, pk, bw,
                     run->roof.ridge);
    rf_report_assume(r,
                     "run: random fp32 weights of the model's shapes (%s in memory); OpenBLAS "
                     "with %d thread%s, cblas_sgemv at M = 1, cblas_sgemm otherwise; "
                     "decode attention %s and element-wise operators on one thread",
                     mem, o->threads, o->threads == 1 ? "" : "s", run->attn_kernel);
    rf_report_assume(r,
                     "timing: each operator timed on its own; median of %d steps after %d "
                     "warm-up; the KV cache persists between steps",
                     o->steps, o->warmup);
    rf_report_assume(r,
                     "check: matched the scalar reference on a tiny model of the same "
                     "shape family (max error %.2g, tolerance %g)",
                     run->check_max_err, RF_FORWARD_TOLERANCE);
    if (o->phase == RF_DECODE)
        rf_report_assume(r,
                         "decode: the token at position S-1 = %lld writes its K and V and "
                         "attends over S = %lld keys (keys = context, as `roofline step`)",
                         (long long)(o->context - 1), (long long)o->context);
    else
        rf_report_assume(r,
                         "prefill: %lld %s a sequence at positions %lld..%lld, causal "
                         "over %lld keys; each head's T x S scores stay in cache; lm_head on "
                         "the last position",
                         (long long)o->tokens, o->tokens == 1 ? "token" : "tokens",
                         (long long)o->context, (long long)(o->context + o->tokens - 1),
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

rf_report *rf_view_profile(const rf_model *m, const rf_forward_run *run, const rf_forward_pred *pr,
                           size_t samples, const char *roof_source)
{
    const rf_forward_opts *o = &run->opts;
    char title[256];
    if (o->phase == RF_DECODE)
        snprintf(title, sizeof title,
                 "profile: decode step of %s, B=%lld, S=%lld, fp32, %lld of "
                 "%lld layers run",
                 m->name, (long long)o->batch, (long long)o->context, (long long)o->layers,
                 (long long)m->layers);
    else
        snprintf(title, sizeof title,
                 "profile: prefill step of %s, B=%lld, T=%lld after S=%lld, "
                 "fp32, %lld of %lld layers run",
                 m->name, (long long)o->batch, (long long)o->tokens, (long long)o->context,
                 (long long)o->layers, (long long)m->layers);
    rf_report *r = rf_report_new(title);
    if (!r)
        return NULL;
    assumptions(r, roof_source, m, run);

    /* The roof at the top level, keyed as a profile file keys it, so the
     * JSON carries its own roof for `roofline plot --measured`. */
    rf_report_section(r, NULL, "roof");
    rf_report_str(r, "roof_source", "source", roof_source);
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
        rf_report_assume(r,
                         "predicted on the calibration's roofs, memory %s and compute %s "
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
    rf_report_note(r,
                   "residual %s over the %s floor is the budget for overheads and slow "
                   "kernels; most of it sits in %s",
                   rf_fmt(run->residual_s, RF_U_SECONDS, a, sizeof a),
                   rf_fmt(run->floor_s, RF_U_SECONDS, b, sizeof b),
                   run->n_owners ? owners : "no operator");
    if (o->layers < m->layers)
        rf_report_note(r,
                       "whole model: ESTIMATED from %lld of %lld layers (layers x %lld / %lld "
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
