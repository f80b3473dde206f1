/* op.c - one operator on the roofline as `gemm` and `attn` show it (how
 * it is counted, its FLOPs and bytes, intensity, regime and floor, where
 * it turns compute-bound), and `ops`'s table of a layer's operators. */
#include "roofline/rf_view.h"

void rf_view_gemm(rf_report *r, const rf_op *op, const rf_step_opts *o, rf_dtype y,
                  const rf_roof *roof)
{
    rf_point p = rf_roof_place(roof, (double)op->flops, (double)op->bytes);
    double mstar;
    bool crosses = rf_gemm_mstar(op->k, op->n, o->w, o->a, roof->ridge, &mstar);
    rf_report_assume(r, "F = 2 M K N; Q = M K b_a + K N b_w + M N b_y (read X, read W, write Y)");
    rf_report_assume(r, "output: Y written in %s (%s)", rf_dtype_name(y.kind),
                     o->has_out ? "--out-dtype"
                     : y.kind == o->a.kind
                         ? "the activations' dtype"
                         : "an 8- or 4-bit input is quantized for the GEMM alone; the engines' "
                           "scaled GEMMs write bf16; --out-dtype sets it");
    rf_report_int(r, "m", "M", (uint64_t)op->m, RF_U_INT);
    rf_report_int(r, "k", "K", (uint64_t)op->k, RF_U_INT);
    rf_report_int(r, "n", "N", (uint64_t)op->n, RF_U_INT);
    rf_report_int(r, "flops", "FLOPs", op->flops, RF_U_INT);
    rf_report_int(r, "bytes", "bytes", op->bytes, RF_U_INT);
    rf_report_int(r, "weight_bytes", "  of which weights", op->weight_bytes, RF_U_INT);
    rf_report_int(r, "act_bytes", "  of which activations", op->act_bytes, RF_U_INT);
    rf_report_num(r, "intensity", "intensity (FLOP/byte)", p.intensity, RF_U_INTENSITY4);
    rf_report_str(r, "regime", "regime", rf_regime_name(p.regime));
    rf_report_num(r, "ridge", "ridge (FLOP/byte)", roof->ridge, RF_U_INTENSITY);
    rf_report_num(r, "attainable_flops_per_s", "attainable", p.attainable_flops_per_s,
                  RF_U_FLOP_RATE);
    rf_report_num(r, "peak_fraction", "of compute peak",
                  p.attainable_flops_per_s / roof->peak_flops_per_s, RF_U_PERCENT);
    rf_report_num(r, "floor_s", "time floor", p.floor_s, RF_U_SECONDS);
    if (crosses)
        rf_report_num(r, "m_star", "compute-bound from M =", mstar, RF_U_INTENSITY);
    else
        rf_report_null(r, "m_star", "compute-bound from M =", "never (2KN <= I* b_a (K+N))");
}

void rf_view_attn_assume(rf_report *r, const rf_attn_desc *d)
{
    rf_report_assume(r,
                     "F = 4 n_q d_h B x query-key pairs a sequence; Q = 2 n_kv S d_h b_kv B "
                     "(K and V read once)%s",
                     d->naive ? "" : "; scores kept on chip (flash): no score bytes");
    if (d->naive)
        rf_report_assume(r, "naive: + 2 n_q q S b_a B bytes (every head's q x S scores written "
                            "by QK^T and read back by softmax.V, not kept on chip)");
}

void rf_view_attn(rf_report *r, const rf_attn_desc *d, const rf_op *op, rf_dtype kv,
                  const rf_roof *roof)
{
    rf_point p = rf_roof_place(roof, (double)op->flops, (double)op->bytes);
    rf_err e;
    rf_report_int(r, "heads", "query heads", (uint64_t)d->n_q, RF_U_INT);
    rf_report_int(r, "kv_heads", "KV heads", (uint64_t)d->n_kv, RF_U_INT);
    rf_report_num(r, "group", "group g = n_q / n_kv", (double)d->n_q / (double)d->n_kv, RF_U_NONE);
    rf_report_int(r, "context", "context S", (uint64_t)d->keys, RF_U_INT);
    uint64_t pairs;
    if (rf_attn_pairs(d, &pairs, &e) == RF_OK) /* rf_op_attention counted them */
        rf_report_int(r, "pairs", "query-key pairs a sequence", pairs, RF_U_INT);
    rf_report_int(r, "flops", "FLOPs", op->flops, RF_U_INT);
    rf_report_int(r, "bytes", "bytes", op->bytes, RF_U_INT);
    rf_report_int(r, "kv_bytes", "  of which K and V", op->kv_bytes, RF_U_INT);
    rf_report_int(r, "score_bytes", "  of which scores (naive)", op->extra_bytes, RF_U_INT);
    rf_report_num(r, "intensity", "intensity (FLOP/byte)", p.intensity, RF_U_INTENSITY4);
    rf_report_str(r, "regime", "regime", rf_regime_name(p.regime));
    rf_report_num(r, "ridge", "ridge (FLOP/byte)", roof->ridge, RF_U_INTENSITY);
    rf_report_num(r, "floor_s", "time floor", p.floor_s, RF_U_SECONDS);
    double s_star = rf_attn_prefill_sstar(d->n_q, d->n_kv, kv, roof->ridge);
    rf_report_num(r, "s_star", "prefill compute-bound from S =",
                  d->causal ? rf_attn_causal_sstar(s_star) : s_star, RF_U_INTENSITY);
}

void rf_view_ops_columns(rf_report *r, bool moe)
{
    rf_report_table(r, "ops", NULL);
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "m", "M", RF_U_INT);
    rf_view_expert_cols(r, moe);
    rf_report_col(r, "k", "K", RF_U_INT);
    rf_report_col(r, "n", "N", RF_U_INT);
    rf_report_col(r, "flops", "FLOPs", RF_U_INT);
    rf_report_col(r, "bytes", "bytes", RF_U_INT);
    rf_report_col(r, "intensity", "FLOP/B", RF_U_INTENSITY);
    rf_report_col(r, "regime", "regime", RF_U_NONE);
}

void rf_view_ops_row(rf_report *r, const rf_op *op, const char *name, const rf_roof *roof, bool moe)
{
    rf_point p = rf_roof_place(roof, (double)op->flops, (double)op->bytes);
    rf_report_row(r);
    rf_report_cell_str(r, name);
    rf_report_cell_int(r, (uint64_t)op->m);
    rf_view_expert_cells(r, op, moe);
    rf_report_cell_int(r, (uint64_t)op->k);
    rf_report_cell_int(r, (uint64_t)op->n);
    rf_report_cell_int(r, op->flops);
    rf_report_cell_int(r, op->bytes);
    rf_report_cell_num(r, p.intensity);
    rf_report_cell_str(r, rf_regime_name(p.regime));
}
