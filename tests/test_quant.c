/* test_quant.c - quantization read from the checkpoint: the fp4 dtypes
 * (rf_dtype.h), their peaks (rf_hw.h), NVIDIA ModelOpt's
 * hf_quant_config.json and the quantization_config methods of config.json
 * (fp8, compressed-tensors, modelopt), and the exclude / ignore lists
 * matched exactly to the model's modules, per layer.
 *
 * The checkpoints live in tests/data/models (RF_MODELS_DIR; its README gives
 * each file's source and commit). Every expected byte count carries its
 * derivation from the config's fields.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_reader.h"
#include "roofline/rf_step.h"

#define MB(x) RF_MOD_BIT(RF_MOD_##x)

/* Large structs live here, not on the stack. */
static rf_model m;

static void load(const char *name)
{
    char path[1024];
    rf_err e;
    snprintf(path, sizeof path, "%s/%s", RF_MODELS_DIR, name);
    if (rf_model_load(path, &m, &e))
        fail_msg("%s: %s", path, e.msg);
}

/* The resident bytes of every weight in the checkpoint's own dtypes. */
static uint64_t weight_bytes(const rf_model *md)
{
    rf_step_opts o = rf_step_opts_for_model(md);
    uint64_t b = 0;
    rf_err e;
    if (rf_model_weight_bytes(md, &o, &b, &e))
        fail_msg("%s: %s", md->name, e.msg);
    return b;
}

/* A config.json in memory: the file `name` with its quantization_config
 * replaced by `quant` (JSON text). Returns the reader's status, e its
 * message. */
static rf_status parse_with(const char *name, const char *quant, rf_err *e)
{
    char path[1024];
    json_error_t je;
    snprintf(path, sizeof path, "%s/%s", RF_MODELS_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    /* Nemotron-H's bare Infinity (not JSON; the reader takes it as null)
     * becomes a null jansson parses: "Infinity" -> "null    " */
    for (char *p = text; (p = memmem(p, n - (size_t)(p - text), "Infinity", 8)); p += 8)
        memcpy(p, "null    ", 8);
    json_t *root = json_loadb(text, n, 0, &je);
    json_t *q = json_loadb(quant, strlen(quant), 0, &je);
    if (!root || !q)
        fail_msg("bad test JSON: %s", je.text);
    json_object_set_new(root, "quantization_config", q);
    char *out = json_dumps(root, 0);
    json_decref(root);
    rf_status s = rf_model_parse(out, strlen(out), name, &m, e);
    free(out);
    return s;
}

static void parse_ok(const char *name, const char *quant)
{
    rf_err e;
    if (parse_with(name, quant, &e))
        fail_msg("%s: %s", name, e.msg);
}

static void parse_refused(const char *name, const char *quant, const char *says)
{
    rf_err e;
    assert_int_equal(parse_with(name, quant, &e), RF_EINVAL);
    if (!strstr(e.msg, says))
        fail_msg("got '%s', want '%s'", e.msg, says);
}

/* ---- the fp4 dtypes --------------------------------------------------- */

static void test_fp4_dtypes(void **state)
{
    (void)state;
    rf_dtype d;
    uint64_t b;
    char text[64];
    /* nvfp4: e2m1 elements, one e4m3 scale a 16: 16 -> 8 + 1 bytes, 4.5
     * bits an element */
    assert_int_equal(rf_dtype_parse("nvfp4", &d, NULL), RF_OK);
    assert_int_equal(d.kind, RF_NVFP4);
    assert_int_equal(d.group_size, 16);
    assert_int_equal(d.scale_bytes, 1);
    assert_string_equal(rf_dtype_name(RF_NVFP4), "nvfp4");
    assert_int_equal(rf_dtype_bytes(d, 16, &b, NULL), RF_OK);
    assert_int_equal(b, 9);
    assert_int_equal(rf_dtype_bytes(d, 17, &b, NULL), RF_OK);
    assert_int_equal(b, 9 + 2); /* ceil(17 x 4 / 8) = 9, two groups */
    assert_float_equal(rf_dtype_bytes_per_elem(d), 4.5 / 8, 1e-15);
    assert_string_equal(rf_dtype_describe(d, text, sizeof text), "nvfp4 (group 16, 1-byte scales)");
    /* mxfp4 unchanged: 32 -> 16 + 1 */
    assert_int_equal(rf_dtype_parse("mxfp4", &d, NULL), RF_OK);
    assert_int_equal(rf_dtype_bytes(d, 32, &b, NULL), RF_OK);
    assert_int_equal(b, 17);
    /* fp4 formats take no :g suffix; torch's fp8 spelling is fp8_e4m3 */
    assert_int_equal(rf_dtype_parse("nvfp4:g32", &d, NULL), RF_EINVAL);
    assert_int_equal(rf_dtype_parse("float8_e4m3fn", &d, NULL), RF_OK);
    assert_int_equal(d.kind, RF_FP8_E4M3);
    /* W4A4 computes in its own format; fp4 weights against bf16
     * activations dequantize into bf16 */
    rf_dtype nv = rf_dtype_of(RF_NVFP4), mx = rf_dtype_of(RF_MXFP4);
    rf_dtype bf = rf_dtype_of(RF_BF16);
    assert_int_equal(rf_dtype_math(nv, nv), RF_NVFP4);
    assert_int_equal(rf_dtype_math(mx, mx), RF_MXFP4);
    assert_int_equal(rf_dtype_math(nv, bf), RF_BF16);
    assert_int_equal(rf_dtype_math(mx, nv), RF_BF16);
}

/* fp4 peaks: Blackwell runs both formats at one rate; MI355X runs mxfp4
 * only; a part without one falls back to bf16 (fp8 cannot hold an e2m1
 * value times its e4m3 or e8m0 scale), never to the other fp4 format. */
static void test_fp4_peaks(void **state)
{
    (void)state;
    rf_hw hw;
    rf_roof roof;
    /* HGX B200 spec sheet: fp4 18 PF with sparsity, 9 dense */
    assert_int_equal(rf_hw_preset("b200", &hw, NULL), RF_OK);
    assert_int_equal(rf_hw_roof_for(&hw, RF_NVFP4, true, &roof, NULL), RF_OK);
    assert_float_equal(roof.peak_flops_per_s, 9000e12, 1);
    assert_int_equal(rf_hw_roof_for(&hw, RF_MXFP4, true, &roof, NULL), RF_OK);
    assert_float_equal(roof.peak_flops_per_s, 9000e12, 1);
    /* MI355X: 256 CUs x 16,384 mxfp4 FLOP a clock x 2.4 GHz = 10,066.3 T */
    assert_int_equal(rf_hw_preset("mi355x", &hw, NULL), RF_OK);
    assert_int_equal(rf_hw_roof_for(&hw, RF_MXFP4, true, &roof, NULL), RF_OK);
    assert_float_equal(roof.peak_flops_per_s, 10066.3e12, 1);
    assert_int_equal(rf_hw_roof_for(&hw, RF_NVFP4, true, &roof, NULL), RF_EUNAVAIL);
    assert_int_equal(rf_hw_roof_for(&hw, RF_NVFP4, false, &roof, NULL), RF_OK);
    assert_int_equal(roof.math, RF_BF16);
    assert_true(roof.math_fallback);
    /* the H100 has no fp4: bf16's 989.4, not fp8's 1978.9 */
    assert_int_equal(rf_hw_preset("h100-sxm", &hw, NULL), RF_OK);
    assert_int_equal(rf_hw_roof_for(&hw, RF_NVFP4, false, &roof, NULL), RF_OK);
    assert_int_equal(roof.math, RF_BF16);
    assert_float_equal(roof.peak_flops_per_s, 989.4e12, 1);
    /* every new preset carries its source, and an fp4 column where the part
     * has one */
    static const struct {
        const char *name;
        double fp4_tflops;
    } parts[] = {
        {"h20", 0},       {"h800", 0},        {"b300", 13125},        {"gb200", 10000},
        {"gb300", 15000}, {"rtx-5090", 1676}, {"rtx-pro-6000", 2000}, {"l4", 0},
        {"mi325x", 0},    {"tpu-v6e", 0},     {"gaudi3", 0},          {"apple-m4-max", 0},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        assert_int_equal(rf_hw_preset(parts[i].name, &hw, NULL), RF_OK);
        assert_true(hw.source[0] && hw.bw_bytes_per_s > 0 && hw.mem_stated_gb > 0);
        assert_int_equal(rf_hw_validate(&hw, NULL), RF_OK);
        assert_float_equal(hw.peak_flops_per_s[RF_NVFP4], parts[i].fp4_tflops * 1e12, 1);
    }
    /* GB200 and GB300 are one GPU of an NVL72: 72 GPUs on one NVLink domain */
    assert_int_equal(rf_hw_preset("gb300", &hw, NULL), RF_OK);
    assert_int_equal(hw.links.devices_per_node, 72);
}

/* ---- hf_quant_config.json -------------------------------------------- */

/* Qwen3-32B with nvidia/Qwen3-32B-NVFP4's hf_quant_config.json: NVFP4,
 * exclude_modules ["lm_head"]. H 5120, 64 layers, 64 / 8 heads of 128,
 * F 25600, V 151,936, untied.
 *   attention a layer: q 5120 x 8192 41,943,040 + k, v 5120 x 1024
 *     5,242,880 each + o 41,943,040 = 94,371,840; x 64 = 6,039,797,760
 *   MLP a layer: 3 x 5120 x 25600 = 393,216,000; x 64 = 25,165,824,000
 *   nvfp4, 4.5 bits a weight: 31,205,621,760 x 9 / 16 = 17,553,162,240
 *   lm_head and embedding, bf16: 2 x 151,936 x 5120 x 2 = 3,111,649,280
 *   packed bytes: 20,664,811,520 */
static void test_nvfp4_sidecar(void **state)
{
    (void)state;
    load("qwen3-32b-nvfp4");
    assert_int_equal(m.weight_dtype.kind, RF_NVFP4);
    assert_true(m.has_weight_dtype && m.has_act_dtype);
    assert_int_equal(m.act_dtype.kind, RF_NVFP4); /* W4A4 */
    assert_int_equal(m.unquantized_modules, MB(LM_HEAD) | MB(EMBED));
    assert_int_equal(m.unquantized_dtype.kind, RF_BF16);
    assert_int_equal(weight_bytes(&m), 20664811520ull);
    assert_non_null(strstr(m.notes, "kv_cache_quant_algo FP8"));
    /* the same shapes read without the sidecar: bf16, 2 x 32,761,446,400 */
    load("qwen3-32b.json");
    assert_int_equal(m.unquantized_modules, 0);
    assert_int_equal(weight_bytes(&m), 2 * 32761446400ull);
}

/* Qwen3-30B-A3B-NVFP4 excludes every layer's router (mlp.gate of all 48)
 * and the lm_head: the router class whole, in unquantized_modules.
 *   attention 48 x (2048 x 4096 + 2 x 2048 x 512 + 4096 x 2048) =
 *     905,969,664; experts 48 x 128 x 3 x 2048 x 768 = 28,991,029,248;
 *     nvfp4: 29,896,998,912 x 9 / 16 = 16,817,061,888
 *   router 48 x 2048 x 128 = 12,582,912, lm_head and embedding 151,936 x
 *     2048 = 311,164,928 each, bf16: 634,912,768 x 2 = 1,269,825,536
 *   packed bytes: 18,086,887,424 */
static void test_nvfp4_router_excluded(void **state)
{
    (void)state;
    load("qwen3-30b-a3b-nvfp4");
    assert_int_equal(m.unquantized_modules, MB(ROUTER) | MB(LM_HEAD) | MB(EMBED));
    for (int l = 0; l < 48; l++)
        assert_int_equal(m.unquantized_layer[l], 0);
    assert_int_equal(weight_bytes(&m), 18086887424ull);
}

/* DeepSeek-V3-0324-NVFP4's 245 entries: self_attn* of all 61 layers, the
 * router of the 58 MoE layers, norms (modules without a matrix), the
 * embedding, the lm_head, model.norm and "model.layers.61*", the MTP layer.
 * The dense MLP of layers 0-2 and every expert stay nvfp4. */
static void test_nvfp4_deepseek_excludes(void **state)
{
    (void)state;
    load("deepseek-v3-0324-nvfp4");
    assert_int_equal(m.mtp_layers, 1);
    assert_int_equal(m.unquantized_modules, MB(ATTN) | MB(ROUTER) | MB(LM_HEAD) | MB(EMBED));
    for (int l = 0; l < 61; l++)
        assert_int_equal(m.unquantized_layer[l], 0);
    /* the MTP layer: what the global classes leave, its experts */
    assert_int_equal(m.unquantized_layer[61], MB(SHARED) | MB(EXPERTS));
    rf_dtype w = m.weight_dtype;
    assert_int_equal(rf_model_module_dtype(&m, RF_MOD_MLP, w, false).kind, RF_NVFP4);
    assert_int_equal(rf_model_module_dtype(&m, RF_MOD_EXPERTS, w, false).kind, RF_NVFP4);
    assert_int_equal(rf_model_module_dtype(&m, RF_MOD_ATTN, w, false).kind, RF_BF16);

    /* The resident bytes honour the MTP layer's exclusions (they were
     * counted nvfp4 before). H 7168, moe_intermediate_size 2048, 256 routed
     * experts and 1 shared, 3 matrices: one layer's shared expert
     * 3 x 7168 x 2048 = 44,040,192, its routed experts 256 x 44,040,192 =
     * 11,274,289,152; 58 MoE decoder layers (61 - first_k_dense_replace 3)
     * and the MTP layer.
     *   bf16 everywhere: attention 11,703,287,808 (62 x MLA 187,105,280 +
     *     the MTP eh_proj 2 x 7168^2 = 102,760,448), router 59 x 7168 x 256
     *     = 108,265,472, lm_head and embed 2 x 129,280 x 7168 =
     *     1,853,358,080: 13,664,911,360 x 2 = 27,329,822,720
     *   nvfp4 (x 9/16): dense MLP 3 x 3 x 7168 x 18432 = 1,189,085,184 +
     *     58 x 44,040,192 + 58 x 11,274,289,152 = 657,652,187,136
     *     -> 369,929,355,264
     *   bf16, the MTP layer's experts: 44,040,192 + 11,274,289,152 =
     *     11,318,329,344 -> 22,636,658,688
     *   = 419,895,836,672 (was 403,625,738,240, those 11,318,329,344 at
     *   9/16: 6,366,560,256 bytes; the change is +16,270,098,432) */
    assert_int_equal(weight_bytes(&m), 419895836672ull);
    rf_param_counts p;
    rf_err e;
    assert_int_equal(rf_model_params(&m, &p, &e), RF_OK);
    assert_int_equal(p.by_module_unquantized[RF_MOD_EXPERTS], 11274289152ull);
    assert_int_equal(p.by_module_unquantized[RF_MOD_SHARED], 44040192ull);
    assert_int_equal(p.by_module_unquantized[RF_MOD_ATTN], 0);

    /* --draft mtp: the draft's layer is the MTP layer, its exclusions with
     * it: MLA 187,105,280 (no eh_proj in the draft), router 7168 x 256 =
     * 1,835,008, the experts 11,318,329,344, lm_head and embed
     * 1,853,358,080, all bf16: 13,360,627,712 x 2 = 26,721,255,424 */
    static rf_model draft;
    assert_int_equal(rf_model_mtp_draft(&m, &draft, &e), RF_OK);
    assert_int_equal(draft.unquantized_layer[0], MB(SHARED) | MB(EXPERTS));
    assert_int_equal(weight_bytes(&draft), 26721255424ull);
}

/* An exclude list that names no module of the model is refused, naming
 * the entry: Qwen3-32B has layers 0-63. */
static void test_exclude_names_no_module(void **state)
{
    (void)state;
    char path[1024];
    rf_err e;
    snprintf(path, sizeof path, "%s/bad-exclude-nvfp4", RF_MODELS_DIR);
    assert_int_equal(rf_model_load(path, &m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "hf_quant_config.json: quantization.exclude_modules[1] "
                                  "'model.layers.64.mlp' names no module of this model"));
}

/* ---- config.json's quantization_config -------------------------------- */

/* GLM-5-FP8's modules_to_not_convert (712 entries, reconstructed in
 * tests/data/models/glm-5-fp8): every norm, the router and its
 * e_score_correction_bias, the indexer's weights_proj (spelled
 * "self_attn.indexers_proj") and k_norm, the embedding, the lm_head and the
 * MTP layer's parts. Only the router and the indexer leave fp8: the
 * attention and the dense MLP stay fp8 (128 x 128 blocks). */
static void test_glm5_fp8_ignore(void **state)
{
    (void)state;
    load("glm-5-fp8");
    assert_int_equal(m.weight_dtype.kind, RF_FP8_E4M3);
    assert_int_equal(m.weight_dtype.group_size, 128 * 128);
    assert_int_equal(m.unquantized_modules, MB(ROUTER) | MB(INDEXER) | MB(LM_HEAD) | MB(EMBED));
    for (int l = 0; l < 78; l++)
        assert_int_equal(m.unquantized_layer[l], 0);
    rf_dtype w = m.weight_dtype;
    assert_int_equal(rf_model_module_dtype(&m, RF_MOD_ATTN, w, false).kind, RF_FP8_E4M3);
    assert_int_equal(rf_model_module_dtype(&m, RF_MOD_MLP, w, false).kind, RF_FP8_E4M3);
    assert_int_equal(rf_model_module_dtype(&m, RF_MOD_INDEXER, w, false).kind, RF_BF16);
    /* indexers_proj is one of the indexer's three matrices (wq_b and wk stay
     * fp8 in the checkpoint): the class is kept whole, and the notes say so */
    assert_non_null(strstr(m.notes, "modules_to_not_convert names single matrices of the "
                                    "indexer: its whole class is counted in bf16"));
}

/* Kimi-K2-Thinking: compressed-tensors int4, group 32, bf16 scales, with
 * the ignore list ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
 * "re:.*mlp\.(gate|up|gate_up|down)_proj.*"]: only the routed experts are
 * int4 (the regexes name attention, the shared expert and layer 0's dense
 * MLP; mlp.experts.N.gate_proj is not mlp.gate_proj).
 *   experts 60 x 384 x 3 x 7168 x 2048 = 1,014,686,023,680 x (1/2 + 2/32)
 *     = 570,760,888,320
 *   bf16: attention 61 x 101,122,048 (q_a 7168 x 1536, q_b 1536 x 64 x 192,
 *     kv_a 7168 x 576, kv_b 512 x 64 x 256, o 64 x 128 x 7168) =
 *     6,168,444,928; dense MLP 3 x 7168 x 18432 = 396,361,728; router 60 x
 *     7168 x 384 = 165,150,720; shared 60 x 3 x 7168 x 2048 =
 *     2,642,411,520; embedding and lm_head 2 x 163,840 x 7168 =
 *     2,348,810,240: 11,721,179,136 x 2 = 23,442,358,272
 *   packed bytes: 594,203,246,592 */
static void test_compressed_tensors_int4(void **state)
{
    (void)state;
    load("kimi-k2-thinking");
    assert_int_equal(m.weight_dtype.kind, RF_INT4);
    assert_int_equal(m.weight_dtype.group_size, 32);
    assert_int_equal(m.weight_dtype.scale_bytes, 2);
    assert_false(m.has_act_dtype); /* weight-only */
    assert_int_equal(m.unquantized_modules,
                     MB(ATTN) | MB(MLP) | MB(ROUTER) | MB(SHARED) | MB(LM_HEAD) | MB(EMBED));
    assert_int_equal(weight_bytes(&m), 594203246592ull);
}

/* llm-compressor's W4A16 (int4, group 128), FP8_DYNAMIC (fp8 per channel,
 * fp8 activations per token) and FP8_BLOCK (128 x 128) on Qwen3-32B:
 *   W4A16: 31,205,621,760 x (1/2 + 2/128) = 16,090,398,720, lm_head and
 *   embedding bf16 3,111,649,280: 19,202,048,000
 *   FP8_DYNAMIC: 31,205,621,760 + 3,111,649,280 = 34,317,271,040 (a scale
 *   a row not counted, as the note says) */
static void test_compressed_tensors_schemes(void **state)
{
    (void)state;
    parse_ok("qwen3-32b.json",
             "{\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\","
             " \"config_groups\": {\"group_0\": {\"targets\": [\"Linear\"],"
             " \"weights\": {\"num_bits\": 4, \"type\": \"int\", \"symmetric\": true,"
             " \"strategy\": \"group\", \"group_size\": 128}, \"input_activations\": null}},"
             " \"ignore\": [\"lm_head\"]}");
    assert_int_equal(m.weight_dtype.kind, RF_INT4);
    assert_int_equal(m.weight_dtype.group_size, 128);
    assert_int_equal(weight_bytes(&m), 19202048000ull);

    parse_ok("qwen3-32b.json",
             "{\"quant_method\": \"compressed-tensors\", \"format\": \"float-quantized\","
             " \"config_groups\": {\"group_0\": {\"targets\": [\"Linear\"],"
             " \"weights\": {\"num_bits\": 8, \"type\": \"float\", \"symmetric\": true,"
             " \"strategy\": \"channel\", \"dynamic\": false},"
             " \"input_activations\": {\"num_bits\": 8, \"type\": \"float\","
             " \"strategy\": \"token\", \"dynamic\": true}}},"
             " \"ignore\": [\"lm_head\"]}");
    assert_int_equal(m.weight_dtype.kind, RF_FP8_E4M3);
    assert_int_equal(m.weight_dtype.group_size, 0);
    assert_int_equal(m.act_dtype.kind, RF_FP8_E4M3); /* W8A8: the fp8 peak */
    assert_non_null(strstr(m.notes, "channel scales (one a row) not counted"));
    assert_int_equal(weight_bytes(&m), 34317271040ull);

    /* FP8_BLOCK: one scale a 128 x 128 tile, in the checkpoint's dtype
     * (bf16: 2 bytes) unless scale_dtype names another */
    parse_ok("qwen3-32b.json",
             "{\"quant_method\": \"compressed-tensors\", \"format\": \"float-quantized\","
             " \"config_groups\": {\"group_0\": {\"targets\": [\"Linear\"],"
             " \"weights\": {\"num_bits\": 8, \"type\": \"float\", \"strategy\": \"block\","
             " \"block_structure\": [128, 128], \"scale_dtype\": \"torch.float32\"}}},"
             " \"ignore\": [\"lm_head\"]}");
    assert_int_equal(m.weight_dtype.group_size, 16384);
    assert_int_equal(m.weight_dtype.block_rows, 128);
    assert_int_equal(m.weight_dtype.scale_bytes, 4);

    /* an mxfp4 group (4-bit floats, 32 a scale) and an nvfp4 one (16) */
    parse_ok("qwen3-32b.json",
             "{\"quant_method\": \"compressed-tensors\", \"format\": \"mxfp4-pack-quantized\","
             " \"config_groups\": {\"group_0\": {\"targets\": [\"Linear\"],"
             " \"weights\": {\"num_bits\": 4, \"type\": \"float\", \"strategy\": \"group\","
             " \"group_size\": 32}}}, \"ignore\": [\"re:.*lm_head.*\"]}");
    assert_int_equal(m.weight_dtype.kind, RF_MXFP4);
    assert_int_equal(m.unquantized_modules, MB(LM_HEAD) | MB(EMBED));
}

/* What is refused, naming the field: an ignore entry that names no module,
 * a pattern form that cannot be matched, a second scheme. */
static void test_refusals(void **state)
{
    (void)state;
    static const char head[] =
        "{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\":"
        " {\"targets\": [\"Linear\"], \"weights\": {\"num_bits\": 4, \"type\": \"int\","
        " \"strategy\": \"group\", \"group_size\": 128}}}, \"ignore\": [\"lm_head\", ";
    char q[512];
    snprintf(q, sizeof q, "%s\"model.layers.0.mlp.routr\"]}", head);
    parse_refused("qwen3-32b.json", q,
                  "quantization_config.ignore[1] 'model.layers.0.mlp.routr' names no module");
    snprintf(q, sizeof q, "%s\"re:(?!.*mlp).*\"]}", head);
    parse_refused("qwen3-32b.json", q, "ignore[1] 're:(?!.*mlp).*': a regular expression");
    snprintf(q, sizeof q, "%s\"model.layers.[01].mlp\"]}", head);
    parse_refused("qwen3-32b.json", q, "a pattern form this reader cannot match");
    parse_refused("qwen3-32b.json",
                  "{\"quant_method\": \"compressed-tensors\", \"config_groups\": {"
                  "\"a\": {\"targets\": [\"Linear\"], \"weights\": {\"num_bits\": 4,"
                  " \"type\": \"int\", \"strategy\": \"group\", \"group_size\": 128}},"
                  "\"b\": {\"targets\": [\"re:.*experts.*\"], \"weights\": {\"num_bits\": 8,"
                  " \"type\": \"float\", \"strategy\": \"channel\"}}}}",
                  "config_groups.b: a second scheme");
    parse_refused("qwen3-32b.json",
                  "{\"quant_method\": \"modelopt\", \"quant_algo\": \"W4A8_AWQ\"}",
                  "quantization_config.quant_algo (W4A8_AWQ) is not read: NVFP4 or FP8");
    /* Meta's fbgemm_fp8 (Llama-4 Maverick FP8): W8A8 e4m3, a scale a row not
     * counted; Llama-4's names (language_model.model.layers.N.feed_forward,
     * vision_model) are read on its own config below */
    parse_ok("qwen3-32b.json", "{\"quant_method\": \"fbgemm_fp8\", \"activation_scale_ub\": 1200.0,"
                               " \"modules_to_not_convert\": [\"lm_head\", \"vision_model\"]}");
    assert_int_equal(m.weight_dtype.kind, RF_FP8_E4M3);
    assert_int_equal(m.act_dtype.kind, RF_FP8_E4M3);
    assert_int_equal(m.unquantized_modules, MB(LM_HEAD) | MB(EMBED));
    assert_non_null(strstr(m.notes, "names the vision tower, which is not counted"));
    /* Llama-4 Maverick: MoE on every other layer; the wrapper's names */
    parse_ok("llama-4-maverick-17b-128e-instruct.json",
             "{\"quant_method\": \"fbgemm_fp8\", \"modules_to_not_convert\": ["
             "\"language_model.model.layers.*.self_attn\","
             " \"language_model.model.layers.*.feed_forward.router\","
             " \"language_model.lm_head\", \"re:vision_model.*\", \"multi_modal_projector\"]}");
    assert_true(m.n_experts > 0 && rf_model_moe_layers(&m) < m.layers);
    assert_int_equal(m.unquantized_modules, MB(ATTN) | MB(ROUTER) | MB(LM_HEAD) | MB(EMBED));
    /* a KV-cache-only ModelOpt checkpoint: weights as torch_dtype says */
    parse_ok("qwen3-32b.json", "{\"quant_method\": \"modelopt\", \"quant_algo\": null,"
                               " \"kv_cache_quant_algo\": \"FP8\"}");
    assert_int_equal(m.weight_dtype.kind, RF_BF16);
    assert_int_equal(m.unquantized_modules, 0);
    assert_non_null(strstr(m.notes, "quant_algo null: weights unquantized"));
    /* fp8's fmt in torch's spelling is read */
    parse_ok("qwen3-32b.json", "{\"quant_method\": \"fp8\", \"fmt\": \"float8_e4m3fn\","
                               " \"weight_block_size\": [128, 128]}");
    assert_int_equal(m.weight_dtype.kind, RF_FP8_E4M3);
}

/* An fp8-per-channel checkpoint of a hybrid stack whose ignore list (after
 * "lm_head") names every mixer projection, every router and the attention
 * of one layer, attn: the mixer and router classes whole, that layer's
 * attention alone. Layer 0 is a mixer0 block. */
static void hybrid_split(const char *file, const char *ignore, rf_mixer mixer0, int layers,
                         int attn)
{
    char q[1024];
    snprintf(q, sizeof q,
             "{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\":"
             " {\"targets\": [\"Linear\"], \"weights\": {\"num_bits\": 8, \"type\": \"float\","
             " \"strategy\": \"channel\"}}}, \"ignore\": [\"lm_head\", %s]}",
             ignore);
    parse_ok(file, q);
    assert_int_equal(m.layers, layers);
    assert_int_equal(m.mixer[0], mixer0);
    assert_int_equal(m.mixer[attn], RF_MIX_ATTN);
    assert_int_equal(m.unquantized_modules, MB(MIXER) | MB(ROUTER) | MB(LM_HEAD) | MB(EMBED));
    for (int l = 0; l < layers; l++)
        assert_int_equal(m.unquantized_layer[l], l == attn ? MB(ATTN) : 0);
}

/* Exclusions of some layers only stay per layer, with a note naming them;
 * each module class is its own: Qwen3-Next's Gated DeltaNet projections
 * (linear_attn) are the mixer, its full-attention layers (3, 7, ..., 47)
 * the attention, mlp.gate and mlp.shared_expert_gate the router. */
static void test_per_layer(void **state)
{
    (void)state;
    parse_ok("qwen3-32b.json", "{\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\","
                               " \"exclude_modules\": [\"lm_head\", \"model.layers.0.self_attn*\","
                               " \"model.layers.1.self_attn*\", \"model.layers.2.self_attn\"]}");
    assert_int_equal(m.unquantized_modules, MB(LM_HEAD) | MB(EMBED));
    for (int l = 0; l < 64; l++)
        assert_int_equal(m.unquantized_layer[l], l < 3 ? MB(ATTN) : 0);
    assert_non_null(strstr(m.notes, "attention of 3 of 64 layers (0-2) kept in bf16"));
    /*   nvfp4: (61 x 94,371,840 + 25,165,824,000) x 9 / 16 = 17,393,909,760
     *   bf16: (3 x 94,371,840 + 1,555,824,640) x 2 = 3,677,880,320
     *   = 21,071,790,080 */
    assert_int_equal(weight_bytes(&m), 21071790080ull);

    /* one expert's matrix named keeps that layer's experts whole (a note
     * says so); a glob over every expert of every layer is the class */
    parse_ok("qwen3-30b-a3b.json",
             "{\"quant_method\": \"modelopt\", \"quant_algo\": \"FP8\", \"exclude_modules\":"
             " [\"lm_head\", \"model.layers.1.mlp.experts.127.down_proj\"]}");
    for (int l = 0; l < 48; l++)
        assert_int_equal(m.unquantized_layer[l], l == 1 ? MB(EXPERTS) : 0);
    assert_non_null(strstr(m.notes, "names single matrices of the experts"));
    parse_refused("qwen3-30b-a3b.json",
                  "{\"quant_method\": \"modelopt\", \"quant_algo\": \"FP8\","
                  " \"exclude_modules\": [\"model.layers.1.mlp.experts.128\"]}",
                  "exclude_modules[0] 'model.layers.1.mlp.experts.128' names no module");
    parse_ok("qwen3-30b-a3b.json",
             "{\"quant_method\": \"modelopt\", \"quant_algo\": \"FP8\", \"exclude_modules\":"
             " [\"model.layers.*.mlp.experts.*\"]}");
    assert_int_equal(m.unquantized_modules, MB(EXPERTS) | MB(ROUTER) | MB(LM_HEAD) | MB(EMBED));

    hybrid_split("qwen3-next-80b-a3b-thinking.json",
                 "\"re:.*linear_attn.*\", \"model.layers.3.self_attn\","
                 " \"re:.*mlp.gate$\", \"re:.*mlp.shared_expert_gate$\"",
                 RF_MIX_GDN, 48, 3);
    assert_non_null(strstr(m.notes, "attention of 1 of 48 layers (3) kept in bf16"));

    /* Nemotron-3-Nano names every block backbone.layers.<l>.mixer: the Mamba2
     * blocks' projections are the mixer class, the attention blocks' (5, 12,
     * ..., 42 in MEMEM*E...) attention, the MoE blocks' gate the router */
    hybrid_split("nemotron-3-nano-30b-a3b.json",
                 "\"re:backbone\\\\.layers\\\\.\\\\d+\\\\.mixer\\\\.(in|out)_proj$\","
                 " \"backbone.layers.5.mixer.q_proj\", \"backbone.layers.1.mixer.gate\"",
                 RF_MIX_MAMBA2, 52, 5);
}

/* Every note is appended whole or cut at a word, never mid-word (the
 * reader's own notes as the quantization's): Qwen3-Next (Gated DeltaNet
 * layers, no mamba_ssm_cache_dtype) read as ModelOpt NVFP4 whose
 * kv_cache_quant_algo is a run of `pad` characters ("abcd abcd ...") and
 * whose exclude list names classes of single layers fills m.notes; the
 * note on the recurrent state's dtype, written after the quantization's,
 * then meets the end of m.notes at every offset as pad grows. */
static void test_notes_cut_at_words(void **state)
{
    (void)state;
    static const char state_note[] =
        "recurrent state in the weights' dtype (bf16): no mamba_ssm_cache_dtype";
    char algo[512], q[2048];
    int whole = 0, cut = 0, dropped = 0;
    for (size_t pad = 1; pad < 460; pad++) {
        for (size_t i = 0; i < pad; i++)
            algo[i] = i % 5 == 4 ? ' ' : (char)('a' + i % 5);
        algo[pad] = '\0';
        snprintf(q, sizeof q,
                 "{\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\","
                 " \"kv_cache_quant_algo\": \"%s\", \"exclude_modules\": [\"lm_head\","
                 " \"model.layers.0.linear_attn*\", \"model.layers.3.self_attn*\","
                 " \"model.layers.0.mlp.experts*\", \"model.layers.0.mlp.shared_expert\","
                 " \"model.layers.1.mlp.shared_expert.down_proj\"]}",
                 algo);
        parse_ok("qwen3-next-80b-a3b-thinking.json", q);
        const char *at = strstr(m.notes, "recurrent");
        size_t n = at ? strlen(at) : 0;
        if (!at) {
            dropped++;
        } else if (!strcmp(at, state_note)) {
            whole++;
        } else {
            /* "<a prefix of the note ending at a word> ..." */
            if (n < 5 || strcmp(at + n - 4, " ...") || strncmp(at, state_note, n - 4) ||
                state_note[n - 4] != ' ')
                fail_msg("pad %zu: the notes end mid-word: '%s'", pad, at);
            cut++;
        }
        assert_true(strlen(m.notes) < sizeof m.notes);
    }
    /* each outcome met: whole, cut at one of its words, and no room left */
    assert_true(whole > 0 && cut > 0 && dropped > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp4_dtypes),
        cmocka_unit_test(test_fp4_peaks),
        cmocka_unit_test(test_nvfp4_sidecar),
        cmocka_unit_test(test_nvfp4_router_excluded),
        cmocka_unit_test(test_nvfp4_deepseek_excludes),
        cmocka_unit_test(test_exclude_names_no_module),
        cmocka_unit_test(test_glm5_fp8_ignore),
        cmocka_unit_test(test_compressed_tensors_int4),
        cmocka_unit_test(test_compressed_tensors_schemes),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_per_layer),
        cmocka_unit_test(test_notes_cut_at_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
