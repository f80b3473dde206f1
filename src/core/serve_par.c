/* serve_par.c - whole requests on many devices (rf_generate_par_compute,
 * rf_frontier_par_compute and rf_serve_par_compute in rf_serve.h), on
 * rf_parallel.h's API and parallel.c's mixed step (rf__par_mixed). */
#include <math.h>

#include "serve_internal.h"

/* The decode cycles of contexts lo..hi without PP: the shard's sum-of-max
 * in closed form plus the layout's part c, the same at every context. */
static rf_status decode_closed(const rf_model *m, const rf_step_opts *dec, const rf_roof *roof,
                               const rf_par_opts *po, int64_t lo, int64_t hi, rf_par *par,
                               rf_generate_par *g, rf_err *err)
{
    rf_floor_sum at_lo, at_hi, all;
    rf_status s = rf_par_compute(m, dec, roof, po, par, err);
    if (s)
        return s;
    const rf_model *shard = &par->stages[0].shard;
    rf_step_opts so = *dec;
    so.batch = par->micro_batch;
    if ((s = rf_floor_sum_compute(shard, &so, roof, lo, lo, &at_lo, err)) ||
        (s = rf_floor_sum_compute(shard, &so, roof, hi, hi, &at_hi, err)) ||
        (s = rf_floor_sum_compute(shard, &so, roof, lo, hi, &all, err)))
        return s;
    double c = par->cycle_s - at_lo.sum_of_max_s; /* dec is at context lo */
    g->decode_s = all.sum_of_max_s + (double)all.steps * c;
    g->tpot_first_s = par->cycle_s;
    g->tpot_last_s = at_hi.sum_of_max_s + c;
    return RF_OK;
}

/* The same step by step, for a pipeline (its cycle is a max over stages). */
static rf_status decode_loop(const rf_model *m, const rf_step_opts *dec, const rf_roof *roof,
                             const rf_par_opts *po, int64_t lo, int64_t hi, rf_par_sweep *ps,
                             rf_generate_par *g, rf_err *err)
{
    rf_par_point p;
    rf_status s = rf_par_sweep_prepare(ps, m, dec, roof, po, err);
    g->decode_s = 0;
    for (int64_t c = lo; c <= hi && !s; c++) {
        if (!(s = rf_par_sweep_eval(ps, c, &p, err)))
            g->decode_s += p.cycle_s;
        if (c == lo)
            g->tpot_first_s = p.cycle_s;
    }
    g->tpot_last_s = p.cycle_s;
    return s;
}

rf_status rf_generate_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                  const rf_par_opts *po, int64_t prompt, int64_t output,
                                  rf_par_sweep *scratch, rf_generate_par *out, rf_err *err)
{
    rf_status s = rf__serve_sizes(o, prompt, output, err);
    if (s)
        return s;
    rf_par *par = &scratch->par;
    rf_generate_par g = {.layout = po->layout,
                         .devices = rf_layout_devices(&po->layout),
                         .batch = o->batch,
                         .prompt = prompt,
                         .output = output,
                         .decode_steps = output - 1,
                         .closed_form = po->layout.pp == 1};
    rf_step_opts pre = *o;
    pre.phase = RF_PREFILL;
    pre.tokens = prompt;
    pre.context = 0;
    if ((s = rf_par_compute(m, &pre, roof, po, par, err)))
        return s;
    g.ttft_s = par->cycle_s;
    rf_step_opts dec = *o;
    dec.phase = RF_DECODE;
    dec.tokens = 1;
    dec.context = prompt + 1;
    if (output >= 2) {
        int64_t lo = prompt + 1, hi = prompt + output - 1;
        s = g.closed_form ? decode_closed(m, &dec, roof, po, lo, hi, par, &g, err)
                          : decode_loop(m, &dec, roof, po, lo, hi, scratch, &g, err);
        if (s)
            return s;
        g.tpot_mean_s = g.decode_s / (double)(output - 1);
    }
    g.latency_s = g.ttft_s + g.decode_s;
    g.tokens_per_s = (double)po->layout.dp * (double)o->batch * (double)output / g.latency_s;
    g.tokens_per_s_device = g.tokens_per_s / (double)g.devices;
    /* the memory of the end: B sequences at P + N - 1 on every device */
    rf_step_opts end = rf_generate_final_step(o, prompt, output);
    if ((s = rf_par_compute(m, &end, roof, po, par, err)))
        return s;
    g.fits = par->fits;
    g.min_margin_bytes = par->min_margin_bytes;
    *out = g;
    return RF_OK;
}

rf_status rf_frontier_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                                  const rf_par_opts *po, int64_t prompt, int64_t output,
                                  rf_par_sweep *scratch, rf_frontier_point *out, size_t n,
                                  rf_err *err)
{
    uint64_t seq; /* a sequence's KV and state at its last token */
    rf_status s = rf_model_seq_bytes(m, o->kv, prompt + output - 1, &seq, err);
    for (size_t i = 0; i < n && !s; i++) {
        rf_step_opts b = *o;
        b.batch = (int64_t)i + 1;
        rf_generate_par g;
        if ((s = rf_generate_par_compute(m, &b, roof, po, prompt, output, scratch, &g, err)))
            break;
        out[i] = (rf_frontier_point){.batch = b.batch,
                                     .ttft_s = g.ttft_s,
                                     .tpot_s = g.tpot_mean_s,
                                     .latency_s = g.latency_s,
                                     .tokens_per_s = g.tokens_per_s_device};
        if (!rf_mul_u64(seq, (uint64_t)b.batch, &out[i].kv_bytes))
            s = rf_err_set(err, RF_ERANGE, "KV of %lld sequences overflows 64 bits",
                           (long long)b.batch);
    }
    if (!s)
        rf__frontier_mark(out, n);
    return s;
}

/* A micro-batch's share of the steady state sv in m of them: ceil(B / m)
 * decode tokens and ceil(T_p / m) prompt tokens, chunked by C as sv's. */
static rf__mix micro_mix(const rf_serve *sv, int64_t m)
{
    int64_t bq = sv->opts.concurrency, c = sv->chunk;
    int64_t tp = (sv->prompt_tokens + m - 1) / m;
    return (rf__mix){.decode_batch = (bq + m - 1) / m,
                     .decode_context = sv->decode_context,
                     .cascade = sv->opts.prefix.cascade ? sv->opts.prefix.shared : 0,
                     .groups = {{c, sv->chunk_context, tp / c, 1},
                                {tp % c, sv->chunk_context, tp % c ? 1 : 0, 1}},
                     .n_groups = 2};
}

/* A shared prefix is held once a device: each stage's KV less B - 1
 * copies of the prefix's, and the fit redone. */
static rf_status prefix_once(const rf_step_opts *o, int64_t shared, int64_t batch, rf_par *par,
                             rf_err *err)
{
    par->fits = true;
    for (size_t i = 0; i < par->n_stages; i++) {
        rf_par_stage *st = &par->stages[i];
        uint64_t kv = 0, copies;
        rf_status s = rf_model_kv_bytes(&st->shard, o->kv, shared, &kv, err);
        if (s)
            return s;
        if (!rf_mul_u64((uint64_t)(batch - 1), kv, &copies))
            return rf_err_set(err, RF_ERANGE, "shared prefix bytes overflow 64 bits");
        st->kv_bytes_resident -= copies; /* P_s < S_d: each sequence holds it */
        st->needed_bytes -= copies;
        st->fits = (double)st->needed_bytes <= st->budget_bytes;
        double margin = st->budget_bytes - (double)st->needed_bytes;
        if (i == 0 || margin < par->min_margin_bytes)
            par->min_margin_bytes = margin;
        par->fits = par->fits && st->fits;
    }
    return RF_OK;
}

rf_status rf_serve_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                               const rf_par_opts *po, const rf_serve_opts *so, rf_serve *sv,
                               rf_par *par, rf_serve_par *out, rf_err *err)
{
    rf_status s;
    if ((s = rf_layout_validate(m, &po->layout, err)) ||
        (s = rf_serve_compute(m, o, roof, so, sv, err)))
        return s;
    if (!po->mem_bytes)
        return rf_err_set(err, RF_EINVAL, "%s on many devices: no memory size a device", m->name);
    int64_t bq = so->concurrency, ps = so->prefix.shared, sd = sv->decode_context;
    rf_step_opts dec = *o; /* the replica's B sequences at S_d */
    dec.phase = RF_DECODE;
    dec.batch = bq;
    dec.context = sd;
    dec.tokens = 1;
    int64_t mbs = rf__par_micro_batches(&po->layout, bq);
    rf__mix mb = micro_mix(sv, mbs);
    rf_par_capacity cap;
    if ((s = rf__par_mixed(m, &dec, roof, po, &mb, par, err)) ||
        (ps && (s = prefix_once(o, ps, bq, par, err))) ||
        (s = rf_par_capacity_compute(m, o, po, sd, &cap, err)))
        return s;
    double most = ps ? (cap.tokens - (double)ps) / (double)(sd - ps) : cap.sequences;
    *out = (rf_serve_par){.layout = po->layout,
                          .devices = par->devices,
                          .micro_batches = par->micro_batches,
                          .micro_decode = mb.decode_batch,
                          .micro_prompt_tokens = (sv->prompt_tokens + mbs - 1) / mbs,
                          .rows = rf__mix_tokens(&mb),
                          .logit_rows = rf__mix_logits(&mb),
                          .tpot_s = par->cycle_s,
                          .ttft_steps = sv->ttft_steps,
                          .ttft_s = (double)sv->ttft_steps * par->cycle_s,
                          .tokens_per_s = par->tokens_per_s,
                          .tokens_per_s_device = par->tokens_per_s_device,
                          .fits = par->fits,
                          .max_concurrency = most > 0 ? floor(most) : 0};
    return RF_OK;
}
