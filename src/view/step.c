/* step.c - a step's operators as a table (step, report, serve), its
 * totals (a plain step's, a mixed step's), --predict's columns and totals
 * beside the floors, and a generation predicted on a calibration. */
#include "roofline/rf_view.h"

void rf_view_expert_cols(rf_report *r, bool moe)
{
    if (!moe)
        return;
    rf_report_col(r, "experts_touched", "experts", RF_U_SIG3);
    rf_report_col(r, "m_per_expert", "M/expert", RF_U_SIG3);
}

void rf_view_expert_cells(rf_report *r, const rf_op *op, bool moe)
{
    if (!moe)
        return;
    if (op->experts > 0) {
        rf_report_cell_num(r, op->experts);
        rf_report_cell_num(r, op->m_per_expert);
    } else {
        rf_report_cell_null(r, "-");
        rf_report_cell_null(r, "-");
    }
}

/* --predict's columns and cells (nothing when pr is NULL). */
static void pred_cols(rf_report *r, const rf_step_pred *pr)
{
    if (!pr)
        return;
    rf_report_col(r, "predicted_s", "predicted", RF_U_SECONDS);
    rf_report_col(r, "predicted_in_range", "calibrated", RF_U_NONE);
    rf_report_col(r, "predicted_lo_s", "band low", RF_U_SECONDS);
    rf_report_col(r, "predicted_hi_s", "band high", RF_U_SECONDS);
}

static void pred_cells(rf_report *r, const rf_step_pred *pr, const rf_step *st, size_t i)
{
    if (!pr)
        return;
    rf_report_cell_num(r, (double)st->ops[i].count * pr->op[i].time_s);
    rf_report_cell_str(r, pr->op[i].in_range ? "yes" : "outside");
    rf_report_cell_num(r, (double)st->ops[i].count * pr->op[i].lo_s);
    rf_report_cell_num(r, (double)st->ops[i].count * pr->op[i].hi_s);
}

void rf_view_op_table(rf_report *r, const char *key, const char *label, const rf_step *st,
                      const rf_step_pred *pr)
{
    rf_report_table(r, key, label);
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "count", "count", RF_U_INT);
    rf_report_col(r, "m", "M", RF_U_INT);
    rf_view_expert_cols(r, st->experts_touched > 0);
    rf_report_col(r, "k", "K", RF_U_INT);
    rf_report_col(r, "n", "N", RF_U_INT);
    rf_report_col(r, "flops", "FLOPs", RF_U_FLOPS);
    rf_report_col(r, "bytes", "bytes", RF_U_BYTES);
    rf_report_col(r, "intensity", "FLOP/B", RF_U_INTENSITY);
    rf_report_col(r, "regime", "regime", RF_U_NONE);
    rf_report_col(r, "floor_s", "floor", RF_U_SECONDS);
    rf_report_col(r, "bound_by", "bound by", RF_U_NONE);
    pred_cols(r, pr); /* --predict: predicted_s and calibrated */
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        rf_point p = rf_roof_place(&st->roof, (double)op->flops, (double)op->bytes);
        rf_report_row(r);
        rf_report_cell_str(r, op->name);
        rf_report_cell_int(r, op->count);
        rf_report_cell_int(r, (uint64_t)op->m);
        rf_view_expert_cells(r, op, st->experts_touched > 0);
        rf_report_cell_int(r, (uint64_t)op->k);
        rf_report_cell_int(r, (uint64_t)op->n);
        rf_report_cell_int(r, op->count * op->flops); /* checked in rf_step_compute */
        rf_report_cell_int(r, op->count * op->bytes);
        rf_report_cell_num(r, p.intensity);
        rf_report_cell_str(r, rf_regime_name(p.regime));
        rf_report_cell_num(r, (double)op->count * p.floor_s);
        rf_report_cell_str(r, p.regime == RF_COMPUTE_BOUND ? "compute" : "memory");
        pred_cells(r, pr, st, i);
    }
}

double rf_view_pred_step_s(const rf_step_pred *pr) { return pr ? pr->time_s : 0; }

double rf_view_pred_tokens_per_s(const rf_step_pred *pr) { return pr ? pr->tokens_per_s : 0; }

void rf_view_pred_assume(rf_report *r)
{
    rf_report_assume(r, "predicted: each operator from the --hw profile's calibration, for the "
                        "kernels `measure --calibrate` timed (OpenBLAS on a CPU, cuBLAS on a "
                        "GPU; llama.cpp's own: --backend llamacpp) (t = c0 + "
                        "floor / eff on its sustained roof, eff interpolated in log space "
                        "between calibrated shapes, the calibration's dtypes' efficiency "
                        "assumed for these); the step = the sum of count x predicted, a "
                        "PREDICTION, not a floor; band: each operator's kind's leave-one-out "
                        "worst error (the calibration predicting a point it did not see), "
                        "summed as the times are");
}

void rf_view_pred_totals(rf_report *r, const rf_step_pred *pr, const char *key, const char *label)
{
    if (!pr)
        return;
    rf_view_pred_assume(r);
    rf_report_section(r, key, label);
    rf_report_num(r, "predicted_s", "predicted step (sum of the operators)", pr->time_s,
                  RF_U_SECONDS);
    rf_report_num(r, "predicted_lo_s", "  band low (left-out error)", pr->lo_s, RF_U_SECONDS);
    rf_report_num(r, "predicted_hi_s", "  band high", pr->hi_s, RF_U_SECONDS);
    rf_report_num(r, "predicted_tokens_per_s", "predicted tokens/s", pr->tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_int(r, "predicted_outside", "operators outside the calibration", pr->n_outside,
                  RF_U_INT);
}

void rf_view_pred_gen_times(rf_report *r, const rf_generate_pred *g)
{
    rf_report_num(r, "ttft_s", "predicted TTFT", g->ttft_s, RF_U_SECONDS);
    if (g->output >= 2) {
        rf_report_num(r, "tpot_mean_s", "predicted TPOT mean", g->tpot_mean_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_first_s", "predicted TPOT first (j = 2)", g->tpot_first_s,
                      RF_U_SECONDS);
        rf_report_num(r, "tpot_last_s", "predicted TPOT last (j = N)", g->tpot_last_s,
                      RF_U_SECONDS);
    } else {
        const char *why = "- (one output token)";
        rf_report_null(r, "tpot_mean_s", "predicted TPOT mean", why);
        rf_report_null(r, "tpot_first_s", "predicted TPOT first (j = 2)", why);
        rf_report_null(r, "tpot_last_s", "predicted TPOT last (j = N)", why);
    }
    rf_report_num(r, "decode_s", "predicted decode time", g->decode_s, RF_U_SECONDS);
    rf_report_num(r, "latency_s", "predicted latency", g->latency_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "predicted output tokens/s", g->tokens_per_s, RF_U_TOK_RATE);
}

void rf_view_pred_gen_bands(rf_report *r, const rf_generate_pred *g)
{
    rf_report_num(r, "ttft_lo_s", "TTFT band (left-out error), low", g->ttft_lo_s, RF_U_SECONDS);
    rf_report_num(r, "ttft_hi_s", "  high", g->ttft_hi_s, RF_U_SECONDS);
    if (g->output >= 2) {
        rf_report_num(r, "tpot_mean_lo_s", "TPOT mean band, low", g->tpot_mean_lo_s, RF_U_SECONDS);
        rf_report_num(r, "tpot_mean_hi_s", "  high", g->tpot_mean_hi_s, RF_U_SECONDS);
    }
    rf_report_num(r, "latency_lo_s", "latency band, low", g->latency_lo_s, RF_U_SECONDS);
    rf_report_num(r, "latency_hi_s", "  high", g->latency_hi_s, RF_U_SECONDS);
}

/* The totals every step shows: scores, bytes, FLOPs, intensity, regime,
 * the floor and the sum-of-max floor. */
static void step_bytes_floors(rf_report *r, const rf_step *st)
{
    if (st->extra_bytes)
        rf_report_int(r, "score_bytes", "attention scores (naive)", st->extra_bytes, RF_U_BYTES);
    rf_report_int(r, "total_bytes", "step bytes", st->total_bytes, RF_U_BYTES);
    rf_report_int(r, "flops", "FLOPs", st->flops, RF_U_FLOPS);
    rf_report_int(r, "op_bytes", "bytes over all operators", st->op_bytes, RF_U_BYTES);
    rf_report_num(r, "intensity", "byte-weighted intensity", st->intensity, RF_U_INTENSITY);
    rf_report_num(r, "ridge", "ridge", st->roof.ridge, RF_U_INTENSITY);
    rf_report_str(r, "regime", "regime", rf_regime_name(st->regime));
    rf_report_num(r, "floor_s", "step floor", st->floor_s, RF_U_SECONDS);
    rf_report_num(r, "floor_sum_of_max_s", "sum-of-max floor", st->floor_sum_of_max_s,
                  RF_U_SECONDS);
}

void rf_view_step_totals(rf_report *r, const rf_step_opts *o, const rf_step *st)
{
    rf_report_int(r, "weight_bytes", "weights streamed", st->weight_bytes, RF_U_BYTES);
    rf_report_int(r, "kv_bytes", "KV read", st->kv_bytes, RF_U_BYTES);
    rf_report_int(r, "kv_bytes_per_token", "KV a token (all layers)", st->kv_bytes_per_token,
                  RF_U_INT);
    step_bytes_floors(r, st);
    rf_report_num(r, "floor_aggregate_s", "aggregate floor", st->floor_aggregate_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "tokens/s ceiling", st->tokens_per_s, RF_U_TOK_RATE);
    if (o->phase == RF_DECODE && st->kv_bytes) {
        rf_report_num(r, "blended_intensity_limit", "blended intensity as B grows",
                      st->blended_intensity_limit, RF_U_INTENSITY);
        rf_report_num(r, "throughput_cap_tokens_per_s", "throughput cap at this context",
                      st->throughput_cap_tokens_per_s, RF_U_TOK_RATE);
    } else { /* both are decode figures: B sequences reading their KV */
        const char *why = o->phase == RF_PREFILL ? "- (decode only)" : "- (no KV read)";
        rf_report_null(r, "blended_intensity_limit", "blended intensity as B grows", why);
        rf_report_null(r, "throughput_cap_tokens_per_s", "throughput cap at this context", why);
    }
    if (st->experts_touched > 0) {
        rf_report_num(r, "experts_touched", "routed experts touched a MoE layer",
                      st->experts_touched, RF_U_SIG3);
        rf_report_num(r, "tokens_per_expert", "tokens a touched expert", st->tokens_per_expert,
                      RF_U_SIG3);
    }
}

/* The KV read by the attention rows of one kind. */
static uint64_t kv_of(const rf_step *st, rf_op_kind kind)
{
    uint64_t kv = 0;
    for (size_t i = 0; i < st->n_ops; i++)
        if (st->ops[i].kind == kind)
            kv += st->ops[i].count * st->ops[i].kv_bytes; /* checked in the step */
    return kv;
}

void rf_view_mixed_totals(rf_report *r, const rf_mixed_opts *mo, const rf_step *st)
{
    rf_report_int(r, "decode_tokens", "decode tokens", (uint64_t)mo->decode_batch, RF_U_INT);
    rf_report_int(r, "decode_context", "decode context", (uint64_t)mo->decode_context, RF_U_INT);
    rf_report_int(r, "chunk_tokens", "chunk tokens", (uint64_t)mo->chunk, RF_U_INT);
    rf_report_int(r, "chunk_context", "chunk context", (uint64_t)mo->chunk_context, RF_U_INT);
    rf_report_int(r, "tokens", "tokens in the step (M)", (uint64_t)(mo->decode_batch + mo->chunk),
                  RF_U_INT);
    rf_report_int(r, "weight_bytes", "weights streamed", st->weight_bytes, RF_U_BYTES);
    rf_report_int(r, "kv_bytes_decode", "KV read, decode attention", kv_of(st, RF_OP_ATTN_DECODE),
                  RF_U_BYTES);
    rf_report_int(r, "kv_bytes_chunk", "KV read, chunk attention", kv_of(st, RF_OP_ATTN_PREFILL),
                  RF_U_BYTES);
    rf_report_int(r, "kv_bytes", "KV read", st->kv_bytes, RF_U_BYTES);
    step_bytes_floors(r, st);
    rf_report_num(r, "tokens_per_s", "tokens/s ceiling (decode + chunk)", st->tokens_per_s,
                  RF_U_TOK_RATE);
}
