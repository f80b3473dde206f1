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

/* Defaults of one family's configuration class. */
typedef struct family {
    const char *type;
    int64_t heads, ffn, vocab; /* num_attention_heads, intermediate_size,
                                  vocab_size; 0 = required (other families) */
    int64_t max_ctx;    /* max_position_embeddings                           */
    int64_t kv_heads;   /* num_key_value_heads; 0 = equal to the heads       */
    int64_t head_dim;   /* 0 = hidden_size / num_attention_heads             */
    bool tied;          /* tie_word_embeddings                               */
    sliding_rule sliding;
    int64_t window;     /* sliding_window; 0 = None                          */
    int64_t max_window; /* max_window_layers (SW_QWEN)                       */
    bool qkv_bias;      /* q/k/v biases built into the model (qwen2)         */
    bool attn_bias;     /* attention_bias                                    */
    moe_style moe;
    const char *experts_key;  /* the field holding the routed experts        */
    int64_t experts, top_k;   /* top_k 0: no default, the field is required  */
    int64_t moe_ffn, n_shared, shared_ffn, first_dense;
    bool mla;           /* DeepSeek multi-head latent attention              */
} family;

static const family families[] = {
    {.type = "llama", .heads = 32, .ffn = 11008, .vocab = 32000, .max_ctx = 2048},
    {.type = "mistral", .heads = 32, .ffn = 14336, .vocab = 32000, .kv_heads = 8,
     .sliding = SW_ALL, .window = 4096, .max_ctx = 131072},
    {.type = "qwen2", .heads = 32, .ffn = 22016, .vocab = 151936, .sliding = SW_QWEN,
     .window = 4096, .max_window = 28, .qkv_bias = true, .max_ctx = 32768},
    {.type = "qwen3", .heads = 32, .ffn = 22016, .vocab = 151936, .head_dim = 128,
     .sliding = SW_QWEN, .window = 4096, .max_window = 28, .max_ctx = 32768},
    {.type = "mixtral", .heads = 32, .ffn = 14336, .vocab = 32000, .kv_heads = 8,
     .sliding = SW_ALL, .moe = MOE_MIXTRAL, .experts_key = "num_local_experts", .experts = 8,
     .top_k = 2, .max_ctx = 131072},
    {.type = "qwen2_moe", .heads = 16, .ffn = 5632, .vocab = 151936, .sliding = SW_QWEN,
     .window = 4096, .max_window = 28, .qkv_bias = true, .moe = MOE_QWEN,
     .experts_key = "num_experts", .experts = 60, .top_k = 4, .moe_ffn = 1408,
     .shared_ffn = 5632, .max_ctx = 8192},
    {.type = "qwen3_moe", .heads = 32, .ffn = 6144, .vocab = 151936, .kv_heads = 4,
     .sliding = SW_QWEN, .window = 4096, .moe = MOE_QWEN, .experts_key = "num_experts",
     .experts = 128, .top_k = 8, .moe_ffn = 768, .max_ctx = 32768},
    {.type = "gemma2", .heads = 8, .ffn = 9216, .vocab = 256000, .kv_heads = 4, .head_dim = 256,
     .tied = true, .sliding = SW_ALTERNATE, .window = 4096, .max_ctx = 8192},
    {.type = "gemma3_text", .heads = 8, .ffn = 9216, .vocab = 262208, .kv_heads = 4,
     .head_dim = 256, .tied = true, .sliding = SW_PATTERN, .window = 4096, .max_ctx = 131072},
    {.type = "phi3", .heads = 32, .ffn = 8192, .vocab = 32064, .sliding = SW_ALL,
     .max_ctx = 4096},
    {.type = "deepseek_v2", .heads = 32, .ffn = 11008, .vocab = 32000, .moe = MOE_DEEPSEEK,
     .experts_key = "n_routed_experts", .experts = 64, .moe_ffn = 1407, .n_shared = 2,
     .mla = true, .max_ctx = 2048},
    {.type = "deepseek_v3", .heads = 128, .ffn = 18432, .vocab = 129280, .moe = MOE_DEEPSEEK,
     .experts_key = "n_routed_experts", .experts = 256, .top_k = 8, .moe_ffn = 2048,
     .n_shared = 1, .first_dense = 3, .mla = true, .max_ctx = 4096},
    {.type = "gpt_oss", .heads = 64, .ffn = 2880, .vocab = 201088, .kv_heads = 8, .head_dim = 64,
     .sliding = SW_ALTERNATE, .window = 128, .attn_bias = true, .moe = MOE_GPT_OSS,
     .experts_key = "num_local_experts", .experts = 128, .top_k = 4, .max_ctx = 131072},
};

/* A family we do not know: the standard dense fields, nothing else. */
static const family other_family = {.type = NULL};

static const family *find_family(const char *type)
{
    for (size_t i = 0; type && i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(type, families[i].type))
            return &families[i];
    return &other_family;
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
    if ((s = rf__hf_int_field(r, "max_position_embeddings", f->max_ctx ? OPTIONAL : QUIET, f->max_ctx,
                       1, &m->max_context, NULL)))
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
        return rf__hf_fail(r, RF_EINVAL, "num_key_value_heads (%lld) must divide num_attention_heads (%lld)",
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
        return rf__hf_fail(r, RF_EINVAL,
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
    m->o_bias = attn_bias;
    m->mlp_bias = mlp_bias;
    return RF_OK;
}

/* ---- MoE -------------------------------------------------------------- */

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
        return rf__hf_fail(r, RF_EINVAL, "mlp_only_layers must be an array, not %s", rf__hf_json_kind(only));
    for (size_t i = 0; i < json_array_size(only); i++) {
        const json_t *v = json_array_get(only, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= m->layers)
            return rf__hf_fail(r, RF_EINVAL, "mlp_only_layers[%zu] must be a layer index in [0, %lld)",
                        i, (long long)m->layers);
        m->dense_mlp[json_integer_value(v)] = 1;
    }
    return RF_OK;
}

static rf_status read_moe(reader *r, const family *f)
{
    rf_model *m = r->m;
    rf_status s;
    if (f->moe == MOE_NONE) {
        static const char *const keys[] = {"num_local_experts", "num_experts", "n_routed_experts"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            const json_t *v = rf__hf_field(r, keys[i], false);
            if (v && json_is_integer(v) && json_integer_value(v) > 0)
                rf__hf_note(m, "%s (%lld) ignored: the family's expert layout is not known", keys[i],
                     (long long)json_integer_value(v));
        }
        return RF_OK;
    }
    const char *ek = f->experts_key;
    const char *tk = "num_experts_per_tok";
    if (f->moe == MOE_GPT_OSS && !rf__hf_field(r, tk, false) && rf__hf_field(r, "experts_per_token", false))
        tk = "experts_per_token";
    if ((s = rf__hf_int_field(r, ek, OPTIONAL, f->experts, 1, &m->n_experts, NULL)) ||
        (s = rf__hf_int_field(r, tk, f->top_k ? OPTIONAL : REQUIRED, f->top_k, 1, &m->top_k, NULL)))
        return s;
    if (m->top_k > m->n_experts)
        return rf__hf_fail(r, RF_EINVAL, "%s (%lld) must not exceed %s (%lld)", tk, (long long)m->top_k,
                    ek, (long long)m->n_experts);
    switch (f->moe) {
    case MOE_MIXTRAL:
    case MOE_GPT_OSS:
        m->moe_ffn = m->ffn; /* intermediate_size is the expert's width */
        return RF_OK;
    case MOE_QWEN:
        if ((s = rf__hf_int_field(r, "moe_intermediate_size", OPTIONAL, f->moe_ffn, 1, &m->moe_ffn,
                           NULL)) ||
            (s = rf__hf_int_field(r, "shared_expert_intermediate_size", NULL_IS_ZERO, f->shared_ffn, 0,
                           &m->shared_ffn, NULL)))
            return s;
        m->n_shared = m->shared_ffn ? 1 : 0;
        m->shared_expert_gate = m->n_shared > 0;
        return qwen_dense_layers(r);
    default: /* MOE_DEEPSEEK: shared experts as wide as a routed one each */
        if ((s = rf__hf_int_field(r, "moe_intermediate_size", OPTIONAL, f->moe_ffn, 1, &m->moe_ffn,
                           NULL)) ||
            (s = rf__hf_int_field(r, "n_shared_experts", NULL_IS_ZERO, f->n_shared, 0, &m->n_shared,
                           NULL)) ||
            (s = rf__hf_int_field(r, "first_k_dense_replace", OPTIONAL, f->first_dense, 0,
                           &m->first_dense, NULL)) ||
            (s = rf__hf_int_field(r, "moe_layer_freq", OPTIONAL, 1, 1, &m->moe_freq, NULL)))
            return s;
        if (m->first_dense > m->layers)
            return rf__hf_fail(r, RF_EINVAL, "first_k_dense_replace (%lld) exceeds num_hidden_layers (%lld)",
                        (long long)m->first_dense, (long long)m->layers);
        int64_t mtp;
        if ((s = rf__hf_int_field(r, "num_nextn_predict_layers", QUIET, 0, 0, &mtp, NULL)))
            return s;
        if (mtp)
            rf__hf_note(m, "num_nextn_predict_layers (%lld): the multi-token-prediction layers are not "
                    "counted",
                 (long long)mtp);
        return RF_OK;
    }
}

/* ---- MLA -------------------------------------------------------------- */

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
    return RF_OK;
}

/* ---- sliding windows -------------------------------------------------- */

static rf_status layer_types(reader *r, const json_t *lt)
{
    rf_model *m = r->m;
    if (!json_is_array(lt))
        return rf__hf_fail(r, RF_EINVAL, "layer_types must be an array, not %s", rf__hf_json_kind(lt));
    if ((int64_t)json_array_size(lt) != m->layers)
        return rf__hf_fail(r, RF_EINVAL, "layer_types has %zu entries but num_hidden_layers is %lld",
                    json_array_size(lt), (long long)m->layers);
    for (size_t i = 0; i < json_array_size(lt); i++) {
        const char *t = json_string_value(json_array_get(lt, i));
        if (t && !strcmp(t, "sliding_attention"))
            m->sliding[i] = 1;
        else if (!t || strcmp(t, "full_attention"))
            return rf__hf_fail(r, RF_EINVAL,
                        "layer_types[%zu] (%s) is not modelled: sliding_attention or "
                        "full_attention",
                        i, t ? t : "not a string");
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
        (listed && (s = layer_types(r, lt))))
        return s;
    if (f->sliding != SW_QWEN)
        use = true; /* only qwen2/qwen3 families read the switch */
    if ((s = rf__hf_int_field(r, "sliding_window_pattern",
                       f->sliding == SW_PATTERN && use && !listed ? OPTIONAL : QUIET, 6, 1,
                       &every, NULL)) ||
        (s = rf__hf_int_field(r, "max_window_layers",
                       f->sliding == SW_QWEN && use && !listed ? OPTIONAL : QUIET, f->max_window,
                       0, &from, NULL)))
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
        if (f->sliding == SW_NONE && given && window)
            rf__hf_note(m, "sliding_window (%lld) ignored: %s names no sliding layers (no layer_types)",
                 (long long)window, f->type ? f->type : "this family");
    }
    bool any = false;
    for (int64_t l = 0; l < m->layers; l++)
        any = any || m->sliding[l];
    if (any && !window)
        return rf__hf_fail(r, RF_EINVAL, "layer_types names sliding layers but sliding_window is null");
    m->window = any ? window : 0;
    if (!any)
        memset(m->sliding, 0, sizeof m->sliding);
    else if (!given)
        rf__hf_note(m, "sliding_window absent: %s default %lld", f->type, (long long)window);
    return RF_OK;
}

/* ---- the whole file --------------------------------------------------- */

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

static rf_status read_model(reader *r)
{
    rf_model *m = r->m;
    rf_status s;
    const char *type = NULL;
    const json_t *text = json_object_get(r->top, "text_config");
    if (json_is_object(text) && !json_object_get(r->top, "hidden_size")) {
        const char *outer;
        r->cfg = text;
        if ((s = rf__hf_str_field(r, r->top, "model_type", &outer)) ||
            (s = rf__hf_str_field(r, r->cfg, "model_type", &type)))
            return s;
        if (!type && outer && !strcmp(outer, "gemma3"))
            type = "gemma3_text";
        rf__hf_note(m, "text_config of %s read: only the text decoder is counted",
             outer ? outer : "a multimodal model");
    } else if ((s = rf__hf_str_field(r, r->cfg, "model_type", &type))) {
        return s;
    }
    const family *f = find_family(type);
    snprintf(m->family, sizeof m->family, "%s", type ? type : "unknown");
    if (!f->type)
        rf__hf_note(m, "model_type %s is not a known family: analysed as a dense decoder from the "
                "standard fields",
             type ? type : "(absent)");
    if ((s = read_shapes(r, f)) || (s = read_biases(r, f)) || (s = read_mla(r, f)) ||
        (s = read_moe(r, f)) || (s = read_sliding(r, f)))
        return s;
    if (r->defaulted[0])
        rf__hf_note(m, "absent, %s defaults: %s", f->type ? f->type : "standard-field", r->defaulted);
    if ((s = rf__hf_read_dtype(r)) || (s = rf__hf_read_quant(r)))
        return s;
    if ((s = rf_model_validate(m, r->err)))
        return rf_err_prefix(r->err, s, "%s", r->origin);
    return RF_OK;
}

rf_status rf_model_parse(const char *text, size_t len, const char *origin, rf_model *out,
                         rf_err *err)
{
    static const rf_model zero;
    rf_model m = zero;
    reader r = {.origin = origin ? origin : "config.json", .m = &m, .err = err};
    json_t *root = NULL;
    rf_status s = rf__json_parse(text, len, r.origin, &root, err);
    if (s)
        goto out;
    if (!json_is_object(root)) {
        s = rf__hf_fail(&r, RF_EINVAL, "not a JSON object");
        goto out;
    }
    r.top = r.cfg = root;
    name_from(r.origin, m.name, sizeof m.name);
    if ((s = read_model(&r)))
        goto out;
    *out = m;
out:
    json_decref(root);
    return s;
}

static rf_status parse_any(const char *text, size_t len, const char *origin, void *out,
                           rf_err *err)
{
    return rf_model_parse(text, len, origin, out, err);
}

rf_status rf_model_load(const char *path, rf_model *out, rf_err *err)
{
    char buf[4096];
    struct stat st;
    const char *file = path;
    if (path && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t n = strlen(path);
        if (n + sizeof "/config.json" > sizeof buf)
            return rf_err_set(err, RF_EINVAL, "%s: path too long", path);
        snprintf(buf, sizeof buf, "%s%sconfig.json", path,
                 n && path[n - 1] == '/' ? "" : "/");
        file = buf;
    }
    if (!file)
        return rf_err_set(err, RF_EINVAL, "no config path given");
    return rf__json_load(file, parse_any, out, err);
}
