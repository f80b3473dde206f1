/* hf_quant.c - the weights' dtype and the quantization_config of a
 * config.json (rf_reader.h): which dtype each module class is stored in. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_dtype.h"
#include "roofline/rf_model.h"

#include "hf_internal.h"

/* ---- dtypes and quantization ----------------------------------------- */

rf_status rf__hf_read_dtype(reader *r)
{
    rf_model *m = r->m;
    const char *key = "torch_dtype", *t = NULL;
    const json_t *v = rf__hf_field(r, key, true);
    if (!v) { /* newer transformers write "dtype" */
        key = "dtype";
        v = rf__hf_field(r, key, true);
    }
    rf_status s;
    if (v && (s = rf__hf_str_field(r, json_object_get(r->cfg, key) ? r->cfg : r->top, key, &t)))
        return s;
    rf_dtype_kind k = RF_BF16;
    if (!t)
        rf__hf_note(m, "torch_dtype absent: bf16 weights assumed");
    else if (!strcmp(t, "auto"))
        rf__hf_note(m, "%s \"auto\": bf16 weights assumed", key);
    else if (!strcmp(t, "float16"))
        k = RF_FP16;
    else if (!strcmp(t, "float32"))
        k = RF_FP32;
    else if (strcmp(t, "bfloat16"))
        return rf__hf_fail(r, RF_EINVAL, "%s (%s) is not read: bfloat16, float16 or float32", key, t);
    m->weight_dtype = m->unquantized_dtype = rf_dtype_of(k);
    m->has_weight_dtype = true;
    return RF_OK;
}

/* The module class a modules_to_not_convert entry names ("lm_head",
 * "model.layers.*.self_attn", "model.layers.*.mlp.router", ...); 0 when it
 * names none we model. */
static uint32_t module_mask(const char *p)
{
    const char *last = strrchr(p, '.');
    last = last ? last + 1 : p;
    if (strstr(p, "lm_head"))
        return RF_MOD_BIT(RF_MOD_LM_HEAD);
    if (strstr(p, "embed"))
        return RF_MOD_BIT(RF_MOD_EMBED);
    if (strstr(p, "attn") || strstr(p, "attention"))
        return RF_MOD_BIT(RF_MOD_ATTN);
    if (strstr(p, "shared_expert"))
        return RF_MOD_BIT(RF_MOD_SHARED);
    if (strstr(p, "router") || !strcmp(last, "gate"))
        return RF_MOD_BIT(RF_MOD_ROUTER);
    if (strstr(p, "experts"))
        return RF_MOD_BIT(RF_MOD_EXPERTS);
    if (!strcmp(last, "mlp") || !strcmp(last, "block_sparse_moe"))
        return RF_MOD_BIT(RF_MOD_MLP) | RF_MOD_BIT(RF_MOD_ROUTER) | RF_MOD_BIT(RF_MOD_SHARED) |
               RF_MOD_BIT(RF_MOD_EXPERTS);
    if (strstr(p, "proj"))
        return RF_MOD_BIT(RF_MOD_MLP);
    return 0;
}

static rf_status skipped_modules(reader *r, const json_t *q, const char *key, uint32_t *mask,
                                 bool *given)
{
    const json_t *list = json_object_get(q, key);
    *given = list && !json_is_null(list);
    if (!*given)
        return RF_OK;
    if (!json_is_array(list))
        return rf__hf_fail(r, RF_EINVAL, "quantization_config.%s must be an array, not %s", key,
                    rf__hf_json_kind(list));
    for (size_t i = 0; i < json_array_size(list); i++) {
        const char *p = json_string_value(json_array_get(list, i));
        if (!p)
            return rf__hf_fail(r, RF_EINVAL, "quantization_config.%s[%zu] must be a string", key, i);
        uint32_t bit = module_mask(p);
        if (!bit)
            rf__hf_note(r->m, "quantization_config.%s entry '%s' matches no module class", key, p);
        *mask |= bit;
    }
    return RF_OK;
}

/* fp8 as DeepSeek-V3 ships it: e4m3 (or e5m2) elements; weight_block_size
 * [bk, bn] blocks share one fp32 scale, counted as 4 bytes per bk x bn
 * elements; an activation_scheme makes it W8A8 (fp8 activations). */
static rf_status quant_fp8(reader *r, const json_t *q)
{
    rf_model *m = r->m;
    const char *fmt, *act;
    rf_status s;
    if ((s = rf__hf_str_field(r, q, "fmt", &fmt)) || (s = rf__hf_str_field(r, q, "activation_scheme", &act)))
        return s;
    rf_dtype d = rf_dtype_of(fmt && !strcmp(fmt, "e5m2") ? RF_FP8_E5M2 : RF_FP8_E4M3);
    if (fmt && strcmp(fmt, "e4m3") && strcmp(fmt, "e5m2"))
        return rf__hf_fail(r, RF_EINVAL, "quantization_config.fmt (%s) must be e4m3 or e5m2", fmt);
    const json_t *blk = json_object_get(q, "weight_block_size");
    if (blk && !json_is_null(blk)) {
        const json_t *a = json_array_get(blk, 0), *b = json_array_get(blk, 1);
        if (!json_is_array(blk) || json_array_size(blk) != 2 || !json_is_integer(a) ||
            !json_is_integer(b) || json_integer_value(a) < 1 || json_integer_value(b) < 1 ||
            json_integer_value(a) > (1 << 24) || json_integer_value(b) > (1 << 24) ||
            json_integer_value(a) * json_integer_value(b) > (1 << 24))
            return rf__hf_fail(r, RF_EINVAL,
                        "quantization_config.weight_block_size must be two positive integers "
                        "(at most 2^24 elements a block)");
        d.group_size = (uint32_t)(json_integer_value(a) * json_integer_value(b));
        d.block_rows = (uint32_t)json_integer_value(a); /* described as a tile */
        d.scale_bytes = 4;
    }
    m->weight_dtype = d;
    if (act) {
        m->act_dtype = rf_dtype_of(RF_FP8_E4M3);
        m->has_act_dtype = true;
    }
    return RF_OK;
}

/* gptq, awq and other integer methods: bits 4 or 8, one 2-byte scale per
 * group_size weights (-1: per output channel, scales not counted). */
static rf_status quant_int(reader *r, const json_t *q, const char *method)
{
    rf_model *m = r->m;
    rf_status s;
    int64_t bits = 0, group = 0;
    if ((s = rf__hf_int_at(r, json_object_get(q, "bits"), "quantization_config.bits", REQUIRED, 0, 1,
                    &bits, NULL)))
        return s;
    if (bits != 4 && bits != 8)
        return rf__hf_fail(r, RF_EINVAL, "quantization_config.bits (%lld): only 4 and 8 are modelled",
                    (long long)bits);
    const json_t *g = json_object_get(q, "group_size");
    if (g && json_is_integer(g) && json_integer_value(g) == -1) {
        group = 0;
        rf__hf_note(m, "%s group_size -1: per-channel scales not counted", method);
    } else if ((s = rf__hf_int_at(r, g, "quantization_config.group_size", QUIET, 128, 1, &group,
                           NULL))) {
        return s;
    } else if (group > (1 << 24)) {
        return rf__hf_fail(r, RF_ERANGE, "quantization_config.group_size (%lld) is beyond 2^24",
                    (long long)group);
    } else if (!g) {
        rf__hf_note(m, "%s group_size absent: 128 assumed", method);
    }
    m->weight_dtype = rf_dtype_of(bits == 4 ? RF_INT4 : RF_INT8);
    m->weight_dtype.group_size = (uint32_t)group;
    m->weight_dtype.scale_bytes = group ? 2 : 0;
    return RF_OK;
}

/* bitsandbytes: 4-bit (nf4/fp4) in blocks of 64 with an fp32 absmax, or an
 * 8-bit one with double quantization; 8-bit rows with per-row scales. */
static rf_status quant_bnb(reader *r, const json_t *q)
{
    rf_model *m = r->m;
    rf_status s;
    bool four, eight, dq;
    const json_t *saved = r->cfg;
    r->cfg = q;
    s = rf__hf_bool_field(r, "load_in_4bit", false, false, &four, NULL);
    if (!s)
        s = rf__hf_bool_field(r, "load_in_8bit", false, false, &eight, NULL);
    if (!s)
        s = rf__hf_bool_field(r, "bnb_4bit_use_double_quant", false, false, &dq, NULL);
    r->cfg = saved;
    if (s)
        return s;
    if (!four && !eight)
        return rf__hf_fail(r, RF_EINVAL,
                    "quantization_config: bitsandbytes without load_in_4bit or load_in_8bit");
    if (four) {
        m->weight_dtype =
            (rf_dtype){.kind = RF_INT4, .group_size = 64, .scale_bytes = dq ? 1u : 4u};
    } else {
        m->weight_dtype = rf_dtype_of(RF_INT8);
        rf__hf_note(m, "bitsandbytes int8: per-row scales not counted");
    }
    return RF_OK;
}

rf_status rf__hf_read_quant(reader *r)
{
    rf_model *m = r->m;
    const json_t *q = rf__hf_field(r, "quantization_config", true);
    rf_status s;
    if (!q || json_is_null(q))
        return RF_OK;
    if (!json_is_object(q))
        return rf__hf_fail(r, RF_EINVAL, "quantization_config must be an object, not %s", rf__hf_json_kind(q));
    const char *method;
    if ((s = rf__hf_str_field(r, q, "quant_method", &method)))
        return s;
    if (!method)
        method = json_object_get(q, "bits") ? "gptq" : "";
    /* what stays in the torch_dtype unless the config names the modules */
    uint32_t keep = RF_MOD_BIT(RF_MOD_EMBED) | RF_MOD_BIT(RF_MOD_LM_HEAD);
    bool listed = false;
    if (!strcmp(method, "fp8")) {
        s = quant_fp8(r, q);
        keep |= RF_MOD_BIT(RF_MOD_ROUTER); /* DeepSeek-V3 keeps its gate in bf16 */
    } else if (!strcmp(method, "mxfp4")) {
        m->weight_dtype = rf_dtype_of(RF_MXFP4);
        keep = 0;
        if (!(s = skipped_modules(r, q, "modules_to_not_convert", &keep, &listed)) && !listed)
            keep = ~RF_MOD_BIT(RF_MOD_EXPERTS) & (RF_MOD_BIT(RF_MOD_COUNT) - 1);
        /* transformers' mxfp4 converts only the experts unless told */
    } else if (!strcmp(method, "bitsandbytes")) {
        s = quant_bnb(r, q);
        keep = RF_MOD_BIT(RF_MOD_EMBED) | RF_MOD_BIT(RF_MOD_LM_HEAD);
        if (!s)
            s = skipped_modules(r, q, "llm_int8_skip_modules", &keep, &listed);
    } else if (json_object_get(q, "bits")) {
        bool lm_head = false;
        const json_t *saved = r->cfg;
        r->cfg = q;
        s = rf__hf_bool_field(r, "lm_head", false, false, &lm_head, NULL);
        r->cfg = saved;
        if (!s)
            s = quant_int(r, q, method);
        keep |= RF_MOD_BIT(RF_MOD_ROUTER);
        if (lm_head)
            keep &= ~RF_MOD_BIT(RF_MOD_LM_HEAD);
    } else {
        return rf__hf_fail(r, RF_EINVAL,
                    "quantization_config.quant_method (%s) is not read: fp8, mxfp4, gptq, awq, "
                    "bitsandbytes, or one with bits and group_size",
                    method[0] ? method : "absent");
    }
    if (!s && strcmp(method, "mxfp4") && strcmp(method, "bitsandbytes"))
        s = skipped_modules(r, q, "modules_to_not_convert", &keep, &listed);
    if (s)
        return s;
    /* only the module classes this model has */
    if (!m->n_experts)
        keep &= ~(RF_MOD_BIT(RF_MOD_ROUTER) | RF_MOD_BIT(RF_MOD_SHARED) |
                  RF_MOD_BIT(RF_MOD_EXPERTS));
    if (!m->n_shared)
        keep &= ~RF_MOD_BIT(RF_MOD_SHARED);
    if (rf_model_moe_layers(m) == m->layers)
        keep &= ~RF_MOD_BIT(RF_MOD_MLP);
    if (m->tied) /* the lm_head streams the embedding matrix, in its dtype */
        keep = (keep & ~RF_MOD_BIT(RF_MOD_LM_HEAD)) |
               (keep & RF_MOD_BIT(RF_MOD_EMBED) ? RF_MOD_BIT(RF_MOD_LM_HEAD) : 0);
    m->unquantized_modules = keep;
    return RF_OK;
}

