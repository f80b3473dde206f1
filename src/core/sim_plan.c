/* sim_plan.c - SLO planning on the simulator: the fewest devices that meet
 * TTFT and TPOT targets at a rate, or the highest rate a device count
 * meets them at (rf_sim.h, "planning"). */
#include <math.h>
#include <string.h>

#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"

/* The shortest length a distribution draws. */
static int64_t shortest(const rf_sim_lengths *l)
{
    return l->dist == RF_SIM_FIXED ? l->value : l->lo;
}

/* A first guess at the longest, for the ITL log's bound: the fixed value,
 * else the smaller of hi and 4 x the mean plus 16. */
static double longest(const rf_sim_lengths *l)
{
    if (l->dist == RF_SIM_FIXED)
        return (double)l->value;
    double m = l->dist == RF_SIM_UNIFORM ? ((double)l->lo + (double)l->hi) / 2 : l->mean;
    double h = 4 * m + 16;
    return (double)l->hi < h ? (double)l->hi : h;
}

static rf_status opts_check(const rf_sim_plan_opts *po, rf_err *err)
{
    const rf_sim_workload *w = &po->workload;
    if (!(po->slo_ttft_s > 0) || !isfinite(po->slo_ttft_s))
        return rf_err_set(err, RF_EINVAL, "slo-ttft (%g s) must be > 0", po->slo_ttft_s);
    if (!(po->slo_tpot_s > 0) || !isfinite(po->slo_tpot_s))
        return rf_err_set(err, RF_EINVAL, "slo-tpot (%g s) must be > 0", po->slo_tpot_s);
    if (!(po->percentile > 0 && po->percentile < 100))
        return rf_err_set(err, RF_EINVAL, "percentile (%g) must be in (0, 100)", po->percentile);
    bool closed = w->arrival == RF_SIM_CLOSED;
    if (po->sched.spec_k)
        return rf_err_set(err, RF_EINVAL,
                          "plan: speculative decoding is not planned (spec-k "
                          "%lld)",
                          (long long)po->sched.spec_k);
    if (w->arrival == RF_SIM_TRACE || (closed && (po->devices || po->disagg)))
        return rf_err_set(err, RF_EINVAL,
                          "plan: the workload must be open loop (poisson or gamma:CV)%s",
                          closed ? " with --devices or --disagg" : " or a concurrency");
    if (w->arrival == RF_SIM_GAMMA && !(w->cv > 0))
        return rf_err_set(err, RF_EINVAL, "arrival gamma: cv (%g) must be > 0", w->cv);
    if (!closed && !po->devices && (!(w->rate_per_s > 0) || !isfinite(w->rate_per_s)))
        return rf_err_set(err, RF_EINVAL, "rate (%g requests/s) must be > 0", w->rate_per_s);
    if (po->disagg && po->devices)
        return rf_err_set(err, RF_EINVAL,
                          "plan --disagg answers a rate (the fewest devices); "
                          "with --devices it is not modelled");
    if (po->max_devices < 1 || po->max_devices > RF_PAR_MAX_DEGREE || po->devices < 0 ||
        po->devices > RF_PAR_MAX_DEGREE)
        return rf_err_set(err, RF_EINVAL,
                          "max-devices (%lld) and devices (%lld) must be in "
                          "[1, %d]",
                          (long long)po->max_devices, (long long)po->devices, RF_PAR_MAX_DEGREE);
    if (!(po->price_per_device_hour >= 0))
        return rf_err_set(err, RF_EINVAL, "price (%g a device-hour) must be >= 0",
                          po->price_per_device_hour);
    return RF_OK;
}

/* The largest device count layouts may use. */
static int64_t span(const rf_sim_plan_opts *po)
{
    return po->devices ? po->devices : po->max_devices;
}

/* Every layout of powers of two within the span (exactly `devices` when
 * set), as rf_plan_compute enumerates them: T, P, D, and on a MoE model
 * E = 1 and E = T g for g = 1, 2, 4 ... D. Returns the count (at most cap). */
static size_t layouts(const rf_model *m, const rf_sim_plan_opts *po, rf_layout *out, size_t cap)
{
    size_t n = 0;
    int64_t N = span(po);
    for (int64_t t = 1; t <= N; t *= 2)
        for (int64_t p = 1; t * p <= N; p *= 2)
            for (int64_t d = 1; t * p * d <= N; d *= 2) {
                if (po->devices && t * p * d != po->devices)
                    continue;
                for (int64_t g = 0; g <= d && n < cap; g = g ? 2 * g : 1) {
                    if (g && !m->n_experts)
                        break;
                    if (t * g == 1)
                        continue; /* E = 1: the layout without EP, already in */
                    rf_layout l = {t, p, g ? t * g : 1, d};
                    if (rf_layout_validate(m, &l, NULL) == RF_OK)
                        out[n++] = l;
                }
            }
    return n;
}

/* The ITL log's size for a run of the workload: every entry covers at
 * least one output token after the first. */
static int64_t log_cap(const rf_sim_plan_opts *po)
{
    double v = (double)po->workload.requests * longest(&po->workload.output) + 1024;
    return v > 0x1p26 ? (int64_t)1 << 26 : (int64_t)v;
}

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

rf_status rf_sim_plan_work_bytes(const rf_model *m, const rf_sim_plan_opts *po,
                                 rf_sim_plan *scratch, size_t *bytes, rf_err *err)
{
    rf_status s = opts_check(po, err);
    if (s)
        return s;
    rf_layout *ls = scratch->layouts;
    size_t n = layouts(m, po, ls, RF_SIM_PLAN_MAX);
    size_t table = 0, t;
    for (size_t i = 0; i < n; i++) {
        if ((s = rf_sim_par_table_bytes(&scratch->par, m, &ls[i], po->sched.max_batched_tokens,
                                        po->sched.max_seqs, &t, err)))
            return s;
        table = t > table ? t : table;
    }
    rf_sim_sched sc = po->sched;
    sc.replicas = span(po);
    if (po->workload.arrival == RF_SIM_CLOSED && po->workload.concurrency < sc.replicas)
        sc.replicas = po->workload.concurrency; /* more replicas are pruned */
    sc.lockstep = 1;
    sc.pool_blocks = sc.pool_blocks > 0 ? sc.pool_blocks : 1;
    rf_sim_workload w = po->workload;
    w.rate_per_s = w.rate_per_s > 0 ? w.rate_per_s : 1;
    size_t ws = 0, wd = 0;
    if ((s = rf_sim_workspace_bytes(&w, &sc, log_cap(po), &ws, err)))
        return s;
    if (po->disagg) {
        rf_sim_disagg d = {.prefill_workers = span(po),
                           .decode_workers = span(po),
                           .prefill = sc,
                           .decode = sc,
                           .model = m,
                           .link_bw_bytes_per_s = 1,
                           .link_latency_s = 0};
        d.prefill.replicas = d.decode.replicas = 1;
        if ((s = rf_sim_disagg_workspace_bytes(&w, &d, log_cap(po), &wd, err)))
            return s;
    }
    *bytes = align8(table) + (ws > wd ? ws : wd);
    return RF_OK;
}

/* What one planning run holds. */
typedef struct ctx {
    const rf_model *m;
    const rf_step_opts *o;
    const rf_roof *roof;
    const rf_sim_plan_opts *po;
    rf_sim_plan *out;
    char *table, *work;
    size_t table_bytes, work_bytes;
} ctx;

/* The step of g batches, one of them b (the others idle). */
static rf_status alone(rf_sim_par *p, const rf_sim_batch *b, double *t, rf_err *err)
{
    rf_sim_batch g[RF_SIM_PLAN_GROUP];
    for (int64_t i = 0; i < p->group; i++)
        g[i] = (rf_sim_batch){0};
    g[0] = *b;
    return rf_sim_par_step(p, g, p->group, t, err);
}

/* Lower bounds no rate improves on: TTFT >= the prefill of the shortest
 * prompt alone (its chunks one step each), TPOT >= the decode of one
 * sequence at the shortest prompt + 1 keys. */
static rf_status bounds(rf_sim_par *p, const rf_sim_plan_opts *po, double *ttft, double *tpot,
                        rf_err *err)
{
    int64_t P = shortest(&po->workload.prompt), C = po->sched.chunk;
    if (!C || C > po->sched.max_batched_tokens)
        C = po->sched.max_batched_tokens;
    *ttft = 0;
    rf_status s = RF_OK;
    for (int64_t o = 0; o < P && !s; o += C) {
        rf_sim_chunk ch = {.tokens = P - o < C ? P - o : C, .offset = o};
        rf_sim_batch b = {.n_chunks = 1, .chunks = &ch, .tokens = ch.tokens};
        double t = 0;
        if (!(s = alone(p, &b, &t, err)))
            *ttft += t;
    }
    int64_t ctx1 = P + 1;
    rf_sim_batch d = {
        .n_decode = 1, .decode_context = &ctx1, .decode_context_sum = ctx1, .tokens = 1};
    return s ? s : alone(p, &d, tpot, err);
}

/* A row's figures from a run's: the statistics at the percentile, goodput,
 * output tokens/s, the cost at row->devices, and whether it meets. */
static void figures(const rf_sim_plan_opts *po, const rf_sim_stat *ttft, const rf_sim_stat *tpot,
                    double goodput, double out_tokens_per_s, bool overloaded, rf_sim_plan_row *row)
{
    row->ttft_s = ttft->pq;
    row->tpot_s = tpot->pq;
    row->goodput_per_s = goodput;
    row->output_tokens_per_s = out_tokens_per_s;
    row->overloaded = overloaded;
    row->cost_per_mtok =
        rf_cost_per_mtok(po->price_per_device_hour, row->devices, out_tokens_per_s);
    row->meets = !overloaded && row->ttft_s <= po->slo_ttft_s && row->tpot_s <= po->slo_tpot_s;
}

/* One simulation of the layout prepared in c->out->par at `rate` with at
 * most `cap` sequences a replica; row gets its figures. */
static rf_status simulate(ctx *c, const rf_sim_sched *base, double rate, int64_t cap,
                          rf_sim_plan_row *row, rf_err *err)
{
    const rf_sim_plan_opts *po = c->po;
    rf_sim_workload w = po->workload;
    w.rate_per_s = rate;
    rf_sim_sched sc = *base;
    sc.max_seqs = cap;
    sc.slo_ttft_s = po->slo_ttft_s;
    sc.slo_tpot_s = po->slo_tpot_s;
    sc.percentile = po->percentile;
    rf_sim_result r;
    c->out->n_sims++;
    rf_status s = rf_sim_run_group(&w, &sc, rf_sim_par_step, &c->out->par, c->work, c->work_bytes,
                                   log_cap(po), &r, err);
    if (s)
        return s;
    row->max_seqs = cap;
    row->rate_per_s = w.arrival == RF_SIM_CLOSED ? r.requests_per_s : rate;
    figures(po, &r.ttft_s, &r.tpot_s, r.goodput_requests_per_s, r.output_tokens_per_s, r.overloaded,
            row);
    return RF_OK;
}

/* At a rate: caps from the largest down by halves while only TPOT misses
 * (a smaller batch decodes faster; TTFT only grows with the queue); the
 * first that meets, else the last tried. */
static rf_status at_rate(ctx *c, const rf_sim_sched *base, double rate, rf_sim_plan_row *row,
                         rf_err *err)
{
    rf_sim_plan_row best = *row;
    for (int64_t cap = base->max_seqs; cap >= 1; cap /= 2) {
        rf_sim_plan_row r = *row;
        rf_status s = simulate(c, base, rate, cap, &r, err);
        if (s)
            return s;
        best = r;
        if (r.meets || r.ttft_s > c->po->slo_ttft_s || r.overloaded)
            break;
    }
    *row = best;
    return RF_OK;
}

/* The highest rate that meets the SLOs: the cap from the closed loop at
 * full occupancy (the largest whose TPOT meets), then bisection of the
 * rate in (0, its throughput]. */
static rf_status best_rate(ctx *c, const rf_sim_sched *base, rf_sim_plan_row *row, rf_err *err)
{
    const rf_sim_plan_opts *po = c->po;
    int64_t D = row->layout.dp, cap = base->max_seqs;
    rf_sim_result r = {0};
    rf_status s = RF_OK;
    for (; cap >= 1; cap /= 2) {
        rf_sim_workload w = po->workload;
        w.arrival = RF_SIM_CLOSED;
        w.concurrency = cap * D;
        rf_sim_sched sc = *base;
        sc.max_seqs = cap;
        sc.percentile = po->percentile;
        c->out->n_sims++;
        if ((s = rf_sim_run_group(&w, &sc, rf_sim_par_step, &c->out->par, c->work, c->work_bytes,
                                  log_cap(po), &r, err)))
            return s;
        if (r.tpot_s.pq <= po->slo_tpot_s || cap == 1)
            break;
    }
    double lo = 0, hi = r.requests_per_s;
    rf_sim_plan_row good = *row, t = *row;
    good.meets = false;
    int64_t steps = po->bisect_steps > 0 ? po->bisect_steps : 8;
    for (int64_t i = 0; i < steps; i++) {
        double mid = i ? (lo + hi) / 2 : hi;
        if ((s = simulate(c, base, mid, cap, &t, err)))
            return s;
        if (t.meets) {
            good = t;
            lo = mid;
            if (!i)
                break; /* the throughput itself meets them */
        } else {
            hi = mid;
        }
    }
    *row = good.meets ? good : t;
    return RF_OK;
}

/* Prepare the layout of pa in c->out->par, its schedule in *base (the
 * pool, replicas and lockstep its own) and row's bounds; *ready false when
 * the weights leave no pool (row pruned, saying so). */
static rf_status prepare(ctx *c, const rf_par_opts *pa, rf_sim_plan_row *row, rf_sim_sched *base,
                         bool *ready, rf_err *err)
{
    rf_sim_par *p = &c->out->par;
    rf_err quiet;
    *base = c->po->sched;
    *ready = false;
    if (rf_sim_par_pool_blocks(c->m, c->o, pa, base->block_tokens, &base->pool_blocks, &quiet)) {
        row->pruned = true;
        row->why = "weights leave no KV pool";
        return RF_OK;
    }
    rf_status s = rf_sim_par_prepare(p, c->m, c->o, c->roof, pa, base->max_batched_tokens,
                                     base->max_seqs, c->table, c->table_bytes, err);
    if (s)
        return s;
    if (p->group > RF_SIM_PLAN_GROUP)
        return rf_err_set(err, RF_EINVAL, "an expert group of %lld replicas passes %d",
                          (long long)p->group, RF_SIM_PLAN_GROUP);
    rf_sim_par_sched(p, base);
    *ready = true;
    return bounds(p, c->po, &row->bound_ttft_s, &row->bound_tpot_s, err);
}

/* Evaluate layout l into row: prepared, pruned by memory or the bounds,
 * else simulated. */
static rf_status evaluate(ctx *c, const rf_layout *l, rf_sim_plan_row *row, rf_err *err)
{
    const rf_sim_plan_opts *po = c->po;
    rf_par_opts pa = po->par;
    pa.layout = *l;
    *row = (rf_sim_plan_row){.layout = *l, .devices = rf_layout_devices(l)};
    rf_sim_sched base;
    bool ready = false;
    if (po->workload.arrival == RF_SIM_CLOSED && po->workload.concurrency < l->dp) {
        row->pruned = true;
        row->why = "fewer clients than replicas";
        return RF_OK;
    }
    rf_status s = prepare(c, &pa, row, &base, &ready, err);
    if (s || !ready)
        return s;
    if (row->bound_tpot_s > po->slo_tpot_s || row->bound_ttft_s > po->slo_ttft_s) {
        row->pruned = true;
        row->why = row->bound_tpot_s > po->slo_tpot_s ? "batch-1 decode floor above the TPOT SLO"
                                                      : "prefill floor above the TTFT SLO";
        return RF_OK;
    }
    s = po->devices ? best_rate(c, &base, row, err)
                    : at_rate(c, &base, po->workload.rate_per_s, row, err);
    if (!s && !row->meets)
        row->why = row->overloaded ? "overloaded at this rate" : "misses the SLOs";
    return s;
}

/* The KV link of a disaggregated plan: its own figures, else the
 * scale-out link's (prefill and decode workers on different nodes). */
static rf_sim_disagg disagg_of(const ctx *c, const rf_sim_sched *base, int64_t P, int64_t D)
{
    const rf_sim_plan_opts *po = c->po;
    rf_sim_disagg d = {
        .prefill_workers = P,
        .decode_workers = D,
        .prefill = *base,
        .decode = *base,
        .model = c->m,
        .kv = c->o->kv,
        .link_bw_bytes_per_s = po->kv_link_bw_bytes_per_s > 0 ? po->kv_link_bw_bytes_per_s
                                                              : po->par.links.out_bw_bytes_per_s,
        .link_latency_s =
            po->kv_link_bw_bytes_per_s > 0 ? po->kv_link_latency_s : po->par.links.out_latency_s,
        .slo_ttft_s = po->slo_ttft_s,
        .slo_tpot_s = po->slo_tpot_s,
        .percentile = po->percentile};
    return d;
}

/* One disaggregated run of P:D workers of the prepared layout into row. */
static rf_status disagg_sim(ctx *c, const rf_sim_sched *base, int64_t P, int64_t D,
                            rf_sim_plan_row *row, bool *prefill_over, rf_err *err)
{
    const rf_sim_plan_opts *po = c->po;
    rf_sim_disagg d = disagg_of(c, base, P, D);
    rf_sim_disagg_result r;
    c->out->n_sims++;
    rf_status s =
        rf_sim_disagg_run(&po->workload, &d, rf_sim_par_step, &c->out->par, rf_sim_par_step,
                          &c->out->par, c->work, c->work_bytes, log_cap(po), &r, err);
    if (s)
        return s;
    int64_t per = rf_layout_devices(&row->layout);
    *prefill_over = r.prefill.overloaded;
    row->prefill_workers = P;
    row->decode_workers = D;
    row->devices = (P + D) * per;
    row->max_seqs = base->max_seqs;
    row->rate_per_s = po->workload.rate_per_s;
    figures(po, &r.ttft_s, &r.tpot_s, r.goodput_requests_per_s, r.output_tokens_per_s, r.overloaded,
            row);
    return RF_OK;
}

/* The P:D split of layout l (both sides on it) with the fewest workers:
 * the fewest prefill workers P whose TTFT meets (D the most the devices
 * allow, so decode does not hold the prefill side back: TTFT does not
 * depend on D), then the fewest decode workers D that meet both. At most
 * RF_SIM_PLAN_WORKERS workers in all. */
static rf_status disagg_layout(ctx *c, const rf_layout *l, rf_sim_plan_row *row, rf_err *err)
{
    const rf_sim_plan_opts *po = c->po;
    rf_par_opts pa = po->par;
    pa.layout = *l;
    int64_t per = rf_layout_devices(l), W = po->max_devices / per;
    W = W < RF_SIM_PLAN_WORKERS ? W : RF_SIM_PLAN_WORKERS;
    *row = (rf_sim_plan_row){
        .layout = *l, .devices = 2 * per, .prefill_workers = 1, .decode_workers = 1};
    rf_sim_sched base;
    bool ready = false;
    if (W < 2) {
        row->pruned = true;
        row->why = "no room for two workers";
        return RF_OK;
    }
    rf_status s = prepare(c, &pa, row, &base, &ready, err);
    if (s || !ready)
        return s;
    uint64_t kv = 0; /* the shortest prompt's transfer adds to the TTFT bound */
    if ((s = rf_model_kv_bytes(c->m, c->o->kv, shortest(&po->workload.prompt), &kv, err)))
        return s;
    rf_sim_disagg d = disagg_of(c, &base, 1, 1);
    row->bound_ttft_s += (double)kv / d.link_bw_bytes_per_s + d.link_latency_s;
    if (row->bound_tpot_s > po->slo_tpot_s || row->bound_ttft_s > po->slo_ttft_s) {
        row->pruned = true;
        row->why = row->bound_tpot_s > po->slo_tpot_s
                       ? "batch-1 decode floor above the TPOT SLO"
                       : "prefill floor and transfer above the TTFT SLO";
        return RF_OK;
    }
    int64_t P = 1;
    rf_sim_plan_row r = *row;
    bool over = false;
    for (; P < W; P++) {
        if ((s = disagg_sim(c, &base, P, W - P, &r, &over, err)))
            return s;
        if (r.ttft_s <= po->slo_ttft_s && !over)
            break;
    }
    if (P == W) {
        *row = r;
        row->why = "prefill misses the TTFT SLO with every split";
        return RF_OK;
    }
    for (int64_t D = 1; D <= W - P; D++) {
        if ((s = disagg_sim(c, &base, P, D, &r, &over, err)))
            return s;
        if (r.meets)
            break;
    }
    *row = r;
    if (!row->meets)
        row->why = row->overloaded ? "overloaded at this rate" : "misses the SLOs";
    return RF_OK;
}

/* Best first: meeting rows before the rest; among them the fewest devices
 * then the lowest cost (a rate given), or the highest rate then the lowest
 * cost (devices given); the rest by devices. Insertion sort: stable. */
static bool before(const rf_sim_plan_row *a, const rf_sim_plan_row *b, bool by_rate)
{
    if (a->meets != b->meets)
        return a->meets;
    if (!a->meets)
        return a->devices < b->devices;
    if (by_rate && a->rate_per_s != b->rate_per_s)
        return a->rate_per_s > b->rate_per_s;
    if (!by_rate && a->devices != b->devices)
        return a->devices < b->devices;
    return a->cost_per_mtok < b->cost_per_mtok;
}

static void rank_rows(rf_sim_plan *out, bool by_rate)
{
    for (size_t i = 1; i < out->n_rows; i++) {
        rf_sim_plan_row x = out->rows[i];
        size_t j = i;
        for (; j > 0 && before(&x, &out->rows[j - 1], by_rate); j--)
            out->rows[j] = out->rows[j - 1];
        out->rows[j] = x;
    }
}

rf_status rf_sim_plan_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                              const rf_sim_plan_opts *po, void *work, size_t work_bytes,
                              rf_sim_plan *out, rf_err *err)
{
    size_t need = 0, table = 0, t;
    rf_status s = rf_sim_plan_work_bytes(m, po, out, &need, err);
    if (s)
        return s;
    if (!work || work_bytes < need || ((uintptr_t)work & 7))
        return rf_err_set(err, RF_EINVAL,
                          "the plan's workspace has %zu bytes (8-byte aligned); "
                          "it needs %zu",
                          work_bytes, need);
    size_t n = layouts(m, po, out->layouts, RF_SIM_PLAN_MAX);
    for (size_t i = 0; i < n; i++) {
        if ((s = rf_sim_par_table_bytes(&out->par, m, &out->layouts[i],
                                        po->sched.max_batched_tokens, po->sched.max_seqs, &t, err)))
            return s;
        table = t > table ? t : table;
    }
    ctx c = {m,
             o,
             roof,
             po,
             out,
             work,
             (char *)work + align8(table),
             align8(table),
             work_bytes - align8(table)};
    out->n_rows = out->n_pruned = out->n_sims = 0;
    out->n_layouts = n;
    out->best_devices = 0;
    /* by device count: a rate given, stop after the first count that meets */
    for (int64_t N = 1; N <= span(po) && !(out->best_devices && !po->devices && !po->every); N *= 2)
        for (size_t i = 0; i < n; i++) {
            if (rf_layout_devices(&out->layouts[i]) != N)
                continue;
            rf_sim_plan_row *row = &out->rows[out->n_rows++];
            if ((s = evaluate(&c, &out->layouts[i], row, err)))
                return rf_err_prefix(err, s, "--tp %lld --pp %lld --ep %lld --dp %lld",
                                     (long long)out->layouts[i].tp, (long long)out->layouts[i].pp,
                                     (long long)out->layouts[i].ep, (long long)out->layouts[i].dp);
            out->n_pruned += row->pruned;
            if (row->meets && !out->best_devices)
                out->best_devices = N;
        }
    for (size_t i = 0; po->disagg && i < n && out->n_rows < RF_SIM_PLAN_MAX; i++) {
        rf_sim_plan_row *row = &out->rows[out->n_rows++];
        if ((s = disagg_layout(&c, &out->layouts[i], row, err)))
            return rf_err_prefix(err, s, "disagg on --tp %lld --pp %lld --ep %lld --dp %lld",
                                 (long long)out->layouts[i].tp, (long long)out->layouts[i].pp,
                                 (long long)out->layouts[i].ep, (long long)out->layouts[i].dp);
        out->n_pruned += row->pruned;
        if (row->meets && (!out->best_devices || row->devices < out->best_devices))
            out->best_devices = row->devices;
    }
    rank_rows(out, po->devices > 0);
    return RF_OK;
}
