/* hf_quant.c - the weights' dtype and quantization of a checkpoint
 * (rf_reader.h): torch_dtype, the quantization_config of config.json (fp8,
 * mxfp4, gptq/awq, bitsandbytes, compressed-tensors, modelopt) and NVIDIA
 * ModelOpt's hf_quant_config.json beside it; which module classes stay
 * unquantized, in every layer or in some (their lists matched exactly to
 * the model's modules by hf_quant_names.c). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "roofline/rf_dtype.h"
#include "roofline/rf_model.h"

#include "hf_internal.h"
#include "io_json.h"

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
        return rf__hf_fail(r, RF_EINVAL, "%s (%s) is not read: bfloat16, float16 or float32", key,
                           t);
    m->weight_dtype = m->unquantized_dtype = rf_dtype_of(k);
    m->has_weight_dtype = true;
    return RF_OK;
}

/* ---- lists of modules left unquantized ------------------------------- */

#define MB(x) RF_MOD_BIT(RF_MOD_##x)
/* the classes a decoder layer holds (the others are the model's: lm_head,
 * embedding) */
#define LAYER_MODS                                                                                 \
    (MB(ATTN) | MB(MLP) | MB(ROUTER) | MB(SHARED) | MB(EXPERTS) | MB(MIXER) | MB(INDEXER))

/* Match every string of q[key] (an array; absent or null: *given false)
 * into ex. field names the list in messages ("quantization_config.ignore"). */
static rf_status read_list(reader *r, const json_t *q, const char *key, const char *field,
                           rf__hf_excl *ex, bool *given)
{
    const json_t *list = json_object_get(q, key);
    if (given)
        *given = list && !json_is_null(list);
    if (!list || json_is_null(list))
        return RF_OK;
    if (!json_is_array(list))
        return rf__hf_fail(r, RF_EINVAL, "%s must be an array, not %s", field,
                           rf__hf_json_kind(list));
    for (size_t i = 0; i < json_array_size(list); i++) {
        const char *p = json_string_value(json_array_get(list, i));
        uint32_t mods;
        rf_status s;
        if (!p)
            return rf__hf_fail(r, RF_EINVAL, "%s[%zu] must be a string", field, i);
        if ((s = rf__hf_excl_match(r, ex, field, i, p, &mods)))
            return s;
    }
    return RF_OK;
}

/* "0-2, 5, 7-60" of the layers whose ex bit `mod` is set, or "" when more
 * than four runs would be listed. Returns the count of such layers. */
static int64_t layer_runs(const rf__hf_excl *ex, int64_t layers, uint32_t bit, char *out,
                          size_t cap)
{
    int64_t n = 0, runs = 0;
    size_t used = 0;
    out[0] = '\0';
    for (int64_t l = 0; l < layers; l++) {
        if (!(ex->layer[l] & bit))
            continue;
        int64_t e = l;
        while (e + 1 < layers && ex->layer[e + 1] & bit)
            e++;
        n += e - l + 1;
        if (++runs <= 4 && used < cap)
            used += (size_t)snprintf(out + used, cap - used, "%s%lld", runs > 1 ? ", " : "",
                                     (long long)l);
        if (runs <= 4 && e > l && used < cap)
            used += (size_t)snprintf(out + used, cap - used, "-%lld", (long long)e);
        l = e;
    }
    if (runs > 4)
        out[0] = '\0';
    return n;
}

/* The module classes left in unquantized_dtype: `defaults` (what the
 * method never quantizes) and the classes ex names in every layer that
 * has them go to unquantized_modules; a class named in some layers only
 * goes to those layers' unquantized_layer[] (the MTP layers' at index
 * layers + i), with a note naming them. src names the list for the note. */
static void apply_excl(reader *r, const rf__hf_excl *ex, uint32_t defaults, const char *src)
{
    rf_model *m = r->m;
    int64_t decoder = m->layers < RF_MODEL_MAX_LAYERS ? m->layers : RF_MODEL_MAX_LAYERS;
    int64_t all = m->layers + m->mtp_layers;
    if (all > RF_MODEL_MAX_LAYERS)
        all = RF_MODEL_MAX_LAYERS;
    uint32_t present = MB(EMBED) | MB(LM_HEAD), every = 0, some = 0;
    for (int64_t l = 0; l < decoder; l++)
        present |= rf__hf_layer_modules(m, l);
    for (int c = 0; c < RF_MOD_COUNT; c++) {
        uint32_t bit = RF_MOD_BIT(c);
        if (!(bit & LAYER_MODS) || !(present & bit))
            continue;
        int64_t has = 0, named = 0;
        for (int64_t l = 0; l < decoder; l++)
            if (rf__hf_layer_modules(m, l) & bit) {
                has++;
                named += (ex->layer[l] & bit) != 0;
            }
        if (named == has)
            every |= bit;
        else if (named)
            some |= bit;
    }
    uint32_t keep = (defaults | ex->global | every) & present;
    if (m->tied) /* the lm_head streams the embedding matrix, in its dtype */
        keep = (keep & ~MB(LM_HEAD)) | (keep & MB(EMBED) ? MB(LM_HEAD) : 0);
    m->unquantized_modules = keep;
    memset(m->unquantized_layer, 0, sizeof m->unquantized_layer);
    for (int64_t l = 0; l < all; l++)
        m->unquantized_layer[l] = (uint16_t)(ex->layer[l] & rf__hf_layer_modules(m, l) & ~keep);
    char d[64], runs[64], text[512];
    rf_dtype_describe(m->unquantized_dtype, d, sizeof d);
    for (int c = 0; c < RF_MOD_COUNT; c++) {
        uint32_t bit = RF_MOD_BIT(c);
        if (!(some & bit))
            continue;
        int64_t n = layer_runs(ex, decoder, bit, runs, sizeof runs);
        snprintf(text, sizeof text, "%s: %s of %lld of %lld layers%s%s%s kept in %s", src,
                 rf_module_name((rf_module)c), (long long)n, (long long)m->layers,
                 runs[0] ? " (" : "", runs, runs[0] ? ")" : "", d);
        rf__hf_note_words(m, text);
    }
    for (int c = 0; c < RF_MOD_COUNT; c++)
        if (ex->partial & (keep | some) & RF_MOD_BIT(c)) {
            snprintf(text, sizeof text,
                     "%s names single matrices of the %s: its whole class is counted in %s "
                     "in the layers named",
                     src, rf_module_name((rf_module)c), d);
            rf__hf_note_words(m, text);
        }
    bool mtp = false;
    for (int64_t l = decoder; l < all; l++)
        mtp |= m->unquantized_layer[l] != 0;
    if (mtp) {
        snprintf(text, sizeof text, "%s: parts of the MTP layers kept in %s", src, d);
        rf__hf_note_words(m, text);
    }
    if (ex->vision) {
        snprintf(text, sizeof text, "%s names the vision tower, which is not counted", src);
        rf__hf_note_words(m, text);
    }
}

/* fp8 as DeepSeek-V3 ships it: e4m3 (or e5m2) elements; weight_block_size
 * [bk, bn] blocks share one fp32 scale, counted as 4 bytes per bk x bn
 * elements; an activation_scheme makes it W8A8 (fp8 activations). */
static rf_status quant_fp8(reader *r, const json_t *q)
{
    rf_model *m = r->m;
    const char *fmt, *act;
    rf_status s;
    if ((s = rf__hf_str_field(r, q, "fmt", &fmt)) ||
        (s = rf__hf_str_field(r, q, "activation_scheme", &act)))
        return s;
    /* fmt: "e4m3" as DeepSeek-V3 writes it, or torch's "float8_e4m3fn" */
    rf_dtype d = rf_dtype_of(RF_FP8_E4M3);
    if (fmt && (rf_dtype_parse(fmt, &d, NULL) || !rf_dtype_is_fp8(d.kind)))
        return rf__hf_fail(r, RF_EINVAL,
                           "quantization_config.fmt (%s) must be e4m3, e5m2, float8_e4m3fn or "
                           "float8_e5m2",
                           fmt);
    const json_t *blk = json_object_get(q, "weight_block_size");
    if (blk && !json_is_null(blk)) {
        const json_t *a = json_array_get(blk, 0), *b = json_array_get(blk, 1);
        if (!json_is_array(blk) || json_array_size(blk) != 2 || !json_is_integer(a) ||
            !json_is_integer(b) || json_integer_value(a) < 1 || json_integer_value(b) < 1 ||
            json_integer_value(a) > (1 << 24) || json_integer_value(b) > (1 << 24) ||
            json_integer_value(a) * json_integer_value(b) > (1 << 24))
            return rf__hf_fail(
                r, RF_EINVAL,
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
    if ((s = rf__hf_int_at(r, json_object_get(q, "bits"), "quantization_config.bits", REQUIRED, 0,
                           1, &bits, NULL)))
        return s;
    if (bits != 4 && bits != 8)
        return rf__hf_fail(r, RF_EINVAL,
                           "quantization_config.bits (%lld): only 4 and 8 are modelled",
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
        return rf__hf_fail(
            r, RF_EINVAL, "quantization_config: bitsandbytes without load_in_4bit or load_in_8bit");
    if (four) {
        m->weight_dtype =
            (rf_dtype){.kind = RF_INT4, .group_size = 64, .scale_bytes = dq ? 1u : 4u};
    } else {
        m->weight_dtype = rf_dtype_of(RF_INT8);
        rf__hf_note(m, "bitsandbytes int8: per-row scales not counted");
    }
    return RF_OK;
}

/* The bytes of one scale stored in the checkpoint's own dtype (GPTQ, AWQ,
 * compressed-tensors): 2 for bf16 and fp16, 4 for fp32. */
static uint32_t model_scale_bytes(const rf_model *m)
{
    return rf_dtype_bits(m->unquantized_dtype.kind) / 8;
}

/* ---- NVIDIA ModelOpt: hf_quant_config.json, quant_method "modelopt" -- */

/* quant_algo NVFP4: fp4 e2m1 weights with an e4m3 scale per group_size 16
 * (4.5 bits a weight; the fp32 scale of each tensor, 4 bytes a matrix, is
 * not counted) and NVFP4 activations (W4A4); FP8: e4m3 weights and
 * activations with per-tensor scales (W8A8). ModelOpt leaves the
 * embedding, the lm_head and the MoE routers unquantized by default and
 * lists what else it excluded in exclude_modules (config.json's newer form
 * says ignore). f names the object in messages. */
static rf_status quant_modelopt(reader *r, const json_t *q, const char *f, rf__hf_excl *ex,
                                uint32_t *keep, bool *weights)
{
    rf_model *m = r->m;
    const char *algo, *kv;
    char field[96];
    rf_status s;
    *weights = false;
    if ((s = rf__hf_str_field(r, q, "quant_algo", &algo)) ||
        (s = rf__hf_str_field(r, q, "kv_cache_quant_algo", &kv)))
        return s;
    if (!algo && kv) { /* a KV-cache-only checkpoint: the weights stay as they are */
        rf__hf_note(m,
                    "%s.quant_algo null: weights unquantized; kv_cache_quant_algo %s: the "
                    "KV cache is counted in the dtype --kv-dtype names (bf16 by default)",
                    f, kv);
        return RF_OK;
    }
    if (!algo)
        return rf__hf_fail(r, RF_EINVAL, "%s.quant_algo is missing (NVFP4 or FP8)", f);
    *weights = true;
    int64_t group = 16;
    snprintf(field, sizeof field, "%s.group_size", f);
    if (!strcmp(algo, "NVFP4")) {
        if ((s = rf__hf_int_at(r, json_object_get(q, "group_size"), field, QUIET, 16, 1, &group,
                               NULL)))
            return s;
        if (group != 16)
            return rf__hf_fail(r, RF_EINVAL,
                               "%s (%lld): NVFP4 scales groups of 16 weights, not another size",
                               field, (long long)group);
        m->weight_dtype = m->act_dtype = rf_dtype_of(RF_NVFP4);
        rf__hf_note(m, "NVFP4: the fp32 scale of each tensor (4 bytes a matrix) not counted");
    } else if (!strcmp(algo, "FP8")) {
        m->weight_dtype = m->act_dtype = rf_dtype_of(RF_FP8_E4M3);
        rf__hf_note(m, "ModelOpt FP8: per-tensor scales (4 bytes a matrix) not counted");
    } else {
        return rf__hf_fail(r, RF_EINVAL, "%s.quant_algo (%s) is not read: NVFP4 or FP8", f, algo);
    }
    m->has_weight_dtype = m->has_act_dtype = true;
    if (kv)
        rf__hf_note(m,
                    "kv_cache_quant_algo %s: the checkpoint carries KV scales; the KV cache "
                    "is counted in the dtype --kv-dtype names (bf16 by default)",
                    kv);
    *keep = MB(EMBED) | MB(LM_HEAD) | MB(ROUTER);
    bool given;
    snprintf(field, sizeof field, "%s.exclude_modules", f);
    if ((s = read_list(r, q, "exclude_modules", field, ex, &given)) || given)
        return s;
    snprintf(field, sizeof field, "%s.ignore", f);
    return read_list(r, q, "ignore", field, ex, NULL);
}

/* ---- compressed-tensors (llm-compressor) ----------------------------- */

/* One quantization_args object: num_bits, type, strategy, group_size,
 * block_structure, symmetric. weights: the storage dtype of the weights;
 * else the activations' (their scales are computed, not stored). */
static rf_status ct_args(reader *r, const json_t *a, const char *f, const char *format,
                         bool weights, rf_dtype *out)
{
    rf_model *m = r->m;
    char field[128];
    const char *type, *strategy;
    int64_t bits, group = 0;
    rf_status s;
    if (!json_is_object(a))
        return rf__hf_fail(r, RF_EINVAL, "%s must be an object, not %s", f, rf__hf_json_kind(a));
    snprintf(field, sizeof field, "%s.num_bits", f);
    if ((s = rf__hf_int_at(r, json_object_get(a, "num_bits"), field, REQUIRED, 0, 1, &bits,
                           NULL)) ||
        (s = rf__hf_str_field(r, a, "type", &type)) ||
        (s = rf__hf_str_field(r, a, "strategy", &strategy)))
        return s;
    type = type ? type : "int";
    strategy = strategy ? strategy : "tensor";
    const json_t *g = json_object_get(a, "group_size");
    snprintf(field, sizeof field, "%s.group_size", f);
    if (g && !json_is_null(g) && (s = rf__hf_int_at(r, g, field, OPTIONAL, 0, 1, &group, NULL)))
        return s;
    bool is_float = !strcmp(type, "float");
    if (!is_float && strcmp(type, "int"))
        return rf__hf_fail(r, RF_EINVAL, "%s.type (%s) must be int or float", f, type);
    rf_dtype d;
    if (is_float && bits == 4) {
        if (group != 16 && group != 32)
            return rf__hf_fail(r, RF_EINVAL,
                               "%s: 4-bit floats with group_size %lld are not read (16: "
                               "nvfp4, 32: mxfp4)",
                               f, (long long)group);
        d = rf_dtype_of(group == 16 ? RF_NVFP4 : RF_MXFP4);
        *out = d;
        return RF_OK;
    } else if (is_float && bits == 8) {
        d = rf_dtype_of(RF_FP8_E4M3);
    } else if (!is_float && (bits == 4 || bits == 8)) {
        d = rf_dtype_of(bits == 4 ? RF_INT4 : RF_INT8);
    } else {
        return rf__hf_fail(r, RF_EINVAL, "%s: %lld-bit %s is not read (int4, int8, fp8, fp4)", f,
                           (long long)bits, type);
    }
    if (!weights) {
        *out = d;
        return RF_OK;
    }
    if (bits == 4 && format && !strcmp(format, "naive-quantized"))
        return rf__hf_fail(r, RF_EINVAL,
                           "%s: format naive-quantized keeps 4-bit values one a byte; not read", f);
    /* scale_dtype (newer compressed-tensors) names the scales' dtype; absent
     * or null, they are stored in the checkpoint's own */
    const char *sd;
    if ((s = rf__hf_str_field(r, a, "scale_dtype", &sd)))
        return s;
    uint32_t scale = model_scale_bytes(m);
    if (sd) {
        rf_dtype sdt;
        if (rf_dtype_parse(!strncmp(sd, "torch.", 6) ? sd + 6 : sd, &sdt, NULL) == RF_OK)
            scale = rf_dtype_bits(sdt.kind) / 8;
        else if (!strcmp(sd, "torch.uint8") || !strcmp(sd, "uint8"))
            scale = 1;
        else
            return rf__hf_fail(r, RF_EINVAL, "%s.scale_dtype (%s) is not read", f, sd);
    }
    const json_t *blk = json_object_get(a, "block_structure");
    if (!strcmp(strategy, "group") || !strcmp(strategy, "tensor_group")) {
        if (!group || group > (1 << 24))
            return rf__hf_fail(r, RF_EINVAL, "%s.group_size must be 1..16777216 for strategy %s", f,
                               strategy);
        d.group_size = (uint32_t)group;
        d.scale_bytes = scale;
    } else if (!strcmp(strategy, "block")) {
        const json_t *x = json_array_get(blk, 0), *y = json_array_get(blk, 1);
        if (!json_is_array(blk) || json_array_size(blk) != 2 || !json_is_integer(x) ||
            !json_is_integer(y) || json_integer_value(x) < 1 || json_integer_value(y) < 1 ||
            json_integer_value(x) > 4096 || json_integer_value(y) > 4096)
            return rf__hf_fail(r, RF_EINVAL,
                               "%s.block_structure must be two integers 1..4096 for strategy "
                               "block",
                               f);
        d.group_size = (uint32_t)(json_integer_value(x) * json_integer_value(y));
        d.block_rows = (uint32_t)json_integer_value(x);
        d.scale_bytes = scale;
    } else if (!strcmp(strategy, "channel") || !strcmp(strategy, "tensor")) {
        rf__hf_note(m, "compressed-tensors %s scales (one a %s) not counted", strategy,
                    strategy[0] == 'c' ? "row" : "matrix");
    } else {
        return rf__hf_fail(r, RF_EINVAL,
                           "%s.strategy (%s) is not read: tensor, channel, group, block", f,
                           strategy);
    }
    const json_t *sym = json_object_get(a, "symmetric");
    if (json_is_false(sym) && !rf_dtype_is_fp8(d.kind))
        rf__hf_note(m, "compressed-tensors asymmetric %s: zero points not counted",
                    rf_dtype_name(d.kind));
    *out = d;
    return RF_OK;
}

static bool object_empty(const json_t *o)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        (void)k;
        (void)v;
        return false;
    }
    return true;
}

/* Formats whose stored bits the weights' num_bits give. */
static const char *const ct_formats[] = {
    "pack-quantized",       "int-quantized",        "float-quantized", "naive-quantized",
    "nvfp4-pack-quantized", "mxfp4-pack-quantized", "mixed-precision"};

/* config_groups: every group's weights (and input_activations) must give
 * one dtype; its targets ("Linear": every linear layer, or module names)
 * are quantized, everything else and the ignore list stays unquantized. */
static rf_status quant_ct(reader *r, const json_t *q, rf__hf_excl *ex, uint32_t *keep)
{
    rf_model *m = r->m;
    const char *format;
    rf_status s;
    if ((s = rf__hf_str_field(r, q, "format", &format)))
        return s;
    bool known = !format;
    for (size_t i = 0; format && i < sizeof ct_formats / sizeof ct_formats[0]; i++)
        known |= !strcmp(format, ct_formats[i]);
    if (!known)
        return rf__hf_fail(r, RF_EINVAL,
                           "quantization_config.format (%s) is not read: pack-quantized, "
                           "int-quantized, float-quantized, naive-quantized, "
                           "nvfp4-pack-quantized, mxfp4-pack-quantized",
                           format);
    const json_t *sp = json_object_get(q, "sparsity_config");
    const char *sfmt = json_string_value(json_object_get(sp, "format"));
    if (sfmt && strcmp(sfmt, "dense"))
        return rf__hf_fail(r, RF_EINVAL,
                           "quantization_config.sparsity_config.format (%s): sparse storage is "
                           "not read",
                           sfmt);
    const json_t *groups = json_object_get(q, "config_groups");
    if (!json_is_object(groups) || object_empty(groups))
        return rf__hf_fail(r, RF_EINVAL,
                           "quantization_config.quant_method (compressed-tensors) without "
                           "config_groups: the weights' scheme is missing");
    rf__hf_excl targ;
    memset(&targ, 0, sizeof targ);
    bool linear = false, first = true;
    rf_dtype w = {0}, a = {0};
    bool has_a = false;
    const char *name;
    const json_t *grp;
    json_object_foreach((json_t *)groups, name, grp)
    {
        char f[160];
        rf_dtype gw, ga = {0};
        snprintf(f, sizeof f, "quantization_config.config_groups.%s", name);
        if (!json_is_object(grp))
            return rf__hf_fail(r, RF_EINVAL, "%s must be an object", f);
        char fw[192];
        snprintf(fw, sizeof fw, "%s.weights", f);
        if ((s = ct_args(r, json_object_get(grp, "weights"), fw, format, true, &gw)))
            return s;
        const json_t *in = json_object_get(grp, "input_activations");
        bool gin = in && !json_is_null(in);
        snprintf(fw, sizeof fw, "%s.input_activations", f);
        if (gin && (s = ct_args(r, in, fw, format, false, &ga)))
            return s;
        if (!first && (memcmp(&gw, &w, sizeof w) || gin != has_a || (gin && ga.kind != a.kind)))
            return rf__hf_fail(r, RF_EINVAL,
                               "%s: a second scheme beside another group's; one weights dtype "
                               "a checkpoint is modelled",
                               f);
        first = false;
        w = gw;
        a = ga;
        has_a = gin;
        const json_t *t = json_object_get(grp, "targets");
        if (!json_is_array(t))
            return rf__hf_fail(r, RF_EINVAL, "%s.targets must be an array", f);
        for (size_t i = 0; i < json_array_size(t); i++) {
            const char *p = json_string_value(json_array_get(t, i));
            uint32_t mods;
            snprintf(fw, sizeof fw, "%s.targets", f);
            if (!p)
                return rf__hf_fail(r, RF_EINVAL, "%s[%zu] must be a string", fw, i);
            if (!strcmp(p, "Linear"))
                linear = true;
            else if ((s = rf__hf_excl_match(r, &targ, fw, i, p, &mods)))
                return s;
        }
    }
    m->weight_dtype = w;
    if (has_a) {
        m->act_dtype = a;
        m->has_act_dtype = true;
    }
    if ((s = read_list(r, q, "ignore", "quantization_config.ignore", ex, NULL)))
        return s;
    if (!linear) { /* only the targets are quantized */
        int64_t all = m->layers + m->mtp_layers;
        for (int64_t l = 0; l < all && l < RF_MODEL_MAX_LAYERS; l++)
            ex->layer[l] |= (uint16_t)(rf__hf_layer_modules(m, l) & ~targ.layer[l]);
        ex->global |= MB(LM_HEAD) & ~targ.global;
    }
    const json_t *kvs = json_object_get(q, "kv_cache_scheme");
    if (kvs && !json_is_null(kvs))
        rf__hf_note(m, "kv_cache_scheme: the checkpoint carries KV scales; the KV cache is "
                       "counted in the dtype --kv-dtype names (bf16 by default)");
    /* an Embedding is not a Linear; most families' routers are not either
     * (DeepSeek's, GLM's, gpt-oss'), and vLLM builds every router
     * unquantized, so a checkpoint that serves keeps it so */
    *keep = MB(EMBED) | MB(ROUTER);
    return RF_OK;
}

/* ---- quantization_config ---------------------------------------------- */

static const char methods[] = "fp8, fbgemm_fp8, mxfp4, gptq, awq, bitsandbytes, "
                              "compressed-tensors, modelopt, or one with bits and group_size";

rf_status rf__hf_read_quant(reader *r)
{
    rf_model *m = r->m;
    const json_t *q = rf__hf_field(r, "quantization_config", true);
    rf_status s;
    if (!q || json_is_null(q))
        return RF_OK;
    if (!json_is_object(q))
        return rf__hf_fail(r, RF_EINVAL, "quantization_config must be an object, not %s",
                           rf__hf_json_kind(q));
    const char *method;
    if ((s = rf__hf_str_field(r, q, "quant_method", &method)))
        return s;
    if (!method)
        method = json_object_get(q, "bits") ? "gptq" : "";
    static const rf__hf_excl ex_zero;
    rf__hf_excl ex = ex_zero;
    /* what stays in the torch_dtype unless the config names the modules */
    uint32_t keep = MB(EMBED) | MB(LM_HEAD);
    bool listed = false;
    const char *list = "quantization_config.modules_to_not_convert";
    if (!strcmp(method, "fp8")) {
        s = quant_fp8(r, q);
        keep |= MB(ROUTER); /* DeepSeek-V3 keeps its gate in bf16 */
    } else if (!strcmp(method, "fbgemm_fp8")) {
        /* Meta's FP8 (Llama-4 Maverick): e4m3 weights with an fp32 scale a
         * row, activations quantized per token at run time (W8A8) */
        m->weight_dtype = m->act_dtype = rf_dtype_of(RF_FP8_E4M3);
        m->has_act_dtype = true;
        rf__hf_note(m, "fbgemm_fp8: one fp32 scale a row not counted");
        keep |= MB(ROUTER);
    } else if (!strcmp(method, "mxfp4")) {
        m->weight_dtype = rf_dtype_of(RF_MXFP4);
        keep = 0;
        if (!(s = read_list(r, q, "modules_to_not_convert", list, &ex, &listed)) && !listed)
            keep = ~MB(EXPERTS) & (RF_MOD_BIT(RF_MOD_COUNT) - 1);
        /* transformers' mxfp4 converts only the experts unless told */
    } else if (!strcmp(method, "bitsandbytes")) {
        s = quant_bnb(r, q);
        list = "quantization_config.llm_int8_skip_modules";
        if (!s)
            s = read_list(r, q, "llm_int8_skip_modules", list, &ex, &listed);
    } else if (!strcmp(method, "compressed-tensors")) {
        s = quant_ct(r, q, &ex, &keep);
        list = "quantization_config.ignore";
    } else if (!strcmp(method, "modelopt")) {
        const json_t *inner = json_object_get(q, "quantization");
        bool weights;
        s = quant_modelopt(r, json_is_object(inner) ? inner : q,
                           json_is_object(inner) ? "quantization_config.quantization"
                                                 : "quantization_config",
                           &ex, &keep, &weights);
        list = "quantization_config";
        if (!s && !weights)
            return RF_OK;
    } else if (json_object_get(q, "bits")) {
        bool lm_head = false;
        const json_t *saved = r->cfg;
        r->cfg = q;
        s = rf__hf_bool_field(r, "lm_head", false, false, &lm_head, NULL);
        r->cfg = saved;
        if (!s)
            s = quant_int(r, q, method);
        keep |= MB(ROUTER);
        if (lm_head)
            keep &= ~MB(LM_HEAD);
    } else {
        return rf__hf_fail(r, RF_EINVAL, "quantization_config.quant_method (%s) is not read: %s",
                           method[0] ? method : "absent", methods);
    }
    if (!s &&
        (!strcmp(method, "fp8") || !strcmp(method, "fbgemm_fp8") || json_object_get(q, "bits")) &&
        strcmp(method, "bitsandbytes"))
        s = read_list(r, q, "modules_to_not_convert", list, &ex, &listed);
    if (s)
        return s;
    apply_excl(r, &ex, keep, list);
    return RF_OK;
}

/* ---- hf_quant_config.json -------------------------------------------- */

static rf_status parse_sidecar(const char *text, size_t len, const char *origin, void *out,
                               rf_err *err)
{
    reader *r = out;
    rf_model *m = r->m;
    json_t *root = NULL;
    rf_status s = rf__json_parse(text, len, origin, &root, err);
    if (s)
        return s;
    const char *saved = r->origin;
    r->origin = origin;
    const json_t *q = json_object_get(root, "quantization");
    rf_dtype before = m->weight_dtype;
    bool quantized = m->has_weight_dtype && before.kind != m->unquantized_dtype.kind;
    static const rf__hf_excl ex_zero;
    rf__hf_excl ex = ex_zero;
    uint32_t keep = 0;
    bool weights = false;
    if (!json_is_object(q))
        s = rf__hf_fail(r, RF_EINVAL, "quantization must be an object, not %s",
                        q ? rf__hf_json_kind(q) : "missing");
    else
        s = quant_modelopt(r, q, "quantization", &ex, &keep, &weights);
    if (!s && weights && quantized && before.kind != m->weight_dtype.kind)
        s = rf__hf_fail(r, RF_EINVAL,
                        "quantization.quant_algo gives %s weights but config.json's "
                        "quantization_config gives %s",
                        rf_dtype_name(m->weight_dtype.kind), rf_dtype_name(before.kind));
    if (!s && weights)
        apply_excl(r, &ex, keep, "hf_quant_config.json exclude_modules");
    r->origin = saved;
    json_decref(root);
    return s;
}

rf_status rf__hf_read_sidecars(reader *r, const char *dir)
{
    char path[4096];
    struct stat st;
    size_t n = strlen(dir);
    if (n + sizeof "/hf_quant_config.json" > sizeof path)
        return rf__hf_fail(r, RF_EINVAL, "%s: path too long", dir);
    snprintf(path, sizeof path, "%s%shf_quant_config.json", dir, n && dir[n - 1] != '/' ? "/" : "");
    if (stat(path, &st) != 0)
        return RF_OK;
    return rf__json_load(path, parse_sidecar, r, r->err);
}
