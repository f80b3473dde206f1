/* parallel_plan.c - `plan` (rf_parallel.h): every layout of powers of two up
 * to a device limit through rf_par_compute, the fitting ones ranked, and
 * for each smaller device count why it is not enough. */
#include "roofline/rf_parallel.h"

/* < 0 when a ranks before b under obj. */
static int rank_rows(const rf_plan_row *a, const rf_plan_row *b, rf_objective obj)
{
    double x = 0, y = 0;
    switch (obj) {
    case RF_OBJ_COST:
        if (a->devices != b->devices)
            return a->devices < b->devices ? -1 : 1;
        x = -a->tokens_per_s_device, y = -b->tokens_per_s_device;
        break;
    case RF_OBJ_LATENCY:
        x = a->token_latency_s, y = b->token_latency_s;
        break;
    case RF_OBJ_THROUGHPUT:
        x = -a->tokens_per_s, y = -b->tokens_per_s;
        break;
    }
    if (x != y)
        return x < y ? -1 : 1;
    return a->devices < b->devices ? -1 : a->devices > b->devices;
}

static int log2_of(int64_t n)
{
    int k = 0;
    while (((int64_t)1 << (k + 1)) <= n)
        k++;
    return k;
}

rf_status rf_plan_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                          const rf_par_opts *po, int64_t max_devices, rf_objective obj,
                          rf_plan *out, rf_err *err)
{
    if (max_devices < 1 || max_devices > RF_PAR_MAX_DEGREE)
        return rf_err_set(err, RF_EINVAL, "--max-devices %lld must be within [1, %d]",
                          (long long)max_devices, RF_PAR_MAX_DEGREE);
    out->n_rows = out->n_short = out->n_tried = 0;
    int top = log2_of(max_devices);
    rf_plan_row best_at[32];
    bool seen[32] = {false};
    int64_t smallest = 0;
    for (int64_t tp = 1; tp <= max_devices; tp *= 2)
        for (int64_t pp = 1; tp * pp <= max_devices; pp *= 2)
            /* a replica serves at least one sequence: D <= B */
            for (int64_t dp = 1; tp * pp * dp <= max_devices && dp <= o->batch; dp *= 2)
                /* EP 1, or an expert group of tp x 1, 2, 4 ... dp replicas */
                for (int64_t ep = 1; ep <= tp * dp && (ep == 1 || m->n_experts);
                     ep = ep == 1 ? (tp > 1 ? tp : 2) : 2 * ep) {
                    rf_par_opts p = *po;
                    p.layout = (rf_layout){tp, pp, ep, dp};
                    if (rf_layout_validate(m, &p.layout, NULL))
                        continue;
                    rf_step_opts so = *o;
                    so.batch = (o->batch + dp - 1) / dp;
                    rf_status s = rf_par_compute(m, &so, roof, &p, &out->scratch, err);
                    if (s)
                        return s;
                    out->n_tried++;
                    const rf_par *r = &out->scratch;
                    rf_plan_row row = {.layout = p.layout,
                                       .devices = r->devices,
                                       .fits = r->fits,
                                       .margin_bytes = r->min_margin_bytes,
                                       .budget_bytes = r->stages[0].budget_bytes,
                                       .floor_s = r->stages[r->slowest].floor_s,
                                       .token_latency_s = r->token_latency_s,
                                       .tokens_per_s = r->tokens_per_s,
                                       .tokens_per_s_device = r->tokens_per_s_device,
                                       .comm_share = r->comm_share,
                                       .bubble = r->bubble};
                    for (size_t i = 0; i < r->n_stages; i++)
                        if ((double)r->stages[i].needed_bytes > row.needed_bytes)
                            row.needed_bytes = (double)r->stages[i].needed_bytes;
                    int k = log2_of(row.devices);
                    if (k <= top && (!seen[k] || row.margin_bytes > best_at[k].margin_bytes))
                        best_at[k] = row, seen[k] = true;
                    if (!row.fits)
                        continue;
                    if (!smallest || row.devices < smallest)
                        smallest = row.devices;
                    if (out->n_rows < RF_PLAN_MAX)
                        out->rows[out->n_rows++] = row;
                }
    for (size_t i = 1; i < out->n_rows; i++) /* insertion sort: stable, few */
        for (size_t j = i; j > 0 && rank_rows(&out->rows[j], &out->rows[j - 1], obj) < 0; j--) {
            rf_plan_row t = out->rows[j];
            out->rows[j] = out->rows[j - 1];
            out->rows[j - 1] = t;
        }
    for (int k = 0; k <= top && k < 16; k++)
        if (seen[k] && (!smallest || ((int64_t)1 << k) < smallest))
            out->short_of[out->n_short++] = best_at[k];
    return RF_OK;
}
