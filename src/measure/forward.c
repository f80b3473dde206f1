/* forward.c - the forward pass's operator names and options, its shapes
 * (checked once for every file of the pass), the memory it needs and the
 * check that it fits (rf_forward.h). The pass itself is forward_pass.c,
 * its figures forward_plan.c, the reference check forward_check.c, the
 * statistics forward_stats.c, the whole profile forward_profile.c. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward_internal.h"
#include "measure_internal.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_op.h"

static const char *const op_names[] = {
    [RF_FWD_EMBED] = "embed",
    [RF_FWD_ATTN_NORM] = "attn_norm",
    [RF_FWD_Q_PROJ] = "q_proj",
    [RF_FWD_K_PROJ] = "k_proj",
    [RF_FWD_V_PROJ] = "v_proj",
    [RF_FWD_ROPE] = "rope",
    [RF_FWD_KV_WRITE] = "kv_write",
    [RF_FWD_ATTENTION] = "attention",
    [RF_FWD_ATTENTION_SWA] = "attention_swa",
    [RF_FWD_O_PROJ] = "o_proj",
    [RF_FWD_ATTN_RESIDUAL] = "attn_residual",
    [RF_FWD_MLP_NORM] = "mlp_norm",
    [RF_FWD_GATE_PROJ] = "gate_proj",
    [RF_FWD_UP_PROJ] = "up_proj",
    [RF_FWD_ACT] = "act",
    [RF_FWD_DOWN_PROJ] = "down_proj",
    [RF_FWD_MLP_RESIDUAL] = "mlp_residual",
    [RF_FWD_FINAL_NORM] = "final_norm",
    [RF_FWD_LM_HEAD] = "lm_head",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == RF_FWD_OP_COUNT,
               "one name per forward operator");

const char *rf_fwd_op_name(rf_fwd_op op)
{
    return op >= 0 && op < RF_FWD_OP_COUNT ? op_names[op] : "unknown";
}

rf_forward_opts rf_forward_opts_default(void)
{
    rf_forward_opts o = {.phase = RF_DECODE,
                         .batch = 1,
                         .context = 1024,
                         .tokens = 1,
                         .layers = 2,
                         .threads = 0,
                         .mem_limit_bytes = 0,
                         .warmup = 1,
                         .steps = 0,
                         .min_time_s = 2.0,
                         .seed = 20261130};
    return o;
}

/* ---- shapes, sizes, the memory check ------------------------------------ */

static rf_status bad(rf_err *err, const char *what, int64_t v, const char *why)
{
    return rf_err_set(err, RF_EINVAL, "%s (%lld) %s", what, (long long)v, why);
}

rf_status rf__fwd_shape_of(const rf_model *m, const rf_forward_opts *o, rf__fwd_shape *s,
                           rf_err *err)
{
    if (m->n_experts > 0)
        return rf_err_set(err, RF_EUNAVAIL,
                          "%s is a MoE model; profile runs dense decoder layers only", m->name);
    if (m->kv_lora_rank > 0)
        return rf_err_set(err, RF_EUNAVAIL,
                          "%s uses MLA attention; profile runs dense decoder layers only", m->name);
    if (m->hidden < 1 || m->n_q < 1 || m->n_kv < 1 || m->head_dim < 1 || m->ffn < 1 ||
        m->vocab < 1 || m->layers < 1)
        return rf_err_set(err, RF_EINVAL, "%s: a dimension is not positive", m->name);
    if (m->n_q % m->n_kv)
        return rf_err_set(err, RF_EINVAL, "%s: kv-heads (%lld) must divide heads (%lld)", m->name,
                          (long long)m->n_kv, (long long)m->n_q);
    if (m->head_dim % 2)
        return bad(err, "head_dim", m->head_dim, "must be even for rotary embeddings");
    if (o->batch < 1)
        return bad(err, "batch", o->batch, "must be at least 1");
    if (o->layers < 1 || o->layers > m->layers) {
        char why[64];
        snprintf(why, sizeof why, "must be in [1, %lld]", (long long)m->layers);
        return bad(err, "layers", o->layers, why);
    }
    if (o->phase == RF_DECODE && o->context < 1)
        return bad(err, "context", o->context,
                   "must be at least 1 in decode (the new token's key is one of them)");
    if (o->context < 0)
        return bad(err, "context", o->context, "must not be negative");
    if (o->phase == RF_PREFILL && o->tokens < 1)
        return bad(err, "tokens", o->tokens, "must be at least 1");
    if (o->threads < 0)
        return bad(err, "threads", o->threads, "must not be negative");
    if (o->warmup < 1)
        return bad(err, "warmup", o->warmup, "must be at least 1");
    if (o->steps < 0 || o->steps > RF_STATS_MAX) {
        char why[64];
        snprintf(why, sizeof why, "must be in [0, %d]", RF_STATS_MAX);
        return bad(err, "steps", o->steps, why);
    }

    /* Every dimension CBLAS sees is an int: refuse rather than wrap. */
    const int64_t lim = INT_MAX;
    s->H = m->hidden;
    s->n_q = m->n_q;
    s->n_kv = m->n_kv;
    s->dh = m->head_dim;
    s->g = m->n_q / m->n_kv;
    s->ffn = m->ffn;
    s->V = m->vocab;
    s->N = o->layers;
    s->B = o->batch;
    s->bias = m->qkv_bias;
    s->q_tokens = o->phase == RF_PREFILL ? o->tokens : 1;
    s->pos0 = o->phase == RF_PREFILL ? o->context : o->context - 1;
    if (s->H > lim || s->ffn > lim || s->V > lim || s->B > lim || s->q_tokens > lim ||
        s->n_q > lim / s->dh || s->pos0 > lim - s->q_tokens || s->B > lim / s->q_tokens)
        return rf_err_set(err, RF_ERANGE,
                          "a dimension of %s at batch %lld, context %lld, tokens %lld exceeds "
                          "what CBLAS takes (%d)",
                          m->name, (long long)o->batch, (long long)o->context,
                          (long long)s->q_tokens, INT_MAX);
    s->q_dim = s->n_q * s->dh;
    s->kv_dim = s->n_kv * s->dh;
    s->M = s->B * s->q_tokens;
    s->cap = s->pos0 + s->q_tokens;
    return RF_OK;
}

/* acc += a b c elements, checked. */
static bool add3(uint64_t *acc, int64_t a, int64_t b, int64_t c)
{
    uint64_t x;
    return rf_mul_u64((uint64_t)a, (uint64_t)b, &x) && rf_mul_u64(x, (uint64_t)c, &x) &&
           rf_add_u64(*acc, x, acc);
}

rf_status rf__fwd_mem_of(const rf__fwd_shape *s, rf_forward_mem *out, rf_err *err)
{
    uint64_t layer = 0, head = 0, kv = 0, act = 0;
    int64_t srows = s->q_tokens > s->g ? s->q_tokens : s->g;
    bool ok = add3(&layer, 2, s->H, 1) &&                        /* two norms  */
              add3(&layer, s->q_dim + 2 * s->kv_dim, s->H, 1) && /* q, k, v    */
              add3(&layer, s->bias ? s->q_dim + 2 * s->kv_dim : 0, 1, 1) &&
              add3(&layer, s->H, s->q_dim, 1) && /* o          */
              add3(&layer, 3, s->ffn, s->H) &&   /* gate up down */
              add3(&head, s->V, s->H, 1) && add3(&head, s->H, 1, 1) &&
              add3(&kv, s->N, s->B, s->cap) && rf_mul_u64(kv, 2 * (uint64_t)s->kv_dim, &kv) &&
              add3(&act, 2, s->M, s->H) &&                 /* x, xn      */
              add3(&act, 2, s->M, s->q_dim + s->kv_dim) && /* q, att, k, v */
              add3(&act, 2, s->M, s->ffn) &&               /* gate, up   */
              add3(&act, srows, s->cap, 1) &&              /* scores     */
              add3(&act, s->B, s->H + s->V, 1) &&          /* last, logits */
              add3(&act, s->cap, s->dh, 1) &&              /* cos, sin   */
              add3(&act, 2, s->M, 1);                      /* token ids: int64 = 2 floats */
    uint64_t n_layers = 0, total;
    ok = ok && rf_mul_u64(layer, 4, &layer) && rf_mul_u64(head, 4, &head) &&
         rf_mul_u64(kv, 4, &kv) && rf_mul_u64(act, 4, &act) &&
         rf_mul_u64(layer, (uint64_t)s->N, &n_layers) && rf_add_u64(n_layers, head, &total) &&
         rf_add_u64(total, kv, &total) && rf_add_u64(total, act, &total);
    if (!ok)
        return rf_err_set(err, RF_ERANGE, "the memory this pass needs overflows 64 bits");
    *out = (rf_forward_mem){.layer_bytes = layer,
                            .head_bytes = head,
                            .kv_bytes = kv,
                            .act_bytes = act,
                            .total_bytes = total};
    return RF_OK;
}

rf_status rf_forward_mem_of(const rf_model *m, const rf_forward_opts *o, rf_forward_mem *out,
                            rf_err *err)
{
    rf__fwd_shape s;
    rf_status st = rf__fwd_shape_of(m, o, &s, err);
    return st ? st : rf__fwd_mem_of(&s, out, err);
}

static uint64_t mem_avail(void)
{
    rf_cpu cpu;
    if (rf_cpu_query(&cpu, NULL) != RF_OK)
        return 0;
    return cpu.mem_avail_bytes;
}

/* Total bytes at these options, or UINT64_MAX when they are refused. */
static uint64_t total_at(const rf_model *m, const rf_forward_opts *o)
{
    rf_forward_mem mem;
    return rf_forward_mem_of(m, o, &mem, NULL) == RF_OK ? mem.total_bytes : UINT64_MAX;
}

/* "1.74 GiB", "250.3 KiB": binary units, for messages. */
static const char *size_text(uint64_t bytes, char *out, size_t cap)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.2f %s" : "%.0f %s", v, unit[u]);
    return out;
}

rf_status rf_forward_fit(const rf_model *m, const rf_forward_opts *o, uint64_t avail_bytes,
                         rf_err *err)
{
    rf_forward_mem mem;
    rf_status s = rf_forward_mem_of(m, o, &mem, err);
    if (s)
        return s;
    if (!avail_bytes)
        avail_bytes = mem_avail();
    if (!avail_bytes)
        return rf_err_set(err, RF_EIO, "cannot read MemAvailable from /proc/meminfo");
    uint64_t usable = (uint64_t)((double)avail_bytes * RF_FORWARD_MEM_FRACTION);
    bool limited = o->mem_limit_bytes && o->mem_limit_bytes < usable;
    if (limited)
        usable = o->mem_limit_bytes;
    if (mem.total_bytes <= usable)
        return RF_OK;

    /* What would fit: fewer layers at this batch, a smaller batch at these
     * layers (the largest of each, found without allocating). */
    char hint[160] = "";
    int64_t fit_layers = 0, fit_batch = 0;
    rf_forward_opts t = *o;
    for (t.layers = o->layers - 1; t.layers >= 1 && !fit_layers; t.layers--)
        if (total_at(m, &t) <= usable)
            fit_layers = t.layers;
    t = *o;
    int64_t lo = 0, hi = o->batch; /* fits at lo (0 = none), not at hi */
    while (hi - lo > 1) {
        t.batch = lo + (hi - lo) / 2;
        if (total_at(m, &t) <= usable)
            lo = t.batch;
        else
            hi = t.batch;
    }
    fit_batch = lo;
    if (fit_layers && fit_batch)
        snprintf(hint, sizeof hint, "--layers %lld or --batch %lld would fit",
                 (long long)fit_layers, (long long)fit_batch);
    else if (fit_layers)
        snprintf(hint, sizeof hint, "--layers %lld would fit", (long long)fit_layers);
    else if (fit_batch)
        snprintf(hint, sizeof hint, "--batch %lld would fit", (long long)fit_batch);
    else
        snprintf(hint, sizeof hint, "not even --layers 1 --batch 1 fits at this context");
    char need[32], layers[32], head[32], kv[32], act[32], may[32], avail[32], why[96];
    if (limited)
        snprintf(why, sizeof why, "the limit given");
    else
        snprintf(why, sizeof why, "%.0f%% of %s available", RF_FORWARD_MEM_FRACTION * 100,
                 size_text(avail_bytes, avail, sizeof avail));
    return rf_err_set(
        err, RF_ENOMEM,
        "%s needs %s (%lld layers %s, lm_head %s, KV %s, activations %s) but %s "
        "may be used (%s); %s",
        m->name, size_text(mem.total_bytes, need, sizeof need), (long long)o->layers,
        size_text(mem.layer_bytes * (uint64_t)o->layers, layers, sizeof layers),
        size_text(mem.head_bytes, head, sizeof head), size_text(mem.kv_bytes, kv, sizeof kv),
        size_text(mem.act_bytes, act, sizeof act), size_text(usable, may, sizeof may), why, hint);
}
