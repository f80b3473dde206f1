/* test_traffic.c - the full traffic model (--traffic full): its operators,
 * its totals, the sweep under it, and the reconciliation with LLM-Viewer.
 *
 * LLM-Viewer (hahnyuan/LLM-Viewer, main 472f71f), run on Llama-3-8B
 * (hidden 4096, 32 layers, 32 heads, 8 KV heads, head_dim 128,
 * intermediate 14336, vocab 128256, every tensor 16-bit) on its
 * nvidia_H100 (3072e9 B/s, 989.5e12 OP/s), decode, batch 1, context 1024,
 * FlashAttention off, printed the per-layer rows quoted in
 * reconcile_llm_viewer_decode (memory bytes = load_weight + load_act +
 * store_act + load_kv + store_kv), and for the whole model
 * 15,028,453,376 OPs, 15,160,838,656 bytes, 4.935169 ms.
 * docs/accounting.md ("Reconciled with LLM-Viewer") explains every
 * difference; each one is asserted here as its formula.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_dtype.h"
#include "roofline/rf_forward.h"
#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_op.h"
#include "roofline/rf_step.h"

#define BF16 rf_dtype_of(RF_BF16)

static void near(double a, double b, double rel)
{
    if (!(fabs(a - b) <= rel * fabs(b)))
        fail_msg("%.10g is not within %.3g%% of %.10g", a, rel * 100, b);
}

static rf_model model(const char *name)
{
    rf_model m;
    assert_int_equal(rf_model_preset(name, &m, NULL), RF_OK);
    return m;
}

/* LLM-Viewer's nvidia_H100: 989.5e12 OP/s, 3072e9 B/s (--peak 989.5 --bw 3.072) */
static rf_roof viewer_h100(void)
{
    rf_roof r = {.math = RF_BF16,
                 .peak_flops_per_s = 989.5e12,
                 .bw_bytes_per_s = 3.072e12,
                 .math_asked = RF_BF16};
    r.ridge = r.peak_flops_per_s / r.bw_bytes_per_s;
    return r;
}

static const rf_op *find(const rf_step *st, const char *name)
{
    for (size_t i = 0; i < st->n_ops; i++)
        if (!strcmp(st->ops[i].name, name))
            return &st->ops[i];
    fail_msg("the step has no '%s' row", name);
    return NULL;
}

static bool has(const rf_step *st, const char *name)
{
    for (size_t i = 0; i < st->n_ops; i++)
        if (!strcmp(st->ops[i].name, name))
            return true;
    return false;
}

static rf_step_opts full_opts(void)
{
    rf_step_opts o = rf_step_opts_default();
    o.traffic = RF_TRAFFIC_FULL;
    return o;
}

/* The Llama-3-8B decode step LLM-Viewer's rows are compared with. */
static void viewer_step(rf_step *st)
{
    rf_model m = model("llama-3-8b");
    rf_step_opts o = full_opts();
    o.context = 1024;
    o.naive_attn = true;
    rf_roof r = viewer_h100();
    assert_int_equal(rf_step_compute(&m, &o, &r, st, NULL), RF_OK);
}

/* Rows whose convention agrees: reproduced exactly. */
static void reconcile_llm_viewer_agreeing_rows(void **state)
{
    (void)state;
    static rf_step st;
    viewer_step(&st);
    static const struct {
        const char *ours, *theirs;
        uint64_t ops, bytes;
    } rows[] = {
        /* OPs = 2 K N; bytes = K N b_w + K b_a + N b_a (k/v: the N b_a
         * output counted by LLM-Viewer as store_kv, by us as the GEMM's Y) */
        {"q_proj", "q_proj", 33554432, 33570816}, /* 33,554,432 + 8,192 + 8,192 */
        {"k_proj", "k_proj", 8388608, 8398848},   /* 8,388,608 + 8,192 + 2,048 */
        {"v_proj", "v_proj", 8388608, 8398848},
        {"o_proj", "out_proj", 33554432, 33570816},
        {"gate_proj", "gate_proj", 117440512, 117477376}, /* + 8,192 + 28,672 */
        {"up_proj", "up_proj", 117440512, 117477376},
        {"down_proj", "down_proj", 117440512, 117477376}, /* + 28,672 + 8,192 */
        /* qk: Q 8,192 + scores 65,536 + K 2,097,152; OPs 2 n_q S d_h */
        {"qk", "qk_matmul", 8388608, 2170880},
        /* softmax: 5 n_q S OPs; the scores read and written, 2 x 65,536 */
        {"softmax", "softmax", 163840, 131072},
        /* pv: scores 65,536 + V 2,097,152 + O 8,192 */
        {"pv", "sv_matmul", 8388608, 2170880},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const rf_op *op = find(&st, rows[i].ours);
        assert_int_equal(op->count, 32);
        if (op->flops != rows[i].ops || op->bytes != rows[i].bytes)
            fail_msg("%s: %llu OPs, %llu B; LLM-Viewer's %s: %llu, %llu", rows[i].ours,
                     (unsigned long long)op->flops, (unsigned long long)op->bytes, rows[i].theirs,
                     (unsigned long long)rows[i].ops, (unsigned long long)rows[i].bytes);
    }
    /* the score tensor's four passes: qk + softmax + pv = 4,472,832 B */
    assert_true(find(&st, "qk")->bytes + find(&st, "softmax")->bytes + find(&st, "pv")->bytes ==
                2170880ull + 131072 + 2170880);
    /* lm_head bytes: 4096 x 128256 x 2 + 4096 x 2 + 128256 x 2 */
    assert_true(find(&st, "lm_head")->bytes == 1050937856ull);
}

/* Rows whose convention differs: the difference is the documented formula. */
static void reconcile_llm_viewer_differing_rows(void **state)
{
    (void)state;
    static rf_step st;
    viewer_step(&st);
    const uint64_t M = 1, H = 4096, F = 14336, b = 2, nq = 32, nkv = 8, dh = 128;
    /* LLM-Viewer's own rows, from its formulas (main 472f71f, decode):
     *   attn_norm, mlp_norm  OPs 7 B H, bytes B H b_a + B H b_a (no weight)
     *   attn_add, mlp_add    OPs B H,   bytes B H b_a + B H b_a (one operand)
     *   mlp_act              OPs 2 B H, bytes 2 B H b_a + B H b_a (on H)
     *   lm_head              OPs B H V (one a multiply-add)                 */
    const uint64_t v_norm_ops = 7 * M * H, v_norm_bytes = 2 * M * H * b; /* 28,672, 16,384 */
    const uint64_t v_add_ops = M * H, v_add_bytes = 2 * M * H * b;       /* 4,096, 16,384 */
    const uint64_t v_act_ops = 2 * M * H, v_act_bytes = 3 * M * H * b;   /* 8,192, 24,576 */
    const uint64_t v_lm_ops = 525336576;                                 /* printed */

    const char *norms[] = {"attn_norm", "mlp_norm"};
    for (int i = 0; i < 2; i++) {
        const rf_op *op = find(&st, norms[i]);
        /* + the H b_w weight vector read; F = 4 M H (square, sum, scale by
         * 1/rms, times the weight; the rms itself per row, not per element) */
        assert_true(op->bytes == v_norm_bytes + H * b);
        assert_true(op->flops == 4 * M * H);
        assert_true(v_norm_ops - op->flops == 3 * M * H);
    }
    const char *adds[] = {"attn_residual", "mlp_residual"};
    for (int i = 0; i < 2; i++) {
        const rf_op *op = find(&st, adds[i]);
        /* + the second operand's read, M H b_a; the same F */
        assert_true(op->bytes == v_add_bytes + M * H * b);
        assert_true(op->flops == v_add_ops);
    }
    const rf_op *act = find(&st, "act");
    /* over F_ff, not H (LLM-Viewer's issue #16): 3 M (F_ff - H) b_a more;
     * F = 5 M F_ff (sigmoid 4, product 1) against its 2 M H */
    assert_true(act->bytes == v_act_bytes + 3 * M * (F - H) * b);
    assert_true(act->bytes - v_act_bytes == 61440);
    assert_true(act->flops == 5 * M * F);
    assert_true(act->flops == v_act_ops + 63488);
    /* lm_head at 2 FLOPs a multiply-add: exactly twice */
    assert_true(find(&st, "lm_head")->flops == 2 * v_lm_ops);

    /* rows LLM-Viewer has no counterpart for */
    const rf_op *rope = find(&st, "rope"), *kvw = find(&st, "kv_write");
    assert_true(rope->flops == 3 * M * (nq + nkv) * dh);     /* 15,360 */
    assert_true(rope->bytes == 2 * M * (nq + nkv) * dh * b); /* 20,480 */
    assert_true(kvw->flops == 0);
    assert_true(kvw->bytes == 2 * M * nkv * dh * (b + b)); /* 8,192 */
    const rf_op *fin = find(&st, "final_norm"), *emb = find(&st, "embed");
    assert_int_equal(fin->count, 1);
    assert_true(fin->bytes == 2 * M * H * b + H * b); /* 24,576 */
    assert_true(fin->flops == 4 * M * H);             /* 16,384 */
    assert_true(emb->bytes == M * H * b);             /* 8,192: the gathered row */
}

/* The whole model: LLM-Viewer's totals plus the terms above, exactly. */
static void reconcile_llm_viewer_whole_model(void **state)
{
    (void)state;
    static rf_step st;
    viewer_step(&st);
    const uint64_t L = 32, v_ops = 15028453376ull, v_bytes = 15160838656ull;
    /* bytes a layer beyond LLM-Viewer's: norm weights 2 x 8,192, residual
     * second operands 2 x 8,192, act on F_ff 61,440, rope 20,480, kv_write
     * 8,192 = 122,880; once: final_norm 24,576 and embed 8,192 */
    const uint64_t per_layer_bytes = 2 * 8192 + 2 * 8192 + 61440 + 20480 + 8192;
    assert_true(per_layer_bytes == 122880);
    assert_true(st.total_bytes == v_bytes + L * per_layer_bytes + 24576 + 8192);
    assert_true(st.total_bytes == 15164803584ull);
    /* FLOPs: lm_head's second 525,336,576; a layer: norms 2 x (16,384 -
     * 28,672), act 71,680 - 8,192, rope 15,360 = +54,272; final_norm 16,384 */
    const int64_t per_layer_ops = 2 * (16384 - 28672) + (71680 - 8192) + 15360;
    assert_int_equal(per_layer_ops, 54272);
    assert_true(st.flops == v_ops + 525336576ull + L * (uint64_t)per_layer_ops + 16384);
    assert_true(st.flops == 15555543040ull);
    /* every row memory-bound, so the sum-of-max floor is bytes / beta:
     * LLM-Viewer's 15,160,838,656 / 3.072e12 = 4.935169 ms, ours
     * 15,164,803,584 / 3.072e12 = 4.936460 ms */
    near(v_bytes / 3.072e12, 4.935169e-3, 1e-7);
    near(st.floor_sum_of_max_s, (double)st.total_bytes / 3.072e12, 1e-12);
    near(st.floor_sum_of_max_s, 4.936460e-3, 1e-6);
}

/* Under full, the step's totals are the sums of its rows, and each row's
 * bytes the sum of its parts, whatever the options. */
static void full_totals_are_row_sums(void **state)
{
    (void)state;
    const char *models[] = {"llama-3-8b", "qwen2.5-7b-instruct", "gemma-2-9b-it", "mixtral-8x7b",
                            "deepseek-v2-lite"};
    rf_roof r = viewer_h100();
    static rf_step st;
    for (size_t mi = 0; mi < 5; mi++) {
        rf_model m = model(models[mi]);
        for (unsigned v = 0; v < 32; v++) {
            rf_step_opts o = full_opts();
            o.phase = v & 1 ? RF_PREFILL : RF_DECODE;
            o.naive_attn = v & 2;
            o.fused = v & 4;
            o.fuse_elementwise = v & 8;
            o.causal = v & 16;
            o.batch = 3;
            o.context = o.phase == RF_PREFILL ? 100 : 5000;
            o.tokens = 300;
            assert_int_equal(rf_step_compute(&m, &o, &r, &st, NULL), RF_OK);
            uint64_t f = 0, q = 0;
            double som = 0;
            for (size_t i = 0; i < st.n_ops; i++) {
                const rf_op *op = &st.ops[i];
                assert_true(op->bytes ==
                            op->weight_bytes + op->kv_bytes + op->act_bytes + op->extra_bytes);
                f += op->count * op->flops;
                q += op->count * op->bytes;
                som += (double)op->count *
                       rf_roof_place(&r, (double)op->flops, (double)op->bytes).floor_s;
            }
            assert_true(st.flops == f);
            assert_true(st.total_bytes == q);
            assert_true(st.op_bytes == q);
            near(st.floor_sum_of_max_s, som, 1e-12);
            near(st.intensity, (double)f / (double)q, 1e-12);
        }
    }
}

/* Compulsory: no element-wise row, step bytes weights + KV (+ scores), as
 * the seeds count; full adds rows and never changes a GEMM's. */
static void compulsory_unchanged(void **state)
{
    (void)state;
    rf_model m = model("qwen2.5-7b-instruct");
    rf_roof r = viewer_h100();
    static rf_step c, f;
    rf_step_opts o = rf_step_opts_default();
    o.context = 1024;
    assert_int_equal(rf_step_compute(&m, &o, &r, &c, NULL), RF_OK);
    for (size_t i = 0; i < c.n_ops; i++)
        assert_true(c.ops[i].kind != RF_OP_ELEMENTWISE);
    assert_true(c.total_bytes == c.weight_bytes + c.kv_bytes + c.extra_bytes);
    assert_false(has(&c, "q_bias")); /* qwen2 has q/k/v biases: full only */
    o.traffic = RF_TRAFFIC_FULL;
    assert_int_equal(rf_step_compute(&m, &o, &r, &f, NULL), RF_OK);
    for (size_t i = 0; i < c.n_ops; i++) {
        if (c.ops[i].kind != RF_OP_GEMM)
            continue;
        const rf_op *g = find(&f, c.ops[i].name);
        assert_true(g->flops == c.ops[i].flops && g->bytes == c.ops[i].bytes);
    }
    assert_true(f.weight_bytes == c.weight_bytes);
    assert_true(f.kv_bytes == c.kv_bytes); /* the K/V read; kv_write is its own row */
    /* flash attention also reads Q and writes O: 2 M n_q d_h b_a = 2 x 28 x 128 x 2 */
    assert_true(find(&f, "attention")->bytes == find(&c, "attention")->bytes + 2 * 28 * 128 * 2);
    /* q/k/v biases: F = M N, Q = N b_w (n_q d_h = 3,584, n_kv d_h = 512) */
    assert_true(find(&f, "q_bias")->bytes == 3584 * 2 && find(&f, "q_bias")->flops == 3584);
    assert_true(find(&f, "k_bias")->bytes == 512 * 2 && find(&f, "v_bias")->bytes == 512 * 2);
    assert_false(has(&f, "o_bias"));
}

/* --fuse-elementwise: each norm reads only its weight vector, 2 M H b_a
 * less; nothing else changes; refused under the compulsory model. */
static void fuse_elementwise(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_roof r = viewer_h100();
    static rf_step a, b;
    rf_step_opts o = full_opts();
    o.phase = RF_PREFILL;
    o.batch = 2;
    o.tokens = 512;
    assert_int_equal(rf_step_compute(&m, &o, &r, &a, NULL), RF_OK);
    o.fuse_elementwise = true;
    assert_int_equal(rf_step_compute(&m, &o, &r, &b, NULL), RF_OK);
    assert_int_equal(a.n_ops, b.n_ops);
    assert_true(find(&b, "attn_norm")->bytes == 4096 * 2);
    assert_true(find(&b, "final_norm")->bytes == 4096 * 2);
    assert_true(find(&b, "attn_norm")->flops == find(&a, "attn_norm")->flops);
    /* M = B T = 1,024 rows: 2 M H b_a = 16,777,216 a layer norm, two a
     * layer over 32 layers; the final norm on the B = 2 last rows */
    uint64_t removed = 32 * 2 * (2ull * 1024 * 4096 * 2) + 2ull * 2 * 4096 * 2;
    assert_true(a.total_bytes - b.total_bytes == removed);
    assert_true(a.flops == b.flops);
    rf_step_opts c = rf_step_opts_default();
    c.fuse_elementwise = true;
    rf_err e;
    assert_int_equal(rf_step_compute(&m, &c, &r, &a, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "traffic full"));
}

/* The operators' own formulas (rf_op.h). */
static void op_formulas(void **state)
{
    (void)state;
    rf_op op, three[3];
    size_t n;
    rf_dtype fp8 = rf_dtype_of(RF_FP8_E4M3);
    /* bias of 3,584 outputs over 5 rows: F = 17,920, Q = 7,168 (weights) */
    assert_int_equal(rf_op_bias("q_bias", 5, 3584, BF16, &op, NULL), RF_OK);
    assert_true(op.flops == 17920 && op.bytes == 7168 && op.weight_bytes == 7168);
    /* an MLA latent of 576 a token, 3 tokens, fp8 cache: 3 x 576 x (2 + 1) */
    assert_int_equal(rf_op_cache_write("kv_write", 3, 576, fp8, BF16, &op, NULL), RF_OK);
    assert_true(op.flops == 0 && op.act_bytes == 3456 && op.kv_bytes == 1728);
    /* kv_write is the cache write of 2 n_kv d_h: unchanged by the rewrite */
    assert_int_equal(rf_op_kv_write("kv_write", 3, 8, 128, fp8, BF16, &op, NULL), RF_OK);
    assert_true(op.n == 1024 && op.act_bytes == 3 * 2048 * 2 && op.kv_bytes == 3 * 2048);
    /* softmax over 4 rows of 10 keys: F = 200, Q = 160 (extra: the scores) */
    assert_int_equal(rf_op_softmax("softmax", 4, 10, true, BF16, &op, NULL), RF_OK);
    assert_true(op.flops == 200 && op.extra_bytes == 160 && op.bytes == 160);
    assert_int_equal(op.kind, RF_OP_ATTN_DECODE);

    /* prefill, B = 2, q = 16 queries against S = 64 keys, n_q 8, n_kv 2,
     * d_h 64: M = 32, P = 2 x 8 x 16 x 64 = 16,384 score elements */
    rf_attn_desc d = {.n_q = 8, .n_kv = 2, .head_dim = 64, .batch = 2, .q_tokens = 16, .keys = 64};
    rf_op base;
    assert_int_equal(rf_op_attention("attention", &d, BF16, BF16, &base, NULL), RF_OK);
    const char *const flash[3] = {"attention", "attention", "attention"};
    assert_int_equal(rf_op_attention_full(flash, &d, BF16, BF16, three, &n, NULL), RF_OK);
    assert_int_equal(n, 1);
    /* + Q read and O write: 2 x 32 x 8 x 64 x 2 = 65,536 */
    assert_true(three[0].bytes == base.bytes + 65536 && three[0].flops == base.flops);
    d.naive = true;
    const char *const names[3] = {"qk", "softmax", "pv"};
    assert_int_equal(rf_op_attention_full(names, &d, BF16, BF16, three, &n, NULL), RF_OK);
    assert_int_equal(n, 3);
    assert_true(three[0].flops + three[2].flops == base.flops);
    assert_true(three[1].flops == 5 * 16384);
    assert_true(three[0].extra_bytes == 16384 * 2 && three[1].extra_bytes == 2 * 16384 * 2 &&
                three[2].extra_bytes == 16384 * 2);
    /* summed: the flash operator's bytes and the scores' four passes */
    assert_true(three[0].bytes + three[1].bytes + three[2].bytes ==
                base.bytes + 65536 + 4 * 16384 * 2);
    assert_true(three[0].kv_bytes == base.kv_bytes / 2 && three[2].kv_bytes == base.kv_bytes / 2);
    assert_int_equal(three[1].kind, RF_OP_ATTN_PREFILL);
}

/* Family rules: GELU for gemma (RF_ACT_GELU_MUL_FLOPS), its post-norms; MLA
 * rope on the rotary part and the latent written; MoE activations. */
static void family_rows(void **state)
{
    (void)state;
    rf_roof r = viewer_h100();
    static rf_step st;
    rf_step_opts o = full_opts();
    o.context = 10;
    rf_model g = model("gemma-2-9b-it");
    assert_int_equal(rf_step_compute(&g, &o, &r, &st, NULL), RF_OK);
    assert_true(find(&st, "act")->flops == 10ull * g.ffn);
    assert_true(has(&st, "post_attn_norm") && has(&st, "post_mlp_norm"));
    rf_model d = model("deepseek-v2-lite");
    assert_int_equal(rf_step_compute(&d, &o, &r, &st, NULL), RF_OK);
    /* rope over n_q + 1 heads of qk_rope_dim 64: (16 + 1) x 64 = 1,088 */
    assert_int_equal(find(&st, "rope")->n, (d.n_q + 1) * d.qk_rope_dim);
    /* the latent: (512 + 64) x (2 + 2) bytes a token */
    assert_true(find(&st, "kv_write")->bytes == 576 * 4);
    assert_true(has(&st, "kv_a_norm") && has(&st, "expert_act") && has(&st, "shared_act"));
    rf_model l = model("llama-3-8b");
    assert_int_equal(rf_step_compute(&l, &o, &r, &st, NULL), RF_OK);
    assert_false(has(&st, "post_attn_norm") || has(&st, "q_bias"));
}

/* The sweep under full stays O(1) a point and equals rf_step_compute. */
static void sweep_full_matches_step(void **state)
{
    (void)state;
    const char *models[] = {"llama-3-8b", "gemma-2-9b-it", "mixtral-8x7b", "deepseek-v2-lite"};
    rf_roof r = viewer_h100();
    static rf_sweep sw;
    static rf_step st;
    for (size_t mi = 0; mi < 4; mi++) {
        rf_model m = model(models[mi]);
        for (unsigned v = 0; v < 4; v++) {
            rf_step_opts o = full_opts();
            o.naive_attn = v & 1;
            o.fuse_elementwise = v & 2;
            o.batch = v + 1;
            assert_int_equal(rf_sweep_prepare(&sw, &m, &o, &r, NULL), RF_OK);
            const int64_t S[] = {0, 1, 2, 3, 100, 4095, 4096, 4097, 8192, 32768};
            for (size_t j = 0; j < sizeof S / sizeof S[0]; j++) {
                rf_sweep_point p;
                o.context = S[j];
                assert_int_equal(rf_sweep_eval(&sw, S[j], &p, NULL), RF_OK);
                assert_int_equal(rf_step_compute(&m, &o, &r, &st, NULL), RF_OK);
                if (p.flops != st.flops || p.total_bytes != st.total_bytes ||
                    p.kv_bytes != st.kv_bytes)
                    fail_msg("%s v%u S %lld: sweep %llu F %llu B, step %llu F %llu B", models[mi],
                             v, (long long)S[j], (unsigned long long)p.flops,
                             (unsigned long long)p.total_bytes, (unsigned long long)st.flops,
                             (unsigned long long)st.total_bytes);
                near(p.floor_s, st.floor_s, 1e-12);
                near(p.floor_sum_of_max_s, st.floor_sum_of_max_s, 1e-9);
                near(p.intensity, st.intensity, 1e-12);
            }
        }
    }
}

/* `profile` places its measured element-wise kernels against the full
 * model's own rows: its plan (fp32, every element 4 bytes) has each one's
 * bytes and floor as rf_step_compute's row under --traffic full, and its
 * FLOPs too but for act, which profile counts as its kernel runs it
 * (RF_ACT_SILU_MUL_FLOPS_AS_RUN, 4 an element, against the model's 5). */
static void profile_uses_the_full_rows(void **state)
{
    (void)state;
    static const char *const names[] = {"attn_norm", "rope", "kv_write",     "attn_residual",
                                        "mlp_norm",  "act",  "mlp_residual", "final_norm"};
    rf_model m = model("llama-3-8b");
    rf_roof r = viewer_h100();
    static rf_forward_run run;
    static rf_step st;
    for (int phase = 0; phase < 2; phase++) {
        rf_forward_opts fo = rf_forward_opts_default();
        fo.phase = phase ? RF_PREFILL : RF_DECODE;
        fo.batch = 3;
        fo.tokens = phase ? 64 : 1;
        fo.context = phase ? 0 : 100;
        assert_int_equal(rf_forward_plan(&m, &fo, &r, &run, NULL), RF_OK);
        rf_step_opts o = full_opts();
        o.phase = fo.phase;
        o.batch = 3;
        o.tokens = fo.tokens;
        o.context = 100;
        o.w = o.a = o.kv = rf_dtype_of(RF_FP32);
        assert_int_equal(rf_step_compute(&m, &o, &r, &st, NULL), RF_OK);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            const rf_forward_op *p = NULL;
            for (size_t j = 0; j < run.n_ops; j++)
                if (!strcmp(run.ops[j].name, names[i]))
                    p = &run.ops[j];
            assert_non_null(p);
            const rf_op *op = find(&st, names[i]);
            assert_true(p->bytes == op->bytes && p->m == op->m && p->n == op->n);
            if (strcmp(names[i], "act"))
                assert_true(p->flops == op->flops);
            else
                assert_true(p->flops * RF_ACT_SILU_MUL_FLOPS ==
                            op->flops * RF_ACT_SILU_MUL_FLOPS_AS_RUN);
            near(p->floor_s, rf_roof_place(&r, (double)p->flops, (double)op->bytes).floor_s, 1e-12);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reconcile_llm_viewer_agreeing_rows),
        cmocka_unit_test(reconcile_llm_viewer_differing_rows),
        cmocka_unit_test(reconcile_llm_viewer_whole_model),
        cmocka_unit_test(full_totals_are_row_sums),
        cmocka_unit_test(compulsory_unchanged),
        cmocka_unit_test(fuse_elementwise),
        cmocka_unit_test(op_formulas),
        cmocka_unit_test(family_rows),
        cmocka_unit_test(sweep_full_matches_step),
        cmocka_unit_test(profile_uses_the_full_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
