/* gpu_sim.c - the serving simulator's step predicted on kernel tables
 * (rf_gpu.h, "the serving simulator's step model"). */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_gpu.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"
#include "serve_internal.h"

size_t rf_gpu_sim_table_len(int64_t pp, int64_t max_tokens, int64_t max_logits)
{
    return 2 * (size_t)(pp > 1 ? pp : 1) * (size_t)(max_tokens + 1) + (size_t)(max_logits + 1);
}

static rf_gpu_ctx ctx_of(const rf_gpu_sim *s, const rf_model *shard, const rf_step_opts *o)
{
    return (rf_gpu_ctx){.g = s->g,
                        .shard = shard,
                        .model = &s->model,
                        .layout = s->po.layout,
                        .opts = o,
                        .quant = s->quant};
}

/* A softmax attention row (a mixer's conv and recurrence are attention
 * kinds too, but stay in lin: they do not read the KV cache). */
static bool softmax_attention(const rf_op *op)
{
    return (op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL) && op->name &&
           !strncmp(op->name, "attention", 9);
}

rf_status rf_gpu_sim_prepare(rf_gpu_sim *s, const rf_gpu_tables *g, const rf_gpu_quant *quant,
                             const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                             const rf_par_opts *po, int64_t max_tokens, int64_t max_logits,
                             double *table, size_t table_len, rf_err *err)
{
    int64_t pp = po->layout.pp > 1 ? po->layout.pp : 1;
    if (max_tokens < 1 || max_logits < 1 || max_tokens > RF_DIM_MAX / pp ||
        table_len < rf_gpu_sim_table_len(pp, max_tokens, max_logits))
        return rf_err_set(err, RF_EINVAL, "--predict under load: a table too small");
    rf_status st = rf_layout_validate(m, &po->layout, err);
    if (st)
        return st;
    s->g = g, s->quant = quant, s->model = *m, s->opts = *o, s->roof = *roof, s->po = *po;
    s->opts.fused = true; /* engines run q, k, v as one GEMM, gate and up as one */
    s->max_tokens = max_tokens, s->max_logits = max_logits;
    s->pp = pp;
    s->lin = table;
    s->send = table + pp * (max_tokens + 1);
    s->head = table + 2 * pp * (max_tokens + 1);
    for (size_t i = 0; i < rf_gpu_sim_table_len(pp, max_tokens, max_logits); i++)
        table[i] = -1;
    s->mla = m->kv_lora_rank > 0;
    s->mla_tables = s->mla && rf_gpu_mla_shape(m);
    s->window = m->window > 0 ? m->window : m->attn_chunk;
    for (int64_t i = 0, first = 0; i < pp; i++) {
        int64_t n = rf_layout_stage_layers(m->layers, pp, i);
        s->n_full[i] = s->n_sliding[i] = 0;
        for (int64_t l = first; l < first + n; l++) {
            if (rf_model_layer_mixer(m, l) != RF_MIX_ATTN)
                continue; /* a mixer: its rows are lin's */
            if (rf_model_layer_local(m, l) != RF_LOCAL_GLOBAL && s->window > 0)
                s->n_sliding[i]++;
            else
                s->n_full[i]++;
        }
        first += n;
    }
    s->missing = 0;
    s->time_s = s->band_s = 0;
    s->steps_computed = 0;
    /* the shards and lm_head's shape from a one-row decode step (a row a
     * micro-batch: P sequences) */
    rf_step_opts d = *o;
    d.phase = RF_DECODE, d.batch = pp, d.context = 1, d.tokens = 1;
    if ((st = rf_par_compute(m, &d, roof, po, &s->par, err)))
        return st;
    s->shard = s->par.stages[0].shard;
    const rf_step *ds = &s->par.stages[pp - 1].step;
    s->has_head = false;
    for (size_t i = 0; i < ds->n_ops; i++)
        if (!strcmp(ds->ops[i].name, "lm_head"))
            s->head_op = ds->ops[i], s->has_head = true;
    return RF_OK;
}

static void add_part(rf_gpu_sim *s, double t_s, double band)
{
    s->time_s += t_s, s->band_s += t_s * band;
}

/* lin_i(M) of every stage i: a device's decode step of M sequences less
 * its softmax attention and lm_head rows, with its collectives, predicted;
 * its pipeline send apart (send_i(M)). */
static rf_status lin_at(rf_gpu_sim *s, int64_t stage, int64_t m, double *t_s, double *send_s,
                        rf_err *err)
{
    size_t row = (size_t)(s->max_tokens + 1);
    if (s->lin[m] >= 0) {
        *t_s = s->lin[(size_t)stage * row + (size_t)m];
        *send_s = s->send[(size_t)stage * row + (size_t)m];
        return RF_OK;
    }
    rf_step_opts d = s->opts;
    d.phase = RF_DECODE, d.batch = m * s->pp, d.context = 1, d.tokens = 1; /* M a stage */
    rf_status st = rf_par_compute(&s->model, &d, &s->roof, &s->po, &s->par, err);
    if (st)
        return st;
    s->steps_computed++;
    d.batch = m;
    for (int64_t i = 0; i < s->pp; i++) {
        const rf_par_stage *ps = &s->par.stages[i];
        rf_step *k = &s->scratch;
        *k = ps->step;
        k->n_ops = 0;
        for (size_t j = 0; j < ps->step.n_ops; j++) {
            const rf_op *op = &ps->step.ops[j];
            if (!softmax_attention(op) && strcmp(op->name, "lm_head") &&
                rf_par_stage_holds(&s->par, (size_t)i, op))
                k->ops[k->n_ops++] = *op;
        }
        rf_gpu_ctx c = ctx_of(s, &ps->shard, &d);
        if ((st = rf_gpu_predict_step(&c, k, ps->coll, ps->n_coll, &s->pred, err)))
            return st;
        double send = 0;
        for (size_t j = 0; j < s->pred.n_coll; j++)
            if (ps->coll[j].kind == RF_COLL_P2P)
                send += (double)ps->coll[j].count * s->pred.coll[j].time_s;
        s->missing |= s->pred.missing;
        add_part(s, s->pred.time_s, s->pred.band);
        s->lin[(size_t)i * row + (size_t)m] = s->pred.time_s - send;
        s->send[(size_t)i * row + (size_t)m] = send;
    }
    *t_s = s->lin[(size_t)stage * row + (size_t)m];
    *send_s = s->send[(size_t)stage * row + (size_t)m];
    return RF_OK;
}

static rf_status head_at(rf_gpu_sim *s, int64_t l, double *t_s, rf_err *err)
{
    if (!s->has_head || l == 0) {
        *t_s = 0;
        return RF_OK;
    }
    if (s->head[l] >= 0) {
        *t_s = s->head[l];
        return RF_OK;
    }
    rf_op op = s->head_op;
    op.m = l;
    op.flops = 2 * (uint64_t)l * (uint64_t)op.k * (uint64_t)op.n;
    rf_step *k = &s->scratch;
    k->roof = s->roof;
    k->ops[0] = op;
    k->ops[0].count = 1;
    k->n_ops = 1;
    rf_gpu_ctx c = ctx_of(s, &s->par.stages[s->pp - 1].shard, &s->opts);
    rf_status st = rf_gpu_predict_step(&c, k, NULL, 0, &s->pred, err);
    if (st)
        return st;
    s->missing |= s->pred.missing;
    add_part(s, s->pred.time_s, s->pred.band);
    *t_s = s->head[l] = s->pred.time_s;
    return RF_OK;
}

static const char *kv_name(const rf_step_opts *o)
{
    return o->kv.kind == RF_FP8_E4M3 || o->kv.kind == RF_FP8_E5M2 ? "fp8" : "bfloat16";
}

/* MLA's attention on its floor: the softmax attention rows of the stage's
 * shard in a step of d (rf_step_compute), each max(F / pi, Q / beta). */
static rf_status attn_floor(rf_gpu_sim *s, int64_t stage, const rf_step_opts *d, double *t_s,
                            rf_err *err)
{
    rf_status st = rf_step_compute(&s->par.stages[stage].shard, d, &s->roof, &s->scratch, err);
    *t_s = 0;
    if (st)
        return st;
    for (size_t i = 0; i < s->scratch.n_ops; i++) {
        const rf_op *op = &s->scratch.ops[i];
        if (!softmax_attention(op))
            continue;
        double tf = (double)op->flops / s->roof.peak_flops_per_s;
        double tq = (double)op->bytes / s->roof.bw_bytes_per_s;
        *t_s += (double)op->count * (tf > tq ? tf : tq);
    }
    s->missing |= RF_GPU_NEED_MLA;
    add_part(s, *t_s, 0);
    return RF_OK;
}

/* MLA's attention of every layer of the stage from its table k at keys q
 * after prefix (its floor where the table is missing, marked). */
static rf_status mla_table(rf_gpu_sim *s, int64_t stage, rf_gpu_kind k, const double *q,
                           double prefix, double *t_s, rf_err *err)
{
    const char *cat[4] = {"bfloat16", kv_name(&s->opts)};
    rf_gpu_pred p;
    int64_t n = s->n_full[stage] + s->n_sliding[stage];
    rf_status st = rf_gpu_predict_at(s->g, k, q, cat, prefix, &p, err);
    *t_s = 0;
    if (st)
        return st;
    if (p.how == RF_GPU_NO_TABLE)
        s->missing |= 1u << k;
    add_part(s, (double)n * p.time_s, p.band);
    *t_s = (double)n * p.time_s;
    return RF_OK;
}

/* Decode attention of b decode tokens at mean context ctx, every
 * attention layer of the stage. */
static rf_status decode_attn(rf_gpu_sim *s, int64_t stage, int64_t b, double ctx, double *t_s,
                             rf_err *err)
{
    if (s->mla && s->mla_tables) {
        double q[8] = {0, 0, (double)s->shard.n_q, (double)b, ctx > 2 ? ctx - 1 : 1};
        return mla_table(s, stage, RF_GPU_MLA_GENERATION, q, 0, t_s, err);
    }
    if (s->mla) {
        rf_step_opts d = s->opts;
        d.phase = RF_DECODE, d.batch = b, d.tokens = 1;
        d.context = ctx > 1 ? (int64_t)(ctx + 0.5) : 1;
        return attn_floor(s, stage, &d, t_s, err);
    }
    const char *cat[8] = {"bfloat16", kv_name(&s->opts), "0"};
    double q[8] = {
        0,         0, 0, (double)s->shard.head_dim, (double)s->shard.n_q, (double)s->shard.n_kv,
        (double)b, 0};
    rf_gpu_pred p;
    *t_s = 0;
    for (int cls = 0; cls < 2; cls++) {
        int64_t n = cls ? s->n_sliding[stage] : s->n_full[stage];
        double keys = cls && ctx > (double)s->window ? (double)s->window : ctx;
        if (!n)
            continue;
        q[7] = keys > 2 ? keys - 1 : 1;
        rf_status st = rf_gpu_predict(s->g, RF_GPU_ATTN_GENERATION, q, cat, &p, err);
        if (st)
            return st;
        if (p.how == RF_GPU_NO_TABLE)
            s->missing |= 1u << RF_GPU_ATTN_GENERATION;
        add_part(s, (double)n * p.time_s, p.band);
        *t_s += (double)n * p.time_s;
    }
    return RF_OK;
}

/* b prompt chunks' attention: t tokens each after o cached, every
 * attention layer of the stage. */
static rf_status chunk_attn(rf_gpu_sim *s, int64_t stage, int64_t b, int64_t t, int64_t o,
                            double *t_s, rf_err *err)
{
    if (s->mla && s->mla_tables) {
        double q[8] = {0, 0, (double)s->shard.n_q, (double)b, (double)t};
        return mla_table(s, stage, RF_GPU_MLA_CONTEXT, q, (double)o, t_s, err);
    }
    if (s->mla) {
        rf_step_opts d = s->opts;
        d.phase = RF_PREFILL, d.batch = b, d.tokens = t, d.context = o;
        return attn_floor(s, stage, &d, t_s, err);
    }
    const char *cat[8] = {"bfloat16", kv_name(&s->opts), "0"};
    double q[8] = {0,
                   0,
                   0,
                   (double)s->shard.head_dim,
                   (double)s->shard.n_q,
                   (double)s->shard.n_kv,
                   (double)b,
                   (double)t};
    rf_gpu_pred p;
    *t_s = 0;
    for (int cls = 0; cls < 2; cls++) {
        int64_t n = cls ? s->n_sliding[stage] : s->n_full[stage];
        if (!n)
            continue;
        double prefix = (double)o;
        rf_status st;
        if (cls) { /* a window's keys: the query sees at most w */
            char w[24];
            snprintf(w, sizeof w, "%lld", (long long)s->window);
            cat[2] = w;
            st = rf_gpu_predict_at(s->g, RF_GPU_ATTN_CONTEXT, q, cat, prefix, &p, err);
            cat[2] = "0";
            if (!st && p.how == RF_GPU_NO_TABLE) /* no rows of this window: the full table's */
                st = rf_gpu_predict_at(s->g, RF_GPU_ATTN_CONTEXT, q, cat, prefix, &p, err);
        } else {
            st = rf_gpu_predict_at(s->g, RF_GPU_ATTN_CONTEXT, q, cat, prefix, &p, err);
        }
        if (st)
            return st;
        if (p.how == RF_GPU_NO_TABLE)
            s->missing |= 1u << RF_GPU_ATTN_CONTEXT;
        add_part(s, (double)n * p.time_s, p.band);
        *t_s += (double)n * p.time_s;
    }
    return RF_OK;
}

/* Micro-batch j of m (items round robin: decode tokens, then chunks; m =
 * 1 holds all of b) on stage i: *t_s its time there, *send_s its send. */
static rf_status micro_stage(rf_gpu_sim *s, const rf_sim_batch *b, int64_t j, int64_t m,
                             int64_t stage, double *t_s, double *send_s, rf_err *err)
{
    int64_t n_dec = 0, keys = 0, M = 0, L = 0;
    for (int64_t i = j; i < b->n_decode; i += m)
        n_dec++, keys += b->decode_context[i];
    for (int64_t i = 0; i < b->n_chunks; i++)
        if ((b->n_decode + i) % m == j)
            M += b->chunks[i].tokens, L += b->chunks[i].logits > 1 ? b->chunks[i].logits : 1;
    M += n_dec, L += n_dec;
    *t_s = *send_s = 0;
    if (M > s->max_tokens || L > s->max_logits)
        return rf_err_set(err, RF_ERANGE,
                          "--predict under load: a step of %lld tokens and "
                          "%lld logit rows, beyond %lld and %lld",
                          (long long)M, (long long)L, (long long)s->max_tokens,
                          (long long)s->max_logits);
    if (M <= 0)
        return RF_OK;
    double t = 0;
    rf_status st = lin_at(s, stage, M, t_s, send_s, err);
    if (!st && stage == s->pp - 1 && !(st = head_at(s, L, &t, err)))
        *t_s += t;
    if (!st && n_dec > 0 &&
        !(st = decode_attn(s, stage, n_dec, (double)keys / (double)n_dec, &t, err)))
        *t_s += t;
    for (int64_t i = 0; i < b->n_chunks && !st; i++) {
        if ((b->n_decode + i) % m != j)
            continue;
        if (!(st = chunk_attn(s, stage, 1, b->chunks[i].tokens, b->chunks[i].offset, &t, err)))
            *t_s += t;
    }
    return st;
}

/* One replica's step: its micro-batches through the stages; max(the
 * slowest micro-batch's latency with its sends, the busiest stage). */
static rf_status one(rf_gpu_sim *s, const rf_sim_batch *b, double *step_s, rf_err *err)
{
    *step_s = 0;
    if (b->tokens <= 0)
        return RF_OK;
    int64_t items = b->n_decode + b->n_chunks, m = items < s->pp ? items : s->pp;
    double busy[RF_PAR_MAX_STAGES] = {0}, lat = 0;
    for (int64_t j = 0; j < m; j++) {
        double through = 0;
        for (int64_t i = 0; i < s->pp; i++) {
            double t, send;
            rf_status st = micro_stage(s, b, j, m, i, &t, &send, err);
            if (st)
                return st;
            through += t + send;
            busy[i] += t;
        }
        lat = through > lat ? through : lat;
    }
    *step_s = lat;
    for (int64_t i = 0; i < s->pp; i++)
        *step_s = busy[i] > *step_s ? busy[i] : *step_s;
    return RF_OK;
}

rf_status rf_gpu_sim_group(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                           rf_err *err)
{
    rf_gpu_sim *s = user;
    *step_s = 0;
    for (int64_t i = 0; i < n; i++) {
        double t;
        rf_status st = one(s, &b[i], &t, err);
        if (st)
            return st;
        *step_s = t > *step_s ? t : *step_s;
    }
    return RF_OK;
}

/* A static batch's step: `batch` sequences of `prompt` tokens each (a
 * prefill), or (prompt 0) one decode token each at context ctx; under PP in
 * min(P, batch) micro-batches, as one() combines them. */
static rf_status static_step(rf_gpu_sim *s, int64_t batch, int64_t prompt, double ctx,
                             double *step_s, rf_err *err)
{
    int64_t m = batch < s->pp ? batch : s->pp;
    double busy[RF_PAR_MAX_STAGES] = {0}, lat = 0;
    for (int64_t j = 0; j < m; j++) {
        int64_t bj = batch / m + (j < batch % m), through_n = bj * (prompt ? prompt : 1);
        double through = 0;
        for (int64_t i = 0; i < s->pp; i++) {
            double t, send, a = 0;
            rf_status st = lin_at(s, i, through_n, &t, &send, err);
            if (!st && i == s->pp - 1 && !(st = head_at(s, bj, &a, err)))
                t += a;
            if (!st)
                st = prompt ? chunk_attn(s, i, bj, prompt, 0, &a, err)
                            : decode_attn(s, i, bj, ctx, &a, err);
            if (st)
                return st;
            t += a;
            through += t + send;
            busy[i] += t;
        }
        lat = through > lat ? through : lat;
    }
    *step_s = lat;
    for (int64_t i = 0; i < s->pp; i++)
        *step_s = busy[i] > *step_s ? busy[i] : *step_s;
    return RF_OK;
}

rf_status rf_gpu_sim_generate(rf_gpu_sim *s, int64_t batch, int64_t prompt, int64_t output,
                              rf_gpu_generate *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    if (batch < 1 || prompt < 1 || output < 1 || batch > s->max_logits ||
        batch > s->max_tokens / prompt)
        return rf_err_set(err, RF_ERANGE,
                          "--predict: a batch of %lld x %lld tokens beyond the "
                          "prepared %lld tokens and %lld rows",
                          (long long)batch, (long long)prompt, (long long)s->max_tokens,
                          (long long)s->max_logits);
    rf_status st = static_step(s, batch, prompt, 0, &out->ttft_s, err);
    for (int64_t c = prompt + 1; !st && c <= prompt + output - 1; c++) {
        double step;
        if ((st = static_step(s, batch, 0, (double)c, &step, err)))
            break;
        out->decode_s += step;
        if (c == prompt + 1)
            out->tpot_first_s = step;
        out->tpot_last_s = step;
    }
    if (st)
        return st;
    out->tpot_mean_s = output >= 2 ? out->decode_s / (double)(output - 1) : 0;
    out->latency_s = out->ttft_s + out->decode_s;
    out->tokens_per_s = (double)batch * (double)output / out->latency_s;
    return RF_OK;
}

rf_status rf_gpu_sim_frontier(rf_gpu_sim *s, int64_t prompt, int64_t output, rf_frontier_point *out,
                              size_t n, rf_err *err)
{
    for (size_t i = 0; i < n; i++) {
        rf_gpu_generate g;
        rf_status st = rf_gpu_sim_generate(s, (int64_t)i + 1, prompt, output, &g, err);
        if (st)
            return st;
        out[i] = (rf_frontier_point){.batch = (int64_t)i + 1,
                                     .ttft_s = g.ttft_s,
                                     .tpot_s = g.tpot_mean_s,
                                     .latency_s = g.latency_s,
                                     .tokens_per_s = g.tokens_per_s};
    }
    rf__frontier_mark(out, n);
    return RF_OK;
}
