/* test_parallel.c - many devices (rf_parallel.h): links of the presets, the
 * sharded step under TP, PP stages, EP, replicated KV heads and every
 * refused split. Each expected figure is derived by hand in the comment
 * beside it from the conventions of docs/accounting.md ("Many devices",
 * "Collectives"): a collective's floor is the least over the algorithms
 *   all-reduce  ring 2 (t-1)/t n / bw + 2 (t-1) alpha,
 *               tree 2 (t-1)/t n / bw + 2 ceil(log2 t) alpha,
 *               one-shot (t-1) n / bw + alpha,
 *               two-shot 2 (t-1)/t n / bw + 2 alpha,
 *               in-switch (NVSwitch presets) (t-1)/t n / bw + 2 alpha;
 *   all-gather and all-to-all: ring (t-1)/t n / bw + (t-1) alpha, direct
 *               (t-1)/t n / bw + alpha (never slower, so the floor);
 *   point-to-point n / bw + alpha;
 *   H100 SXM: beta = 3.35e12 B/s, NVLink 4 bw = 450e9 B/s a direction with
 *   in-switch reduction (NVLink SHARP), alpha = 1e-6 s within a node of 8;
 *   InfiniBand 50e9 B/s, 5 us a hop, no switch reduction.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_parallel.h"
#include "roofline/rf_reader.h"
#include "roofline/rf_step.h"

#define BETA 3.35e12
#define NVL 450e9
#define ALPHA 1e-6

static void near(double a, double b, double rel)
{
    if (!(fabs(a - b) <= rel * fabs(b)))
        fail_msg("%.15g is not within %.3g relative of %.15g", a, rel, b);
}

static rf_hw h100;
static rf_roof roof;
static rf_par par; /* ~600 KB: off the stack */
static rf_step one;

static void setup_hw(void)
{
    assert_int_equal(rf_hw_preset("h100-sxm", &h100, NULL), RF_OK);
    assert_int_equal(rf_hw_roof(&h100, RF_BF16, &roof, NULL), RF_OK);
}

static rf_model load(const char *file)
{
    char path[1024];
    rf_model m;
    rf_err e;
    snprintf(path, sizeof path, "%s/models/%s", RF_TEST_DATA, file);
    if (rf_model_load(path, &m, &e))
        fail_msg("%s: %s", path, e.msg);
    return m;
}

static rf_model preset(const char *name)
{
    rf_model m;
    assert_int_equal(rf_model_preset(name, &m, NULL), RF_OK);
    return m;
}

static rf_par_opts popts(int64_t tp, int64_t pp, int64_t ep)
{
    return (rf_par_opts){.layout = {tp, pp, ep, 1},
                         .links = h100.links,
                         .util = 0.9,
                         .reserve_bytes = 0,
                         .mem_bytes = h100.mem_bytes};
}

static rf_step_opts decode(int64_t batch, int64_t context)
{
    rf_step_opts o = rf_step_opts_default();
    o.batch = batch;
    o.context = context;
    return o;
}

static const rf_coll *coll(const rf_par_stage *st, const char *name)
{
    for (size_t i = 0; i < st->n_coll; i++)
        if (!strcmp(st->coll[i].name, name))
            return &st->coll[i];
    return NULL;
}

/* Links: every preset has a scale-up and a scale-out link, with a source. */
static void preset_links(void **state)
{
    (void)state;
    setup_hw();
    assert_string_equal(h100.links.up_name, "NVLink 4");
    near(h100.links.up_bw_bytes_per_s, 450e9, 0);
    near(h100.links.out_bw_bytes_per_s, 50e9, 0); /* 400 Gb/s / 8 */
    near(h100.links.up_latency_s, 1e-6, 0);
    near(h100.links.out_latency_s, 5e-6, 0);
    assert_int_equal(h100.links.devices_per_node, 8);
    rf_hw b;
    assert_int_equal(rf_hw_preset("b200", &b, NULL), RF_OK);
    near(b.links.up_bw_bytes_per_s, 900e9, 0);
    assert_int_equal(rf_hw_preset("mi300x", &b, NULL), RF_OK);
    near(b.links.up_bw_bytes_per_s, 448e9, 0);
    assert_int_equal(rf_hw_preset("l40s", &b, NULL), RF_OK);
    near(b.links.up_bw_bytes_per_s, 32e9, 0); /* PCIe Gen4 x16 */
    assert_int_equal(rf_hw_preset("h100-pcie", &b, NULL), RF_OK);
    near(b.links.up_bw_bytes_per_s, 64e9, 0); /* PCIe Gen5 x16 */
    for (size_t i = 0; i < rf_hw_preset_count(); i++) {
        const rf_hw *h = rf_hw_preset_at(i);
        assert_true(h->links.up_bw_bytes_per_s > 0 && h->links.out_bw_bytes_per_s > 0);
        assert_true(h->links.devices_per_node >= 1 && h->links.origin[0]);
    }
}

/* Llama-3-70B, TP 8 rank: n_q 64/8 = 8, n_kv 8/8 = 1, F 28672/8 = 3584,
 * V 128256/8 = 16032, H 8192, d_h 128, 80 layers, bf16 (2 bytes).
 * Matrix elements a layer: q 8192 x 1024 = 8,388,608; k and v 8192 x 128 =
 * 1,048,576 each; o 8,388,608; gate, up, down 3 x 8192 x 3584 =
 * 88,080,384; a layer 106,954,752, 80 layers 8,556,380,160. Embedding and
 * lm_head 16032 x 8192 = 131,334,144 each. Resident a device:
 * (8,556,380,160 + 2 x 131,334,144) x 2 = 17,638,096,896 bytes. */
#define L70_LAYER_W 106954752ull
#define L70_VOC_W 131334144ull
#define L70_RESIDENT ((80 * L70_LAYER_W + 2 * L70_VOC_W) * 2)
/* Activation bytes a token, all GEMMs of a layer: M (K + N) b_a summed,
 * (9216 + 8320 + 8320 + 9216 + 3 x 11776) x 2 = 140,800; lm_head
 * (8192 + 16032) x 2 = 48,448; the embedding gather reads H b_w = 16,384.
 * KV a sequence at s = 4096: 2 n_kv d_h s b_kv L = 2 x 1 x 128 x 4096 x 2 x
 * 80 = 167,772,160. Every operator is memory-bound (GEMM intensity < M,
 * attention 4 n_q / (2 n_kv b_kv) = 8, both below the ridge 295), so the
 * device's operators take (weights streamed + B (acts + KV + gather)) / beta,
 * weights streamed = 80 layers + lm_head = (8,556,380,160 + 131,334,144) x 2. */
/* The all-reduce floor of n bytes over t ranks: the least of the five
 * algorithms above (in_switch where the link's switch reduces). */
static double ar_s(double n, double t, double bw, double alpha, bool in_switch)
{
    double ring = 2 * (t - 1) / t * n / bw + 2 * (t - 1) * alpha;
    double tree = 2 * (t - 1) / t * n / bw + 2 * ceil(log2(t)) * alpha;
    double one_shot = (t - 1) * n / bw + alpha;
    double two_shot = 2 * (t - 1) / t * n / bw + 2 * alpha;
    double m = fmin(fmin(ring, tree), fmin(one_shot, two_shot));
    return in_switch ? fmin(m, (t - 1) / t * n / bw + 2 * alpha) : m;
}

/* all-gather and all-to-all: the direct algorithm, (t-1)/t n / bw + alpha */
static double ag_s(double n, double t, double bw, double alpha)
{
    return (t - 1) / t * n / bw + alpha;
}

static double l70_ops_s(double B)
{
    double w = (80.0 * L70_LAYER_W + L70_VOC_W) * 2;
    return (w + B * (80 * 140800.0 + 48448 + 16384 + 167772160.0)) / BETA;
}

/* The TP 8 collectives at B, message n = B H b_a = B x 16,384:
 * all-reduce over 8, 160 of them (2 a layer), the embedding's one more.
 * B = 1: ring 2 (7/8) n / 450e9 + 14 us = 14.0637 us, tree + 6 us =
 * 6.0637, two-shot 2.0637, in-switch 0.0319 + 2 = 2.0319, one-shot 7 n /
 * 450e9 + 1 us = 1.25486 us: one-shot, latency-bound (0.255 us of
 * bandwidth). B = 64 (n = 1,048,576): one-shot 16.31 + 1, two-shot
 * 4.078 + 2, in-switch 2.039 + 2 = 4.039 us: in-switch, bandwidth-bound.
 * The lm_head all-gather of B V b_a = B x 256,512 bytes: direct,
 * (7/8) n / 450e9 + 1 us. */
static double l70_comm_s(double B)
{
    double ar = ar_s(B * 16384, 8, NVL, ALPHA, true);
    double ag = ag_s(B * 256512, 8, NVL, ALPHA);
    return 161 * ar + ag;
}

static void llama70_tp8(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = load("llama-3-70b.json");
    rf_par_opts po = popts(8, 1, 1);
    const double batches[] = {1, 64};
    for (int i = 0; i < 2; i++) {
        double B = batches[i];
        rf_step_opts o = decode((int64_t)B, 4096);
        assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
        const rf_par_stage *st = &par.stages[0];
        assert_int_equal(par.devices, 8);
        assert_int_equal(st->weight_bytes_resident, L70_RESIDENT); /* 17,638,096,896 */
        assert_int_equal(st->kv_bytes_resident, (uint64_t)B * 167772160ull);
        const rf_coll *a = coll(st, "tp_allreduce_attn"), *mlp = coll(st, "tp_allreduce_mlp");
        assert_non_null(a);
        assert_non_null(mlp);
        assert_int_equal(a->count, 80);
        assert_int_equal(mlp->count, 80);
        assert_int_equal(a->bytes, (uint64_t)B * 8192 * 2); /* M H b_a */
        near(a->time_s, ar_s(B * 16384, 8, NVL, ALPHA, true), 1e-12);
        /* B = 1: one-shot, 0.255 us of bandwidth under 1 us of hop:
         * latency-bound; B = 64: in-switch, 2.039 us over 2 us of hops */
        assert_true(a->latency_bound == (B == 1));
        assert_string_equal(a->algo, B == 1 ? "one-shot" : "in-switch");
        assert_string_equal(a->link, "NVLink 4");
        near(st->ops_s, l70_ops_s(B), 1e-12);
        near(st->comm_s, l70_comm_s(B), 1e-12);
        /* B = 1: 5.2401 ms + 161 x 1.25486 us + 1.4988 us = 5.2401 +
         * 0.20353 = 5.4437 ms, 184 tokens/s */
        near(st->floor_s, l70_ops_s(B) + l70_comm_s(B), 1e-12);
        near(par.tokens_per_s, B / (l70_ops_s(B) + l70_comm_s(B)), 1e-12);
        near(par.tokens_per_s_device, par.tokens_per_s / 8, 1e-12);
        near(par.comm_share, l70_comm_s(B) / (l70_ops_s(B) + l70_comm_s(B)), 1e-12);
        near(st->overlap_floor_s, l70_ops_s(B), 1e-12); /* ops above comm */
        assert_true(par.fits);
    }
    near(l70_ops_s(1), 5.2401e-3, 1e-4);
    near(l70_comm_s(1), 0.20353e-3, 1e-4);
}

/* TP 4 x PP 2, B = 64 (two micro-batches of 32), s = 4096. A TP 4 rank:
 * n_q 16, n_kv 2, F 7168, V 32064. A layer: q and o 8192 x 2048 each, k and
 * v 8192 x 256 each, MLP 3 x 8192 x 7168: 213,909,504 elements; a stage of
 * 40 layers 8,556,380,160; embedding (stage 0) or lm_head (stage 1)
 * 32064 x 8192 = 262,668,288: resident (8,556,380,160 + 262,668,288) x 2 =
 * 17,638,096,896 bytes on either stage. KV: 64 sequences x 2 x 2 x 128 x
 * 4096 x 2 x 40 = 10,737,418,240 bytes a device.
 * Operators at M = 32 (all memory-bound): per layer acts (10240 + 8448 x 2
 * + 10240 + 15360 x 3) x 2 = 166,912 a token, KV 4,194,304 a sequence;
 * stage 0 adds the gather 32 x 16,384, stage 1 the lm_head's weights
 * 262,668,288 x 2 and acts 32 x (8192 + 32064) x 2.
 * Collectives at n = 32 x 16,384 = 524,288: all-reduce over 4 (ring
 * 1.7476 + 6 us, tree + 4, one-shot 3 n / 450e9 + 1 = 4.495, two-shot
 * 1.7476 + 2, in-switch (3/4) n / 450e9 + 2 us = 2.8738 us: in-switch),
 * 2 x 40 a stage (+1 embedding on stage 0); the all-gather of 32 x 128,256
 * x 2 on stage 1, direct (3/4) n / 450e9 + 1 us; the pp_send n / 450e9 +
 * 1 us (devices 3 and 4 share the node of 8).
 * Token latency = both stages + the send; throughput = 64 / max(latency,
 * 2 x the slowest stage). */
static void llama70_tp4_pp2(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = load("llama-3-70b.json");
    rf_par_opts po = popts(4, 2, 1);
    rf_step_opts o = decode(64, 4096);
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    assert_int_equal(par.devices, 8);
    assert_int_equal(par.micro_batches, 2);
    assert_int_equal(par.micro_batch, 32);
    assert_int_equal(par.n_stages, 2);
    double layer_w = 40.0 * 213909504 * 2, voc_w = 262668288.0 * 2;
    double per_layers = 40 * 32 * (166912.0 + 4194304);
    double ops0 = (layer_w + per_layers + 32 * 16384.0) / BETA;
    double ops1 = (layer_w + voc_w + per_layers + 32 * (8192 + 32064) * 2.0) / BETA;
    double ar = 0.75 * 524288 / NVL + 2 * ALPHA;
    near(ar, ar_s(524288, 4, NVL, ALPHA, true), 1e-15);
    double ag = 0.75 * 32 * 128256 * 2.0 / NVL + ALPHA;
    double send = 524288 / NVL + ALPHA;
    for (int s = 0; s < 2; s++) {
        const rf_par_stage *st = &par.stages[s];
        assert_int_equal(st->layers, 40);
        assert_int_equal(st->first_layer, 40 * s);
        assert_int_equal(st->weight_bytes_resident, 17638096896ull);
        assert_int_equal(st->kv_bytes_resident, 10737418240ull);
    }
    near(par.stages[0].ops_s, ops0, 1e-12);
    near(par.stages[1].ops_s, ops1, 1e-12);
    near(par.stages[0].comm_s, 81 * ar, 1e-12);
    near(par.stages[1].comm_s, 80 * ar + ag, 1e-12);
    near(coll(&par.stages[0], "pp_send")->time_s, send, 1e-12);
    assert_null(coll(&par.stages[1], "pp_send"));
    assert_null(coll(&par.stages[1], "embed_allreduce"));
    assert_null(coll(&par.stages[0], "lm_head_allgather"));
    double f0 = ops0 + 81 * ar, f1 = ops1 + 80 * ar + ag;
    assert_int_equal(par.slowest, 1);
    near(par.token_latency_s, f0 + f1 + send, 1e-12);
    double cycle = fmax(f0 + f1 + send, 2 * f1);
    near(par.tokens_per_s, 64 / cycle, 1e-12);
    near(par.bubble, 1 - 2 * f1 / cycle, 1e-9);
}

/* Mixtral-8x7B, TP 8 with EP 8, B = 1, s = 0: each device holds 8 / 8 = 1
 * expert of 3 x 4096 x 14336 elements a layer, 32 layers: 32 x 176,160,768
 * x 2 = 11,274,289,152 bytes of experts. Touched a device at M = 1:
 * (8/8) (1 - (1 - 2/8)^1) = 0.25. ep_dispatch and ep_combine a layer, each
 * M k H b_a = 1 x 2 x 4096 x 2 = 16,384 bytes in all, all-to-all over 8,
 * direct: (7/8) 16384 / 450e9 + 1 us; no tp_allreduce_mlp (every layer
 * MoE). */
static void mixtral_ep8(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = preset("mixtral-8x7b");
    rf_par_opts po = popts(8, 1, 8);
    rf_step_opts o = decode(1, 0);
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    const rf_par_stage *st = &par.stages[0];
    rf_param_counts pc;
    assert_int_equal(rf_model_params(&st->shard, &pc, NULL), RF_OK);
    assert_int_equal(pc.by_module[RF_MOD_EXPERTS] / 8 * 2, 11274289152ull);
    const rf_coll *d = coll(st, "ep_dispatch"), *c = coll(st, "ep_combine");
    assert_non_null(d);
    assert_non_null(c);
    assert_int_equal(d->count, 32);
    assert_int_equal(d->bytes, 16384);
    near(d->time_s, 7.0 / 8 * 16384 / NVL + 1e-6, 1e-12);
    assert_string_equal(d->algo, "direct");
    assert_null(coll(st, "tp_allreduce_mlp"));
    assert_int_equal(coll(st, "tp_allreduce_attn")->count, 32);
    int routed = 0;
    for (size_t i = 0; i < st->step.n_ops; i++)
        if (st->step.ops[i].experts > 0) {
            near(st->step.ops[i].experts, 0.25, 1e-12);
            routed++;
        }
    assert_true(routed > 0);
    near(st->step.experts_touched, 0.25, 1e-12);
}

/* Llama-3.1-405B (128 query, 8 KV heads) under TP 16: 16 > 8, so each device
 * keeps one KV head (each of the 8 held by 16 / 8 = 2 devices): KV a token
 * a device 2 x 1 x 128 x 126 layers x 2 = 64,512 bytes, and 128 / 16 = 8
 * query heads. 16 devices span two nodes of 8: the all-reduces cross
 * InfiniBand (50e9 B/s, 5 us a hop); at B = 1 the message is M H b_a =
 * 16384 x 2 = 32,768 bytes. */
static void replicated_kv(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = load("llama-3.1-405b.json");
    rf_layout l = {16, 1, 1, 1};
    rf_model d;
    assert_int_equal(rf_layout_shard(&m, &l, 0, m.layers, &d, NULL), RF_OK);
    assert_int_equal(d.n_kv, 1);
    assert_int_equal(d.n_q, 8);
    assert_int_equal(rf_model_kv_elems_per_layer(&d) * d.layers * 2, 64512);
    rf_par_opts po = popts(16, 1, 1);
    rf_step_opts o = decode(1, 0);
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    const rf_coll *a = coll(&par.stages[0], "tp_allreduce_attn");
    assert_string_equal(a->link, "InfiniBand NDR 400 Gb/s");
    /* ring 2 (15/16) x 32768 / 50e9 + 30 x 5 us = 1.2288 + 150 us, tree
     * + 40 us, one-shot 15 x 32768 / 50e9 + 5 = 14.83 us, two-shot 1.2288
     * + 10 us = 11.2288 us: two-shot (InfiniBand does not reduce) */
    near(a->time_s, 2 * 15.0 / 16 * 32768 / 50e9 + 2 * 5e-6, 1e-12);
    assert_string_equal(a->algo, "two-shot");
}

/* TP 1 is today's step: the same operators, and a floor of the sum-of-max. */
static void tp1_unchanged(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = preset("llama-3-8b");
    rf_par_opts po = popts(1, 1, 1);
    rf_step_opts o = decode(16, 2048);
    assert_int_equal(rf_step_compute(&m, &o, &roof, &one, NULL), RF_OK);
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    const rf_par_stage *st = &par.stages[0];
    assert_int_equal(st->step.n_ops, one.n_ops);
    for (size_t i = 0; i < one.n_ops; i++) {
        assert_string_equal(st->step.ops[i].name, one.ops[i].name);
        assert_int_equal(st->step.ops[i].bytes, one.ops[i].bytes);
        assert_int_equal(st->step.ops[i].flops, one.ops[i].flops);
    }
    assert_int_equal(st->n_coll, 0);
    near(st->floor_s, one.floor_sum_of_max_s, 1e-12);
    assert_int_equal(st->weight_bytes_streamed, one.weight_bytes);
    uint64_t w;
    assert_int_equal(rf_model_weight_bytes(&m, &o, &w, NULL), RF_OK);
    assert_int_equal(st->weight_bytes_resident, w);
    near(par.tokens_per_s, 16 / one.floor_sum_of_max_s, 1e-12);
}

static void refused(const rf_model *m, rf_layout l, const char *needle)
{
    rf_err e;
    assert_int_equal(rf_layout_validate(m, &l, &e), RF_EINVAL);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' does not name '%s'", e.msg, needle);
}

/* Every refused split names its constraint. */
static void refused_splits(void **state)
{
    (void)state;
    rf_model l8 = preset("llama-3-8b"), q7 = preset("qwen2.5-7b-instruct");
    rf_model mx = preset("mixtral-8x7b");
    refused(&l8, (rf_layout){0, 1, 1, 1}, "--tp 0");
    refused(&l8, (rf_layout){1, 1, 1, 0}, "--dp 0");
    refused(&l8, (rf_layout){3, 1, 1, 1}, "num_attention_heads (32) % 3");
    /* qwen2.5-7b: 28 query heads split by 14, but 4 KV heads neither divide
     * 14 nor are a multiple of it */
    refused(&q7, (rf_layout){14, 1, 1, 1}, "num_key_value_heads (4) is neither");
    rf_model odd = l8; /* an intermediate size of 14337 is odd */
    odd.ffn = 14337;
    refused(&odd, (rf_layout){2, 1, 1, 1}, "intermediate_size (14337) % 2");
    refused(&mx, (rf_layout){1, 1, 3, 1}, "8 routed experts % 3");
    /* an expert group is TP groups of E / T replicas: EP 4 over TP 2 takes
     * two replicas, EP 2 cannot split a TP group of 4 */
    refused(&mx, (rf_layout){2, 1, 4, 1},
            "spans 2 data-parallel replicas (attention "
            "data-parallel), so --dp (1) must be a multiple of 2");
    refused(&mx, (rf_layout){4, 1, 2, 2}, "so --ep must be a multiple of --tp");
    refused(&l8, (rf_layout){1, 1, 2, 1}, "no routed experts");
    refused(&l8, (rf_layout){1, 100, 1, 1}, "has 32 layers");
    rf_model dsv2 = preset("deepseek-v2-lite"); /* MLA: 16 heads, no KV-head rule */
    refused(&dsv2, (rf_layout){3, 1, 1, 1}, "num_attention_heads (16) % 3");
    rf_layout mla = {16, 1, 1, 1}, ep_dp = {1, 1, 8, 8};
    assert_int_equal(rf_layout_validate(&dsv2, &mla, NULL), RF_OK);
    assert_int_equal(rf_layout_validate(&mx, &ep_dp, NULL), RF_OK);
    rf_layout ok = {8, 4, 1, 2};
    assert_int_equal(rf_layout_validate(&l8, &ok, NULL), RF_OK);
    assert_int_equal(rf_layout_devices(&ok), 64);
    setup_hw();
    rf_par_opts po = popts(2, 1, 1);
    po.links.up_bw_bytes_per_s = -1;
    rf_step_opts o = decode(1, 0);
    rf_err e;
    assert_int_equal(rf_par_compute(&l8, &o, &roof, &po, &par, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "--link-bw"));
}

/* Uneven stages: 80 layers over 3 = 27, 27, 26 (the first 80 % 3 = 2 one
 * longer). */
static void uneven_stages(void **state)
{
    (void)state;
    assert_int_equal(rf_layout_stage_layers(80, 3, 0), 27);
    assert_int_equal(rf_layout_stage_layers(80, 3, 1), 27);
    assert_int_equal(rf_layout_stage_layers(80, 3, 2), 26);
    assert_int_equal(rf_layout_stage_layers(32, 32, 31), 1);
}

/* plan: Llama-3.1-405B, 32 sequences at 8192 positions on H100 SXM. A
 * device's budget is 0.92 x 79.65 GiB - 6 GiB = 72.24 GB. On 8 devices the
 * best split (TP 4 x PP 2: 1/8 of the 405.8 G parameters' 811.7 GB plus a
 * vocabulary shard, and 1/8 of the KV, 32 x 8192 x 516,096 bytes = 135.3
 * GB) needs about 118 GB a device: 8 are not enough. 16 devices need
 * about 59 GB: the smallest deployment that fits. Of its layouts TP 16 x
 * PP 1 ranks first on cost (963 against TP 8 x PP 2's 948 tokens/s): its
 * all-reduces cross InfiniBand, whose floor is the two-shot algorithm's 2
 * hops (ring 30), so its 161 all-reduces a step cost less than the
 * pipeline's second stage. Computed in well under 100 ms of CPU (84
 * layouts). */
static rf_plan plan;

static void plan_405b(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = load("llama-3.1-405b.json");
    rf_par_opts po = popts(1, 1, 1);
    po.util = 0.92;
    po.reserve_bytes = 6ull << 30;
    rf_step_opts o = decode(32, 8192);
    clock_t t0 = clock();
    assert_int_equal(rf_plan_compute(&m, &o, &roof, &po, 64, RF_OBJ_COST, &plan, NULL), RF_OK);
    double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    /* 100 ms of CPU natively; under valgrind (make memcheck), whose
     * preload names it, every instruction is emulated, tens of times slower */
    const char *pre = getenv("LD_PRELOAD");
    if (cpu > 0.1 && !(pre && strstr(pre, "vgpreload")))
        fail_msg("plan took %.3f s of CPU", cpu);
    assert_true(plan.n_rows > 0);
    assert_int_equal(plan.rows[0].devices, 16);
    assert_int_equal(plan.rows[0].layout.tp, 16);
    assert_int_equal(plan.rows[0].layout.pp, 1);
    assert_int_equal(plan.rows[1].layout.tp, 8);
    assert_int_equal(plan.rows[1].layout.pp, 2);
    assert_true(plan.n_short == 4); /* 1, 2, 4 and 8 devices */
    const rf_plan_row *eight = &plan.short_of[3];
    assert_int_equal(eight->devices, 8);
    assert_false(eight->fits);
    near(eight->needed_bytes, 118.4e9, 1e-3);
    near(eight->budget_bytes, 0.92 * 79.65 * 1073741824.0 - 6.0 * 1073741824.0, 1e-9);
    for (size_t i = 1; i < plan.n_rows; i++)
        assert_true(plan.rows[i].devices >= plan.rows[i - 1].devices);
}

/* The sweep of a layout equals rf_par_compute at every context: Llama-3-70B
 * TP 4 x PP 2 at B = 16, contexts 0 to 8192. */
static rf_par_sweep psw;
static rf_par ref;

static void sweep_equals_compute(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = load("llama-3-70b.json");
    const int64_t layouts[][2] = {{4, 2}, {8, 1}, {2, 3}};
    for (size_t l = 0; l < 3; l++) {
        rf_par_opts po = popts(layouts[l][0], layouts[l][1], 1);
        rf_step_opts o = decode(16, 0);
        assert_int_equal(rf_par_sweep_prepare(&psw, &m, &o, &roof, &po, NULL), RF_OK);
        for (int64_t s = 0; s <= 8192; s += 1024 + 7) {
            rf_par_point p;
            assert_int_equal(rf_par_sweep_eval(&psw, s, &p, NULL), RF_OK);
            o.context = s;
            assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &ref, NULL), RF_OK);
            near(p.floor_s, ref.stages[ref.slowest].floor_s, 1e-12);
            near(p.token_latency_s, ref.token_latency_s, 1e-12);
            near(p.tokens_per_s, ref.tokens_per_s, 1e-12);
            near(p.bubble + 1, ref.bubble + 1, 1e-12);
        }
    }
    /* under EP too (the expert rows' share does not change with s): EP 8
     * over TP 8, and over 8 replicas of TP 1 (layout {1, 1, 8, 8}) */
    rf_model mx = preset("mixtral-8x7b");
    const rf_layout eps[] = {{8, 1, 8, 1}, {1, 1, 8, 8}, {2, 2, 4, 2}};
    for (size_t l = 0; l < 3; l++) {
        rf_par_opts po = popts(1, 1, 1);
        po.layout = eps[l];
        rf_step_opts o = decode(4, 0);
        assert_int_equal(rf_par_sweep_prepare(&psw, &mx, &o, &roof, &po, NULL), RF_OK);
        for (int64_t s = 0; s <= 8192; s += 1024 + 7) {
            rf_par_point p;
            assert_int_equal(rf_par_sweep_eval(&psw, s, &p, NULL), RF_OK);
            o.context = s;
            assert_int_equal(rf_par_compute(&mx, &o, &roof, &po, &ref, NULL), RF_OK);
            near(p.floor_s, ref.stages[ref.slowest].floor_s, 1e-12);
            near(p.tokens_per_s, ref.tokens_per_s, 1e-12);
        }
    }
}

/* plan: a DP replica serves ceil(B / D) >= 1 sequences, so D <= B: at B = 1
 * every layout tried is one replica (a second would idle, yet once counted
 * its own sequence); at B = 2 a DP 2 layout fits, DP 4 is not tried. On
 * Mixtral at B = 64 the expert groups tried include EP 2 over two TP 1
 * replicas. */
static void plan_dp_within_batch(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = preset("llama-3-8b");
    rf_par_opts po = popts(1, 1, 1);
    rf_step_opts o = decode(1, 1024);
    assert_int_equal(rf_plan_compute(&m, &o, &roof, &po, 8, RF_OBJ_THROUGHPUT, &plan, NULL), RF_OK);
    assert_true(plan.n_rows > 0);
    for (size_t i = 0; i < plan.n_rows; i++)
        assert_int_equal(plan.rows[i].layout.dp, 1);
    o.batch = 2;
    assert_int_equal(rf_plan_compute(&m, &o, &roof, &po, 8, RF_OBJ_THROUGHPUT, &plan, NULL), RF_OK);
    bool dp2 = false;
    for (size_t i = 0; i < plan.n_rows; i++) {
        assert_true(plan.rows[i].layout.dp <= 2);
        dp2 |= plan.rows[i].layout.dp == 2;
    }
    assert_true(dp2);
    rf_model mx = preset("mixtral-8x7b");
    o.batch = 64;
    assert_int_equal(rf_plan_compute(&mx, &o, &roof, &po, 16, RF_OBJ_COST, &plan, NULL), RF_OK);
    bool group = false;
    for (size_t i = 0; i < plan.n_rows; i++)
        group |= plan.rows[i].layout.tp == 1 && plan.rows[i].layout.ep == 2 &&
                 plan.rows[i].layout.dp == 2;
    assert_true(group);
}

/* Mixtral-8x7B with EP 8 over eight replicas of TP 1 (layout {1, 1, 8, 8}:
 * attention data-parallel, each device its own sequence, B = 1 at s = 0).
 * A device holds 8 / 8 = 1 expert a layer, 32 x 3 x 4096 x 14336 x 2 =
 * 11,274,289,152 bytes, and the whole attention: 32 x (2 x 4096 x 4096 +
 * 2 x 4096 x 1024) = 32 x 41,943,040 elements. The expert group routes
 * the 8 replicas' tokens, g M = 8 x 1: 8 x 2 = 16 token-expert pairs, 2 a
 * device (m = 2); touched in the group 8 (1 - (1 - 2/8)^8) = 7.199097, a
 * device's 7.199097 / 8 = 0.899887 (against 0.25 when EP 8 spans one TP 8
 * group of one sequence). expert_gate FLOPs a device 2 x 2 x 4096 x 14336 =
 * 234,881,024; weights streamed 7.199097 x 4096 x 14336 x 2 / 8. No
 * all-reduce (no TP); ep_dispatch and ep_combine a layer, each a replica's
 * M k H b_a = 1 x 2 x 4096 x 2 = 16,384 bytes, all-to-all over the 8 of the
 * group, direct: (7/8) 16384 / 450e9 + 1 us. Every other row is the one-device
 * step's at B = 1. tokens/s = D B / floor = 8 / (ops + 64 a2a). */
static void mixtral_ep8_tp1(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = preset("mixtral-8x7b");
    rf_par_opts po = popts(1, 1, 8);
    po.layout.dp = 8;
    rf_step_opts o = decode(1, 0);
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    assert_int_equal(par.devices, 8);
    const rf_par_stage *st = &par.stages[0];
    rf_param_counts pc;
    assert_int_equal(rf_model_params(&st->shard, &pc, NULL), RF_OK);
    assert_int_equal(pc.by_module[RF_MOD_EXPERTS] / 8 * 2, 11274289152ull);
    assert_int_equal(pc.by_module[RF_MOD_ATTN], 32ull * 41943040);
    double touched = 8 * (1 - pow(0.75, 8));
    near(touched, 7.199097, 1e-6);
    near(st->step.experts_touched, touched / 8, 1e-12);
    assert_int_equal(rf_step_compute(&m, &o, &roof, &one, NULL), RF_OK);
    assert_int_equal(st->step.n_ops, one.n_ops);
    int gates = 0;
    for (size_t i = 0; i < one.n_ops; i++) {
        const rf_op *op = &st->step.ops[i];
        if (!strcmp(op->name, "expert_gate")) {
            gates++;
            assert_int_equal(op->m, 2);
            assert_int_equal(op->flops, 234881024ull);
            near((double)op->weight_bytes, touched * 4096 * 14336 * 2 / 8, 1e-9);
        }
        if (op->experts > 0)
            continue;
        assert_string_equal(op->name, one.ops[i].name);
        assert_int_equal(op->bytes, one.ops[i].bytes);
        assert_int_equal(op->flops, one.ops[i].flops);
    }
    assert_int_equal(gates, 1);
    assert_null(coll(st, "tp_allreduce_attn"));
    assert_null(coll(st, "tp_allreduce_mlp"));
    assert_null(coll(st, "lm_head_allgather"));
    const rf_coll *d = coll(st, "ep_dispatch");
    assert_non_null(d);
    assert_int_equal(d->count, 32);
    assert_int_equal(d->bytes, 16384);
    assert_int_equal(d->ranks, 8);
    double a2a = 7.0 / 8 * 16384 / NVL + 1e-6;
    near(d->time_s, a2a, 1e-12);
    assert_int_equal(st->n_coll, 2);
    near(st->comm_s, 64 * a2a, 1e-12);
    near(par.tokens_per_s, 8 / (st->ops_s + 64 * a2a), 1e-12);
}

/* DeepSeek-V2-Lite (MLA: H 2048, 16 heads, kv_lora_rank 512, rope 64, nope
 * 128, v 128, no q_lora, 27 layers) under TP 2. q_proj and kv_b_proj are
 * column-parallel by heads, o_proj row-parallel; kv_a_proj (the compressed
 * latent and k_rope, 512 + 64 = 576 wide) is replicated, and so is the
 * latent cache (each rank's heads read all of it). A rank's shapes:
 * q_proj 2048 x 8 x 192 = 2048 x 1536, kv_a_proj 2048 x 576, kv_b_proj
 * 512 x 8 x (128 + 128) = 512 x 2048, o_proj 8 x 128 = 1024 x 2048; its
 * attention weights 27 x (3,145,728 + 1,179,648 + 1,048,576 + 2,097,152) =
 * 27 x 7,471,104 = 201,719,808 elements (one device: 27 x 13,762,560).
 * KV a token 27 x 576 x 2 = 31,104 bytes on every rank. Decode attention
 * (absorbed): half the heads, half the FLOPs, the same latent read. One
 * all-reduce after o_proj and one after the MLP a layer, of M H b_a =
 * 1 x 2048 x 2 = 4,096 bytes: one-shot 4096 / 450e9 + 1 us (ring and
 * tree 2 (1/2) 4096 / 450e9 + 2 us, in-switch (1/2) 4096 / 450e9 + 2). */
static void mla_tp2(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = preset("deepseek-v2-lite");
    rf_par_opts po = popts(2, 1, 1);
    rf_step_opts o = decode(1, 4096);
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    const rf_par_stage *st = &par.stages[0];
    assert_int_equal(rf_step_compute(&m, &o, &roof, &one, NULL), RF_OK);
    const struct {
        const char *name;
        int64_t k, n;
    } shapes[] = {{"q_proj", 2048, 1536},
                  {"kv_a_proj", 2048, 576},
                  {"kv_b_proj", 512, 2048},
                  {"o_proj", 1024, 2048}};
    for (size_t k = 0; k < 4; k++) {
        const rf_op *op = NULL;
        for (size_t i = 0; i < st->step.n_ops && !op; i++)
            op = !strcmp(st->step.ops[i].name, shapes[k].name) ? &st->step.ops[i] : NULL;
        assert_non_null(op);
        assert_int_equal(op->k, shapes[k].k);
        assert_int_equal(op->n, shapes[k].n);
    }
    rf_param_counts pc, one_pc;
    assert_int_equal(rf_model_params(&st->shard, &pc, NULL), RF_OK);
    assert_int_equal(rf_model_params(&m, &one_pc, NULL), RF_OK);
    assert_int_equal(pc.by_module[RF_MOD_ATTN], 201719808ull);
    assert_int_equal(one_pc.by_module[RF_MOD_ATTN], 27ull * 13762560);
    uint64_t kv_tok;
    assert_int_equal(rf_model_kv_bytes(&st->shard, o.kv, 1, &kv_tok, NULL), RF_OK);
    assert_int_equal(kv_tok, 31104);
    int attn = 0;
    for (size_t i = 0; i < one.n_ops; i++)
        if (!strcmp(one.ops[i].name, "attention")) {
            attn++;
            assert_string_equal(st->step.ops[i].name, "attention");
            assert_int_equal(st->step.ops[i].kv_bytes, one.ops[i].kv_bytes);
            assert_int_equal(st->step.ops[i].flops * 2, one.ops[i].flops);
        }
    assert_int_equal(attn, 1);
    const rf_coll *a = coll(st, "tp_allreduce_attn");
    assert_int_equal(a->count, 27);
    assert_int_equal(a->bytes, 4096);
    near(a->time_s, 4096 / NVL + 1e-6, 1e-12);
    assert_int_equal(coll(st, "tp_allreduce_mlp")->count, 27);
    /* DeepSeek-V3 (128 heads) splits by 8 as well */
    rf_model v3 = load("deepseek-v3.json");
    rf_layout l8 = {8, 1, 1, 1};
    assert_int_equal(rf_layout_validate(&v3, &l8, NULL), RF_OK);
}

/* Capacity of Llama-3-70B on TP 4 x PP 2 H100s: a device holds
 * 17,638,096,896 bytes of weights (llama70_tp4_pp2), budget 0.9 x 79.65 GiB
 * (85,523,536,282 bytes) = 76,971,182,654 (popts' util, no reserve): pool
 * 59,333,085,758 bytes; a token's KV on a device 2 x 2 KV heads x 128 x 2
 * bytes x 40 layers = 40,960 bytes: 1,448,561.7 tokens, 353.65 sequences
 * at 4096. */
static void capacity_tp4_pp2(void **state)
{
    (void)state;
    setup_hw();
    rf_model m = load("llama-3-70b.json");
    rf_par_opts po = popts(4, 2, 1);
    rf_step_opts o = decode(1, 0);
    rf_par_capacity c;
    assert_int_equal(rf_par_capacity_compute(&m, &o, &po, 4096, &c, NULL), RF_OK);
    assert_int_equal(c.resident_bytes, 17638096896ull);
    double budget = 0.9 * (double)h100.mem_bytes;
    near(c.budget_bytes, budget, 1e-12);
    near(c.pool_bytes, budget - 17638096896.0, 1e-12);
    near(c.tokens, (budget - 17638096896.0) / 40960, 1e-12);
    near(c.sequences, (budget - 17638096896.0) / (40960.0 * 4096), 1e-12);
    near(c.sequences, 353.65, 1e-4);
    assert_true(c.weights_fit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(preset_links),     cmocka_unit_test(llama70_tp8),
        cmocka_unit_test(llama70_tp4_pp2),  cmocka_unit_test(mixtral_ep8),
        cmocka_unit_test(replicated_kv),    cmocka_unit_test(tp1_unchanged),
        cmocka_unit_test(refused_splits),   cmocka_unit_test(uneven_stages),
        cmocka_unit_test(plan_405b),        cmocka_unit_test(sweep_equals_compute),
        cmocka_unit_test(capacity_tp4_pp2), cmocka_unit_test(mixtral_ep8_tp1),
        cmocka_unit_test(mla_tp2),          cmocka_unit_test(plan_dp_within_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
