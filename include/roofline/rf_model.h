/* rf_model.h - a decoder-only transformer described by its shapes.
 *
 * One struct covers the families in use; fields that a family does not have
 * stay 0. Per layer (docs/accounting.md, dense Llama/Qwen2/Mistral shapes):
 *   q_proj  H -> n_q d_h      k_proj, v_proj  H -> n_kv d_h
 *   o_proj  n_q d_h -> H      gate_proj, up_proj  H -> F_ff
 *   down_proj  F_ff -> H      attention
 * per model: lm_head H -> V and the embedding gather (one row per token).
 *
 * MoE layers (n_experts > 0) replace the MLP with a router H -> E, n_shared
 * shared experts and E routed experts of width moe_ffn; the first
 * first_dense layers (and layers not on the moe_freq stride) stay dense.
 * MLA (kv_lora_rank > 0) replaces q/k/v with low-rank projections and caches
 * a latent of kv_lora_rank + qk_rope_dim elements per token per layer.
 * Sliding-window layers (window > 0 and sliding[l] set) keep at most window
 * positions of KV.
 *
 * Quantization: a checkpoint may store some module classes (rf_module) in
 * weight_dtype and leave others (usually the embedding, the lm_head, the
 * router) in unquantized_dtype; unquantized_modules says which. A step
 * applies that split unless the user overrides the weights dtype, which then
 * applies to every module (rf_step_opts.w_all_modules).
 */
#ifndef RF_MODEL_H
#define RF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_dtype.h"
#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_MODEL_MAX_LAYERS 1024
#define RF_MODEL_NAME_MAX 96
/* Largest max_position_embeddings accepted (2^24 = 16,777,216 positions:
 * above every released model's, e.g. Llama 4 Scout's 10,485,760). */
#define RF_MODEL_MAX_CONTEXT ((int64_t)1 << 24)

/* Classes of weight matrices, for per-module dtypes and parameter counts. */
typedef enum rf_module {
    RF_MOD_ATTN = 0, /* q/k/v/o projections (MLA: its low-rank projections) */
    RF_MOD_MLP,      /* dense MLP: gate, up, down                          */
    RF_MOD_ROUTER,   /* MoE router (and qwen2_moe's shared-expert gate)    */
    RF_MOD_SHARED,   /* shared experts                                     */
    RF_MOD_EXPERTS,  /* routed experts                                     */
    RF_MOD_LM_HEAD,  /* lm_head (the embedding matrix when tied)           */
    RF_MOD_EMBED,    /* input embedding (a gather)                         */
    RF_MOD_MIXER,    /* linear-attention and state-space projections (Gated
                        DeltaNet, Mamba2: in_proj, out_proj, conv weights)  */
    RF_MOD_INDEXER,  /* DeepSeek sparse attention's lightning indexer       */
    RF_MOD_COUNT
} rf_module;

#define RF_MOD_BIT(mod) (1u << (mod))

/* The token mixer of one layer (rf_model.mixer[l]). */
typedef enum rf_mixer {
    RF_MIX_ATTN = 0, /* softmax attention (every layer of a plain decoder)   */
    RF_MIX_GDN,      /* Gated DeltaNet linear attention (Qwen3-Next, 3.5)    */
    RF_MIX_MAMBA2,   /* Mamba2 state-space block (Nemotron-H)                */
    RF_MIX_NONE      /* no mixer: an MLP or MoE block alone (Nemotron-H)     */
} rf_mixer;

typedef struct rf_model {
    char name[RF_MODEL_NAME_MAX]; /* preset name or config path             */
    char family[32];              /* model_type: "llama", "qwen2", ...       */
    int64_t hidden;               /* H                                                 */
    int64_t layers;               /* L                                                 */
    int64_t n_q;                  /* query heads                                       */
    int64_t n_kv;                 /* KV heads                                          */
    int64_t head_dim;             /* d_h                                               */
    int64_t ffn;                  /* F_ff: dense MLP intermediate size                 */
    int64_t vocab;                /* V                                                 */
    bool tied;                    /* lm_head streams the embedding matrix              */
    int64_t max_context;          /* positions the model was built for
                           (max_position_embeddings, or the family's
                           default, named in notes); 0 = unknown: the config
                           gave none and its family has no default          */

    /* MoE: 0 experts = dense model */
    int64_t n_experts;       /* E routed experts per MoE layer                    */
    int64_t top_k;           /* k experts per token                               */
    int64_t n_shared;        /* shared experts (always run)                       */
    int64_t moe_ffn;         /* intermediate size of one routed expert            */
    int64_t shared_ffn;      /* intermediate size of one shared expert (0 = moe_ffn) */
    int64_t first_dense;     /* layers before the first MoE layer                 */
    int64_t moe_freq;        /* layer l >= first_dense is MoE when l % moe_freq == 0
                           (DeepSeek's moe_layer_freq; 0 or 1 = all)           */
    bool shared_expert_gate; /* qwen2_moe: a sigmoid gate H -> 1 per MoE layer,
                                counted with the router                      */
    uint8_t dense_mlp[RF_MODEL_MAX_LAYERS]; /* 1 = layer l keeps a dense MLP
                                (qwen*_moe mlp_only_layers, decoder_sparse_step) */

    /* MLA: kv_lora_rank 0 = standard attention */
    int64_t q_lora_rank;  /* 0 = plain q_proj H -> n_q (nope + rope)         */
    int64_t kv_lora_rank; /* latent width c_kv                               */
    int64_t qk_nope_dim;  /* per-head non-rotary q/k width                   */
    int64_t qk_rope_dim;  /* per-head rotary width (shared k_rope)           */
    int64_t v_head_dim;   /* per-head v width                                */

    /* Sliding windows */
    int64_t window;                       /* positions kept by a sliding layer; 0 = none     */
    uint8_t sliding[RF_MODEL_MAX_LAYERS]; /* 1 = layer l uses the window     */

    /* Biases (counted only in the full traffic model) */
    bool qkv_bias;
    bool o_bias;
    bool mlp_bias;

    /* Dtype the checkpoint stores its weights in (torch_dtype or the
     * quantization_config); the step uses it unless the user overrides. */
    rf_dtype weight_dtype;
    bool has_weight_dtype;
    /* Modules a quantization_config leaves out (RF_MOD_BIT mask) stay in
     * unquantized_dtype (the torch_dtype); 0 = every module in weight_dtype. */
    uint32_t unquantized_modules;
    rf_dtype unquantized_dtype;
    /* Activations: W8A8 checkpoints (fp8 with an activation_scheme) compute
     * in fp8, which selects the fp8 peak; otherwise bf16. */
    rf_dtype act_dtype;
    bool has_act_dtype;

    /* ---- 2025-26 architectures (all 0 for the families above) -------- */

    /* Hybrid stacks: the mixer of each layer (rf_mixer; 0 = attention) and
     * the layers without an MLP or MoE (Nemotron-H's Mamba and attention
     * blocks). Sliding and chunked flags apply to attention layers only. */
    uint8_t mixer[RF_MODEL_MAX_LAYERS];
    uint8_t no_ffn[RF_MODEL_MAX_LAYERS];
    bool moe_and_dense; /* the dense MLP runs beside the MoE on MoE layers
                           (gemma-4)                                          */
    bool ffn_ungated;   /* MLPs and experts are up -> act -> down, no gate
                           (Nemotron-H's squared ReLU): 2 matrices, not 3    */

    /* Attention shapes beyond n_q, n_kv, head_dim */
    int64_t attn_v_dim; /* V head width when not head_dim (MiMo); 0 = d_h  */
    bool attn_out_gate; /* q_proj also emits a sigmoid output gate of n_q d_h
                             (Qwen3-Next's gated attention)                 */
    bool k_eq_v;        /* global layers: V is K (one projection, one cached
                             tensor; gemma-4 attention_k_eq_v)               */
    /* Local layers (sliding or chunked) with their own head shapes; 0 = the
     * global ones (gemma-4, MiMo-V2-Flash). A local layer's V width is
     * local_v_dim, else local_head_dim when that is set, else the global V
     * width (rf_model_attn_shape). */
    int64_t local_n_q, local_n_kv, local_head_dim, local_v_dim;
    /* Chunked local attention (Llama-4): a layer with chunked[l] attends only
     * to the positions of its own chunk of attn_chunk */
    int64_t attn_chunk;
    uint8_t chunked[RF_MODEL_MAX_LAYERS];

    /* Gated DeltaNet (RF_MIX_GDN layers): key/value heads and widths, the
     * short convolution's kernel */
    int64_t gdn_k_heads, gdn_v_heads, gdn_k_dim, gdn_v_dim, gdn_conv;
    /* Mamba2 (RF_MIX_MAMBA2 layers): heads, head width, state size, groups,
     * convolution kernel */
    int64_t ssm_heads, ssm_head_dim, ssm_state, ssm_groups, ssm_conv;
    /* Mamba2's SSD chunk in prefill (config chunk_size); 0 = 256, the
     * Mamba2 default (RF_SSM_CHUNK_DEFAULT) */
    int64_t ssm_chunk;
    /* dtype of the recurrent state kept per sequence (GDN, Mamba2): the
     * temporal state (GDN's Vh x dk x dv, Mamba2's heads x head_dim x
     * d_state); without has_state_dtype it is bf16, the model dtype, which is
     * vLLM's "auto" for both mamba_cache_dtype and mamba_ssm_cache_dtype. The
     * short convolution's state is always the model dtype, bf16 (vLLM's
     * conv state dtype under "auto"). */
    rf_dtype state_dtype;
    bool has_state_dtype;

    /* DeepSeek sparse attention (index_topk > 0, on every MLA layer): the
     * indexer's heads and head width, keys kept per query, its key cache's
     * dtype (without has_index_dtype: fp8 e4m3 with one 4-byte fp32 scale per
     * 128 elements, index_head_dim + 4 index_head_dim / 128 bytes a token, as
     * vLLM and SGLang store it) */
    int64_t index_heads, index_head_dim, index_topk;
    rf_dtype index_dtype;
    bool has_index_dtype;

    /* Multi-token-prediction layers (num_nextn_predict_layers): resident
     * weights, not in the per-token stream; the draft of --draft mtp */
    int64_t mtp_layers;

    /* Per-layer quantization exclusions: RF_MOD_BIT(mod) set in
     * unquantized_layer[l] keeps that module of layer l in unquantized_dtype
     * (in addition to unquantized_modules, which applies to every layer);
     * MTP layer i's entry is unquantized_layer[layers + i] */
    uint16_t unquantized_layer[RF_MODEL_MAX_LAYERS];

    /* Read as a named family (--family): family holds that name and
     * model_type what the file said; empty when the family was recognised */
    char family_forced_from[32];

    char notes[1024]; /* assumptions applied while reading, for output   */
} rf_model;

/* Built-in presets (from the real config.json files in
 * tests/data/models/), in a stable order. */
size_t rf_model_preset_count(void);
const rf_model *rf_model_preset_at(size_t i);
rf_status rf_model_preset(const char *name, rf_model *out, rf_err *err);

/* Check every field: positive dimensions within RF_DIM_MAX, n_kv divides
 * n_q, layers + mtp_layers <= RF_MODEL_MAX_LAYERS, top_k <= n_experts,
 * max_context 0 or in [1, RF_MODEL_MAX_CONTEXT], ... The message names the
 * field. */
rf_status rf_model_validate(const rf_model *m, rf_err *err);

/* Dtype of one module class: w for every module when all_modules is true
 * (a user override), else w for quantized modules and unquantized_dtype for
 * those in unquantized_modules. */
rf_dtype rf_model_module_dtype(const rf_model *m, rf_module mod, rf_dtype w, bool all_modules);

/* "attention", "mlp", "router", "shared_experts", "experts", "lm_head", "embed",
 * "mixer", "indexer". */
const char *rf_module_name(rf_module mod);

/* Number of sliding-window layers. */
int64_t rf_model_sliding_layers(const rf_model *m);

/* True when layer l (0-based) is a MoE layer. */
bool rf_model_layer_is_moe(const rf_model *m, int64_t l);

/* Number of MoE layers (the others keep a dense MLP). */
int64_t rf_model_moe_layers(const rf_model *m);

/* Parameter counts (matrix weights only; norms and biases excluded).
 *   total:      every weight the checkpoint holds; a tied embedding once
 *   streamed:   the weights one decode token at batch 1 streams (all dense
 *               matrices, k routed + shared experts, the lm_head; the
 *               embedding gather excluded)
 *   embedding:  V x H                                                       */
typedef struct rf_param_counts {
    uint64_t total;
    uint64_t streamed_per_token;
    uint64_t per_layer_dense; /* one dense layer's matrices (0 if none)    */
    uint64_t embedding;
    uint64_t lm_head;
    uint64_t by_module[RF_MOD_COUNT];             /* total split by module class; a tied
                                         embedding is counted under embed  */
    uint64_t by_module_unquantized[RF_MOD_COUNT]; /* the part of by_module in
                                         layers whose unquantized_layer[l]
                                         names the module (MTP layer i's at
                                         unquantized_layer[layers + i]) */
    uint64_t mtp;                                 /* the MTP layers' weights (in total and in
                                   by_module, never in streamed_per_token) */
} rf_param_counts;

rf_status rf_model_params(const rf_model *m, rf_param_counts *out, rf_err *err);

/* KV-cache elements per token per layer (2 n_kv d_h, or the MLA latent),
 * of a global attention layer. */
int64_t rf_model_kv_elems_per_layer(const rf_model *m);

/* ---- hybrid stacks (2025-26 architectures) ------------------------------ */

#define RF_SSM_CHUNK_DEFAULT 256 /* Mamba2's chunk_size default            */
#define RF_GDN_CHUNK 64          /* the chunk of fla's chunked delta rule  */

/* Where an attention layer attends (rf_model_layer_local). */
typedef enum rf_attn_local {
    RF_LOCAL_GLOBAL = 0, /* every cached position                          */
    RF_LOCAL_SLIDING,    /* sliding[l] and window > 0: the last `window`     */
    RF_LOCAL_CHUNKED     /* chunked[l] and attn_chunk > 0: its own chunk     */
} rf_attn_local;

/* The FFN of a layer (rf_model_layer_ffn). */
typedef enum rf_ffn_kind {
    RF_FFN_NONE = 0, /* no_ffn[l]                                        */
    RF_FFN_DENSE,    /* the dense MLP of width ffn                       */
    RF_FFN_MOE,      /* router, shared and routed experts                */
    RF_FFN_MOE_DENSE /* both (moe_and_dense)                             */
} rf_ffn_kind;

/* One attention layer's heads and widths (local_* on local layers). */
typedef struct rf_attn_shape {
    int64_t n_q, n_kv, head_dim, v_dim;
    bool k_eq_v; /* V is K: no v_proj, K alone cached (global only)  */
} rf_attn_shape;

rf_mixer rf_model_layer_mixer(const rf_model *m, int64_t l);
rf_attn_local rf_model_layer_local(const rf_model *m, int64_t l);
rf_ffn_kind rf_model_layer_ffn(const rf_model *m, int64_t l);
rf_attn_shape rf_model_attn_shape(const rf_model *m, int64_t l);

/* Layers whose mixer is softmax attention (the layers that hold KV). */
int64_t rf_model_attn_layers(const rf_model *m);

/* True when some layer keeps a recurrent state (a GDN or Mamba2 mixer). */
bool rf_model_has_state(const rf_model *m);

/* True when m uses any field of the 2025-26 block above (a layer that is
 * not attention, local head shapes, chunked attention, DSA, MTP, per-layer
 * quantization, ...): its step is formed per layer class. */
bool rf_model_is_hybrid(const rf_model *m);

/* Dtype of module `mod` in layer l: as rf_model_module_dtype, and
 * unquantized_dtype also where unquantized_layer[l] names the module. */
rf_dtype rf_model_layer_module_dtype(const rf_model *m, int64_t l, rf_module mod, rf_dtype w,
                                     bool all_modules);

/* KV-cache elements per token of layer l: 0 for a layer that is not
 * attention; MLA's latent r + rope; n_kv d_h (k_eq_v) or n_kv (d_h + d_v)
 * in the layer's own shape. DSA's index keys are apart
 * (rf_model_index_bytes_per_token). */
int64_t rf_model_kv_elems_layer(const rf_model *m, int64_t l);

/* Bytes of one token's index key in one layer (DSA): index_head_dim
 * elements in index_dtype (default fp8 + a 4-byte scale per 128); 0 when
 * the model has no indexer. */
uint64_t rf_model_index_bytes_per_token(const rf_model *m);

/* The constant state one sequence holds over every GDN and Mamba2 layer:
 *   GDN     Vh dk dv b_state + (K - 1)(2 Kh dk + Vh dv) b_conv
 *   Mamba2  h P N b_state    + (K - 1)(h P + 2 G N) b_conv
 * b_state the state_dtype (bf16 by default), b_conv bf16. 0 for a model
 * without such layers. */
rf_status rf_model_state_bytes(const rf_model *m, uint64_t *bytes_per_seq, rf_err *err);

/* The MTP layers as a draft model (--draft mtp): mtp_layers global
 * attention layers (MLA and the indexer as the target's) each with the MoE
 * block when the target has experts, else its dense MLP; the target's
 * vocabulary, embedding and lm_head. The eh_proj (2H -> H) of each MTP
 * layer is not in the draft's step (named in its notes). RF_EINVAL when m
 * has no MTP layers. */
rf_status rf_model_mtp_draft(const rf_model *m, rf_model *draft, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
