/* sim.c - a simulated run as `serve` shows it under load (rf_view_sim). */
#include <stdio.h>

#include "roofline/rf_view.h"

void rf_view_layout_text(const rf_layout *l, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "TP %lld x PP %lld x DP %lld", (long long)l->tp, (long long)l->pp,
                     (long long)l->dp);
    if (l->ep > 1 && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ", EP %lld", (long long)l->ep);
}

/* "2000", "uniform 100..900", "normal mean 500 sd 100 in 1..4000" */
static void lengths_text(const rf_sim_lengths *l, char *buf, size_t cap)
{
    static const char *const names[] = {[RF_SIM_FIXED] = "fixed",
                                        [RF_SIM_UNIFORM] = "uniform",
                                        [RF_SIM_NORMAL] = "normal",
                                        [RF_SIM_LOGNORMAL] = "lognormal"};
    _Static_assert(sizeof names / sizeof *names == RF_SIM_LOGNORMAL + 1, "a name a kind");
    if (l->dist == RF_SIM_FIXED)
        snprintf(buf, cap, "%lld", (long long)l->value);
    else if (l->dist == RF_SIM_UNIFORM)
        snprintf(buf, cap, "uniform in %lld..%lld", (long long)l->lo, (long long)l->hi);
    else if (l->lo == 1 && l->hi == RF_DIM_MAX)
        snprintf(buf, cap, "%s of mean %g and sd %g", names[l->dist], l->mean, l->sd);
    else
        snprintf(buf, cap, "%s of mean %g and sd %g in %lld..%lld", names[l->dist], l->mean, l->sd,
                 (long long)l->lo, (long long)l->hi);
}

static void assume(rf_report *r, const rf_view_sim_run *out)
{
    const rf_sim_workload *w = &out->w;
    const rf_sim_sched *s = &out->s;
    char p[96], n[96];
    lengths_text(&w->prompt, p, sizeof p);
    lengths_text(&w->output, n, sizeof n);
    if (w->arrival == RF_SIM_CLOSED)
        rf_report_assume(r,
                         "closed loop: %lld clients, each sending its next request when its "
                         "last one ends (no think time), %lld requests; prompt %s, output %s "
                         "tokens; seed %llu",
                         (long long)w->concurrency, (long long)w->requests, p, n,
                         (unsigned long long)w->seed);
    else if (w->arrival == RF_SIM_TRACE)
        rf_report_assume(r, "trace: %lld requests at the file's arrival times and lengths",
                         (long long)w->trace_len);
    else
        rf_report_assume(r,
                         "open loop: %lld requests arriving at %g a second, %s gaps%s; "
                         "prompt %s, output %s tokens; seed %llu",
                         (long long)w->requests, w->rate_per_s,
                         w->arrival == RF_SIM_POISSON ? "exponential (Poisson)" : "gamma",
                         w->arrival == RF_SIM_GAMMA ? " of the coefficient of variation given" : "",
                         p, n, (unsigned long long)w->seed);
    if (s->policy == RF_SIM_PREFILL_FIRST || !s->chunk)
        rf_report_assume(r, "schedule: %s",
                         s->policy == RF_SIM_PREFILL_FIRST
                             ? "prefill-first (SGLang's): a step holds prompt work only while "
                               "any is waiting or unfinished, the decodes paused; else every "
                               "decode (--schedule)"
                             : "unchunked (TensorRT-LLM's in-flight batching, chunking off): "
                               "each prompt whole in one step with the decodes, or it waits "
                               "(--schedule)");
    if (s->frontend_s > 0)
        rf_report_assume(r,
                         "front end: a request reaches the scheduler's queue %g ms after "
                         "it is sent (--frontend-latency), counted in its queue, TTFT and "
                         "E2E",
                         s->frontend_s * 1e3);
    if (s->idle_first)
        rf_report_assume(r, "an idle engine (nothing running or waiting) steps on the first "
                            "request to reach it alone, and queues those that arrived with it "
                            "at that step's end, as vLLM's engine loop does (--idle-first)");
    char chunk[64] = "prompts whole (no chunking)";
    if (s->chunk)
        snprintf(chunk, sizeof chunk, "prompts in chunks of at most %lld tokens",
                 (long long)s->chunk);
    rf_report_assume(r,
                     "engine: continuous batching, a step of at most %lld tokens "
                     "(--max-batched-tokens) and %lld requests (--max-seqs) a replica, "
                     "%s, FCFS admission; KV in "
                     "blocks of %lld tokens, a pool of %lld blocks a replica (util x memory "
                     "- reserve less the weights)%s%s",
                     (long long)s->max_batched_tokens, (long long)s->max_seqs, chunk,
                     (long long)s->block_tokens, (long long)s->pool_blocks,
                     s->no_preempt ? "; each request's whole KV reserved at admission "
                                     "(--no-preempt): never preempted"
                                   : "; a full pool preempts the last admitted (recomputed "
                                     "later)",
                     s->shared_prefix ? "; a shared prefix cached once" : "");
    rf_report_assume(r,
                     "each step's time: %s of that step's exact batch (every decode token "
                     "at its own context, every chunk at its own offset; MoE experts "
                     "counted on the step's own tokens): each latency is this schedule's "
                     "with every step on its floor, not a bound on an engine that schedules "
                     "otherwise; the TTFT and TPOT floors (one request alone) are the bounds; "
                     "docs/serving.md defines each metric",
                     out->layout_given ? "the layout's step model (each device's shard, "
                                         "sum of its operators' floors plus collectives)"
                                       : "the roofline floor max(FLOPs / peak, bytes / "
                                         "bandwidth)");
    if (s->spec_k)
        rf_report_assume(r,
                         "speculative decoding: a step = %lld draft passes (the draft's "
                         "floor; the first also prefills the step's prompt chunks) + the "
                         "target verifying up to K + 1 = %lld tokens a decoding request; "
                         "each proposal accepted with probability %g until the first "
                         "rejection, drawn from the seed per request; a request makes the "
                         "accepted tokens and one more a step",
                         (long long)s->spec_k, (long long)s->spec_k + 1, s->spec_accept);
    if (out->disagg)
        rf_report_assume(r,
                         "disaggregated: %lld prefill and %lld decode workers; a request's "
                         "KV crosses a link of %g GB/s and %g us after its first token",
                         (long long)out->d.prefill_workers, (long long)out->d.decode_workers,
                         out->d.link_bw_bytes_per_s / 1e9, out->d.link_latency_s * 1e6);
}

static void stat(rf_report *r, const char *key, const char *label, const rf_sim_stat *v, double q)
{
    char pq[32];
    rf_report_section(r, key, label);
    rf_report_int(r, "n", "values", (uint64_t)v->n, RF_U_INT);
    rf_report_num(r, "mean", "mean", v->mean, RF_U_SECONDS);
    rf_report_num(r, "p50", "P50", v->p50, RF_U_SECONDS);
    rf_report_num(r, "p90", "P90", v->p90, RF_U_SECONDS);
    rf_report_num(r, "p99", "P99", v->p99, RF_U_SECONDS);
    if (q != 99) {
        snprintf(pq, sizeof pq, "P%g (--percentile)", q);
        rf_report_num(r, "pq", pq, v->pq, RF_U_SECONDS);
    }
    rf_report_num(r, "max", "max", v->max, RF_U_SECONDS);
}

static void engine_figures(rf_report *r, const rf_sim_result *x)
{
    rf_report_num(r, "kv_util_mean", "KV pool in use (time mean)", x->kv_util_mean, RF_U_PERCENT);
    rf_report_int(r, "kv_peak_blocks", "KV blocks held at most", (uint64_t)x->kv_peak_blocks,
                  RF_U_INT);
    rf_report_int(r, "pool_blocks", "KV pool, blocks", (uint64_t)x->pool_blocks, RF_U_INT);
    rf_report_int(r, "preemptions", "preemptions", (uint64_t)x->preemptions, RF_U_INT);
    rf_report_int(r, "recompute_tokens", "tokens prefilled again", (uint64_t)x->recompute_tokens,
                  RF_U_INT);
    rf_report_int(r, "peak_running", "requests running at most", (uint64_t)x->peak_running,
                  RF_U_INT);
    rf_report_int(r, "steps", "steps", (uint64_t)x->steps, RF_U_INT);
    rf_report_num(r, "mean_step_tokens", "tokens a step (mean)", x->mean_step_tokens, RF_U_SIG3);
    if (!x->spec_verifies)
        return;
    rf_report_int(r, "spec_verifies", "verifications (speculative)", (uint64_t)x->spec_verifies,
                  RF_U_INT);
    rf_report_int(r, "spec_accepted", "proposals accepted", (uint64_t)x->spec_accepted, RF_U_INT);
    rf_report_num(r, "spec_tokens_per_verify", "tokens a verification (mean)",
                  x->spec_tokens_per_verify, RF_U_SIG3);
}

void rf_view_sim(rf_report *r, const rf_view_sim_run *out)
{
    char lay[96];
    const rf_sim_sched *s = &out->s;
    double q = s->percentile;
    assume(r, out);
    if (out->draft) {
        rf_report_section(r, "speculative", "speculative decoding");
        rf_report_str(r, "draft", "draft", out->draft->name);
        rf_report_int(r, "spec_k", "K speculated tokens", (uint64_t)s->spec_k, RF_U_INT);
        rf_report_num(r, "accept", "acceptance a token", s->spec_accept, RF_U_RATIO);
        rf_report_num(r, "tokens_per_iter", "tokens a verification (expected)",
                      rf_spec_tokens_per_iter(s->spec_k, s->spec_accept), RF_U_SIG3);
    }
    if (out->layout_given) {
        rf_view_layout_text(&out->layout, lay, sizeof lay);
        rf_report_section(r, "layout", "layout (a worker)");
        rf_report_str(r, "text", "layout", lay);
        rf_report_int(r, "tp", "TP", (uint64_t)out->layout.tp, RF_U_INT);
        rf_report_int(r, "pp", "PP", (uint64_t)out->layout.pp, RF_U_INT);
        rf_report_int(r, "ep", "EP", (uint64_t)out->layout.ep, RF_U_INT);
        rf_report_int(r, "dp", "DP", (uint64_t)out->layout.dp, RF_U_INT);
    }
    const rf_sim_result *x = &out->res;
    const rf_sim_disagg_result *d = &out->dres;
    rf_report_section(r, NULL,
                      out->disagg ? "under load (simulated, disaggregated)"
                                  : "under load (simulated request by request)");
    rf_report_int(r, "devices", "devices", (uint64_t)out->devices, RF_U_INT);
    rf_report_int(r, "requests", "requests", (uint64_t)(out->disagg ? d->requests : x->requests),
                  RF_U_INT);
    rf_report_num(r, "duration_s", "duration", out->disagg ? d->duration_s : x->duration_s,
                  RF_U_SECONDS);
    rf_report_num(r, "requests_per_s", "requests/s",
                  out->disagg ? d->requests_per_s : x->requests_per_s, RF_U_SIG3);
    rf_report_num(r, "output_tokens_per_s", "output tokens/s",
                  out->disagg ? d->output_tokens_per_s : x->output_tokens_per_s, RF_U_TOK_RATE);
    bool over = out->disagg ? d->overloaded : x->overloaded;
    rf_report_bool(r, "overloaded", "overloaded", over,
                   over ? "YES: the queue grows without bound at this rate"
                   : out->w.arrival == RF_SIM_CLOSED ? "no (a closed loop never is)"
                                                     : "no");
    if (!out->disagg && out->w.arrival != RF_SIM_CLOSED)
        rf_report_num(r, "queue_growth_per_s", "queue growth (requests/s)", x->queue_growth_per_s,
                      RF_U_SIG3);
    if (s->slo_ttft_s || s->slo_tpot_s) {
        rf_report_int(r, "good_requests", "requests meeting the SLOs",
                      (uint64_t)(out->disagg ? d->good_requests : x->good_requests), RF_U_INT);
        rf_report_num(r, "goodput_requests_per_s", "goodput (requests/s)",
                      out->disagg ? d->goodput_requests_per_s : x->goodput_requests_per_s,
                      RF_U_SIG3);
    }
    rf_report_num(r, "ttft_floor_s", "TTFT floor (the shortest prompt alone)", out->ttft_floor_s,
                  RF_U_SECONDS);
    rf_report_num(r, "tpot_floor_s", "TPOT floor (batch-1 decode after it)", out->tpot_floor_s,
                  RF_U_SECONDS);
    rf_report_int(r, "floor_prompt", "prompt of the floors", (uint64_t)out->floor_prompt, RF_U_INT);
    if (!out->disagg) {
        rf_report_num(r, "in_system_mean", "requests in system (time mean)", x->in_system_mean,
                      RF_U_SIG3);
        engine_figures(r, x);
        stat(r, "ttft_s", "TTFT (queueing included)", &x->ttft_s, q);
        stat(r, "tpot_s", "TPOT (first token excluded)", &x->tpot_s, q);
        stat(r, "itl_s", "inter-token latency", &x->itl_s, q);
        stat(r, "e2e_s", "end-to-end latency", &x->e2e_s, q);
        stat(r, "queue_s", "queueing delay", &x->queue_s, q);
        return;
    }
    stat(r, "ttft_s", "TTFT (prefill queueing, prefill and KV transfer)", &d->ttft_s, q);
    stat(r, "tpot_s", "TPOT (decode side, its wait included)", &d->tpot_s, q);
    stat(r, "itl_s", "inter-token latency (decode side)", &d->decode.itl_s, q);
    stat(r, "e2e_s", "end-to-end latency", &d->e2e_s, q);
    stat(r, "queue_s", "queueing delay (prefill side)", &d->prefill.queue_s, q);
    stat(r, "transfer_s", "KV transfer", &d->transfer_s, q);
    rf_report_section(r, "prefill", "prefill workers (each side's own run)");
    engine_figures(r, &d->prefill);
    rf_report_section(r, "decode", "decode workers");
    engine_figures(r, &d->decode);
}
