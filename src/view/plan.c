/* plan.c - the layouts that fit, ranked (rf_plan), with their predictions
 * on kernel tables, and the SLO plan's candidates (rf_sim_plan). */
#include <stdio.h>

#include "roofline/rf_view.h"

void rf_view_plan_assume(rf_report *r, const rf_hw_links *links, int64_t max_devices, double util,
                         uint64_t reserve_bytes)
{
    rf_view_par_assume(r, links, NULL);
    rf_report_assume(r,
                     "layouts tried: TP, PP and DP powers of two with TP x PP x DP <= %lld; "
                     "on a MoE model EP 1 and TP x 1, 2, 4 ... DP; a DP replica serves "
                     "ceil(B / DP) "
                     "sequences; fit: every device's weights and KV within util x memory "
                     "- reserve (%g x memory - %llu bytes)",
                     (long long)max_devices, util, (unsigned long long)reserve_bytes);
}

void rf_view_plan_pred_assume(rf_report *r, rf_objective obj)
{
    rf_report_assume(r,
                     "predicted layouts: each stage's operators and collectives predicted "
                     "(rf_gpu_predict_par), a pipeline's sends apart; latency = the stages "
                     "and sends summed, cycle = max(latency, micro-batches x the slowest "
                     "stage), tokens/s = D B / cycle; RANKED BY THE PREDICTIONS (%s), the "
                     "floors beside them",
                     obj == RF_OBJ_COST      ? "fewest devices, then predicted tokens/s a device"
                     : obj == RF_OBJ_LATENCY ? "predicted token latency"
                                             : "predicted tokens/s");
}

/* rows_table's predicted columns (--predict). */
static void pred_cols(rf_report *r)
{
    rf_report_col(r, "predicted_step_s", "pred step", RF_U_SECONDS);
    rf_report_col(r, "predicted_token_latency_s", "pred latency", RF_U_SECONDS);
    rf_report_col(r, "predicted_tokens_per_s", "pred tok/s", RF_U_TOK_RATE);
    rf_report_col(r, "predicted_tokens_per_s_device", "pred tok/s a device", RF_U_TOK_RATE);
    rf_report_col(r, "predicted_band", "band", RF_U_PERCENT);
    rf_report_col(r, "predicted_rows", "rows: in range/interp/extrap/floor", RF_U_NONE);
}

static void pred_cells(rf_report *r, const rf_gpu_par_pred *q)
{
    char how[64];
    snprintf(how, sizeof how, "%zu/%zu/%zu/%zu", q->n_how[RF_GPU_IN_RANGE],
             q->n_how[RF_GPU_INTERPOLATED], q->n_how[RF_GPU_EXTRAPOLATED],
             q->n_how[RF_GPU_NO_TABLE]);
    rf_report_cell_num(r, q->stage_s[q->slowest]);
    rf_report_cell_num(r, q->token_latency_s);
    rf_report_cell_num(r, q->tokens_per_s);
    rf_report_cell_num(r, q->tokens_per_s_device);
    rf_report_cell_num(r, q->band);
    rf_report_cell_str(r, how);
}

static void rows_table(rf_report *r, const rf_plan *p, const rf_gpu_par_pred *pred)
{
    rf_report_table(r, "layouts", "layouts that fit, ranked");
    rf_report_col(r, "rank", "rank", RF_U_INT);
    rf_report_col(r, "tp", "TP", RF_U_INT);
    rf_report_col(r, "pp", "PP", RF_U_INT);
    rf_report_col(r, "ep", "EP", RF_U_INT);
    rf_report_col(r, "dp", "DP", RF_U_INT);
    rf_report_col(r, "devices", "devices", RF_U_INT);
    rf_report_col(r, "margin_bytes", "fit margin", RF_U_BYTES);
    rf_report_col(r, "floor_s", "step floor", RF_U_SECONDS);
    rf_report_col(r, "token_latency_s", "token latency", RF_U_SECONDS);
    rf_report_col(r, "tokens_per_s", "tokens/s", RF_U_TOK_RATE);
    rf_report_col(r, "tokens_per_s_device", "tokens/s a device", RF_U_TOK_RATE);
    rf_report_col(r, "comm_share", "communicating", RF_U_PERCENT);
    if (pred)
        pred_cols(r);
    for (size_t i = 0; i < p->n_rows; i++) {
        const rf_plan_row *w = &p->rows[i];
        rf_report_row(r);
        rf_report_cell_int(r, i + 1);
        rf_report_cell_int(r, (uint64_t)w->layout.tp);
        rf_report_cell_int(r, (uint64_t)w->layout.pp);
        rf_report_cell_int(r, (uint64_t)w->layout.ep);
        rf_report_cell_int(r, (uint64_t)w->layout.dp);
        rf_report_cell_int(r, (uint64_t)w->devices);
        rf_report_cell_num(r, w->margin_bytes);
        rf_report_cell_num(r, w->floor_s);
        rf_report_cell_num(r, w->token_latency_s);
        rf_report_cell_num(r, w->tokens_per_s);
        rf_report_cell_num(r, w->tokens_per_s_device);
        rf_report_cell_num(r, w->comm_share);
        if (pred)
            pred_cells(r, &pred[i]);
    }
}

/* The section "predicted": the best row by the predictions. */
static void pred_section(rf_report *r, const rf_plan *plan, const rf_gpu_par_pred *pred,
                         const char *source)
{
    rf_report_section(r, "predicted", "PREDICTED (kernel tables; the floors are bounds)");
    if (!plan->n_rows) {
        rf_report_null(r, "best", "best layout predicted", "none up to --max-devices");
        return;
    }
    char lay[96];
    rf_view_layout_text(&plan->rows[0].layout, lay, sizeof lay);
    rf_report_str(r, "best", "best layout predicted", lay);
    rf_report_int(r, "devices", "devices", (uint64_t)plan->rows[0].devices, RF_U_INT);
    rf_report_num(r, "step_s", "predicted step (slowest stage)", pred[0].stage_s[pred[0].slowest],
                  RF_U_SECONDS);
    rf_report_num(r, "token_latency_s", "predicted token latency", pred[0].token_latency_s,
                  RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "predicted tokens/s", pred[0].tokens_per_s, RF_U_TOK_RATE);
    rf_report_num(r, "tokens_per_s_device", "predicted tokens/s a device",
                  pred[0].tokens_per_s_device, RF_U_TOK_RATE);
    rf_report_num(r, "band", "error band (leave-one-out median, time-weighted)", pred[0].band,
                  RF_U_PERCENT);
    rf_report_str(r, "source", "tables", source);
}

/* The SLO plan's candidates, best first. */
static void candidates(rf_report *r, const rf_sim_plan *p, double q, bool disagg)
{
    char head[64], lay[96];
    rf_report_table(r, "candidates", "candidates, best first (simulated; rates in requests/s)");
    rf_report_col(r, "rank", "rank", RF_U_INT);
    rf_report_col(r, "devices", "devices", RF_U_INT);
    rf_report_col(r, "layout", "layout", RF_U_NONE);
    rf_report_col(r, "tp", "TP", RF_U_INT);
    rf_report_col(r, "pp", "PP", RF_U_INT);
    rf_report_col(r, "ep", "EP", RF_U_INT);
    rf_report_col(r, "dp", "DP", RF_U_INT);
    if (disagg)
        rf_report_col(r, "disagg", "P:D", RF_U_NONE);
    rf_report_col(r, "max_seqs", "cap", RF_U_INT);
    rf_report_col(r, "rate_per_s", "rate", RF_U_SIG3);
    snprintf(head, sizeof head, "P%g TTFT", q);
    rf_report_col(r, "ttft_s", head, RF_U_SECONDS);
    snprintf(head, sizeof head, "P%g TPOT", q);
    rf_report_col(r, "tpot_s", head, RF_U_SECONDS);
    rf_report_col(r, "goodput_per_s", "goodput", RF_U_SIG3);
    rf_report_col(r, "output_tokens_per_s", "tokens/s", RF_U_TOK_RATE);
    rf_report_col(r, "cost_per_mtok", "USD/Mtok", RF_U_SIG3);
    rf_report_col(r, "meets", "meets", RF_U_NONE);
    rf_report_col(r, "why", "why not", RF_U_NONE);
    for (size_t i = 0; i < p->n_rows; i++) {
        const rf_sim_plan_row *w = &p->rows[i];
        char pd[48];
        rf_view_layout_text(&w->layout, lay, sizeof lay);
        rf_report_row(r);
        rf_report_cell_int(r, i + 1);
        rf_report_cell_int(r, (uint64_t)w->devices);
        rf_report_cell_str(r, lay);
        rf_report_cell_int(r, (uint64_t)w->layout.tp);
        rf_report_cell_int(r, (uint64_t)w->layout.pp);
        rf_report_cell_int(r, (uint64_t)w->layout.ep);
        rf_report_cell_int(r, (uint64_t)w->layout.dp);
        if (disagg && w->prefill_workers) {
            snprintf(pd, sizeof pd, "%lld:%lld", (long long)w->prefill_workers,
                     (long long)w->decode_workers);
            rf_report_cell_str(r, pd);
        } else if (disagg) {
            rf_report_cell_null(r, "aggregated");
        }
        if (w->pruned) {
            rf_report_cell_null(r, "-");
            rf_report_cell_null(r, "-");
        } else {
            rf_report_cell_int(r, (uint64_t)w->max_seqs);
            rf_report_cell_num(r, w->rate_per_s);
        }
        if (w->pruned) { /* the bounds, which no rate improves on (none: memory) */
            if (w->bound_ttft_s > 0) {
                rf_report_cell_num(r, w->bound_ttft_s);
                rf_report_cell_num(r, w->bound_tpot_s);
            } else {
                rf_report_cell_null(r, "-");
                rf_report_cell_null(r, "-");
            }
            rf_report_cell_null(r, "-");
            rf_report_cell_null(r, "-");
            rf_report_cell_null(r, "-");
        } else {
            rf_report_cell_num(r, w->ttft_s);
            rf_report_cell_num(r, w->tpot_s);
            rf_report_cell_num(r, w->goodput_per_s);
            rf_report_cell_num(r, w->output_tokens_per_s);
            if (w->cost_per_mtok > 0)
                rf_report_cell_num(r, w->cost_per_mtok);
            else
                rf_report_cell_null(r, "-");
        }
        rf_report_cell_str(r, w->meets ? "yes" : "no");
        if (w->meets || !w->why)
            rf_report_cell_null(r, "");
        else
            rf_report_cell_str(r, w->why);
    }
}

void rf_view_plan(rf_report *r, const rf_plan *plan, uint64_t kv_bytes, uint64_t state_bytes,
                  const rf_gpu_par_pred *pred, const char *source)
{
    char lay[96], need[32], budget[32];
    rf_report_section(r, "plan", "plan");
    if (state_bytes) { /* a hybrid model: what a sequence holds, beside its KV */
        rf_report_int(r, "kv_bytes_per_token", "KV a token", kv_bytes, RF_U_INT);
        rf_report_int(r, "state_bytes_per_sequence", "recurrent state a sequence", state_bytes,
                      RF_U_INT);
    }
    rf_report_int(r, "tried", "layouts tried", plan->n_tried, RF_U_INT);
    rf_report_int(r, "fitting", "layouts that fit", plan->n_rows, RF_U_INT);
    const rf_plan_row *small = NULL;
    for (size_t i = 0; i < plan->n_rows; i++)
        if (!small || plan->rows[i].devices < small->devices)
            small = &plan->rows[i];
    if (small) {
        rf_view_layout_text(&small->layout, lay, sizeof lay);
        char text[160];
        snprintf(text, sizeof text, "%s, %lld devices", lay, (long long)small->devices);
        rf_report_str(r, "smallest", "smallest deployment that fits", text);
    } else {
        rf_report_null(r, "smallest", "smallest deployment that fits", "none up to --max-devices");
    }
    if (plan->n_short) { /* the largest count short of it, for machines too */
        const rf_plan_row *w = &plan->short_of[plan->n_short - 1];
        char why[160];
        rf_fmt(w->needed_bytes, RF_U_BYTES, need, sizeof need);
        rf_fmt(w->budget_bytes, RF_U_BYTES, budget, sizeof budget);
        snprintf(why, sizeof why, "%lld devices: a device needs %s of a %s budget",
                 (long long)w->devices, need, budget);
        rf_report_str(r, "largest_short", "the most devices that do not fit", why);
    }
    for (size_t i = 0; i < plan->n_short; i++) {
        const rf_plan_row *w = &plan->short_of[i];
        rf_view_layout_text(&w->layout, lay, sizeof lay);
        rf_fmt(w->needed_bytes, RF_U_BYTES, need, sizeof need);
        rf_fmt(w->budget_bytes, RF_U_BYTES, budget, sizeof budget);
        rf_report_note(r,
                       "%lld device%s not enough: the best split, %s, needs %s on a device "
                       "of a %s budget",
                       (long long)w->devices, w->devices == 1 ? " is" : "s are", lay, need, budget);
    }
    rows_table(r, plan, pred);
    if (pred)
        pred_section(r, plan, pred, source);
}

void rf_view_plan_slo(rf_report *r, const rf_sim_plan_opts *po, const rf_sim_plan *p)
{
    char lay[96];
    rf_view_par_assume(r, &po->par.links, NULL);
    rf_report_assume(r,
                     "layouts: TP, PP and DP powers of two up to %lld devices (on a MoE model "
                     "EP 1 and TP x 1, 2, 4 ... DP); each pruned by memory, then by bounds no "
                     "rate improves on (the shortest prompt's prefill alone against the TTFT "
                     "SLO, a batch-1 decode against the TPOT SLO), the rest simulated: %s",
                     (long long)(po->devices ? po->devices : po->max_devices),
                     po->devices ? "the concurrency cap halved until a closed loop at cap x DP "
                                   "clients meets the TPOT SLO, then the rate bisected below "
                                   "that loop's throughput"
                                 : "at the rate, the concurrency cap (--max-seqs) halved while "
                                   "only TPOT misses");
    rf_report_assume(r,
                     "meets: P%g TTFT <= %g s and P%g TPOT <= %g s over %lld simulated "
                     "requests (Poisson or gamma arrivals, seed %llu), and the queue not "
                     "growing without bound; the engine as serve's: a step of %lld tokens, "
                     "chunks of %lld, blocks of %lld",
                     po->percentile, po->slo_ttft_s, po->percentile, po->slo_tpot_s,
                     (long long)po->workload.requests, (unsigned long long)po->workload.seed,
                     (long long)po->sched.max_batched_tokens, (long long)po->sched.chunk,
                     (long long)po->sched.block_tokens);
    if (!po->price_per_device_hour)
        rf_report_assume(r, "cost a million output tokens: give --price-per-hour USD");
    rf_report_section(r, "plan", "plan");
    rf_report_int(r, "layouts", "layouts tried", p->n_layouts, RF_U_INT);
    rf_report_int(r, "pruned", "pruned by memory or the bounds", p->n_pruned, RF_U_INT);
    rf_report_int(r, "simulations", "simulations run", p->n_sims, RF_U_INT);
    const rf_sim_plan_row *best = p->n_rows && p->rows[0].meets ? &p->rows[0] : NULL;
    if (best) {
        char text[192];
        rf_view_layout_text(&best->layout, lay, sizeof lay);
        if (best->prefill_workers)
            snprintf(text, sizeof text,
                     "%lld devices: %s, disaggregated %lld:%lld, a cap of %lld "
                     "requests a replica",
                     (long long)best->devices, lay, (long long)best->prefill_workers,
                     (long long)best->decode_workers, (long long)best->max_seqs);
        else
            snprintf(text, sizeof text, "%lld devices: %s, a cap of %lld requests a replica",
                     (long long)best->devices, lay, (long long)best->max_seqs);
        rf_report_str(r, "best", po->devices ? "best" : "fewest devices that meet", text);
        rf_report_int(r, "devices", "devices", (uint64_t)best->devices, RF_U_INT);
        rf_report_int(r, "max_seqs", "concurrency cap a replica", (uint64_t)best->max_seqs,
                      RF_U_INT);
        rf_report_num(r, "rate_per_s", "rate (requests/s)", best->rate_per_s, RF_U_SIG3);
    } else {
        rf_report_null(r, "best", po->devices ? "best" : "fewest devices that meet",
                       po->devices ? "none: no layout of these devices meets the SLOs"
                                   : "none up to --max-devices");
    }
    candidates(r, p, po->percentile, po->disagg);
}
