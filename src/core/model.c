/* model.c - validation, parameter counts and KV sizes of a model. */
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
    if ((s = field(err, "intermediate_size", m->ffn, rf_model_moe_layers(m) < m->layers ? 1 : 0)))
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
    return RF_OK;
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
        [RF_MOD_ATTN] = "attention",     [RF_MOD_MLP] = "mlp",
        [RF_MOD_ROUTER] = "router",      [RF_MOD_SHARED] = "shared_experts",
        [RF_MOD_EXPERTS] = "experts",    [RF_MOD_LM_HEAD] = "lm_head",
        [RF_MOD_EMBED] = "embed",        [RF_MOD_MIXER] = "mixer",
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
    if (!m->n_experts || l < m->first_dense || (l < RF_MODEL_MAX_LAYERS && m->dense_mlp[l]))
        return false;
    return m->moe_freq <= 1 || l % m->moe_freq == 0;
}

int64_t rf_model_kv_elems_per_layer(const rf_model *m)
{
    if (m->kv_lora_rank)
        return m->kv_lora_rank + m->qk_rope_dim;
    return 2 * m->n_kv * m->head_dim;
}

/* Weights of one layer's attention projections. */
static uint64_t attn_params(const rf_model *m)
{
    uint64_t H = (uint64_t)m->hidden, nq = (uint64_t)m->n_q;
    if (m->kv_lora_rank) {
        uint64_t qk = (uint64_t)(m->qk_nope_dim + m->qk_rope_dim);
        uint64_t r = (uint64_t)m->kv_lora_rank, rope = (uint64_t)m->qk_rope_dim;
        uint64_t q = m->q_lora_rank ? H * (uint64_t)m->q_lora_rank + (uint64_t)m->q_lora_rank * nq * qk
                                    : H * nq * qk;
        return q + H * (r + rope) + r * nq * (uint64_t)(m->qk_nope_dim + m->v_head_dim) +
               nq * (uint64_t)m->v_head_dim * H;
    }
    uint64_t dh = (uint64_t)m->head_dim, nkv = (uint64_t)m->n_kv;
    return 2 * H * nq * dh + 2 * H * nkv * dh;
}

static uint64_t shared_width(const rf_model *m)
{
    return (uint64_t)m->n_shared * (uint64_t)(m->shared_ffn ? m->shared_ffn : m->moe_ffn);
}

rf_status rf_model_params(const rf_model *m, rf_param_counts *out, rf_err *err)
{
    rf_status s = rf_model_validate(m, err);
    if (s)
        return s;
    /* Every dimension is <= 2^24 (heads and head dims <= 2^16, experts
     * <= 2^12), so each product below stays under 2^62; sums are checked. */
    uint64_t H = (uint64_t)m->hidden, V = (uint64_t)m->vocab;
    uint64_t attn = attn_params(m);
    uint64_t dense_mlp = 3 * H * (uint64_t)m->ffn;
    uint64_t expert = 3 * H * (uint64_t)m->moe_ffn;
    uint64_t router = H * (uint64_t)(m->n_experts + (m->shared_expert_gate ? 1 : 0));
    uint64_t shared = 3 * H * shared_width(m);
    rf_param_counts p = {.embedding = H * V, .lm_head = H * V,
                         .per_layer_dense = attn + dense_mlp};
    uint64_t streamed = 0, *by = p.by_module;
    bool ok = true;
    for (int64_t l = 0; l < m->layers; l++) {
        ok = ok && rf_add_u64(by[RF_MOD_ATTN], attn, &by[RF_MOD_ATTN]);
        if (rf_model_layer_is_moe(m, l)) {
            ok = ok && rf_add_u64(by[RF_MOD_ROUTER], router, &by[RF_MOD_ROUTER]) &&
                 rf_add_u64(by[RF_MOD_SHARED], shared, &by[RF_MOD_SHARED]) &&
                 rf_add_u64(by[RF_MOD_EXPERTS], expert * (uint64_t)m->n_experts,
                            &by[RF_MOD_EXPERTS]) &&
                 rf_add_u64(streamed, attn + router + shared + expert * (uint64_t)m->top_k,
                            &streamed);
        } else {
            ok = ok && rf_add_u64(by[RF_MOD_MLP], dense_mlp, &by[RF_MOD_MLP]) &&
                 rf_add_u64(streamed, attn + dense_mlp, &streamed);
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
