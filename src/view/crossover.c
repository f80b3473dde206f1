/* crossover.c - the crossing points as `crossover` and `report` show them. */
#include <stdio.h>

#include "roofline/rf_view.h"

/* The rule that gave an expert GEMM's tokens in flight, from the routing
 * rf_crossover_compute used. */
static void assume_expert_rows(rf_report *r, const rf_crossover *cx, const rf_model *m)
{
    size_t i = 0;
    while (i < cx->n_ops && !cx->ops[i].expert)
        i++;
    if (i == cx->n_ops)
        return;
    long long E = (long long)m->n_experts, k = (long long)m->top_k;
    if (cx->moe == RF_MOE_ALL)
        rf_report_assume(r,
                         "expert GEMMs: M* is the tokens one expert runs; every expert "
                         "streamed (--moe-experts all), so B tokens in flight give each of "
                         "the %lld experts B k / E = B x %lld / %lld, and B* = M* E / k",
                         E, k, E);
    else
        rf_report_assume(r,
                         "expert GEMMs: M* is the tokens one expert runs; under uniform "
                         "routing B tokens in flight touch E (1 - (1 - k/E)^B) of the %lld "
                         "experts (top-%lld), each running B k / touched, so B* solves "
                         "B k / touched = M* (close to M* E / k = M* x %.4g)",
                         E, k, (double)E / (double)k);
}

void rf_view_crossover(rf_report *r, const rf_crossover *cx, const rf_model *m,
                       const char *table_key, const char *section_key)
{
    int64_t hidden = m->hidden;
    assume_expert_rows(r, cx, m);
    rf_report_table(r, table_key,
                    "linear layers: compute-bound from M* rows, reached at B* "
                    "tokens in flight");
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "k", "K", RF_U_INT);
    rf_report_col(r, "n", "N", RF_U_INT);
    rf_report_col(r, "m_star", "M*", RF_U_INTENSITY);
    rf_report_col(r, "m_star_rows", "M* counts", RF_U_NONE);
    rf_report_col(r, "tokens_star", "B* in flight", RF_U_INTENSITY);
    for (size_t i = 0; i < cx->n_ops; i++) {
        const rf_cross *c = &cx->ops[i];
        rf_report_row(r);
        rf_report_cell_str(r, c->name);
        rf_report_cell_int(r, (uint64_t)c->k);
        rf_report_cell_int(r, (uint64_t)c->n);
        if (c->crosses)
            rf_report_cell_num(r, c->m_star);
        else
            rf_report_cell_null(r, "never");
        rf_report_cell_str(r, c->expert ? "tokens an expert" : "tokens in flight");
        if (c->crosses)
            rf_report_cell_num(r, c->tokens_star);
        else
            rf_report_cell_null(r, "never");
    }
    rf_report_section(r, section_key, "other crossing points");
    rf_report_num(r, "ridge", "ridge I*", cx->ridge, RF_U_INTENSITY);
    char lbl[96];
    snprintf(lbl, sizeof lbl, "square d = %lld projection, T*", (long long)hidden);
    if (cx->square_crosses)
        rf_report_num(r, "square_t_star", lbl, cx->square_t_star, RF_U_INTENSITY);
    else
        rf_report_null(r, "square_t_star", lbl, "never");
    rf_report_num(r, "attn_prefill_s_star",
                  cx->causal ? "prefill attention (causal), S*" : "prefill attention, S*",
                  cx->attn_prefill_s_star, RF_U_INTENSITY);
}
