/* test_families.c - one config per family of the 2025-26 architectures
 * (issue 24), read from tests/data/models/ through the presets built from
 * them: the fields the reader fills, and the parameters, KV bytes and state
 * bytes the core derives from them, each figure derived by hand below from
 * the config's fields (matrix weights only; norms, biases, A_log, dt_bias
 * and convolution biases excluded, as rf_model_params counts). Then the
 * inputs the reader refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_model.h"
#include "roofline/rf_reader.h"

static rf_model m;

static void find(const char *name)
{
    rf_err e;
    if (rf_model_find(name, NULL, &m, &e))
        fail_msg("%s: %s", name, e.msg);
}

static rf_param_counts params(void)
{
    rf_param_counts p;
    rf_err e;
    if (rf_model_params(&m, &p, &e))
        fail_msg("%s: %s", m.name, e.msg);
    return p;
}

/* KV bytes one more token adds to the cache of every global attention
 * layer, 2 bytes an element (bf16), DSA's index keys beside */
static uint64_t kv_bytes_global(void)
{
    uint64_t b = 0;
    for (int64_t l = 0; l < m.layers; l++)
        if (rf_model_layer_local(&m, l) == RF_LOCAL_GLOBAL)
            b += 2 * (uint64_t)rf_model_kv_elems_layer(&m, l) + rf_model_index_bytes_per_token(&m);
    return b;
}

static uint64_t state_bytes(void)
{
    uint64_t b;
    rf_err e;
    if (rf_model_state_bytes(&m, &b, &e))
        fail_msg("%s: %s", m.name, e.msg);
    return b;
}

/* |computed / published - 1| < 1% */
static void near_published(uint64_t computed, double published)
{
    double r = (double)computed / published - 1;
    if (r > 0.01 || r < -0.01)
        fail_msg("%s: %llu is %.2f%% from the published %.4g", m.name, (unsigned long long)computed,
                 100 * r, published);
}

static int64_t count(const uint8_t *flags)
{
    int64_t n = 0;
    for (int64_t l = 0; l < m.layers; l++)
        n += flags[l] != 0;
    return n;
}

static int64_t mixers(rf_mixer x)
{
    int64_t n = 0;
    for (int64_t l = 0; l < m.layers; l++)
        n += m.mixer[l] == x;
    return n;
}

/* DeepSeek-V3's family: Kimi-K2 (model_type kimi_k2, DeepSeek-V3's class).
 * H 7168, 61 layers, 64 heads, q_lora 1536, kv_lora 512, nope 128, rope 64,
 * v 128, 384 experts top-8 of 2048, 1 shared, first layer dense (18432),
 * vocabulary 163840, untied, no MTP field. */
static void test_deepseek_family(void **state)
{
    (void)state;
    find("kimi-k2");
    assert_string_equal(m.family, "kimi_k2");
    assert_int_equal(m.kv_lora_rank, 512);
    assert_int_equal(m.n_experts, 384);
    assert_int_equal(m.first_dense, 1);
    assert_int_equal(m.mtp_layers, 0);
    /* attention: q_a 7168x1536 11,010,048 + q_b 1536x(64x192) 18,874,368 +
     * kv_a 7168x576 4,128,768 + kv_b 512x(64x256) 8,388,608 + o (64x128)x7168
     * 58,720,256 = 101,122,048; dense MLP 3 x 7168x18432 = 396,361,728;
     * MoE: router 7168x384 2,752,512 + 385 x 3 x 7168x2048 (44,040,192)
     * 16,955,473,920 = 16,958,226,432. 1 x 497,483,776 + 60 x
     * 17,059,348,480 + 2 x 163840x7168 2,348,810,240 = 1,026,407,202,816
     * (the card: 1.03 T) */
    rf_param_counts p = params();
    assert_int_equal(p.total, 1026407202816ull);
    near_published(p.total, 1.03e12);
    /* active: 60 x (101,122,048 + 2,752,512 + 9 x 44,040,192) + 497,483,776
     * + lm_head 1,174,405,120 = 31,686,066,176 (the card: 32 B activated) */
    assert_int_equal(p.streamed_per_token, 31686066176ull);
    near_published(p.streamed_per_token, 32e9);
    /* KV: 61 x (512 + 64) x 2 B = 70,272 B a token; no state */
    assert_int_equal(kv_bytes_global(), 70272);
    assert_int_equal(state_bytes(), 0);
    /* Kimi-K2.5's wrapper reads the same decoder */
    find("kimi-k2.5");
    assert_string_equal(m.family, "kimi_k2");
    assert_int_equal(params().total, 1026407202816ull);
}

/* DeepSeek sparse attention: DeepSeek-V3.2 is DeepSeek-V3 (671,025,397,760
 * parameters without MTP, test_models) with a lightning indexer a layer:
 * wq_b q_lora 1536 -> 64 heads x 128 12,582,912 + wk 7168x128 917,504 +
 * weights_proj 7168x64 458,752 = 13,959,168. */
static void test_sparse_attention(void **state)
{
    (void)state;
    find("deepseek-v3.2");
    assert_string_equal(m.family, "deepseek_v32");
    assert_int_equal(m.index_heads, 64);
    assert_int_equal(m.index_head_dim, 128);
    assert_int_equal(m.index_topk, 2048);
    assert_int_equal(m.mtp_layers, 1);
    /* 671,025,397,760 + 61 x 13,959,168 (851,509,248) + the MTP layer:
     * attention and MoE 11,507,269,632 (test_models: router 1,835,008 +
     * shared 44,040,192 + 256 experts 11,274,289,152 + attention
     * 187,105,280) + eh_proj 2 x 7168x7168 102,760,448 + its indexer
     * 13,959,168 = 683,500,896,256 (the checkpoint's 685 B less the MTP
     * layer's copies of the embedding and head, 2 x 926,679,040) */
    rf_param_counts p = params();
    assert_int_equal(p.total, 683500896256ull);
    near_published(p.total, 685e9);
    /* active: V3's 36,624,596,992 + 851,509,248 = 37,476,106,240 */
    assert_int_equal(p.streamed_per_token, 37476106240ull);
    /* KV: 61 x (576 x 2 B + an fp8 index key of 128 + a 4-byte scale)
     * = 61 x 1,284 = 78,324 B a token */
    assert_int_equal(kv_bytes_global(), 78324);
    /* GLM-5 reads its indexer the same way */
    find("glm-5");
    assert_string_equal(m.family, "glm_moe_dsa");
    assert_int_equal(m.index_heads, 32);
    assert_int_equal(m.qk_nope_dim, 192);
    assert_int_equal(m.v_head_dim, 256);
}

/* GLM-4.7 (glm4_moe): H 5120, 92 layers, 96 heads of 128, 8 KV heads,
 * dense 12288 on the first 3, 160 experts top-8 of 1536 + 1 shared,
 * vocabulary 151552 (this copy carries no MTP field). */
static void test_glm4_moe(void **state)
{
    (void)state;
    find("glm-4.7");
    assert_string_equal(m.family, "glm4_moe");
    assert_int_equal(m.first_dense, 3);
    /* attention: q 5120x12288 62,914,560 + k, v 2 x 5120x1024 10,485,760 +
     * o 62,914,560 = 136,314,880; dense 3 x 5120x12288 188,743,680; MoE:
     * router 5120x160 819,200 + 161 x 3 x 5120x1536 (23,592,960)
     * 3,798,466,560 = 3,799,285,760. 3 x 325,058,560 + 89 x 3,935,600,640 +
     * 2 x 151552x5120 1,551,892,480 = 352,795,525,120 (the card: 355 B) */
    rf_param_counts p = params();
    assert_int_equal(p.total, 352795525120ull);
    near_published(p.total, 355e9);
    /* active: 89 x (136,314,880 + 819,200 + 9 x 23,592,960) + 975,175,680
     * + lm_head 775,946,240 = 32,854,016,000 */
    assert_int_equal(p.streamed_per_token, 32854016000ull);
    /* KV: 92 x 2 x 8 x 128 x 2 B = 376,832 B a token */
    assert_int_equal(kv_bytes_global(), 376832);
}

/* Qwen3-Next-80B-A3B: 48 layers, full attention every 4th (12), Gated
 * DeltaNet on the 36 others (16 key heads, 32 value heads, widths 128,
 * kernel 4); 16 heads of 256 with the output gate, 2 KV heads; 512 experts
 * top-10 of 512 and a gated shared expert of 512; H 2048; V 151936. */
static void test_gated_deltanet(void **state)
{
    (void)state;
    find("qwen3-next-80b-a3b");
    assert_string_equal(m.family, "qwen3_next");
    assert_int_equal(mixers(RF_MIX_GDN), 36);
    assert_int_equal(m.mixer[3], RF_MIX_ATTN);
    assert_int_equal(m.mixer[0], RF_MIX_GDN);
    assert_true(m.attn_out_gate);
    assert_true(m.shared_expert_gate);
    assert_int_equal(m.gdn_v_heads, 32);
    /* GDN layer: in_proj_qkvz 2048 x (2 x 16x128 + 2 x 32x128) 25,165,824 +
     * in_proj_ba 2048 x 64 131,072 + conv (2 x 16x128 + 32x128) x 4 32,768 +
     * out_proj 4096x2048 8,388,608 = 33,718,272. Attention: q (with its
     * gate) 2048 x 2 x 16x256 16,777,216 + k, v 2 x 2048x512 2,097,152 + o
     * 4096x2048 8,388,608 = 27,262,976. MoE: 513 x 3 x 2048x512
     * (3,145,728) 1,613,758,464 + router 2048x512 1,048,576 + shared gate
     * 2048 = 1,614,809,088. 36 x 33,718,272 + 12 x 27,262,976 + 48 x
     * 1,614,809,088 + 2 x 151936x2048 622,329,856 = 79,674,179,584 (the
     * card: 80 B) */
    rf_param_counts p = params();
    assert_int_equal(p.total, 79674179584ull);
    near_published(p.total, 80e9);
    /* active: 1,213,857,792 + 327,155,712 + 48 x (1,050,624 + 11 x
     * 3,145,728) + lm_head 311,164,928 = 3,563,552,768 */
    assert_int_equal(p.streamed_per_token, 3563552768ull);
    /* KV: 12 x 2 x 2 x 256 x 2 B = 24,576 B a token. State (bf16, no
     * mamba_ssm_cache_dtype): 36 x (32x128x128 x 2 + 3 x (2 x 16x128 +
     * 32x128) x 2) = 36 x 1,097,728 = 39,518,208 B a sequence */
    assert_int_equal(kv_bytes_global(), 24576);
    assert_int_equal(state_bytes(), 39518208);
    /* Qwen3.5: the same layout nested in text_config, layer_types listed */
    find("qwen3.5-397b-a17b");
    assert_string_equal(m.family, "qwen3_5_moe_text");
    assert_int_equal(mixers(RF_MIX_GDN), 45);
    assert_int_equal(m.gdn_v_heads, 64);
    assert_int_equal(m.mtp_layers, 1);
}

/* Llama-4 Scout: 48 layers, H 5120, 40 heads, 8 KV heads of 128; every
 * layer MoE (16 experts top-1 of 8192 + a shared expert of 8192); chunks
 * of 8192 on the RoPE layers, every 4th layer NoPE and global. */
static void test_llama4(void **state)
{
    (void)state;
    find("llama-4-scout");
    assert_string_equal(m.family, "llama4_text");
    assert_int_equal(m.attn_chunk, 8192);
    assert_int_equal(count(m.chunked), 36);
    assert_int_equal(m.chunked[3], 0);
    assert_int_equal(m.chunked[0], 1);
    assert_int_equal(rf_model_moe_layers(&m), 48);
    /* attention: 2 x 5120x5120 + 2 x 5120x1024 = 62,914,560; MoE: router
     * 5120x16 81,920 + 17 x 3 x 5120x8192 (125,829,120) 2,139,095,040;
     * 48 x 2,202,091,520 + 2 x 202048x5120 2,068,971,520 =
     * 107,769,364,480: the card's 109 B counts the vision tower too
     * (~0.8 B, not read), so 1.1% under it */
    rf_param_counts p = params();
    assert_int_equal(p.total, 107769364480ull);
    /* active: 48 x (62,914,560 + 81,920 + 2 x 125,829,120) + lm_head
     * 1,034,485,760 = 16,137,912,320 (the card: 17 B with the embedding) */
    assert_int_equal(p.streamed_per_token, 16137912320ull);
    /* KV growing with the context: the 12 global layers, 12 x 2 x 8 x 128
     * x 2 B = 49,152 B a token */
    assert_int_equal(kv_bytes_global(), 49152);
    /* Maverick: MoE on odd layers ((l + 1) % 2 == 0), dense 16384 on even */
    find("llama-4-maverick");
    assert_int_equal(rf_model_moe_layers(&m), 24);
    assert_int_equal(m.ffn, 16384);
    /* 48 x 62,914,560 + 24 x (5120x128 655,360 + 129 x 125,829,120) + 24 x
     * 3 x 5120x16384 (251,658,240) + 2,068,971,520 = 400,711,352,320 (the
     * card: 400 B) */
    assert_int_equal(params().total, 400711352320ull);
    near_published(params().total, 400e9);
}

/* Nemotron-3-Nano-30B-A3B: 52 layers of hybrid_override_pattern, 23 Mamba2
 * (64 heads of 64, state 128, 8 groups, kernel 4), 6 attention (32 heads,
 * 2 KV heads of 128), 23 MoE (128 experts top-6 of 1856, a shared expert
 * of 3712, squared ReLU: up and down only); H 2688, V 131072; its
 * time_step_limit holds a bare Infinity. */
static void test_nemotron_h(void **state)
{
    (void)state;
    find("nemotron-3-nano");
    assert_string_equal(m.family, "nemotron_h");
    assert_int_equal(mixers(RF_MIX_MAMBA2), 23);
    assert_int_equal(mixers(RF_MIX_NONE), 23);
    assert_int_equal(rf_model_attn_layers(&m), 6);
    assert_int_equal(count(m.no_ffn), 29);
    assert_true(m.ffn_ungated);
    assert_int_equal(m.state_dtype.kind, RF_FP32);
    assert_non_null(strstr(m.notes, "1 bare Infinity/NaN value (not JSON) read as null"));
    /* Mamba2: in_proj 2688 x (2 x 4096 + 2 x 8x128 + 64) 27,697,152 + conv
     * (4096 + 2048) x 4 24,576 + out_proj 4096x2688 11,010,048 = 38,731,776;
     * attention: 2 x 2688x4096 + 2 x 2688x256 = 23,396,352; MoE: router
     * 2688x128 344,064 + 128 x 2 x 2688x1856 (9,977,856) 1,277,165,568 +
     * shared 2 x 2688x3712 19,955,712 = 1,297,465,344. 23 x 38,731,776 + 6
     * x 23,396,352 + 23 x 1,297,465,344 + 2 x 131072x2688 704,643,072 =
     * 31,577,554,944 (the card: 31.6 B) */
    rf_param_counts p = params();
    assert_int_equal(p.total, 31577554944ull);
    near_published(p.total, 31.6e9);
    /* active: 890,830,848 + 140,378,112 + 23 x (344,064 + 19,955,712 + 6 x
     * 9,977,856) + lm_head 352,321,536 = 3,227,369,472 (the card: 3.2 B) */
    assert_int_equal(p.streamed_per_token, 3227369472ull);
    near_published(p.streamed_per_token, 3.2e9);
    /* KV: 6 x 2 x 2 x 128 x 2 B = 6,144 B a token. State: 23 x (64x64x128
     * x 4 B (float32) + 3 x (4096 + 2 x 8x128) x 2 B) = 23 x 2,134,016 =
     * 49,082,368 B a sequence */
    assert_int_equal(kv_bytes_global(), 6144);
    assert_int_equal(state_bytes(), 49082368);
}

/* MiMo-V2-Flash: 48 layers, 9 global (64 heads, 4 KV heads, K 192, V 128)
 * and 39 sliding (window 128, 64 heads, 8 KV heads, K 192, V 128); layer
 * 0 dense (16384), 47 MoE (256 experts top-8 of 2048, no shared); H 4096,
 * V 152576. */
static void test_mimo(void **state)
{
    (void)state;
    find("mimo-v2-flash");
    assert_int_equal(rf_model_sliding_layers(&m), 39);
    assert_int_equal(m.window, 128);
    assert_int_equal(m.local_n_kv, 8);
    assert_int_equal(m.attn_v_dim, 128);
    assert_int_equal(rf_model_moe_layers(&m), 47);
    /* global: q 4096x12288 50,331,648 + k 4096x768 3,145,728 + v 4096x512
     * 2,097,152 + o 8192x4096 33,554,432 = 89,128,960; sliding: k 4096x1536
     * 6,291,456, v 4096x1024 4,194,304: 94,371,840; dense 3 x 4096x16384
     * 201,326,592; MoE: router 4096x256 1,048,576 + 256 x 3 x 4096x2048
     * (25,165,824) = 6,443,499,520. 9 x 89,128,960 + 39 x 94,371,840 +
     * 201,326,592 + 47 x 6,443,499,520 + 2 x 152576x4096 1,249,902,592 =
     * 308,778,369,024 (the card: 309 B) */
    rf_param_counts p = params();
    assert_int_equal(p.total, 308778369024ull);
    near_published(p.total, 309e9);
    /* active: 4,482,662,400 + 201,326,592 + 47 x (1,048,576 + 8 x
     * 25,165,824) + lm_head 624,951,296 = 14,820,573,184 (the card: 15 B, with the embedding) */
    assert_int_equal(p.streamed_per_token, 14820573184ull);
    /* KV of the global layers: 9 x 4 x (192 + 128) x 2 B = 23,040 B */
    assert_int_equal(kv_bytes_global(), 23040);
}

/* MiniMax-M2.5, gemma-3-27b, gpt-oss-120b: the plain layouts' presets. */
static void test_plain_presets(void **state)
{
    (void)state;
    /* MiniMax-M2.5: 62 layers, H 3072, 48 heads, 8 KV heads of 128, 256
     * experts top-8 of 1536, V 200064. Attention 2 x 3072x6144 + 2 x
     * 3072x1024 = 44,040,192; MoE: router 3072x256 786,432 + 256 x 3 x
     * 3072x1536 (14,155,776) = 3,624,665,088; 62 x 3,668,705,280 + 2 x
     * 200064x3072 1,229,193,216 = 228,688,920,576 (the checkpoint's
     * safetensors: 228,703,644,928 with the norms; its 3 MTP modules are
     * not shipped) */
    find("minimax-m2.5");
    assert_int_equal(m.mtp_layers, 0);
    assert_int_equal(params().total, 228688920576ull);
    near_published(params().total, 228703644928.0);
    /* gemma-3-27b: 62 layers, H 5376, 32 heads, 16 KV heads of 128, MLP
     * 21504, tied vocabulary 262208; 52 sliding (1024), 10 global.
     * 62 x (q 5376x4096 22,020,096 + k, v 22,020,096 + o 22,020,096
     * + MLP 3 x 5376x21504 346,816,512 = 412,876,800) + 262208x5376
     * 1,409,630,208 = 27,007,991,808 (the card: 27 B) */
    find("gemma-3-27b");
    assert_int_equal(rf_model_sliding_layers(&m), 52);
    assert_int_equal(params().total, 27007991808ull);
    near_published(params().total, 27e9);
    /* KV of the 10 global layers: 10 x 2 x 16 x 128 x 2 B = 81,920 B */
    assert_int_equal(kv_bytes_global(), 81920);
    /* gpt-oss-120b: 36 layers, 128 experts of 2880, top-4: 36 x (26,542,080
     * + 2880x128 368,640 + 128 x 3 x 2880^2 3,185,049,600) + 2 x
     * 201088x2880 1,158,266,880 = 116,788,838,400 (the card: 116.8 B) */
    find("gpt-oss-120b");
    assert_int_equal(params().total, 116788838400ull);
    near_published(params().total, 116.8e9);
}

/* gemma-4 (written here: no public config.json of it was found whole): the
 * global layers' own KV heads and head width, K = V there, the MoE beside
 * the dense MLP. */
static void test_gemma4_fields(void **state)
{
    (void)state;
    static const char cfg[] =
        "{\"model_type\": \"gemma4\", \"text_config\": {\"model_type\": \"gemma4_text\","
        " \"hidden_size\": 1024, \"num_hidden_layers\": 6, \"num_attention_heads\": 8,"
        " \"num_key_value_heads\": 4, \"num_global_key_value_heads\": 2, \"head_dim\": 128,"
        " \"global_head_dim\": 256, \"attention_k_eq_v\": true, \"intermediate_size\": 2048,"
        " \"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"sliding_window\": 512,"
        " \"layer_types\": [\"sliding_attention\", \"sliding_attention\", \"sliding_attention\","
        " \"sliding_attention\", \"sliding_attention\", \"full_attention\"],"
        " \"enable_moe_block\": true, \"num_experts\": 8, \"top_k_experts\": 2,"
        " \"moe_intermediate_size\": 256}}";
    rf_err e;
    assert_int_equal(rf_model_parse(cfg, sizeof cfg - 1, "gemma4.json", &m, &e), RF_OK);
    assert_string_equal(m.family, "gemma4_text");
    assert_int_equal(m.n_kv, 2);
    assert_int_equal(m.head_dim, 256);
    assert_int_equal(m.local_n_kv, 4);
    assert_int_equal(m.local_head_dim, 128);
    assert_true(m.k_eq_v);
    assert_true(m.moe_and_dense);
    assert_int_equal(m.n_experts, 8);
    assert_int_equal(rf_model_sliding_layers(&m), 5);
    assert_true(m.tied);
}

/* ---- refused ----------------------------------------------------------- */

static void refused_says(const char *text, const char *says)
{
    rf_err e;
    rf_model out;
    rf_status s = rf_model_parse(text, strlen(text), "bad.json", &out, &e);
    if (s == RF_OK)
        fail_msg("accepted: %s", text);
    if (!strstr(e.msg, says))
        fail_msg("'%s' does not say '%s'", e.msg, says);
}

static void test_refused(void **state)
{
    (void)state;
    /* a pattern of 3 layers for 4 */
    refused_says("{\"model_type\": \"nemotron_h\", \"hidden_size\": 64, \"num_hidden_layers\": 4,"
                 " \"hybrid_override_pattern\": \"M*-\", \"mamba_num_heads\": 4,"
                 " \"mamba_head_dim\": 16, \"ssm_state_size\": 16, \"n_groups\": 2}",
                 "bad.json: hybrid_override_pattern has 3 layers but num_hidden_layers is 4");
    /* a state size of 0 */
    refused_says("{\"model_type\": \"nemotron_h\", \"hidden_size\": 64, \"num_hidden_layers\": 3,"
                 " \"hybrid_override_pattern\": \"M*-\", \"mamba_num_heads\": 4,"
                 " \"mamba_head_dim\": 16, \"ssm_state_size\": 0, \"n_groups\": 2}",
                 "ssm_state_size (0) must be at least 1");
    refused_says("{\"model_type\": \"qwen3_next\", \"hidden_size\": 256, \"num_hidden_layers\": 4,"
                 " \"linear_key_head_dim\": 0}",
                 "linear_key_head_dim (0) must be at least 1");
    /* index_topk beyond the context */
    refused_says(
        "{\"model_type\": \"deepseek_v32\", \"hidden_size\": 256, \"num_hidden_layers\": 2,"
        " \"num_attention_heads\": 4, \"intermediate_size\": 512, \"vocab_size\": 100,"
        " \"moe_intermediate_size\": 64, \"n_routed_experts\": 4, \"num_experts_per_tok\": 2,"
        " \"first_k_dense_replace\": 1, \"max_position_embeddings\": 1024,"
        " \"index_n_heads\": 4, \"index_head_dim\": 32, \"index_topk\": 2048}",
        "index_topk (2048) exceeds max_position_embeddings (1024)");
    refused_says(
        "{\"model_type\": \"deepseek_v32\", \"hidden_size\": 256, \"num_hidden_layers\": 2}",
        "index_n_heads is missing (required)");
    /* a model_type no family reads, and what a known but unmodelled one lacks */
    refused_says("{\"model_type\": \"foo\", \"hidden_size\": 64, \"num_hidden_layers\": 2}",
                 "bad.json: model_type foo is not a known family (known: llama, ");
    refused_says("{\"model_type\": \"nemotron-nas\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                 " \"block_configs\": []}",
                 "model_type nemotron-nas is refused: block_configs");
    refused_says("{\"model_type\": \"nemotron_h\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                 " \"hybrid_override_pattern\": \"ME\", \"moe_latent_size\": 1024}",
                 "moe_latent_size: latent MoE projections");
    /* a pattern character no layer kind has; a MiMo pattern of the wrong length */
    refused_says("{\"model_type\": \"nemotron_h\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                 " \"hybrid_override_pattern\": \"MX\"}",
                 "hybrid_override_pattern[1] is not a layer kind");
    refused_says(
        "{\"model_type\": \"mimo_v2_flash\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
        " \"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100,"
        " \"hybrid_layer_pattern\": [0], \"moe_layer_freq\": [0, 0]}",
        "hybrid_layer_pattern has 1 entries but num_hidden_layers is 2");
    /* a bare NaN where a shape is: null, refused naming the field */
    refused_says("{\"model_type\": \"llama\", \"hidden_size\": NaN, \"num_hidden_layers\": 2}",
                 "hidden_size is null");
    /* --family: a name no family has */
    rf_read_opts ro = {.family = "bar"};
    rf_err e;
    rf_model out;
    static const char olmo[] = "{\"model_type\": \"olmo2\", \"hidden_size\": 64, "
                               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                               "\"intermediate_size\": 128, \"vocab_size\": 100}";
    assert_int_equal(rf_model_parse_opts(olmo, sizeof olmo - 1, "o.json", &ro, &out, &e),
                     RF_EINVAL);
    assert_non_null(strstr(e.msg, "--family bar is not a known family (known: llama, "));
    ro.family = "qwen3";
    assert_int_equal(rf_model_parse_opts(olmo, sizeof olmo - 1, "o.json", &ro, &out, &e), RF_OK);
    assert_string_equal(out.family_forced_from, "olmo2");
    assert_string_equal(out.family, "qwen3");
}

/* Every preset named by rf_model_find reads and validates. */
static void test_every_preset(void **state)
{
    (void)state;
    assert_true(rf_model_find_count() > rf_model_preset_count());
    for (size_t i = 0; i < rf_model_find_count(); i++) {
        const char *name = rf_model_find_name(i);
        find(name);
        assert_string_equal(m.name, name);
        params();
    }
    assert_null(rf_model_find_name(rf_model_find_count()));
    rf_err e;
    assert_int_equal(rf_model_find("no-such-model", NULL, &m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "unknown model 'no-such-model' (known: "));
    assert_non_null(strstr(e.msg, "nemotron-3-nano"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepseek_family),
        cmocka_unit_test(test_sparse_attention),
        cmocka_unit_test(test_glm4_moe),
        cmocka_unit_test(test_gated_deltanet),
        cmocka_unit_test(test_llama4),
        cmocka_unit_test(test_nemotron_h),
        cmocka_unit_test(test_mimo),
        cmocka_unit_test(test_plain_presets),
        cmocka_unit_test(test_gemma4_fields),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_every_preset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
