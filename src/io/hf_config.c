/* hf_config.c - an rf_model from a HuggingFace config.json (rf_reader.h).
 *
 * The walk: pick the decoder's object (the root, or text_config for a
 * multimodal wrapper), find the family, read the shapes, then the MoE, MLA
 * and sliding-window fields of that family, the dtype and the quantization,
 * and finally validate. Every default below is the one the family's
 * configuration class in HF transformers applies; docs/models.md lists them.
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roofline/rf_file.h"
#include "roofline/rf_op.h"
#include "roofline/rf_reader.h"

#include "hf_internal.h"
#include "io_json.h"

typedef enum sliding_rule {
    SW_NONE,      /* no sliding layer unless layer_types names some         */
    SW_ALL,       /* every layer when sliding_window is set (mistral, ...)  */
    SW_QWEN,      /* layers >= max_window_layers, if use_sliding_window     */
    SW_ALTERNATE, /* even layers (gemma2, gpt_oss)                          */
    SW_PATTERN    /* all but every sliding_window_pattern-th (gemma3)       */
} sliding_rule;

typedef enum moe_style { MOE_NONE, MOE_MIXTRAL, MOE_QWEN, MOE_DEEPSEEK, MOE_GPT_OSS } moe_style;

/* How the layers of a family are laid out beyond attention + MLP/MoE. */
typedef enum layout {
    LAY_PLAIN,    /* attention on every layer, a dense MLP or a MoE         */
    LAY_GDN,      /* Qwen3-Next, Qwen3.5: Gated DeltaNet layers with gated
                     full attention every few layers                         */
    LAY_LLAMA4,   /* chunked RoPE layers and global NoPE layers,
                     interleaved MoE with a shared expert                    */
    LAY_NEMOTRON, /* hybrid_override_pattern: Mamba2, attention, MLP, MoE   */
    LAY_MIMO,     /* hybrid_layer_pattern of sliding layers with their own
                     head shapes, moe_layer_freq as a list                   */
    LAY_GEMMA4    /* sliding and global layers with their own head shapes,
                     K = V on global layers, the MoE beside the dense MLP    */
} layout;

/* Defaults of one family's configuration class. */
typedef struct family {
    const char *type;
    int64_t heads, ffn, vocab; /* num_attention_heads, intermediate_size,
                                  vocab_size; 0 = required                  */
    int64_t max_ctx;           /* max_position_embeddings                           */
    int64_t kv_heads;          /* num_key_value_heads; 0 = equal to the heads       */
    int64_t head_dim;          /* 0 = hidden_size / num_attention_heads             */
    bool tied;                 /* tie_word_embeddings                               */
    sliding_rule sliding;
    int64_t window;     /* sliding_window; 0 = None                          */
    int64_t max_window; /* max_window_layers (SW_QWEN)                       */
    bool qkv_bias;      /* q/k/v biases built into the model (qwen2)         */
    bool attn_bias;     /* attention_bias                                    */
    bool o_no_bias;     /* attention_bias puts biases on q/k/v only (glm4_moe) */
    moe_style moe;
    const char *experts_key; /* the field holding the routed experts        */
    int64_t experts, top_k;  /* 0: no default, the field is required        */
    int64_t moe_ffn, n_shared, shared_ffn, first_dense;
    bool mla; /* DeepSeek multi-head latent attention              */
    bool dsa; /* DeepSeek sparse attention: the lightning indexer  */
    layout layout;
    const char *mtp_key; /* the field counting multi-token-prediction layers */
} family;

#define DEEPSEEK_V3                                                                                \
    .heads = 128, .ffn = 18432, .vocab = 129280, .moe = MOE_DEEPSEEK,                              \
    .experts_key = "n_routed_experts", .experts = 256, .top_k = 8, .moe_ffn = 2048, .n_shared = 1, \
    .first_dense = 3, .mla = true, .max_ctx = 4096, .mtp_key = "num_nextn_predict_layers"
/* MLA + DeepSeek MoE families with no configuration class in transformers
 * to take defaults from (GLM-4.7-Flash, GLM-5): every shape is required. */
#define GLM_MLA                                                                                    \
    .moe = MOE_DEEPSEEK, .experts_key = "n_routed_experts", .mla = true,                           \
    .mtp_key = "num_nextn_predict_layers"
#define QWEN3_NEXT                                                                                 \
    .heads = 16, .ffn = 5632, .vocab = 151936, .kv_heads = 2, .head_dim = 256, .moe = MOE_QWEN,    \
    .experts_key = "num_experts", .experts = 512, .top_k = 10, .moe_ffn = 512, .shared_ffn = 512,  \
    .max_ctx = 32768, .layout = LAY_GDN, .mtp_key = "mtp_num_hidden_layers"

static const family families[] = {
    {.type = "llama", .heads = 32, .ffn = 11008, .vocab = 32000, .max_ctx = 2048},
    {.type = "mistral",
     .heads = 32,
     .ffn = 14336,
     .vocab = 32000,
     .kv_heads = 8,
     .sliding = SW_ALL,
     .window = 4096,
     .max_ctx = 131072},
    {.type = "qwen2",
     .heads = 32,
     .ffn = 22016,
     .vocab = 151936,
     .sliding = SW_QWEN,
     .window = 4096,
     .max_window = 28,
     .qkv_bias = true,
     .max_ctx = 32768},
    {.type = "qwen3",
     .heads = 32,
     .ffn = 22016,
     .vocab = 151936,
     .head_dim = 128,
     .sliding = SW_QWEN,
     .window = 4096,
     .max_window = 28,
     .max_ctx = 32768},
    {.type = "mixtral",
     .heads = 32,
     .ffn = 14336,
     .vocab = 32000,
     .kv_heads = 8,
     .sliding = SW_ALL,
     .moe = MOE_MIXTRAL,
     .experts_key = "num_local_experts",
     .experts = 8,
     .top_k = 2,
     .max_ctx = 131072},
    {.type = "qwen2_moe",
     .heads = 16,
     .ffn = 5632,
     .vocab = 151936,
     .sliding = SW_QWEN,
     .window = 4096,
     .max_window = 28,
     .qkv_bias = true,
     .moe = MOE_QWEN,
     .experts_key = "num_experts",
     .experts = 60,
     .top_k = 4,
     .moe_ffn = 1408,
     .shared_ffn = 5632,
     .max_ctx = 8192},
    {.type = "qwen3_moe",
     .heads = 32,
     .ffn = 6144,
     .vocab = 151936,
     .kv_heads = 4,
     .sliding = SW_QWEN,
     .window = 4096,
     .moe = MOE_QWEN,
     .experts_key = "num_experts",
     .experts = 128,
     .top_k = 8,
     .moe_ffn = 768,
     .max_ctx = 32768},
    {.type = "gemma2",
     .heads = 8,
     .ffn = 9216,
     .vocab = 256000,
     .kv_heads = 4,
     .head_dim = 256,
     .tied = true,
     .sliding = SW_ALTERNATE,
     .window = 4096,
     .max_ctx = 8192},
    {.type = "gemma3_text",
     .heads = 8,
     .ffn = 9216,
     .vocab = 262208,
     .kv_heads = 4,
     .head_dim = 256,
     .tied = true,
     .sliding = SW_PATTERN,
     .window = 4096,
     .max_ctx = 131072},
    {.type = "phi3", .heads = 32, .ffn = 8192, .vocab = 32064, .sliding = SW_ALL, .max_ctx = 4096},
    {.type = "deepseek_v2",
     .heads = 32,
     .ffn = 11008,
     .vocab = 32000,
     .moe = MOE_DEEPSEEK,
     .experts_key = "n_routed_experts",
     .experts = 64,
     .moe_ffn = 1407,
     .n_shared = 2,
     .mla = true,
     .max_ctx = 2048},
    {.type = "deepseek_v3", DEEPSEEK_V3},
    /* Kimi-K2 ships DeepSeek-V3's configuration class (DeepseekV3ForCausalLM) */
    {.type = "kimi_k2", DEEPSEEK_V3},
    {.type = "deepseek_v32", DEEPSEEK_V3, .dsa = true},
    {.type = "glm4_moe_lite", GLM_MLA},
    {.type = "glm_moe_dsa", GLM_MLA, .dsa = true},
    {.type = "glm4_moe",
     .heads = 96,
     .ffn = 10944,
     .vocab = 151552,
     .kv_heads = 8,
     .o_no_bias = true,
     .moe = MOE_DEEPSEEK,
     .experts_key = "n_routed_experts",
     .experts = 128,
     .top_k = 8,
     .moe_ffn = 1408,
     .n_shared = 1,
     .first_dense = 1,
     .max_ctx = 131072,
     .mtp_key = "num_nextn_predict_layers"},
    {.type = "gpt_oss",
     .heads = 64,
     .ffn = 2880,
     .vocab = 201088,
     .kv_heads = 8,
     .head_dim = 64,
     .sliding = SW_ALTERNATE,
     .window = 128,
     .attn_bias = true,
     .moe = MOE_GPT_OSS,
     .experts_key = "num_local_experts",
     .experts = 128,
     .top_k = 4,
     .max_ctx = 131072},
    {.type = "qwen3_next", QWEN3_NEXT},
    /* Qwen3.5 / 3.6: Qwen3-Next's layout, the text decoder of a wrapper */
    {.type = "qwen3_5_moe_text", QWEN3_NEXT},
    {.type = "qwen3_5_text",
     .heads = 16,
     .ffn = 5632,
     .vocab = 151936,
     .kv_heads = 2,
     .head_dim = 256,
     .max_ctx = 32768,
     .layout = LAY_GDN,
     .mtp_key = "mtp_num_hidden_layers"},
    {.type = "llama4_text",
     .heads = 40,
     .ffn = 8192,
     .vocab = 202048,
     .kv_heads = 8,
     .head_dim = 128,
     .experts_key = "num_local_experts",
     .experts = 16,
     .top_k = 1,
     .max_ctx = 131072,
     .layout = LAY_LLAMA4},
    {.type = "nemotron_h",
     .heads = 32,
     .ffn = 21504,
     .vocab = 131072,
     .kv_heads = 8,
     .head_dim = 128,
     .experts_key = "n_routed_experts",
     .max_ctx = 4096,
     .layout = LAY_NEMOTRON,
     .mtp_key = "num_nextn_predict_layers"},
    {.type = "minimax_m2", .moe = MOE_MIXTRAL, .experts_key = "num_local_experts"},
    {.type = "mimo_v2_flash",
     .experts_key = "n_routed_experts",
     .layout = LAY_MIMO,
     .mtp_key = "num_nextn_predict_layers"},
    {.type = "gemma4_text", .tied = true, .experts_key = "num_experts", .layout = LAY_GEMMA4},
};

/* Multimodal wrappers: the model_type of the root, and the family of the
 * decoder in its text_config (or llm_config) when that one names none. */
static const struct {
    const char *outer, *inner;
} wrappers[] = {
    {"gemma3", "gemma3_text"},           {"gemma4", "gemma4_text"},   {"llama4", "llama4_text"},
    {"qwen3_5_moe", "qwen3_5_moe_text"}, {"qwen3_5", "qwen3_5_text"}, {"kimi_k25", "kimi_k2"},
};

/* The family of a derivative: model_type names a model of its own but
 * architectures names the class it runs on (Kimi-K2's DeepseekV3ForCausalLM). */
static const struct {
    const char *arch, *type;
} arch_families[] = {
    {"LlamaForCausalLM", "llama"},
    {"MistralForCausalLM", "mistral"},
    {"Qwen2ForCausalLM", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3"},
    {"MixtralForCausalLM", "mixtral"},
    {"Qwen2MoeForCausalLM", "qwen2_moe"},
    {"Qwen3MoeForCausalLM", "qwen3_moe"},
    {"DeepseekV2ForCausalLM", "deepseek_v2"},
    {"DeepseekV3ForCausalLM", "deepseek_v3"},
    {"DeepseekV32ForCausalLM", "deepseek_v32"},
    {"Glm4MoeForCausalLM", "glm4_moe"},
    {"Qwen3NextForCausalLM", "qwen3_next"},
    {"GptOssForCausalLM", "gpt_oss"},
    {"NemotronHForCausalLM", "nemotron_h"},
    {"MiniMaxM2ForCausalLM", "minimax_m2"},
};

/* Families whose configs are public but whose shapes this model cannot
 * hold: refused with what is missing. */
static const struct {
    const char *type, *why;
} refused[] = {
    {"nemotron-nas", "block_configs gives each block its own shapes (attention skipped or "
                     "linear, its own FFN width), which the reader does not hold"},
    {"deci", "block_configs gives each block its own shapes, which the reader does not hold"},
    {"step3_vl", "Step-3's multi-matrix factorised attention (share_q_dim) is not modelled"},
    {"step3_text", "Step-3's multi-matrix factorised attention (share_q_dim) is not modelled"},
    {"step3p5", "Step-3.5's attention and MoE layout are not modelled"},
    {"minimax_m1", "MiniMax-M1's lightning (linear) attention is not modelled"},
};

/* The family of a decoder's model_type, or of a wrapper's (whose decoder
 * may also sit at the root, as in some copies of Kimi-K2.5's config). */
static const family *find_family(const char *type)
{
    for (size_t w = 0; type && w < sizeof wrappers / sizeof wrappers[0]; w++)
        if (!strcmp(type, wrappers[w].outer))
            type = wrappers[w].inner;
    for (size_t i = 0; type && i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(type, families[i].type))
            return &families[i];
    return NULL;
}

/* The list is written once, by the first caller: a thread that finds
 * another writing it waits (microseconds), so none reads half of it. */
const char *rf_model_known_families(void)
{
    enum { UNWRITTEN, WRITING, WRITTEN };
    static char known[640];
    static atomic_int state;
    int unwritten = UNWRITTEN;
    if (atomic_compare_exchange_strong(&state, &unwritten, WRITING)) {
        size_t used = 0;
        for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                     families[i].type);
        atomic_store(&state, WRITTEN);
    }
    while (atomic_load(&state) != WRITTEN)
        ;
    return known;
}

/* ---- shapes ----------------------------------------------------------- */

/* A shape field with the family's default (required when it has none). */
static rf_status shape_field(reader *r, const char *key, int64_t dflt, int64_t *out)
{
    return rf__hf_int_field(r, key, dflt ? OPTIONAL : REQUIRED, dflt, 1, out, NULL);
}

static rf_status read_shapes(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    bool given;
    /* hidden_size and num_hidden_layers size the model: never defaulted */
    if ((s = rf__hf_int_field(r, "hidden_size", REQUIRED, 0, 1, &m->hidden, NULL)) ||
        (s = rf__hf_int_field(r, "num_hidden_layers", REQUIRED, 0, 1, &m->layers, NULL)) ||
        (s = shape_field(r, "num_attention_heads", f->heads, &m->n_q)) ||
        (s = shape_field(r, "intermediate_size", f->ffn, &m->ffn)) ||
        (s = shape_field(r, "vocab_size", f->vocab, &m->vocab)))
        return s;
    /* the positions the model was built for (bounded by rf_model_validate);
     * a family we do not know has no default: 0, unknown */
    if ((s = rf__hf_int_field(r, "max_position_embeddings", f->max_ctx ? OPTIONAL : QUIET,
                              f->max_ctx, 1, &m->max_context, NULL)))
        return s;
    if (m->layers > RF_MODEL_MAX_LAYERS)
        return rf__hf_fail(r, RF_ERANGE, "num_hidden_layers (%lld) is beyond the accepted %d",
                           (long long)m->layers, RF_MODEL_MAX_LAYERS);
    /* absent: the family's figure, or as many as the query heads */
    if ((s = rf__hf_int_field(r, "num_key_value_heads", f->kv_heads ? OPTIONAL : QUIET,
                              f->kv_heads ? f->kv_heads : m->n_q, 1, &m->n_kv, &given)))
        return s;
    if (!given && !f->kv_heads)
        rf__hf_took_default(r, "num_key_value_heads", m->n_kv, " (num_attention_heads)");
    if (m->n_q % m->n_kv)
        return rf__hf_fail(r, RF_EINVAL,
                           "num_key_value_heads (%lld) must divide num_attention_heads (%lld)",
                           (long long)m->n_kv, (long long)m->n_q);
    if ((s = rf__hf_int_field(r, "head_dim", QUIET, f->head_dim, 1, &m->head_dim, &given)))
        return s;
    if (given || f->mla) /* MLA: qk_nope_head_dim + qk_rope_head_dim (read_mla) */
        return RF_OK;
    if (f->head_dim) {
        rf__hf_took_default(r, "head_dim", m->head_dim, "");
        return RF_OK;
    }
    if (m->hidden % m->n_q)
        return rf__hf_fail(
            r, RF_EINVAL,
            "num_attention_heads (%lld) must divide hidden_size (%lld) when head_dim is "
            "absent",
            (long long)m->n_q, (long long)m->hidden);
    m->head_dim = m->hidden / m->n_q;
    rf__hf_took_default(r, "head_dim", m->head_dim, " (hidden_size / num_attention_heads)");
    return RF_OK;
}

/* Tying and biases: not shapes, tying named when defaulted to true. */
static rf_status read_biases(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    bool tied_given;
    if ((s = rf__hf_bool_field(r, "tie_word_embeddings", true, f->tied, &m->tied, &tied_given)))
        return s;
    if (!tied_given && f->tied)
        rf__hf_note(m, "tie_word_embeddings absent: %s ties its embeddings by default", f->type);
    bool attn_bias, mlp_bias;
    if ((s = rf__hf_bool_field(r, "attention_bias", false, f->attn_bias, &attn_bias, NULL)) ||
        (s = rf__hf_bool_field(r, "mlp_bias", false, f->moe == MOE_GPT_OSS, &mlp_bias, NULL)))
        return s;
    m->qkv_bias = f->qkv_bias || attn_bias;
    m->o_bias = attn_bias && !f->o_no_bias;
    m->mlp_bias = mlp_bias;
    return RF_OK;
}

/* ---- MoE -------------------------------------------------------------- */

/* A list of per-layer 0/1 flags (mlp_only_layers' sibling forms:
 * moe_layer_freq or hybrid_layer_pattern as lists): one integer a layer. */
static rf_status layer_flags(reader *r, const char *key, const json_t *v, uint8_t *out)
{
    rf_model *m = r->m;
    if (!json_is_array(v))
        return rf__hf_fail(r, RF_EINVAL, "%s must be an array, not %s", key, rf__hf_json_kind(v));
    if ((int64_t)json_array_size(v) != m->layers)
        return rf__hf_fail(r, RF_EINVAL, "%s has %zu entries but num_hidden_layers is %lld", key,
                           json_array_size(v), (long long)m->layers);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || (json_integer_value(x) != 0 && json_integer_value(x) != 1))
            return rf__hf_fail(r, RF_EINVAL, "%s[%zu] must be 0 or 1", key, i);
        out[i] = (uint8_t)json_integer_value(x);
    }
    return RF_OK;
}

/* qwen*_moe: mlp_only_layers lists dense layers; otherwise every
 * decoder_sparse_step-th layer ((l + 1) % step == 0) is MoE. */
static rf_status qwen_dense_layers(reader *r)
{
    rf_model *m = r->m;
    int64_t step;
    rf_status s = rf__hf_int_field(r, "decoder_sparse_step", OPTIONAL, 1, 1, &step, NULL);
    if (s)
        return s;
    for (int64_t l = 0; l < m->layers; l++)
        m->dense_mlp[l] = (l + 1) % step != 0;
    const json_t *only = rf__hf_field(r, "mlp_only_layers", false);
    if (!only || json_is_null(only))
        return RF_OK;
    if (!json_is_array(only))
        return rf__hf_fail(r, RF_EINVAL, "mlp_only_layers must be an array, not %s",
                           rf__hf_json_kind(only));
    for (size_t i = 0; i < json_array_size(only); i++) {
        const json_t *v = json_array_get(only, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= m->layers)
            return rf__hf_fail(r, RF_EINVAL,
                               "mlp_only_layers[%zu] must be a layer index in [0, %lld)", i,
                               (long long)m->layers);
        m->dense_mlp[json_integer_value(v)] = 1;
    }
    return RF_OK;
}

/* The routed experts and k of them a token: the family's default, or the
 * field required where the family has none. */
static rf_status experts_and_top_k(reader *r, const family *f, const char *tk)
{
    rf_model *m = r->m;
    const char *ek = f->experts_key;
    rf_status s;
    if ((s = rf__hf_int_field(r, ek, f->experts ? OPTIONAL : REQUIRED, f->experts, 1, &m->n_experts,
                              NULL)) ||
        (s = rf__hf_int_field(r, tk, f->top_k ? OPTIONAL : REQUIRED, f->top_k, 1, &m->top_k, NULL)))
        return s;
    if (m->top_k > m->n_experts)
        return rf__hf_fail(r, RF_EINVAL, "%s (%lld) must not exceed %s (%lld)", tk,
                           (long long)m->top_k, ek, (long long)m->n_experts);
    return RF_OK;
}

/* One routed expert's width: the field, or the family's default. */
static rf_status expert_width(reader *r, const family *f)
{
    return rf__hf_int_field(r, "moe_intermediate_size", f->moe_ffn ? OPTIONAL : REQUIRED,
                            f->moe_ffn, 1, &r->m->moe_ffn, NULL);
}

static rf_status read_moe(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    if (f->moe == MOE_NONE)
        return RF_OK; /* the layouts read their own experts (read_layout) */
    const char *tk = "num_experts_per_tok";
    if (f->moe == MOE_GPT_OSS && !rf__hf_field(r, tk, false) &&
        rf__hf_field(r, "experts_per_token", false))
        tk = "experts_per_token";
    if ((s = experts_and_top_k(r, f, tk)))
        return s;
    switch (f->moe) {
    case MOE_MIXTRAL:
    case MOE_GPT_OSS:
        m->moe_ffn = m->ffn; /* intermediate_size is the expert's width */
        return RF_OK;
    case MOE_QWEN:
        if ((s = expert_width(r, f)) ||
            (s = rf__hf_int_field(r, "shared_expert_intermediate_size", NULL_IS_ZERO, f->shared_ffn,
                                  0, &m->shared_ffn, NULL)))
            return s;
        m->n_shared = m->shared_ffn ? 1 : 0;
        m->shared_expert_gate = m->n_shared > 0;
        return qwen_dense_layers(r);
    default: /* MOE_DEEPSEEK: shared experts as wide as a routed one each */
        if ((s = expert_width(r, f)) ||
            (s = rf__hf_int_field(r, "n_shared_experts", NULL_IS_ZERO, f->n_shared, 0, &m->n_shared,
                                  NULL)) ||
            (s = rf__hf_int_field(r, "first_k_dense_replace", OPTIONAL, f->first_dense, 0,
                                  &m->first_dense, NULL)) ||
            (s = rf__hf_int_field(r, "moe_layer_freq", OPTIONAL, 1, 1, &m->moe_freq, NULL)))
            return s;
        if (m->first_dense > m->layers)
            return rf__hf_fail(r, RF_EINVAL,
                               "first_k_dense_replace (%lld) exceeds num_hidden_layers (%lld)",
                               (long long)m->first_dense, (long long)m->layers);
        return RF_OK;
    }
}

/* Multi-token-prediction layers: resident, not streamed (rf_model.h). */
static rf_status read_mtp(reader *r, const family *f)
{
    int64_t n;
    rf_status s;
    if (f->mtp_key)
        return rf__hf_int_field(r, f->mtp_key, QUIET | NULL_IS_ZERO, 0, 0, &r->m->mtp_layers, NULL);
    /* MiniMax-M2's released checkpoints hold no MTP weights (228.7 B of
     * safetensors, the decoder alone) */
    if ((s = rf__hf_int_field(r, "num_mtp_modules", QUIET | NULL_IS_ZERO, 0, 0, &n, NULL)))
        return s;
    if (n)
        rf__hf_note(r->m, "num_mtp_modules (%lld) not counted: the checkpoint ships no MTP weights",
                    (long long)n);
    return RF_OK;
}

/* ---- MLA and sparse attention ----------------------------------------- */

static rf_status read_mla(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    if (!f->mla)
        return RF_OK;
    if ((s = rf__hf_int_field(r, "kv_lora_rank", OPTIONAL, 512, 1, &m->kv_lora_rank, NULL)) ||
        (s = rf__hf_int_field(r, "q_lora_rank", NULL_IS_ZERO, 1536, 0, &m->q_lora_rank, NULL)) ||
        (s = rf__hf_int_field(r, "qk_nope_head_dim", OPTIONAL, 128, 1, &m->qk_nope_dim, NULL)) ||
        (s = rf__hf_int_field(r, "qk_rope_head_dim", OPTIONAL, 64, 1, &m->qk_rope_dim, NULL)) ||
        (s = rf__hf_int_field(r, "v_head_dim", OPTIONAL, 128, 1, &m->v_head_dim, NULL)))
        return s;
    /* the width a query and a key share (transformers' qk_head_dim) */
    m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
    if (!f->dsa)
        return RF_OK;
    /* the lightning indexer: its heads, their width, the keys kept */
    return (s = rf__hf_int_field(r, "index_n_heads", REQUIRED, 0, 1, &m->index_heads, NULL)) ||
                   (s = rf__hf_int_field(r, "index_head_dim", REQUIRED, 0, 1, &m->index_head_dim,
                                         NULL)) ||
                   (s = rf__hf_int_field(r, "index_topk", REQUIRED, 0, 1, &m->index_topk, NULL))
               ? s
               : RF_OK;
}

/* ---- layer types and sliding windows ---------------------------------- */

/* layer_types: one entry a layer. Every family reads sliding_attention and
 * full_attention; linear_attention makes a Gated DeltaNet layer (LAY_GDN),
 * chunked_attention a chunked one (LAY_LLAMA4). */
static rf_status layer_types(reader *r, const family *f, const json_t *lt)
{
    rf_model *m = r->m;
    if (!json_is_array(lt))
        return rf__hf_fail(r, RF_EINVAL, "layer_types must be an array, not %s",
                           rf__hf_json_kind(lt));
    if ((int64_t)json_array_size(lt) != m->layers)
        return rf__hf_fail(r, RF_EINVAL,
                           "layer_types has %zu entries but num_hidden_layers is %lld",
                           json_array_size(lt), (long long)m->layers);
    for (size_t i = 0; i < json_array_size(lt); i++) {
        const char *t = json_string_value(json_array_get(lt, i));
        if (t && !strcmp(t, "sliding_attention"))
            m->sliding[i] = 1;
        else if (t && f->layout == LAY_GDN && !strcmp(t, "linear_attention"))
            m->mixer[i] = RF_MIX_GDN;
        else if (t && f->layout == LAY_LLAMA4 && !strcmp(t, "chunked_attention"))
            m->chunked[i] = 1;
        else if (!t || strcmp(t, "full_attention"))
            return rf__hf_fail(r, RF_EINVAL, "layer_types[%zu] (%s) is not modelled for %s: %s", i,
                               t ? t : "not a string", f->type,
                               f->layout == LAY_GDN      ? "linear_attention or full_attention"
                               : f->layout == LAY_LLAMA4 ? "chunked_attention or full_attention"
                                                         : "sliding_attention or full_attention");
    }
    return RF_OK;
}

static rf_status read_sliding(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    bool given, use;
    int64_t window = 0, every = 0, from = 0;
    /* every field is read, so checked, whenever present, even where this
     * family or use_sliding_window leaves it unused; a default is named
     * only where it is used */
    const json_t *lt = rf__hf_field(r, "layer_types", false);
    bool listed = lt && !json_is_null(lt);
    if ((s = rf__hf_int_field(r, "sliding_window", NULL_IS_ZERO | QUIET, f->window, 0, &window,
                              &given)) ||
        (s = rf__hf_bool_field(r, "use_sliding_window", false, false, &use, NULL)) ||
        (listed && (s = layer_types(r, f, lt))))
        return s;
    if (f->sliding != SW_QWEN)
        use = true; /* only qwen2/qwen3 families read the switch */
    if ((s = rf__hf_int_field(r, "sliding_window_pattern",
                              f->sliding == SW_PATTERN && use && !listed ? OPTIONAL : QUIET, 6, 1,
                              &every, NULL)) ||
        (s = rf__hf_int_field(r, "max_window_layers",
                              f->sliding == SW_QWEN && use && !listed ? OPTIONAL : QUIET,
                              f->max_window, 0, &from, NULL)))
        return s;
    if (!use) { /* transformers sets sliding_window to None */
        if (given && window)
            rf__hf_note(m, "sliding_window (%lld) ignored: use_sliding_window is false",
                        (long long)window);
        if (listed && memchr(m->sliding, 1, (size_t)m->layers))
            rf__hf_note(m, "layer_types' sliding layers ignored: use_sliding_window is false");
        memset(m->sliding, 0, sizeof m->sliding);
        return RF_OK;
    }
    if (!listed) {
        for (int64_t l = 0; l < m->layers && window; l++) {
            switch (f->sliding) {
            case SW_ALL:
                m->sliding[l] = 1;
                break;
            case SW_QWEN:
                m->sliding[l] = l >= from;
                break;
            case SW_ALTERNATE:
                m->sliding[l] = l % 2 == 0;
                break;
            case SW_PATTERN:
                m->sliding[l] = (l + 1) % every != 0;
                break;
            default:
                break;
            }
        }
        if (f->sliding == SW_NONE && given && window && f->layout != LAY_MIMO)
            rf__hf_note(
                m, "sliding_window (%lld) ignored: %s names no sliding layers (no layer_types)",
                (long long)window, f->type);
    }
    bool any = false;
    for (int64_t l = 0; l < m->layers; l++)
        any = any || m->sliding[l];
    if (any && !window)
        return rf__hf_fail(r, RF_EINVAL,
                           "layer_types names sliding layers but sliding_window is null");
    m->window = any ? window : 0;
    if (!any)
        memset(m->sliding, 0, sizeof m->sliding);
    else if (!given)
        rf__hf_note(m, "sliding_window absent: %s default %lld", f->type, (long long)window);
    return RF_OK;
}

/* ---- the layouts of the 2025-26 families ------------------------------ */

/* mamba_ssm_cache_dtype / mamba_ssm_dtype: the recurrent state's dtype; 0
 * when absent (the weights' dtype, set once that is read). */
static rf_status state_dtype_field(reader *r)
{
    static const char *const keys[] = {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *t;
        rf_status s = rf__hf_str_field(r, r->cfg, keys[i], &t);
        if (s)
            return s;
        if (!t)
            continue;
        rf_dtype_kind k;
        if (!strcmp(t, "float32"))
            k = RF_FP32;
        else if (!strcmp(t, "bfloat16"))
            k = RF_BF16;
        else if (!strcmp(t, "float16"))
            k = RF_FP16;
        else
            return rf__hf_fail(r, RF_EINVAL, "%s (%s) is not read: float32, bfloat16 or float16",
                               keys[i], t);
        r->m->state_dtype = rf_dtype_of(k);
        r->m->has_state_dtype = true;
        return RF_OK;
    }
    return RF_OK;
}

/* Qwen3-Next, Qwen3.5/3.6: layer_types (read with the windows), or one full
 * attention layer every full_attention_interval; Gated DeltaNet elsewhere;
 * the attention's q_proj also emits a sigmoid output gate. */
static rf_status read_gdn(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    const json_t *lt = rf__hf_field(r, "layer_types", false);
    int64_t every;
    if ((s = rf__hf_int_field(r, "full_attention_interval",
                              lt && !json_is_null(lt) ? QUIET : OPTIONAL, 4, 1, &every, NULL)))
        return s;
    if (!lt || json_is_null(lt))
        for (int64_t l = 0; l < m->layers; l++)
            m->mixer[l] = (l + 1) % every ? RF_MIX_GDN : RF_MIX_ATTN;
    bool gate = true;
    if ((s = rf__hf_int_field(r, "linear_num_key_heads", OPTIONAL, 16, 1, &m->gdn_k_heads, NULL)) ||
        (s = rf__hf_int_field(r, "linear_num_value_heads", OPTIONAL, 32, 1, &m->gdn_v_heads,
                              NULL)) ||
        (s = rf__hf_int_field(r, "linear_key_head_dim", OPTIONAL, 128, 1, &m->gdn_k_dim, NULL)) ||
        (s = rf__hf_int_field(r, "linear_value_head_dim", OPTIONAL, 128, 1, &m->gdn_v_dim, NULL)) ||
        (s = rf__hf_int_field(r, "linear_conv_kernel_dim", OPTIONAL, 4, 1, &m->gdn_conv, NULL)) ||
        (s = rf__hf_bool_field(r, "attn_output_gate", false, true, &gate, NULL)))
        return s;
    if (m->gdn_v_heads % m->gdn_k_heads)
        return rf__hf_fail(r, RF_EINVAL,
                           "linear_num_key_heads (%lld) must divide linear_num_value_heads (%lld)",
                           (long long)m->gdn_k_heads, (long long)m->gdn_v_heads);
    m->attn_out_gate = gate;
    (void)f;
    return state_dtype_field(r);
}

/* Llama-4: intermediate_size is an expert's width (and the shared
 * expert's), intermediate_size_mlp the dense layers'; MoE on the layers of
 * moe_layers, else on every interleave_moe_layer_step-th ((l + 1) % step
 * == 0); layers with RoPE (no_rope_layers[l] = 1) attend within their
 * chunk of attention_chunk_size, the NoPE ones globally. */
static rf_status read_llama4(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    int64_t step, every;
    m->moe_ffn = m->ffn;
    m->n_shared = 1;
    m->shared_ffn = m->moe_ffn;
    if ((s = experts_and_top_k(r, f, "num_experts_per_tok")) ||
        (s = rf__hf_int_field(r, "intermediate_size_mlp", OPTIONAL, 16384, 1, &m->ffn, NULL)) ||
        (s = rf__hf_int_field(r, "interleave_moe_layer_step", OPTIONAL, 1, 1, &step, NULL)) ||
        (s = rf__hf_int_field(r, "attention_chunk_size", NULL_IS_ZERO, 8192, 0, &m->attn_chunk,
                              NULL)) ||
        (s = rf__hf_int_field(r, "no_rope_layer_interval", QUIET, 4, 1, &every, NULL)))
        return s;
    const json_t *ml = rf__hf_field(r, "moe_layers", false);
    for (int64_t l = 0; l < m->layers; l++)
        m->dense_mlp[l] = (l + 1) % step != 0;
    if (ml && !json_is_null(ml)) {
        if (!json_is_array(ml))
            return rf__hf_fail(r, RF_EINVAL, "moe_layers must be an array, not %s",
                               rf__hf_json_kind(ml));
        memset(m->dense_mlp, 1, (size_t)m->layers);
        for (size_t i = 0; i < json_array_size(ml); i++) {
            const json_t *v = json_array_get(ml, i);
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) >= m->layers)
                return rf__hf_fail(r, RF_EINVAL,
                                   "moe_layers[%zu] must be a layer index in [0, %lld)", i,
                                   (long long)m->layers);
            m->dense_mlp[json_integer_value(v)] = 0;
        }
    }
    /* no_rope_layers: 1 = RoPE (chunked), 0 = NoPE (global); absent or
     * empty: every no_rope_layer_interval-th layer is NoPE (transformers) */
    const json_t *nr = rf__hf_field(r, "no_rope_layers", false);
    uint8_t rope[RF_MODEL_MAX_LAYERS];
    if (nr && !json_is_null(nr) && !(json_is_array(nr) && json_array_size(nr) == 0)) {
        if ((s = layer_flags(r, "no_rope_layers", nr, rope)))
            return s;
    } else {
        for (int64_t l = 0; l < m->layers; l++)
            rope[l] = (l + 1) % every != 0;
    }
    bool typed = false; /* layer_types, when given, already placed the chunks */
    for (int64_t l = 0; l < m->layers; l++)
        typed = typed || m->chunked[l];
    for (int64_t l = 0; l < m->layers && m->attn_chunk && !typed; l++)
        m->chunked[l] = rope[l];
    if (!m->attn_chunk)
        memset(m->chunked, 0, sizeof m->chunked);
    return RF_OK;
}

/* Nemotron-H / Nemotron-3: one character a layer (rf_model.h): M Mamba2,
 * '*' attention, '-' MLP, E MoE; or layers_block_type spelled out. */
static rf_status nemotron_pattern(reader *r)
{
    rf_model *m = r->m;
    const json_t *p = rf__hf_field(r, "hybrid_override_pattern", false);
    const json_t *bt = rf__hf_field(r, "layers_block_type", false);
    const char *key = p && !json_is_null(p) ? "hybrid_override_pattern" : "layers_block_type";
    const json_t *v = p && !json_is_null(p) ? p : bt;
    size_t n;
    if (!v || json_is_null(v))
        return rf__hf_fail(r, RF_EINVAL,
                           "hybrid_override_pattern is missing (required: the kind of each layer)");
    if (json_is_string(v))
        n = json_string_length(v);
    else if (json_is_array(v))
        n = json_array_size(v);
    else
        return rf__hf_fail(r, RF_EINVAL, "%s must be a string, not %s", key, rf__hf_json_kind(v));
    if ((int64_t)n != m->layers)
        return rf__hf_fail(r, RF_EINVAL, "%s has %zu layers but num_hidden_layers is %lld", key, n,
                           (long long)m->layers);
    for (size_t l = 0; l < n; l++) {
        char c;
        if (json_is_string(v)) {
            c = json_string_value(v)[l];
        } else {
            const char *t = json_string_value(json_array_get(v, l));
            c = !t                        ? '?'
                : !strcmp(t, "mamba")     ? 'M'
                : !strcmp(t, "attention") ? '*'
                : !strcmp(t, "mlp")       ? '-'
                : !strcmp(t, "moe")       ? 'E'
                                          : '?';
        }
        switch (c) {
        case 'M':
            m->mixer[l] = RF_MIX_MAMBA2;
            m->no_ffn[l] = 1;
            break;
        case '*':
            m->no_ffn[l] = 1;
            break;
        case '-':
            m->mixer[l] = RF_MIX_NONE;
            m->dense_mlp[l] = 1;
            break;
        case 'E':
            m->mixer[l] = RF_MIX_NONE;
            break;
        default:
            return rf__hf_fail(r, RF_EINVAL,
                               "%s[%zu] is not a layer kind: M (Mamba2), * (attention), - (MLP) or "
                               "E (MoE)",
                               key, l);
        }
    }
    return RF_OK;
}

static rf_status read_nemotron(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    if ((s = nemotron_pattern(r)))
        return s;
    const json_t *latent = rf__hf_field(r, "moe_latent_size", false);
    if (latent && !json_is_null(latent))
        return rf__hf_fail(r, RF_EINVAL,
                           "moe_latent_size: latent MoE projections (Nemotron-3 Super) are not "
                           "modelled");
    m->ffn_ungated = true; /* squared-ReLU MLPs and experts: up, down */
    if ((s = rf__hf_int_field(r, "mamba_num_heads", REQUIRED, 0, 1, &m->ssm_heads, NULL)) ||
        (s = rf__hf_int_field(r, "mamba_head_dim", REQUIRED, 0, 1, &m->ssm_head_dim, NULL)) ||
        (s = rf__hf_int_field(r, "ssm_state_size", REQUIRED, 0, 1, &m->ssm_state, NULL)) ||
        (s = rf__hf_int_field(r, "n_groups", REQUIRED, 0, 1, &m->ssm_groups, NULL)) ||
        (s = rf__hf_int_field(r, "conv_kernel", OPTIONAL, 4, 1, &m->ssm_conv, NULL)) ||
        (s = rf__hf_int_field(r, "chunk_size", QUIET, 0, 1, &m->ssm_chunk, NULL)))
        return s;
    if (m->ssm_heads % m->ssm_groups)
        return rf__hf_fail(r, RF_EINVAL, "n_groups (%lld) must divide mamba_num_heads (%lld)",
                           (long long)m->ssm_groups, (long long)m->ssm_heads);
    bool moe = false;
    for (int64_t l = 0; l < m->layers; l++)
        moe = moe || (m->mixer[l] == RF_MIX_NONE && !m->dense_mlp[l]);
    if (!moe) {
        memset(m->dense_mlp, 0, sizeof m->dense_mlp); /* a dense model: every MLP is dense */
        return state_dtype_field(r);
    }
    if ((s = experts_and_top_k(r, f, "num_experts_per_tok")) || (s = expert_width(r, f)) ||
        (s = rf__hf_int_field(r, "n_shared_experts", NULL_IS_ZERO, 0, 0, &m->n_shared, NULL)) ||
        (s = rf__hf_int_field(r, "moe_shared_expert_intermediate_size", NULL_IS_ZERO | QUIET, 0, 0,
                              &m->shared_ffn, NULL)))
        return s;
    return state_dtype_field(r);
}

/* MiMo-V2-Flash: hybrid_layer_pattern (1 = sliding) with the sliding
 * layers' own heads (swa_*), V narrower than K (v_head_dim), MoE on the
 * layers moe_layer_freq sets. */
static rf_status read_mimo(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    const json_t *p = rf__hf_field(r, "hybrid_layer_pattern", false);
    const json_t *freq = rf__hf_field(r, "moe_layer_freq", false);
    if (!p || !freq)
        return rf__hf_fail(r, RF_EINVAL, "%s is missing (required: one 0/1 entry a layer)",
                           p ? "moe_layer_freq" : "hybrid_layer_pattern");
    uint8_t moe[RF_MODEL_MAX_LAYERS];
    if ((s = layer_flags(r, "hybrid_layer_pattern", p, m->sliding)) ||
        (s = layer_flags(r, "moe_layer_freq", freq, moe)))
        return s;
    for (int64_t l = 0; l < m->layers; l++)
        m->dense_mlp[l] = !moe[l];
    int64_t window;
    if ((s = rf__hf_int_field(r, "sliding_window_size", QUIET, 0, 1, &window, NULL)))
        return s;
    if (window)
        m->window = window;
    if (memchr(m->sliding, 1, (size_t)m->layers) && !m->window)
        return rf__hf_fail(
            r, RF_EINVAL,
            "hybrid_layer_pattern names sliding layers but sliding_window is missing");
    if ((s = rf__hf_int_field(r, "v_head_dim", REQUIRED, 0, 1, &m->attn_v_dim, NULL)) ||
        (s = rf__hf_int_field(r, "swa_num_attention_heads", OPTIONAL, m->n_q, 1, &m->local_n_q,
                              NULL)) ||
        (s = rf__hf_int_field(r, "swa_num_key_value_heads", REQUIRED, 0, 1, &m->local_n_kv,
                              NULL)) ||
        (s = rf__hf_int_field(r, "swa_head_dim", OPTIONAL, m->head_dim, 1, &m->local_head_dim,
                              NULL)) ||
        (s = rf__hf_int_field(r, "swa_v_head_dim", OPTIONAL, m->attn_v_dim, 1, &m->local_v_dim,
                              NULL)))
        return s;
    if (m->local_n_q % m->local_n_kv)
        return rf__hf_fail(
            r, RF_EINVAL,
            "swa_num_key_value_heads (%lld) must divide swa_num_attention_heads (%lld)",
            (long long)m->local_n_kv, (long long)m->local_n_q);
    if (!memchr(moe, 1, (size_t)m->layers))
        return RF_OK;
    return (s = experts_and_top_k(r, f, "num_experts_per_tok")) || (s = expert_width(r, f)) ||
                   (s = rf__hf_int_field(r, "n_shared_experts", NULL_IS_ZERO, 0, 0, &m->n_shared,
                                         NULL))
               ? s
               : RF_OK;
}

/* gemma-4: sliding layers use num_key_value_heads and head_dim, global
 * layers num_global_key_value_heads and global_head_dim (K = V there with
 * attention_k_eq_v); enable_moe_block runs a MoE beside the dense MLP. */
static rf_status read_gemma4(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    int64_t shared_kv, per_layer;
    bool moe;
    if ((s = rf__hf_int_field(r, "num_kv_shared_layers", QUIET | NULL_IS_ZERO, 0, 0, &shared_kv,
                              NULL)) ||
        (s = rf__hf_int_field(r, "hidden_size_per_layer_input", QUIET | NULL_IS_ZERO, 0, 0,
                              &per_layer, NULL)))
        return s;
    if (shared_kv)
        return rf__hf_fail(r, RF_EINVAL,
                           "num_kv_shared_layers (%lld): layers that reuse another layer's KV are "
                           "not modelled",
                           (long long)shared_kv);
    if (per_layer)
        return rf__hf_fail(r, RF_EINVAL,
                           "hidden_size_per_layer_input (%lld): per-layer embeddings are not "
                           "modelled",
                           (long long)per_layer);
    m->local_n_kv = m->n_kv;
    m->local_head_dim = m->head_dim;
    if ((s = rf__hf_int_field(r, "num_global_key_value_heads", OPTIONAL | NULL_IS_ZERO, m->n_kv, 0,
                              &m->n_kv, NULL)) ||
        (s = rf__hf_int_field(r, "global_head_dim", REQUIRED, 0, 1, &m->head_dim, NULL)) ||
        (s = rf__hf_bool_field(r, "attention_k_eq_v", false, false, &m->k_eq_v, NULL)) ||
        (s = rf__hf_bool_field(r, "enable_moe_block", false, false, &moe, NULL)))
        return s;
    if (!m->n_kv)
        m->n_kv = m->local_n_kv;
    if (m->n_q % m->n_kv)
        return rf__hf_fail(
            r, RF_EINVAL,
            "num_global_key_value_heads (%lld) must divide num_attention_heads (%lld)",
            (long long)m->n_kv, (long long)m->n_q);
    if (!moe)
        return RF_OK;
    m->moe_and_dense = true;
    return (s = experts_and_top_k(r, f, "top_k_experts")) || (s = expert_width(r, f)) ? s : RF_OK;
}

static rf_status read_layout(reader *r, const family *f)
{
    switch (f->layout) {
    case LAY_GDN:
        return read_gdn(r, f);
    case LAY_LLAMA4:
        return read_llama4(r, f);
    case LAY_NEMOTRON:
        return read_nemotron(r, f);
    case LAY_MIMO:
        return read_mimo(r, f);
    case LAY_GEMMA4:
        return read_gemma4(r, f);
    default:
        return RF_OK;
    }
}

/* Fields that change the shapes of a plain family but that it does not
 * read: refused rather than analysed wrongly. */
static rf_status refuse_unread(reader *r, const family *f)
{
    const json_t *v = rf__hf_field(r, "attn_type_list", false);
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
        if (json_integer_value(json_array_get(v, i)) != 1)
            return rf__hf_fail(r, RF_EINVAL,
                               "attn_type_list[%zu]: lightning (linear) attention layers are not "
                               "modelled",
                               i);
    if (f->moe == MOE_NONE && f->layout == LAY_PLAIN) {
        static const char *const keys[] = {"num_local_experts", "num_experts", "n_routed_experts"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            const json_t *e = rf__hf_field(r, keys[i], false);
            if (e && json_is_integer(e) && json_integer_value(e) > 0)
                rf__hf_note(r->m, "%s (%lld) ignored: the family's expert layout is not known",
                            keys[i], (long long)json_integer_value(e));
        }
    }
    return RF_OK;
}

/* The model's name: the file's stem, or the folder of a config.json. */
static void name_from(const char *origin, char *out, size_t cap)
{
    const char *end = origin + strlen(origin);
    while (end > origin && end[-1] == '/')
        end--;
    const char *start = end;
    while (start > origin && start[-1] != '/')
        start--;
    if (end - start == 11 && !strncmp(start, "config.json", 11) && start > origin) {
        end = start - 1;
        while (end > origin && end[-1] == '/')
            end--;
        start = end;
        while (start > origin && start[-1] != '/')
            start--;
    } else if (end - start > 5 && !strncmp(end - 5, ".json", 5)) {
        end -= 5;
    }
    size_t n = (size_t)(end - start);
    if (!n) {
        start = "config";
        n = 6;
    }
    if (n >= cap)
        n = cap - 1;
    memcpy(out, start, n);
    out[n] = '\0';
}

/* The decoder's object and its model_type: the root, or the text_config
 * (llm_config) of a multimodal wrapper, whose family comes from the
 * wrapper when the nested object names none. */
static rf_status find_decoder(reader *r, const char **type)
{
    rf_status s;
    const char *outer;
    *type = NULL;
    if ((s = rf__hf_str_field(r, r->top, "model_type", &outer)))
        return s;
    const json_t *text = json_object_get(r->top, "text_config");
    if (!json_is_object(text))
        text = json_object_get(r->top, "llm_config");
    if (!json_is_object(text) || json_object_get(r->top, "hidden_size")) {
        *type = outer;
        return RF_OK;
    }
    r->cfg = text;
    if ((s = rf__hf_str_field(r, r->cfg, "model_type", type)))
        return s;
    if (!*type || !find_family(*type))
        *type = outer; /* the wrapper's family (find_family) */
    rf__hf_note(r->m, "%s of %s read: only the text decoder is counted (the vision tower is not)",
                json_object_get(r->top, "text_config") == text ? "text_config" : "llm_config",
                outer ? outer : "a multimodal model");
    return RF_OK;
}

/* The family of model_type, else of architectures[0] (a derivative that
 * runs on a known class), else the forced one (--family), else refused. */
static rf_status pick_family(reader *r, const char *type, const rf_read_opts *ro,
                             const family **out)
{
    rf_model *m = r->m;
    const char *shown = type ? type : "(absent)";
    const family *f = find_family(type);
    if (ro && ro->family) {
        const family *forced = find_family(ro->family);
        if (!forced)
            return rf_err_set(r->err, RF_EINVAL, "--family %s is not a known family (known: %s)",
                              ro->family, rf_model_known_families());
        /* family_forced_from, not a note: every output says it once, in
         * its own words (the CLI's "family:" assumption) */
        snprintf(m->family_forced_from, sizeof m->family_forced_from, "%s", shown);
        *out = forced;
        return RF_OK;
    }
    if (f) {
        *out = f;
        return RF_OK;
    }
    for (size_t i = 0; type && i < sizeof refused / sizeof refused[0]; i++)
        if (!strcmp(type, refused[i].type))
            return rf__hf_fail(r, RF_EINVAL, "model_type %s is refused: %s", type, refused[i].why);
    const json_t *archs = rf__hf_field(r, "architectures", true);
    const char *arch = json_string_value(json_array_get(archs, 0));
    for (size_t i = 0; arch && i < sizeof arch_families / sizeof arch_families[0]; i++)
        if (!strcmp(arch, arch_families[i].arch)) {
            *out = find_family(arch_families[i].type);
            rf__hf_note(m, "model_type %s read as %s (architectures: %s)", shown, (*out)->type,
                        arch);
            return RF_OK;
        }
    return rf__hf_fail(r, RF_EINVAL,
                       "model_type %s is not a known family (known: %s); --family NAME reads it "
                       "as one",
                       shown, rf_model_known_families());
}

static rf_status read_model(reader *r, const rf_read_opts *ro)
{
    rf_model *m = r->m;
    rf_status s;
    const char *type = NULL;
    const family *f = NULL;
    if ((s = find_decoder(r, &type)) || (s = pick_family(r, type, ro, &f)))
        return s;
    snprintf(m->family, sizeof m->family, "%s", f->type);
    if ((s = read_shapes(r, f)) || (s = read_biases(r, f)) || (s = read_mla(r, f)) ||
        (s = read_moe(r, f)) || (s = read_sliding(r, f)) || (s = read_layout(r, f)) ||
        (s = read_mtp(r, f)) || (s = refuse_unread(r, f)))
        return s;
    if (r->defaulted[0])
        rf__hf_note(m, "absent, %s defaults: %s", f->type, r->defaulted);
    if ((s = rf__hf_read_dtype(r)) || (s = rf__hf_read_quant(r)))
        return s;
    bool stateful = false;
    for (int64_t l = 0; l < m->layers; l++)
        stateful = stateful || m->mixer[l] == RF_MIX_GDN || m->mixer[l] == RF_MIX_MAMBA2;
    if (stateful && !m->has_state_dtype) {
        m->state_dtype = m->unquantized_dtype;
        m->has_state_dtype = true;
        rf__hf_note(m, "recurrent state in the weights' dtype (%s): no mamba_ssm_cache_dtype",
                    rf_dtype_name(m->state_dtype.kind));
    }
    return RF_OK;
}

/* The whole file; dir, when the text came from a file, is its folder,
 * where the sidecars (hf_quant_config.json) lie. */
static rf_status parse_in(const char *text, size_t len, const char *origin, const rf_read_opts *ro,
                          const char *dir, rf_model *out, rf_err *err)
{
    static const rf_model zero;
    rf_model m = zero;
    reader r = {.origin = origin ? origin : "config.json", .m = &m, .err = err};
    json_t *root = NULL;
    size_t nonfinite = 0;
    rf_status s = rf__json_parse_nonfinite(text, len, r.origin, &root, &nonfinite, err);
    if (s)
        goto out;
    if (!json_is_object(root)) {
        s = rf__hf_fail(&r, RF_EINVAL, "not a JSON object");
        goto out;
    }
    r.top = r.cfg = root;
    name_from(r.origin, m.name, sizeof m.name);
    if (nonfinite)
        rf__hf_note(&m, "%zu bare Infinity/NaN value%s (not JSON) read as null", nonfinite,
                    nonfinite == 1 ? "" : "s");
    if ((s = read_model(&r, ro)) || (dir && (s = rf__hf_read_sidecars(&r, dir))))
        goto out;
    if ((s = rf_model_validate(&m, err))) {
        s = rf_err_prefix(err, s, "%s", r.origin);
        goto out;
    }
    *out = m;
out:
    json_decref(root);
    return s;
}

rf_status rf_model_parse_opts(const char *text, size_t len, const char *origin,
                              const rf_read_opts *ro, rf_model *out, rf_err *err)
{
    return parse_in(text, len, origin, ro, NULL, out, err);
}

rf_status rf_model_parse(const char *text, size_t len, const char *origin, rf_model *out,
                         rf_err *err)
{
    return parse_in(text, len, origin, NULL, NULL, out, err);
}

rf_status rf_model_load_opts(const char *path, const rf_read_opts *ro, rf_model *out, rf_err *err)
{
    char buf[4096], dir[4096];
    struct stat st;
    const char *file = path;
    if (!path)
        return rf_err_set(err, RF_EINVAL, "no config path given");
    size_t n = strlen(path);
    if (n + sizeof "/config.json" > sizeof buf)
        return rf_err_set(err, RF_EINVAL, "%s: path too long", path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, sizeof buf, "%s%sconfig.json", path, n && path[n - 1] == '/' ? "" : "/");
        file = buf;
    }
    /* the folder of the file, where its sidecars lie */
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir] = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    char *text = NULL;
    size_t len = 0;
    rf_status s = rf_file_read_all(file, RF_FILE_MAX_BYTES, &text, &len, err);
    if (s == RF_OK)
        s = parse_in(text, len, file, ro, dir, out, err);
    free(text);
    return s;
}

rf_status rf_model_load(const char *path, rf_model *out, rf_err *err)
{
    return rf_model_load_opts(path, NULL, out, err);
}
