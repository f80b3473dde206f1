/* sim_run.c - the simulator's run (sim.h): the workload and engine from
 * the options, the step model of one device or a layout, the floors of a
 * lone request, and the run. */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "opts.h"
#include "roofline/rf_trace_io.h"

/* The workload of s into w (*trace: the rows read, freed by the caller). */
static int workload(const cli_ctx *ctx, const cli_sim *s, rf_sim_workload *w,
                    rf_sim_request **trace)
{
    rf_err e;
    memset(w, 0, sizeof *w);
    w->seed = s->seed_given ? (uint64_t)s->seed : 1;
    if (s->trace) {
        const char *other = s->rate          ? "--rate"
                            : s->arrival     ? "--arrival"
                            : s->requests    ? "--requests"
                            : s->prompt      ? "--prompt"
                            : s->output      ? "--output-tokens"
                            : s->concurrency ? "--concurrency"
                                             : NULL;
        if (other)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "%s: not with --trace (the trace gives each "
                            "request's arrival and lengths)",
                            other);
        if (rf_trace_load(s->trace, trace, &w->trace_len, &e))
            return cli_fail(ctx, RF_EXIT_USAGE, "--trace: %s", e.msg);
        w->arrival = RF_SIM_TRACE;
        w->trace = *trace;
        w->requests = w->trace_len;
        return RF_EXIT_OK;
    }
    if (!s->prompt || !s->output)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "give --prompt P and --output-tokens N (tokens a "
                        "request, or a distribution), or --trace FILE.csv");
    if (rf_sim_lengths_parse(s->prompt, "prompt", &w->prompt, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--prompt: %s", e.msg);
    if (rf_sim_lengths_parse(s->output, "output", &w->output, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--output-tokens: %s", e.msg);
    if (s->rate && s->concurrency)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--rate and --concurrency: give one (open loop or "
                        "closed loop)");
    if (s->rate) {
        w->arrival = RF_SIM_POISSON;
        w->cv = 1;
        if (s->arrival && rf_sim_arrival_parse(s->arrival, &w->arrival, &w->cv, &e))
            return cli_fail(ctx, RF_EXIT_USAGE, "--arrival: %s", e.msg);
        w->rate_per_s = s->rate;
        w->requests = s->requests ? s->requests : CLI_SIM_REQUESTS;
        return RF_EXIT_OK;
    }
    if (s->arrival)
        return cli_fail(ctx, RF_EXIT_USAGE, "--arrival needs --rate R (the open loop)");
    if (!s->concurrency)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "give --concurrency C (closed loop) or --rate R "
                        "(open loop); --steady-state --concurrency B for "
                        "the steady-state model");
    w->arrival = RF_SIM_CLOSED;
    w->concurrency = s->concurrency;
    w->requests = s->requests ? s->requests
                              : (s->concurrency > CLI_SIM_REQUESTS / 4 ? 4 * s->concurrency
                                                                       : CLI_SIM_REQUESTS);
    return RF_EXIT_OK;
}

/* The step model behind a run: the floor (one device) or a layout's. */
typedef struct model {
    rf_sim_floor *floor;
    rf_sim_par *par;
    void *table;
    rf_sim_floor *draft; /* --draft: the draft's floor             */
    void *draft_table;
    int64_t g;               /* the layout's lockstep group          */
    rf_sim_group_fn predict; /* cli_sim.predict: the run's step model */
    void *predict_user;
} model;

static rf_status step_once(const model *md, const rf_sim_batch *b, double *t, rf_err *e)
{
    if (md->floor)
        return rf_sim_floor_step(md->floor, b, t, e);
    rf_sim_batch many[RF_SIM_PLAN_GROUP] = {{0}};
    many[0] = *b;
    return rf_sim_par_step(md->par, many, md->g, t, e);
}

/* The bounds no load improves on: the shortest prompt's prefill alone
 * (chunk by chunk, after its prefix hit) and one decode token after it. */
static rf_status floors(const model *md, cli_sim_out *out, rf_err *e)
{
    int64_t p = out->w.prompt.dist == RF_SIM_FIXED ? out->w.prompt.value : out->w.prompt.lo;
    if (out->w.arrival == RF_SIM_TRACE) {
        p = out->w.trace[0].prompt;
        for (int64_t i = 1; i < out->w.trace_len; i++)
            if (out->w.trace[i].prompt < p)
                p = out->w.trace[i].prompt;
    }
    const rf_sim_sched *s = &out->s;
    int64_t shared = s->shared_prefix < p - 1 ? s->shared_prefix : p - 1;
    int64_t off = s->block_tokens * (shared / s->block_tokens);
    int64_t c = s->chunk ? s->chunk : p;
    if (c > s->max_batched_tokens)
        c = s->max_batched_tokens;
    out->floor_prompt = p;
    out->ttft_floor_s = 0;
    while (off < p) {
        rf_sim_chunk ch = {.tokens = p - off < c ? p - off : c, .offset = off, .request = 0};
        rf_sim_batch b = {.n_chunks = 1, .chunks = &ch, .tokens = ch.tokens};
        double t;
        rf_status st = step_once(md, &b, &t, e);
        if (st)
            return st;
        out->ttft_floor_s += t;
        off += ch.tokens;
    }
    int64_t ctx1 = p + 1;
    rf_sim_batch b = {
        .n_decode = 1, .decode_context = &ctx1, .decode_context_sum = ctx1, .tokens = 1};
    return step_once(md, &b, &out->tpot_floor_s, e);
}

/* One run, its ITL log sized by the hint and, when short, once more by
 * what the run said it needs (the run is deterministic). */
static rf_status run(const model *md, cli_sim_out *out, rf_err *e)
{
    int64_t max_log = rf_sim_log_hint(&out->w, &out->s);
    rf_status st = RF_OK;
    for (int tries = 0; tries < 2; tries++) {
        size_t bytes;
        void *work;
        st = out->disagg ? rf_sim_disagg_workspace_bytes(&out->w, &out->d, max_log, &bytes, e)
                         : rf_sim_workspace_bytes(&out->w, &out->s, max_log, &bytes, e);
        if (st)
            return st;
        if (!(work = malloc(bytes)))
            return rf_err_set(e, RF_ENOMEM, "out of memory (%zu bytes of workspace)", bytes);
        if (out->disagg)
            st = rf_sim_disagg_run(&out->w, &out->d, rf_sim_par_step, md->par, rf_sim_par_step,
                                   md->par, work, bytes, max_log, &out->dres, e);
        else if (md->predict)
            st = rf_sim_run_group(&out->w, &out->s, md->predict, md->predict_user, work, bytes,
                                  max_log, &out->res, e);
        else if (md->floor)
            st = rf_sim_run(&out->w, &out->s, rf_sim_floor_step, md->floor, work, bytes, max_log,
                            &out->res, e);
        else
            st = rf_sim_run_group(&out->w, &out->s, rf_sim_par_step, md->par, work, bytes, max_log,
                                  &out->res, e);
        free(work);
        int64_t need = out->disagg ? (out->dres.prefill.log_entries > out->dres.decode.log_entries
                                          ? out->dres.prefill.log_entries
                                          : out->dres.decode.log_entries)
                                   : out->res.log_entries;
        if (st != RF_ERANGE || need <= max_log)
            return st;
        max_log = need;
    }
    return st;
}

/* The schedule: --schedule, else the --backend engine's default (docs/
 * serving.md, "Schedules"): vLLM's mixed chunked prefill, TensorRT-LLM's
 * in-flight batching with chunking off (a prompt whole; --chunk C turns
 * its chunking on), SGLang's prefill-first; mixed without a backend. */
static int schedule(const cli_ctx *ctx, const cli_sim *s, rf_sim_sched *sc)
{
    const char *name = s->schedule, *engine = s->engine;
    if (!name)
        name = !engine                                  ? "mixed"
               : !strcmp(engine, "sglang")              ? "prefill-first"
               : !strcmp(engine, "trtllm") && !s->chunk ? "unchunked"
                                                        : "mixed";
    sc->policy = strcmp(name, "prefill-first") ? RF_SIM_MIXED : RF_SIM_PREFILL_FIRST;
    if (strcmp(name, "unchunked"))
        return RF_EXIT_OK;
    if (s->chunk)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--chunk %lld: not with --schedule unchunked (a "
                        "prompt whole in one step)",
                        (long long)s->chunk);
    sc->chunk = 0;
    return RF_EXIT_OK;
}

/* The engine of s; the pool and the step model of the layout (or of one
 * device) into md. */
static int engine(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                  const cli_budget *b, const cli_par *par, const cli_sim *s, cli_sim_out *out,
                  model *md)
{
    rf_err e;
    rf_sim_sched *sc = &out->s;
    memset(sc, 0, sizeof *sc);
    sc->max_batched_tokens = s->max_tokens ? s->max_tokens : CLI_SIM_MAX_TOKENS;
    sc->max_seqs = s->max_seqs ? s->max_seqs : CLI_SIM_MAX_SEQS;
    sc->chunk = s->chunk ? s->chunk : sc->max_batched_tokens;
    if (schedule(ctx, s, sc))
        return RF_EXIT_USAGE;
    sc->block_tokens = s->block ? s->block : CLI_SIM_BLOCK;
    sc->shared_prefix = s->shared_prefix;
    sc->no_preempt = s->no_preempt;
    sc->frontend_s = s->frontend_s;
    sc->idle_first = s->idle_first;
    sc->slo_ttft_s = s->slo_ttft;
    sc->slo_tpot_s = s->slo_tpot;
    sc->percentile = s->percentile ? s->percentile : 99;
    if (!ctx->hw.mem_bytes)
        return cli_fail(ctx, RF_EXIT_USAGE, "%s has no memory size (the KV pool): give --mem",
                        ctx->hw.name);
    if (sc->max_seqs > sc->max_batched_tokens)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--max-seqs %lld is above the step's %lld tokens "
                        "(--max-batched-tokens)",
                        (long long)sc->max_seqs, (long long)sc->max_batched_tokens);
    out->layout_given = cli_par_wanted(par) || s->disagg;
    out->layout = par->layout;
    out->devices = rf_layout_devices(&par->layout);
    if (s->draft && out->layout_given)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--draft on many devices is not modelled (the "
                        "draft's own layout is not given): drop the "
                        "layout options or --draft");
    if (!out->layout_given) {
        /* a verification scores its K + 1 positions: lm_head's rows */
        int64_t logits = sc->max_seqs;
        if (s->draft)
            logits = sc->max_seqs > sc->max_batched_tokens / (s->spec_k + 1)
                         ? sc->max_batched_tokens
                         : sc->max_seqs * (s->spec_k + 1);
        size_t bytes = rf_sim_floor_table_bytes(sc->max_batched_tokens, logits);
        if (!(md->floor = calloc(1, sizeof *md->floor)) || !(md->table = malloc(bytes)))
            return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        if (rf_sim_floor_prepare(md->floor, m, o, roof, sc->max_batched_tokens, logits, md->table,
                                 bytes, &e) ||
            rf_sim_pool_blocks(m, o, ctx->hw.mem_bytes, b->util, b->reserve_bytes, sc->block_tokens,
                               &sc->pool_blocks, &e))
            return cli_fail_err(ctx, &e);
        md->g = 1;
        if (!s->draft)
            return RF_EXIT_OK;
        bytes = rf_sim_floor_table_bytes(sc->max_batched_tokens, sc->max_seqs);
        if (!(md->draft = calloc(1, sizeof *md->draft)) || !(md->draft_table = malloc(bytes)))
            return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        if (rf_sim_floor_prepare(md->draft, s->draft, &s->draft_o, roof, sc->max_batched_tokens,
                                 sc->max_seqs, md->draft_table, bytes, &e))
            return cli_fail(ctx, cli_exit_for(e.status), "--draft: %s", e.msg);
        sc->spec_k = s->spec_k;
        sc->spec_accept = s->spec_accept;
        sc->draft = rf_sim_floor_group;
        sc->draft_user = md->draft;
        return RF_EXIT_OK;
    }
    rf_par_opts po;
    size_t bytes;
    int rc = cli_par_setup(ctx, m, b, par, &po);
    if (rc)
        return rc;
    if (!(md->par = calloc(1, sizeof *md->par)))
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (rf_sim_par_table_bytes(md->par, m, &par->layout, sc->max_batched_tokens, sc->max_seqs,
                               &bytes, &e))
        return cli_fail_err(ctx, &e);
    if (!(md->table = malloc(bytes)))
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    if (rf_sim_par_prepare(md->par, m, o, roof, &po, sc->max_batched_tokens, sc->max_seqs,
                           md->table, bytes, &e) ||
        rf_sim_par_pool_blocks(m, o, &po, sc->block_tokens, &sc->pool_blocks, &e))
        return cli_fail_err(ctx, &e);
    rf_sim_par_sched(md->par, sc);
    md->g = sc->lockstep > 1 ? sc->lockstep : 1;
    if (s->disagg) {
        rf_sim_disagg *d = &out->d;
        memset(d, 0, sizeof *d);
        d->prefill_workers = s->disagg_p;
        d->decode_workers = s->disagg_d;
        d->prefill = *sc;
        d->decode = *sc;
        d->model = m;
        d->kv = o->kv;
        d->link_bw_bytes_per_s =
            s->kv_link_gbps ? s->kv_link_gbps * 1e9 : po.links.out_bw_bytes_per_s;
        d->link_latency_s =
            s->kv_link_gbps || s->kv_link_us ? s->kv_link_us * 1e-6 : po.links.out_latency_s;
        d->slo_ttft_s = s->slo_ttft;
        d->slo_tpot_s = s->slo_tpot;
        d->percentile = sc->percentile;
        out->disagg = true;
        out->devices *= s->disagg_p + s->disagg_d;
    }
    return RF_EXIT_OK;
}

int cli_sim_run(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                const cli_budget *b, const cli_par *par, const cli_sim *s, cli_sim_out *out)
{
    rf_sim_request *trace = NULL;
    model md = {.predict = s->predict, .predict_user = s->predict_user};
    rf_err e;
    memset(out, 0, sizeof *out);
    int rc = workload(ctx, s, &out->w, &trace);
    if (!rc)
        rc = engine(ctx, m, o, roof, b, par, s, out, &md);
    if (!rc && out->disagg && out->w.arrival == RF_SIM_CLOSED)
        rc = cli_fail(ctx, RF_EXIT_USAGE, "--disagg needs an open loop (--rate R or --trace)");
    if (!rc && (floors(&md, out, &e) || run(&md, out, &e)))
        rc = cli_fail_err(ctx, &e);
    if (!rc)
        out->steps_computed = md.floor ? md.floor->steps_computed : md.par->steps_computed;
    out->draft = s->draft;
    out->w.trace = NULL; /* freed below; the view needs only its length */
    free(trace);
    free(md.table);
    free(md.floor);
    free(md.par);
    free(md.draft_table);
    free(md.draft);
    return rc;
}
