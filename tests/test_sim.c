/* test_sim.c - the scheduler simulated request by request (rf_sim.h): its
 * floor against the mixed step, the closed loop against generate, Little's
 * law, the low-rate limits, overload, determinism, the KV pool, refusals,
 * and a floor at or under a hand-derived MoE schedule.
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

#include <cmocka.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_reader.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"
#include "roofline/rf_step.h"
#include "sim_fixture.h"

#define GOLDEN_FIRST_GAP "0.31602793954435932"

/* The floor model over a heap table (large: off the stack). */
typedef struct floor_model {
    rf_sim_floor f;
    void *table;
} floor_model;

static floor_model *floor_new(const char *name, const rf_step_opts *o, int64_t tokens,
                              int64_t logits)
{
    floor_model *fm = calloc(1, sizeof *fm);
    assert_non_null(fm);
    rf_model m = model(name);
    rf_roof roof = roof_of("h100-sxm");
    size_t bytes = rf_sim_floor_table_bytes(tokens, logits);
    fm->table = malloc(bytes);
    assert_non_null(fm->table);
    rf_step_opts def = rf_step_opts_for_model(&m);
    rf_err e;
    rf_status s =
        rf_sim_floor_prepare(&fm->f, &m, o ? o : &def, &roof, tokens, logits, fm->table, bytes, &e);
    if (s)
        fail_msg("prepare: %s", e.msg);
    return fm;
}

static void floor_free(floor_model *fm)
{
    if (fm)
        free(fm->table);
    free(fm);
}

/* A run on one engine's step model fn (sim_run_ok). */
static void run_ok(const rf_sim_workload *w, const rf_sim_sched *sc, rf_sim_step_fn fn, void *user,
                   rf_sim_result *out)
{
    sim_run_ok(w, sc, fn, NULL, user, out);
}

/* A cheap step model for the scheduler's own tests: 10 ms a step plus
 * 0.01 ms a token plus 1 ns a decode key. */
static rf_status affine_step(void *user, const rf_sim_batch *b, double *step_s, rf_err *err)
{
    (void)user;
    (void)err;
    *step_s = 10e-3 + 1e-5 * (double)b->tokens + 1e-9 * (double)b->decode_context_sum;
    return RF_OK;
}

/* A roomy engine: nothing waits for blocks. */
static rf_sim_sched roomy(void)
{
    return (rf_sim_sched){.max_batched_tokens = 8192,
                          .max_seqs = 256,
                          .chunk = 8192,
                          .block_tokens = 16,
                          .pool_blocks = 1 << 20};
}

static rf_sim_lengths fixed(int64_t v)
{
    return (rf_sim_lengths){.dist = RF_SIM_FIXED, .value = v};
}

/* ---- the floor ------------------------------------------------------------ */

/* The floor of f on the mixed step mo (every decode token at S_d, n_c
 * equal chunks) equals rf_mixed_step_compute's to 1e-12. */
static void floor_is_mixed(rf_sim_floor *f, const rf_model *m, const rf_step_opts *o,
                           const rf_roof *roof, const rf_mixed_opts *mo)
{
    static rf_step st;
    assert_int_equal(rf_mixed_step_compute(m, o, roof, mo, &st, NULL), RF_OK);
    int64_t ctx[256];
    rf_sim_chunk ch[4];
    for (int64_t j = 0; j < mo->decode_batch; j++)
        ctx[j] = mo->decode_context;
    for (int64_t j = 0; j < mo->chunks; j++)
        ch[j] = (rf_sim_chunk){.tokens = mo->chunk, .offset = mo->chunk_context, .request = j};
    rf_sim_batch b = {.n_decode = mo->decode_batch,
                      .decode_context = ctx,
                      .decode_context_sum = mo->decode_batch * mo->decode_context,
                      .n_chunks = mo->chunks,
                      .chunks = ch,
                      .tokens = mo->decode_batch + mo->chunks * mo->chunk};
    double t = 0;
    rf_err e;
    if (rf_sim_floor_step(f, &b, &t, &e))
        fail_msg("%s: %s", m->name, e.msg);
    near(t, st.floor_s, 1e-12);
}

/* With every decode token at one context S_d and n_c chunks of C after S_c,
 * the floor is rf_mixed_step_compute's (to rounding: the same uint64
 * totals, so equal to 1e-12), on a dense model, a MoE model and a model
 * with sliding layers (its chunks by rf_step_compute), under both traffic
 * models, and with naive attention, an fp8 cache, causal and not, and
 * nvfp4 weights and activations (--quant nvfp4: activations with a scale a
 * 16, which the floor accepts since a sequence's queries cost the same at
 * every context); and decode tokens at contexts 3000 and 5000 cost what
 * two at 4000 do on a model without windows (attention is affine in the
 * keys). */
static void floor_matches_mixed_step(void **state)
{
    (void)state;
    static const char *const names[] = {"llama-3-8b", "mixtral-8x7b", "gemma-2-9b-it"};
    static const rf_mixed_opts mos[] = {
        {.decode_batch = 1, .decode_context = 100},
        {.decode_batch = 0, .chunk = 512, .chunk_context = 0, .chunks = 1},
        {.decode_batch = 37,
         .decode_context = 4000,
         .chunk = 256,
         .chunk_context = 1024,
         .chunks = 3},
        {.decode_batch = 200, .decode_context = 9000, .chunk = 1, .chunk_context = 77, .chunks = 2},
        {.decode_batch = 5,
         .decode_context = 5000,
         .chunk = 2000,
         .chunk_context = 6000,
         .chunks = 1},
    };
    rf_roof roof = roof_of("h100-sxm");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        for (int v = 0; v < 5; v++) {
            rf_model m = model(names[i]);
            rf_step_opts o = rf_step_opts_for_model(&m);
            o.traffic = v & 1 ? RF_TRAFFIC_FULL : RF_TRAFFIC_COMPULSORY;
            if (v == 2 || v == 3) { /* scores in memory, an fp8 cache, causal or not */
                o.naive_attn = true;
                o.kv = rf_dtype_of(RF_FP8_E4M3);
                o.causal = v == 3;
            }
            if (v == 4) /* nvfp4 weights and activations, scaled a 16 */
                o.w = o.a = rf_dtype_of(RF_NVFP4);
            floor_model *fm = floor_new(names[i], &o, 8192, 512);
            /* chunk attention in closed form unless the model has windows */
            assert_true(fm->f.chunk_poly == (i != 2));
            for (size_t k = 0; k < sizeof mos / sizeof mos[0]; k++)
                floor_is_mixed(&fm->f, &m, &o, &roof, &mos[k]);
            if (!i && !v) {
                int64_t two[2] = {4000, 4000}, apart[2] = {3000, 5000};
                rf_sim_batch a = {
                    .n_decode = 2, .decode_context = two, .decode_context_sum = 8000, .tokens = 2};
                rf_sim_batch c = a;
                c.decode_context = apart;
                double ta = 0, tc = 0;
                assert_int_equal(rf_sim_floor_step(&fm->f, &a, &ta, NULL), RF_OK);
                assert_int_equal(rf_sim_floor_step(&fm->f, &c, &tc, NULL), RF_OK);
                near(tc, ta, 1e-15);
            }
            floor_free(fm);
        }
    }
}

/* The 2025-26 families, read from their config.json (tests/data/models):
 * recurrent mixers (Gated DeltaNet, Mamba2), chunked attention, sliding
 * windows with sinks, local head shapes. Their decode and chunk parts come
 * from rf_step_compute (cached), and the floor is still the mixed step's:
 * B_d = 7 at S_d = 3,000 with 2 chunks of 512 after 1,024; decode alone at
 * 30,000; one chunk alone. */
static void floor_matches_mixed_new_families(void **state)
{
    (void)state;
    static const char *const names[] = {"qwen3-next-80b-a3b-thinking",
                                        "nemotron-3-nano-30b-a3b",
                                        "llama-4-scout-17b-16e-instruct",
                                        "mimo-v2-flash",
                                        "gpt-oss-20b",
                                        "gemma-3-4b-it",
                                        "qwen3.5-397b-a17b"};
    static const rf_mixed_opts mos[] = {
        {.decode_batch = 7,
         .decode_context = 3000,
         .chunk = 512,
         .chunk_context = 1024,
         .chunks = 2},
        {.decode_batch = 7, .decode_context = 30000},
        {.chunk = 512, .chunk_context = 0, .chunks = 1},
    };
    rf_roof roof = roof_of("h100-sxm");
    static rf_model m;
    static rf_sim_floor f;
    size_t bytes = rf_sim_floor_table_bytes(4096, 64);
    void *table = malloc(bytes);
    assert_non_null(table);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        rf_err e;
        snprintf(path, sizeof path, "%s/%s.json", RF_MODELS_DIR, names[i]);
        if (rf_model_load(path, &m, &e))
            fail_msg("%s", e.msg);
        rf_step_opts o = rf_step_opts_for_model(&m);
        if (rf_sim_floor_prepare(&f, &m, &o, &roof, 4096, 64, table, bytes, &e))
            fail_msg("%s: %s", names[i], e.msg);
        for (size_t k = 0; k < sizeof mos / sizeof mos[0]; k++)
            floor_is_mixed(&f, &m, &o, &roof, &mos[k]);
    }
    free(table);
}

/* ---- whole runs on the floor ---------------------------------------------- */

/* Run w on the floor of Llama-3-8B on an H100 (a roomy engine) beside
 * generate's request of 512 + 128 tokens alone (B = 1). */
static void on_llama(const rf_sim_workload *w, rf_generate *g, rf_sim_result *r)
{
    rf_model m = model("llama-3-8b");
    rf_roof roof = roof_of("h100-sxm");
    rf_step_opts o = rf_step_opts_for_model(&m);
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 512, 128, g, NULL), RF_OK);
    floor_model *fm = floor_new("llama-3-8b", NULL, 8192, 256);
    rf_sim_sched sc = roomy();
    run_ok(w, &sc, rf_sim_floor_step, &fm->f, r);
    floor_free(fm);
}

/* Closed loop at concurrency 1 is generate: each request runs alone, its
 * prompt in one step (chunk and budget above P = 512) that is generate's
 * prefill step (B = 1, P tokens: linear layers at M = 512, lm_head on one
 * row), then N - 1 = 127 decode steps of one sequence at S = P + 1 ..
 * P + N - 1, generate's decode sum. So every request's TTFT is generate's
 * ttft_s, its E2E generate's latency_s and its TPOT generate's tpot_mean_s
 * (to the rounding of generate's closed-form series: 1e-9). */
static void closed_one_is_generate(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 3,
                         .concurrency = 1,
                         .prompt = fixed(512),
                         .output = fixed(128)};
    rf_generate g;
    rf_sim_result r;
    on_llama(&w, &g, &r);
    assert_int_equal(r.steps, 3 * 128);
    near(r.ttft_s.max, g.ttft_s, 1e-9);
    near(r.ttft_s.p50, g.ttft_s, 1e-9);
    near(r.e2e_s.mean, g.latency_s, 1e-9);
    near(r.e2e_s.max, g.latency_s, 1e-9);
    near(r.tpot_s.mean, g.tpot_mean_s, 1e-9);
    near(r.queue_s.max + 1, 1, 1e-15); /* never queued */
    near(r.duration_s, 3 * g.latency_s, 1e-9);
    assert_int_equal(r.itl_s.n, 3 * 127);
    near(r.itl_s.mean, g.tpot_mean_s, 1e-9);
}

/* At a low rate requests almost never overlap: 400 Poisson arrivals a
 * mean 100 s apart, each busy about 0.6 s (128 tokens of ~5 ms), so about
 * 0.6% of them meet another. A request alone has TTFT = the prefill step
 * (generate's ttft_s) and TPOT = the batch-1 decode (tpot_mean_s); the
 * medians are those exactly, the means within 1%. */
static void low_rate_limits(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_POISSON,
                         .requests = 400,
                         .rate_per_s = 0.01,
                         .prompt = fixed(512),
                         .output = fixed(128),
                         .seed = 7};
    rf_generate g;
    rf_sim_result r;
    on_llama(&w, &g, &r);
    near(r.ttft_s.p50, g.ttft_s, 1e-9);
    near(r.ttft_s.mean, g.ttft_s, 0.01);
    near(r.tpot_s.p50, g.tpot_mean_s, 1e-9);
    near(r.tpot_s.mean, g.tpot_mean_s, 0.01);
    assert_false(r.overloaded);
}

/* Floors stay floors on MoE: Mixtral-8x7B (top-2 of E = 8), closed loop at
 * C = 2, P = 512, N = 64. Derived by hand, the engine's schedule is a
 * static batch of 2 over and over: both requests arrive at 0, step 1
 * prefills both prompts (2 chunks of 512 at offset 0: M = 1024, lm_head on
 * 2 rows, generate's prefill of B = 2), then 63 decode steps of 2 sequences
 * at S = 513 .. 575; both end together and both clients send again at once.
 * So every E2E is rf_generate_compute's latency at B = 2 and every TPOT its
 * tpot_mean_s, each decode step touching the experts of its own M = 2
 * tokens: 8 (1 - (1 - 2/8)^2) = 3.5 a MoE layer. The steady state
 * (rf_serve_compute at concurrency 2) spreads the prompts over every step,
 * M = 2 + ceil(2 x 512 / 64) = 18 tokens: 8 (1 - 0.75^18) = 7.96 experts,
 * so its TPOT floor is above this real schedule's; the simulator's is at it
 * (equal to 1e-9), so at or under. */
static void moe_floor_under_real_schedule(void **state)
{
    (void)state;
    rf_model m = model("mixtral-8x7b");
    rf_roof roof = roof_of("h100-sxm");
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.batch = 2;
    rf_generate g;
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 512, 64, &g, NULL), RF_OK);
    rf_serve sv;
    rf_serve_opts so = {.concurrency = 2, .prompt = 512, .output = 64, .chunk = 512};
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    floor_model *fm = floor_new("mixtral-8x7b", NULL, 8192, 256);
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 6,
                         .concurrency = 2,
                         .prompt = fixed(512),
                         .output = fixed(64)};
    rf_sim_sched sc = roomy();
    rf_sim_result r;
    run_ok(&w, &sc, rf_sim_floor_step, &fm->f, &r);
    assert_int_equal(r.steps, 3 * 64);
    near(r.e2e_s.max, g.latency_s, 1e-9);
    near(r.e2e_s.p50, g.latency_s, 1e-9);
    near(r.tpot_s.max, g.tpot_mean_s, 1e-9);
    assert_true(r.tpot_s.max <= g.tpot_mean_s * (1 + 1e-12));
    assert_true(sv.tpot_s > 1.2 * r.tpot_s.max); /* the steady state's overcount */
    floor_free(fm);
}

/* ---- the scheduler on a cheap step model ------------------------------------ */

/* Little's law: the time-average number in system (integrated event by
 * event) equals throughput x mean E2E, to 1%, over 20,000 Poisson
 * arrivals with lognormal lengths at about half the capacity. */
static void littles_law(void **state)
{
    (void)state;
    rf_sim_workload w = {
        .arrival = RF_SIM_POISSON,
        .requests = 20000,
        .rate_per_s = 40,
        .prompt = {.dist = RF_SIM_LOGNORMAL, .lo = 1, .hi = 8000, .mean = 600, .sd = 400},
        .output = {.dist = RF_SIM_LOGNORMAL, .lo = 1, .hi = 2000, .mean = 150, .sd = 100},
        .seed = 11};
    rf_sim_sched sc = roomy();
    sc.chunk = 512;
    sc.max_batched_tokens = 2048;
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    assert_false(r.overloaded);
    assert_true(r.in_system_mean > 5); /* a real queue, not an idle engine */
    near(r.in_system_mean, r.requests_per_s * r.e2e_s.mean, 0.01);
}

/* The engine of the overload tests: 64 sequences, a step of 4,096 tokens,
 * chunks of 1,024, the pool roomy. */
static rf_sim_sched capped(void)
{
    rf_sim_sched sc = roomy();
    sc.max_seqs = 64;
    sc.max_batched_tokens = 4096;
    sc.chunk = 1024;
    return sc;
}

/* Capacity from the closed loop at a concurrency far above max_seqs, then
 * the open loop at twice it is flagged and at half it is not. */
static void overload_flagged(void **state)
{
    (void)state;
    rf_sim_sched sc = capped();
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 4000,
                         .concurrency = 512,
                         .prompt = fixed(1000),
                         .output = fixed(100),
                         .seed = 3};
    rf_sim_result cap, over, under;
    run_ok(&w, &sc, affine_step, NULL, &cap);
    assert_false(cap.overloaded);
    w.arrival = RF_SIM_POISSON;
    w.rate_per_s = 2 * cap.requests_per_s;
    run_ok(&w, &sc, affine_step, NULL, &over);
    assert_true(over.overloaded);
    near(over.queue_growth_per_s, w.rate_per_s - cap.requests_per_s, 0.25);
    w.rate_per_s = 0.5 * cap.requests_per_s;
    run_ok(&w, &sc, affine_step, NULL, &under);
    assert_false(under.overloaded);
    /* gamma with cv 3 at the same rate: bursts, still stable, worse P99 */
    w.arrival = RF_SIM_GAMMA;
    w.cv = 3;
    rf_sim_result burst;
    run_ok(&w, &sc, affine_step, NULL, &burst);
    assert_false(burst.overloaded);
    assert_true(burst.ttft_s.p99 > under.ttft_s.p99);
}

/* A flat step model: 10 ms a step whatever it holds. */
static rf_status flat_step(void *user, const rf_sim_batch *b, double *step_s, rf_err *err)
{
    (void)user;
    (void)b;
    (void)err;
    *step_s = 10e-3;
    return RF_OK;
}

/* Overload in a short run (500 requests, as the curve under load runs
 * each rate). Derived by hand on 10 ms steps: a request of a 1,000-token
 * prompt (one chunk) and 100 output tokens holds a sequence slot for 100
 * steps (the prefill step samples the first token, 99 decode steps the
 * rest); at max_seqs 64 the engine finishes at most 64 / (100 x 10 ms) =
 * 64 requests/s (the budget of 4,096 tokens admits 3 prompts a step beside
 * the decodes, above the 0.64 a step that 64/s brings). At 0.8 x 64 the run
 * starts from an empty engine, so the number in system climbs for about a
 * request's 1 s life before it levels: not overload, and not flagged. At
 * 1.25 x 64 = 80/s the queue grows by 80 - 64 = 16 requests/s once the 64
 * slots fill: flagged, the growth 16 within 10 (two standard deviations:
 * the second half's 250 Poisson arrivals over its 3.1 s are known to
 * sqrt(250) / 3.1 s = 5 requests/s). Five seeds each. */
static void overload_short_run(void **state)
{
    (void)state;
    rf_sim_sched sc = capped();
    rf_sim_workload w = {.arrival = RF_SIM_POISSON,
                         .requests = 500,
                         .rate_per_s = 0.8 * 64,
                         .prompt = fixed(1000),
                         .output = fixed(100)};
    for (uint64_t seed = 1; seed <= 5; seed++) {
        w.seed = seed;
        rf_sim_result under, over;
        w.rate_per_s = 0.8 * 64;
        run_ok(&w, &sc, flat_step, NULL, &under);
        assert_false(under.overloaded);
        w.rate_per_s = 1.25 * 64;
        run_ok(&w, &sc, flat_step, NULL, &over);
        assert_true(over.overloaded);
        assert_true(fabs(over.queue_growth_per_s - 16) < 10);
        assert_true(over.requests_per_s <= 64 * (1 + 1e-9));
    }
}

/* The same seed gives the same bytes; another seed other arrivals. The
 * first Poisson gap of seed 1 at rate 1 is -ln(u), u from xoshiro256**
 * seeded by splitmix64: pinned to the last digit, so a platform whose
 * arithmetic differs is caught. */
static void same_seed_same_bytes(void **state)
{
    (void)state;
    rf_sim_workload w = {
        .arrival = RF_SIM_GAMMA,
        .requests = 3000,
        .rate_per_s = 30,
        .cv = 2,
        .prompt = {.dist = RF_SIM_NORMAL, .lo = 1, .hi = 4000, .mean = 1000, .sd = 300},
        .output = {.dist = RF_SIM_UNIFORM, .lo = 10, .hi = 300},
        .seed = 42};
    rf_sim_sched sc = roomy();
    sc.chunk = 256;
    sc.pool_blocks = 4000;
    rf_sim_result a, b, c;
    memset(&a, 0, sizeof a);
    memset(&b, 0xff, sizeof b);
    run_ok(&w, &sc, affine_step, NULL, &a);
    run_ok(&w, &sc, affine_step, NULL, &b);
    assert_memory_equal(&a, &b, sizeof a);
    w.seed = 43;
    run_ok(&w, &sc, affine_step, NULL, &c);
    assert_true(c.e2e_s.mean != a.e2e_s.mean);
    rf_sim_workload p = {.arrival = RF_SIM_POISSON,
                         .requests = 1,
                         .rate_per_s = 1,
                         .prompt = fixed(1),
                         .output = fixed(1),
                         .seed = 1};
    rf_sim_result q;
    run_ok(&p, &sc, affine_step, NULL, &q);
    char got[64];
    snprintf(got, sizeof got, "%.17g", q.duration_s - q.e2e_s.max);
    assert_string_equal(got, GOLDEN_FIRST_GAP);
}

/* A pool of 400 blocks of 16 tokens (6,400 positions) and 64 requests of
 * 1,000 + 500 tokens at once: 64 x 1,500 = 96,000 positions do not fit, so
 * decodes run out of blocks and preempt. Every request still finishes, the
 * blocks held never pass the pool, and recomputed tokens are counted.
 * Preemption off: each request reserves ceil(1,499 / 16) = 94 blocks on
 * admission, so at most 4 run (376 blocks), none is preempted, and the
 * peak is at most 4 x 94. */
static void kv_within_pool(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 200,
                         .concurrency = 64,
                         .prompt = fixed(1000),
                         .output = fixed(500)};
    rf_sim_sched sc = roomy();
    sc.pool_blocks = 400;
    sc.chunk = 512;
    sc.max_batched_tokens = 2048;
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    assert_int_equal(r.requests, 200);
    assert_true(r.preemptions > 0);
    assert_true(r.recompute_tokens > 0);
    assert_true(r.kv_peak_blocks <= 400);
    assert_true(r.kv_util_mean > 0.5 && r.kv_util_mean <= 1);
    sc.no_preempt = true;
    run_ok(&w, &sc, affine_step, NULL, &r);
    assert_int_equal(r.preemptions, 0);
    assert_int_equal(r.recompute_tokens, 0);
    assert_true(r.kv_peak_blocks <= 4 * 94);
    assert_int_equal(r.peak_running, 4);
}

/* A shared prefix of 1,000 tokens (62 whole blocks of 16 = 992 hit): each
 * request prefills 1,024 - 992 = 32 tokens, so alone its TTFT is one step
 * of 32 tokens: 10 ms + 32 x 0.01 ms = 10.32 ms. */
static void prefix_hits(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 5,
                         .concurrency = 1,
                         .prompt = fixed(1024),
                         .output = fixed(2)};
    rf_sim_sched sc = roomy();
    sc.shared_prefix = 1000;
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    near(r.ttft_s.max, 10e-3 + 32 * 1e-5, 1e-12);
    assert_int_equal(r.prefix_blocks, 62);
}

static void expect_refusal(const rf_sim_workload *w, const rf_sim_sched *sc, const char *text)
{
    rf_err e = {0};
    rf_sim_result r;
    assert_int_equal(sim_run(w, sc, affine_step, NULL, NULL, &r, &e), RF_EINVAL);
    if (!strstr(e.msg, text))
        fail_msg("\"%s\" does not say \"%s\"", e.msg, text);
}

/* Refusals name the input: a request whose whole life cannot fit the pool
 * (1,000 + 8,000 - 1 positions need 563 blocks of 16; the pool has 500),
 * with preemption off and on; a rate of 0; a negative cv; a trace going
 * back in time; a length below 1; a prompt over the budget unchunked. */
static void refusals(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 4,
                         .concurrency = 2,
                         .prompt = fixed(1000),
                         .output = fixed(8000)};
    rf_sim_sched sc = roomy();
    sc.pool_blocks = 500;
    sc.no_preempt = true;
    expect_refusal(&w, &sc,
                   "need 563 blocks of 16 tokens; the pool has 500 (0 of them for "
                   "the shared prefix) and preemption is off");
    sc.no_preempt = false;
    expect_refusal(&w, &sc, "request 0: prompt 1000 + output 8000 - 1 positions need 563");
    sc = roomy();
    w.output = fixed(10);
    w.arrival = RF_SIM_POISSON;
    w.rate_per_s = 0;
    expect_refusal(&w, &sc, "rate (0 requests/s) must be > 0");
    w.arrival = RF_SIM_GAMMA;
    w.rate_per_s = 1;
    w.cv = -1;
    expect_refusal(&w, &sc, "cv (-1) must be > 0");
    rf_sim_request tr[3] = {{0, 10, 10}, {2, 10, 10}, {1, 10, 10}};
    rf_sim_workload t = {.arrival = RF_SIM_TRACE, .trace = tr, .trace_len = 3};
    expect_refusal(&t, &sc, "request 2 arrives at 1 s, before request 1 (2 s)");
    tr[2] = (rf_sim_request){3, -5, 10};
    expect_refusal(&t, &sc, "request 2 has prompt -5");
    w.arrival = RF_SIM_CLOSED;
    w.concurrency = 1;
    w.prompt = fixed(10000);
    sc.chunk = 0;
    expect_refusal(&w, &sc, "pass max-batched-tokens (8192) and chunking is off");
    sc = roomy();
    sc.max_batched_tokens = 100;
    expect_refusal(&w, &sc, "max-batched-tokens (100) must be in [max-seqs (256)");
}

/* A trace: two requests 1 s apart on an idle engine each run alone: E2E =
 * a prefill step of 100 tokens (10 ms + 1 ms) plus 9 decode steps at
 * S = 101 .. 109 (10 ms + 0.01 ms + S ns each). */
static void trace_alone(void **state)
{
    (void)state;
    rf_sim_request tr[2] = {{0.5, 100, 10}, {1.5, 100, 10}};
    rf_sim_workload w = {.arrival = RF_SIM_TRACE, .trace = tr, .trace_len = 2};
    rf_sim_sched sc = roomy();
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    double dec = 9 * (10e-3 + 1e-5) + 1e-9 * (101 + 109) * 9 / 2;
    near(r.e2e_s.max, 11e-3 + dec, 1e-12);
    near(r.duration_s, 1.5 + 11e-3 + dec, 1e-12);
    near(r.tpot_s.max, dec / 9, 1e-12);
}

/* Length distributions: over 20,000 draws the uniform [100, 300] mean is
 * 200 (its standard error 57.7 / sqrt(20,000) = 0.41 tokens, 0.2%) and
 * the lognormal of mean 100 and sd 50 has mean 100 (standard error 0.35%;
 * to 2%; the truncation at [1, 100,000] removes almost nothing). The
 * output has the spread relative to its mean of a real one (sd / mean
 * 0.5) at a tenth of the decode steps of mean 1,000, which took 70% of
 * this test's time (29 s under valgrind). */
static void length_means(void **state)
{
    (void)state;
    rf_sim_workload w = {
        .arrival = RF_SIM_POISSON,
        .requests = 20000,
        .rate_per_s = 1,
        .prompt = {.dist = RF_SIM_UNIFORM, .lo = 100, .hi = 300},
        .output = {.dist = RF_SIM_LOGNORMAL, .lo = 1, .hi = 100000, .mean = 100, .sd = 50},
        .seed = 5};
    rf_sim_sched sc = roomy();
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    near((double)r.prompt_tokens / 20000, 200, 0.01);
    near((double)r.output_tokens / 20000, 100, 0.02);
}

/* Nearest rank: of 1..10, P50 is the 5th, P90 the 9th, P99 the 10th; of
 * 1..200, P99 is the 198th. */
static void percentiles(void **state)
{
    (void)state;
    double v[200];
    for (int i = 0; i < 200; i++)
        v[i] = i + 1;
    assert_true(rf_sim_percentile(v, 10, 50) == 5);
    assert_true(rf_sim_percentile(v, 10, 90) == 9);
    assert_true(rf_sim_percentile(v, 10, 99) == 10);
    assert_true(rf_sim_percentile(v, 200, 99) == 198);
    assert_true(rf_sim_percentile(v, 1, 50) == 1);
}

/* Queueing is in TTFT: max_seqs 1 and two clients; each request of
 * 100 + 10 tokens alone takes E = 11 ms (its prefill: 10 ms + 100 x
 * 0.01 ms) + 9 decode steps at S = 101..109 (9 x 10.01 ms + 945 ns), and
 * the second waits for the first: its queue delay is E and its TTFT
 * E + 11 ms (the nearest-rank P99 of two values is the larger). */
static void queueing_in_ttft(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 2,
                         .concurrency = 2,
                         .prompt = fixed(100),
                         .output = fixed(10)};
    rf_sim_sched sc = roomy();
    sc.max_seqs = 1;
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    double e = 11e-3 + 9 * 10.01e-3 + 945e-9;
    near(r.queue_s.p99, e, 1e-12);
    assert_true(r.queue_s.p50 == 0); /* the first request never waits */
    near(r.ttft_s.p99, e + 11e-3, 1e-12);
    near(r.duration_s, 2 * e, 1e-12);
}

/* The three schedules by hand (rf_sim.h, rf_sim_policy). Two clients send
 * a request of 100 + 3 tokens together at 0, on a step of 100 tokens (and
 * chunks of 100, 2 sequences), each step 10 ms + 0.01 ms a token + 1 ns a decode key
 * (affine_step). A is admitted first; its prefill fills step 1 alone:
 * 10 + 100 x 0.01 = 11 ms, its first token at 11 ms in every schedule.
 * Mixed (vLLM):
 *   2: A decodes at 101, B's chunk of 99 (the budget left): 10 + 1.00 ms
 *      + 101 ns, ends 22.000101 ms;
 *   3: A at 102 (its last), B's last prompt token: 10.02 ms + 102 ns,
 *      ends 32.020203 ms; B's first token: TTFT 32.020203 ms;
 *   4, 5: B alone at 101, 102: 10.01 ms + 101 ns, 10.01 ms + 102 ns, ends
 *      52.040406 ms.
 * Prefill-first (SGLang): B waits, so step 2 is its whole prefill, A
 *   paused: 11 ms, ends 22 ms (B's TTFT); 3: both decode at 101: 10.02 ms +
 *   202 ns, ends 32.020202 ms; 4: both at 102: 10.02 ms + 204 ns, ends
 *   42.040406 ms: both done. A's TPOT (42.040406 - 11) / 2 = 15.520203 ms.
 * Unchunked (TensorRT-LLM: chunk 0): B's 100 tokens never fit beside A's
 *   decode (99 left), so A decodes alone at 101, 102: ends 21.010101 and
 *   31.020203 ms; 4: B's prefill, 11 ms, ends 42.020203 ms (its TTFT);
 *   5, 6: B at 101, 102, ends 62.040406 ms. */
static void schedules_by_hand(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 2,
                         .concurrency = 2,
                         .prompt = fixed(100),
                         .output = fixed(3)};
    rf_sim_sched sc = roomy();
    sc.max_batched_tokens = sc.chunk = 100;
    sc.max_seqs = 2;
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    near(r.ttft_s.max, 32.020203e-3, 1e-12);
    near(r.ttft_s.mean, (11e-3 + 32.020203e-3) / 2, 1e-12);
    near(r.tpot_s.max, (32.020203e-3 - 11e-3) / 2, 1e-12);
    near(r.duration_s, 52.040406e-3, 1e-12);
    sc.policy = RF_SIM_PREFILL_FIRST;
    run_ok(&w, &sc, affine_step, NULL, &r);
    near(r.ttft_s.max, 22e-3, 1e-12);
    near(r.ttft_s.mean, (11e-3 + 22e-3) / 2, 1e-12);
    near(r.tpot_s.max, (42.040406e-3 - 11e-3) / 2, 1e-12);
    near(r.duration_s, 42.040406e-3, 1e-12);
    assert_int_equal(r.steps, 4);
    sc.policy = RF_SIM_MIXED;
    sc.chunk = 0;
    run_ok(&w, &sc, affine_step, NULL, &r);
    near(r.ttft_s.max, 42.020203e-3, 1e-12);
    near(r.tpot_s.max, (31.020203e-3 - 11e-3) / 2, 1e-12);
    near(r.duration_s, 62.040406e-3, 1e-12);
    sc.policy = (rf_sim_policy)2;
    expect_refusal(&w, &sc, "policy (2)");
}

/* The front end's latency: one client, two requests of 100 + 1 tokens, a
 * request reaching the queue 5 ms after it is sent. Each is sent, waits
 * 5 ms, prefills in 11 ms (affine_step: 10 + 100 x 0.01 ms) and is done
 * with its one token: TTFT 16 ms each, the second sent at 16 ms, the run
 * over at 32 ms. A negative latency is refused. */
static void frontend_latency(void **state)
{
    (void)state;
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 2,
                         .concurrency = 1,
                         .prompt = fixed(100),
                         .output = fixed(1)};
    rf_sim_sched sc = roomy();
    sc.frontend_s = 5e-3;
    rf_sim_result r;
    run_ok(&w, &sc, affine_step, NULL, &r);
    near(r.ttft_s.mean, 16e-3, 1e-15);
    near(r.ttft_s.max, 16e-3, 1e-15);
    near(r.queue_s.max, 5e-3, 1e-15);
    near(r.duration_s, 32e-3, 1e-15);
    sc.frontend_s = -1e-3;
    expect_refusal(&w, &sc, "frontend latency");
}

/* The pool from memory is capacity's: floor(tokens / b) blocks. A floor
 * table too small for the sizes asked is refused with both sizes. */
static void pool_and_floor_refusal(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_hw h;
    assert_int_equal(rf_hw_preset("h100-sxm", &h, NULL), RF_OK);
    rf_capacity c;
    assert_int_equal(rf_capacity_compute(&m, &o, h.mem_bytes, 0.9, 0, 0, &c, NULL), RF_OK);
    int64_t blocks = 0;
    assert_int_equal(rf_sim_pool_blocks(&m, &o, h.mem_bytes, 0.9, 0, 16, &blocks, NULL), RF_OK);
    assert_int_equal(blocks, (int64_t)(c.tokens / 16));
    rf_err e = {0};
    /* 1 GiB under 16 GB of weights: an error naming it, no negative pool */
    assert_int_equal(rf_sim_pool_blocks(&m, &o, 1 << 30, 0.9, 0, 16, &blocks, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "do not fit the memory the engine may use"));
    assert_null(strstr(e.msg, "leave -"));
    /* the weights plus 1 MB at util 1: fewer positions than a block of 16
     * (a position is 128 KiB: 32 layers x 8 KV heads x 128 x 2 x 2 bytes) */
    assert_int_equal(
        rf_sim_pool_blocks(&m, &o, c.resident_bytes + 1000000, 1.0, 0, 16, &blocks, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "less than one KV block"));
    static rf_sim_floor f;
    static rf_sim_floor_entry table[300];
    rf_roof roof = roof_of("h100-sxm");
    assert_int_equal(rf_sim_floor_prepare(&f, &m, &o, &roof, 256, 16, table, sizeof table, &e),
                     RF_EINVAL);
    assert_non_null(strstr(e.msg, "the floor's table has"));
}

/* MLA mixed steps (DeepSeek-V2-Lite: kv_lora_rank 512, rope 64), every
 * expert streamed (RF_MOE_ALL, so the weights a step reads do not depend
 * on its tokens). A batch of B_d = 6 decode tokens at S = 3000 and one
 * chunk of t = 700 after o = 2048 is, as rf_step_compute counts MLA,
 *   FLOPs: every operator but attention and kv_b_proj is linear in its
 *     rows with no constant (2 M K N GEMMs, M k routed pairs, one lm_head
 *     row a sequence or chunk), kv_b_proj runs B_d + (o + t) rows (the
 *     decode step's B_d absorbed rows, the prefill's B (s + T) expanded),
 *     the decode attention is the decode step's and the chunk's the
 *     prefill's: F = F_decode(6, 3000) + F_prefill(1 x 700 after 2048);
 *   bytes (compulsory): the weights once and each attention's latent read,
 *     Q = Q_decode + Q_prefill - W.
 * A roof with bandwidth 1e30 B/s gives the step F / pi, one with a peak
 * of 1e30 FLOP/s Q / beta. */
static void mla_mixed_step(void **state)
{
    (void)state;
    rf_model m = model("deepseek-v2-lite");
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.moe = RF_MOE_ALL;
    rf_roof h = roof_of("h100-sxm"), fast_bw = h, fast_pi = h;
    fast_bw.bw_bytes_per_s = 1e30;
    fast_pi.peak_flops_per_s = 1e30;
    rf_step dec, pre;
    rf_step_opts d = o, p = o;
    d.batch = 6;
    d.context = 3000;
    p.phase = RF_PREFILL;
    p.tokens = 700;
    p.context = 2048;
    assert_int_equal(rf_step_compute(&m, &d, &h, &dec, NULL), RF_OK);
    assert_int_equal(rf_step_compute(&m, &p, &h, &pre, NULL), RF_OK);
    assert_true(dec.weight_bytes == pre.weight_bytes);
    int64_t ctx[6] = {3000, 3000, 3000, 3000, 3000, 3000};
    rf_sim_chunk ch = {.tokens = 700, .offset = 2048};
    rf_sim_batch b = {.n_decode = 6,
                      .decode_context = ctx,
                      .decode_context_sum = 18000,
                      .n_chunks = 1,
                      .chunks = &ch,
                      .tokens = 706};
    static rf_sim_floor f;
    size_t bytes = rf_sim_floor_table_bytes(1024, 64);
    void *table = malloc(bytes);
    assert_non_null(table);
    const rf_roof *roofs[2] = {&fast_bw, &fast_pi};
    double want[2] = {(double)(dec.flops + pre.flops) / h.peak_flops_per_s,
                      (double)(dec.total_bytes + pre.total_bytes - dec.weight_bytes) /
                          h.bw_bytes_per_s};
    for (int i = 0; i < 2; i++) {
        rf_err e = {0};
        double t = 0;
        if (rf_sim_floor_prepare(&f, &m, &o, roofs[i], 1024, 64, table, bytes, &e))
            fail_msg("prepare: %s", e.msg);
        assert_int_equal(rf_sim_floor_step(&f, &b, &t, &e), RF_OK);
        near(t, want[i], 1e-12);
        /* a decode step alone and a chunk alone are rf_step_compute's */
        rf_sim_batch only_dec = b, only_chunk = b;
        only_dec.n_chunks = 0;
        only_dec.tokens = 6;
        only_chunk.n_decode = 0;
        only_chunk.decode_context_sum = 0;
        only_chunk.tokens = 700;
        assert_int_equal(rf_sim_floor_step(&f, &only_dec, &t, &e), RF_OK);
        near(t,
             i ? (double)dec.total_bytes / h.bw_bytes_per_s
               : (double)dec.flops / h.peak_flops_per_s,
             1e-12);
        assert_int_equal(rf_sim_floor_step(&f, &only_chunk, &t, &e), RF_OK);
        near(t,
             i ? (double)pre.total_bytes / h.bw_bytes_per_s
               : (double)pre.flops / h.peak_flops_per_s,
             1e-12);
    }
    free(table);
}

/* A run on a model with sliding layers (Gemma-2-9B: its chunks through
 * rf_step_compute, its decode keys capped at the 4,096 window per
 * sequence) completes, and a longer prompt costs more TTFT. */
static void sliding_model_runs(void **state)
{
    (void)state;
    floor_model *fm = floor_new("gemma-2-9b-it", NULL, 8192, 256);
    rf_sim_workload w = {.arrival = RF_SIM_POISSON,
                         .requests = 200,
                         .rate_per_s = 4,
                         .prompt = {.dist = RF_SIM_UNIFORM, .lo = 1000, .hi = 7000},
                         .output = fixed(64),
                         .seed = 9};
    rf_sim_sched sc = roomy();
    sc.chunk = 1024;
    rf_sim_result r;
    run_ok(&w, &sc, rf_sim_floor_step, &fm->f, &r);
    assert_int_equal(r.requests, 200);
    assert_true(r.ttft_s.p99 > r.ttft_s.p50 && r.tpot_s.p50 > 0);
    floor_free(fm);
}

static rf_status affine_draft(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                              rf_err *err);

/* Invariants over 300 random engines and workloads (small pools, with and
 * without chunking, prefix hits, preemption on and off, every arrival
 * kind, a third of them speculating): every request ends; the blocks held
 * never pass the pool; one ITL value a token after the first (sum of
 * N_r - 1), a burst of a + 1 speculated tokens one value (so the values
 * and the proposals accepted sum to it); queue <= TTFT <= E2E;
 * no preemption when it is off; Little's law to rounding (the run starts
 * and ends empty, so the time average in system is exactly the sum of the
 * E2Es over the duration). Refusals are allowed (a request too large for a
 * small pool) but must name a request or an input. */
static void invariants_hold(void **state)
{
    (void)state;
    uint64_t x = 12345;
    int ran = 0, preempting = 0, speculating = 0;
    for (int i = 0; i < 300; i++) {
#define NEXT(mod)                                                                                  \
    ((x = x * 6364136223846793005u + 1442695040888963407u), (int64_t)((x >> 33) % (mod)))
        rf_sim_sched sc = {
            .max_seqs = 1 + NEXT(64), .block_tokens = 1 + NEXT(32), .no_preempt = NEXT(3) == 0};
        sc.max_batched_tokens = sc.max_seqs + NEXT(4096);
        sc.chunk = NEXT(4) == 0 ? 0 : 1 + NEXT(1024);
        sc.pool_blocks = 1 + NEXT(4000);
        sc.shared_prefix = NEXT(3) == 0 ? NEXT(600) : 0;
        rf_sim_workload w = {.arrival = (rf_sim_arrival)NEXT(3),
                             .requests = 1 + NEXT(300),
                             .concurrency = 1 + NEXT(100),
                             .rate_per_s = 0.5 + NEXT(200),
                             .cv = 0.25 + 0.25 * (double)NEXT(12),
                             .seed = (uint64_t)i,
                             .prompt = {.dist = RF_SIM_UNIFORM, .lo = 1, .hi = 1 + NEXT(2000)},
                             .output = {.dist = RF_SIM_LOGNORMAL, .lo = 1}};
        w.output.mean = (double)(1 + NEXT(200));
        w.output.sd = (double)NEXT((int64_t)w.output.mean);
        w.output.hi = 4 * (int64_t)w.output.mean + 10; /* most draws land */
        if (NEXT(3) == 0) {
            sc.spec_k = 1 + NEXT(6);
            sc.spec_accept = (double)NEXT(11) / 10;
            sc.draft = affine_draft;
        }
#undef NEXT
        rf_sim_result r;
        rf_err e = {0};
        rf_status s = sim_run(&w, &sc, affine_step, NULL, NULL, &r, &e);
        if (s == RF_EINVAL && (strstr(e.msg, "request ") || strstr(e.msg, "shared-prefix")))
            continue;
        if (s)
            fail_msg("case %d: %s", i, e.msg);
        ran++;
        assert_int_equal(r.requests, w.requests);
        assert_true(r.kv_peak_blocks <= sc.pool_blocks);
        assert_int_equal(r.itl_s.n + r.spec_accepted, r.output_tokens - r.requests);
        assert_true(r.queue_s.max <= r.ttft_s.max && r.ttft_s.max <= r.e2e_s.max);
        assert_true(r.queue_s.mean <= r.ttft_s.mean && r.ttft_s.mean <= r.e2e_s.mean);
        if (sc.no_preempt)
            assert_int_equal(r.preemptions, 0);
        near(r.in_system_mean, r.requests_per_s * r.e2e_s.mean, 1e-9);
        assert_true(r.peak_running <= sc.max_seqs);
        preempting += r.preemptions > 0;
        speculating += r.spec_accepted > 0;
    }
    print_message("invariants: %d runs, %d of them preempting, %d accepting proposals\n", ran,
                  preempting, speculating);
    assert_true(ran > 150 && preempting > 20 && speculating > 20);
}

/* A model of tests/data/models: NAME.json, or a folder NAME/ ("name/"). */
static rf_model config(const char *name)
{
    rf_model m;
    char path[512];
    rf_err e;
    size_t n = strlen(name);
    bool folder = n && name[n - 1] == '/';
    snprintf(path, sizeof path, "%s/%.*s%s", RF_MODELS_DIR, (int)(folder ? n - 1 : n), name,
             folder ? "" : ".json");
    if (rf_model_load(path, &m, &e))
        fail_msg("%s", e.msg);
    return m;
}

/* EP across nodes (ep_between_nodes): MiniMax-M2.5 (H = 3,072, top-8 of
 * 256 routed experts, 62 MoE layers) in bf16 as TP 4 x EP 16 x DP 4 on the
 * H100 SXM (8 devices a node: the expert group spans 2 nodes; InfiniBand
 * 50 GB/s a device, 5 us a hop), the prefill of one 8,192-token prompt,
 * activations bf16.
 * Each device of a replica's TP group sends its 8,192 / 4 = 2,048 rows,
 * each once to the other node when that node holds one of the row's 8
 * experts (it holds 128 of the 256): 1 - (128 x 127 x ... x 121) /
 * (256 x 255 x ... x 249) = 1 - 0.0034899 = 0.9965101. So 2,048 x 3,072 x
 * 2 B x 0.9965101 = 12,539,000 B leave a device, the message of an
 * all-to-all over 16 ranks n = that x 16 / 15 = 13,374,931 B, its floor
 * the direct algorithm's 15/16 n / 50e9 + 5 us = 255.78 us, for the
 * dispatch and the combine of each MoE layer. Counting M k = 65,536 row
 * copies of 6,144 B a device instead (the rule within a node) gives
 * 402,653,184 B, 15/16 of it over 50 GB/s = 7.55 ms, for each of the 124
 * all-to-alls: 936 ms, above the 265 ms TTFT vLLM measured for this prompt
 * on these 16 H100s (in fp8, half these bytes; bench/serving-h100.sh). Within a node (TP 4 x EP 8 x DP 2) the rule is
 * unchanged: M k H b_a over NVLink. */
static void ep_across_nodes(void **state)
{
    (void)state;
    static rf_par par;
    rf_hw h;
    assert_int_equal(rf_hw_preset("h100-sxm", &h, NULL), RF_OK);
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = config("minimax-m2.5");
    assert_true(m.hidden == 3072 && m.top_k == 8 && m.n_experts == 256);
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.phase = RF_PREFILL;
    o.tokens = 8192;
    o.a = rf_dtype_of(RF_BF16); /* the checkpoint's fp8 weights; rows of 2 B an element */
    rf_par_opts po = {.layout = {4, 1, 16, 4},
                      .links = h.links,
                      .util = 0.92,
                      .reserve_bytes = 6ull << 30,
                      .mem_bytes = h.mem_bytes};
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    const rf_coll *d = coll_named(&par, 0, "ep_dispatch"), *c = coll_named(&par, 0, "ep_combine");
    assert_non_null(d);
    assert_non_null(c);
    assert_true(d->bytes == 13374931 && d->count == 62 && d->ranks == 16);
    assert_true(c->bytes == d->bytes && c->count == 62);
    assert_true(d->bw_bytes_per_s == 50e9);
    near(d->time_s, 15.0 / 16 * 13374931 / 50e9 + 5e-6, 1e-12);
    po.layout = (rf_layout){4, 1, 8, 2};
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &par, NULL), RF_OK);
    d = coll_named(&par, 0, "ep_dispatch");
    assert_non_null(d);
    assert_true(d->bytes == 402653184ull && d->bw_bytes_per_s == 450e9);
}

/* A pipeline's stages hold what one device holds, MTP layers included:
 * DeepSeek-V3-0324 in NVFP4 excludes its MTP layer's (layer 61's) routed
 * and shared experts from the quantization (bf16, cli_models.txt), and the
 * MTP layer rides on the last stage (rf_layout_shard). So the stages'
 * resident weight bytes add up to the one device's exactly (capacity's
 * resident bytes, counted on the whole model, not through a shard), at
 * PP 1, 2 and 4
 * (embedding on the first stage, lm_head on the last, untied): dropping
 * the MTP layer's exclusions on the last stage would count its experts at
 * 4.5 bits instead of 16 and the sum would fall short (5bcb3fb). */
static void pp_stages_hold_one_device(void **state)
{
    (void)state;
    static rf_par one, pp;
    rf_hw h;
    assert_int_equal(rf_hw_preset("h100-sxm", &h, NULL), RF_OK);
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = config("deepseek-v3-0324-nvfp4/");
    assert_true(m.mtp_layers == 1);
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_par_opts po = {.layout = {1, 1, 1, 1},
                      .links = h.links,
                      .util = 0.92,
                      .reserve_bytes = 6ull << 30,
                      .mem_bytes = h.mem_bytes};
    rf_capacity cap;
    assert_int_equal(rf_capacity_compute(&m, &o, h.mem_bytes, 0.92, 0, 1024, &cap, NULL), RF_OK);
    uint64_t whole = cap.resident_bytes;
    assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &one, NULL), RF_OK);
    assert_true(one.stages[0].weight_bytes_resident == whole);
    for (int64_t p = 2; p <= 4; p += 2) {
        po.layout.pp = p;
        assert_int_equal(rf_par_compute(&m, &o, &roof, &po, &pp, NULL), RF_OK);
        uint64_t sum = 0;
        for (int64_t i = 0; i < p; i++)
            sum += pp.stages[i].weight_bytes_resident;
        assert_true(sum == whole);
    }
}

/* An MLA verification's floor is the lesser of its two forms (issue 27).
 * DeepSeek-V2-Lite (27 layers, 16 heads, latent r = 512 + rope 64, nope
 * and v 128) verifying q = 4 speculated positions of one sequence after
 * c = 2,000 cached: as an expanding chunk kv_b_proj expands all 2,004
 * latents, 2 x 512 x 16 x 256 = 4.19 MFLOP a row and layer, 227 GFLOP in
 * all, ten times the rest of the step; the absorbed kernel the engines run
 * (FlashMLA) scores each query against the latent as a decode token at
 * 2,001 .. 2,004 keys and reads the latent once. So:
 *   on a roof of unbounded bandwidth (F / pi alone) the verification is the
 *     decode step of 4 tokens at those contexts exactly (the same linear
 *     rows M = 4 and lm_head rows L = 4, the same attention FLOPs, kv_b_proj
 *     on 4 rows), and under a quarter of the expanding prefill of 4 tokens
 *     after 2,000 (rf_step_compute);
 *   on a roof of unbounded compute (Q / beta alone) it reads the weights and
 *     the latent of 2,004 positions once, under that decode step, which
 *     reads the latent four times (2,001 + ... + 2,004 positions), and at
 *     most the expanding prefill (the same weights and latent read). */
static void mla_verify_floor(void **state)
{
    (void)state;
    static rf_sim_floor f;
    size_t bytes = rf_sim_floor_table_bytes(8192, 256);
    void *table = malloc(bytes);
    assert_non_null(table);
    rf_model m = model("deepseek-v2-lite");
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.causal = true; /* query i of the 4 sees 2,000 + i keys, as the CLI counts */
    rf_roof h = roof_of("h100-sxm"), fast_bw = h, fast_pi = h;
    fast_bw.bw_bytes_per_s = 1e30;
    fast_pi.peak_flops_per_s = 1e30;
    rf_sim_chunk v = {.tokens = 4, .offset = 2000, .request = 0, .logits = 4};
    rf_sim_batch verify = {.n_chunks = 1, .chunks = &v, .tokens = 4};
    const int64_t ctx[4] = {2001, 2002, 2003, 2004};
    rf_sim_batch dec = {
        .n_decode = 4, .decode_context = ctx, .decode_context_sum = 8010, .tokens = 4};
    double tv, td;
    rf_err e;
    assert_int_equal(rf_sim_floor_prepare(&f, &m, &o, &fast_bw, 8192, 256, table, bytes, &e),
                     RF_OK);
    assert_int_equal(rf_sim_floor_step(&f, &verify, &tv, &e), RF_OK);
    assert_int_equal(rf_sim_floor_step(&f, &dec, &td, &e), RF_OK);
    near(tv, td, 1e-12);
    rf_step_opts p = o;
    p.phase = RF_PREFILL;
    p.tokens = 4;
    p.context = 2000;
    static rf_step pre;
    assert_int_equal(rf_step_compute(&m, &p, &fast_bw, &pre, NULL), RF_OK);
    assert_true(tv < pre.floor_s / 4);
    assert_int_equal(rf_sim_floor_prepare(&f, &m, &o, &fast_pi, 8192, 256, table, bytes, &e),
                     RF_OK);
    assert_int_equal(rf_sim_floor_step(&f, &verify, &tv, &e), RF_OK);
    assert_int_equal(rf_sim_floor_step(&f, &dec, &td, &e), RF_OK);
    assert_true(tv < td);
    assert_int_equal(rf_step_compute(&m, &p, &fast_pi, &pre, NULL), RF_OK);
    assert_true(tv <= pre.floor_s * (1 + 1e-12));
    free(table);
}

/* ---- hybrid stacks on a layout --------------------------------------------- */

/* The closed loop at concurrency 1 on the layout (p prepared for m on po)
 * is rf_generate_par_compute: TTFT its prefill cycle, its j-th token a
 * decode at 512 + j - 1 keys, E2E its latency (P = 512, N = 64). */
static void closed_one_hybrid(rf_sim_par *p, const rf_model *m, const rf_step_opts *o,
                              const rf_roof *roof, const rf_par_opts *po)
{
    rf_par_sweep *ps = calloc(1, sizeof *ps);
    assert_non_null(ps);
    rf_generate_par g;
    rf_err e = {0};
    if (rf_generate_par_compute(m, o, roof, po, 512, 64, ps, &g, &e))
        fail_msg("%s: %s", m->name, e.msg);
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 2,
                         .concurrency = 1,
                         .prompt = fixed(512),
                         .output = fixed(64)};
    rf_sim_sched sc = {.max_batched_tokens = 1024,
                       .max_seqs = 8,
                       .chunk = 1024,
                       .block_tokens = 16,
                       .pool_blocks = 1000};
    rf_sim_par_sched(p, &sc);
    rf_sim_result r;
    sim_run_ok(&w, &sc, NULL, rf_sim_par_step, p, &r);
    near(r.ttft_s.max, g.ttft_s, 1e-9);
    near(r.e2e_s.max, g.latency_s, 1e-9);
    near(r.tpot_s.p50, g.tpot_mean_s, 1e-9);
    free(ps);
}

/* The layout's step model on hybrid stacks (Gated DeltaNet, Mamba2,
 * chunked and sliding attention), each on TP 2 and one on TP 2 x PP 2:
 * a decode of B = 4 at S = 1000 (the 4 tokens at one context: each
 * attention-kind row's per-token shares summed are rf_step_compute's row
 * at B = 4) and the prefill of one 512-token prompt are rf_par_compute's
 * cycle on the same batch. */
static void hybrid_layout_is_par(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t tp, pp;
    } cases[] = {{"qwen3-next-80b-a3b-thinking", 2, 1},
                 {"qwen3-next-80b-a3b-thinking", 2, 2},
                 {"nemotron-3-nano-30b-a3b", 2, 1},
                 {"llama-4-scout-17b-16e-instruct", 2, 1},
                 {"gemma-3-4b-it", 2, 1}};
    rf_hw h;
    assert_int_equal(rf_hw_preset("h200", &h, NULL), RF_OK);
    rf_hw_links_defaults(&h.links);
    rf_roof roof;
    assert_int_equal(rf_hw_roof(&h, RF_BF16, &roof, NULL), RF_OK);
    rf_sim_par *p = calloc(1, sizeof *p);
    rf_par *par = calloc(1, sizeof *par);
    assert_non_null(p);
    assert_non_null(par);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rf_model m = config(cases[i].name);
        rf_step_opts o = rf_step_opts_for_model(&m);
        rf_par_opts po = {.layout = {cases[i].tp, cases[i].pp, 1, 1},
                          .links = h.links,
                          .util = 0.9,
                          .mem_bytes = h.mem_bytes};
        rf_err e = {0};
        size_t bytes = 0;
        if (rf_sim_par_table_bytes(p, &m, &po.layout, 1024, 64, &bytes, &e))
            fail_msg("%s: %s", cases[i].name, e.msg);
        void *table = malloc(bytes);
        assert_non_null(table);
        if (rf_sim_par_prepare(p, &m, &o, &roof, &po, 1024, 64, table, bytes, &e))
            fail_msg("%s: %s", cases[i].name, e.msg);
        int64_t ctx[4] = {1000, 1000, 1000, 1000};
        rf_sim_chunk ch = {.tokens = 512};
        rf_sim_batch dec = {.n_decode = 4,
                            .decode_context = ctx,
                            .decode_context_sum = 4000,
                            .tokens = 4},
                     pre = {.n_chunks = 1, .chunks = &ch, .tokens = 512};
        rf_step_opts d = o, f = o;
        d.phase = RF_DECODE;
        d.batch = 4;
        d.context = 1000;
        f.phase = RF_PREFILL;
        f.tokens = 512;
        f.context = 0;
        const rf_sim_batch *b[2] = {&dec, &pre};
        const rf_step_opts *so[2] = {&d, &f};
        for (int k = 0; k < 2; k++) {
            double t = 0;
            if (rf_sim_par_step(p, b[k], 1, &t, &e) ||
                rf_par_compute(&m, so[k], &roof, &po, par, &e))
                fail_msg("%s: %s", cases[i].name, e.msg);
            near(t, par->cycle_s, 1e-12);
        }
        if (i == 0 || i == 2)
            closed_one_hybrid(p, &m, &o, &roof, &po);
        free(table);
    }
    free(par);
    free(p);
}

/* ---- speculative decoding ---------------------------------------------------- */

static floor_model *floor_of(const rf_model *m, int64_t tokens, int64_t logits)
{
    floor_model *fm = calloc(1, sizeof *fm);
    assert_non_null(fm);
    rf_roof roof = roof_of("h100-sxm");
    size_t bytes = rf_sim_floor_table_bytes(tokens, logits);
    fm->table = malloc(bytes);
    assert_non_null(fm->table);
    rf_step_opts o = rf_step_opts_for_model(m);
    rf_err e;
    if (rf_sim_floor_prepare(&fm->f, m, &o, &roof, tokens, logits, fm->table, bytes, &e))
        fail_msg("prepare: %s", e.msg);
    return fm;
}

/* Qwen3-32B drafted by Qwen3-4B (one vocabulary) on an H100's floor. */
typedef struct spec_fx {
    rf_model tm, dm;
    rf_step_opts o, od;
    rf_roof roof;
    floor_model *t, *d;
} spec_fx;

static void spec_open_models(spec_fx *x, rf_model target, rf_model draft)
{
    x->tm = target;
    x->dm = draft;
    x->o = rf_step_opts_for_model(&x->tm);
    x->od = rf_step_opts_for_model(&x->dm);
    x->roof = roof_of("h100-sxm");
    x->t = floor_of(&x->tm, 8192, 1024);
    x->d = floor_of(&x->dm, 8192, 1024);
}

static void spec_open(spec_fx *x) { spec_open_models(x, config("qwen3-32b"), config("qwen3-4b")); }

static void spec_close(spec_fx *x)
{
    floor_free(x->t);
    floor_free(x->d);
}

/* One step of a request at c cached verifying q tokens, from generate and
 * generate --draft (rf_spec_compute) alone: q = 1 is a plain decode at
 * context c + 1 (generate of prompt c, output 2: its one decode step);
 * else rf_spec_compute with K = q - 1 at one context (output 2: S = prompt
 * + 1 only) gives the verification after S cached (prompt c - 1) and the
 * draft's K decode steps at S + i = c + 1 + i (prompt c). */
static double step_by_hand(const spec_fx *x, int64_t c, int64_t q)
{
    rf_generate g;
    rf_spec sp;
    assert_int_equal(rf_generate_compute(&x->tm, &x->o, &x->roof, c, 2, &g, NULL), RF_OK);
    if (q == 1)
        return g.tpot_mean_s;
    assert_int_equal(
        rf_spec_compute(&x->tm, &x->dm, &x->o, &x->od, &x->roof, &g, q - 1, 1, &sp, NULL), RF_OK);
    double draft = sp.draft_s;
    assert_int_equal(rf_generate_compute(&x->tm, &x->o, &x->roof, c - 1, 2, &g, NULL), RF_OK);
    assert_int_equal(
        rf_spec_compute(&x->tm, &x->dm, &x->o, &x->od, &x->roof, &g, q - 1, 1, &sp, NULL), RF_OK);
    return draft + sp.verify_s;
}

/* One request of P = 512 alone (closed loop, C = 1), speculating K ahead. */
static void spec_one(spec_fx *x, int64_t n_out, int64_t k, double alpha, rf_sim_result *r)
{
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 1,
                         .concurrency = 1,
                         .prompt = fixed(512),
                         .output = fixed(n_out),
                         .seed = 7};
    rf_sim_sched sc = roomy();
    sc.spec_k = k;
    sc.spec_accept = alpha;
    sc.draft = rf_sim_floor_group;
    sc.draft_user = &x->d->f;
    run_ok(&w, &sc, rf_sim_floor_step, &x->t->f, r);
}

/* The steps by hand. The first step prefills the prompt on the target and
 * (draft pass 0) on the draft: TTFT = both generate prefills. Then with
 * g tokens made a step verifies q = min(K + 1, N - g) tokens after
 * c = P + g - 1 cached and makes a + 1 of them.
 * alpha = 1, K = 4, N = 13: every proposal is accepted, so a step makes q
 * tokens: q = 5 at c = 512, 5 at 517, 2 at 522 (N - g = 2 left): 3 steps =
 * ceil((N - 1) / (K + 1)), accepting 4 + 4 + 1 proposals.
 * alpha = 0, K = 2, N = 8: every proposal is rejected, one token a step:
 * N - 1 = 7 steps at c = 512 .. 518, q = 3 for g = 1..5, 2 at g = 6, and at
 * g = 7 a plain decode (q = 1: nothing to propose), each costing its
 * draft and verification all the same.
 * E2E = TTFT + the steps; ITL one value a step that makes tokens. */
static void spec_by_hand(void **state)
{
    (void)state;
    spec_fx x;
    spec_open(&x);
    rf_generate gt, gd;
    assert_int_equal(rf_generate_compute(&x.tm, &x.o, &x.roof, 512, 2, &gt, NULL), RF_OK);
    assert_int_equal(rf_generate_compute(&x.dm, &x.od, &x.roof, 512, 2, &gd, NULL), RF_OK);
    double ttft = gt.ttft_s + gd.ttft_s;
    rf_sim_result r;

    /* steps, verifications, proposals accepted, ITL values */
    static const int64_t want[2][4] = {{4, 3, 9, 3}, {8, 6, 0, 7}};
    double sum[2] = {step_by_hand(&x, 512, 5) + step_by_hand(&x, 517, 5) + step_by_hand(&x, 522, 2),
                     0};
    for (int64_t g = 1; g < 8; g++)
        sum[1] += step_by_hand(&x, 512 + g - 1, 8 - g < 3 ? 8 - g : 3);
    for (int c = 0; c < 2; c++) {
        if (c == 0)
            spec_one(&x, 13, 4, 1, &r);
        else
            spec_one(&x, 8, 2, 0, &r);
        const int64_t got[4] = {r.steps, r.spec_verifies, r.spec_accepted, r.itl_s.n};
        assert_memory_equal(got, want[c], sizeof got);
        near(r.ttft_s.max, ttft, 1e-9);
        near(r.e2e_s.max, ttft + sum[c], 1e-9);
        near(r.tpot_s.max, sum[c] / (c ? 7 : 12), 1e-9);
    }
    spec_close(&x);
}

/* An MTP draft (rf_model_mtp_draft) of a hybrid target: Qwen3.5-397B-A17B
 * (Gated DeltaNet and attention) drafting with its own MTP layer, one
 * request of P = 512 alone, K = 3, alpha = 1, N = 12: TTFT the target's
 * and the MTP layer's prefills, then steps of q = 4, 4, 3 at c = 512, 516,
 * 520, each by hand from generate and generate --draft as above (the
 * target's verification through rf_step_compute: its recurrent layers
 * cost a chunk of q tokens). */
static void mtp_draft_by_hand(void **state)
{
    (void)state;
    rf_model t = config("qwen3.5-397b-a17b"), d;
    rf_err e = {0};
    if (rf_model_mtp_draft(&t, &d, &e))
        fail_msg("%s", e.msg);
    spec_fx x;
    spec_open_models(&x, t, d);
    rf_generate gt, gd;
    assert_int_equal(rf_generate_compute(&x.tm, &x.o, &x.roof, 512, 2, &gt, NULL), RF_OK);
    assert_int_equal(rf_generate_compute(&x.dm, &x.od, &x.roof, 512, 2, &gd, NULL), RF_OK);
    rf_sim_result r;
    spec_one(&x, 12, 3, 1, &r);
    double sum = step_by_hand(&x, 512, 4) + step_by_hand(&x, 516, 4) + step_by_hand(&x, 520, 3);
    assert_int_equal(r.steps, 4);
    near(r.ttft_s.max, gt.ttft_s + gd.ttft_s, 1e-9);
    near(r.e2e_s.max, gt.ttft_s + gd.ttft_s + sum, 1e-9);
    spec_close(&x);
}

/* A draft step model as cheap as affine_step: 1 ms a pass plus 1 us a
 * token, each replica's batch (one here). */
static rf_status affine_draft(void *user, const rf_sim_batch *b, int64_t n, double *step_s,
                              rf_err *err)
{
    (void)user;
    (void)err;
    *step_s = 0;
    for (int64_t i = 0; i < n; i++)
        *step_s += 1e-3 + 1e-6 * (double)b[i].tokens;
    return RF_OK;
}

static rf_sim_sched spec_sched(int64_t k, double alpha)
{
    rf_sim_sched sc = roomy();
    sc.spec_k = k;
    sc.spec_accept = alpha;
    sc.draft = affine_draft;
    return sc;
}

/* alpha = 1: a request of N tokens takes 1 + ceil((N - 1) / (K + 1))
 * steps (its prompt, then K + 1 tokens a step, the last step what is
 * left); alpha = 0: N steps. Over a long run the tokens a verification
 * makes average E = (1 - alpha^(K+1)) / (1 - alpha) (each draw
 * independent; 64 requests of 8,000 tokens: about 150,000 verifications,
 * the mean's standard error about 0.15%, so within 1%; the last steps of
 * a request, cut by the tokens it has left, lower it by about 0.03%). */
static void spec_tokens_a_step(void **state)
{
    (void)state;
    rf_sim_result r;
    for (int64_t k = 1; k <= 5; k += 2)
        for (int64_t n = 1; n <= 40; n++) {
            rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                                 .requests = 1,
                                 .concurrency = 1,
                                 .prompt = fixed(100),
                                 .output = fixed(n)};
            rf_sim_sched sc = spec_sched(k, 1);
            run_ok(&w, &sc, affine_step, NULL, &r);
            assert_int_equal(r.steps, 1 + (n - 1 + k) / (k + 1));
            sc = spec_sched(k, 0);
            run_ok(&w, &sc, affine_step, NULL, &r);
            assert_int_equal(r.steps, n);
        }
    static const struct {
        int64_t k;
        double alpha;
    } cases[] = {{4, 0.8}, {3, 0.5}, {6, 0.95}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                             .requests = 64,
                             .concurrency = 16,
                             .prompt = fixed(256),
                             .output = fixed(8000),
                             .seed = 11};
        rf_sim_sched sc = spec_sched(cases[i].k, cases[i].alpha);
        run_ok(&w, &sc, affine_step, NULL, &r);
        double e = rf_spec_tokens_per_iter(cases[i].k, cases[i].alpha);
        assert_true(r.spec_verifies > 60000);
        near(r.spec_tokens_per_verify, e, 0.01);
        assert_int_equal(r.output_tokens, 64 * 8000);
    }
    /* refusals */
    rf_sim_workload w = {.arrival = RF_SIM_CLOSED,
                         .requests = 1,
                         .concurrency = 1,
                         .prompt = fixed(100),
                         .output = fixed(10)};
    rf_sim_sched sc = spec_sched(65, 0.5);
    rf_err e = {0};
    assert_int_equal(sim_run(&w, &sc, affine_step, NULL, NULL, &r, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "spec-k (65)"));
    sc = spec_sched(4, 1.5);
    assert_int_equal(sim_run(&w, &sc, affine_step, NULL, NULL, &r, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "accept (1.5)"));
    sc = spec_sched(4, 0.5);
    sc.draft = NULL;
    assert_int_equal(sim_run(&w, &sc, affine_step, NULL, NULL, &r, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "draft"));
}

/* Closed loop at concurrency 1 against generate --draft (rf_spec_compute)
 * at alpha = 1, K = 4, P = 512, N = 126 = 1 + 25 x 5: the run's 25 steps
 * verify at c_j = 512 + 5 j (j = 0..24), each costing draft(c_j + 1 + i)
 * (i < 4) + verify(5 after c_j). generate --draft averages
 * draft(S + i) + verify(5 after S) over S = P' + 1 .. P' + N - 1. Every
 * step here is memory-bound (batch 1), so each part is affine in its
 * context and a mean of them is the part at the mean context: the run's
 * is c = 572 (draft at 573), generate --draft's S = P' + 63, equal at
 * P' = 510 = P - K/2. What remains is the convention: generate --draft
 * verifies after S = c + 1 cached (the decode token's context, one key
 * more than the positions cached), so
 *     TPOT_sim = TPOT_spec(P' = 510) - (verify(after S) - verify(after S - 1)) / 5,
 * the difference a constant (affine), taken at S = 600. */
static void closed_one_spec_is_generate_draft(void **state)
{
    (void)state;
    spec_fx x;
    spec_open(&x);
    rf_sim_result r;
    spec_one(&x, 126, 4, 1, &r);
    assert_int_equal(r.steps, 26);
    rf_generate g;
    rf_spec sp, a, b;
    assert_int_equal(rf_generate_compute(&x.tm, &x.o, &x.roof, 510, 126, &g, NULL), RF_OK);
    assert_int_equal(rf_spec_compute(&x.tm, &x.dm, &x.o, &x.od, &x.roof, &g, 4, 1, &sp, NULL),
                     RF_OK);
    assert_int_equal(rf_generate_compute(&x.tm, &x.o, &x.roof, 599, 2, &g, NULL), RF_OK);
    assert_int_equal(rf_spec_compute(&x.tm, &x.dm, &x.o, &x.od, &x.roof, &g, 4, 1, &a, NULL),
                     RF_OK);
    assert_int_equal(rf_generate_compute(&x.tm, &x.o, &x.roof, 598, 2, &g, NULL), RF_OK);
    assert_int_equal(rf_spec_compute(&x.tm, &x.dm, &x.o, &x.od, &x.roof, &g, 4, 1, &b, NULL),
                     RF_OK);
    double key = a.verify_s - b.verify_s;
    assert_true(key > 0);
    near(r.tpot_s.max, sp.tpot_s - key / 5, 1e-9);
    assert_true(fabs(r.tpot_s.max - sp.tpot_s) < 1e-4 * sp.tpot_s); /* one key a query */
    spec_close(&x);
}

/* The text a user types: each form, and refusals naming the text. */
static void parse_text(void **state)
{
    (void)state;
    rf_sim_arrival k;
    double cv = 0;
    rf_err e = {0};
    assert_int_equal(rf_sim_arrival_parse("poisson", &k, &cv, NULL), RF_OK);
    assert_true(k == RF_SIM_POISSON && cv == 1);
    assert_int_equal(rf_sim_arrival_parse("gamma:2.5", &k, &cv, NULL), RF_OK);
    assert_true(k == RF_SIM_GAMMA && cv == 2.5);
    assert_int_equal(rf_sim_arrival_parse("gamma:-1", &k, &cv, &e), RF_EINVAL);
    assert_string_equal(e.msg, "arrival 'gamma:-1': the coefficient of variation must be a "
                               "number > 0");
    assert_int_equal(rf_sim_arrival_parse("bursty", &k, &cv, &e), RF_EINVAL);
    assert_string_equal(e.msg, "arrival 'bursty': expected poisson or gamma:CV");
    rf_sim_lengths l;
    assert_int_equal(rf_sim_lengths_parse("1024", "prompt", &l, NULL), RF_OK);
    assert_true(l.dist == RF_SIM_FIXED && l.value == 1024);
    assert_int_equal(rf_sim_lengths_parse("uniform:100:300", "prompt", &l, NULL), RF_OK);
    assert_true(l.dist == RF_SIM_UNIFORM && l.lo == 100 && l.hi == 300);
    assert_int_equal(rf_sim_lengths_parse("lognormal:1000:500", "output", &l, NULL), RF_OK);
    assert_true(l.dist == RF_SIM_LOGNORMAL && l.mean == 1000 && l.sd == 500 && l.lo == 1);
    assert_int_equal(rf_sim_lengths_parse("normal:800:100:500:1200", "output", &l, NULL), RF_OK);
    assert_true(l.dist == RF_SIM_NORMAL && l.lo == 500 && l.hi == 1200);
    assert_int_equal(rf_sim_lengths_parse("uniform:300:100", "prompt", &l, &e), RF_EINVAL);
    assert_string_equal(e.msg, "prompt lengths [300, 100] need 1 <= lo <= hi <= 1099511627776");
    assert_int_equal(rf_sim_lengths_parse("-5", "output", &l, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "output lengths '-5': expected N, uniform:LO:HI"));
    assert_int_equal(rf_sim_lengths_parse("normal:0:10", "output", &l, &e), RF_EINVAL);
    assert_string_equal(e.msg, "output lengths: mean (0) must be > 0 and sd (10) >= 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(floor_matches_mixed_step),
        cmocka_unit_test(floor_matches_mixed_new_families),
        cmocka_unit_test(closed_one_is_generate),
        cmocka_unit_test(low_rate_limits),
        cmocka_unit_test(moe_floor_under_real_schedule),
        cmocka_unit_test(littles_law),
        cmocka_unit_test(overload_flagged),
        cmocka_unit_test(overload_short_run),
        cmocka_unit_test(same_seed_same_bytes),
        cmocka_unit_test(kv_within_pool),
        cmocka_unit_test(prefix_hits),
        cmocka_unit_test(refusals),
        cmocka_unit_test(trace_alone),
        cmocka_unit_test(length_means),
        cmocka_unit_test(percentiles),
        cmocka_unit_test(queueing_in_ttft),
        cmocka_unit_test(schedules_by_hand),
        cmocka_unit_test(frontend_latency),
        cmocka_unit_test(pool_and_floor_refusal),
        cmocka_unit_test(mla_mixed_step),
        cmocka_unit_test(sliding_model_runs),
        cmocka_unit_test(invariants_hold),
        cmocka_unit_test(parse_text),
        cmocka_unit_test(spec_by_hand),
        cmocka_unit_test(spec_tokens_a_step),
        cmocka_unit_test(closed_one_spec_is_generate_draft),
        cmocka_unit_test(hybrid_layout_is_par),
        cmocka_unit_test(mtp_draft_by_hand),
        cmocka_unit_test(ep_across_nodes),
        cmocka_unit_test(pp_stages_hold_one_device),
        cmocka_unit_test(mla_verify_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
