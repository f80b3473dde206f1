/* info.c - a model as `info` shows it: every shape, parameter counts, the
 * weights by module and their dtypes, the bytes, the linear layers and the
 * layers that keep modules unquantized. */
#include <stdio.h>

#include "roofline/rf_view.h"

char *rf_view_modules_text(uint32_t mask, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < RF_MOD_COUNT && used < cap; i++)
        if (mask & RF_MOD_BIT(i))
            used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? ", " : "",
                                     rf_module_name((rf_module)i));
    return out;
}

int64_t rf_view_layers_with_mtp(const rf_model *m)
{
    int64_t all = m->layers + m->mtp_layers;
    return all < RF_MODEL_MAX_LAYERS ? all : RF_MODEL_MAX_LAYERS;
}

int64_t rf_view_excluded_layers(const rf_model *m, int64_t from, int64_t to)
{
    int64_t n = 0;
    for (int64_t l = from; l < to; l++)
        n += m->unquantized_layer[l] != 0;
    return n;
}

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

static const char *attention_kind(const rf_model *m)
{
    if (m->kv_lora_rank)
        return "MLA (latent KV)";
    if (m->n_kv == m->n_q)
        return "MHA";
    return m->n_kv == 1 ? "MQA" : "GQA";
}

/* Layers whose mixer is kind. */
static int64_t mixer_layers(const rf_model *m, rf_mixer kind)
{
    int64_t n = 0;
    for (int64_t l = 0; l < m->layers; l++)
        n += m->mixer[l] == kind;
    return n;
}

static int64_t flagged_layers(const rf_model *m, const uint8_t *flag)
{
    int64_t n = 0;
    for (int64_t l = 0; l < m->layers; l++)
        n += flag[l] != 0;
    return n;
}

/* One integer row of the shapes section, shown when `when` holds. */
typedef struct shape_row {
    bool when;
    const char *key, *label;
    int64_t v;
} shape_row;

static void shape_rows(rf_report *r, const shape_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].when)
            rf_report_int(r, rows[i].key, rows[i].label, (uint64_t)rows[i].v, RF_U_INT);
}

/* The 2025-26 shapes, each only where the model has the part (a model
 * without them shows what it showed before). */
static void hybrid_shapes(rf_report *r, const rf_model *m)
{
    int64_t gdn = mixer_layers(m, RF_MIX_GDN), mamba = mixer_layers(m, RF_MIX_MAMBA2),
            none = mixer_layers(m, RF_MIX_NONE), no_ffn = flagged_layers(m, m->no_ffn);
    bool hybrid = gdn || mamba || none || no_ffn; /* the layer pattern's summary */
    char d[64];
    const shape_row layers[] = {
        {hybrid, "attention_layers", "attention layers", rf_model_attn_layers(m)},
        {gdn > 0, "gdn_layers", "Gated DeltaNet layers", gdn},
        {mamba > 0, "mamba2_layers", "Mamba2 layers", mamba},
        {none > 0, "mlp_only_layers", "MLP or MoE only (no mixer)", none},
        {no_ffn > 0, "no_ffn_layers", "layers without MLP or MoE", no_ffn},
        {m->attn_v_dim > 0, "attn_v_head_dim", "v head dim", m->attn_v_dim},
    };
    shape_rows(r, layers, sizeof layers / sizeof layers[0]);
    if (m->attn_out_gate)
        rf_report_str(r, "attn_output_gate", "attention output gate", "yes (sigmoid, n_q d_h)");
    if (m->k_eq_v)
        rf_report_str(r, "attention_k_eq_v", "global layers: V is K", "yes");
    if (m->moe_and_dense)
        rf_report_str(r, "moe_and_dense", "dense MLP beside the MoE", "yes");
    if (m->ffn_ungated)
        rf_report_str(r, "ffn_ungated", "MLP and experts ungated (up, down)", "yes");
    const shape_row parts[] = {
        {m->attn_chunk > 0, "attention_chunk_size", "attention chunk", m->attn_chunk},
        {m->attn_chunk > 0, "chunked_layers", "chunked layers", flagged_layers(m, m->chunked)},
        {m->local_n_q > 0, "local_num_attention_heads", "local layers: query heads", m->local_n_q},
        {m->local_n_kv > 0, "local_num_key_value_heads", "local layers: KV heads", m->local_n_kv},
        {m->local_head_dim > 0, "local_head_dim", "local layers: head dim", m->local_head_dim},
        {m->local_v_dim > 0, "local_v_head_dim", "local layers: v head dim", m->local_v_dim},
        {gdn > 0, "gdn_key_heads", "GDN key heads", m->gdn_k_heads},
        {gdn > 0, "gdn_value_heads", "GDN value heads", m->gdn_v_heads},
        {gdn > 0, "gdn_key_head_dim", "GDN key head dim", m->gdn_k_dim},
        {gdn > 0, "gdn_value_head_dim", "GDN value head dim", m->gdn_v_dim},
        {gdn > 0, "gdn_conv_kernel", "GDN convolution kernel", m->gdn_conv},
        {mamba > 0, "mamba_heads", "Mamba2 heads", m->ssm_heads},
        {mamba > 0, "mamba_head_dim", "Mamba2 head dim", m->ssm_head_dim},
        {mamba > 0, "ssm_state_size", "Mamba2 state size", m->ssm_state},
        {mamba > 0, "mamba_groups", "Mamba2 groups", m->ssm_groups},
        {mamba > 0, "mamba_conv_kernel", "Mamba2 convolution kernel", m->ssm_conv},
    };
    shape_rows(r, parts, sizeof parts / sizeof parts[0]);
    if (gdn || mamba) /* bf16 unless the config names one (rf_model.h) */
        rf_report_str(r, "state_dtype", "recurrent state dtype",
                      rf_dtype_describe(m->has_state_dtype ? m->state_dtype : rf_dtype_of(RF_BF16),
                                        d, sizeof d));
    const shape_row dsa[] = {
        {m->index_topk > 0, "index_n_heads", "DSA indexer heads", m->index_heads},
        {m->index_topk > 0, "index_head_dim", "DSA indexer head dim", m->index_head_dim},
        {m->index_topk > 0, "index_topk", "DSA keys kept a query", m->index_topk},
    };
    shape_rows(r, dsa, sizeof dsa / sizeof dsa[0]);
    if (m->index_topk)
        rf_report_str(r, "index_dtype", "DSA indexer key cache dtype",
                      m->has_index_dtype ? rf_dtype_describe(m->index_dtype, d, sizeof d)
                                         : "fp8_e4m3, an fp32 scale per 128 (vLLM, SGLang)");
    if (m->mtp_layers)
        rf_report_int(r, "mtp_layers", "MTP layers (resident, not streamed)",
                      (uint64_t)m->mtp_layers, RF_U_INT);
}

static void shapes(rf_report *r, const rf_model *m)
{
    char bias[32];
    snprintf(bias, sizeof bias, "%s%s%s%s", m->qkv_bias ? "q/k/v " : "", m->o_bias ? "o " : "",
             m->mlp_bias ? "mlp " : "", m->qkv_bias || m->o_bias || m->mlp_bias ? "" : "none");
    rf_report_section(r, "shapes", "shapes");
    rf_report_str(r, "family", "family (model_type)", m->family);
    rf_report_int(r, "hidden_size", "hidden size H", (uint64_t)m->hidden, RF_U_INT);
    rf_report_int(r, "num_hidden_layers", "layers L", (uint64_t)m->layers, RF_U_INT);
    rf_report_str(r, "attention", "attention", attention_kind(m));
    rf_report_int(r, "num_attention_heads", "query heads n_q", (uint64_t)m->n_q, RF_U_INT);
    rf_report_int(r, "num_key_value_heads", "KV heads n_kv", (uint64_t)m->n_kv, RF_U_INT);
    rf_report_int(r, "head_dim", "head dim d_h", (uint64_t)m->head_dim, RF_U_INT);
    rf_report_int(r, "intermediate_size", "intermediate size F_ff", (uint64_t)m->ffn, RF_U_INT);
    rf_report_int(r, "vocab_size", "vocabulary V", (uint64_t)m->vocab, RF_U_INT);
    rf_report_str(r, "tie_word_embeddings", "tied embeddings", yes_no(m->tied));
    rf_report_str(r, "biases", "biases (present, not counted)", bias);
    if (m->n_experts) {
        rf_report_int(r, "experts", "routed experts E", (uint64_t)m->n_experts, RF_U_INT);
        rf_report_int(r, "experts_per_token", "experts a token k", (uint64_t)m->top_k, RF_U_INT);
        rf_report_int(r, "expert_intermediate_size", "routed expert width", (uint64_t)m->moe_ffn,
                      RF_U_INT);
        rf_report_int(r, "shared_experts", "shared experts", (uint64_t)m->n_shared, RF_U_INT);
        if (m->n_shared)
            rf_report_int(r, "shared_expert_intermediate_size", "shared expert width",
                          (uint64_t)(m->shared_ffn ? m->shared_ffn : m->moe_ffn), RF_U_INT);
        rf_report_int(r, "moe_layers", "MoE layers", (uint64_t)rf_model_moe_layers(m), RF_U_INT);
    }
    if (m->kv_lora_rank) {
        rf_report_int(r, "q_lora_rank", "q LoRA rank (0 = none)", (uint64_t)m->q_lora_rank,
                      RF_U_INT);
        rf_report_int(r, "kv_lora_rank", "KV latent rank r", (uint64_t)m->kv_lora_rank, RF_U_INT);
        rf_report_int(r, "qk_nope_head_dim", "q/k width without RoPE", (uint64_t)m->qk_nope_dim,
                      RF_U_INT);
        rf_report_int(r, "qk_rope_head_dim", "q/k RoPE width", (uint64_t)m->qk_rope_dim, RF_U_INT);
        rf_report_int(r, "v_head_dim", "v width", (uint64_t)m->v_head_dim, RF_U_INT);
    }
    rf_report_int(r, "sliding_window", "sliding window (0 = none)", (uint64_t)m->window, RF_U_INT);
    rf_report_int(r, "sliding_layers", "sliding layers", (uint64_t)rf_model_sliding_layers(m),
                  RF_U_INT);
    hybrid_shapes(r, m);
}

static void params(rf_report *r, const rf_model *m, const rf_param_counts *p)
{
    rf_report_section(r, "params", "parameters (matrix weights)");
    rf_report_int(r, "total", "total (resident)", p->total, RF_U_COUNT);
    rf_report_int(r, "streamed_per_token", "streamed by one decode token", p->streamed_per_token,
                  RF_U_COUNT);
    if (m->n_experts)
        rf_report_int(r, "active_per_token", "active a token (k routed + shared)",
                      p->streamed_per_token, RF_U_COUNT);
    if (p->mtp)
        rf_report_int(r, "mtp", "MTP layers (in the total, not streamed)", p->mtp, RF_U_COUNT);
    rf_report_int(r, "embedding", "embedding V x H", p->embedding, RF_U_COUNT);
    rf_report_int(r, "lm_head", m->tied ? "lm_head (the embedding, tied)" : "lm_head H x V",
                  p->lm_head, RF_U_COUNT);
    rf_report_int(r, "total_exact", "total, exact", p->total, RF_U_INT);
    rf_report_int(r, "streamed_per_token_exact", "streamed, exact", p->streamed_per_token,
                  RF_U_INT);
}

static int bytes(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st,
                 rf_err *e)
{
    uint64_t resident;
    if (rf_model_weight_bytes(m, o, &resident, e))
        return 1;
    rf_report_section(r, "bytes", "bytes");
    rf_report_int(r, "resident_weight_bytes", "resident weights", resident, RF_U_BYTES);
    rf_report_int(r, "streamed_weight_bytes", "weights a batch-1 decode step streams",
                  st->weight_bytes, RF_U_BYTES);
    rf_report_int(r, "streamed_weight_bytes_exact", "streamed, exact", st->weight_bytes, RF_U_INT);
    rf_report_int(r, "kv_bytes_per_token", "KV a token (all layers)", st->kv_bytes_per_token,
                  RF_U_INT);
    uint64_t state;
    if (rf_model_state_bytes(m, &state, e))
        return 1;
    if (state) /* GDN and Mamba2 layers: constant in the context */
        rf_report_int(r, "state_bytes_per_sequence", "recurrent state a sequence (all layers)",
                      state, RF_U_INT);
    return 0;
}

/* Per-layer quantization exclusions: runs of consecutive layers that keep
 * the same modules unquantized, one row a run, the MTP layers numbered
 * after the decoder's as the checkpoint names them (none: no table). */
static void exclusions(rf_report *r, const rf_model *m, const rf_step_opts *o)
{
    int64_t all = rf_view_layers_with_mtp(m);
    if (o->w_all_modules || !rf_view_excluded_layers(m, 0, all))
        return;
    char u[64];
    rf_dtype_describe(m->unquantized_dtype, u, sizeof u);
    rf_report_table(r, "layer_exclusions", "layers keeping modules unquantized");
    rf_report_col(r, "first_layer", "first layer", RF_U_INT);
    rf_report_col(r, "last_layer", "last layer", RF_U_INT);
    rf_report_col(r, "part", "part", RF_U_NONE);
    rf_report_col(r, "modules", "modules", RF_U_NONE);
    rf_report_col(r, "dtype", "dtype", RF_U_NONE);
    for (int64_t l = 0; l < all;) {
        uint16_t mask = m->unquantized_layer[l];
        int64_t end = l;
        while (end + 1 < all && end + 1 != m->layers && m->unquantized_layer[end + 1] == mask)
            end++; /* a run stays within the decoder or the MTP layers */
        if (mask) {
            char names[192];
            rf_report_row(r);
            rf_report_cell_int(r, (uint64_t)l);
            rf_report_cell_int(r, (uint64_t)end);
            rf_report_cell_str(r, l < m->layers ? "decoder" : "MTP");
            rf_report_cell_str(r, rf_view_modules_text(mask, names, sizeof names));
            rf_report_cell_str(r, u);
        }
        l = end + 1;
    }
}

static int modules(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_param_counts *p,
                   rf_err *e)
{
    rf_report_table(r, "modules", "weights by module");
    rf_report_col(r, "module", "module", RF_U_NONE);
    rf_report_col(r, "params", "params", RF_U_INT);
    rf_report_col(r, "dtype", "dtype", RF_U_NONE);
    rf_report_col(r, "bytes", "bytes", RF_U_BYTES);
    for (int i = 0; i < RF_MOD_COUNT; i++) {
        if (!p->by_module[i])
            continue;
        char d[64], u[64], both[160];
        uint64_t b, unq;
        rf_dtype dt = rf_model_module_dtype(m, (rf_module)i, o->w, o->w_all_modules);
        if (rf_model_module_bytes(m, o, (rf_module)i, &b, &unq, e))
            return 1;
        /* some layers keep it unquantized (the table of layers below) */
        rf_dtype_describe(dt, d, sizeof d);
        if (unq && unq < p->by_module[i])
            snprintf(both, sizeof both, "%s; some layers %s", d,
                     rf_dtype_describe(m->unquantized_dtype, u, sizeof u));
        else
            snprintf(both, sizeof both, "%s",
                     unq ? rf_dtype_describe(m->unquantized_dtype, u, sizeof u) : d);
        rf_report_row(r);
        rf_report_cell_str(r, rf_module_name((rf_module)i));
        rf_report_cell_int(r, p->by_module[i]);
        rf_report_cell_str(r, both);
        rf_report_cell_int(r, b);
    }
    return 0;
}

/* Every linear operator of one layer kind: K -> N and the layers it runs in. */
static void linears(rf_report *r, const rf_step *st)
{
    rf_report_table(r, "linears", "linear layers (K -> N; experts: one expert's matrix)");
    rf_report_col(r, "name", "operator", RF_U_NONE);
    rf_report_col(r, "layers", "layers", RF_U_INT);
    rf_report_col(r, "k", "K", RF_U_INT);
    rf_report_col(r, "n", "N", RF_U_INT);
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        if (op->kind != RF_OP_GEMM)
            continue;
        rf_report_row(r);
        rf_report_cell_str(r, op->name);
        rf_report_cell_int(r, op->count);
        rf_report_cell_int(r, (uint64_t)op->k);
        rf_report_cell_int(r, (uint64_t)op->n);
    }
}

rf_status rf_view_info(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st,
                       const rf_param_counts *p, rf_err *e)
{
    shapes(r, m);
    params(r, m, p);
    if (bytes(r, m, o, st, e) || modules(r, m, o, p, e))
        return e->status;
    linears(r, st);
    exclusions(r, m, o);
    return RF_OK;
}
