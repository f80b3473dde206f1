/* frontier.c - the latency-throughput frontier of `frontier` and `report`
 * (static batches 1..n, rf_frontier_compute), its predictions, and the
 * curve under load beside it. */
#include "roofline/rf_view.h"

void rf_view_frontier_assume(rf_report *r, const rf_par_opts *po, int64_t cap, int64_t positions,
                             double price, double watts)
{
    if (po) {
        rf_view_par_assume(r, &po->links, &po->layout);
        rf_report_assume(r,
                         "each point: a static batch of B identical requests a replica run "
                         "to the end, as `generate --tp ...` counts it (each step the "
                         "layout's cycle), its tokens/s a device = D B N / latency / %lld "
                         "devices; the KV limit a replica's, the weights crossing a device's "
                         "of the first stage",
                         (long long)rf_layout_devices(&po->layout));
    } else
        rf_report_assume(r, "each point: a static batch of B identical requests run to the end, "
                            "as `generate` counts it (TTFT the prefill, TPOT the mean of the "
                            "decode floors summed exactly, tokens/s = B N / latency, one "
                            "device)");
    rf_report_assume(r, "Pareto front: no other batch has a latency at most this one's and a "
                        "throughput at least its own (one strictly); one front for TPOT, one "
                        "for TTFT");
    if (cap >= 0)
        rf_report_assume(r,
                         "KV limit: %lld requests of %lld positions fit the pool (util x "
                         "memory - weights - reserve, as `capacity`)",
                         (long long)cap, (long long)positions);
    if (price > 0)
        rf_report_assume(r,
                         "cost: USD per million output tokens = %g USD an hour / (tokens/s "
                         "x 3600) x 1e6, one device",
                         price);
    if (watts > 0)
        rf_report_assume(r,
                         "energy a token = board power %g W (the TDP, an upper bound) / "
                         "output tokens/s, joules",
                         watts);
}

void rf_view_frontier_summary(rf_report *r, const char *key, const char *label,
                              const rf_frontier_point *pts, int64_t n, int64_t cap, int64_t cross)
{
    rf_report_section(r, key, label);
    rf_report_int(r, "batches", "batch sizes", (uint64_t)n, RF_U_INT);
    if (cap >= 0)
        rf_report_int(r, "kv_limit_batch", "largest batch the KV pool admits", (uint64_t)cap,
                      RF_U_INT);
    else
        rf_report_null(r, "kv_limit_batch", "largest batch the KV pool admits",
                       "- (no memory size: give --mem)");
    rf_report_int(r, "weights_cross_batch", "batch where the KV read reaches the weights",
                  (uint64_t)cross, RF_U_INT);
    uint64_t on_tpot = 0, on_ttft = 0;
    for (int64_t i = 0; i < n; i++) {
        on_tpot += pts[i].pareto_tpot;
        on_ttft += pts[i].pareto_ttft;
    }
    rf_report_int(r, "front_tpot_points", "on the TPOT front", on_tpot, RF_U_INT);
    rf_report_int(r, "front_ttft_points", "on the TTFT front", on_ttft, RF_U_INT);
}

void rf_view_frontier_pred(rf_report *r, const rf_frontier_point *pred, const size_t *outside,
                           int64_t n)
{
    rf_report_assume(r, "predicted points: each batch's generation as `generate --predict` sums "
                        "it (TTFT the prefill predicted, the decode steps predicted at every "
                        "context); the Pareto fronts marked a second time on the predicted "
                        "TPOT, TTFT and tokens/s ('pred front' columns); the 'front' columns "
                        "are the floors'");
    uint64_t on_tpot = 0, on_ttft = 0, n_outside = 0;
    for (int64_t i = 0; i < n; i++) {
        on_tpot += pred[i].pareto_tpot;
        on_ttft += pred[i].pareto_ttft;
        n_outside += outside[i] > 0;
    }
    rf_report_int(r, "predicted_front_tpot_points", "on the predicted TPOT front", on_tpot,
                  RF_U_INT);
    rf_report_int(r, "predicted_front_ttft_points", "on the predicted TTFT front", on_ttft,
                  RF_U_INT);
    rf_report_int(r, "predicted_outside_points", "points with operators outside the calibration",
                  n_outside, RF_U_INT);
}

/* The predicted columns (--predict). */
static void pred_cols(rf_report *r)
{
    rf_report_col(r, "predicted_ttft_s", "pred TTFT", RF_U_SECONDS);
    rf_report_col(r, "predicted_tpot_s", "pred TPOT", RF_U_SECONDS);
    rf_report_col(r, "predicted_latency_s", "pred latency", RF_U_SECONDS);
    rf_report_col(r, "predicted_tokens_per_s", "pred tok/s", RF_U_TOK_RATE);
    rf_report_col(r, "predicted_front_tpot", "pred front (TPOT)", RF_U_NONE);
    rf_report_col(r, "predicted_front_ttft", "pred front (TTFT)", RF_U_NONE);
    rf_report_col(r, "predicted_outside", "outside", RF_U_INT);
}

static void pred_cells(rf_report *r, const rf_frontier_point *p, size_t outside)
{
    rf_report_cell_num(r, p->ttft_s);
    if (p->tpot_s > 0)
        rf_report_cell_num(r, p->tpot_s);
    else
        rf_report_cell_null(r, "-");
    rf_report_cell_num(r, p->latency_s);
    rf_report_cell_num(r, p->tokens_per_s);
    rf_report_cell_str(r, p->pareto_tpot ? "yes" : "no");
    rf_report_cell_str(r, p->pareto_ttft ? "yes" : "no");
    rf_report_cell_int(r, outside);
}

void rf_view_frontier_table(rf_report *r, const rf_frontier_point *p, size_t n, int64_t cap,
                            double price, double watts, bool layout, const rf_frontier_point *pred,
                            const size_t *outside)
{
    rf_report_table(r, "points",
                    layout ? "static batches a replica (tokens/s a device)"
                           : "static batches (one device)");
    rf_report_col(r, "batch", "B", RF_U_INT);
    rf_report_col(r, "ttft_s", "TTFT", RF_U_SECONDS);
    rf_report_col(r, "tpot_s", "TPOT", RF_U_SECONDS);
    rf_report_col(r, "latency_s", "latency", RF_U_SECONDS);
    rf_report_col(r, "tokens_per_s", "tokens/s", RF_U_TOK_RATE);
    rf_report_col(r, "front_tpot", "front (TPOT)", RF_U_NONE);
    rf_report_col(r, "front_ttft", "front (TTFT)", RF_U_NONE);
    rf_report_col(r, "fits", "fits", RF_U_NONE);
    if (price > 0)
        rf_report_col(r, "usd_per_mtok", "USD / M tokens", RF_U_SIG3);
    if (watts > 0)
        rf_report_col(r, "energy_per_token_j", "J / token", RF_U_SIG3);
    if (pred)
        pred_cols(r);
    for (size_t i = 0; i < n; i++) {
        rf_report_row(r);
        rf_report_cell_int(r, (uint64_t)p[i].batch);
        rf_report_cell_num(r, p[i].ttft_s);
        if (p[i].tpot_s > 0)
            rf_report_cell_num(r, p[i].tpot_s);
        else
            rf_report_cell_null(r, "-");
        rf_report_cell_num(r, p[i].latency_s);
        rf_report_cell_num(r, p[i].tokens_per_s);
        rf_report_cell_str(r, p[i].pareto_tpot ? "yes" : "no");
        rf_report_cell_str(r, p[i].pareto_ttft ? "yes" : "no");
        rf_report_cell_str(r, cap < 0 ? "?" : p[i].batch <= cap ? "yes" : "no");
        if (price > 0)
            rf_report_cell_num(r, rf_cost_per_mtok(price, 1, p[i].tokens_per_s));
        if (watts > 0)
            rf_report_cell_num(r, rf_energy_per_token_j(watts, 1, p[i].tokens_per_s));
        if (pred)
            pred_cells(r, &pred[i], outside[i]);
    }
}

void rf_view_load_curve(rf_report *r, const rf_load_point *pts, size_t n, int64_t prompt,
                        int64_t output, int clients, double q, double capacity, double first_over)
{
    rf_report_assume(r,
                     "under load: the engine simulated as serve's defaults at prompt %lld, "
                     "output %lld; capacity = the closed loop's throughput at %d clients; the "
                     "open loop (Poisson, 500 requests, seed 1) at 0.125 .. 1.5 x that rate; "
                     "P%g of each",
                     (long long)prompt, (long long)output, clients, q);
    rf_report_section(r, "load", "under load");
    rf_report_num(r, "capacity_requests_per_s", "capacity (closed loop, requests/s)", capacity,
                  RF_U_SIG3);
    if (first_over)
        rf_report_num(r, "first_overloaded_rate_per_s", "first overloaded rate", first_over,
                      RF_U_SIG3);
    else
        rf_report_null(r, "first_overloaded_rate_per_s", "first overloaded rate", "none");
    rf_report_table(r, "load_points", "under load, rate by rate");
    rf_report_col(r, "rate_per_s", "rate", RF_U_SIG3);
    rf_report_col(r, "ttft_s", "TTFT", RF_U_SECONDS);
    rf_report_col(r, "tpot_s", "TPOT", RF_U_SECONDS);
    rf_report_col(r, "overloaded", "overloaded", RF_U_NONE);
    for (size_t k = 0; k < n; k++) {
        rf_report_row(r);
        rf_report_cell_num(r, pts[k].rate_per_s);
        rf_report_cell_num(r, pts[k].ttft_s);
        rf_report_cell_num(r, pts[k].tpot_s);
        rf_report_cell_str(r, pts[k].overloaded ? "yes" : "no");
    }
}
