/* capacity.c - the KV pool as `capacity` shows it: one device's, and a
 * device's of a layout. */
#include "roofline/rf_view.h"

void rf_view_capacity_figures(rf_report *r, const rf_capacity *c)
{
    rf_report_bool(r, "fits", "weights fit", c->weights_fit,
                   c->weights_fit ? "yes" : "no: no room for KV (see above)");
    rf_report_num(r, "util", "util", c->util, RF_U_RATIO);
    rf_report_int(r, "mem_bytes", "usable memory", c->mem_bytes, RF_U_BYTES_BIN);
    rf_report_int(r, "resident_bytes", "resident weights", c->resident_bytes, RF_U_BYTES_BIN);
    rf_report_int(r, "reserve_bytes", "reserve", c->reserve_bytes, RF_U_BYTES_BIN);
    rf_report_num(r, "pool_bytes", "KV pool", c->pool_bytes, RF_U_BYTES_BIN);
    rf_report_int(r, "kv_bytes_per_token", "KV a token", c->kv_bytes_per_token, RF_U_INT);
    if (c->state_bytes_per_seq)
        rf_report_int(r, "state_bytes_per_sequence", "recurrent state a sequence",
                      c->state_bytes_per_seq, RF_U_INT);
    rf_report_int(r, "tokens", "tokens", c->tokens, RF_U_INT);
    rf_report_int(r, "context", "context", (uint64_t)c->context, RF_U_INT);
    if (c->context)
        rf_report_num(r, "sequences", "sequences at this context", c->sequences, RF_U_RATIO);
    else
        rf_report_null(r, "sequences", "sequences at this context", "- (no context given)");
}

void rf_view_capacity_layout(rf_report *r, const rf_par_capacity *c)
{
    const rf_layout *l = &c->layout;
    rf_report_assume(r,
                     "layout: TP %lld x PP %lld x EP %lld x DP %lld = %lld devices; each "
                     "device's pool = util x memory - reserve - its shard of the weights, "
                     "its KV a token that of its KV heads and layers; the stage with the "
                     "smallest pool bounds the pipeline",
                     (long long)l->tp, (long long)l->pp, (long long)l->ep, (long long)l->dp,
                     (long long)rf_layout_devices(l));
    rf_report_section(r, "layout", "a device of the layout");
    rf_report_int(r, "devices", "devices", (uint64_t)rf_layout_devices(l), RF_U_INT);
    rf_report_int(r, "stage", "stage with the smallest pool", (uint64_t)c->stage, RF_U_INT);
    rf_report_int(r, "resident_bytes", "resident weights a device", c->resident_bytes,
                  RF_U_BYTES_BIN);
    rf_report_num(r, "pool_bytes", "KV pool a device", c->pool_bytes, RF_U_BYTES_BIN);
    rf_report_bool(r, "fits", "weights fit", c->weights_fit, c->weights_fit ? "yes" : "no");
    rf_report_num(r, "tokens", "tokens a replica holds", c->tokens, RF_U_SIG3);
    if (c->context)
        rf_report_num(r, "sequences_total", "sequences at this context, all replicas",
                      c->sequences_total, RF_U_RATIO);
}
