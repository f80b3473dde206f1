/* parallel.c - tensor, pipeline, expert and data parallelism (rf_parallel.h).
 *
 * A device's step is today's step of a smaller model: the shard one TP rank
 * of one stage runs (fewer heads, narrower MLP, a vocabulary shard, the
 * stage's layers), computed by rf_step_compute unchanged. The collectives
 * are rows of their own beside it, costed on the link they cross. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_cluster.h"
#include "roofline/rf_parallel.h"
#include "serve_internal.h"
#include "step_internal.h"

rf_layout rf_layout_single(void) { return (rf_layout){1, 1, 1, 1}; }

int64_t rf_layout_devices(const rf_layout *l) { return l->tp * l->pp * l->dp; }

bool rf_layout_is_single(const rf_layout *l)
{
    return l->tp == 1 && l->pp == 1 && l->ep == 1 && l->dp == 1;
}

int64_t rf_layout_stage_layers(int64_t layers, int64_t pp, int64_t s)
{
    return layers / pp + (s < layers % pp);
}

static rf_status degree(const char *opt, int64_t v, rf_err *err)
{
    if (v < 1 || v > RF_PAR_MAX_DEGREE)
        return rf_err_set(err, RF_EINVAL, "%s %lld: a degree must be within [1, %d]", opt,
                          (long long)v, RF_PAR_MAX_DEGREE);
    return RF_OK;
}

/* Divisibility of one width by T, named by its config key. */
static rf_status splits(const rf_model *m, const char *key, int64_t width, int64_t t, rf_err *err)
{
    if (width % t)
        return rf_err_set(err, RF_EINVAL, "--tp %lld does not split %s: %s (%lld) %% %lld != 0",
                          (long long)t, m->name, key, (long long)width, (long long)t);
    return RF_OK;
}

/* What TP splits in the 2025-26 layers: local layers' heads as the global
 * ones, Gated DeltaNet's key and value heads and Mamba2's heads as
 * attention heads (their state with them), Mamba2's groups (or one group,
 * replicated); DSA's indexer and its keys are replicated on every rank as
 * MLA's latent is. */
static rf_status hybrid_splits(const rf_model *m, int64_t t, rf_err *err)
{
    rf_status s;
    int64_t gdn = 0, mamba = 0, local = 0;
    for (int64_t i = 0; i < m->layers; i++) {
        rf_mixer x = rf_model_layer_mixer(m, i);
        gdn += x == RF_MIX_GDN;
        mamba += x == RF_MIX_MAMBA2;
        local += x == RF_MIX_ATTN && rf_model_layer_local(m, i) != RF_LOCAL_GLOBAL;
    }
    if (local) {
        rf_attn_shape a = {0};
        for (int64_t i = 0; i < m->layers && !a.n_q; i++)
            if (rf_model_layer_mixer(m, i) == RF_MIX_ATTN &&
                rf_model_layer_local(m, i) != RF_LOCAL_GLOBAL)
                a = rf_model_attn_shape(m, i);
        if ((s = splits(m, "the local layers' num_attention_heads", a.n_q, t, err)))
            return s;
        if (a.n_kv % t && t % a.n_kv)
            return rf_err_set(err, RF_EINVAL,
                              "--tp %lld does not split %s: the local layers' "
                              "num_key_value_heads (%lld) is neither a multiple nor a divisor "
                              "of %lld",
                              (long long)t, m->name, (long long)a.n_kv, (long long)t);
    }
    if (gdn && ((s = splits(m, "linear_num_key_heads", m->gdn_k_heads, t, err)) ||
                (s = splits(m, "linear_num_value_heads", m->gdn_v_heads, t, err))))
        return s;
    if (mamba && (s = splits(m, "mamba_num_heads", m->ssm_heads, t, err)))
        return s;
    if (mamba && m->ssm_groups > 1 && (s = splits(m, "n_groups", m->ssm_groups, t, err)))
        return s;
    return RF_OK;
}

rf_status rf_layout_validate(const rf_model *m, const rf_layout *l, rf_err *err)
{
    rf_status s;
    if ((s = degree("--tp", l->tp, err)) || (s = degree("--pp", l->pp, err)) ||
        (s = degree("--ep", l->ep, err)) || (s = degree("--dp", l->dp, err)))
        return s;
    int64_t t = l->tp;
    if ((s = splits(m, "num_attention_heads", m->n_q, t, err)))
        return s;
    /* MLA keeps no KV heads: its latent is replicated on every rank */
    if (!m->kv_lora_rank && m->n_kv % t && t % m->n_kv)
        return rf_err_set(err, RF_EINVAL,
                          "--tp %lld does not split %s: num_key_value_heads (%lld) is neither a "
                          "multiple nor a divisor of %lld",
                          (long long)t, m->name, (long long)m->n_kv, (long long)t);
    bool dense_layers = false;
    for (int64_t i = 0; i < m->layers; i++) {
        rf_ffn_kind f = rf_model_layer_ffn(m, i);
        dense_layers = dense_layers || f == RF_FFN_DENSE || f == RF_FFN_MOE_DENSE;
    }
    if (dense_layers && (s = splits(m, "intermediate_size", m->ffn, t, err)))
        return s;
    if ((s = hybrid_splits(m, t, err)))
        return s;
    if (m->n_experts) {
        int64_t shared = m->shared_ffn ? m->shared_ffn : m->moe_ffn;
        if ((l->ep == 1 && (s = splits(m, "moe_intermediate_size", m->moe_ffn, t, err))) ||
            (m->n_shared && (s = splits(m, "shared_expert_intermediate_size", shared, t, err))))
            return s;
    }
    if (l->ep > 1) {
        if (!m->n_experts)
            return rf_err_set(err, RF_EINVAL, "--ep %lld: %s has no routed experts",
                              (long long)l->ep, m->name);
        if (m->n_experts % l->ep)
            return rf_err_set(err, RF_EINVAL,
                              "--ep %lld does not split %s: %lld routed experts %% %lld != 0",
                              (long long)l->ep, m->name, (long long)m->n_experts, (long long)l->ep);
        if (l->ep % t)
            return rf_err_set(err, RF_EINVAL,
                              "--ep %lld with --tp %lld: an expert group is whole "
                              "tensor-parallel groups, so --ep must be a multiple of --tp",
                              (long long)l->ep, (long long)t);
        int64_t k = l->ep / t;
        if (l->dp % k)
            return rf_err_set(err, RF_EINVAL,
                              "--ep %lld with --tp %lld spans %lld data-parallel replicas "
                              "(attention data-parallel), so --dp (%lld) must be a multiple "
                              "of %lld",
                              (long long)l->ep, (long long)t, (long long)k, (long long)l->dp,
                              (long long)k);
    }
    if (l->pp > m->layers || l->pp > RF_PAR_MAX_STAGES)
        return rf_err_set(err, RF_EINVAL,
                          "--pp %lld: %s has %lld layers, and a stage holds at least one (at "
                          "most %d stages)",
                          (long long)l->pp, m->name, (long long)m->layers, RF_PAR_MAX_STAGES);
    return RF_OK;
}

rf_status rf_layout_shard(const rf_model *m, const rf_layout *l, int64_t first, int64_t count,
                          rf_model *out, rf_err *err)
{
    rf_status s = rf_layout_validate(m, l, err);
    if (s)
        return s;
    if (first < 0 || count < 1 || first + count > m->layers)
        return rf_err_set(err, RF_EINVAL, "%s: layers [%lld, %lld) are not in its %lld", m->name,
                          (long long)first, (long long)(first + count), (long long)m->layers);
    int64_t t = l->tp;
    rf_model d = *m;
    d.n_q = m->n_q / t;
    d.n_kv = m->n_kv >= t ? m->n_kv / t : 1;
    d.ffn = m->ffn % t ? m->ffn : m->ffn / t; /* all-MoE models: ffn unused */
    d.vocab = m->vocab - (t - 1) * (m->vocab / t);
    if (m->n_experts && l->ep == 1) { /* EP keeps whole experts: see ep_share */
        d.moe_ffn = m->moe_ffn / t;
        d.shared_ffn = (m->shared_ffn ? m->shared_ffn : m->moe_ffn) / t;
    }
    /* the 2025-26 layers: heads split as attention's (hybrid_splits) */
    if (m->local_n_q)
        d.local_n_q = m->local_n_q / t;
    if (m->local_n_kv)
        d.local_n_kv = m->local_n_kv >= t ? m->local_n_kv / t : 1;
    d.gdn_k_heads = m->gdn_k_heads / t;
    d.gdn_v_heads = m->gdn_v_heads / t;
    d.ssm_heads = m->ssm_heads / t;
    d.ssm_groups = m->ssm_groups > 1 ? m->ssm_groups / t : m->ssm_groups;
    d.layers = count;
    d.first_dense = 0;
    d.moe_freq = 1;
    /* the MTP layers sit after the last layer: with the last stage */
    d.mtp_layers = first + count == m->layers ? m->mtp_layers : 0;
    memset(d.dense_mlp, 0, sizeof d.dense_mlp);
    memset(d.sliding, 0, sizeof d.sliding);
    memset(d.mixer, 0, sizeof d.mixer);
    memset(d.no_ffn, 0, sizeof d.no_ffn);
    memset(d.chunked, 0, sizeof d.chunked);
    memset(d.unquantized_layer, 0, sizeof d.unquantized_layer);
    for (int64_t i = 0; i < count; i++) {
        d.dense_mlp[i] = m->n_experts && !rf_model_layer_is_moe(m, first + i);
        d.sliding[i] = m->sliding[first + i];
        d.mixer[i] = m->mixer[first + i];
        d.no_ffn[i] = m->no_ffn[first + i];
        d.chunked[i] = m->chunked[first + i];
        d.unquantized_layer[i] = m->unquantized_layer[first + i];
    }
    /* the MTP layers' exclusions follow them, after the stage's layers
     * (rf_model_validate keeps layers + mtp_layers within the arrays) */
    for (int64_t i = 0; i < d.mtp_layers; i++)
        d.unquantized_layer[count + i] = m->unquantized_layer[m->layers + i];
    *out = d;
    return RF_OK;
}

/* One algorithm's time: f n / bw + hops alpha; kept in c when it is the
 * least so far. */
static void coll_try(rf_coll *c, const char *algo, double f, double hops)
{
    double bw_s = f * (double)c->bytes / c->bw_bytes_per_s, lat_s = hops * c->alpha_s;
    if (c->algo && !(bw_s + lat_s < c->time_s))
        return;
    c->algo = algo;
    c->bw_s = bw_s;
    c->latency_s = lat_s;
    c->time_s = bw_s + lat_s;
}

void rf_coll_cost(rf_coll *c)
{
    double t = (double)c->ranks;
    c->algo = NULL;
    switch (c->kind) {
    case RF_COLL_ALLREDUCE:
        if (c->measured) {
            coll_try(c, "measured", 2 * (t - 1) / t, 2 * (t - 1));
            break;
        }
        coll_try(c, "ring", 2 * (t - 1) / t, 2 * (t - 1));
        coll_try(c, "tree", 2 * (t - 1) / t, 2 * ceil(log2(t)));
        coll_try(c, "one-shot", t - 1, 1);
        coll_try(c, "two-shot", 2 * (t - 1) / t, 2);
        if (c->switch_reduce)
            coll_try(c, "in-switch", (t - 1) / t, 2);
        break;
    case RF_COLL_ALLGATHER:
    case RF_COLL_ALLTOALL:
        if (c->measured) {
            coll_try(c, "measured", (t - 1) / t, t - 1);
            break;
        }
        coll_try(c, "ring", (t - 1) / t, t - 1);
        coll_try(c, "direct", (t - 1) / t, 1);
        break;
    case RF_COLL_P2P:
        coll_try(c, c->measured ? "measured" : "send", 1, 1);
        break;
    }
    c->latency_bound = c->latency_s > c->bw_s;
}

void rf_hw_links_defaults(rf_hw_links *k)
{
    char filled[RF_HW_SOURCE_MAX] = "";
    size_t n = 0;
    if (!(k->out_bw_bytes_per_s > 0)) {
        snprintf(k->out_name, sizeof k->out_name, "InfiniBand NDR 400 Gb/s");
        k->out_bw_bytes_per_s = 50e9; /* 400 Gb/s a device */
        k->out_latency_s = 5e-6;
        n += (size_t)snprintf(filled + n, sizeof filled - n,
                              "scale-out InfiniBand NDR 400 Gb/s "
                              "= 50 GB/s, 5 us a hop; ");
    }
    if (!(k->up_latency_s > 0) && n < sizeof filled) {
        k->up_latency_s = 1e-6;
        n += (size_t)snprintf(filled + n, sizeof filled - n, "1 us a hop in a node; ");
    }
    if (k->devices_per_node < 1 && n < sizeof filled) {
        k->devices_per_node = 8;
        n += (size_t)snprintf(filled + n, sizeof filled - n, "8 devices a node; ");
    }
    if (!n)
        return;
    char was[RF_HW_SOURCE_MAX];
    snprintf(was, sizeof was, "%s", k->origin[0] ? k->origin : "no links of its own");
    snprintf(k->origin, sizeof k->origin, "%.120s; defaults: %.120s", was, filled);
    size_t len = strlen(k->origin);
    if (len >= 2 && !strcmp(k->origin + len - 2, "; "))
        k->origin[len - 2] = '\0';
}

static rf_status links_check(const rf_hw_links *k, rf_err *err)
{
    if (k->up_bw_bytes_per_s == 0)
        return rf_err_set(err, RF_EINVAL,
                          "--link-bw: the scale-up link's bandwidth is not known (0: a measured "
                          "profile holds links only from measure --mpi): give --link-bw GBPS");
    const struct {
        const char *what;
        double v;
    } f[] = {
        {"--link-bw (scale-up link bandwidth)", k->up_bw_bytes_per_s},
        {"scale-out link bandwidth", k->out_bw_bytes_per_s},
        {"--link-latency (scale-up hop latency)", k->up_latency_s},
        {"scale-out hop latency", k->out_latency_s},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!(f[i].v > 0 && isfinite(f[i].v)))
            return rf_err_set(err, RF_EINVAL, "%s (%g) must be a positive figure", f[i].what,
                              f[i].v);
    if (k->devices_per_node < 1)
        return rf_err_set(err, RF_EINVAL, "--devices-per-node (%lld) must be at least 1",
                          (long long)k->devices_per_node);
    return RF_OK;
}

/* A group of t consecutive devices: the scale-up link when it fits in one
 * node, else the scale-out one. */
static void on_link(rf_coll *c, const rf_hw_links *k, bool in_node)
{
    c->link = in_node ? k->up_name : k->out_name;
    c->bw_bytes_per_s = in_node ? k->up_bw_bytes_per_s : k->out_bw_bytes_per_s;
    c->alpha_s = in_node ? k->up_latency_s : k->out_latency_s;
    c->switch_reduce = in_node && k->up_switch_reduce;
    const rf_link_fit *fit = &(in_node ? k->up_fit : k->out_fit)[c->kind];
    c->measured = fit->bw_bytes_per_s > 0 && fit->ranks >= 2;
    rf_link_fit_apply(fit, c); /* measured link: its bandwidth and alpha */
    rf_coll_cost(c);
}

static rf_status add_coll(rf_par_stage *st, const char *name, rf_coll_kind kind, uint64_t count,
                          uint64_t bytes, int64_t ranks, const rf_hw_links *k, rf_err *err)
{
    if (!count)
        return RF_OK;
    if (st->n_coll == RF_PAR_MAX_COLL)
        return rf_err_set(err, RF_ERANGE, "%s: too many collectives", name);
    rf_coll *c = &st->coll[st->n_coll++];
    *c = (rf_coll){.name = name, .kind = kind, .count = count, .bytes = bytes, .ranks = ranks};
    on_link(c, k, ranks <= k->devices_per_node);
    return RF_OK;
}

/* The stage's share of the step: an embed row only on the first stage, the
 * lm_head and final norm only on the last. */
static bool held(const rf_op *op, bool first, bool last)
{
    if (!op->name)
        return true;
    if (!strcmp(op->name, "embed"))
        return first;
    if (!strcmp(op->name, "lm_head") || !strcmp(op->name, "final_norm"))
        return last;
    return true;
}

static uint64_t elem_bytes(const rf_model *m, const rf_step_opts *o, rf_module mod, uint64_t n,
                           rf_err *err, rf_status *s)
{
    uint64_t b = 0;
    if (!*s)
        *s = rf_dtype_bytes(rf_model_module_dtype(m, mod, o->w, o->w_all_modules), n, &b, err);
    return b;
}

/* The step of a shard: o's, or the mixed step mix when not NULL. */
static rf_status shard_step(const rf_model *shard, const rf_step_opts *o, const rf__mix *mix,
                            const rf_roof *roof, rf_step *out, rf_err *err)
{
    if (!mix)
        return rf_step_compute(shard, o, roof, out, err);
    return rf__mixed(shard, o, roof, mix->decode_batch, mix->decode_context, mix->cascade,
                     mix->groups, mix->n_groups, out, err);
}

/* Under EP E the expert group is the TP groups of g = E / T replicas, each
 * of M rows: its MoE layers route g M tokens, g M k token-expert pairs. A
 * device holds E_routed / E whole experts and, with uniform routing, runs
 * 1 / E of those pairs (M k / T of them): each routed row is the step's at
 * g M rows with 1 / E of its FLOPs, pairs, streamed experts and bytes, so
 * the experts a device touches are (E_routed / E)(1 - (1 - k / E_routed)^(g M)).
 * With g = 1 (E = T) the rows are s's own. */
static rf_status ep_share(const rf_model *shard, const rf_step_opts *so, const rf__mix *mix,
                          const rf_roof *roof, const rf_layout *l, rf_step *s, rf_err *err)
{
    int64_t ep = l->ep, g = l->ep / l->tp;
    uint64_t e = (uint64_t)ep;
    const rf_step *src = s;
    rf_step group;
    if (g > 1) {
        rf_step_opts go = *so;
        go.batch = so->batch * g; /* g <= RF_PAR_MAX_DEGREE: rf_step_compute bounds it */
        rf__mix gm;
        if (mix) { /* every decode sequence and chunk g times */
            gm = *mix;
            gm.decode_batch *= g;
            for (size_t i = 0; i < gm.n_groups; i++)
                gm.groups[i].count *= g;
        }
        rf_status st = shard_step(shard, &go, mix ? &gm : NULL, roof, &group, err);
        if (st)
            return st;
        if (group.n_ops != s->n_ops) /* the operator list does not depend on B */
            return rf_err_set(err, RF_ERANGE, "%s: the expert group's step differs", shard->name);
        src = &group;
    }
    s->experts_touched = src->experts_touched / (double)ep; /* of its E_routed / E */
    for (size_t i = 0; i < s->n_ops; i++) {
        rf_op *op = &s->ops[i];
        if (!(src->ops[i].experts > 0))
            continue;
        *op = src->ops[i];
        op->experts /= (double)ep;
        op->m = (op->m + ep - 1) / ep;
        op->flops = (op->flops + e - 1) / e;
        op->weight_bytes = (op->weight_bytes + e - 1) / e;
        op->act_bytes = (op->act_bytes + e - 1) / e;
        op->bytes = op->weight_bytes + op->kv_bytes + op->act_bytes + op->extra_bytes;
    }
    return RF_OK;
}

/* A device's resident weights: its shard of every class in its dtype, the
 * embedding on the first stage, lm_head on the last (a tied embedding held
 * by both when they differ), 1 / E of the routed experts. */
static rf_status stage_resident(const rf_model *m, const rf_step_opts *o, int64_t ep,
                                const rf_model *shard, bool first, bool last, uint64_t *out,
                                rf_err *err)
{
    rf_param_counts pc;
    rf_status e = rf_model_params(shard, &pc, err);
    if (e)
        return e;
    uint64_t w = 0, b;
    for (int i = 0; i < RF_MOD_COUNT && !e; i++) {
        if ((i == RF_MOD_EMBED && !first) || (i == RF_MOD_LM_HEAD && !last))
            continue;
        uint64_t share = i == RF_MOD_EXPERTS ? (uint64_t)ep : 1;
        if (!(e = rf__module_bytes(shard, o, &pc, (rf_module)i, share, &b, err)))
            w += b;
    }
    if (m->tied && last && !first)
        w += elem_bytes(shard, o, RF_MOD_EMBED, pc.embedding, err, &e);
    *out = w;
    return e;
}

static rf_status stage_totals(const rf_model *m, const rf_step_opts *o, const rf_par_opts *po,
                              int64_t batch_all, bool first, bool last, rf_par_stage *st,
                              rf_err *err)
{
    const rf_step *s = &st->step;
    st->ops_s = 0;
    st->weight_bytes_streamed = 0;
    for (size_t i = 0; i < s->n_ops; i++) {
        const rf_op *op = &s->ops[i];
        if (!held(op, first, last))
            continue;
        rf_point p = rf_roof_place(&s->roof, (double)op->flops, (double)op->bytes);
        st->ops_s += (double)op->count * p.floor_s;
        if (op->kind != RF_OP_GATHER) /* rows gathered, as rf_step counts */
            st->weight_bytes_streamed += op->count * op->weight_bytes;
    }
    uint64_t w = 0;
    rf_status e = stage_resident(m, o, po->layout.ep, &st->shard, first, last, &w, err);
    uint64_t kv_seq = 0;
    if (e || (e = rf_model_seq_bytes(&st->shard, o->kv, rf_step_positions(o), &kv_seq, err)))
        return e;
    st->weight_bytes_resident = w;
    st->kv_bytes_resident = kv_seq * (uint64_t)batch_all;
    st->needed_bytes = w + st->kv_bytes_resident;
    rf_fit f;
    if ((e = rf_fit_prepare(&st->shard, o, po->mem_bytes, po->util, po->reserve_bytes, &f, err)))
        return e;
    st->budget_bytes = f.budget_bytes;
    st->fits = (double)st->needed_bytes <= f.budget_bytes;
    return RF_OK;
}

/* The step's rows M: B, or B T in prefill; a mixed step's every token. */
static uint64_t step_rows(const rf_step_opts *so, const rf__mix *mix)
{
    return mix ? (uint64_t)rf__mix_tokens(mix)
               : (uint64_t)so->batch * (uint64_t)(so->phase == RF_PREFILL ? so->tokens : 1);
}

/* The rows lm_head scores: one a sequence (B), or a mixed step's B_d and
 * each chunk's logits, as rf__mixed counts them. */
static uint64_t logit_rows(const rf_step_opts *so, const rf__mix *mix)
{
    return mix ? (uint64_t)rf__mix_logits(mix) : (uint64_t)so->batch;
}

/* Bytes of one hidden-state message of the step: M rows of `hidden`
 * activations, whole bytes an element. */
static uint64_t hidden_msg_bytes(const rf_model *m, const rf_step_opts *so, const rf__mix *mix)
{
    return step_rows(so, mix) * (uint64_t)m->hidden * (uint64_t)rf_dtype_bytes_per_elem(so->a);
}

/* The probability that none of a token's k experts, drawn uniformly
 * without repeats from e_all, is among the held ones. */
static double none_held(int64_t e_all, int64_t held, int64_t k)
{
    double p = 1;
    for (int64_t q = 0; q < k; q++)
        p *= e_all - held - q > 0 ? (double)(e_all - held - q) / (double)(e_all - q) : 0;
    return p;
}

/* The message of EP's dispatch (and of its combine) when the expert group
 * of E devices spans nodes of `per`: the bytes a device must send across
 * the scale-out link, as the message n of an all-to-all over E ranks
 * ((E - 1) / E n leaves the device). The compulsory traffic: a replica's
 * M rows sit on all T devices of its TP group after attention's
 * all-reduce, so each sends M / T of them; a row crosses to another node
 * once if that node holds any of its k experts (the node's devices share
 * it over NVLink, as DeepEP's internode kernels forward it), not once an
 * expert; the in-node forwarding runs beside it on the faster link and is
 * not added (a step waits for the longer of the two, at least this one).
 * Uniform routing: node j, holding d_j E_routed / E experts, is sent a
 * row with probability 1 - C(E_routed - held_j, k) / C(E_routed, k); a
 * device's rows go to the other nodes, the node with the most remote
 * experts bounding the step. The combine returns the same rows. */
static uint64_t ep_between_nodes(const rf_model *m, uint64_t M, int64_t t, int64_t ep, int64_t per,
                                 uint64_t ba)
{
    int64_t nodes = (ep + per - 1) / per, e = m->n_experts;
    double worst = 0;
    for (int64_t i = 0; i < nodes; i++) {
        double r = 0;
        for (int64_t j = 0; j < nodes; j++) {
            int64_t d = j < nodes - 1 ? per : ep - (nodes - 1) * per;
            if (j != i)
                r += 1 - none_held(e, d * (e / ep), m->top_k);
        }
        worst = r > worst ? r : worst;
    }
    double out = (double)M / (double)t * (double)m->hidden * (double)ba * worst;
    return (uint64_t)(out * (double)ep / (double)(ep - 1));
}

/* The collectives of a stage of n layers: under TP two all-reduces a dense
 * layer, the embedding's all-reduce on the first stage and lm_head's
 * all-gather of the logits on the last; under EP, on its MoE layers, the
 * dispatch and combine of a replica's M k routed rows over the E ranks of
 * the expert group, in place of the MLP's all-reduce (an expert group
 * across nodes: the exchange between them, ep_between_nodes). */
static rf_status tp_collectives(const rf_model *m, const rf_step_opts *so, const rf__mix *mix,
                                const rf_layout *l, const rf_hw_links *k, bool is_first,
                                bool is_last, rf_par_stage *st, rf_err *err)
{
    uint64_t M = step_rows(so, mix);
    uint64_t ba = (uint64_t)rf_dtype_bytes_per_elem(so->a); /* activations: whole bytes */
    uint64_t msg = hidden_msg_bytes(m, so, mix), n = 0, ffn = 0, moe = 0;
    int64_t t = l->tp, ep = l->ep;
    /* an all-reduce after each mixer and each FFN the stage runs; under EP
     * a MoE block's dispatch and combine in place of its all-reduce (a dense
     * MLP beside it keeps its own) */
    for (int64_t i = 0; i < st->layers; i++) {
        rf_ffn_kind f = rf_model_layer_ffn(&st->shard, i);
        n += rf_model_layer_mixer(&st->shard, i) != RF_MIX_NONE;
        ffn += f == RF_FFN_DENSE || f == RF_FFN_MOE_DENSE || (f == RF_FFN_MOE && ep == 1);
        moe += ep > 1 && (f == RF_FFN_MOE || f == RF_FFN_MOE_DENSE);
    }
    uint64_t ktok = ep > k->devices_per_node
                        ? ep_between_nodes(m, M, t, ep, k->devices_per_node, ba)
                        : M * (uint64_t)m->top_k * (uint64_t)m->hidden * ba;
    bool tp = t > 1; /* no TP: no all-reduce (a count of 0 adds no row) */
    rf_status s;
    if ((s = add_coll(st, "tp_allreduce_attn", RF_COLL_ALLREDUCE, tp ? n : 0, msg, t, k, err)) ||
        (s = add_coll(st, "tp_allreduce_mlp", RF_COLL_ALLREDUCE, tp ? ffn : 0, msg, t, k, err)) ||
        (s = add_coll(st, "ep_dispatch", RF_COLL_ALLTOALL, moe, ktok, ep, k, err)) ||
        (s = add_coll(st, "ep_combine", RF_COLL_ALLTOALL, moe, ktok, ep, k, err)) ||
        (is_first &&
         (s = add_coll(st, "embed_allreduce", RF_COLL_ALLREDUCE, tp, msg, t, k, err))) ||
        (is_last && (s = add_coll(st, "lm_head_allgather", RF_COLL_ALLGATHER, tp,
                                  logit_rows(so, mix) * (uint64_t)m->vocab * ba, t, k, err))))
        return s;
    return RF_OK;
}

/* Stage i's send of its hidden states to the next stage, over the scale-up
 * link or across nodes as the boundary falls; added to out->send_s. */
static rf_status pp_send(const rf_model *m, const rf_step_opts *so, const rf__mix *mix, size_t i,
                         rf_par *out, rf_par_stage *st, rf_err *err)
{
    const rf_hw_links *k = &out->links;
    uint64_t msg = hidden_msg_bytes(m, so, mix);
    /* a stage's devices: its TP group, or the expert group's when wider */
    int64_t t = out->layout.ep > out->layout.tp ? out->layout.ep : out->layout.tp;
    int64_t a = ((int64_t)i + 1) * t - 1, b = a + 1;
    rf_coll send = {.name = "pp_send", .kind = RF_COLL_P2P, .count = 1, .bytes = msg, .ranks = 2};
    on_link(&send, k, a / k->devices_per_node == b / k->devices_per_node);
    out->send_s += send.time_s;
    rf_status s = add_coll(st, "pp_send", RF_COLL_P2P, 1, msg, 2, k, err);
    if (s)
        return s;
    st->coll[st->n_coll - 1] = send;
    return RF_OK;
}

/* A device's step of layers [first, first + count): o's step, or the mixed
 * step mix (NULL: none), of the shard; under EP its expert rows' share. */
static rf_status device_step(const rf_model *m, const rf_layout *l, int64_t first, int64_t count,
                             const rf_step_opts *o, const rf__mix *mix, const rf_roof *roof,
                             rf_model *shard, rf_step *out, rf_err *err)
{
    rf_status s;
    if ((s = rf_layout_shard(m, l, first, count, shard, err)) ||
        (s = shard_step(shard, o, mix, roof, out, err)))
        return s;
    return l->ep > 1 ? ep_share(shard, o, mix, roof, l, out, err) : RF_OK;
}

rf_status rf_par_device_step(const rf_model *m, const rf_layout *l, int64_t first, int64_t count,
                             const rf_step_opts *o, const rf_roof *roof, rf_model *shard,
                             rf_step *out, rf_err *err)
{
    return device_step(m, l, first, count, o, NULL, roof, shard, out, err);
}

/* Stage i, from layer `first`: its shard's step (1 / E of the routed rows
 * under EP), resident bytes, collectives and floors. */
static rf_status stage_compute(const rf_model *m, const rf_step_opts *so, const rf__mix *mix,
                               const rf_roof *roof, const rf_par_opts *po, int64_t batch_all,
                               size_t i, int64_t first, rf_par *out, rf_err *err)
{
    const rf_layout *l = &po->layout;
    rf_par_stage *st = &out->stages[i];
    int64_t n = rf_layout_stage_layers(m->layers, l->pp, (int64_t)i);
    bool is_first = i == 0, is_last = i + 1 == out->n_stages;
    st->first_layer = first;
    st->layers = n;
    st->n_coll = 0;
    rf_status s;
    if ((s = device_step(m, l, first, n, so, mix, roof, &st->shard, &st->step, err)) ||
        (s = stage_totals(m, so, po, batch_all, is_first, is_last, st, err)))
        return s;
    if ((l->tp > 1 || l->ep > 1) &&
        (s = tp_collectives(m, so, mix, l, &out->links, is_first, is_last, st, err)))
        return s;
    st->comm_s = 0;
    for (size_t c = 0; c < st->n_coll; c++)
        st->comm_s += (double)st->coll[c].count * st->coll[c].time_s;
    st->floor_s = st->ops_s + st->comm_s;
    st->overlap_floor_s = st->ops_s > st->comm_s ? st->ops_s : st->comm_s;
    if (!is_last && (s = pp_send(m, so, mix, i, out, st, err)))
        return s;
    return RF_OK;
}

/* The pipeline's rates from its stages: a cycle is the longer of a token's
 * latency and the slowest stage busy for every micro-batch. */
static void pipeline_rates(const rf_step_opts *o, rf_par *out)
{
    const rf_par_stage *w = &out->stages[out->slowest];
    out->token_latency_s += out->send_s;
    double busy = (double)out->micro_batches * w->floor_s;
    out->cycle_s = out->token_latency_s > busy ? out->token_latency_s : busy;
    out->bubble = 1 - busy / out->cycle_s;
    double seqs = (double)o->batch; /* each yields a token a cycle */
    out->tokens_per_s = (double)out->layout.dp * seqs *
                        (double)(o->phase == RF_PREFILL ? o->tokens : 1) / out->cycle_s;
    out->tokens_per_s_device = out->tokens_per_s / (double)out->devices;
    double ov_busy = (double)out->micro_batches * w->overlap_floor_s;
    double ov_lat = 0;
    for (size_t i = 0; i < out->n_stages; i++)
        ov_lat += out->stages[i].overlap_floor_s;
    ov_lat += out->send_s;
    out->overlap_tokens_per_s =
        out->tokens_per_s * out->cycle_s / (ov_lat > ov_busy ? ov_lat : ov_busy);
    out->comm_share = w->floor_s > 0 ? w->comm_s / w->floor_s : 0;
}

int64_t rf__par_micro_batches(const rf_layout *l, int64_t batch)
{
    return l->pp < batch ? l->pp : batch;
}

/* rf_par_compute, of o's step or (mix not NULL) of the mixed step mix a
 * micro-batch runs, o then the replica's decode (rf__par_mixed). */
static rf_status par_compute(const rf_model *m, const rf_step_opts *o, const rf__mix *mix,
                             const rf_roof *roof, const rf_par_opts *po, rf_par *out, rf_err *err)
{
    const rf_layout *l = &po->layout;
    rf_status s;
    if ((s = rf_layout_validate(m, l, err)) || (s = links_check(&po->links, err)))
        return s;
    if (o->batch < 1)
        return rf_err_set(err, RF_EINVAL, "batch (%lld) must be at least 1", (long long)o->batch);
    out->links = po->links;
    out->layout = *l;
    out->devices = rf_layout_devices(l);
    out->micro_batches = rf__par_micro_batches(l, o->batch);
    out->micro_batch = (o->batch + out->micro_batches - 1) / out->micro_batches;
    out->n_stages = (size_t)l->pp;
    rf_step_opts so = *o;
    so.batch = out->micro_batch;
    out->fits = true;
    out->slowest = 0;
    out->send_s = 0;
    out->token_latency_s = 0;
    int64_t first = 0;
    for (size_t i = 0; i < out->n_stages; i++) {
        if ((s = stage_compute(m, &so, mix, roof, po, o->batch, i, first, out, err)))
            return s;
        const rf_par_stage *st = &out->stages[i];
        out->token_latency_s += st->floor_s;
        if (st->floor_s > out->stages[out->slowest].floor_s)
            out->slowest = i;
        double margin = st->budget_bytes - (double)st->needed_bytes;
        if (i == 0 || margin < out->min_margin_bytes)
            out->min_margin_bytes = margin;
        out->fits = out->fits && st->fits;
        first += st->layers;
    }
    pipeline_rates(o, out);
    return RF_OK;
}

rf_status rf_par_compute(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                         const rf_par_opts *po, rf_par *out, rf_err *err)
{
    return par_compute(m, o, NULL, roof, po, out, err);
}

rf_status rf__par_mixed(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                        const rf_par_opts *po, const rf__mix *mix, rf_par *out, rf_err *err)
{
    if (o->phase != RF_DECODE)
        return rf_err_set(err, RF_EINVAL, "a mixed step on many devices is given as its decode");
    return par_compute(m, o, mix, roof, po, out, err);
}

bool rf_par_stage_holds(const rf_par *p, size_t stage, const rf_op *op)
{
    return held(op, stage == 0, stage + 1 == p->n_stages);
}

rf_status rf_par_sweep_prepare(rf_par_sweep *ps, const rf_model *m, const rf_step_opts *o,
                               const rf_roof *roof, const rf_par_opts *po, rf_err *err)
{
    if (o->phase != RF_DECODE)
        return rf_err_set(err, RF_EINVAL, "a sweep of many devices is of decode steps");
    rf_par *par = &ps->par;
    rf_status s = rf_par_compute(m, o, roof, po, par, err);
    if (s)
        return s;
    ps->batch = o->batch;
    rf_step_opts so = *o;
    so.batch = par->micro_batch;
    /* What a stage's floor adds to its shard's sweep does not change with
     * the context: its collectives, less the rows it does not hold, and
     * under EP its expert rows' share (of the group's tokens, 1 / E of
     * them); so it is the difference at the prepared context. */
    for (size_t i = 0; i < par->n_stages; i++) {
        const rf_par_stage *st = &par->stages[i];
        rf_sweep_point sp;
        if ((s = rf_sweep_prepare(&ps->stage[i], &st->shard, &so, roof, err)) ||
            (s = rf_sweep_eval(&ps->stage[i], o->context, &sp, err)))
            return s;
        ps->fixed_s[i] = st->floor_s - sp.floor_sum_of_max_s;
    }
    return RF_OK;
}

rf_status rf_par_sweep_eval(rf_par_sweep *ps, int64_t context, rf_par_point *p, rf_err *err)
{
    const rf_par *par = &ps->par;
    double lat = par->send_s, slow = 0, slow_comm = 0;
    for (size_t i = 0; i < par->n_stages; i++) {
        rf_sweep_point sp;
        rf_status s = rf_sweep_eval(&ps->stage[i], context, &sp, err);
        if (s)
            return s;
        double f = sp.floor_sum_of_max_s + ps->fixed_s[i];
        lat += f;
        if (f > slow)
            slow = f, slow_comm = par->stages[i].comm_s;
    }
    double busy = (double)par->micro_batches * slow;
    double cycle = lat > busy ? lat : busy;
    *p = (rf_par_point){.batch = ps->batch,
                        .context = context,
                        .floor_s = slow,
                        .token_latency_s = lat,
                        .cycle_s = cycle,
                        .bubble = 1 - busy / cycle,
                        .comm_share = slow > 0 ? slow_comm / slow : 0};
    p->tokens_per_s = (double)par->layout.dp * (double)ps->batch / cycle;
    p->tokens_per_s_device = p->tokens_per_s / (double)par->devices;
    return RF_OK;
}

rf_status rf_par_capacity_compute(const rf_model *m, const rf_step_opts *o, const rf_par_opts *po,
                                  int64_t context, rf_par_capacity *out, rf_err *err)
{
    const rf_layout *l = &po->layout;
    rf_status s = rf_layout_validate(m, l, err);
    if (s)
        return s;
    rf_fit f;
    if ((s = rf_fit_prepare(m, o, po->mem_bytes, po->util, po->reserve_bytes, &f, err)))
        return s;
    *out = (rf_par_capacity){.layout = *l, .budget_bytes = f.budget_bytes, .context = context};
    int64_t first = 0;
    for (int64_t i = 0; i < l->pp; i++) {
        int64_t n = rf_layout_stage_layers(m->layers, l->pp, i);
        rf_model sh;
        uint64_t w, tok, seq = 0;
        if ((s = rf_layout_shard(m, l, first, n, &sh, err)) ||
            (s = stage_resident(m, o, l->ep, &sh, i == 0, i + 1 == l->pp, &w, err)) ||
            (s = rf_model_kv_bytes(&sh, o->kv, 1, &tok, err)) ||
            (context && (s = rf_model_seq_bytes(&sh, o->kv, context, &seq, err))))
            return s;
        double pool = f.budget_bytes - (double)w;
        double tokens = pool > 0 && tok ? pool / (double)tok : 0;
        double seqs = pool > 0 && seq ? pool / (double)seq : 0;
        if (i == 0 || pool < out->pool_bytes) {
            out->pool_bytes = pool;
            out->resident_bytes = w;
            out->stage = i;
        }
        if (i == 0 || tokens < out->tokens)
            out->tokens = tokens;
        if (i == 0 || seqs < out->sequences)
            out->sequences = seqs;
        first += n;
    }
    out->weights_fit = out->pool_bytes > 0;
    out->sequences_total = out->sequences * (double)l->dp;
    return RF_OK;
}
