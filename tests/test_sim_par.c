/* test_sim_par.c - the simulator on parallel layouts (rf_sim.h, "the
 * layout's step model"), data-parallel replicas, MLA mixed steps, the SLO
 * planner and disaggregated prefill and decode.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_parallel.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"
#include "roofline/rf_step.h"
#include "sim_fixture.h"

static rf_hw hw_of(const char *name)
{
    rf_hw h;
    assert_int_equal(rf_hw_preset(name, &h, NULL), RF_OK);
    rf_hw_links_defaults(&h.links);
    return h;
}

static rf_roof roof_hw(const rf_hw *h)
{
    rf_roof r;
    assert_int_equal(rf_hw_roof(h, RF_BF16, &r, NULL), RF_OK);
    return r;
}

static rf_par_opts popts(const rf_hw *h, int64_t tp, int64_t pp, int64_t ep, int64_t dp)
{
    return (rf_par_opts){
        .layout = {tp, pp, ep, dp}, .links = h->links, .util = 0.9, .mem_bytes = h->mem_bytes};
}

/* The layout's step model over a heap table. */
typedef struct par_model {
    rf_sim_par *p;
    void *table;
} par_model;

static par_model par_new(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                         const rf_par_opts *po, int64_t tokens, int64_t logits)
{
    par_model pm = {calloc(1, sizeof(rf_sim_par)), NULL};
    assert_non_null(pm.p);
    size_t bytes = 0;
    rf_err e = {0};
    if (rf_sim_par_table_bytes(pm.p, m, &po->layout, tokens, logits, &bytes, &e))
        fail_msg("table: %s", e.msg);
    pm.table = malloc(bytes);
    assert_non_null(pm.table);
    if (rf_sim_par_prepare(pm.p, m, o, roof, po, tokens, logits, pm.table, bytes, &e))
        fail_msg("prepare: %s", e.msg);
    return pm;
}

static void par_free(par_model *pm)
{
    free(pm->table);
    free(pm->p);
}

/* A batch of n decode tokens each at context S and the chunks given. */
typedef struct batch_buf {
    int64_t ctx[64];
    rf_sim_chunk ch[8];
    rf_sim_batch b;
} batch_buf;

static void batch_fill(batch_buf *bb, int64_t n, int64_t S, const rf_sim_chunk *ch, int64_t nc)
{
    bb->b = (rf_sim_batch){
        .n_decode = n, .decode_context = bb->ctx, .n_chunks = nc, .chunks = bb->ch, .tokens = n};
    for (int64_t i = 0; i < n; i++) {
        bb->ctx[i] = S;
        bb->b.decode_context_sum += S;
    }
    for (int64_t j = 0; j < nc; j++) {
        bb->ch[j] = ch[j];
        bb->b.tokens += ch[j].tokens;
    }
}

/* A decode step and a prefill step on TP 2 x PP 2: the layout's step on
 * the same batch is rf_par_compute's cycle. Decode B = 4 at S = 1000: PP 2
 * cuts it into m = min(2, 4) = 2 micro-batches of 2 (rf_par: micro_batch
 * ceil(4 / 2) = 2), so each stage's time is its floor at B = 2 and the
 * cycle max(sum of stages + send, 2 x slowest), as rf_par's. Prefill of
 * one 512-token prompt: one micro-batch (m = min(2, 1)). */
static void layout_step_is_par(void **state)
{
    (void)state;
    rf_hw h = hw_of("h100-sxm");
    rf_roof roof = roof_hw(&h);
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_par_opts po = popts(&h, 2, 2, 1, 1);
    par_model pm = par_new(&m, &o, &roof, &po, 4096, 256);
    rf_par *par = calloc(1, sizeof *par);
    assert_non_null(par);
    rf_err e = {0};

    rf_step_opts d = o;
    d.phase = RF_DECODE;
    d.batch = 4;
    d.context = 1000;
    assert_int_equal(rf_par_compute(&m, &d, &roof, &po, par, &e), RF_OK);
    assert_int_equal(par->micro_batches, 2);
    batch_buf bb;
    batch_fill(&bb, 4, 1000, NULL, 0);
    double t = 0;
    assert_int_equal(rf_sim_par_step(pm.p, &bb.b, 1, &t, &e), RF_OK);
    near(t, par->cycle_s, 1e-12);

    rf_step_opts p = o;
    p.phase = RF_PREFILL;
    p.batch = 1;
    p.tokens = 512;
    p.context = 0;
    assert_int_equal(rf_par_compute(&m, &p, &roof, &po, par, &e), RF_OK);
    rf_sim_chunk c = {.tokens = 512};
    batch_fill(&bb, 0, 0, &c, 1);
    assert_int_equal(rf_sim_par_step(pm.p, &bb.b, 1, &t, &e), RF_OK);
    near(t, par->cycle_s, 1e-12);
    free(par);
    par_free(&pm);
}

/* The steady state's mixed step on a layout (rf_serve_par_compute, which
 * times it by rf_par's path) against the layout's step model on the same
 * batch.
 * Llama-3-8B on TP 2 x PP 2, B = 8, P = 512, N = 64, C = 256: T_p =
 * ceil(8 x 512 / 64) = 64 prompt tokens a step; PP cuts the step into
 * m = min(2, 8) = 2 micro-batches of ceil(8/2) = 4 decode tokens at
 * S_d = 512 + 32 = 544 and ceil(64/2) = 32 prompt tokens, a chunk of 32 at
 * S_c = 256 floor((ceil(512/256) - 1) / 2) = 0. Our batch: 8 decode
 * tokens at 544 and two chunks of 32 at 0; dealt round robin, each
 * micro-batch gets 4 decode tokens and one chunk (items 8 and 9).
 * Mixtral-8x7B with attention data parallel and EP: {tp 1, ep 2, dp 2},
 * an expert group of g = 2 replicas in lockstep, each with B = 8 and one
 * chunk of 64 at 0 (T_p = 64 < C): the routed rows see G = 2 x 72 tokens
 * with 1/2 of their work, as rf_par's EP share at g M. */
static void layout_mixed_is_serve_par(void **state)
{
    (void)state;
    rf_hw h = hw_of("h100-sxm");
    rf_roof roof = roof_hw(&h);
    rf_err e = {0};
    rf_serve_opts so = {.concurrency = 8, .prompt = 512, .output = 64, .chunk = 256};
    rf_serve sv;
    rf_serve_par sp;
    rf_par *par = calloc(1, sizeof *par);
    assert_non_null(par);

    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_par_opts po = popts(&h, 2, 2, 1, 1);
    if (rf_serve_par_compute(&m, &o, &roof, &po, &so, &sv, par, &sp, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(sp.micro_batches, 2);
    assert_int_equal(sv.decode_context, 544);
    assert_int_equal(sp.micro_prompt_tokens, 32);
    assert_int_equal(sv.chunk_context, 0);
    par_model pm = par_new(&m, &o, &roof, &po, 4096, 256);
    rf_sim_chunk two[2] = {{.tokens = 32}, {.tokens = 32, .request = 1}};
    batch_buf bb;
    batch_fill(&bb, 8, 544, two, 2);
    double t = 0;
    assert_int_equal(rf_sim_par_step(pm.p, &bb.b, 1, &t, &e), RF_OK);
    near(t, sp.tpot_s, 1e-12);
    par_free(&pm);

    rf_model x = model("mixtral-8x7b");
    rf_step_opts ox = rf_step_opts_for_model(&x);
    rf_par_opts pe = popts(&h, 1, 1, 2, 2);
    if (rf_serve_par_compute(&x, &ox, &roof, &pe, &so, &sv, par, &sp, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(sv.prompt_tokens, 64);
    pm = par_new(&x, &ox, &roof, &pe, 4096, 256);
    assert_int_equal(pm.p->group, 2);
    rf_sim_chunk one = {.tokens = 64};
    batch_buf g[2];
    batch_fill(&g[0], 8, 544, &one, 1);
    batch_fill(&g[1], 8, 544, &one, 1);
    rf_sim_batch gb[2] = {g[0].b, g[1].b};
    assert_int_equal(rf_sim_par_step(pm.p, gb, 2, &t, &e), RF_OK);
    near(t, sp.tpot_s, 1e-12);
    /* the group step is refused with a replica count other than g */
    assert_int_equal(rf_sim_par_step(pm.p, gb, 1, &t, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "steps 2 replicas together"));
    par_free(&pm);
    free(par);
}

/* DeepSeek's layout as the engines run it (--tp 8 --ep 8 with attention
 * data parallel): {tp 1, ep 8, dp 8} on DeepSeek-V2-Lite (MLA, 64 routed
 * experts: 8 a device). Eight replicas in lockstep, each decoding 4
 * sequences at 2,000 keys: each device runs its replica's attention (the
 * absorbed MLA decode, kv_b_proj at 4 rows) and 1/8 of the group's
 * 8 x 4 = 32 tokens' routed pairs, as rf_par_compute's decode of B = 4 on
 * that layout (its EP share at g M = 32 rows). */
static void deepseek_layout_is_par(void **state)
{
    (void)state;
    rf_hw h = hw_of("h100-sxm");
    rf_roof roof = roof_hw(&h);
    rf_model m = model("deepseek-v2-lite");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_par_opts po = popts(&h, 1, 1, 8, 8);
    rf_par *par = calloc(1, sizeof *par);
    assert_non_null(par);
    rf_err e = {0};
    rf_step_opts d = o;
    d.batch = 4;
    d.context = 2000;
    if (rf_par_compute(&m, &d, &roof, &po, par, &e))
        fail_msg("%s", e.msg);
    par_model pm = par_new(&m, &o, &roof, &po, 2048, 64);
    assert_int_equal(pm.p->group, 8);
    rf_sim_sched sc = {0};
    rf_sim_par_sched(pm.p, &sc);
    assert_int_equal(sc.replicas, 8);
    assert_int_equal(sc.lockstep, 8);
    batch_buf bb[8];
    rf_sim_batch g[8];
    for (int i = 0; i < 8; i++) {
        batch_fill(&bb[i], 4, 2000, NULL, 0);
        g[i] = bb[i].b;
    }
    double t = 0;
    assert_int_equal(rf_sim_par_step(pm.p, g, 8, &t, &e), RF_OK);
    near(t, par->cycle_s, 1e-12);
    /* a replica idle: the group routes 28 tokens, each busy device's
     * step no slower than with all eight busy */
    g[7] = (rf_sim_batch){0};
    double fewer = 0;
    assert_int_equal(rf_sim_par_step(pm.p, g, 8, &fewer, &e), RF_OK);
    assert_true(fewer <= t && fewer > 0);
    par_free(&pm);
    free(par);
}

/* An MLA verification on a layout is the lesser of its forms, as on one
 * device (test_sim's mla_verify_floor): DeepSeek-V2-Lite on TP 2, 4
 * positions verified after 2,000 cached. On a roof of unbounded bandwidth
 * (each operator's sum-of-max its F / pi) the absorbed kernel's rows are
 * the decode of 4 tokens at 2,001 .. 2,004 keys (the same linear rows
 * M = 4, lm_head rows L = 4, kv_b_proj on 4 rows, attention FLOPs, and the
 * same collectives at M = 4 and L = 4), so the two steps are equal; the
 * expanding chunk's kv_b_proj on 2,004 rows would cost ten times more. */
static void layout_mla_verify(void **state)
{
    (void)state;
    rf_hw h = hw_of("h100-sxm");
    rf_roof roof = roof_hw(&h);
    roof.bw_bytes_per_s = 1e30;
    rf_model m = model("deepseek-v2-lite");
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.causal = true;
    rf_par_opts po = popts(&h, 2, 1, 1, 1);
    par_model pm = par_new(&m, &o, &roof, &po, 4096, 256);
    rf_err e = {0};
    rf_sim_chunk v = {.tokens = 4, .offset = 2000, .logits = 4};
    rf_sim_batch verify = {.n_chunks = 1, .chunks = &v, .tokens = 4};
    const int64_t ctx[4] = {2001, 2002, 2003, 2004};
    rf_sim_batch dec = {
        .n_decode = 4, .decode_context = ctx, .decode_context_sum = 8010, .tokens = 4};
    double tv = 0, td = 0;
    assert_int_equal(rf_sim_par_step(pm.p, &verify, 1, &tv, &e), RF_OK);
    assert_int_equal(rf_sim_par_step(pm.p, &dec, 1, &td, &e), RF_OK);
    near(tv, td, 1e-12);
    par_free(&pm);
}

/* Speculation on a layout. A verification chunk scores every position:
 * on TP 1 x PP 1 (no collectives) the step of 5 tokens after 1000 with
 * logits 5 exceeds the same chunk scoring one by lm_head at 5 rows less
 * lm_head at 1 row, each the sum-of-max of the GEMM (its shape from the
 * decode step). And the closed loop at concurrency 1 with a draft on the
 * same layout (llama-3-8b drafting itself) at alpha = 1, K = 3, N = 41:
 * 1 + ceil(40 / 4) = 11 steps; the run is deterministic. */
static void layout_speculates(void **state)
{
    (void)state;
    rf_hw h = hw_of("h100-sxm");
    rf_roof roof = roof_hw(&h);
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_par_opts po = popts(&h, 1, 1, 1, 1);
    par_model pm = par_new(&m, &o, &roof, &po, 4096, 256);
    rf_err e = {0};
    rf_sim_chunk v = {.tokens = 5, .offset = 1000, .logits = 5},
                 one = {.tokens = 5, .offset = 1000};
    batch_buf bb;
    double tv = 0, t1 = 0;
    batch_fill(&bb, 0, 0, &v, 1);
    assert_int_equal(rf_sim_batch_logits(&bb.b), 5);
    assert_int_equal(rf_sim_par_step(pm.p, &bb.b, 1, &tv, &e), RF_OK);
    batch_fill(&bb, 0, 0, &one, 1);
    assert_int_equal(rf_sim_batch_logits(&bb.b), 1);
    assert_int_equal(rf_sim_par_step(pm.p, &bb.b, 1, &t1, &e), RF_OK);
    rf_step *st = calloc(1, sizeof *st);
    assert_non_null(st);
    rf_step_opts d = o;
    d.phase = RF_DECODE;
    assert_int_equal(rf_step_compute(&m, &d, &roof, st, &e), RF_OK);
    double head[2] = {0, 0};
    for (size_t i = 0; i < st->n_ops; i++)
        if (st->ops[i].name && !strcmp(st->ops[i].name, "lm_head"))
            for (int k = 0; k < 2; k++) {
                rf_op op;
                const rf_op *x = &st->ops[i];
                assert_int_equal(rf_op_gemm(x->name, k ? 5 : 1, x->k, x->n, x->w, o.a, &op, &e),
                                 RF_OK);
                head[k] = (double)x->count *
                          rf_roof_place(&roof, (double)op.flops, (double)op.bytes).floor_s;
            }
    assert_true(head[1] > head[0]);
    near(tv - t1, head[1] - head[0], 1e-9);

    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 2,
                         .concurrency = 1,
                         .prompt = {.dist = RF_SIM_FIXED, .value = 300},
                         .output = {.dist = RF_SIM_FIXED, .value = 41}};
    rf_sim_sched sc = {.max_batched_tokens = 4096,
                       .max_seqs = 64,
                       .chunk = 4096,
                       .block_tokens = 16,
                       .pool_blocks = 1 << 16,
                       .spec_k = 3,
                       .spec_accept = 1,
                       .draft = rf_sim_par_step,
                       .draft_user = pm.p};
    rf_sim_par_sched(pm.p, &sc);
    rf_sim_result r, r2;
    if (sim_run(&w, &sc, NULL, rf_sim_par_step, pm.p, &r, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(r.steps, 2 * 11);
    assert_int_equal(r.spec_verifies, 2 * 10);
    if (sim_run(&w, &sc, NULL, rf_sim_par_step, pm.p, &r2, &e))
        fail_msg("%s", e.msg);
    assert_memory_equal(&r, &r2, sizeof r);
    free(st);
    par_free(&pm);
}

/* The closed loop at concurrency 1 on a layout is rf_generate_par_compute:
 * one request at a time, its prompt of 512 one step (the prefill cycle of
 * 1 x 512 tokens: TTFT), then its j-th token (j = 2..64) a decode at
 * 512 + j - 1 keys (the decode cycles over contexts 513..575 it sums),
 * E2E its latency. On TP 2 (closed form) and on TP 2 x PP 2 (a pipeline
 * of one micro-batch, summed step by step). */
static void closed_one_is_generate_par(void **state)
{
    (void)state;
    rf_hw h = hw_of("h100-sxm");
    rf_roof roof = roof_hw(&h);
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_par_sweep *ps = calloc(1, sizeof *ps);
    assert_non_null(ps);
    const int64_t pp[2] = {1, 2};
    for (int i = 0; i < 2; i++) {
        rf_par_opts po = popts(&h, 2, pp[i], 1, 1);
        rf_generate_par g;
        rf_err e = {0};
        rf_step_opts one = o;
        one.batch = 1;
        if (rf_generate_par_compute(&m, &one, &roof, &po, 512, 64, ps, &g, &e))
            fail_msg("%s", e.msg);
        par_model pm = par_new(&m, &o, &roof, &po, 2048, 64);
        rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                             .requests = 2,
                             .concurrency = 1,
                             .prompt = {.dist = RF_SIM_FIXED, .value = 512},
                             .output = {.dist = RF_SIM_FIXED, .value = 64}};
        rf_sim_sched sc = {.max_batched_tokens = 2048,
                           .max_seqs = 8,
                           .chunk = 2048,
                           .block_tokens = 16,
                           .pool_blocks = 1000};
        rf_sim_par_sched(pm.p, &sc);
        rf_sim_result r;
        sim_run_ok(&w, &sc, NULL, rf_sim_par_step, pm.p, &r);
        near(r.ttft_s.max, g.ttft_s, 1e-9);
        near(r.ttft_s.p50, g.ttft_s, 1e-9);
        near(r.e2e_s.max, g.latency_s, 1e-9);
        near(r.tpot_s.p50, g.tpot_mean_s, 1e-9);
        near(r.duration_s, 2 * g.latency_s, 1e-9);
        par_free(&pm);
    }
    free(ps);
}

/* 10 ms a step plus 0.1 ms a token of every replica in the group. */
static rf_status group_affine(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                              rf_err *err)
{
    (void)user;
    (void)err;
    double t = 10e-3;
    for (int64_t i = 0; i < n; i++)
        t += 1e-4 * (double)b[i].tokens;
    *step_s = t;
    return RF_OK;
}

/* Data parallel by hand. Closed loop, fixed P = 100, N = 5, 10 ms + 0.1 ms
 * a token a step. One replica, C = 1, 3 requests: each is a prefill step
 * (10 + 10 = 20 ms) and 4 decode steps of 10.1 ms: E2E 60.4 ms, duration
 * 3 x 60.4 = 181.2 ms. D = 2 replicas (independent), C = 2 (a client a
 * replica), 6 requests: each replica runs 3 requests as above, so the same
 * E2E and duration, twice the requests a second. In lockstep (g = 2) the
 * two replicas step together and each step's time counts both batches:
 * prefill 10 + 20 = 30 ms, decode 10.2 ms: E2E 70.8 ms, duration 212.4 ms.
 * Requests go round robin: with lengths uniform, replica 0 gets the even
 * ones. */
static void replicas_by_hand(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 3,
                         .concurrency = 1,
                         .prompt = {.dist = RF_SIM_FIXED, .value = 100},
                         .output = {.dist = RF_SIM_FIXED, .value = 5},
                         .seed = 1};
    rf_sim_sched sc = {.max_batched_tokens = 512,
                       .max_seqs = 8,
                       .chunk = 512,
                       .block_tokens = 16,
                       .pool_blocks = 1000};
    rf_sim_result one, two, lock;
    rf_err e = {0};
    assert_int_equal(sim_run(&w, &sc, NULL, group_affine, NULL, &one, &e), RF_OK);
    near(one.e2e_s.p50, 0.0604, 1e-12);
    near(one.duration_s, 0.1812, 1e-12);
    w.requests = 6;
    w.concurrency = 2;
    sc.replicas = 2;
    assert_int_equal(sim_run(&w, &sc, NULL, group_affine, NULL, &two, &e), RF_OK);
    near(two.e2e_s.max, 0.0604, 1e-12);
    near(two.duration_s, 0.1812, 1e-12);
    near(two.requests_per_s, 2 * one.requests_per_s, 1e-12);
    assert_int_equal(two.peak_running, 1);
    sc.lockstep = 2;
    assert_int_equal(sim_run(&w, &sc, NULL, group_affine, NULL, &lock, &e), RF_OK);
    near(lock.e2e_s.max, 0.0708, 1e-12);
    near(lock.duration_s, 0.2124, 1e-12);
    assert_int_equal(lock.steps, 15);
    /* refusals: fewer clients than replicas, lockstep not dividing them,
     * lockstep through rf_sim_run */
    size_t bytes;
    w.concurrency = 1;
    assert_int_equal(rf_sim_workspace_bytes(&w, &sc, 100, &bytes, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "concurrency (1) must be at least the replicas (2)"));
    w.concurrency = 2;
    sc.lockstep = 3;
    assert_int_equal(rf_sim_workspace_bytes(&w, &sc, 100, &bytes, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "lockstep (3)"));
}

/* Plan over a workspace of the size asked, failing the test on an error. */
static void plan_ok(const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                    const rf_sim_plan_opts *po, rf_sim_plan *p)
{
    rf_err e = {0};
    size_t bytes = 0;
    if (rf_sim_plan_work_bytes(m, po, p, &bytes, &e))
        fail_msg("plan: %s", e.msg);
    void *work = malloc(bytes);
    assert_non_null(work);
    rf_status s = rf_sim_plan_compute(m, o, roof, po, work, bytes, p, &e);
    free(work);
    if (s)
        fail_msg("plan: %s", e.msg);
}

/* The planner on a case computable by hand. Llama-3-8B on H100s, P = 512,
 * N = 32 fixed, 40 Poisson requests at 0.05/s (20 s apart on average:
 * they almost never overlap), chunk 2048 (a prompt is one step), P99.
 * The TPOT bound of a layout is its decode of one token at P + 1 = 513
 * keys, which is rf_par_compute's cycle of that decode (layout_step_is_par
 * shows the step model equal to it). TP 1's is about 2 x TP 2's (half the
 * weights a device) less TP 2's all-reduces; with the TPOT SLO at 0.98 x
 * TP 1's bound every 1-device layout is pruned without a simulation, and
 * so are PP 2 (its token passes both stages and the send: above TP 1's)
 * and DP 2 (a replica is one device); TP 2 meets: alone, each request's
 * TPOT is the mean of its decodes at 513 .. 543 keys, within 1% of the
 * bound (the KV read grows by 30 / 513 of a small part). So the fewest
 * devices are 2, on TP 2, with P99 TTFT the prefill bound itself (a
 * request alone: one step of 512 tokens). */
static void planner_by_hand(void **state)
{
    (void)state;
    rf_hw h = hw_of("h100-sxm");
    rf_roof roof = roof_hw(&h);
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_par *par = calloc(1, sizeof *par);
    rf_sim_plan *p = calloc(1, sizeof *p);
    assert_non_null(par);
    assert_non_null(p);
    rf_err e = {0};
    rf_step_opts d = o;
    d.batch = 1;
    d.context = 513;
    rf_par_opts one = popts(&h, 1, 1, 1, 1), two = popts(&h, 2, 1, 1, 1);
    assert_int_equal(rf_par_compute(&m, &d, &roof, &one, par, &e), RF_OK);
    double tp1 = par->cycle_s;
    assert_int_equal(rf_par_compute(&m, &d, &roof, &two, par, &e), RF_OK);
    double tp2 = par->cycle_s;
    assert_true(tp2 < 0.6 * tp1);
    rf_sim_plan_opts po = {
        .par = one,
        .max_devices = 8,
        .workload = {.arrival = RF_SIM_POISSON,
                     .requests = 40,
                     .rate_per_s = 0.05,
                     .prompt = {.dist = RF_SIM_FIXED, .value = 512},
                     .output = {.dist = RF_SIM_FIXED, .value = 32},
                     .seed = 3},
        .sched = {.max_batched_tokens = 4096, .max_seqs = 64, .chunk = 2048, .block_tokens = 16},
        .slo_ttft_s = 1,
        .slo_tpot_s = 0.98 * tp1,
        .percentile = 99,
        .price_per_device_hour = 2};
    plan_ok(&m, &o, &roof, &po, p);
    assert_int_equal(p->best_devices, 2);
    const rf_sim_plan_row *best = &p->rows[0];
    assert_true(best->meets);
    assert_int_equal(best->layout.tp, 2);
    assert_int_equal(best->layout.pp, 1);
    assert_int_equal(best->layout.dp, 1);
    near(best->bound_tpot_s, tp2, 1e-12);
    near(best->tpot_s, tp2, 0.01);
    near(best->ttft_s, best->bound_ttft_s, 1e-9);
    /* every other row misses: the 1-device layout and DP 2 pruned by the
     * TPOT bound, unsimulated; PP 2 as well */
    size_t pruned = 0;
    for (size_t i = 1; i < p->n_rows; i++) {
        const rf_sim_plan_row *r = &p->rows[i];
        assert_false(r->meets);
        if (r->pruned) {
            pruned++;
            assert_string_equal(r->why, "batch-1 decode floor above the TPOT SLO");
            assert_true(r->bound_tpot_s > po.slo_tpot_s);
        }
    }
    assert_int_equal(pruned, p->n_rows - 1);
    assert_int_equal(p->n_rows, 4); /* 1 x 1 x 1 x 1; TP 2, PP 2, DP 2 */
    assert_int_equal(p->n_sims, 1);

    /* disaggregated beside it, in one table: the 1-device layouts are
     * pruned as before (their decode bound), TP 2 with one prefill and one
     * decode worker meets (requests alone: TTFT the prefill of 512 tokens
     * and the transfer of their 512 x 131,072 bytes over the scale-out
     * link, 50 GB/s and 5 us: its bound exactly); 4 devices, so after the
     * aggregated TP 2's 2. */
    po.disagg = true;
    plan_ok(&m, &o, &roof, &po, p);
    assert_int_equal(p->best_devices, 2);
    assert_int_equal(p->rows[0].prefill_workers, 0);
    assert_int_equal(p->rows[0].layout.tp, 2);
    const rf_sim_plan_row *dis = &p->rows[1];
    assert_true(dis->meets);
    assert_int_equal(dis->layout.tp, 2);
    assert_int_equal(dis->prefill_workers, 1);
    assert_int_equal(dis->decode_workers, 1);
    assert_int_equal(dis->devices, 4);
    double xfer = 512.0 * 131072 / 50e9 + 5e-6;
    near(dis->bound_ttft_s, best->bound_ttft_s + xfer, 1e-12);
    near(dis->ttft_s, dis->bound_ttft_s, 1e-9);
    po.disagg = false;

    /* at a concurrency of 1 (closed loop, 10 requests): the same answer,
     * TP 2 on 2 devices, its rate the run's (one request at a time:
     * 1 / E2E); DP 2 has more replicas than clients */
    po.workload.arrival = RF_SIM_CLOSED;
    po.workload.concurrency = 1;
    po.workload.requests = 10;
    plan_ok(&m, &o, &roof, &po, p);
    assert_int_equal(p->best_devices, 2);
    assert_int_equal(p->rows[0].layout.tp, 2);
    near(p->rows[0].rate_per_s, 1 / (p->rows[0].bound_ttft_s + 31 * p->rows[0].tpot_s), 0.01);
    bool saw = false;
    for (size_t i = 0; i < p->n_rows; i++)
        saw = saw ||
              (p->rows[i].layout.dp == 2 && !strcmp(p->rows[i].why, "fewer clients than replicas"));
    assert_true(saw);
    po.workload.arrival = RF_SIM_POISSON;
    po.workload.concurrency = 0;

    /* (b) 2 devices: the highest rate TP 2 meets them at is above the
     * low rate and its P99 TPOT within the SLO */
    po.devices = 2;
    po.workload.requests = 200;
    plan_ok(&m, &o, &roof, &po, p);
    assert_true(p->rows[0].meets);
    assert_int_equal(p->rows[0].layout.tp, 2);
    assert_true(p->rows[0].rate_per_s > 1);
    assert_true(p->rows[0].tpot_s <= po.slo_tpot_s);
    free(p);
    free(par);
}

/* Each bad planning input refused with a message naming it. */
static void planner_refusals(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_hw h = hw_of("h100-sxm");
    rf_sim_plan *p = calloc(1, sizeof *p);
    assert_non_null(p);
    rf_sim_plan_opts good = {
        .par = {.links = h.links, .util = 0.9, .mem_bytes = h.mem_bytes},
        .max_devices = 8,
        .workload = {.arrival = RF_SIM_POISSON,
                     .requests = 40,
                     .rate_per_s = 1,
                     .prompt = {.dist = RF_SIM_FIXED, .value = 512},
                     .output = {.dist = RF_SIM_FIXED, .value = 32}},
        .sched = {.max_batched_tokens = 4096, .max_seqs = 64, .chunk = 2048, .block_tokens = 16},
        .slo_ttft_s = 1,
        .slo_tpot_s = 0.05,
        .percentile = 99};
    rf_sim_plan_opts po;
    size_t bytes;
    rf_err e = {0};
#define REFUSED(field, value, text)                                                                \
    do {                                                                                           \
        po = good;                                                                                 \
        po.field = value;                                                                          \
        assert_int_equal(rf_sim_plan_work_bytes(&m, &po, p, &bytes, &e), RF_EINVAL);               \
        if (!strstr(e.msg, text))                                                                  \
            fail_msg("'%s' does not say '%s'", e.msg, text);                                       \
    } while (0)
    REFUSED(workload.rate_per_s, 0, "rate (0 requests/s) must be > 0");
    REFUSED(workload.rate_per_s, -2, "rate (-2 requests/s) must be > 0");
    REFUSED(slo_ttft_s, 0, "slo-ttft (0 s) must be > 0");
    REFUSED(slo_tpot_s, -1, "slo-tpot (-1 s) must be > 0");
    REFUSED(percentile, 0, "percentile (0) must be in (0, 100)");
    REFUSED(percentile, 100, "percentile (100) must be in (0, 100)");
    REFUSED(workload.arrival, RF_SIM_TRACE, "the workload must be open loop");
    good.workload.arrival = RF_SIM_CLOSED; /* a concurrency: (a) only, not disaggregated */
    good.workload.concurrency = 4;
    REFUSED(disagg, true, "with --devices or --disagg");
    REFUSED(devices, 2, "with --devices or --disagg");
    good.workload.arrival = RF_SIM_POISSON;
    po = good;
    po.workload.arrival = RF_SIM_GAMMA;
    po.workload.cv = -0.5;
    assert_int_equal(rf_sim_plan_work_bytes(&m, &po, p, &bytes, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "cv (-0.5) must be > 0"));
#undef REFUSED
    /* a percentile outside (0, 100) in a run's schedule as well */
    rf_sim_sched sc = good.sched;
    sc.pool_blocks = 100;
    sc.percentile = 100;
    assert_int_equal(rf_sim_workspace_bytes(&good.workload, &sc, 100, &bytes, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "percentile (100) must be in (0, 100)"));
    free(p);
}

/* Disaggregated by hand, on the step model of 10 ms a step plus 0.1 ms a
 * token. Two requests 10 s apart (a trace), P = 1000, N = 5, Llama-3-8B's
 * bf16 KV: 2 x 32 layers x 8 heads x 128 x 2 bytes = 131,072 bytes a
 * token, 131,072,000 for the prompt; over 50 GB/s and 5 us: 2.62144 ms +
 * 0.005 ms = 2.62644 ms. The prefill worker: one step of 1,000 tokens,
 * 110 ms. TTFT = 110 + 2.62644 = 112.62644 ms. The decode worker gets the
 * request with its 1,000 positions cached and decodes 4 tokens, 10.1 ms
 * each: TPOT 10.1 ms, E2E 112.62644 + 40.4 = 153.02644 ms. */
static void disagg_by_hand(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_sim_request tr[2] = {{0, 1000, 5}, {10, 1000, 5}};
    rf_sim_workload w = {.arrival = RF_SIM_TRACE, .trace = tr, .trace_len = 2};
    rf_sim_sched sc = {.max_batched_tokens = 2048,
                       .max_seqs = 8,
                       .chunk = 2048,
                       .block_tokens = 16,
                       .pool_blocks = 1000};
    rf_sim_disagg d = {.prefill_workers = 1,
                       .decode_workers = 1,
                       .prefill = sc,
                       .decode = sc,
                       .model = &m,
                       .kv = o.kv,
                       .link_bw_bytes_per_s = 50e9,
                       .link_latency_s = 5e-6,
                       .slo_ttft_s = 0.2,
                       .slo_tpot_s = 0.011,
                       .percentile = 99};
    rf_sim_disagg_result r;
    rf_err e = {0};
    size_t bytes = 0;
    assert_int_equal(rf_sim_disagg_workspace_bytes(&w, &d, 1024, &bytes, &e), RF_OK);
    void *work = malloc(bytes);
    assert_non_null(work);
    if (rf_sim_disagg_run(&w, &d, group_affine, NULL, group_affine, NULL, work, bytes, 1024, &r,
                          &e))
        fail_msg("disagg: %s", e.msg);
    near(r.transfer_bytes_mean, 131072000, 0);
    near(r.transfer_s.max, 0.00262644, 1e-12);
    near(r.ttft_s.p50, 0.11262644, 1e-12);
    near(r.ttft_s.max, 0.11262644, 1e-12);
    near(r.tpot_s.max, 0.0101, 1e-12);
    near(r.e2e_s.max, 0.15302644, 1e-12);
    near(r.duration_s, 10.15302644, 1e-12);
    assert_int_equal(r.good_requests, 2);
    assert_int_equal(r.decode.requests, 2);
    near(r.decode.ttft_s.max, 0, 0); /* its first token came with it */
    assert_int_equal(r.prefill.steps, 2);
    assert_int_equal(r.decode.steps, 8);
    /* 0:1 and 1:0 refused, naming them; a link of 0 B/s */
    d.prefill_workers = 0;
    assert_int_equal(rf_sim_disagg_workspace_bytes(&w, &d, 1024, &bytes, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "disagg 0:1: each side needs at least one worker"));
    d.prefill_workers = 1;
    d.decode_workers = 0;
    assert_int_equal(rf_sim_disagg_workspace_bytes(&w, &d, 1024, &bytes, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "disagg 1:0"));
    d.decode_workers = 1;
    d.link_bw_bytes_per_s = 0;
    assert_int_equal(rf_sim_disagg_workspace_bytes(&w, &d, 1024, &bytes, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "bandwidth (0 B/s) must be > 0"));
    free(work);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_step_is_par),     cmocka_unit_test(layout_mixed_is_serve_par),
        cmocka_unit_test(deepseek_layout_is_par), cmocka_unit_test(closed_one_is_generate_par),
        cmocka_unit_test(replicas_by_hand),       cmocka_unit_test(planner_by_hand),
        cmocka_unit_test(planner_refusals),       cmocka_unit_test(disagg_by_hand),
        cmocka_unit_test(layout_speculates),      cmocka_unit_test(layout_mla_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
