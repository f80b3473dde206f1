/* par.c - a layout as the commands show it: the links' assumptions, the
 * layout's section, a device of each stage and the collectives as operator
 * rows (rf_view_par). */
#include <stdio.h>

#include "roofline/rf_view.h"

static const char *coll_kind(rf_coll_kind k)
{
    return k == RF_COLL_ALLREDUCE   ? "all-reduce"
           : k == RF_COLL_ALLGATHER ? "all-gather"
           : k == RF_COLL_ALLTOALL  ? "all-to-all"
                                    : "point-to-point";
}

static void coll_table(rf_report *r, const rf_par *par)
{
    rf_report_table(r, "collectives", "collectives (a device, summed over 'count')");
    rf_report_col(r, "stage", "stage", RF_U_INT);
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "kind", "kind", RF_U_NONE);
    rf_report_col(r, "count", "count", RF_U_INT);
    rf_report_col(r, "bytes", "bytes", RF_U_BYTES);
    rf_report_col(r, "ranks", "ranks", RF_U_INT);
    rf_report_col(r, "link", "link", RF_U_NONE);
    rf_report_col(r, "floor_s", "floor", RF_U_SECONDS);
    rf_report_col(r, "bound_by", "bound by", RF_U_NONE);
    rf_report_col(r, "algorithm", "algorithm", RF_U_NONE); /* the floor's (rf_coll_cost) */
    for (size_t s = 0; s < par->n_stages; s++)
        for (size_t i = 0; i < par->stages[s].n_coll; i++) {
            const rf_coll *c = &par->stages[s].coll[i];
            rf_report_row(r);
            rf_report_cell_int(r, s);
            rf_report_cell_str(r, c->name);
            rf_report_cell_str(r, coll_kind(c->kind));
            rf_report_cell_int(r, c->count);
            rf_report_cell_int(r, c->count * c->bytes);
            rf_report_cell_int(r, (uint64_t)c->ranks);
            rf_report_cell_str(r, c->link);
            rf_report_cell_num(r, (double)c->count * c->time_s);
            rf_report_cell_str(r, c->latency_bound ? "latency" : "bandwidth");
            rf_report_cell_str(r, c->algo ? c->algo : "-");
        }
}

static void stage_table(rf_report *r, const rf_par *par)
{
    rf_report_table(r, "stages", "a device of each stage");
    rf_report_col(r, "stage", "stage", RF_U_INT);
    rf_report_col(r, "layers", "layers", RF_U_INT);
    rf_report_col(r, "weights_resident", "weights held", RF_U_BYTES);
    rf_report_col(r, "weights_streamed", "weights streamed", RF_U_BYTES);
    rf_report_col(r, "kv_resident", "KV held", RF_U_BYTES);
    rf_report_col(r, "needed_bytes", "needed", RF_U_BYTES);
    rf_report_col(r, "budget_bytes", "budget", RF_U_BYTES);
    rf_report_col(r, "fits", "fits", RF_U_NONE);
    rf_report_col(r, "ops_s", "operators", RF_U_SECONDS);
    rf_report_col(r, "comm_s", "collectives", RF_U_SECONDS);
    rf_report_col(r, "floor_s", "floor", RF_U_SECONDS);
    for (size_t s = 0; s < par->n_stages; s++) {
        const rf_par_stage *st = &par->stages[s];
        rf_report_row(r);
        rf_report_cell_int(r, s);
        rf_report_cell_int(r, (uint64_t)st->layers);
        rf_report_cell_int(r, st->weight_bytes_resident);
        rf_report_cell_int(r, st->weight_bytes_streamed);
        rf_report_cell_int(r, st->kv_bytes_resident);
        rf_report_cell_int(r, st->needed_bytes);
        rf_report_cell_num(r, st->budget_bytes);
        rf_report_cell_str(r, st->fits ? "yes" : "no");
        rf_report_cell_num(r, st->ops_s);
        rf_report_cell_num(r, st->comm_s);
        rf_report_cell_num(r, st->floor_s);
    }
}

void rf_view_par_assume(rf_report *r, const rf_hw_links *k, const rf_layout *l)
{
    char what[160] = "layouts"; /* plan: many */
    if (l)
        snprintf(what, sizeof what, "layout: TP %lld x PP %lld x EP %lld x DP %lld = %lld devices",
                 (long long)l->tp, (long long)l->pp, (long long)l->ep, (long long)l->dp,
                 (long long)rf_layout_devices(l));
    rf_report_assume(r,
                     "%s (an expert group: the TP groups of E / T replicas, attention "
                     "data-parallel across them); a collective's floor the least over the "
                     "algorithms an engine may run, alpha-beta: all-reduce ring, tree, one-shot "
                     "(t-1) n / bw + alpha, two-shot 2 (t-1)/t n / bw + 2 alpha%s; all-gather and "
                     "all-to-all direct (t-1)/t n / bw + alpha; a send n / bw + alpha",
                     what,
                     k->up_switch_reduce ? ", in-switch (t-1)/t n / bw + 2 alpha in a node" : "");
    rf_report_assume(r,
                     "links: %s %.4g GB/s a direction, %.3g us a hop, %lld devices a node; "
                     "between nodes %s %.4g GB/s a device, %.3g us a hop (%s)",
                     k->up_name, k->up_bw_bytes_per_s / 1e9, k->up_latency_s * 1e6,
                     (long long)k->devices_per_node, k->out_name, k->out_bw_bytes_per_s / 1e9,
                     k->out_latency_s * 1e6, k->origin);
    rf_report_assume(r, "a device's floor = the sum-of-max of its operators + its collectives "
                        "(no overlap); the overlap bound max(operators, collectives) is "
                        "optimistic");
}

void rf_view_par(rf_report *r, const rf_par *par, const rf_hw_links *links, bool overlap)
{
    rf_view_par_assume(r, links, &par->layout);
    rf_report_section(r, "layout", "layout (many devices)");
    rf_report_int(r, "devices", "devices", (uint64_t)par->devices, RF_U_INT);
    rf_report_int(r, "micro_batches", "micro-batches in flight", (uint64_t)par->micro_batches,
                  RF_U_INT);
    rf_report_int(r, "micro_batch", "sequences a micro-batch", (uint64_t)par->micro_batch,
                  RF_U_INT);
    rf_report_bool(r, "fits", "every device fits", par->fits, par->fits ? "yes" : "no");
    rf_report_num(r, "fit_margin_bytes", "smallest fit margin", par->min_margin_bytes, RF_U_BYTES);
    rf_report_num(r, "floor_s", "step floor (slowest stage)", par->stages[par->slowest].floor_s,
                  RF_U_SECONDS);
    rf_report_num(r, "token_latency_s", "token latency (all stages and sends)",
                  par->token_latency_s, RF_U_SECONDS);
    rf_report_num(r, "bubble", "pipeline bubble", par->bubble, RF_U_PERCENT);
    rf_report_num(r, "comm_share", "share of the step communicating", par->comm_share,
                  RF_U_PERCENT);
    rf_report_num(r, "tokens_per_s", "tokens/s, whole deployment", par->tokens_per_s,
                  RF_U_TOK_RATE);
    rf_report_num(r, "tokens_per_s_device", "tokens/s a device", par->tokens_per_s_device,
                  RF_U_TOK_RATE);
    if (overlap)
        rf_report_num(r, "overlap_tokens_per_s", "tokens/s if communication hid (optimistic)",
                      par->overlap_tokens_per_s, RF_U_TOK_RATE);
    stage_table(r, par);
    if (par->stages[0].n_coll || par->n_stages > 1)
        coll_table(r, par);
}
