/* test_models.c - real models: the config.json reader (rf_reader.h) and the
 * MoE / MLA / sliding-window / quantization accounting (rf_model.h,
 * rf_step.h), against figures derived by hand and model cards.
 *
 * The configs, real and invalid, live in tests/data/models (RF_MODELS_DIR,
 * which is RF_TEST_DATA/models; its README says what each exercises);
 * load_shared names the presets' source files. Every expected figure
 * carries its derivation. Roof: h100-sxm (989.4 TFLOP/s bf16, 3.35 TB/s).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_reader.h"
#include "roofline/rf_step.h"

/* Large structs live here, not on the stack. */
static rf_model file_m, preset_m;
static rf_step st, st2;

static rf_roof h100(rf_dtype_kind math)
{
    rf_hw hw;
    rf_roof roof;
    assert_int_equal(rf_hw_preset("h100-sxm", &hw, NULL), RF_OK);
    assert_int_equal(rf_hw_roof(&hw, math, &roof, NULL), RF_OK);
    return roof;
}

static void load_at(const char *dir, const char *file, rf_model *m)
{
    char path[1024];
    rf_err e;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    rf_status s = rf_model_load(path, m, &e);
    if (s)
        fail_msg("%s: %s", path, e.msg);
}

static void load_shared(const char *file, rf_model *m) { load_at(RF_MODELS_DIR, file, m); }
static void load_data(const char *file, rf_model *m) { load_at(RF_TEST_DATA "/models", file, m); }

/* The step's operator of that name (first one), or fail. */
static const rf_op *op_named(const rf_step *s, const char *name)
{
    for (size_t i = 0; i < s->n_ops; i++)
        if (!strcmp(s->ops[i].name, name))
            return &s->ops[i];
    fail_msg("no operator %s", name);
    return NULL;
}

static uint64_t params_total(const rf_model *m)
{
    rf_param_counts p;
    assert_int_equal(rf_model_params(m, &p, NULL), RF_OK);
    return p.total;
}

static uint64_t params_streamed(const rf_model *m)
{
    rf_param_counts p;
    assert_int_equal(rf_model_params(m, &p, NULL), RF_OK);
    return p.streamed_per_token;
}

/* One step on the h100-sxm roof of its math dtype; fails the test on error. */
static void compute(const rf_model *m, const rf_step_opts *o, rf_step *out)
{
    rf_roof roof = h100(rf_dtype_math(o->w, o->a));
    rf_err e;
    if (rf_step_compute(m, o, &roof, out, &e))
        fail_msg("%s: %s", m->name, e.msg);
}

static void decode(const rf_model *m, const rf_step_opts *base, int64_t batch, int64_t context,
                   rf_step *out)
{
    rf_step_opts o = base ? *base : rf_step_opts_for_model(m);
    o.phase = RF_DECODE;
    o.batch = batch;
    o.context = context;
    compute(m, &o, out);
}

/* A prefill of T tokens a sequence after `context` cached, at batch 1. */
static void prefill(const rf_model *m, int64_t tokens, int64_t context, rf_step *out)
{
    rf_step_opts o = rf_step_opts_for_model(m);
    o.phase = RF_PREFILL;
    o.tokens = tokens;
    o.context = context;
    compute(m, &o, out);
}

/* Every field but the name and the reader's notes. */
static void assert_same_model(const rf_model *a, const rf_model *b)
{
    assert_string_equal(a->family, b->family);
    assert_int_equal(a->hidden, b->hidden);
    assert_int_equal(a->layers, b->layers);
    assert_int_equal(a->n_q, b->n_q);
    assert_int_equal(a->n_kv, b->n_kv);
    assert_int_equal(a->head_dim, b->head_dim);
    assert_int_equal(a->ffn, b->ffn);
    assert_int_equal(a->vocab, b->vocab);
    assert_int_equal(a->tied, b->tied);
    assert_int_equal(a->max_context, b->max_context);
    assert_int_equal(a->n_experts, b->n_experts);
    assert_int_equal(a->top_k, b->top_k);
    assert_int_equal(a->n_shared, b->n_shared);
    assert_int_equal(a->moe_ffn, b->moe_ffn);
    assert_int_equal(a->shared_ffn, b->shared_ffn);
    assert_int_equal(a->first_dense, b->first_dense);
    assert_int_equal(a->moe_freq <= 1, b->moe_freq <= 1);
    assert_int_equal(a->shared_expert_gate, b->shared_expert_gate);
    assert_memory_equal(a->dense_mlp, b->dense_mlp, sizeof a->dense_mlp);
    assert_int_equal(a->q_lora_rank, b->q_lora_rank);
    assert_int_equal(a->kv_lora_rank, b->kv_lora_rank);
    assert_int_equal(a->qk_nope_dim, b->qk_nope_dim);
    assert_int_equal(a->qk_rope_dim, b->qk_rope_dim);
    assert_int_equal(a->v_head_dim, b->v_head_dim);
    assert_int_equal(a->window, b->window);
    assert_memory_equal(a->sliding, b->sliding, sizeof a->sliding);
    assert_int_equal(a->qkv_bias, b->qkv_bias);
    assert_int_equal(a->o_bias, b->o_bias);
    assert_int_equal(a->mlp_bias, b->mlp_bias);
    assert_int_equal(a->weight_dtype.kind, b->weight_dtype.kind);
    assert_int_equal(a->weight_dtype.group_size, b->weight_dtype.group_size);
    assert_int_equal(a->has_weight_dtype, b->has_weight_dtype);
    assert_int_equal(a->unquantized_modules, b->unquantized_modules);
    assert_int_equal(a->has_act_dtype, b->has_act_dtype);
}

/* The totals two steps must share to be "equal in every figure". */
static void assert_same_step(const rf_step *a, const rf_step *b)
{
    assert_int_equal(a->n_ops, b->n_ops);
    for (size_t i = 0; i < a->n_ops; i++) {
        assert_string_equal(a->ops[i].name, b->ops[i].name);
        assert_int_equal(a->ops[i].count, b->ops[i].count);
        assert_int_equal(a->ops[i].flops, b->ops[i].flops);
        assert_int_equal(a->ops[i].bytes, b->ops[i].bytes);
    }
    assert_int_equal(a->weight_bytes, b->weight_bytes);
    assert_int_equal(a->kv_bytes, b->kv_bytes);
    assert_int_equal(a->kv_bytes_per_token, b->kv_bytes_per_token);
    assert_int_equal(a->total_bytes, b->total_bytes);
    assert_int_equal(a->flops, b->flops);
    assert_true(a->floor_s == b->floor_s);
    assert_true(a->experts_touched == b->experts_touched);
}

/* ---- every shared config loads, equals its preset in every figure ---- */

static const struct {
    const char *file, *preset;
} shared_models[] = {
    {"qwen2.5-7b-instruct.json", "qwen2.5-7b-instruct"},
    {"meta-llama-3-8b.json", "llama-3-8b"},
    {"qwen2.5-3b-instruct.json", "qwen2.5-3b-instruct"},
    {"mixtral-8x7b-v0.1.json", "mixtral-8x7b"},
    {"gemma-2-9b-it.json", "gemma-2-9b-it"},
    {"deepseek-v2-lite.json", "deepseek-v2-lite"},
};

static void test_shared_configs_equal_presets(void **state)
{
    (void)state;
    /* the presets are built from these files: one preset a file */
    assert_int_equal(rf_model_preset_count(), sizeof shared_models / sizeof shared_models[0]);
    for (size_t i = 0; i < sizeof shared_models / sizeof shared_models[0]; i++) {
        load_shared(shared_models[i].file, &file_m);
        assert_int_equal(rf_model_preset(shared_models[i].preset, &preset_m, NULL), RF_OK);
        assert_same_model(&file_m, &preset_m);
        assert_int_equal(params_total(&file_m), params_total(&preset_m));
        assert_int_equal(params_streamed(&file_m), params_streamed(&preset_m));
        /* decode at batch 8, context 4096, and a prefill of 512 tokens */
        decode(&file_m, NULL, 8, 4096, &st);
        decode(&preset_m, NULL, 8, 4096, &st2);
        assert_same_step(&st, &st2);
        rf_step_opts o = rf_step_opts_for_model(&file_m);
        o.phase = RF_PREFILL;
        o.tokens = 512;
        rf_roof roof = h100(RF_BF16);
        assert_int_equal(rf_step_compute(&file_m, &o, &roof, &st, NULL), RF_OK);
        assert_int_equal(rf_step_compute(&preset_m, &o, &roof, &st2, NULL), RF_OK);
        assert_same_step(&st, &st2);
        /* capacity on a 141 GB card (Mixtral's 93 GB of weights fit) */
        rf_capacity c1, c2;
        assert_int_equal(
            rf_capacity_compute(&file_m, &o, 141000000000ull, 0.92, 6ull << 30, 8192, &c1, NULL),
            RF_OK);
        assert_int_equal(
            rf_capacity_compute(&preset_m, &o, 141000000000ull, 0.92, 6ull << 30, 8192, &c2, NULL),
            RF_OK);
        assert_int_equal(c1.resident_bytes, c2.resident_bytes);
        assert_int_equal(c1.tokens, c2.tokens);
    }
}

/* ---- Qwen2.5-7B-Instruct ---------------------------------------------- */

static void test_qwen7b_decode_h100(void **state)
{
    (void)state;
    load_shared("qwen2.5-7b-instruct.json", &file_m);
    decode(&file_m, NULL, 1, 1024, &st);
    /* per layer: q 3584x3584 + k, v 3584x512 + o 3584x3584 + 3 x 3584x18944
     *   = 12,845,056 + 2 x 1,835,008 + 12,845,056 + 203,685,888 = 233,046,016;
     * 28 layers = 6,525,288,448, + lm_head 152,064 x 3,584 = 544,997,376,
     * = 7,070,285,824 weights x 2 bytes (bf16) = 14,140,571,648 */
    assert_int_equal(st.weight_bytes, 14140571648ull);
    /* KV a token: 2 (K, V) x 28 layers x 4 KV heads x 128 x 2 bytes */
    assert_int_equal(st.kv_bytes_per_token, 57344);
    assert_int_equal(st.kv_bytes, 1024ull * 57344);
    assert_int_equal(st.roof.math, RF_BF16);
}

static void test_qwen7b_full_context_kv(void **state)
{
    (void)state;
    load_shared("qwen2.5-7b-instruct.json", &file_m);
    /* sliding_window 131072 with use_sliding_window false: no window */
    assert_int_equal(file_m.window, 0);
    assert_int_equal(rf_model_sliding_layers(&file_m), 0);
    assert_non_null(strstr(file_m.notes, "sliding_window (131072) ignored"));
    /* past the would-be window, every position is still held:
     * 200,000 x 57,344 = 11,468,800,000 bytes */
    uint64_t kv;
    assert_int_equal(rf_model_kv_bytes(&file_m, rf_dtype_of(RF_BF16), 200000, &kv, NULL), RF_OK);
    assert_int_equal(kv, 11468800000ull);
}

/* ---- Qwen2.5-3B-Instruct: tied ---------------------------------------- */

static void test_qwen3b_tied(void **state)
{
    (void)state;
    load_shared("qwen2.5-3b-instruct.json", &file_m);
    assert_true(file_m.tied);
    /* per layer: q 2048x2048 + k, v 2048x256 + o 2048x2048 + 3 x 2048x11008
     *   = 4,194,304 x 2 + 524,288 x 2 + 67,633,152 = 77,070,336;
     * 36 layers = 2,774,532,096, + one 151,936 x 2,048 = 311,164,928
     * embedding (tied: counted once) = 3,085,697,024 */
    assert_int_equal(params_total(&file_m), 3085697024ull);
    /* the lm_head streams that matrix: 311,164,928 x 2 bytes */
    decode(&file_m, NULL, 1, 0, &st);
    const rf_op *lm = op_named(&st, "lm_head");
    assert_int_equal(lm->k, 2048);
    assert_int_equal(lm->n, 151936);
    assert_int_equal(lm->weight_bytes, 622329856ull);
    /* streamed = the same 3,085,697,024 weights (layers + lm_head) */
    assert_int_equal(st.weight_bytes, 2 * 3085697024ull);
}

/* ---- Mixtral-8x7B: experts touched ------------------------------------ */

static void test_mixtral_experts_touched(void **state)
{
    (void)state;
    load_shared("mixtral-8x7b-v0.1.json", &file_m);
    /* uniform routing: E (1 - (1 - k/E)^B), E = 8, k = 2:
     * B = 1: 8 x 0.25 = 2; B = 2: 8 (1 - 0.5625) = 3.5 */
    decode(&file_m, NULL, 1, 0, &st);
    assert_float_equal(st.experts_touched, 2.0, 1e-12);
    uint64_t b1 = st.weight_bytes;
    decode(&file_m, NULL, 2, 0, &st);
    assert_float_equal(st.experts_touched, 3.5, 1e-12);
    double prev = 0;
    for (int64_t b = 1; b <= 256; b *= 2) {
        decode(&file_m, NULL, b, 0, &st);
        assert_true(st.experts_touched > prev);
        assert_true(st.experts_touched < 8.0 + 1e-12);
        prev = st.experts_touched;
    }
    /* B = 64: 8 (1 - 0.75^64) = 8 - 8 x 1.0e-8 */
    decode(&file_m, NULL, 64, 0, &st);
    assert_float_equal(st.experts_touched, 8.0, 1e-6);
    /* batch 1 streams: 32 layers x (attention 41,943,040 + router 32,768 +
     * 2 experts x 176,160,768) + lm_head 131,072,000 = 12,748,587,008
     * weights = 25,497,174,016 bytes; resident: 32 x (41,943,040 + 32,768 +
     * 8 x 176,160,768) + 2 x 131,072,000 = 46,702,526,464 weights (46.7 B) */
    assert_int_equal(b1, 25497174016ull);
    assert_int_equal(params_total(&file_m), 46702526464ull);
    assert_true(b1 * 3 < 2 * params_total(&file_m)); /* < a third of 93.4 GB resident */
    /* --moe-experts all: every expert, 32 x 8 x 176,160,768 x 2 bytes more */
    rf_step_opts o = rf_step_opts_for_model(&file_m);
    o.moe = RF_MOE_ALL;
    decode(&file_m, &o, 1, 0, &st);
    assert_int_equal(st.weight_bytes, 2 * (46702526464ull - 131072000ull));
}

/* ---- DeepSeek-V2-Lite: MLA + MoE -------------------------------------- */

static void test_deepseek_v2_lite(void **state)
{
    (void)state;
    load_shared("deepseek-v2-lite.json", &file_m);
    decode(&file_m, NULL, 1, 1024, &st);
    /* KV: 27 layers x (kv_lora_rank 512 + rope 64) x 2 bytes = 31,104 */
    assert_int_equal(st.kv_bytes_per_token, 31104);
    /* attention a layer: q 2048x(16x192) 6,291,456 + kv_a 2048x576
     * 1,179,648 + kv_b 512x(16x256) 2,097,152 + o 2048x2048 4,194,304
     * = 13,762,560. Dense layer 0: + 3 x 2048x10944 = 81,002,496.
     * MoE layer: + router 2048x64 131,072 + 2 shared 3 x 2048x2816
     * 17,301,504 + 64 experts x 3 x 2048x1408 553,648,128 = 584,843,264.
     * 26 MoE layers 15,205,924,864 + 81,002,496 + embedding and lm_head
     * 2 x 102,400 x 2,048 = 15,706,357,760: the model card's 15.7 B. */
    assert_int_equal(params_total(&file_m), 15706357760ull);
    /* streamed at batch 1: MoE layer with 6 of 64 experts = 13,762,560 +
     * 131,072 + 17,301,504 + 51,904,512 = 83,099,648; x 26 + 81,002,496 +
     * lm_head 209,715,200 = 2,451,308,544 (card: 2.4 B active) */
    assert_int_equal(params_streamed(&file_m), 2451308544ull);
    decode(&file_m, NULL, 1, 0, &st);
    assert_float_equal(st.experts_touched, 6.0, 1e-12);
    assert_int_equal(st.weight_bytes, 2 * 2451308544ull);
}

static void test_deepseek_mla_attention(void **state)
{
    (void)state;
    load_shared("deepseek-v2-lite.json", &file_m);
    /* decode, absorbed: one latent "head" of r + rope = 576 scored by all
     * 16 heads, output in the 512-wide latent:
     * F = 2 x 16 x 1024 x 576 + 2 x 16 x 1024 x 512 = 35,651,584 a layer,
     * Q = 1024 x 576 x 2 = 1,179,648 bytes */
    decode(&file_m, NULL, 1, 1024, &st);
    const rf_op *a = op_named(&st, "attention");
    assert_int_equal(a->flops, 35651584ull);
    assert_int_equal(a->kv_bytes, 1179648ull);
    assert_int_equal(a->count, 27);
    /* prefill of 512 tokens after 1024 cached: kv_b_proj expands all
     * 1,536 keys; attention is multi-head with q/k width 192, v 128:
     * F = 2 x 16 x 512 x 1536 x 192 + 2 x 16 x 512 x 1536 x 128
     *   = 8,053,063,680 a layer; the latent is read once:
     * Q = 1536 x 576 x 2 = 1,769,472 bytes */
    prefill(&file_m, 512, 1024, &st);
    a = op_named(&st, "attention");
    assert_int_equal(a->flops, 8053063680ull);
    assert_int_equal(a->kv_bytes, 1769472ull);
    assert_int_equal(op_named(&st, "kv_b_proj")->m, 1536);
    assert_int_equal(op_named(&st, "q_proj")->m, 512);

    /* prefill attention crosses the ridge where F / Q = I*; from scratch
     * (S = T keys) F / Q = 2 n_q S (nope + rope + v) / ((r + rope) b_kv)
     * = 2 x 16 x S x 320 / (576 x 2) = S x 80/9, so
     * S* = I* (r + rope) b_kv / (2 n_q (nope + rope + v)) = I* x 9/80
     * (33.2 on the H100), and the step's own attention agrees at any T */
    rf_step_opts o = rf_step_opts_for_model(&file_m);
    rf_roof roof = h100(RF_BF16);
    rf_crossover cx;
    assert_int_equal(rf_crossover_compute(&file_m, &o, &roof, &cx, NULL), RF_OK);
    assert_float_equal(cx.attn_prefill_s_star, roof.ridge * 9.0 / 80.0, 1e-9);
    prefill(&file_m, 45, 0, &st);
    assert_float_equal(rf_op_intensity(op_named(&st, "attention")),
                       45.0 * roof.ridge / cx.attn_prefill_s_star, 1e-9);
}

/* ---- gemma-2-9b-it: head_dim, tying default, sliding layers ----------- */

static void test_gemma2(void **state)
{
    (void)state;
    load_shared("gemma-2-9b-it.json", &file_m);
    /* no tie_word_embeddings key: Gemma2Config ties by default */
    assert_true(file_m.tied);
    assert_non_null(strstr(file_m.notes, "tie_word_embeddings absent"));
    decode(&file_m, NULL, 1, 8192, &st);
    /* q_proj: H 3584 -> 16 heads x head_dim 256 = 4096 (not 3584) */
    const rf_op *q = op_named(&st, "q_proj");
    assert_int_equal(q->k, 3584);
    assert_int_equal(q->n, 4096);
    /* 42 layers, even ones sliding (window 4096): 21 and 21. At 8192 a
     * global layer reads 8192 x 2 x 8 x 256 x 2 = 67,108,864 bytes, a
     * sliding one 4096 x 8,192 = 33,554,432: half. */
    const rf_op *g = op_named(&st, "attention"), *w = op_named(&st, "attention_swa");
    assert_int_equal(g->count, 21);
    assert_int_equal(w->count, 21);
    assert_int_equal(g->kv_bytes, 67108864ull);
    assert_int_equal(w->kv_bytes, 33554432ull);
    /* one sequence at 8192: 21 x 67,108,864 + 21 x 33,554,432 */
    uint64_t kv;
    assert_int_equal(rf_model_kv_bytes(&file_m, rf_dtype_of(RF_BF16), 8192, &kv, NULL), RF_OK);
    assert_int_equal(kv, 21ull * 67108864 + 21ull * 33554432);

    /* prefill of T = 512 after 8192 cached (S = 8704 keys): a sliding
     * query attends to the 4096 keys of its window,
     *   F = 4 n_q T W d_h = 4 x 16 x 512 x 4096 x 256 = 34,359,738,368,
     * and the 512 windows end at 512 consecutive positions, so together
     * they read min(S, W + T - 1) = 4,607 positions of K/V:
     *   4,607 x (2 x 8 x 256 x 2) = 4,607 x 8,192 = 37,740,544 bytes;
     * a global layer reads all 8,704: 71,303,168 bytes. */
    prefill(&file_m, 512, 8192, &st);
    w = op_named(&st, "attention_swa");
    assert_int_equal(w->n, 4096);
    assert_int_equal(w->flops, 34359738368ull);
    assert_int_equal(w->kv_bytes, 37740544ull);
    assert_int_equal(w->bytes, 37740544ull);
    assert_int_equal(op_named(&st, "attention")->kv_bytes, 71303168ull);
    /* a prompt of 8192 from scratch: every position lies in some query's
     * window, so the sliding layers read all 8,192 (67,108,864 bytes) */
    prefill(&file_m, 8192, 0, &st);
    assert_int_equal(op_named(&st, "attention_swa")->kv_bytes, 67108864ull);
}

/* ---- other families ---------------------------------------------------- */

static void test_gpt_oss_mxfp4(void **state)
{
    (void)state;
    load_data("gpt-oss-20b.json", &file_m);
    assert_string_equal(file_m.family, "gpt_oss");
    /* attention: q, o 2880x4096 + k, v 2880x512 = 26,542,080; router
     * 2880x32 = 92,160; expert 3 x 2880x2880 = 24,883,200 (gate_up and
     * down). Layer: 26,542,080 + 92,160 + 32 x 24,883,200 = 822,896,640;
     * x 24 = 19,749,519,360 + 2 x 201,088 x 2,880 = 20,907,786,240 (21 B) */
    assert_int_equal(params_total(&file_m), 20907786240ull);
    /* active: 24 x (26,542,080 + 92,160 + 4 x 24,883,200) + lm_head
     * 579,133,440 = 3,607,142,400 (card: 3.6 B active) */
    assert_int_equal(params_streamed(&file_m), 3607142400ull);
    /* mxfp4 on the experts only (modules_to_not_convert: attention,
     * router, embedding, lm_head): 19,110,297,600 expert weights x
     * (1/2 + 1/32) = 10,152,345,600 bytes, + 1,797,488,640 others x 2
     * = 13,747,322,880 resident bytes */
    rf_step_opts o = rf_step_opts_for_model(&file_m);
    uint64_t bytes;
    assert_int_equal(rf_model_weight_bytes(&file_m, &o, &bytes, NULL), RF_OK);
    assert_int_equal(bytes, 13747322880ull);
    /* weight-only: the bf16 peak */
    assert_int_equal(rf_dtype_math(o.w, o.a), RF_BF16);
    /* sliding window 128 on the 12 even layers (layer_types) */
    assert_int_equal(file_m.window, 128);
    assert_int_equal(rf_model_sliding_layers(&file_m), 12);
    /* crossing points in each module's own dtype, on the H100 (I* = 989.4
     * / 3.35 = 295.34): q_proj stays bf16 (2 B), so
     *   M* = I* 2 K N / (2 K N - I* 2 (K + N)), K = 2880, N = 4096
     *      = 295.34 x 2 x 11,796,480 / (23,592,960 - 295.34 x 2 x 6,976) = 357.8,
     * where mxfp4's 0.53125 B would give 95.1; the experts are mxfp4:
     *   expert_gate K = N = 2880: I* 0.53125 x 8,294,400 /
     *   (16,588,800 - 295.34 x 2 x 5,760) = 98.7 */
    rf_roof roof = h100(RF_BF16);
    rf_crossover cx;
    assert_int_equal(rf_crossover_compute(&file_m, &o, &roof, &cx, NULL), RF_OK);
    double q_star = -1, e_star = -1;
    for (size_t i = 0; i < cx.n_ops; i++) {
        if (!strcmp(cx.ops[i].name, "q_proj"))
            q_star = cx.ops[i].m_star;
        if (!strcmp(cx.ops[i].name, "expert_gate"))
            e_star = cx.ops[i].m_star;
    }
    double I = roof.ridge;
    assert_float_equal(q_star, I * 2 * 2880.0 * 4096 / (2 * 2880.0 * 4096 - I * 2 * 6976), 1e-9);
    assert_float_equal(e_star, I * 0.53125 * 2880.0 * 2880 / (2 * 2880.0 * 2880 - I * 2 * 5760),
                       1e-9);
    assert_true(q_star > 357.7 && q_star < 357.9 && e_star > 98.6 && e_star < 98.8);
    /* an override covers every module: all bf16 = 2 x 20,907,786,240 */
    o.w = rf_dtype_of(RF_BF16);
    o.w_all_modules = true;
    assert_int_equal(rf_model_weight_bytes(&file_m, &o, &bytes, NULL), RF_OK);
    assert_int_equal(bytes, 2 * 20907786240ull);
}

static void test_deepseek_v3_fp8(void **state)
{
    (void)state;
    load_data("deepseek-v3.json", &file_m);
    /* attention: q_a 7168x1536 11,010,048 + q_b 1536x(128x192) 37,748,736
     * + kv_a 7168x576 4,128,768 + kv_b 512x(128x256) 16,777,216 + o
     * (128x128)x7168 117,440,512 = 187,105,280. Dense MLP 3 x 7168x18432
     * = 396,361,728 (3 layers). MoE: router 7168x256 1,835,008 + shared
     * 44,040,192 + 256 x 44,040,192 = 11,507,269,632 with attention (58
     * layers) = 667,421,638,656 + 3 x 583,467,008 + 2 x 129,280 x 7,168
     * = 671,025,397,760: the card's 671 B (MTP layer excluded). The MTP
     * module (num_nextn_predict_layers 1) is resident: one more MoE layer
     * with its attention, 11,507,269,632 (the figure above includes the
     * attention's 187,105,280), and eh_proj 2 x 7168 -> 7168 102,760,448
     * (its embedding and head are the main model's): 671,025,397,760 +
     * 11,610,030,080 = 682,635,427,840, the 685 B of the checkpoint less
     * the copies of embedding and head it ships (2 x 926,679,040) */
    assert_int_equal(file_m.mtp_layers, 1);
    assert_int_equal(params_total(&file_m), 682635427840ull);
    /* active: 58 x (187,105,280 + 1,835,008 + 9 x 44,040,192) + 3 x
     * 583,467,008 + lm_head 926,679,040 = 36,624,596,992 (card: 37 B) */
    assert_int_equal(params_streamed(&file_m), 36624596992ull);
    /* W8A8 fp8: activations fp8, so the fp8 peak */
    rf_step_opts o = rf_step_opts_for_model(&file_m);
    assert_int_equal(o.a.kind, RF_FP8_E4M3);
    assert_int_equal(rf_dtype_math(o.w, o.a), RF_FP8_E4M3);
    decode(&file_m, NULL, 1, 0, &st);
    assert_int_equal(st.roof.math, RF_FP8_E4M3);
    /* 128x128 blocks, one fp32 scale each: q_a 11,010,048 bytes + 672
     * blocks x 4 = 11,012,736; the router stays bf16: 7168 x 256 x 2 */
    assert_int_equal(op_named(&st, "q_a_proj")->weight_bytes, 11012736ull);
    assert_int_equal(op_named(&st, "router")->weight_bytes, 3670016ull);
    assert_int_equal(op_named(&st, "lm_head")->weight_bytes, 2ull * 926679040);
}

static void test_qwen_moe_families(void **state)
{
    (void)state;
    load_data("qwen3-30b-a3b.json", &file_m);
    /* attention: q, o 2048x4096 (head_dim 128 != 2048/32) + k, v 2048x512
     * = 18,874,368; router 2048x128 262,144; expert 3 x 2048x768
     * 4,718,592 x 128. Layer 623,116,288 x 48 + 2 x 151,936 x 2,048
     * = 30,531,911,680 (card: 30.5 B) */
    assert_int_equal(params_total(&file_m), 30531911680ull);
    /* active: 48 x (18,874,368 + 262,144 + 8 x 4,718,592) + 311,164,928
     * = 3,041,656,832 (card: 3.3 B activated, embedding included) */
    assert_int_equal(params_streamed(&file_m), 3041656832ull);

    load_data("qwen1.5-moe-a2.7b.json", &file_m);
    /* one shared expert 3 x 2048x5632 = 34,603,008 with its gate, counted
     * with the router: 2048 x (60 + 1) = 124,928; 60 experts x 3 x
     * 2048x1408 = 519,045,120; attention 4 x 2048^2 = 16,777,216. Layer
     * 570,550,272 x 24 + 622,329,856 = 14,315,536,384 (card: 14.3 B) */
    assert_int_equal(params_total(&file_m), 14315536384ull);
    assert_int_equal(file_m.n_shared, 1);
    decode(&file_m, NULL, 1, 0, &st);
    assert_int_equal(op_named(&st, "router")->n, 61);
}

static void test_dense_families(void **state)
{
    (void)state;
    /* qwen3: head_dim 128 with hidden 2560 and 32 heads (80 if derived);
     * tied. Layer: q, o 2560x4096 + k, v 2560x1024 + 3 x 2560x9728 =
     * 26,214,400 + 74,711,040 = 100,925,440; x 36 + 151,936 x 2,560 =
     * 4,022,272,000 (card: 4.0 B) */
    load_data("qwen3-4b.json", &file_m);
    assert_int_equal(file_m.head_dim, 128);
    assert_true(file_m.tied);
    assert_int_equal(params_total(&file_m), 4022272000ull);

    /* gemma3 in text_config, heads and vocabulary from Gemma3TextConfig
     * (8, 262,208), head_dim 256: layer 2560x2048 x 2 + 2560x1024 x 2 +
     * 3 x 2560x10240 = 94,371,840; x 34 + 262,208 x 2,560 (tied) =
     * 3,879,895,040. Every 6th layer global: 29 of 34 sliding (window 1024) */
    load_data("gemma-3-4b-it.json", &file_m);
    assert_string_equal(file_m.family, "gemma3_text");
    assert_int_equal(file_m.n_q, 8);
    assert_int_equal(file_m.n_kv, 4);
    assert_int_equal(params_total(&file_m), 3879895040ull);
    assert_int_equal(rf_model_sliding_layers(&file_m), 29);
    assert_int_equal(file_m.window, 1024);
    assert_false(file_m.sliding[5]);
    assert_true(file_m.sliding[4]);
    assert_non_null(strstr(file_m.notes, "text_config"));

    /* phi3: 4 x 3072^2 + 3 x 3072x8192 = 113,246,208 a layer; x 32 + 2 x
     * 32,064 x 3,072 = 3,820,879,872 (card: 3.8 B); window 2047 on all */
    load_data("phi-3-mini-4k-instruct.json", &file_m);
    assert_int_equal(params_total(&file_m), 3820879872ull);
    assert_int_equal(rf_model_sliding_layers(&file_m), 32);
    assert_int_equal(file_m.window, 2047);

    /* mistral without a sliding_window key: MistralConfig's 4096 applies */
    load_data("mistral-7b-v0.1.json", &file_m);
    assert_int_equal(file_m.window, 4096);
    assert_int_equal(rf_model_sliding_layers(&file_m), 32);
    assert_non_null(strstr(file_m.notes, "sliding_window absent"));
    /* 7.24 B: 32 x (2 x 4096^2 + 2 x 4096x1024 + 3 x 4096x14336) +
     * 2 x 32,000 x 4,096 = 32 x 218,103,808 + 262,144,000 */
    assert_int_equal(params_total(&file_m), 7241465856ull);

    /* a family we do not know is refused, naming model_type and the known
     * families (it was read as a dense decoder with a warning before issue
     * 24); read as a named family it says so, fp32 from torch_dtype */
    char path[1024];
    rf_err e;
    snprintf(path, sizeof path, "%s/models/olmo2-tiny.json", RF_TEST_DATA);
    assert_int_equal(rf_model_load(path, &file_m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "model_type olmo2 is not a known family (known: llama, "));
    assert_non_null(strstr(e.msg, "--family NAME reads it as one"));
    rf_read_opts as_llama = {.family = "llama"};
    assert_int_equal(rf_model_load_opts(path, &as_llama, &file_m, &e), RF_OK);
    assert_string_equal(file_m.family, "llama");
    assert_string_equal(file_m.family_forced_from, "olmo2");
    /* said once, by family_forced_from (the CLI's "family:" line); the
     * notes keep only what else the reader assumed */
    assert_null(strstr(file_m.notes, "--family"));
    assert_null(strstr(file_m.notes, "olmo2"));
    assert_int_equal(file_m.n_experts, 0);
    assert_int_equal(file_m.weight_dtype.kind, RF_FP32);

    /* a folder holding config.json: named after the folder; Llama-3-8B's
     * shapes, so the book chapter's 15.01 GB streamed (15,009,316,864 bytes) */
    load_data("folder-model", &file_m);
    assert_string_equal(file_m.name, "folder-model");
    decode(&file_m, NULL, 1, 0, &st);
    assert_int_equal(st.weight_bytes, 15009316864ull);
}

/* ---- quantization ----------------------------------------------------- */

static void test_quantized(void **state)
{
    (void)state;
    /* AWQ int4, group 128, fp16 scales; lm_head kept in fp16 (torch_dtype).
     * A 128-multiple K x N matrix costs K N (1/2 + 2/128) = K N x 33/64:
     * 28 layers x 233,046,016 x 33/64 = 3,364,601,856, + lm_head
     * 544,997,376 x 2 = 1,089,994,752 -> 4,454,596,608 bytes */
    load_data("qwen2.5-7b-instruct-awq.json", &file_m);
    assert_int_equal(file_m.weight_dtype.kind, RF_INT4);
    assert_int_equal(file_m.weight_dtype.group_size, 128);
    assert_null(strstr(file_m.notes, "group_size absent"));
    /* without group_size the reader assumes 128 and says so */
    static const char no_group[] =
        "{\"model_type\": \"qwen2\", \"hidden_size\": 64, \"intermediate_size\": 128, "
        "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2, "
        "\"vocab_size\": 256, \"torch_dtype\": \"auto\", "
        "\"quantization_config\": {\"bits\": 4, \"quant_method\": \"gptq\"}}";
    rf_model q;
    rf_err e;
    assert_int_equal(rf_model_parse(no_group, sizeof no_group - 1, "q.json", &q, &e), RF_OK);
    assert_int_equal(q.weight_dtype.group_size, 128);
    assert_non_null(strstr(q.notes, "gptq group_size absent: 128 assumed"));
    assert_non_null(strstr(q.notes, "torch_dtype \"auto\": bf16 weights assumed"));
    assert_int_equal(file_m.unquantized_dtype.kind, RF_FP16);
    decode(&file_m, NULL, 1, 0, &st);
    assert_int_equal(st.weight_bytes, 4454596608ull);
    /* weight-only: the compute roof stays the 16-bit one */
    assert_int_equal(st.roof.math, RF_BF16);

    /* --weight-dtype int4 --group-size 128 on the bf16 Qwen2.5-7B: every
     * module, lm_head included: 7,070,285,824 x 33/64 = 3,645,616,128 */
    load_shared("qwen2.5-7b-instruct.json", &file_m);
    rf_step_opts o = rf_step_opts_for_model(&file_m);
    o.w = (rf_dtype){.kind = RF_INT4, .group_size = 128, .scale_bytes = 2};
    o.w_all_modules = true;
    decode(&file_m, &o, 1, 0, &st);
    assert_int_equal(st.weight_bytes, 3645616128ull);
    assert_int_equal(st.roof.math, RF_BF16);
}

/* ---- invalid configs --------------------------------------------------- */

static void test_invalid_configs(void **state)
{
    (void)state;
    static const struct {
        const char *file, *says;
    } bad[] = {
        {"bad-missing-hidden.json", "hidden_size is missing"},
        {"bad-heads-hidden.json",
         "num_attention_heads (5) must divide hidden_size (4096) when head_dim is absent"},
        {"bad-kv-heads.json", "num_key_value_heads (6) must divide num_attention_heads (32)"},
        {"bad-zero-experts.json", "num_local_experts (0) must be at least 1"},
        {"bad-topk.json", "num_experts_per_tok (3) must not exceed num_local_experts (2)"},
        {"bad-hidden-type.json", "hidden_size must be an integer, not a string"},
        {"bad-layer-types.json", "layer_types has 2 entries but num_hidden_layers is 3"},
        {"bad-quant-method.json", "quantization_config.quant_method (compressed-tensors)"},
        {"bad-json.json", "line 2"},
        {"no-such-config.json", "no-such-config.json"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[1024];
        rf_err e;
        snprintf(path, sizeof path, "%s/models/%s", RF_TEST_DATA, bad[i].file);
        rf_status s = rf_model_load(path, &file_m, &e);
        assert_int_not_equal(s, RF_OK);
        assert_int_equal(e.status, s);
        if (!strstr(e.msg, bad[i].says) || !strstr(e.msg, bad[i].file))
            fail_msg("%s: got '%s', want '%s'", bad[i].file, e.msg, bad[i].says);
    }
}

/* Parsing from memory: the origin names the model; a top-k given without
 * experts in a MoE family keeps the family default of experts. */
static void test_parse_text(void **state)
{
    (void)state;
    static const char cfg[] = "{\"model_type\": \"mixtral\", \"hidden_size\": 1024,"
                              " \"num_hidden_layers\": 2, \"num_attention_heads\": 8}";
    rf_err e;
    assert_int_equal(rf_model_parse(cfg, sizeof cfg - 1, "dir/tiny/config.json", &file_m, &e),
                     RF_OK);
    assert_string_equal(file_m.name, "tiny");
    /* MixtralConfig defaults: 8 KV heads, 8 experts, top-2, 14336 wide,
     * vocabulary 32000, untied */
    assert_int_equal(file_m.n_kv, 8);
    assert_int_equal(file_m.n_experts, 8);
    assert_int_equal(file_m.top_k, 2);
    assert_int_equal(file_m.moe_ffn, 14336);
    assert_int_equal(file_m.vocab, 32000);
    assert_false(file_m.tied);
    assert_non_null(strstr(file_m.notes, "vocab_size 32000"));
    /* deepseek_v2 has no default top-k: required */
    static const char ds[] = "{\"model_type\": \"deepseek_v2\", \"hidden_size\": 1024,"
                             " \"num_hidden_layers\": 2}";
    assert_int_equal(rf_model_parse(ds, sizeof ds - 1, "ds.json", &file_m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "num_experts_per_tok is missing"));
}

/* ---- the context a model was built for (max_position_embeddings) ------ */

/* Read from the decoder's object, the family's default (named in notes)
 * when absent, 0 for a family with none; 0, negative, beyond
 * RF_MODEL_MAX_CONTEXT or not an integer: refused naming the field. */
static void test_max_context(void **state)
{
    (void)state;
    rf_err e;
    /* every preset carries its config's figure (llama-3-8b 8192, qwen2.5
     * 32768, deepseek-v2-lite 163840): the equality with the file is
     * test_shared_configs_equal_presets; here two by value */
    assert_int_equal(rf_model_preset("llama-3-8b", &preset_m, NULL), RF_OK);
    assert_int_equal(preset_m.max_context, 8192);
    assert_int_equal(rf_model_preset("qwen2.5-7b-instruct", &preset_m, NULL), RF_OK);
    assert_int_equal(preset_m.max_context, 32768);
    /* gpt-oss: 131072, not its rope_scaling's original 4096 */
    load_data("gpt-oss-20b.json", &file_m);
    assert_int_equal(file_m.max_context, 131072);
    load_data("deepseek-v3.json", &file_m);
    assert_int_equal(file_m.max_context, 163840);
    load_data("phi-3-mini-4k-instruct.json", &file_m);
    assert_int_equal(file_m.max_context, 4096);
    /* gemma-3's text_config leaves it out: Gemma3TextConfig's 131072 */
    load_data("gemma-3-4b-it.json", &file_m);
    assert_int_equal(file_m.max_context, 131072);
    assert_non_null(strstr(file_m.notes, "max_position_embeddings 131072"));
    /* a family with no configuration class to take a default from
     * (GLM-4.7-Flash's glm4_moe_lite), none given: unknown */
    static const char lite[] =
        "{\"model_type\": \"glm4_moe_lite\", \"hidden_size\": 2048, \"num_hidden_layers\": 2, "
        "\"num_attention_heads\": 20, \"intermediate_size\": 10240, \"vocab_size\": 154880, "
        "\"n_routed_experts\": 64, \"num_experts_per_tok\": 4, \"moe_intermediate_size\": 1536}";
    rf_err lite_e;
    assert_int_equal(rf_model_parse(lite, sizeof lite - 1, "lite.json", &file_m, &lite_e), RF_OK);
    assert_int_equal(file_m.max_context, 0);
    static const struct {
        const char *cfg, *says;
        rf_status s;
    } bad[] = {
        {"\"max_position_embeddings\": 0", "max_position_embeddings (0) must be at least 1",
         RF_EINVAL},
        {"\"max_position_embeddings\": -4096", "max_position_embeddings (-4096) must be at least 1",
         RF_EINVAL},
        {"\"max_position_embeddings\": 33554432",
         "max_position_embeddings (33554432) is beyond the accepted 16777216", RF_ERANGE},
        {"\"max_position_embeddings\": \"8192\"",
         "max_position_embeddings must be an integer, not a string", RF_EINVAL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cfg[512];
        int n = snprintf(cfg, sizeof cfg,
                         "{\"model_type\": \"llama\", \"hidden_size\": 1024, "
                         "\"num_hidden_layers\": 2, %s}",
                         bad[i].cfg);
        assert_int_equal(rf_model_parse(cfg, (size_t)n, "ctx.json", &file_m, &e), bad[i].s);
        if (!strstr(e.msg, bad[i].says) || !strstr(e.msg, "ctx.json"))
            fail_msg("%s: got '%s', want '%s'", bad[i].cfg, e.msg, bad[i].says);
    }
    /* rf_model_validate holds the same bound for a model built in code */
    assert_int_equal(rf_model_preset("llama-3-8b", &preset_m, NULL), RF_OK);
    preset_m.max_context = RF_MODEL_MAX_CONTEXT + 1;
    assert_int_equal(rf_model_validate(&preset_m, &e), RF_ERANGE);
    assert_non_null(strstr(e.msg, "max_position_embeddings"));
}

/* ---- every default applied to a shape is named; a null is refused ----- */

/* The note lists each absent shape field with the value taken, from the
 * family's configuration class in transformers (Qwen2MoeConfig: 16 heads,
 * 5632 wide, 60 experts, top-4, 1408 a routed expert, 5632 the shared
 * one; DeepseekV2Config: 32 heads, kv_lora_rank 512, q_lora_rank 1536,
 * 64 experts, 1407 wide), or the rule when derived (head_dim = 1024 / 16). */
static void test_shape_defaults_named(void **state)
{
    (void)state;
    rf_err e;
    static const char qm[] = "{\"model_type\": \"qwen2_moe\", \"hidden_size\": 1024,"
                             " \"num_hidden_layers\": 4}";
    assert_int_equal(rf_model_parse(qm, sizeof qm - 1, "qm.json", &file_m, &e), RF_OK);
    static const char *const qm_named[] = {"absent, qwen2_moe defaults: num_attention_heads 16",
                                           "intermediate_size 5632",
                                           "vocab_size 151936",
                                           "max_position_embeddings 8192",
                                           "num_key_value_heads 16 (num_attention_heads)",
                                           "head_dim 64 (hidden_size / num_attention_heads)",
                                           "num_experts 60",
                                           "num_experts_per_tok 4",
                                           "moe_intermediate_size 1408",
                                           "shared_expert_intermediate_size 5632",
                                           "decoder_sparse_step 1"};
    for (size_t i = 0; i < sizeof qm_named / sizeof qm_named[0]; i++)
        if (!strstr(file_m.notes, qm_named[i]))
            fail_msg("qwen2_moe notes lack '%s': %s", qm_named[i], file_m.notes);
    assert_int_equal(file_m.n_kv, 16);
    assert_int_equal(file_m.head_dim, 64);
    static const char ds[] = "{\"model_type\": \"deepseek_v2\", \"hidden_size\": 1024,"
                             " \"num_hidden_layers\": 4, \"num_experts_per_tok\": 2}";
    assert_int_equal(rf_model_parse(ds, sizeof ds - 1, "ds.json", &file_m, &e), RF_OK);
    static const char *const ds_named[] = {"absent, deepseek_v2 defaults: num_attention_heads 32",
                                           "kv_lora_rank 512",
                                           "q_lora_rank 1536",
                                           "qk_nope_head_dim 128",
                                           "qk_rope_head_dim 64",
                                           "v_head_dim 128",
                                           "n_routed_experts 64",
                                           "moe_intermediate_size 1407",
                                           "n_shared_experts 2",
                                           "moe_layer_freq 1"};
    for (size_t i = 0; i < sizeof ds_named / sizeof ds_named[0]; i++)
        if (!strstr(file_m.notes, ds_named[i]))
            fail_msg("deepseek_v2 notes lack '%s': %s", ds_named[i], file_m.notes);
    /* MLA: no head_dim entry (it is qk_nope + qk_rope = 192, not 1024 / 32) */
    assert_null(strstr(file_m.notes, "head_dim 32"));
    assert_int_equal(file_m.head_dim, 192);
    /* a complete config names nothing: every field given */
    load_data("qwen3-4b.json", &file_m);
    assert_null(strstr(file_m.notes, "absent,"));

    /* null in a shape field: an error naming it, in every family; the
     * fields whose null means "none" (sliding_window, q_lora_rank,
     * shared_expert_intermediate_size) keep that reading */
    static const struct {
        const char *cfg, *key;
    } nulls[] = {
        {"\"model_type\": \"llama\", \"num_key_value_heads\": null", "num_key_value_heads"},
        {"\"model_type\": \"mistral\", \"num_key_value_heads\": null", "num_key_value_heads"},
        {"\"model_type\": \"qwen2\", \"head_dim\": null", "head_dim"},
        {"\"model_type\": \"llama\", \"vocab_size\": null", "vocab_size"},
        {"\"model_type\": \"llama\", \"intermediate_size\": null", "intermediate_size"},
        {"\"model_type\": \"mixtral\", \"num_experts_per_tok\": null", "num_experts_per_tok"},
        {"\"model_type\": \"qwen3_moe\", \"moe_intermediate_size\": null", "moe_intermediate_size"},
        {"\"model_type\": \"deepseek_v3\", \"kv_lora_rank\": null", "kv_lora_rank"},
        {"\"model_type\": \"llama\", \"num_hidden_layers\": null, \"n\": 1", "num_hidden_layers"},
    };
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++) {
        char cfg[512], want[96];
        int n =
            snprintf(cfg, sizeof cfg, "{%s, \"hidden_size\": 1024%s}", nulls[i].cfg,
                     strstr(nulls[i].cfg, "num_hidden_layers") ? "" : ", \"num_hidden_layers\": 2");
        snprintf(want, sizeof want, "%s is null", nulls[i].key);
        assert_int_equal(rf_model_parse(cfg, (size_t)n, "null.json", &file_m, &e), RF_EINVAL);
        if (!strstr(e.msg, want) || !strstr(e.msg, "null.json"))
            fail_msg("%s: got '%s', want '%s'", nulls[i].cfg, e.msg, want);
    }
    load_data("qwen3-4b.json", &file_m); /* "sliding_window": null */
    assert_int_equal(file_m.window, 0);
    load_shared("deepseek-v2-lite.json", &file_m); /* "q_lora_rank": null */
    assert_int_equal(file_m.q_lora_rank, 0);
}

/* ---- a field present is validated whatever decides its use ----------- */

static void test_fields_validated_when_unused(void **state)
{
    (void)state;
    rf_err e;
    /* qwen2 with use_sliding_window false: layer_types is still checked */
    static const char banana[] = "{\"model_type\": \"qwen2\", \"hidden_size\": 1024,"
                                 " \"num_hidden_layers\": 2, \"use_sliding_window\": false,"
                                 " \"layer_types\": [\"banana\", \"full_attention\"]}";
    assert_int_equal(rf_model_parse(banana, sizeof banana - 1, "q.json", &file_m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "layer_types[0] (banana) is not modelled"));
    static const char one[] = "{\"model_type\": \"qwen3\", \"hidden_size\": 1024,"
                              " \"num_hidden_layers\": 28, \"use_sliding_window\": false,"
                              " \"layer_types\": [\"full_attention\"]}";
    assert_int_equal(rf_model_parse(one, sizeof one - 1, "q.json", &file_m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "layer_types has 1 entries but num_hidden_layers is 28"));
    /* a valid list naming sliding layers, switched off: no window, said so */
    static const char off[] = "{\"model_type\": \"qwen2\", \"hidden_size\": 1024,"
                              " \"num_hidden_layers\": 2, \"use_sliding_window\": false,"
                              " \"sliding_window\": 4096, \"layer_types\":"
                              " [\"sliding_attention\", \"full_attention\"]}";
    assert_int_equal(rf_model_parse(off, sizeof off - 1, "q.json", &file_m, &e), RF_OK);
    assert_int_equal(file_m.window, 0);
    assert_int_equal(rf_model_sliding_layers(&file_m), 0);
    assert_non_null(strstr(file_m.notes, "layer_types' sliding layers ignored"));
    /* the same list switched on: layer 0 slides over 4096 positions */
    static const char on[] = "{\"model_type\": \"qwen2\", \"hidden_size\": 1024,"
                             " \"num_hidden_layers\": 2, \"use_sliding_window\": true,"
                             " \"sliding_window\": 4096, \"layer_types\":"
                             " [\"sliding_attention\", \"full_attention\"]}";
    assert_int_equal(rf_model_parse(on, sizeof on - 1, "q.json", &file_m, &e), RF_OK);
    assert_int_equal(file_m.window, 4096);
    assert_int_equal(rf_model_sliding_layers(&file_m), 1);
    /* a family that does not read the switch still checks its type, and
     * one without a pattern still checks sliding_window_pattern */
    static const char sw[] = "{\"model_type\": \"mistral\", \"hidden_size\": 1024,"
                             " \"num_hidden_layers\": 2, \"use_sliding_window\": \"yes\"}";
    assert_int_equal(rf_model_parse(sw, sizeof sw - 1, "m.json", &file_m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "use_sliding_window must be true or false"));
    static const char pat[] = "{\"model_type\": \"gemma2\", \"hidden_size\": 1024,"
                              " \"num_hidden_layers\": 2, \"sliding_window_pattern\": 0}";
    assert_int_equal(rf_model_parse(pat, sizeof pat - 1, "g.json", &file_m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "sliding_window_pattern (0) must be at least 1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_configs_equal_presets),
        cmocka_unit_test(test_qwen7b_decode_h100),
        cmocka_unit_test(test_qwen7b_full_context_kv),
        cmocka_unit_test(test_qwen3b_tied),
        cmocka_unit_test(test_mixtral_experts_touched),
        cmocka_unit_test(test_deepseek_v2_lite),
        cmocka_unit_test(test_deepseek_mla_attention),
        cmocka_unit_test(test_gemma2),
        cmocka_unit_test(test_gpt_oss_mxfp4),
        cmocka_unit_test(test_deepseek_v3_fp8),
        cmocka_unit_test(test_qwen_moe_families),
        cmocka_unit_test(test_dense_families),
        cmocka_unit_test(test_quantized),
        cmocka_unit_test(test_invalid_configs),
        cmocka_unit_test(test_parse_text),
        cmocka_unit_test(test_max_context),
        cmocka_unit_test(test_shape_defaults_named),
        cmocka_unit_test(test_fields_validated_when_unused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
