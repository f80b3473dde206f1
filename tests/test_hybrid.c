/* test_hybrid.c - the 2025-26 layers of the core on small synthetic models.
 *
 * Each model is a handful of layers with round shapes, so that every
 * expected figure below can be derived by hand from the fields in the
 * comment beside it: parameters, KV bytes a token, state bytes a sequence,
 * and each new operator's FLOPs and bytes in decode and prefill
 * (formulas: rf_op.h, docs/accounting.md). H = 64 and V = 100 throughout:
 * embedding and lm_head 6,400 each. Dtypes bf16 (2 bytes) unless named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_dtype.h"
#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_op.h"
#include "roofline/rf_parallel.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_step.h"

static rf_model base(const char *name, int64_t layers)
{
    rf_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", name);
    snprintf(m.family, sizeof m.family, "test");
    m.hidden = 64;
    m.layers = layers;
    m.vocab = 100;
    m.n_q = 4;
    m.n_kv = 2;
    m.head_dim = 16;
    m.max_context = 4096;
    return m;
}

/* Qwen3-Next in small: layers GDN, GDN, GDN, gated attention; every layer
 * MoE (8 experts of 32, top 2, one shared expert of 64 with its gate); one
 * MTP layer. GDN: Kh 2 key heads of dk 8, Vh 4 value heads of dv 8,
 * conv kernel 4. */
static rf_model tiny_gdn(void)
{
    rf_model m = base("tiny-gdn", 4);
    for (int l = 0; l < 3; l++)
        m.mixer[l] = RF_MIX_GDN;
    m.attn_out_gate = true;
    m.gdn_k_heads = 2;
    m.gdn_v_heads = 4;
    m.gdn_k_dim = 8;
    m.gdn_v_dim = 8;
    m.gdn_conv = 4;
    m.n_experts = 8;
    m.top_k = 2;
    m.moe_ffn = 32;
    m.n_shared = 1;
    m.shared_ffn = 64;
    m.shared_expert_gate = true;
    m.mtp_layers = 1;
    return m;
}

/* Nemotron-H in small, pattern "M-M*E": Mamba2, MLP, Mamba2, attention,
 * MoE; ungated (squared ReLU) MLP and experts. Mamba2: h 4 heads of P 8,
 * state N 16, G 2 groups, kernel 4, chunk 32. MLP 128; 4 experts of 32,
 * top 2, one shared of 48. */
static rf_model tiny_mamba(void)
{
    rf_model m = base("tiny-mamba", 5);
    const uint8_t mix[5] = {RF_MIX_MAMBA2, RF_MIX_NONE, RF_MIX_MAMBA2, RF_MIX_ATTN, RF_MIX_NONE};
    const uint8_t none[5] = {1, 0, 1, 1, 0};
    memcpy(m.mixer, mix, sizeof mix);
    memcpy(m.no_ffn, none, sizeof none);
    m.dense_mlp[1] = 1;
    m.ffn_ungated = true;
    m.ffn = 128;
    m.ssm_heads = 4;
    m.ssm_head_dim = 8;
    m.ssm_state = 16;
    m.ssm_groups = 2;
    m.ssm_conv = 4;
    m.ssm_chunk = 32;
    m.n_experts = 4;
    m.top_k = 2;
    m.moe_ffn = 32;
    m.n_shared = 1;
    m.shared_ffn = 48;
    return m;
}

/* DeepSeek-V3.2 in small: 2 MLA layers (q_lora 32, kv_lora 16, nope 8,
 * rope 4, v 8) with the indexer (2 heads of 128, top 50), dense MLP 96. */
static rf_model tiny_dsa(void)
{
    rf_model m = base("tiny-dsa", 2);
    m.n_kv = 4;
    m.q_lora_rank = 32;
    m.kv_lora_rank = 16;
    m.qk_nope_dim = 8;
    m.qk_rope_dim = 4;
    m.v_head_dim = 8;
    m.index_heads = 2;
    m.index_head_dim = 128;
    m.index_topk = 50;
    m.ffn = 96;
    return m;
}

/* Llama-4's chunked attention in small: layers 0-2 chunked (chunk 8),
 * layer 3 global; dense MLP 128. */
static rf_model tiny_chunked(void)
{
    rf_model m = base("tiny-chunked", 4);
    m.attn_chunk = 8;
    m.chunked[0] = m.chunked[1] = m.chunked[2] = 1;
    m.ffn = 128;
    return m;
}

/* gemma-4's layers in small: layer 0 sliding (window 32) with its own
 * shapes (4 heads, 2 KV heads of 16), layer 1 global with 4 heads, 1 KV
 * head of 32 and V = K (k_eq_v); dense MLP 128. */
static rf_model tiny_local(void)
{
    rf_model m = base("tiny-local", 2);
    m.n_kv = 1;
    m.head_dim = 32;
    m.k_eq_v = true;
    m.window = 32;
    m.sliding[0] = 1;
    m.local_n_q = 4;
    m.local_n_kv = 2;
    m.local_head_dim = 16;
    m.ffn = 128;
    return m;
}

static rf_param_counts params(const rf_model *m)
{
    rf_param_counts p;
    rf_err e = {0};
    if (rf_model_params(m, &p, &e))
        fail_msg("%s", e.msg);
    return p;
}

static rf_roof roof(void)
{
    rf_hw h;
    rf_roof r;
    assert_int_equal(rf_hw_preset("h100-sxm", &h, NULL), RF_OK);
    assert_int_equal(rf_hw_roof(&h, RF_BF16, &r, NULL), RF_OK);
    return r;
}

static void step(const rf_model *m, rf_phase phase, int64_t batch, int64_t context, int64_t tokens,
                 bool causal, rf_step *st)
{
    rf_step_opts o = rf_step_opts_default();
    o.phase = phase;
    o.batch = batch;
    o.context = context;
    o.tokens = tokens;
    o.causal = causal;
    rf_roof r = roof();
    rf_err e = {0};
    if (rf_step_compute(m, &o, &r, st, &e))
        fail_msg("%s", e.msg);
}

/* The row named `name` of kind `kind` (the n-th of them, 0-based). */
static const rf_op *row(const rf_step *st, const char *name, int nth)
{
    for (size_t i = 0; i < st->n_ops; i++)
        if (!strcmp(st->ops[i].name, name) && nth-- == 0)
            return &st->ops[i];
    fail_msg("no row %s", name);
    return NULL;
}

static bool has_row(const rf_step *st, const char *name)
{
    for (size_t i = 0; i < st->n_ops; i++)
        if (!strcmp(st->ops[i].name, name))
            return true;
    return false;
}

static uint64_t kv_bytes(const rf_model *m, int64_t context)
{
    uint64_t b;
    assert_int_equal(rf_model_kv_bytes(m, rf_dtype_of(RF_BF16), context, &b, NULL), RF_OK);
    return b;
}

static uint64_t state_bytes(const rf_model *m)
{
    uint64_t b;
    assert_int_equal(rf_model_state_bytes(m, &b, NULL), RF_OK);
    return b;
}

static void test_gdn_params_kv_state(void **state)
{
    (void)state;
    rf_model m = tiny_gdn();
    rf_param_counts p = params(&m);
    /* gated attention: q_proj 64 x (4 x 16 x 2) 8,192 + k, v 64 x 32
     * 2,048 each + o_proj 64 x 64 4,096 = 16,384.
     * GDN: in_proj_qkvz 64 x (2 x 16 + 2 x 32) 6,144 + in_proj_ba 64 x 8
     * 512 + conv1d (2 x 16 + 32 = 64 channels) x 4 256 + out_proj 32 x 64
     * 2,048 = 8,960.
     * MoE: router 64 x (8 + 1) 576 + shared 3 x 64 x 64 12,288 + experts
     * 8 x 3 x 64 x 32 49,152 = 62,016; streamed 576 + 12,288 + 2 x 6,144
     * = 25,152.
     * Layers 3 x (8,960 + 62,016) + 16,384 + 62,016 = 291,328.
     * MTP: eh_proj 2 x 64 x 64 8,192 + attention 16,384 + MoE 62,016
     * = 86,592. Total 291,328 + 86,592 + 2 x 6,400 = 390,720. */
    assert_int_equal(p.total, 390720);
    assert_int_equal(p.mtp, 86592);
    assert_int_equal(p.by_module[RF_MOD_MIXER], 3 * 8960);
    assert_int_equal(p.by_module[RF_MOD_ATTN], 16384 + 16384 + 8192);
    /* streamed: 3 x (8,960 + 25,152) + 16,384 + 25,152 + lm_head 6,400 =
     * 150,272 (the MTP layer not streamed) */
    assert_int_equal(p.streamed_per_token, 150272);
    assert_int_equal(rf_model_attn_layers(&m), 1);
    /* KV: the attention layer alone, 2 x 2 x 16 = 64 elements a token, 128
     * bytes; 128,000 at 1,000 positions */
    assert_int_equal(kv_bytes(&m, 1), 128);
    assert_int_equal(kv_bytes(&m, 1000), 128000);
    /* state: Vh dk dv = 4 x 8 x 8 = 256 elements (512 bytes) + conv
     * (4 - 1) x 64 = 192 (384 bytes) = 896 a layer, 2,688 over 3 */
    assert_int_equal(state_bytes(&m), 2688);
    /* fp32 state: 1,024 + 384 = 1,408 a layer, 4,224 */
    m.state_dtype = rf_dtype_of(RF_FP32);
    m.has_state_dtype = true;
    assert_int_equal(state_bytes(&m), 4224);
}

static void test_gdn_ops(void **state)
{
    (void)state;
    rf_model m = tiny_gdn();
    rf_step st;
    /* decode, B = 2 at s = 100 */
    step(&m, RF_DECODE, 2, 100, 1, false, &st);
    const rf_op *c = row(&st, "gdn_conv", 0), *g = row(&st, "gdn_delta_rule", 0);
    assert_int_equal(c->count, 3);
    assert_int_equal(c->kind, RF_OP_ATTN_DECODE);
    /* conv: F = 2 K D M = 2 x 4 x 64 x 2 = 1,024; weights 4 x 64 x 2 = 512
     * bytes; state 2 (read, write) x 3 x 64 x 2 seqs x 2 = 1,536 */
    assert_int_equal(c->flops, 1024);
    assert_int_equal(c->weight_bytes, 512);
    assert_int_equal(c->kv_bytes, 1536);
    assert_int_equal(c->bytes, 2048);
    /* delta rule: F = 7 Vh dk dv M = 7 x 4 x 8 x 8 x 2 = 3,584; Q = 2 x 256
     * x 2 seqs x 2 = 2,048 */
    assert_int_equal(g->count, 3);
    assert_int_equal(g->flops, 3584);
    assert_int_equal(g->bytes, 2048);
    /* attention (1 layer): F = 4 n_q S d_h B = 4 x 4 x 100 x 16 x 2 =
     * 51,200; K/V 2 x 2 x 100 x 16 x 2 x 2 = 25,600 */
    const rf_op *a = row(&st, "attention", 0);
    assert_int_equal(a->count, 1);
    assert_int_equal(a->flops, 51200);
    assert_int_equal(a->kv_bytes, 25600);
    /* the output gate doubles q_proj's N: 4 x 16 x 2 = 128 */
    assert_int_equal(row(&st, "q_proj", 0)->n, 128);
    assert_int_equal(row(&st, "in_proj_qkvz", 0)->n, 96);
    assert_int_equal(row(&st, "in_proj_ba", 0)->n, 8);
    assert_int_equal(row(&st, "out_proj", 0)->k, 32);
    /* one router row over all 4 layers (the classes merge) */
    assert_int_equal(row(&st, "router", 0)->count, 4);
    /* step KV: 25,600 + 3 x (1,536 + 2,048) = 36,352; weights include the
     * convs' 3 x 512 */
    assert_int_equal(st.kv_bytes, 36352);

    /* prefill, B = 1, s = 0, T = 100: chunks of 64, one full and c = 36.
     * f(c) = 6 c dk dv + 6 c^2 dk + 4 c^2 dv + (c - 1) c (c + 1) / 3:
     * f(64) = 24,576 + 196,608 + 131,072 + 87,360 = 439,616
     * f(36) = 13,824 + 62,208 + 41,472 + 15,540 = 133,044
     * F = Vh (f(64) + f(36)) = 4 x 572,660 = 2,290,640; no state held:
     * written once, 256 x 2 = 512 bytes */
    step(&m, RF_PREFILL, 1, 0, 100, false, &st);
    g = row(&st, "gdn_delta_rule", 0);
    assert_int_equal(g->kind, RF_OP_ATTN_PREFILL);
    assert_int_equal(g->flops, 2290640);
    assert_int_equal(g->kv_bytes, 512);
    /* conv: F = 2 x 4 x 64 x 100 = 51,200; state written 3 x 64 x 2 = 384 */
    c = row(&st, "gdn_conv", 0);
    assert_int_equal(c->flops, 51200);
    assert_int_equal(c->kv_bytes, 384);
    /* after s = 50 cached: the state is read too, 1,024 and 768 */
    step(&m, RF_PREFILL, 1, 50, 100, false, &st);
    assert_int_equal(row(&st, "gdn_delta_rule", 0)->kv_bytes, 1024);
    assert_int_equal(row(&st, "gdn_conv", 0)->kv_bytes, 768);
    /* attention, causal, s = 0, T = 100: 5,050 pairs, F = 4 x 4 x 5,050 x
     * 16 = 1,292,800 */
    step(&m, RF_PREFILL, 1, 0, 100, true, &st);
    assert_int_equal(row(&st, "attention", 0)->flops, 1292800);
}

static void test_gdn_capacity_draft_layouts(void **state)
{
    (void)state;
    rf_model m = tiny_gdn();
    rf_step_opts o = rf_step_opts_default();
    /* weights 390,720 x 2 = 781,440 bytes; a sequence at 1,000 positions
     * holds 128,000 of KV and 2,688 of state: memory for exactly 10 */
    uint64_t mem = 781440 + 10 * (128000 + 2688);
    rf_capacity c;
    assert_int_equal(rf_capacity_compute(&m, &o, mem, 1.0, 0, 1000, &c, NULL), RF_OK);
    assert_int_equal(c.resident_bytes, 781440);
    assert_int_equal(c.state_bytes_per_seq, 2688);
    assert_true(c.sequences > 10 - 1e-9 && c.sequences < 10 + 1e-9);
    assert_int_equal(c.tokens, 10 * 130688 / 128); /* 10,210 KV tokens */
    /* a fit of 10 sequences needs the same memory */
    rf_fit f;
    o.context = 1000;
    assert_int_equal(rf_step_fit(&m, &o, mem, 1.0, 0, &f, NULL), RF_OK);
    o.batch = 10;
    assert_int_equal(rf_step_fit(&m, &o, mem, 1.0, 0, &f, NULL), RF_OK);
    assert_int_equal(f.needed_bytes, mem);
    assert_true(f.fits);

    /* the MTP draft: one gated attention layer with the MoE block: 16,384
     * + 62,016 + 2 x 6,400 = 91,200 */
    rf_model d;
    assert_int_equal(rf_model_mtp_draft(&m, &d, NULL), RF_OK);
    assert_int_equal(d.layers, 1);
    assert_int_equal(params(&d).total, 91200);
    rf_model plain = base("plain", 2);
    plain.ffn = 128;
    rf_err e = {0};
    assert_int_equal(rf_model_mtp_draft(&plain, &d, &e), RF_EINVAL);
    /* the MTP layers' per-layer entries follow the decoder's: 1,020 + 5
     * layers do not fit RF_MODEL_MAX_LAYERS (1,024) */
    plain.layers = RF_MODEL_MAX_LAYERS - 4;
    plain.mtp_layers = 5;
    assert_int_equal(rf_model_validate(&plain, &e), RF_ERANGE);
    assert_string_equal(e.msg, "num_hidden_layers (1020) + num_nextn_predict_layers (5) is "
                               "beyond the accepted 1024 layers");
    plain.mtp_layers = 4;
    assert_int_equal(rf_model_validate(&plain, &e), RF_OK);

    /* TP 2 halves the GDN heads and their state: Vh 2: 128 elements (256
     * bytes) + conv (2 x 8 + 16 = 32 channels) x 3 = 96 (192 bytes) = 448
     * a layer, 1,344 */
    rf_layout l = rf_layout_single();
    l.tp = 2;
    rf_model sh;
    assert_int_equal(rf_layout_shard(&m, &l, 0, 4, &sh, NULL), RF_OK);
    assert_int_equal(state_bytes(&sh), 1344);
    /* TP 4 does not split the 2 key heads */
    l.tp = 4;
    assert_int_equal(rf_layout_validate(&m, &l, &e), RF_EINVAL);
    assert_string_equal(e.msg, "--tp 4 does not split tiny-gdn: linear_num_key_heads (2) % 4 != 0");
    /* PP 2: the MTP layer's weights on the last stage only */
    l = rf_layout_single();
    l.pp = 2;
    assert_int_equal(rf_layout_shard(&m, &l, 0, 2, &sh, NULL), RF_OK);
    assert_int_equal(sh.mtp_layers, 0);
    assert_int_equal(rf_model_layer_mixer(&sh, 1), RF_MIX_GDN);
    assert_int_equal(rf_layout_shard(&m, &l, 2, 2, &sh, NULL), RF_OK);
    assert_int_equal(sh.mtp_layers, 1);
    assert_int_equal(rf_model_layer_mixer(&sh, 1), RF_MIX_ATTN);
}

static void test_gdn_mixed_step(void **state)
{
    (void)state;
    rf_model m = tiny_gdn();
    rf_step_opts o = rf_step_opts_default();
    rf_roof r = roof();
    rf_mixed_opts mo = {
        .decode_batch = 2, .decode_context = 100, .chunk = 16, .chunk_context = 32, .chunks = 1};
    rf_step st;
    assert_int_equal(rf_mixed_step_compute(&m, &o, &r, &mo, &st, NULL), RF_OK);
    /* decode part: 36,352 (test_gdn_ops). The chunk, T = 16 after 32: its
     * attention reads 48 positions, 2 x 2 x 48 x 16 x 2 = 6,144; the conv
     * state read and written 3 x (2 x 3 x 64 x 2 = 768) = 2,304; the GDN
     * state read and written 3 x (2 x 256 x 2 = 1,024) = 3,072: 11,520.
     * The mixed step reads 47,872 of cached state and KV. */
    assert_int_equal(st.kv_bytes, 47872);
    const rf_op *dec = row(&st, "gdn_delta_rule", 0), *pre = row(&st, "gdn_delta_rule", 1);
    assert_int_equal(dec->kind, RF_OP_ATTN_DECODE);
    assert_int_equal(pre->kind, RF_OP_ATTN_PREFILL);
    /* a shared prefix is refused on recurrent layers */
    rf_serve_opts so = {.concurrency = 4, .prompt = 64, .output = 16};
    so.prefix.shared = 16;
    rf_serve sv;
    rf_err e = {0};
    assert_int_equal(rf_serve_compute(&m, &o, &r, &so, &sv, &e), RF_EINVAL);
    assert_string_equal(e.msg,
                        "tiny-gdn: a shared prefix on Gated DeltaNet or Mamba2 layers is not "
                        "modelled");
}

static void test_mamba(void **state)
{
    (void)state;
    rf_model m = tiny_mamba();
    rf_param_counts p = params(&m);
    /* Mamba2: in_proj 64 x (2 x 32 + 2 x 32 + 4) 8,448 + conv1d (32 + 64
     * = 96 channels) x 4 384 + out_proj 32 x 64 2,048 = 10,880.
     * MLP (ungated): 2 x 64 x 128 = 16,384. Attention: q, o 64 x 64 4,096
     * each, k, v 64 x 32 2,048 each = 12,288. MoE (ungated): router 64 x 4
     * 256 + shared 2 x 64 x 48 6,144 + experts 4 x 2 x 64 x 32 16,384 =
     * 22,784. Total 2 x 10,880 + 16,384 + 12,288 + 22,784 + 12,800 =
     * 86,016; streamed 21,760 + 16,384 + 12,288 + (256 + 6,144 + 2 x
     * 4,096) + 6,400 = 71,424 */
    assert_int_equal(p.total, 86016);
    assert_int_equal(p.streamed_per_token, 71424);
    assert_int_equal(rf_model_moe_layers(&m), 1);
    assert_int_equal(rf_model_attn_layers(&m), 1);
    assert_int_equal(kv_bytes(&m, 1), 128);
    /* state: h P N = 4 x 8 x 16 = 512 (1,024 bytes) + conv 3 x 96 = 288
     * (576 bytes) = 1,600 a layer, 3,200 */
    assert_int_equal(state_bytes(&m), 3200);

    rf_step st;
    step(&m, RF_DECODE, 1, 10, 1, false, &st);
    /* conv: F = 2 x 4 x 96 = 768; weights 4 x 96 x 2 = 768 bytes; state
     * 2 x 288 x 2 = 1,152 */
    const rf_op *c = row(&st, "mamba_conv", 0);
    assert_int_equal(c->count, 2);
    assert_int_equal(c->flops, 768);
    assert_int_equal(c->weight_bytes, 768);
    assert_int_equal(c->kv_bytes, 1152);
    /* SSD decode: F = 5 h P N = 5 x 512 = 2,560; Q = 2 x 512 x 2 = 2,048 */
    const rf_op *s = row(&st, "mamba_ssd", 0);
    assert_int_equal(s->flops, 2560);
    assert_int_equal(s->bytes, 2048);
    assert_int_equal(row(&st, "in_proj", 0)->n, 132);
    assert_int_equal(row(&st, "in_proj", 0)->count, 2);
    /* ungated: no gate rows; up_proj on the one MLP layer */
    assert_false(has_row(&st, "gate_proj"));
    assert_false(has_row(&st, "expert_gate"));
    assert_false(has_row(&st, "shared_gate"));
    assert_int_equal(row(&st, "up_proj", 0)->count, 1);
    assert_int_equal(row(&st, "expert_up", 0)->count, 1);
    assert_int_equal(row(&st, "q_proj", 0)->count, 1);

    /* prefill T = 40, s = 0, chunk 32: one full chunk and c = 8.
     * f(c) = 2 G c^2 N + h (2 c^2 P + 4 c N P + 2 N P):
     * f(32) = 65,536 + 4 x (16,384 + 16,384 + 256) = 197,632
     * f(8) = 4,096 + 4 x (1,024 + 4,096 + 256) = 25,600
     * F = 223,232; the state written once, 1,024 bytes */
    step(&m, RF_PREFILL, 1, 0, 40, false, &st);
    s = row(&st, "mamba_ssd", 0);
    assert_int_equal(s->flops, 223232);
    assert_int_equal(s->kv_bytes, 1024);
    /* the full traffic model adds the inputs and output: M (2 h P + 2 G N
     * + h) = 40 x (64 + 64 + 4) = 5,280 elements, 10,560 bytes */
    rf_step_opts o = rf_step_opts_default();
    o.phase = RF_PREFILL;
    o.tokens = 40;
    o.traffic = RF_TRAFFIC_FULL;
    rf_roof r = roof();
    assert_int_equal(rf_step_compute(&m, &o, &r, &st, NULL), RF_OK);
    assert_int_equal(row(&st, "mamba_ssd", 0)->act_bytes, 10560);

    /* a state size of 0 is refused naming the field */
    rf_err e = {0};
    m.ssm_state = 0;
    assert_int_equal(rf_model_validate(&m, &e), RF_EINVAL);
    assert_string_equal(e.msg, "ssm_state_size (0) must be at least 1");
}

static void test_dsa(void **state)
{
    (void)state;
    rf_model m = tiny_dsa();
    /* MLA: q_a 64 x 32 2,048 + q_b 32 x (4 x 12) 1,536 + kv_a 64 x 20 1,280
     * + kv_b 16 x (4 x 16) 1,024 + o 32 x 64 2,048 = 7,936. Indexer: wq_b
     * 32 x (2 x 128) 8,192 + wk 64 x 128 8,192 + weights_proj 64 x 2 128 =
     * 16,512. MLP 3 x 64 x 96 = 18,432. 2 x 42,880 + 12,800 = 98,560 */
    rf_param_counts p = params(&m);
    assert_int_equal(p.total, 98560);
    assert_int_equal(p.by_module[RF_MOD_INDEXER], 2 * 16512);
    /* KV a token and layer: the latent 20 x 2 = 40 bytes and the index key
     * 128 fp8 + one 4-byte scale = 132: 2 x 172 = 344 */
    assert_int_equal(rf_model_index_bytes_per_token(&m), 132);
    assert_int_equal(kv_bytes(&m, 1), 344);
    assert_int_equal(kv_bytes(&m, 1000), 344000);

    rf_step st;
    /* decode at S = 200: the indexer scores every key, F = 2 x 2 x 128 x
     * 200 = 102,400, reading 200 x 132 = 26,400; attention over the top 50:
     * F = 2 n_q 50 (r + rope) + 2 n_q 50 r = 8,000 + 6,400 = 14,400,
     * latent read 50 x 20 x 2 = 2,000 */
    step(&m, RF_DECODE, 1, 200, 1, false, &st);
    const rf_op *ix = row(&st, "indexer", 0), *a = row(&st, "attention", 0);
    assert_int_equal(ix->count, 2);
    assert_int_equal(ix->flops, 102400);
    assert_int_equal(ix->kv_bytes, 26400);
    assert_int_equal(a->flops, 14400);
    assert_int_equal(a->kv_bytes, 2000);
    assert_int_equal(row(&st, "index_wq_b", 0)->k, 32);
    assert_int_equal(row(&st, "index_wq_b", 0)->n, 256);
    /* below the top-k, S = 30: 4,800 + 3,840 = 8,640 over 1,200 bytes */
    step(&m, RF_DECODE, 1, 30, 1, false, &st);
    assert_int_equal(row(&st, "attention", 0)->flops, 8640);
    assert_int_equal(row(&st, "indexer", 0)->flops, 15360);
    /* prefill T = 100 causal: the indexer's 5,050 pairs, F = 512 x 5,050 =
     * 2,585,600 over 100 x 132 = 13,200; attention's pairs sum min(p, 50)
     * = 1,275 + 50 x 50 = 3,775, F = 2 n_q 3,775 (12 + 8) = 604,000; the
     * queries' selections cover at most the 100 positions: 4,000 bytes */
    step(&m, RF_PREFILL, 1, 0, 100, true, &st);
    ix = row(&st, "indexer", 0);
    a = row(&st, "attention", 0);
    assert_int_equal(ix->flops, 2585600);
    assert_int_equal(ix->kv_bytes, 13200);
    assert_int_equal(a->flops, 604000);
    assert_int_equal(a->kv_bytes, 4000);
    /* index_topk beyond the context the model was built for */
    rf_err e = {0};
    m.index_topk = 5000;
    assert_int_equal(rf_model_validate(&m, &e), RF_EINVAL);
    assert_string_equal(e.msg, "index_topk (5000) exceeds max_position_embeddings (4096)");
}

static void test_chunked(void **state)
{
    (void)state;
    rf_model m = tiny_chunked();
    /* KV at 20 positions: 3 chunked layers keep min(20, 8) = 8, the global
     * one 20; 64 elements each: (3 x 8 + 20) x 64 x 2 = 5,632 */
    assert_int_equal(kv_bytes(&m, 20), 5632);
    rf_step st;
    /* decode at s = 20: the query sits in chunk 17-24, (20 - 1) mod 8 + 1
     * = 4 keys: F = 4 x 4 x 4 x 16 = 1,024, K/V 2 x 2 x 4 x 16 x 2 = 512 */
    step(&m, RF_DECODE, 1, 20, 1, false, &st);
    const rf_op *c = row(&st, "attention_chunked", 0);
    assert_int_equal(c->count, 3);
    assert_int_equal(c->flops, 1024);
    assert_int_equal(c->kv_bytes, 512);
    assert_int_equal(row(&st, "attention", 0)->flops, 4 * 4 * 20 * 16);
    /* prefill T = 10 after s = 5 (positions 6-15), causal: positions 6-8
     * score 6 + 7 + 8 = 21 keys, 9-15 score 1..7 = 28: 49 pairs, F = 4 x 4
     * x 49 x 16 = 12,544; positions 1-15 read: 2 x 2 x 15 x 16 x 2 = 1,920 */
    step(&m, RF_PREFILL, 1, 5, 10, true, &st);
    c = row(&st, "attention_chunked", 0);
    assert_int_equal(c->flops, 12544);
    assert_int_equal(c->kv_bytes, 1920);
    /* the full square: 6-8 see all of chunk 1 (3 x 8), 9-15 all 7 of chunk
     * 2 (7 x 7): 73 pairs, F = 18,688 */
    step(&m, RF_PREFILL, 1, 5, 10, false, &st);
    assert_int_equal(row(&st, "attention_chunked", 0)->flops, 18688);
    /* the sweep's points are the step's (chunked keys wrap at each chunk:
     * not affine in the context) */
    static rf_sweep sw;
    rf_step_opts o = rf_step_opts_default();
    rf_roof r = roof();
    rf_sweep_point pt;
    assert_int_equal(rf_sweep_prepare(&sw, &m, &o, &r, NULL), RF_OK);
    assert_int_equal(rf_sweep_eval(&sw, 20, &pt, NULL), RF_OK);
    step(&m, RF_DECODE, 1, 20, 1, false, &st);
    assert_int_equal(pt.flops, st.flops);
    assert_int_equal(pt.total_bytes, st.total_bytes);
    /* chunked layers without a chunk size */
    rf_err e = {0};
    m.attn_chunk = 0;
    assert_int_equal(rf_model_validate(&m, &e), RF_EINVAL);
    assert_string_equal(e.msg, "attention_chunk_size (0) must be at least 1");
}

static void test_local_shapes(void **state)
{
    (void)state;
    rf_model m = tiny_local();
    /* global: q 64 x 128 8,192, k 64 x 32 2,048, no v (k_eq_v), o 128 x 64
     * 8,192 = 18,432; local: q 4,096, k, v 2,048 each, o 4,096 = 12,288;
     * MLPs 2 x 3 x 64 x 128 = 49,152: 79,872 + 12,800 = 92,672 */
    assert_int_equal(params(&m).total, 92672);
    /* KV a token: global K alone 1 x 32, local 2 x 2 x 16 = 64: 96 x 2 =
     * 192 bytes; at 100 positions 100 x 32 x 2 + min(100, 32) x 64 x 2 =
     * 6,400 + 4,096 = 10,496 */
    assert_int_equal(rf_model_kv_elems_layer(&m, 0), 64);
    assert_int_equal(rf_model_kv_elems_layer(&m, 1), 32);
    assert_int_equal(kv_bytes(&m, 1), 192);
    assert_int_equal(kv_bytes(&m, 100), 10496);
    rf_step st;
    step(&m, RF_DECODE, 1, 100, 1, false, &st);
    /* global: F = 2 n_q S (d + d) = 2 x 4 x 100 x 64 = 51,200 over K
     * alone, 100 x 32 x 2 = 6,400; sliding: F = 4 x 4 x 32 x 16 = 8,192
     * over 2 x 2 x 32 x 16 x 2 = 4,096 */
    assert_int_equal(row(&st, "attention", 0)->flops, 51200);
    assert_int_equal(row(&st, "attention", 0)->kv_bytes, 6400);
    assert_int_equal(row(&st, "attention_swa", 0)->flops, 8192);
    assert_int_equal(row(&st, "attention_swa", 0)->kv_bytes, 4096);
    /* two q_proj rows of their own shapes, one v_proj (the local layer's) */
    assert_int_equal(row(&st, "q_proj", 0)->n, 128);
    assert_int_equal(row(&st, "q_proj", 1)->n, 64);
    assert_int_equal(row(&st, "v_proj", 0)->count, 1);

    /* per-layer quantization: fp8 weights, layer 1's MLP kept in bf16:
     * (92,672 - 24,576) x 1 + 24,576 x 2 = 117,248 bytes */
    m.weight_dtype = rf_dtype_of(RF_FP8_E4M3);
    m.has_weight_dtype = true;
    m.unquantized_dtype = rf_dtype_of(RF_BF16);
    m.unquantized_layer[1] = RF_MOD_BIT(RF_MOD_MLP);
    rf_step_opts o = rf_step_opts_for_model(&m);
    uint64_t b;
    assert_int_equal(rf_model_weight_bytes(&m, &o, &b, NULL), RF_OK);
    assert_int_equal(b, 117248);
    /* the step streams layer 1's down_proj in bf16, layer 0's in fp8 (the
     * global layer's class first, as global attention comes first) */
    rf_roof r = roof();
    assert_int_equal(rf_step_compute(&m, &o, &r, &st, NULL), RF_OK);
    assert_int_equal(row(&st, "down_proj", 0)->weight_bytes, 2 * 128 * 64);
    assert_int_equal(row(&st, "down_proj", 1)->weight_bytes, 128 * 64);
    /* a user's weights dtype covers every layer */
    o.w_all_modules = true;
    assert_int_equal(rf_model_weight_bytes(&m, &o, &b, NULL), RF_OK);
    assert_int_equal(b, 92672);
    /* local heads that do not split */
    rf_err e = {0};
    m.local_n_kv = 3;
    assert_int_equal(rf_model_validate(&m, &e), RF_EINVAL);
    assert_string_equal(e.msg, "local num_key_value_heads (3) must divide the local heads (4)");
}

/* MiMo's separate V width, Step-3's low-rank q on plain attention and
 * gemma-4's MoE beside the dense MLP, in small: 2 layers, 4 heads, 2 KV
 * heads of d_h 16 and d_v 8, q through a rank of 32; the dense MLP 128 and
 * 4 experts of 32 (top 1) on both layers. */
static void test_v_width_low_rank_q_moe_and_dense(void **state)
{
    (void)state;
    rf_model m = base("tiny-misc", 2);
    m.attn_v_dim = 8;
    m.q_lora_rank = 32;
    m.ffn = 128;
    m.n_experts = 4;
    m.top_k = 1;
    m.moe_ffn = 32;
    m.moe_and_dense = true;
    /* attention: q_a 64 x 32 2,048 + q_b 32 x 64 2,048 + k 64 x 32 2,048
     * + v 64 x 16 1,024 + o 32 x 64 2,048 = 9,216; MLP 3 x 64 x 128
     * 24,576; MoE router 64 x 4 256 + 4 x 3 x 64 x 32 24,576 = 24,832.
     * 2 x 58,624 + 12,800 = 130,048; streamed 2 x (9,216 + 24,576 + 256 +
     * 6,144) + 6,400 = 86,784 */
    rf_param_counts p = params(&m);
    assert_int_equal(p.total, 130048);
    assert_int_equal(p.streamed_per_token, 86784);
    assert_int_equal(rf_model_layer_ffn(&m, 1), RF_FFN_MOE_DENSE);
    /* KV a token: 2 layers x 2 x (16 + 8) = 96 elements, 192 bytes */
    assert_int_equal(kv_bytes(&m, 1), 192);
    rf_step st;
    step(&m, RF_DECODE, 1, 10, 1, false, &st);
    /* attention at S = 10: F = 2 n_q S (d_h + d_v) = 2 x 4 x 10 x 24 =
     * 1,920 over 10 x 48 x 2 = 960 bytes */
    assert_int_equal(row(&st, "attention", 0)->flops, 1920);
    assert_int_equal(row(&st, "attention", 0)->kv_bytes, 960);
    assert_int_equal(row(&st, "q_b_proj", 0)->n, 64);
    assert_int_equal(row(&st, "v_proj", 0)->n, 16);
    assert_int_equal(row(&st, "o_proj", 0)->k, 32);
    /* both FFNs on both layers, the dense MLP's rows first */
    assert_int_equal(row(&st, "gate_proj", 0)->count, 2);
    assert_int_equal(row(&st, "expert_up", 0)->count, 2);
    assert_true(row(&st, "down_proj", 0) < row(&st, "router", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gdn_params_kv_state),
        cmocka_unit_test(test_gdn_ops),
        cmocka_unit_test(test_gdn_capacity_draft_layouts),
        cmocka_unit_test(test_gdn_mixed_step),
        cmocka_unit_test(test_mamba),
        cmocka_unit_test(test_dsa),
        cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_local_shapes),
        cmocka_unit_test(test_v_width_low_rank_q_moe_and_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
