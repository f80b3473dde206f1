/* model.c - validation, parameter counts and KV sizes of a model. */
#include <stdio.h>
#include <string.h>

#include "roofline/rf_model.h"
#include "roofline/rf_op.h"

/* Accepted ceilings, far above any real model, low enough that every
 * parameter product below fits in 64 bits (2^24 x 2^16 x 2^16 x 3 < 2^63). */
#define DIM_MAX ((int64_t)1 << 24)   /* hidden, intermediate, vocab, ranks */
#define HEADS_MAX ((int64_t)1 << 16) /* heads, head dims                   */
#define EXPERTS_MAX ((int64_t)1 << 12)

static rf_status bounded(rf_err *err, const char *name, int64_t v, int64_t lo, int64_t hi)
{
    if (v < lo)
        return rf_err_set(err, RF_EINVAL, "%s (%lld) must be at least %lld", name, (long long)v,
                          (long long)lo);
    if (v > hi)
        return rf_err_set(err, RF_ERANGE, "%s (%lld) is beyond the accepted %lld", name,
                          (long long)v, (long long)hi);
    return RF_OK;
}

static rf_status field(rf_err *err, const char *name, int64_t v, int64_t lo)
{
    return bounded(err, name, v, lo, DIM_MAX);
}

int64_t rf_model_moe_layers(const rf_model *m)
{
    int64_t n = 0;
    for (int64_t l = 0; l < m->layers && l < RF_MODEL_MAX_LAYERS; l++)
        n += rf_model_layer_is_moe(m, l);
    return n;
}

/* Layers that run the dense MLP (alone or beside the MoE). */
static int64_t dense_layers(const rf_model *m)
{
    int64_t n = 0;
    for (int64_t l = 0; l < m->layers && l < RF_MODEL_MAX_LAYERS; l++) {
        rf_ffn_kind f = rf_model_layer_ffn(m, l);
        n += f == RF_FFN_DENSE || f == RF_FFN_MOE_DENSE;
    }
    return n;
}

/* Layers of one mixer. */
static int64_t mixer_layers(const rf_model *m, rf_mixer x)
{
    int64_t n = 0;
    for (int64_t l = 0; l < m->layers && l < RF_MODEL_MAX_LAYERS; l++)
        n += rf_model_layer_mixer(m, l) == x;
    return n;
}

static rf_status divides(rf_err *err, const char *a, int64_t va, const char *b, int64_t vb)
{
    if (va && vb % va)
        return rf_err_set(err, RF_EINVAL, "%s (%lld) must divide %s (%lld)", a, (long long)va, b,
                          (long long)vb);
    return RF_OK;
}

/* The fields of the 2025-26 architectures, each named by its config key. */
static rf_status validate_hybrid(const rf_model *m, rf_err *err)
{
    rf_status s;
    bool chunked = false, local = false;
    for (int64_t l = 0; l < m->layers; l++) {
        if (m->mixer[l] > RF_MIX_NONE)
            return rf_err_set(err, RF_EINVAL,
                              "layer %lld: mixer (%u) is not attention, Gated DeltaNet, Mamba2 "
                              "or none",
                              (long long)l, (unsigned)m->mixer[l]);
        if (m->mixer[l] != RF_MIX_ATTN)
            continue;
        if (m->chunked[l] && m->window && m->sliding[l])
            return rf_err_set(err, RF_EINVAL,
                              "layer %lld is both sliding-window and chunked attention",
                              (long long)l);
        chunked = chunked || m->chunked[l];
        local = local || rf_model_layer_local(m, l) != RF_LOCAL_GLOBAL;
    }
    if ((s = bounded(err, "attention v_head_dim", m->attn_v_dim, 0, HEADS_MAX)) ||
        (s = bounded(err, "local num_attention_heads", m->local_n_q, 0, HEADS_MAX)) ||
        (s = bounded(err, "local num_key_value_heads", m->local_n_kv, 0, HEADS_MAX)) ||
        (s = bounded(err, "local head_dim", m->local_head_dim, 0, HEADS_MAX)) ||
        (s = bounded(err, "local v_head_dim", m->local_v_dim, 0, HEADS_MAX)) ||
        (s = field(err, "attention_chunk_size", m->attn_chunk, chunked ? 1 : 0)) ||
        (s = bounded(err, "num_nextn_predict_layers", m->mtp_layers, 0, 64)))
        return s;
    /* the MTP layers' per-layer entries follow the decoder's */
    if (m->layers + m->mtp_layers > RF_MODEL_MAX_LAYERS)
        return rf_err_set(err, RF_ERANGE,
                          "num_hidden_layers (%lld) + num_nextn_predict_layers (%lld) is beyond "
                          "the accepted %d layers",
                          (long long)m->layers, (long long)m->mtp_layers, RF_MODEL_MAX_LAYERS);
    if (local) {
        rf_attn_shape a = {0};
        for (int64_t l = 0; l < m->layers && !a.n_q; l++)
            if (m->mixer[l] == RF_MIX_ATTN && rf_model_layer_local(m, l) != RF_LOCAL_GLOBAL)
                a = rf_model_attn_shape(m, l);
        if ((s = divides(err, "local num_key_value_heads", a.n_kv, "the local heads", a.n_q)))
            return s;
    }
    if (mixer_layers(m, RF_MIX_GDN) &&
        ((s = bounded(err, "linear_num_key_heads", m->gdn_k_heads, 1, HEADS_MAX)) ||
         (s = bounded(err, "linear_num_value_heads", m->gdn_v_heads, 1, HEADS_MAX)) ||
         (s = bounded(err, "linear_key_head_dim", m->gdn_k_dim, 1, HEADS_MAX)) ||
         (s = bounded(err, "linear_value_head_dim", m->gdn_v_dim, 1, HEADS_MAX)) ||
         (s = bounded(err, "linear_conv_kernel_dim", m->gdn_conv, 1, 1024)) ||
         (s = divides(err, "linear_num_key_heads", m->gdn_k_heads, "linear_num_value_heads",
                      m->gdn_v_heads))))
        return s;
    if (mixer_layers(m, RF_MIX_MAMBA2) &&
        ((s = bounded(err, "mamba_num_heads", m->ssm_heads, 1, HEADS_MAX)) ||
         (s = bounded(err, "mamba_head_dim", m->ssm_head_dim, 1, HEADS_MAX)) ||
         (s = bounded(err, "ssm_state_size", m->ssm_state, 1, HEADS_MAX)) ||
         (s = bounded(err, "n_groups", m->ssm_groups, 1, HEADS_MAX)) ||
         (s = bounded(err, "conv_kernel", m->ssm_conv, 1, 1024)) ||
         (s = bounded(err, "chunk_size", m->ssm_chunk, 0, 1 << 16)) ||
         (s = divides(err, "n_groups", m->ssm_groups, "mamba_num_heads", m->ssm_heads))))
        return s;
    if (m->moe_and_dense && !m->n_experts)
        return rf_err_set(err, RF_EINVAL, "a dense MLP beside the MoE needs routed experts");
    if (m->index_topk) {
        if ((s = field(err, "index_topk", m->index_topk, 1)) ||
            (s = bounded(err, "index_n_heads", m->index_heads, 1, HEADS_MAX)) ||
            (s = bounded(err, "index_head_dim", m->index_head_dim, 1, HEADS_MAX)))
            return s;
        if (!m->kv_lora_rank || !m->q_lora_rank)
            return rf_err_set(err, RF_EINVAL,
                              "index_topk (%lld): the sparse-attention indexer needs MLA "
                              "(kv_lora_rank and q_lora_rank above 0)",
                              (long long)m->index_topk);
        if (m->max_context && m->index_topk > m->max_context)
            return rf_err_set(err, RF_EINVAL,
                              "index_topk (%lld) exceeds max_position_embeddings (%lld)",
                              (long long)m->index_topk, (long long)m->max_context);
    }
    return RF_OK;
}

rf_status rf_model_validate(const rf_model *m, rf_err *err)
{
    rf_status s;
    if ((s = field(err, "hidden_size", m->hidden, 1)) ||
        (s = field(err, "num_hidden_layers", m->layers, 1)) ||
        (s = bounded(err, "num_attention_heads", m->n_q, 1, HEADS_MAX)) ||
        (s = bounded(err, "num_key_value_heads", m->n_kv, 1, HEADS_MAX)) ||
        (s = bounded(err, "head_dim", m->head_dim, 1, HEADS_MAX)) ||
        (s = field(err, "vocab_size", m->vocab, 1)) ||
        (s = bounded(err, "n_routed_experts", m->n_experts, 0, EXPERTS_MAX)) ||
        (s = field(err, "sliding_window", m->window, 0)) ||
        (s = bounded(err, "max_position_embeddings", m->max_context, 0, RF_MODEL_MAX_CONTEXT)))
        return s;
    if (m->layers > RF_MODEL_MAX_LAYERS)
        return rf_err_set(err, RF_ERANGE, "num_hidden_layers (%lld) is beyond the accepted %d",
                          (long long)m->layers, RF_MODEL_MAX_LAYERS);
    /* the dense MLP width matters only when some layer keeps a dense MLP */
    if ((s = field(err, "intermediate_size", m->ffn, dense_layers(m) ? 1 : 0)))
        return s;
    if (m->n_q % m->n_kv)
        return rf_err_set(err, RF_EINVAL,
                          "num_key_value_heads (%lld) must divide num_attention_heads (%lld)",
                          (long long)m->n_kv, (long long)m->n_q);
    if (m->n_experts) {
        if ((s = field(err, "num_experts_per_tok", m->top_k, 1)) ||
            (s = field(err, "moe_intermediate_size", m->moe_ffn, 1)) ||
            (s = bounded(err, "n_shared_experts", m->n_shared, 0, EXPERTS_MAX)) ||
            (s = field(err, "shared_expert_intermediate_size", m->shared_ffn, 0)) ||
            (s = field(err, "first_k_dense_replace", m->first_dense, 0)) ||
            (s = field(err, "moe_layer_freq", m->moe_freq, 0)))
            return s;
        if (m->top_k > m->n_experts)
            return rf_err_set(err, RF_EINVAL,
                              "num_experts_per_tok (%lld) must not exceed the experts (%lld)",
                              (long long)m->top_k, (long long)m->n_experts);
        if (m->first_dense > m->layers)
            return rf_err_set(err, RF_EINVAL,
                              "first_k_dense_replace (%lld) exceeds num_hidden_layers (%lld)",
                              (long long)m->first_dense, (long long)m->layers);
    } else if (m->top_k || m->n_shared) {
        return rf_err_set(err, RF_EINVAL, "experts per token given but the experts are 0");
    }
    if (m->kv_lora_rank) {
        if ((s = field(err, "kv_lora_rank", m->kv_lora_rank, 1)) ||
            (s = bounded(err, "qk_nope_head_dim", m->qk_nope_dim, 1, HEADS_MAX)) ||
            (s = bounded(err, "qk_rope_head_dim", m->qk_rope_dim, 1, HEADS_MAX)) ||
            (s = bounded(err, "v_head_dim", m->v_head_dim, 1, HEADS_MAX)) ||
            (s = field(err, "q_lora_rank", m->q_lora_rank, 0)))
            return s;
    }
    return validate_hybrid(m, err);
}

rf_dtype rf_model_module_dtype(const rf_model *m, rf_module mod, rf_dtype w, bool all_modules)
{
    if (all_modules || !(m->unquantized_modules & RF_MOD_BIT(mod)))
        return w;
    return m->unquantized_dtype;
}

const char *rf_module_name(rf_module mod)
{
    static const char *const names[] = {
        [RF_MOD_ATTN] = "attention",  [RF_MOD_MLP] = "mlp",
        [RF_MOD_ROUTER] = "router",   [RF_MOD_SHARED] = "shared_experts",
        [RF_MOD_EXPERTS] = "experts", [RF_MOD_LM_HEAD] = "lm_head",
        [RF_MOD_EMBED] = "embed",     [RF_MOD_MIXER] = "mixer",
        [RF_MOD_INDEXER] = "indexer",
    };
    _Static_assert(sizeof names / sizeof names[0] == RF_MOD_COUNT, "one name a module");
    return (unsigned)mod < RF_MOD_COUNT ? names[mod] : "?";
}

int64_t rf_model_sliding_layers(const rf_model *m)
{
    int64_t n = 0;
    if (!m->window)
        return 0;
    for (int64_t l = 0; l < m->layers && l < RF_MODEL_MAX_LAYERS; l++)
        n += m->sliding[l] != 0;
    return n;
}

bool rf_model_layer_is_moe(const rf_model *m, int64_t l)
{
    if (!m->n_experts || l < m->first_dense ||
        (l < RF_MODEL_MAX_LAYERS && (m->dense_mlp[l] || m->no_ffn[l])))
        return false;
    return m->moe_freq <= 1 || l % m->moe_freq == 0;
}

rf_mixer rf_model_layer_mixer(const rf_model *m, int64_t l)
{
    return l >= 0 && l < RF_MODEL_MAX_LAYERS ? (rf_mixer)m->mixer[l] : RF_MIX_ATTN;
}

rf_attn_local rf_model_layer_local(const rf_model *m, int64_t l)
{
    if (l < 0 || l >= RF_MODEL_MAX_LAYERS)
        return RF_LOCAL_GLOBAL;
    if (m->window && m->sliding[l])
        return RF_LOCAL_SLIDING;
    if (m->attn_chunk && m->chunked[l])
        return RF_LOCAL_CHUNKED;
    return RF_LOCAL_GLOBAL;
}

rf_ffn_kind rf_model_layer_ffn(const rf_model *m, int64_t l)
{
    if (l >= 0 && l < RF_MODEL_MAX_LAYERS && m->no_ffn[l])
        return RF_FFN_NONE;
    if (!rf_model_layer_is_moe(m, l))
        return RF_FFN_DENSE;
    return m->moe_and_dense ? RF_FFN_MOE_DENSE : RF_FFN_MOE;
}

rf_attn_shape rf_model_attn_shape(const rf_model *m, int64_t l)
{
    rf_attn_shape a = {.n_q = m->n_q,
                       .n_kv = m->n_kv,
                       .head_dim = m->head_dim,
                       .v_dim = m->attn_v_dim ? m->attn_v_dim : m->head_dim};
    if (rf_model_layer_local(m, l) == RF_LOCAL_GLOBAL) {
        a.k_eq_v = m->k_eq_v;
        return a;
    }
    if (m->local_n_q)
        a.n_q = m->local_n_q;
    if (m->local_n_kv)
        a.n_kv = m->local_n_kv;
    if (m->local_head_dim)
        a.head_dim = a.v_dim = m->local_head_dim;
    if (m->local_v_dim)
        a.v_dim = m->local_v_dim;
    return a;
}

int64_t rf_model_attn_layers(const rf_model *m) { return mixer_layers(m, RF_MIX_ATTN); }

bool rf_model_has_state(const rf_model *m)
{
    return mixer_layers(m, RF_MIX_GDN) + mixer_layers(m, RF_MIX_MAMBA2) > 0;
}

bool rf_model_is_hybrid(const rf_model *m)
{
    if (m->attn_v_dim || m->attn_out_gate || m->k_eq_v || m->local_n_q || m->local_n_kv ||
        m->local_head_dim || m->local_v_dim || m->index_topk || m->mtp_layers || m->moe_and_dense ||
        m->ffn_ungated || (!m->kv_lora_rank && m->q_lora_rank))
        return true;
    for (int64_t l = 0; l < m->layers && l < RF_MODEL_MAX_LAYERS; l++)
        if (m->mixer[l] || m->no_ffn[l] || m->unquantized_layer[l] ||
            rf_model_layer_local(m, l) == RF_LOCAL_CHUNKED)
            return true;
    return false;
}

rf_dtype rf_model_layer_module_dtype(const rf_model *m, int64_t l, rf_module mod, rf_dtype w,
                                     bool all_modules)
{
    if (!all_modules && l >= 0 && l < RF_MODEL_MAX_LAYERS &&
        (m->unquantized_layer[l] & RF_MOD_BIT(mod)))
        return m->unquantized_dtype;
    return rf_model_module_dtype(m, mod, w, all_modules);
}

int64_t rf_model_kv_elems_per_layer(const rf_model *m)
{
    if (m->kv_lora_rank)
        return m->kv_lora_rank + m->qk_rope_dim;
    return 2 * m->n_kv * m->head_dim;
}

int64_t rf_model_kv_elems_layer(const rf_model *m, int64_t l)
{
    if (rf_model_layer_mixer(m, l) != RF_MIX_ATTN)
        return 0;
    if (m->kv_lora_rank)
        return m->kv_lora_rank + m->qk_rope_dim;
    rf_attn_shape a = rf_model_attn_shape(m, l);
    return a.k_eq_v ? a.n_kv * a.head_dim : a.n_kv * (a.head_dim + a.v_dim);
}

/* DSA's index-key dtype: the model's, else fp8 e4m3 with a 4-byte scale per
 * 128 elements (vLLM's and SGLang's index_head_dim + index_head_dim / 128 * 4
 * bytes a token). */
static rf_dtype index_dtype(const rf_model *m)
{
    if (m->has_index_dtype)
        return m->index_dtype;
    return (rf_dtype){.kind = RF_FP8_E4M3, .group_size = 128, .scale_bytes = 4};
}

uint64_t rf_model_index_bytes_per_token(const rf_model *m)
{
    uint64_t b = 0;
    if (m->index_topk && rf_dtype_bytes(index_dtype(m), (uint64_t)m->index_head_dim, &b, NULL))
        return 0; /* index_head_dim <= 2^16: never */
    return m->index_topk ? b : 0;
}

/* Weights of one attention layer's projections in shape a. */
static uint64_t attn_params(const rf_model *m, const rf_attn_shape *a)
{
    uint64_t H = (uint64_t)m->hidden, nq = (uint64_t)a->n_q;
    if (m->kv_lora_rank) {
        uint64_t qk = (uint64_t)(m->qk_nope_dim + m->qk_rope_dim);
        uint64_t r = (uint64_t)m->kv_lora_rank, rope = (uint64_t)m->qk_rope_dim;
        uint64_t q = m->q_lora_rank
                         ? H * (uint64_t)m->q_lora_rank + (uint64_t)m->q_lora_rank * nq * qk
                         : H * nq * qk;
        return q + H * (r + rope) + r * nq * (uint64_t)(m->qk_nope_dim + m->v_head_dim) +
               nq * (uint64_t)m->v_head_dim * H;
    }
    uint64_t dh = (uint64_t)a->head_dim, dv = (uint64_t)a->v_dim, nkv = (uint64_t)a->n_kv;
    /* q_proj H -> n_q d_h (twice that with the output gate; through a
     * q_lora_rank latent when given: Step-3's share_q_dim), k_proj, v_proj
     * (none when V is K), o_proj n_q d_v -> H */
    uint64_t qw = nq * dh * (m->attn_out_gate ? 2 : 1);
    uint64_t r = (uint64_t)m->q_lora_rank;
    uint64_t q = r ? H * r + r * qw : H * qw;
    return q + H * nkv * dh + (a->k_eq_v ? 0 : H * nkv * dv) + nq * dv * H;
}

/* The DSA indexer's projections: wq_b q_lora_rank -> index_heads d_idx,
 * wk H -> d_idx, weights_proj H -> index_heads. */
static uint64_t indexer_params(const rf_model *m)
{
    if (!m->index_topk)
        return 0;
    uint64_t H = (uint64_t)m->hidden, ih = (uint64_t)m->index_heads;
    uint64_t id = (uint64_t)m->index_head_dim;
    return (uint64_t)m->q_lora_rank * ih * id + H * id + H * ih;
}

/* GDN's and Mamba2's conv channels. */
static uint64_t gdn_conv_dim(const rf_model *m)
{
    return 2 * (uint64_t)(m->gdn_k_heads * m->gdn_k_dim) +
           (uint64_t)(m->gdn_v_heads * m->gdn_v_dim);
}

static uint64_t ssm_conv_dim(const rf_model *m)
{
    return (uint64_t)(m->ssm_heads * m->ssm_head_dim) +
           2 * (uint64_t)(m->ssm_groups * m->ssm_state);
}

/* Weights of one GDN or Mamba2 mixer (RF_MOD_MIXER):
 *   GDN:    in_proj_qkvz H -> 2 Kh dk + 2 Vh dv, in_proj_ba H -> 2 Vh,
 *           conv1d (2 Kh dk + Vh dv) x K, out_proj Vh dv -> H
 *   Mamba2: in_proj H -> 2 h P + 2 G N + h, conv1d (h P + 2 G N) x K,
 *           out_proj h P -> H                                           */
static uint64_t mixer_params(const rf_model *m, rf_mixer x)
{
    uint64_t H = (uint64_t)m->hidden;
    if (x == RF_MIX_GDN) {
        uint64_t kd = (uint64_t)(m->gdn_k_heads * m->gdn_k_dim);
        uint64_t vd = (uint64_t)(m->gdn_v_heads * m->gdn_v_dim);
        return H * (2 * kd + 2 * vd) + H * 2 * (uint64_t)m->gdn_v_heads +
               gdn_conv_dim(m) * (uint64_t)m->gdn_conv + vd * H;
    }
    if (x == RF_MIX_MAMBA2) {
        uint64_t di = (uint64_t)(m->ssm_heads * m->ssm_head_dim);
        uint64_t gn = (uint64_t)(m->ssm_groups * m->ssm_state);
        return H * (2 * di + 2 * gn + (uint64_t)m->ssm_heads) +
               ssm_conv_dim(m) * (uint64_t)m->ssm_conv + di * H;
    }
    return 0;
}

static uint64_t shared_width(const rf_model *m)
{
    return (uint64_t)m->n_shared * (uint64_t)(m->shared_ffn ? m->shared_ffn : m->moe_ffn);
}

/* One layer's weights by module, and those it streams per decode token. */
typedef struct layer_params {
    uint64_t by[RF_MOD_COUNT];
    uint64_t streamed;
} layer_params;

static void layer_weights(const rf_model *m, rf_mixer x, rf_attn_shape a, rf_ffn_kind f,
                          layer_params *lp)
{
    uint64_t H = (uint64_t)m->hidden, mats = m->ffn_ungated ? 2 : 3;
    memset(lp, 0, sizeof *lp);
    if (x == RF_MIX_ATTN) {
        lp->by[RF_MOD_ATTN] = attn_params(m, &a);
        lp->by[RF_MOD_INDEXER] = indexer_params(m);
    }
    lp->by[RF_MOD_MIXER] = mixer_params(m, x);
    uint64_t streamed = lp->by[RF_MOD_ATTN] + lp->by[RF_MOD_INDEXER] + lp->by[RF_MOD_MIXER];
    if (f == RF_FFN_DENSE || f == RF_FFN_MOE_DENSE) {
        lp->by[RF_MOD_MLP] = mats * H * (uint64_t)m->ffn;
        streamed += lp->by[RF_MOD_MLP];
    }
    if (f == RF_FFN_MOE || f == RF_FFN_MOE_DENSE) {
        uint64_t expert = mats * H * (uint64_t)m->moe_ffn;
        lp->by[RF_MOD_ROUTER] = H * (uint64_t)(m->n_experts + (m->shared_expert_gate ? 1 : 0));
        lp->by[RF_MOD_SHARED] = mats * H * shared_width(m);
        lp->by[RF_MOD_EXPERTS] = expert * (uint64_t)m->n_experts;
        streamed += lp->by[RF_MOD_ROUTER] + lp->by[RF_MOD_SHARED] + expert * (uint64_t)m->top_k;
    }
    lp->streamed = streamed;
}

/* An MTP layer: eh_proj 2H -> H (counted with attention), a global
 * attention layer (MLA and indexer as the model's) and the MoE block when
 * the model has experts, else the dense MLP. */
static void mtp_weights(const rf_model *m, layer_params *lp)
{
    rf_attn_shape a = {.n_q = m->n_q,
                       .n_kv = m->n_kv,
                       .head_dim = m->head_dim,
                       .v_dim = m->attn_v_dim ? m->attn_v_dim : m->head_dim,
                       .k_eq_v = m->k_eq_v};
    layer_weights(m, RF_MIX_ATTN, a, m->n_experts ? RF_FFN_MOE : RF_FFN_DENSE, lp);
    lp->by[RF_MOD_ATTN] += 2 * (uint64_t)m->hidden * (uint64_t)m->hidden;
}

rf_status rf_model_params(const rf_model *m, rf_param_counts *out, rf_err *err)
{
    rf_status s = rf_model_validate(m, err);
    if (s)
        return s;
    /* Every dimension is <= 2^24 (heads and head dims <= 2^16, experts
     * <= 2^12), so each product below stays under 2^62; sums are checked. */
    uint64_t H = (uint64_t)m->hidden, V = (uint64_t)m->vocab;
    rf_attn_shape g = rf_model_attn_shape(m, -1); /* the global shape */
    rf_param_counts p = {.embedding = H * V,
                         .lm_head = H * V,
                         .per_layer_dense =
                             attn_params(m, &g) + (m->ffn_ungated ? 2 : 3) * H * (uint64_t)m->ffn};
    uint64_t streamed = 0, *by = p.by_module;
    bool ok = true;
    layer_params lp;
    for (int64_t l = 0; l < m->layers; l++) {
        rf_mixer x = rf_model_layer_mixer(m, l);
        layer_weights(m, x, rf_model_attn_shape(m, l), rf_model_layer_ffn(m, l), &lp);
        for (int i = 0; i < RF_MOD_COUNT; i++) {
            ok = ok && rf_add_u64(by[i], lp.by[i], &by[i]);
            if (m->unquantized_layer[l] & RF_MOD_BIT(i))
                ok = ok &&
                     rf_add_u64(p.by_module_unquantized[i], lp.by[i], &p.by_module_unquantized[i]);
        }
        ok = ok && rf_add_u64(streamed, lp.streamed, &streamed);
    }
    if (m->mtp_layers) {
        /* MTP layer i's exclusions sit at unquantized_layer[layers + i] */
        mtp_weights(m, &lp);
        for (int i = 0; i < RF_MOD_COUNT; i++) {
            uint64_t v = lp.by[i] * (uint64_t)m->mtp_layers; /* mtp_layers <= 64 */
            ok = ok && rf_add_u64(by[i], v, &by[i]) && rf_add_u64(p.mtp, v, &p.mtp);
            for (int64_t l = m->layers; l < m->layers + m->mtp_layers; l++)
                if (m->unquantized_layer[l] & RF_MOD_BIT(i))
                    ok = ok && rf_add_u64(p.by_module_unquantized[i], lp.by[i],
                                          &p.by_module_unquantized[i]);
        }
    }
    by[RF_MOD_EMBED] = p.embedding;
    by[RF_MOD_LM_HEAD] = m->tied ? 0 : p.lm_head;
    uint64_t total = 0;
    for (int i = 0; i < RF_MOD_COUNT; i++)
        ok = ok && rf_add_u64(total, by[i], &total);
    ok = ok && rf_add_u64(streamed, p.lm_head, &streamed);
    if (!ok)
        return rf_err_set(err, RF_ERANGE, "%s: parameter count overflows", m->name);
    p.total = total;
    p.streamed_per_token = streamed;
    *out = p;
    return RF_OK;
}

rf_status rf_model_state_bytes(const rf_model *m, uint64_t *bytes_per_seq, rf_err *err)
{
    rf_status s = rf_model_validate(m, err);
    if (s)
        return s;
    uint64_t gdn = (uint64_t)mixer_layers(m, RF_MIX_GDN);
    uint64_t mamba = (uint64_t)mixer_layers(m, RF_MIX_MAMBA2);
    /* elements of one layer: the temporal state and the conv state's K - 1
     * past inputs of every conv channel */
    uint64_t state = 0, conv = 0;
    if (gdn) {
        state += gdn * (uint64_t)(m->gdn_v_heads * m->gdn_k_dim) * (uint64_t)m->gdn_v_dim;
        conv += gdn * (uint64_t)(m->gdn_conv - 1) * gdn_conv_dim(m);
    }
    if (mamba) {
        state += mamba * (uint64_t)(m->ssm_heads * m->ssm_head_dim) * (uint64_t)m->ssm_state;
        conv += mamba * (uint64_t)(m->ssm_conv - 1) * ssm_conv_dim(m);
    }
    /* each term < 2^10 layers x 2^48: the sum fits */
    rf_dtype sd = m->has_state_dtype ? m->state_dtype : rf_dtype_of(RF_BF16);
    uint64_t a, b;
    if ((s = rf_dtype_bytes(sd, state, &a, err)) ||
        (s = rf_dtype_bytes(rf_dtype_of(RF_BF16), conv, &b, err)))
        return s;
    if (!rf_add_u64(a, b, bytes_per_seq))
        return rf_err_set(err, RF_ERANGE, "%s: state bytes overflow", m->name);
    return RF_OK;
}

rf_status rf_model_mtp_draft(const rf_model *m, rf_model *draft, rf_err *err)
{
    rf_status s = rf_model_validate(m, err);
    if (s)
        return s;
    if (!m->mtp_layers)
        return rf_err_set(err, RF_EINVAL, "%s has no MTP layers (num_nextn_predict_layers is 0)",
                          m->name);
    rf_model d = *m;
    snprintf(d.name, sizeof d.name, "%.80s MTP", m->name);
    d.layers = m->mtp_layers;
    d.mtp_layers = 0;
    d.first_dense = 0;
    d.moe_freq = 1;
    d.moe_and_dense = false;
    memset(d.mixer, 0, sizeof d.mixer);
    memset(d.no_ffn, 0, sizeof d.no_ffn);
    memset(d.sliding, 0, sizeof d.sliding);
    memset(d.chunked, 0, sizeof d.chunked);
    memset(d.dense_mlp, 0, sizeof d.dense_mlp);
    /* the draft's layer i is MTP layer i, with its exclusions */
    memset(d.unquantized_layer, 0, sizeof d.unquantized_layer);
    for (int64_t i = 0; i < m->mtp_layers; i++)
        d.unquantized_layer[i] = m->unquantized_layer[m->layers + i];
    snprintf(d.notes, sizeof d.notes,
             "the MTP layers of %.80s as a draft: %lld global attention layer(s) with %s; each "
             "layer's eh_proj (2H -> H) is not counted",
             m->name, (long long)m->mtp_layers, m->n_experts ? "the MoE block" : "the dense MLP");
    *draft = d;
    return RF_OK;
}
