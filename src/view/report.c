/* report.c - what `report`'s page shows beside the operator tables: a
 * phase's totals, the KV capacity, the batch sweep, measured operators
 * beside their predictions, Figure 1's caption. */
#include "roofline/rf_view.h"

void rf_view_phase_totals(rf_report *r, const rf_step_opts *o, const rf_step *st)
{
    rf_report_int(r, "total_bytes",
                  o->traffic == RF_TRAFFIC_FULL ? "step bytes (every operator's)"
                                                : "step bytes (weights + KV)",
                  st->total_bytes, RF_U_BYTES);
    rf_report_int(r, "flops", "FLOPs", st->flops, RF_U_FLOPS);
    rf_report_num(r, "intensity", "byte-weighted intensity", st->intensity, RF_U_INTENSITY);
    rf_report_str(r, "regime", "regime", rf_regime_name(st->regime));
    rf_report_num(r, "floor_s", "step floor max(F/pi, Q/beta)", st->floor_s, RF_U_SECONDS);
    rf_report_num(r, "floor_sum_of_max_s", "sum-of-max floor (operator by operator)",
                  st->floor_sum_of_max_s, RF_U_SECONDS);
    rf_report_num(r, "tokens_per_s", "tokens/s ceiling", st->tokens_per_s, RF_U_TOK_RATE);
}

void rf_view_capacity(rf_report *r, rf_status s, const rf_capacity *c, const rf_err *e)
{
    rf_report_section(r, "capacity", "KV capacity");
    if (s) {
        rf_report_null(r, "sequences", "sequences at this context", e->msg);
        return;
    }
    rf_report_bool(r, "fits", "weights fit", c->weights_fit,
                   c->weights_fit ? "yes" : "no: the weights leave no room for KV");
    rf_report_int(r, "mem_bytes", "usable memory", c->mem_bytes, RF_U_BYTES_BIN);
    rf_report_int(r, "resident_bytes", "resident weights", c->resident_bytes, RF_U_BYTES_BIN);
    rf_report_int(r, "reserve_bytes", "reserve", c->reserve_bytes, RF_U_BYTES_BIN);
    rf_report_num(r, "pool_bytes", "KV pool", c->pool_bytes, RF_U_BYTES_BIN);
    rf_report_int(r, "kv_bytes_per_token", "KV bytes a token", c->kv_bytes_per_token, RF_U_INT);
    rf_report_int(r, "tokens", "tokens the pool holds", c->tokens, RF_U_INT);
    rf_report_num(r, "sequences", "sequences at this context", c->sequences, RF_U_RATIO);
}

void rf_view_batch_sweep(rf_report *r, const rf_batch_chart *c)
{
    rf_report_table(r, "sweep", "batch sweep: decode at this context");
    rf_report_col(r, "batch", "B", RF_U_INT);
    rf_report_col(r, "floor_s", "step floor", RF_U_SECONDS);
    rf_report_col(r, "tokens_per_s", "tokens/s", RF_U_TOK_RATE);
    rf_report_col(r, "regime", "regime", RF_U_NONE);
    rf_report_col(r, "fits", "fits the KV cache", RF_U_NONE);
    for (size_t i = 0; i < c->n; i++) {
        rf_report_row(r);
        rf_report_cell_int(r, (uint64_t)c->batch[i]);
        rf_report_cell_num(r, c->floor_s[i]);
        rf_report_cell_num(r, c->tokens_per_s[i]);
        rf_report_cell_str(r, rf_regime_name(c->regime[i]));
        rf_report_cell_str(r, c->capacity_sequences < 0                      ? "-"
                              : (double)c->batch[i] <= c->capacity_sequences ? "yes"
                                                                             : "no");
    }
}

void rf_view_measured(rf_report *r, const rf_plot *p)
{
    rf_report_table(r, "measured", "measured operators beside their predictions");
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "phase", "phase", RF_U_NONE);
    rf_report_col(r, "intensity", "FLOP/B", RF_U_INTENSITY);
    rf_report_col(r, "achieved_flops_per_s", "achieved", RF_U_FLOP_RATE);
    rf_report_col(r, "attainable_flops_per_s", "predicted attainable", RF_U_FLOP_RATE);
    static const char *const phase[] = {"decode", "prefill", "-"};
    for (size_t i = 0; i < p->n_points; i++) {
        const rf_plot_point *q = &p->points[i];
        if (!q->measured)
            continue;
        rf_report_row(r);
        rf_report_cell_str(r, q->name);
        rf_report_cell_str(r, phase[q->series]);
        rf_report_cell_num(r, q->intensity);
        rf_report_cell_num(r, q->flops_per_s);
        if (q->match >= 0)
            rf_report_cell_num(r, p->points[q->match].flops_per_s);
        else
            rf_report_cell_null(r, "- (no such operator)");
    }
}

const char *rf_view_figure1_caption(const rf_plot *p)
{
    for (size_t i = 0; i < p->n_points; i++)
        if (p->points[i].collective)
            return "Figure 1. Every operator a device of the layout runs in one decode step "
                   "(circles) and one prefill step (squares), its shard, at its arithmetic "
                   "intensity and attainable throughput min(pi, I x beta); its collectives "
                   "(triangles) on the roof of the link they cross, at I = 1 / (2 b_a) (an "
                   "all-reduce's adds a byte moved) and I x the link bandwidth they attain, so "
                   "latency-bound ones sit below their link's roof.";
    return "Figure 1. Every operator of one decode step (circles) and one prefill step "
           "(squares) at its arithmetic intensity and attainable throughput "
           "min(pi, I x beta). Left of the ridge an operator is bound by memory "
           "bandwidth, right of it by compute.";
}
