/* sim_disagg.c - disaggregated prefill and decode: the prefill workers'
 * simulation, each prompt's KV over the link, the decode workers'
 * simulation (rf_sim.h, "disaggregated prefill and decode"). */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* Same bits on every platform (see sim.c). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static rf_status disagg_check(const rf_sim_disagg *d, rf_err *err)
{
    if (d->prefill_workers < 1 || d->decode_workers < 1 ||
        d->prefill_workers > RF_SIM_MAX_REPLICAS || d->decode_workers > RF_SIM_MAX_REPLICAS)
        return rf_err_set(
            err, RF_EINVAL, "disagg %lld:%lld: each side needs at least one worker (at most %d)",
            (long long)d->prefill_workers, (long long)d->decode_workers, RF_SIM_MAX_REPLICAS);
    if (!(d->link_bw_bytes_per_s > 0) || !isfinite(d->link_bw_bytes_per_s) ||
        !(d->link_latency_s >= 0) || !isfinite(d->link_latency_s))
        return rf_err_set(err, RF_EINVAL,
                          "the KV link's bandwidth (%g B/s) must be > 0 and its latency (%g s) "
                          ">= 0",
                          d->link_bw_bytes_per_s, d->link_latency_s);
    if (!d->model)
        return rf_err_set(err, RF_EINVAL, "disagg: no model for the KV a prompt holds");
    if (d->prefill.spec_k || d->decode.spec_k)
        return rf_err_set(err, RF_EINVAL,
                          "disagg: speculative decoding is not simulated "
                          "disaggregated");
    return RF_OK;
}

/* Side `workers` x its engine's replicas. */
static rf_sim_sched side(const rf_sim_sched *s, int64_t workers)
{
    rf_sim_sched x = *s;
    x.replicas = workers * (s->replicas > 0 ? s->replicas : 1);
    return x;
}

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

/* The run's arrays after the two sides' workspace. */
typedef struct arrays {
    double *arrival, *ttft_p, *e2e_p, *e2e_d, *xfer, *tpot;
    int64_t *prompt, *output, *order;
    rf_sim_request *trace;
    rf__sim_entry *e, *tmp;
} arrays;

static size_t carve(arrays *a, char *base, int64_t n)
{
    size_t off = 0, N = (size_t)n;
#define TAKE(field, type)                                                                          \
    do {                                                                                           \
        if (base)                                                                                  \
            a->field = (type *)(void *)(base + off);                                               \
        off += align8(sizeof(type) * N);                                                           \
    } while (0)
    TAKE(arrival, double);
    TAKE(ttft_p, double);
    TAKE(e2e_p, double);
    TAKE(e2e_d, double);
    TAKE(xfer, double);
    TAKE(tpot, double);
    TAKE(prompt, int64_t);
    TAKE(output, int64_t);
    TAKE(order, int64_t);
    TAKE(trace, rf_sim_request);
    TAKE(e, rf__sim_entry);
    TAKE(tmp, rf__sim_entry);
#undef TAKE
    return off;
}

/* The workspace of one side's run of n requests (it depends on n, the
 * engine and max_log only). */
static rf_status side_bytes(int64_t n, const rf_sim_sched *s, int64_t max_log, size_t *bytes,
                            rf_err *err)
{
    rf_sim_workload t = {.arrival = RF_SIM_POISSON,
                         .requests = n,
                         .rate_per_s = 1,
                         .prompt = {.dist = RF_SIM_FIXED, .value = 1},
                         .output = {.dist = RF_SIM_FIXED, .value = 2}};
    return rf_sim_workspace_bytes(&t, s, max_log, bytes, err);
}

rf_status rf_sim_disagg_workspace_bytes(const rf_sim_workload *w, const rf_sim_disagg *d,
                                        int64_t max_log, size_t *bytes, rf_err *err)
{
    int64_t n = 0;
    rf_status s;
    *bytes = 0;
    if ((s = disagg_check(d, err)) || (s = rf__sim_workload_check(w, &n, err)))
        return s;
    if (w->arrival == RF_SIM_CLOSED || w->prefilled)
        return rf_err_set(err, RF_EINVAL, "disagg: the workload must be open loop or a trace");
    rf_sim_sched p = side(&d->prefill, d->prefill_workers), q = side(&d->decode, d->decode_workers);
    size_t bp = 0, bq = 0;
    if ((s = side_bytes(n, &p, max_log, &bp, err)) || (s = side_bytes(n, &q, max_log, &bq, err)))
        return s;
    *bytes = align8(bp > bq ? bp : bq) + carve(&(arrays){0}, NULL, n);
    return RF_OK;
}

rf_status rf_sim_disagg_run(const rf_sim_workload *w, const rf_sim_disagg *d,
                            rf_sim_group_fn prefill_step, void *prefill_user,
                            rf_sim_group_fn decode_step, void *decode_user, void *work,
                            size_t work_bytes, int64_t max_log, rf_sim_disagg_result *out,
                            rf_err *err)
{
    size_t need = 0;
    int64_t n = 0;
    rf_status s = rf_sim_disagg_workspace_bytes(w, d, max_log, &need, err);
    if (s)
        return s;
    if (!work || work_bytes < need || ((uintptr_t)work & 7))
        return rf_err_set(err, RF_EINVAL,
                          "the workspace has %zu bytes (8-byte aligned); the run "
                          "needs %zu",
                          work_bytes, need);
    rf__sim_workload_check(w, &n, err);
    size_t arr = carve(&(arrays){0}, NULL, n), run_bytes = work_bytes - arr;
    arrays a;
    carve(&a, (char *)work + run_bytes - run_bytes % 8, n);
    run_bytes -= run_bytes % 8;
    memset(out, 0, sizeof *out);
    if ((s = rf__sim_requests(w, n, a.arrival, a.prompt, a.output, err)))
        return s;
    /* the prefill workers: each request's prompt and first token */
    for (int64_t r = 0; r < n; r++)
        a.trace[r] = (rf_sim_request){a.arrival[r], a.prompt[r], 1};
    rf_sim_workload tp = {.arrival = RF_SIM_TRACE, .trace = a.trace, .trace_len = n};
    rf_sim_sched ps = side(&d->prefill, d->prefill_workers);
    if ((s = rf__sim_run(&tp, &ps, prefill_step, prefill_user, work, run_bytes, max_log,
                         &out->prefill, a.ttft_p, a.e2e_p, err)))
        return rf_err_prefix(err, s, "prefill workers");
    /* the KV of each prompt over the link: kv_seq(P) / bw + latency */
    double bytes_sum = 0;
    for (int64_t r = 0; r < n; r++) {
        uint64_t kv = 0;
        if ((s = rf_model_kv_bytes(d->model, d->kv, a.prompt[r], &kv, err)))
            return s;
        a.xfer[r] = (double)kv / d->link_bw_bytes_per_s + d->link_latency_s;
        bytes_sum += (double)kv;
    }
    out->transfer_bytes_mean = bytes_sum / (double)n;
    /* the decode workers: requests of 2 or more tokens, in the order their
     * KV lands (stable) */
    int64_t nd = 0;
    for (int64_t r = 0; r < n; r++)
        if (a.output[r] >= 2)
            a.e[nd++] = (rf__sim_entry){a.arrival[r] + a.ttft_p[r] + a.xfer[r], r};
    rf__sim_sort(a.e, a.tmp, nd);
    for (int64_t i = 0; i < nd; i++) {
        int64_t r = a.e[i].count;
        a.order[i] = r;
        a.trace[i] = (rf_sim_request){a.e[i].gap_s, a.prompt[r], a.output[r]};
    }
    if (nd) {
        rf_sim_workload td = {
            .arrival = RF_SIM_TRACE, .trace = a.trace, .trace_len = nd, .prefilled = true};
        rf_sim_sched ds = side(&d->decode, d->decode_workers);
        if ((s = rf__sim_run(&td, &ds, decode_step, decode_user, work, run_bytes, max_log,
                             &out->decode, a.tpot, a.e2e_d, err)))
            return rf_err_prefix(err, s, "decode workers");
    }
    /* each request's TTFT = prefill queue + prefill + transfer; its E2E
     * that and its decode (from the KV landing); its TPOT the decode's */
    double dur = 0, pct = d->percentile > 0 ? d->percentile : 99;
    int64_t good = 0, out_tokens = 0, nt = 0;
    for (int64_t r = 0; r < n; r++) {
        a.ttft_p[r] += a.xfer[r];
        a.e2e_p[r] = a.ttft_p[r];
        a.tpot[r] = 0; /* one token: any TPOT target met */
    }
    for (int64_t i = 0; i < nd; i++) {
        int64_t r = a.order[i];
        a.e2e_p[r] += a.e2e_d[i];
        a.tpot[r] = a.e2e_d[i] / (double)(a.output[r] - 1);
        a.e[nt++] = (rf__sim_entry){a.tpot[r], 1};
    }
    out->tpot_s = rf__sim_stat(a.e, a.tmp, nt, pct);
    for (int64_t r = 0; r < n; r++) {
        double end = a.arrival[r] + a.e2e_p[r];
        dur = end > dur ? end : dur;
        out_tokens += a.output[r];
        good += (!(d->slo_ttft_s > 0) || a.ttft_p[r] <= d->slo_ttft_s) &&
                (!(d->slo_tpot_s > 0) || a.tpot[r] <= d->slo_tpot_s);
        a.e[r] = (rf__sim_entry){a.ttft_p[r], 1};
    }
    out->ttft_s = rf__sim_stat(a.e, a.tmp, n, pct);
    for (int64_t r = 0; r < n; r++)
        a.e[r] = (rf__sim_entry){a.e2e_p[r], 1};
    out->e2e_s = rf__sim_stat(a.e, a.tmp, n, pct);
    for (int64_t r = 0; r < n; r++)
        a.e[r] = (rf__sim_entry){a.xfer[r], 1};
    out->transfer_s = rf__sim_stat(a.e, a.tmp, n, pct);
    out->requests = n;
    out->duration_s = dur;
    out->requests_per_s = (double)n / dur;
    out->output_tokens_per_s = (double)out_tokens / dur;
    out->good_requests = good;
    out->goodput_requests_per_s = (double)good / dur;
    out->overloaded = out->prefill.overloaded || out->decode.overloaded;
    return RF_OK;
}
