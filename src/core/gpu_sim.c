/* gpu_sim.c - the serving simulator's step predicted on kernel tables
 * (rf_gpu.h, "the serving simulator's step model"). */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_gpu.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"
#include "serve_internal.h"

size_t rf_gpu_sim_table_len(int64_t max_tokens, int64_t max_logits)
{
    return (size_t)(max_tokens + 1) + (size_t)(max_logits + 1);
}

static rf_gpu_ctx ctx_of(const rf_gpu_sim *s, const rf_step_opts *o)
{
    return (rf_gpu_ctx){.g = s->g, .shard = &s->shard, .model = &s->model,
                        .layout = s->po.layout, .opts = o, .quant = s->quant};
}

rf_status rf_gpu_sim_prepare(rf_gpu_sim *s, const rf_gpu_tables *g, const rf_gpu_quant *quant,
                             const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                             const rf_par_opts *po, int64_t max_tokens, int64_t max_logits,
                             double *table, size_t table_len, rf_err *err)
{
    if (po->layout.pp > 1)
        return rf_err_set(err, RF_EINVAL, "--predict under load: pipeline stages are not "
                                          "predicted (each stage's micro-batches)");
    if (m->kv_lora_rank > 0 || rf_model_is_hybrid(m))
        return rf_err_set(err, RF_EINVAL, "--predict under load: %s's attention (MLA or a "
                                          "hybrid mixer) has no kernel table here",
                          m->name);
    if (max_tokens < 1 || max_logits < 1 ||
        table_len < rf_gpu_sim_table_len(max_tokens, max_logits))
        return rf_err_set(err, RF_EINVAL, "--predict under load: a table too small");
    rf_status st = rf_layout_validate(m, &po->layout, err);
    if (st)
        return st;
    s->g = g, s->quant = quant, s->model = *m, s->opts = *o, s->roof = *roof, s->po = *po;
    s->opts.fused = true; /* engines run q, k, v as one GEMM, gate and up as one */
    s->max_tokens = max_tokens, s->max_logits = max_logits;
    s->lin = table;
    s->head = table + max_tokens + 1;
    for (size_t i = 0; i < rf_gpu_sim_table_len(max_tokens, max_logits); i++)
        table[i] = -1;
    s->n_sliding = 0;
    for (int64_t l = 0; l < m->layers; l++)
        s->n_sliding += m->window > 0 && m->sliding[l];
    s->n_full = m->layers - s->n_sliding;
    s->missing = 0;
    s->time_s = s->band_s = 0;
    s->steps_computed = 0;
    /* the shard and lm_head's shape from a one-row decode step */
    rf_step_opts d = *o;
    d.phase = RF_DECODE, d.batch = 1, d.context = 1, d.tokens = 1;
    if ((st = rf_par_compute(m, &d, roof, po, &s->par, err)))
        return st;
    s->shard = s->par.stages[0].shard;
    const rf_step *ds = &s->par.stages[0].step;
    s->has_head = false;
    for (size_t i = 0; i < ds->n_ops; i++)
        if (!strcmp(ds->ops[i].name, "lm_head"))
            s->head_op = ds->ops[i], s->has_head = true;
    return RF_OK;
}

/* lin(M): a device's decode step of M sequences less its attention and
 * lm_head rows, with its collectives, predicted. */
static rf_status lin_at(rf_gpu_sim *s, int64_t m, double *t_s, rf_err *err)
{
    if (s->lin[m] >= 0) {
        *t_s = s->lin[m];
        return RF_OK;
    }
    rf_step_opts d = s->opts;
    d.phase = RF_DECODE, d.batch = m, d.context = 1, d.tokens = 1;
    rf_status st = rf_par_compute(&s->model, &d, &s->roof, &s->po, &s->par, err);
    if (st)
        return st;
    s->steps_computed++;
    const rf_par_stage *ps = &s->par.stages[0];
    rf_step *k = &s->scratch;
    *k = ps->step;
    k->n_ops = 0;
    for (size_t i = 0; i < ps->step.n_ops; i++) {
        const rf_op *op = &ps->step.ops[i];
        if (op->kind == RF_OP_ATTN_DECODE || op->kind == RF_OP_ATTN_PREFILL ||
            !strcmp(op->name, "lm_head"))
            continue;
        k->ops[k->n_ops++] = *op;
    }
    rf_gpu_ctx c = ctx_of(s, &d);
    if ((st = rf_gpu_predict_step(&c, k, ps->coll, ps->n_coll, &s->pred, err)))
        return st;
    s->missing |= s->pred.missing;
    s->time_s += s->pred.time_s, s->band_s += s->pred.time_s * s->pred.band;
    *t_s = s->lin[m] = s->pred.time_s;
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
    rf_gpu_ctx c = ctx_of(s, &s->opts);
    rf_status st = rf_gpu_predict_step(&c, k, NULL, 0, &s->pred, err);
    if (st)
        return st;
    s->missing |= s->pred.missing;
    s->time_s += s->pred.time_s, s->band_s += s->pred.time_s * s->pred.band;
    *t_s = s->head[l] = s->pred.time_s;
    return RF_OK;
}

static const char *kv_name(const rf_step_opts *o)
{
    return o->kv.kind == RF_FP8_E4M3 || o->kv.kind == RF_FP8_E5M2 ? "fp8" : "bfloat16";
}

/* Decode attention of b decode tokens at mean context ctx, every layer. */
static rf_status decode_attn(rf_gpu_sim *s, int64_t b, double ctx, double *t_s, rf_err *err)
{
    const char *cat[8] = {"bfloat16", kv_name(&s->opts), "0"};
    double q[8] = {0, 0, 0, (double)s->shard.head_dim, (double)s->shard.n_q,
                   (double)s->shard.n_kv, (double)b, 0};
    rf_gpu_pred p;
    *t_s = 0;
    for (int cls = 0; cls < 2; cls++) {
        int64_t n = cls ? s->n_sliding : s->n_full;
        double keys = cls && ctx > (double)s->model.window ? (double)s->model.window : ctx;
        if (!n)
            continue;
        q[7] = keys > 2 ? keys - 1 : 1;
        rf_status st = rf_gpu_predict(s->g, RF_GPU_ATTN_GENERATION, q, cat, &p, err);
        if (st)
            return st;
        if (p.how == RF_GPU_NO_TABLE)
            s->missing |= 1u << RF_GPU_ATTN_GENERATION;
        s->time_s += (double)n * p.time_s, s->band_s += (double)n * p.time_s * p.band;
        *t_s += (double)n * p.time_s;
    }
    return RF_OK;
}

/* b prompt chunks' attention: t tokens each after o cached, every layer. */
static rf_status chunk_attn(rf_gpu_sim *s, int64_t b, int64_t t, int64_t o, double *t_s,
                            rf_err *err)
{
    const char *cat[8] = {"bfloat16", kv_name(&s->opts), "0"};
    double q[8] = {0, 0, 0, (double)s->shard.head_dim, (double)s->shard.n_q,
                   (double)s->shard.n_kv, (double)b, (double)t};
    rf_gpu_pred p;
    *t_s = 0;
    for (int cls = 0; cls < 2; cls++) {
        int64_t n = cls ? s->n_sliding : s->n_full;
        if (!n)
            continue;
        double prefix = (double)o;
        if (cls) { /* a window's keys: the query sees at most w */
            char w[24];
            snprintf(w, sizeof w, "%lld", (long long)s->model.window);
            cat[2] = w;
            rf_status st = rf_gpu_predict_at(s->g, RF_GPU_ATTN_CONTEXT, q, cat, prefix, &p, err);
            cat[2] = "0";
            if (st)
                return st;
            if (p.how == RF_GPU_NO_TABLE) { /* no rows of this window: the full table's */
                if ((st = rf_gpu_predict_at(s->g, RF_GPU_ATTN_CONTEXT, q, cat,
                                            prefix, &p, err)))
                    return st;
            }
        } else {
            rf_status st = rf_gpu_predict_at(s->g, RF_GPU_ATTN_CONTEXT, q, cat, prefix, &p, err);
            if (st)
                return st;
        }
        if (p.how == RF_GPU_NO_TABLE)
            s->missing |= 1u << RF_GPU_ATTN_CONTEXT;
        s->time_s += (double)n * p.time_s, s->band_s += (double)n * p.time_s * p.band;
        *t_s += (double)n * p.time_s;
    }
    return RF_OK;
}

static rf_status one(rf_gpu_sim *s, const rf_sim_batch *b, double *step_s, rf_err *err)
{
    *step_s = 0;
    if (b->tokens <= 0)
        return RF_OK;
    int64_t l = rf_sim_batch_logits(b);
    if (b->tokens > s->max_tokens || l > s->max_logits)
        return rf_err_set(err, RF_ERANGE, "--predict under load: a step of %lld tokens and "
                                          "%lld logit rows, beyond %lld and %lld",
                          (long long)b->tokens, (long long)l, (long long)s->max_tokens,
                          (long long)s->max_logits);
    double t = 0, sum = 0;
    rf_status st = lin_at(s, b->tokens, &t, err);
    sum += st ? 0 : t;
    if (!st && !(st = head_at(s, l, &t, err)))
        sum += t;
    if (!st && b->n_decode > 0 &&
        !(st = decode_attn(s, b->n_decode, (double)b->decode_context_sum / (double)b->n_decode,
                           &t, err)))
        sum += t;
    for (int64_t j = 0; j < b->n_chunks && !st; j++) {
        st = chunk_attn(s, 1, b->chunks[j].tokens, b->chunks[j].offset, &t, err);
        sum += st ? 0 : t;
    }
    *step_s = sum;
    return st;
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

rf_status rf_gpu_sim_generate(rf_gpu_sim *s, int64_t batch, int64_t prompt, int64_t output,
                              rf_gpu_generate *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    if (batch < 1 || prompt < 1 || output < 1 || batch > s->max_logits ||
        batch > s->max_tokens / prompt)
        return rf_err_set(err, RF_ERANGE, "--predict: a batch of %lld x %lld tokens beyond the "
                                          "prepared %lld tokens and %lld rows",
                          (long long)batch, (long long)prompt, (long long)s->max_tokens,
                          (long long)s->max_logits);
    double t;
    rf_status st = lin_at(s, batch * prompt, &t, err);
    out->ttft_s += st ? 0 : t;
    if (!st && !(st = head_at(s, batch, &t, err)))
        out->ttft_s += t;
    if (!st && !(st = chunk_attn(s, batch, prompt, 0, &t, err)))
        out->ttft_s += t;
    double fixed = 0;
    if (!st && output >= 2 && !(st = lin_at(s, batch, &t, err)))
        fixed += t;
    if (!st && output >= 2 && !(st = head_at(s, batch, &t, err)))
        fixed += t;
    for (int64_t c = prompt + 1; !st && c <= prompt + output - 1; c++) {
        if ((st = decode_attn(s, batch, (double)c, &t, err)))
            break;
        double step = fixed + t;
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

rf_status rf_gpu_sim_frontier(rf_gpu_sim *s, int64_t prompt, int64_t output,
                              rf_frontier_point *out, size_t n, rf_err *err)
{
    for (size_t i = 0; i < n; i++) {
        rf_gpu_generate g;
        rf_status st = rf_gpu_sim_generate(s, (int64_t)i + 1, prompt, output, &g, err);
        if (st)
            return st;
        out[i] = (rf_frontier_point){.batch = (int64_t)i + 1, .ttft_s = g.ttft_s,
                                     .tpot_s = g.tpot_mean_s, .latency_s = g.latency_s,
                                     .tokens_per_s = g.tokens_per_s};
    }
    rf__frontier_mark(out, n);
    return RF_OK;
}
