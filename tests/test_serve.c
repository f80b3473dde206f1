/* test_serve.c - whole requests (rf_serve.h): the closed-form sums against
 * the step-by-step loop, a generation derived by hand, speculative decoding.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_parallel.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_step.h"
#include "sim_fixture.h"

static rf_step st; /* ~10 KB: off the stack */

/* The floor of o at context s, one rf_step_compute. */
static void step_at(const rf_model *m, rf_step_opts o, const rf_roof *roof, int64_t s,
                    double *floor_s, double *som_s)
{
    o.context = s;
    assert_int_equal(rf_step_compute(m, &o, roof, &st, NULL), RF_OK);
    *floor_s = st.floor_s;
    *som_s = st.floor_sum_of_max_s;
}

/* The loop the closed form replaces: sum the floor at every context. */
static void loop_sum(const rf_model *m, const rf_step_opts *o, const rf_roof *roof, int64_t lo,
                     int64_t hi, double *floor_s, double *som_s)
{
    *floor_s = *som_s = 0;
    for (int64_t s = lo; s <= hi; s++) {
        double f, q;
        step_at(m, *o, roof, s, &f, &q);
        *floor_s += f;
        *som_s += q;
    }
}

/* Many (model, B, P, N) points, decode and a 5-token verification step,
 * both traffic models: the closed form equals the loop to 1e-9. The points
 * cross a sliding window (gemma-2's 4096: P = 4000 with N = 700), the
 * step's regime (B = 512 starts compute-bound at short contexts and turns
 * memory-bound as the KV grows) and MoE / MLA (mixtral, deepseek-v2-lite). */
static void closed_form_matches_loop(void **state)
{
    (void)state;
    static const char *const models[] = {"llama-3-8b", "qwen2.5-7b-instruct", "mixtral-8x7b",
                                         "gemma-2-9b-it", "deepseek-v2-lite"};
    static const int64_t batches[] = {1, 8, 512};
    static const int64_t prompts[] = {1, 100, 4000};
    static const int64_t outputs[] = {1, 2, 3, 10, 257, 700};
    rf_roof roof = roof_of("h100-sxm");
    size_t compared = 0;
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        rf_model m = model(models[mi]);
        for (size_t bi = 0; bi < 3; bi++)
            for (size_t pi = 0; pi < 3; pi++)
                for (size_t ni = 0; ni < 6; ni++)
                    for (int variant = 0; variant < 3; variant++) {
                        rf_step_opts o = rf_step_opts_for_model(&m);
                        o.batch = batches[bi];
                        if (variant == 1) { /* the verification step of K = 4 */
                            o.phase = RF_PREFILL;
                            o.tokens = 5;
                        } else if (variant == 2) {
                            o.traffic = RF_TRAFFIC_FULL;
                        }
                        int64_t lo = prompts[pi] + 1, hi = prompts[pi] + outputs[ni] - 1;
                        if (hi < lo)
                            continue;
                        rf_floor_sum fs;
                        assert_int_equal(rf_floor_sum_compute(&m, &o, &roof, lo, hi, &fs, NULL),
                                         RF_OK);
                        double f, q;
                        loop_sum(&m, &o, &roof, lo, hi, &f, &q);
                        near(fs.floor_s, f, 1e-9);
                        near(fs.sum_of_max_s, q, 1e-9);
                        assert_int_equal(fs.steps, hi - lo + 1);
                        step_at(&m, o, &roof, lo, &f, &q);
                        assert_true(fs.first_s == f);
                        step_at(&m, o, &roof, hi, &f, &q);
                        assert_true(fs.last_s == f);
                        compared++;
                    }
    }
    assert_true(compared > 500);
}

/* N = 1,000,000 costs what N = 10 does: the steps computed do not grow
 * with N where nothing bends (llama-3-8b, memory-bound throughout), and
 * grow as log2 N across a window's cap (gemma-2). */
static void cost_flat_in_n(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_generate g10, g1m;
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 10, &g10, NULL), RF_OK);
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 1000000, &g1m, NULL), RF_OK);
    assert_int_equal(g1m.decode.steps_computed, g10.decode.steps_computed);
    m = model("gemma-2-9b-it");
    o = rf_step_opts_for_model(&m);
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 1000000, &g1m, NULL), RF_OK);
    assert_true(g1m.decode.steps_computed < 200); /* ~ 4 log2(1e6) = 80 */
}

/* Llama-3-8B on H100 SXM (3.35 TB/s), P = 1024, N = 128. Every decode step
 * is memory-bound (B = 64 at 1024: I = 64 x 2 x 7.5e9 / 23.6e9 ~ 41 FLOP/B,
 * under the ridge 295), so its floor is bytes / beta with
 *     bytes(S) = W + B S kv_tok,  W = 15,009,316,864 B ("15.01 GB",
 *     4.48 ms),  kv_tok = 2 x 32 x 8 x 128 x 2 = 131,072 B (128 KiB).
 * Output tokens j = 2..128 decode at S = 1025..1151: 127 steps with
 *     sum S = 127 (1025 + 1151) / 2 = 138,176, so
 *     decode sum = (127 W + B kv_tok 138,176) / beta
 *   B = 1:  (1,906,183,241,728 + 18,111,004,672) / 3.35e12 = 0.574416 s,
 *           TPOT mean 4.5230 ms, first (W + 1025 kv_tok) / beta = 4.5205 ms,
 *           last (W + 1151 kv_tok) / beta = 4.5254 ms
 *   B = 64: (1,906,183,241,728 + 64 x 18,111,004,672) / 3.35e12 = 0.915011 s,
 *           TPOT mean 7.2048 ms, first 7.0471 ms, last 7.3626 ms
 * TTFT is the prefill step of B x 1024 tokens (compute-bound), as `step
 * --phase prefill --batch B --tokens 1024` prints it; latency = TTFT + sum,
 * tokens/s = 128 B / latency. */
static void llama_by_hand(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    const double w = 15009316864.0, kv = 131072.0, beta = 3.35e12;
    static const int64_t batches[] = {1, 64};
    static const double sums[] = {0.574416, 0.915011};
    for (size_t i = 0; i < 2; i++) {
        int64_t b = batches[i];
        rf_step_opts o = rf_step_opts_for_model(&m);
        o.batch = b;
        rf_generate g;
        assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 128, &g, NULL), RF_OK);
        double decode = (127 * w + (double)b * kv * 138176) / beta;
        near(g.decode.floor_s, decode, 1e-12);
        near(g.decode.floor_s, sums[i], 1e-6);
        near(g.tpot_mean_s, decode / 127, 1e-12);
        near(g.tpot_first_s, (w + (double)b * 1025 * kv) / beta, 1e-12);
        near(g.tpot_last_s, (w + (double)b * 1151 * kv) / beta, 1e-12);
        rf_step_opts pre = o;
        pre.phase = RF_PREFILL;
        pre.tokens = 1024;
        pre.context = 0;
        assert_int_equal(rf_step_compute(&m, &pre, &roof, &st, NULL), RF_OK);
        assert_true(st.regime == RF_COMPUTE_BOUND);
        assert_true(g.ttft_s == st.floor_s);
        near(g.latency_s, st.floor_s + decode, 1e-12);
        near(g.tokens_per_s, 128.0 * (double)b / (st.floor_s + decode), 1e-12);
        assert_int_equal(g.final_positions, 1151);
    }
    /* B = 1 by the printed figures: 4.52 ms a token */
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_generate g;
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 128, &g, NULL), RF_OK);
    assert_true(round(g.tpot_mean_s * 1e5) == 452);
}

/* N = 1: no decode step; TTFT is the whole latency. Bad sizes refused. */
static void one_token_and_refusals(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_generate g;
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 16, 1, &g, NULL), RF_OK);
    assert_true(g.decode.steps == 0 && g.latency_s == g.ttft_s && g.tpot_mean_s == 0);
    rf_err e;
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 16, 0, &g, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "output (0)"));
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 0, 16, &g, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "prompt (0)"));
    rf_step_opts f = rf_generate_final_step(&o, 1024, 128);
    assert_true(f.phase == RF_DECODE && f.context == 1151);
}

/* E = (1 - alpha^(K+1)) / (1 - alpha): K = 4, alpha = 0.8:
 * (1 - 0.32768) / 0.2 = 3.3616 ("3.36"); alpha = 1 gives K + 1, alpha = 0
 * one token. The iteration's floors equal the loop over the contexts. */
static void speculative(void **state)
{
    (void)state;
    near(rf_spec_tokens_per_iter(4, 0.8), 3.3616, 1e-12);
    assert_true(rf_spec_tokens_per_iter(4, 1) == 5);
    assert_true(rf_spec_tokens_per_iter(4, 0) == 1);

    rf_roof roof = roof_of("h100-sxm");
    rf_model t = model("llama-3-8b"), d = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&t);
    o.batch = 4;
    rf_generate g;
    rf_spec sp;
    assert_int_equal(rf_generate_compute(&t, &o, &roof, 512, 64, &g, NULL), RF_OK);
    assert_int_equal(rf_spec_compute(&t, &d, &o, &o, &roof, &g, 4, 0.8, &sp, NULL), RF_OK);
    /* by the loop: draft i at S + i, verify 5 tokens at S, S = 513..575 */
    double draft = 0, verify = 0, f, q;
    for (int64_t s = 513; s <= 575; s++) {
        for (int64_t i = 0; i < 4; i++) {
            step_at(&d, o, &roof, s + i, &f, &q);
            draft += f;
        }
        rf_step_opts v = o; /* memory-bound at B = 4: lm_head's 4 more rows a
                               sequence (verify_scores_every_token) move
                               only its FLOPs, not this floor */
        v.phase = RF_PREFILL;
        v.tokens = 5;
        step_at(&t, v, &roof, s, &f, &q);
        verify += f;
    }
    near(sp.draft_s, draft / 63, 1e-9);
    near(sp.verify_s, verify / 63, 1e-9);
    near(sp.tpot_s, (draft + verify) / 63 / 3.3616, 1e-9);
    near(sp.tokens_per_s, 4 * 3.3616 / ((draft + verify) / 63), 1e-9);
    /* self-speculation of a memory-bound model: 4 drafts and a verify cost
     * about 5 plain steps, so only alpha near 1 breaks even (E ~ 5) */
    /* self-speculation of a memory-bound model: 4 drafts and a verify cost
     * more than 5 plain steps (the verify reads the weights and the KV as a
     * decode step does, and a little more), which even alpha = 1 (E = 5)
     * cannot repay: no break-even */
    assert_true(sp.iter_s > 5 * sp.plain_tpot_s && !sp.breaks_even && sp.speedup < 1);
    /* a 2-layer draft of the same shapes: cheap drafts, a break-even alpha
     * where E(alpha) = iter / plain TPOT */
    d.layers = 2;
    assert_int_equal(rf_spec_compute(&t, &d, &o, &o, &roof, &g, 4, 0.8, &sp, NULL), RF_OK);
    assert_true(sp.breaks_even && sp.break_even_accept > 0 && sp.break_even_accept < 0.8);
    near(rf_spec_tokens_per_iter(4, sp.break_even_accept), sp.iter_s / sp.plain_tpot_s, 1e-9);
    assert_true(sp.speedup > 1);

    rf_err e;
    rf_model other = model("qwen2.5-7b-instruct");
    assert_int_equal(rf_spec_compute(&t, &other, &o, &o, &roof, &g, 4, 0.8, &sp, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "vocabulary"));
    assert_int_equal(rf_spec_compute(&t, &d, &o, &o, &roof, &g, 0, 0.8, &sp, &e), RF_EINVAL);
    assert_int_equal(rf_spec_compute(&t, &d, &o, &o, &roof, &g, 4, 1.5, &sp, &e), RF_EINVAL);
}

/* A mixed step equals its parts where they do not interact: B_d = 8 decode
 * tokens at S_d = 2000 and one chunk of C = 512 after S_c = 1024 on
 * Llama-3-8B. FLOPs add (2 M K N is linear in M; each attention keeps its
 * own queries and keys); bytes add except the weights, read once for the
 * M = 8 + 512 rows instead of once for each part:
 *     mixed bytes = decode bytes + chunk bytes - W,  W = 15,009,316,864.
 * Its floor is max(F/pi, Q/beta) of those totals. */
static void mixed_equals_parts(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    static rf_step mix, dec;
    rf_mixed_opts mo = {.decode_batch = 8,
                        .decode_context = 2000,
                        .chunk = 512,
                        .chunk_context = 1024,
                        .chunks = 1};
    assert_int_equal(rf_mixed_step_compute(&m, &o, &roof, &mo, &mix, NULL), RF_OK);
    rf_step_opts d = o;
    d.batch = 8;
    d.context = 2000;
    assert_int_equal(rf_step_compute(&m, &d, &roof, &dec, NULL), RF_OK);
    rf_step_opts c = o;
    c.phase = RF_PREFILL;
    c.tokens = 512;
    c.context = 1024;
    assert_int_equal(rf_step_compute(&m, &c, &roof, &st, NULL), RF_OK);
    assert_true(mix.flops == dec.flops + st.flops);
    assert_true(mix.weight_bytes == 15009316864ull);
    assert_true(mix.total_bytes == dec.total_bytes + st.total_bytes - 15009316864ull);
    assert_true(mix.kv_bytes == dec.kv_bytes + st.kv_bytes);
    near(mix.floor_s,
         fmax((double)mix.flops / roof.peak_flops_per_s,
              (double)mix.total_bytes / roof.bw_bytes_per_s),
         1e-15);
    /* no chunk: the decode step itself */
    mo.chunks = 0;
    assert_int_equal(rf_mixed_step_compute(&m, &o, &roof, &mo, &mix, NULL), RF_OK);
    assert_true(mix.flops == dec.flops && mix.total_bytes == dec.total_bytes);
    assert_true(mix.floor_s == dec.floor_s);
    rf_err e;
    rf_model mla = model("deepseek-v2-lite");
    assert_int_equal(rf_mixed_step_compute(&mla, &o, &roof, &mo, &mix, &e), RF_EINVAL);
}

/* Continuous batching, steady state: Llama-3-8B, B = 32, P = 2000, N = 500,
 * C = 512. Decode at S_d = 2000 + 250 = 2250; prompt tokens a step
 * ceil(32 x 2000 / 500) = 128, one chunk of 128 (under C); a prompt takes
 * ceil(2000 / 512) = 4 chunks, at cached contexts 0, 512, 1024, 1536, mean
 * taken as 512 floor(3 / 2) = 512. Memory-bound (F ~ 2 x 160 x 7e9 = 2.2
 * TFLOP, 2.3 ms; Q ~ 24.5 GB, 7.3 ms), so
 *     floor = (W + 32 x 2250 kv_tok + (512 + 128) kv_tok) / beta
 *           = (15,009,316,864 + 9,437,184,000 + 83,886,080) / 3.35e12
 *           = 7.3225 ms;
 * TPOT = floor, tokens/s = 32 / floor = 4,370, TTFT = 4 floors = 29.3 ms. */
static void serve_steady_state(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    static rf_serve sv;
    rf_serve_opts so = {.concurrency = 32, .prompt = 2000, .output = 500, .chunk = 512};
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    assert_int_equal(sv.decode_context, 2250);
    assert_int_equal(sv.prompt_tokens, 128);
    assert_int_equal(sv.full_chunks, 0);
    assert_int_equal(sv.tail_chunk, 128);
    assert_int_equal(sv.ttft_steps, 4);
    assert_int_equal(sv.chunk_context, 512);
    double floor = (15009316864.0 + 9437184000.0 + 83886080.0) / 3.35e12;
    assert_true(sv.step.regime == RF_MEMORY_BOUND);
    near(sv.tpot_s, floor, 1e-12);
    near(sv.tokens_per_s, 32 / floor, 1e-12);
    near(sv.ttft_s, 4 * floor, 1e-12);
    assert_true(round(floor * 1e7) == 73225);
    /* --max-batched-tokens 96 leaves 64 prompt tokens a chunk: two of 64 */
    so.max_batched_tokens = 96;
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    assert_int_equal(sv.chunk, 64);
    assert_int_equal(sv.full_chunks, 2);
    assert_int_equal(sv.tail_chunk, 0);
    assert_int_equal(sv.ttft_steps, 32); /* ceil(2000 / 64) */
    rf_err e;
    so.max_batched_tokens = 32;
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, &e), RF_EINVAL);
}

/* Prefix caching: Llama-3-8B, B = 8, P = 1024 of which P_s = 768 shared,
 * N = 128. TTFT = prefill(1 x 768) + prefill(8 x 256 after 768 cached).
 * Decode with a cascade kernel reads the prefix once a step:
 *     bytes(S) = W + (768 + 8 (S - 768)) kv_tok,
 * 7 x 768 x 131,072 = 704,643,072 B less than the common kernels' W + 8 S
 * kv_tok; summed over S = 1025..1151 (127 steps, sum S = 138,176):
 *     (127 W + kv_tok (127 x 768 + 8 (138,176 - 127 x 768))) / beta.
 * Capacity at the end (1151 positions): the prefix stored once,
 *     KV = kv_tok (768 + 8 (1151 - 768)) = 131,072 x 3,832 = 502,267,904 B
 * against 8 x 1151 x 131,072 = 1,206,910,976 B unshared. */
static void prefix_cache(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.batch = 8;
    const double w = 15009316864.0, kv = 131072.0, beta = 3.35e12;
    rf_generate plain, common, casc;
    rf_prefix px = {.shared = 768};
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 128, &plain, NULL), RF_OK);
    assert_int_equal(rf_generate_prefix_compute(&m, &o, &roof, 1024, 128, &px, &common, NULL),
                     RF_OK);
    px.cascade = true;
    assert_int_equal(rf_generate_prefix_compute(&m, &o, &roof, 1024, 128, &px, &casc, NULL), RF_OK);
    /* TTFT: the two prefills */
    double ttft = 0;
    rf_step_opts pre = o;
    pre.phase = RF_PREFILL;
    pre.batch = 1;
    pre.tokens = 768;
    pre.context = 0;
    assert_int_equal(rf_step_compute(&m, &pre, &roof, &st, NULL), RF_OK);
    ttft += st.floor_s;
    pre.batch = 8;
    pre.tokens = 256;
    pre.context = 768;
    assert_int_equal(rf_step_compute(&m, &pre, &roof, &st, NULL), RF_OK);
    ttft += st.floor_s;
    near(common.ttft_s, ttft, 1e-12);
    assert_true(casc.ttft_s == common.ttft_s && casc.ttft_s < plain.ttft_s);
    /* decode: common kernels as without a prefix; cascade by hand */
    assert_true(common.decode.floor_s == plain.decode.floor_s);
    near(casc.decode.floor_s, (127 * w + kv * (127 * 768 + 8 * (138176 - 127 * 768))) / beta,
         1e-12);
    near(casc.tpot_first_s, (w + (768 + 8 * (1025 - 768)) * kv) / beta, 1e-12);
    near(plain.tpot_first_s - casc.tpot_first_s, 704643072 / beta, 1e-9);
    /* capacity: the prefix stored once */
    rf_fit f;
    assert_int_equal(rf_generate_fit(&m, &o, &casc, 80ull << 30, 0.92, 6ull << 30, &f, NULL),
                     RF_OK);
    assert_true(f.kv_bytes == 502267904ull);
    assert_int_equal(rf_generate_fit(&m, &o, &plain, 80ull << 30, 0.92, 6ull << 30, &f, NULL),
                     RF_OK);
    assert_true(f.kv_bytes == 1206910976ull);
    rf_err e;
    px.shared = 1025;
    assert_int_equal(rf_generate_prefix_compute(&m, &o, &roof, 1024, 128, &px, &casc, &e),
                     RF_EINVAL);
    assert_non_null(strstr(e.msg, "shared-prefix (1025)"));
}

/* Pareto fronts. By hand, six points (latency, throughput):
 *   (1, 10) on: nothing is faster;  (2, 30) on: nothing as fast does more;
 *   (2, 25) off: (2, 30);  (3, 20) off: (2, 30);  (4, 40) on;
 *   (5, 40) off: (4, 40) is as good and faster.
 * Llama-3-8B, P = 1024, N = 128, B = 1..4: TPOT, TTFT and tokens/s all
 * rise with B (memory-bound decode, W dominating), so every point is on
 * both fronts; on 64 batch sizes the linear marking agrees with the pairwise
 * one. Weights stop dominating where B kv_seq(1024 + 64) >= W:
 * 15,009,316,864 / (1088 x 131,072) = 105.25, so B = 106. */
static void frontier(void **state)
{
    (void)state;
    const double lat[] = {1, 2, 2, 3, 4, 5}, thr[] = {10, 30, 25, 20, 40, 40};
    const bool want[] = {true, true, false, false, true, false};
    bool on[6];
    rf_pareto_mark(lat, thr, 6, on);
    for (int i = 0; i < 6; i++)
        assert_true(on[i] == want[i]);

    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    static rf_frontier_point pts[64];
    assert_int_equal(rf_frontier_compute(&m, &o, &roof, 1024, 128, pts, 4, NULL), RF_OK);
    for (int i = 0; i < 4; i++) {
        rf_generate g;
        o.batch = i + 1;
        assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 128, &g, NULL), RF_OK);
        assert_true(pts[i].tpot_s == g.tpot_mean_s && pts[i].tokens_per_s == g.tokens_per_s);
        assert_true(pts[i].pareto_tpot && pts[i].pareto_ttft);
        assert_true(pts[i].kv_bytes == (uint64_t)(i + 1) * 1151 * 131072);
    }
    o.batch = 1;
    assert_int_equal(rf_frontier_compute(&m, &o, &roof, 1024, 128, pts, 64, NULL), RF_OK);
    double l[64], t[64];
    bool pair[64];
    for (int which = 0; which < 2; which++) {
        for (int i = 0; i < 64; i++) {
            l[i] = which ? pts[i].ttft_s : pts[i].tpot_s;
            t[i] = pts[i].tokens_per_s;
        }
        rf_pareto_mark(l, t, 64, pair);
        for (int i = 0; i < 64; i++)
            assert_true(pair[i] == (which ? pts[i].pareto_ttft : pts[i].pareto_tpot));
    }
    int64_t cross;
    assert_int_equal(rf_frontier_weights_cross(&m, &o, &roof, 1024, 128, &cross, NULL), RF_OK);
    assert_int_equal(cross, 106);
    /* $2 an hour at 1,000 tokens/s: 2 / 3.6e6 x 1e6 = $0.5556 a million;
     * 700 W: 0.7 J a token */
    near(rf_cost_per_mtok(2, 1, 1000), 2.0 / 3.6, 1e-12);
    near(rf_energy_per_token_j(700, 1, 1000), 0.7, 1e-12);
    /* the presets' TDP (the datasheets' maximum board power) */
    rf_hw h;
    assert_int_equal(rf_hw_preset("h100-sxm", &h, NULL), RF_OK);
    assert_true(h.board_power_w == 700);
    assert_int_equal(rf_hw_preset("b200", &h, NULL), RF_OK);
    assert_true(h.board_power_w == 1000);
    assert_int_equal(rf_hw_preset("tpu-v5e", &h, NULL), RF_OK);
    assert_true(h.board_power_w == 0);
}

/* Speculative decoding in the steady state of serve_steady_state (B = 32,
 * P = 2000, N = 500, C = 512), self-speculation K = 4, alpha = 0.8:
 * E = 3.3616, T_p = ceil(32 x 3.3616 x 2000 / 500) = 431 prompt tokens an
 * iteration (one chunk after 512 cached). Draft step 0 carries them beside
 * the 32 decode tokens (memory-bound): (W + (32 x 2250 + 943) kv_tok) / beta;
 * steps 1..3 plain decode steps at 2251..2253: (W + 32 S kv_tok) / beta.
 * The verification, M = 32 x 5 + 431 = 591, is compute-bound:
 *     F = 2 x 591 x 6,979,321,856        linear layers (218,103,808 x 32)
 *       + 2 x 161 x 4096 x 128,256       lm_head: 5 positions x 32 + 1
 *       + 4 x 32 x 128 x 5 x 2255 x 32 x 32   verify attention
 *       + 4 x 32 x 128 x 431 x 943 x 32       chunk attention
 *       = 8,820,967,866,368;  verify = F / pi.
 * Even alpha = 1 loses (5 tokens for ~38.6 ms > 5 x 7.32 ms): no break-even.
 * A 70B-shaped target (llama-3-8b with 80 layers, hidden kept: its step
 * costs ~2.5 x the draft's) breaks even somewhere in (0, 1), where the TPOT
 * with speculation equals the plain one. */
static void serve_speculative(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    static rf_serve sv;
    rf_serve_spec sp;
    rf_serve_opts so = {.concurrency = 32, .prompt = 2000, .output = 500, .chunk = 512};
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    assert_int_equal(rf_serve_spec_compute(&m, &m, &o, &o, &roof, &sv, 4, 0.8, &sp, NULL), RF_OK);
    const double w = 15009316864.0, kv = 131072.0, beta = 3.35e12;
    assert_int_equal(sp.prompt_tokens, 431);
    double draft = (w + (32 * 2250 + 943) * kv) / beta;
    for (int i = 1; i <= 3; i++)
        draft += (w + 32 * (2250 + i) * kv) / beta;
    near(sp.spec.draft_s, draft, 1e-12);
    double f = 2.0 * 591 * 6979321856.0 + 2.0 * 161 * 4096 * 128256 +
               4.0 * 32 * 128 * 5 * 2255 * 32 * 32 + 4.0 * 32 * 128 * 431 * 943 * 32;
    assert_true(f == 8820967866368.0);
    near(sp.spec.verify_s, f / roof.peak_flops_per_s, 1e-12);
    near(sp.spec.tpot_s, (draft + f / roof.peak_flops_per_s) / 3.3616, 1e-12);
    near(sp.spec.tokens_per_s, 32 * 3.3616 / sp.spec.iter_s, 1e-12);
    assert_true(sp.spec.plain_tpot_s == sv.tpot_s && !sp.spec.breaks_even);
    assert_int_equal(sp.ttft_iters, 4);
    /* the 80-layer target: at the break-even alpha the two TPOTs meet */
    rf_model big = m;
    big.layers = 80;
    static rf_serve bsv;
    rf_serve_spec at;
    assert_int_equal(rf_serve_compute(&big, &o, &roof, &so, &bsv, NULL), RF_OK);
    assert_int_equal(rf_serve_spec_compute(&big, &m, &o, &o, &roof, &bsv, 4, 0.8, &sp, NULL),
                     RF_OK);
    assert_true(sp.spec.breaks_even && sp.spec.break_even_accept > 0 &&
                sp.spec.break_even_accept < 1);
    assert_int_equal(rf_serve_spec_compute(&big, &m, &o, &o, &roof, &bsv, 4,
                                           sp.spec.break_even_accept, &at, NULL),
                     RF_OK);
    near(at.spec.tpot_s, bsv.tpot_s, 1e-6); /* T_p steps in whole tokens: a kink */
    rf_err e;
    rf_model other = model("qwen2.5-3b-instruct");
    assert_int_equal(rf_serve_spec_compute(&m, &other, &o, &o, &roof, &sv, 4, 0.8, &sp, &e),
                     RF_EINVAL);
    assert_non_null(strstr(e.msg, "vocabulary"));
    /* max-batched-tokens must leave room beyond the B (K + 1) verified */
    so.max_batched_tokens = 160;
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    assert_int_equal(rf_serve_spec_compute(&m, &m, &o, &o, &roof, &sv, 4, 0.8, &sp, &e), RF_EINVAL);
}

/* Prefix caching in the steady state: B = 32, P = 2000 of which P_s = 1000
 * shared, N = 500, C = 512. A request prefills its own 1000 tokens:
 * T_p = ceil(32 x 1000 / 500) = 64, TTFT ceil(1000 / 512) = 2 steps, chunk
 * context 1000 + 512 floor(1 / 2) = 1000. Decode KV with a cascade kernel
 * (1000 + 32 (2250 - 1000)) kv_tok = 41,000 kv_tok, common kernels
 * 32 x 2250 = 72,000; the chunk reads 1064 kv_tok. Memory-bound:
 *     cascade (W + 42,064 kv_tok) / beta,  common (W + 73,064 kv_tok) / beta.
 * KV held 41,000 kv_tok = 5,373,952,000 B; the largest concurrency
 * (budget - weights - 1000 kv_tok) / (1250 kv_tok). */
static void serve_prefix(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    static rf_serve sv;
    const double w = 15009316864.0, kv = 131072.0, beta = 3.35e12;
    rf_serve_opts so = {.concurrency = 32,
                        .prompt = 2000,
                        .output = 500,
                        .chunk = 512,
                        .prefix = {.shared = 1000, .cascade = true}};
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    assert_int_equal(sv.prompt_tokens, 64);
    assert_int_equal(sv.ttft_steps, 2);
    assert_int_equal(sv.chunk_context, 1000);
    near(sv.tpot_s, (w + 42064 * kv) / beta, 1e-12);
    near(sv.ttft_s, 2 * (w + 42064 * kv) / beta, 1e-12);
    rf_fit f;
    double most;
    uint64_t mem = 80ull << 30;
    assert_int_equal(rf_serve_fit(&m, &o, &sv, mem, 0.92, 6ull << 30, &f, &most, NULL), RF_OK);
    assert_true(f.kv_bytes == 5373952000ull);
    assert_true(most == floor((f.budget_bytes - (double)f.weight_bytes - 1000 * kv) / (1250 * kv)));
    so.prefix.cascade = false;
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    near(sv.tpot_s, (w + 73064 * kv) / beta, 1e-12);
    /* no prefix: capacity's pool / kv_seq(S_d) */
    so.prefix.shared = 0;
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, NULL), RF_OK);
    assert_int_equal(rf_serve_fit(&m, &o, &sv, mem, 0.92, 6ull << 30, &f, &most, NULL), RF_OK);
    assert_true(f.kv_bytes == 32ull * 2250 * 131072);
    assert_true(most == floor((f.budget_bytes - (double)f.weight_bytes) / (2250 * kv)));
    rf_err e;
    so.prefix.shared = 2000; /* the whole prompt: no own token to prefill */
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &sv, &e), RF_EINVAL);
    rf_model g = model("gemma-2-9b-it");
    so.prefix.shared = 10;
    assert_int_equal(rf_serve_compute(&g, &o, &roof, &so, &sv, &e), RF_EINVAL);
}

/* Whole requests on a layout: the decode cycles summed in closed form (no
 * PP) equal rf_par_compute's cycle at every context, summed one by one, to
 * 1e-9 relative, across TP, EP, DP, MLA under TP and a sliding window
 * crossed (gemma-2's 4096: P = 4000, N = 200); under PP the step-by-step
 * sum is rf_par_compute's too. On the single-device layout every figure is
 * generate's sum-of-max one (a device's floor is its operators' sum-of-max);
 * DP 2 doubles the deployment's tokens/s at the same latency; TTFT is the
 * prefill's cycle. */
static void generate_on_layouts(void **state)
{
    (void)state;
    static rf_par par;
    static rf_par_sweep ps;
    rf_hw h;
    assert_int_equal(rf_hw_preset("h100-sxm", &h, NULL), RF_OK);
    rf_roof roof = roof_of("h100-sxm");
    static const struct {
        const char *model;
        rf_layout l;
        int64_t b, p, n;
    } cases[] = {
        {"llama-3-8b", {2, 1, 1, 1}, 8, 100, 300},
        {"llama-3-8b", {4, 1, 1, 2}, 64, 1000, 50},
        {"mixtral-8x7b", {2, 1, 2, 1}, 4, 500, 40},
        {"gemma-2-9b-it", {2, 1, 1, 1}, 2, 4000, 200},
        {"deepseek-v2-lite", {2, 1, 1, 1}, 16, 64, 30},
        {"llama-3-8b", {2, 2, 1, 1}, 4, 200, 20},
        {"llama-3-8b", {1, 1, 1, 1}, 512, 10, 100},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rf_model m = model(cases[c].model);
        rf_step_opts o = rf_step_opts_for_model(&m);
        o.batch = cases[c].b;
        rf_par_opts po = {.layout = cases[c].l,
                          .links = h.links,
                          .util = 0.92,
                          .reserve_bytes = 6ull << 30,
                          .mem_bytes = h.mem_bytes};
        rf_generate_par g;
        rf_err e;
        int64_t p = cases[c].p, n = cases[c].n;
        if (rf_generate_par_compute(&m, &o, &roof, &po, p, n, &ps, &g, &e))
            fail_msg("%s: %s", cases[c].model, e.msg);
        assert_true(g.closed_form == (cases[c].l.pp == 1));
        double loop = 0, first = 0, last = 0;
        rf_step_opts d = o;
        d.phase = RF_DECODE;
        for (int64_t s = p + 1; s <= p + n - 1; s++) {
            d.context = s;
            assert_int_equal(rf_par_compute(&m, &d, &roof, &po, &par, NULL), RF_OK);
            loop += par.cycle_s;
            first = s == p + 1 ? par.cycle_s : first;
            last = par.cycle_s;
        }
        near(g.decode_s, loop, 1e-9);
        near(g.tpot_first_s, first, 1e-9);
        near(g.tpot_last_s, last, 1e-9);
        rf_step_opts pre = o;
        pre.phase = RF_PREFILL;
        pre.tokens = p;
        pre.context = 0;
        assert_int_equal(rf_par_compute(&m, &pre, &roof, &po, &par, NULL), RF_OK);
        assert_true(g.ttft_s == par.cycle_s);
        near(g.tokens_per_s, (double)cases[c].l.dp * (double)(o.batch * n) / (g.ttft_s + loop),
             1e-9);
    }
    /* one device: generate's sum-of-max figures; DP 2: twice the tokens/s */
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    o.batch = 8;
    rf_generate one;
    rf_generate_par g, g2;
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 1024, 128, &one, NULL), RF_OK);
    rf_par_opts po = {.layout = {1, 1, 1, 1},
                      .links = h.links,
                      .util = 0.92,
                      .reserve_bytes = 6ull << 30,
                      .mem_bytes = h.mem_bytes};
    assert_int_equal(rf_generate_par_compute(&m, &o, &roof, &po, 1024, 128, &ps, &g, NULL), RF_OK);
    near(g.decode_s, one.decode.sum_of_max_s, 1e-12);
    near(g.ttft_s, one.ttft_sum_of_max_s, 1e-12);
    po.layout.dp = 2;
    assert_int_equal(rf_generate_par_compute(&m, &o, &roof, &po, 1024, 128, &ps, &g2, NULL), RF_OK);
    assert_true(g2.latency_s == g.latency_s && g2.devices == 2);
    near(g2.tokens_per_s, 2 * g.tokens_per_s, 1e-15);
    near(g2.tokens_per_s_device, g.tokens_per_s_device, 1e-15);
    /* the frontier on TP 2: tokens/s a device, each point a generation */
    static rf_frontier_point pts[6];
    po.layout = (rf_layout){2, 1, 1, 1};
    assert_int_equal(rf_frontier_par_compute(&m, &o, &roof, &po, 1024, 128, &ps, pts, 6, NULL),
                     RF_OK);
    o.batch = 6;
    assert_int_equal(rf_generate_par_compute(&m, &o, &roof, &po, 1024, 128, &ps, &g, NULL), RF_OK);
    assert_true(pts[5].tokens_per_s == g.tokens_per_s_device && pts[5].tpot_s == g.tpot_mean_s);
    assert_true(pts[5].pareto_tpot && pts[0].pareto_ttft);
}

/* t drafting itself (K = 4, alpha 0.8) for B requests of P + 2 tokens:
 * one verification, after P + 1 cached; o gets the step options. */
static rf_spec verify_alone(const rf_model *t, const rf_roof *roof, int64_t batch, int64_t prompt,
                            rf_step_opts *o)
{
    *o = rf_step_opts_for_model(t);
    o->batch = batch;
    rf_generate g;
    rf_spec sp;
    assert_int_equal(rf_generate_compute(t, o, roof, prompt, 2, &g, NULL), RF_OK);
    assert_int_equal(rf_spec_compute(t, t, o, o, roof, &g, 4, 0.8, &sp, NULL), RF_OK);
    return sp;
}

/* The target's verification step scores every one of its K + 1 query
 * tokens: lm_head at M = B (K + 1) rows, not the prefill's B. Llama-3-8B
 * (H = 4,096, V = 128,256) on the H100 SXM, B = 256, P = 512, N = 2 (one
 * context, S = 513), K = 4: the prefill of 256 x 5 tokens after 513 is
 * compute-bound (~2 x 8e9 x 1,280 = 20 TFLOP, ~20 ms, against 15 GB of
 * weights, 4.5 ms), and lm_head's 4 more rows a sequence add
 *     2 x 256 x 4 x 4,096 x 128,256 = 1,075,889,307,648 FLOPs (~1.09 ms)
 * while the compulsory bytes stay (its weights are read once either way):
 *     verify = max((F_prefill + 1,075,889,307,648) / pi, Q_prefill / beta).
 * The old step (lm_head on the last position only) gives F_prefill / pi. */
static void verify_scores_every_token(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model t = model("llama-3-8b");
    rf_step_opts o;
    rf_spec sp = verify_alone(&t, &roof, 256, 512, &o);
    rf_step_opts v = o;
    v.phase = RF_PREFILL;
    v.tokens = 5;
    v.context = 513;
    assert_int_equal(rf_step_compute(&t, &v, &roof, &st, NULL), RF_OK);
    assert_true(st.regime == RF_COMPUTE_BOUND);
    double f = (double)st.flops + 1075889307648.0;
    near(sp.verify_s, fmax(f / roof.peak_flops_per_s, (double)st.total_bytes / roof.bw_bytes_per_s),
         1e-12);
    assert_true(sp.verify_s > st.floor_s + 1e-3); /* the 1.09 ms the old count missed */
}

/* generate --draft on an MLA model: the verification's floor is the lesser
 * of the expanding prefill and the absorbed kernel (rf_spec_compute).
 * DeepSeek-V2-Lite (27 layers, 16 heads, latent 512 + rope 64) drafting
 * itself, B = 64, P = 8,000, N = 2 (one verification, after S = 8,001
 * cached), K = 4. Expanding, kv_b_proj runs on 64 x 8,006 = 512,384 rows,
 * 2 x 512 x 16 x 256 FLOPs a row and layer: 58 TFLOP, 58 ms at 989.4
 * TFLOP/s, before anything else. Absorbed, the 5 queries of a sequence are
 * 5 decode rows against the latent, read once: by hand, the decode of
 * 320 rows at context 8,002 (the first query's keys) with its K/V read
 * once a sequence, 64 x 8,002 latents of 576 x 2 B x 27 layers, not 320 x;
 *     verify = max(F / pi, (Q - 4/5 KV) / beta), under a third of F_pre / pi. */
static void mla_verify_absorbed(void **state)
{
    (void)state;
    rf_roof roof = roof_of("h100-sxm");
    rf_model t = model("deepseek-v2-lite");
    rf_step_opts o;
    rf_spec sp = verify_alone(&t, &roof, 64, 8000, &o);
    rf_step_opts d = o;
    d.batch = 320;
    d.context = 8002;
    assert_int_equal(rf_step_compute(&t, &d, &roof, &st, NULL), RF_OK);
    assert_true(st.kv_bytes == 320ull * 8002 * 576 * 2 * 27);
    double q = (double)(st.total_bytes - st.kv_bytes / 5 * 4);
    near(sp.verify_s, fmax((double)st.flops / roof.peak_flops_per_s, q / roof.bw_bytes_per_s),
         1e-12);
    rf_step_opts v = o;
    v.phase = RF_PREFILL;
    v.tokens = 5;
    v.context = 8001;
    assert_int_equal(rf_step_compute(&t, &v, &roof, &st, NULL), RF_OK);
    assert_true(sp.verify_s < (double)st.flops / roof.peak_flops_per_s / 3);
}

/* serve on a layout. Llama-3-8B (H = 4,096, V = 128,256, 32 layers) on the
 * H100 SXM (NVLink 4, 450 GB/s a direction, 1 us a hop), B = 32, P = 2000,
 * N = 500, C = 512: the steady state of serve_steady_state, B = 32 decode
 * tokens at S_d = 2250 and one chunk of T_p = 128 after S_c = 512, so every
 * collective counts M = 32 + 128 = 160 rows and the logits L = 32 + 1 = 33.
 * TP 2, one stage (first and last), each collective the least over the
 * algorithms (docs/accounting.md, "Collectives") with t = 2:
 *     all-reduce n = 160 x 4,096 x 2 = 1,310,720 B: ring, tree and
 *       two-shot 2 (1/2) n / 450e9 + 2 x 1 us = 2.91271 + 2 = 4.91271 us,
 *       one-shot n / 450e9 + 1 us = 3.91271, in-switch (NVSwitch)
 *       (1/2) n / 450e9 + 2 us = 1.45636 + 2 = 3.45636 us: in-switch,
 *       64 of them (attention and MLP, 32 layers) + the embedding's;
 *     all-gather n = 33 x 128,256 x 2 = 8,464,896 B:
 *       (1/2) n / 450e9 + 1 us = 9.40544 + 1 = 10.40544 us;
 *     collectives = 65 x 3.45636 + 10.40544 = 235.07 us.
 * The device's operators are its shard's mixed step (16 query heads, 4 KV
 * heads, ffn 7,168, vocabulary 64,128: rf_layout_shard) summed as
 * sum-of-max, so TPOT = som(shard's mixed step) + 235.07 us; the all-reduce
 * is the one `step --tp 2 --phase prefill --tokens 160` counts (M = 160).
 * DP 2 doubles the deployment's tokens/s at the same TPOT; TP 1 x DP 1 is
 * the single device's step summed as sum-of-max. */
static void serve_on_layouts(void **state)
{
    (void)state;
    static rf_par par, pre;
    static rf_serve sv, plain;
    static rf_step shard_mix;
    rf_hw h;
    assert_int_equal(rf_hw_preset("h100-sxm", &h, NULL), RF_OK);
    rf_roof roof = roof_of("h100-sxm");
    rf_model m = model("llama-3-8b");
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_serve_opts so = {.concurrency = 32, .prompt = 2000, .output = 500, .chunk = 512};
    rf_par_opts po = {.layout = {2, 1, 1, 1},
                      .links = h.links,
                      .util = 0.92,
                      .reserve_bytes = 6ull << 30,
                      .mem_bytes = h.mem_bytes};
    rf_serve_par pv, pv2;
    assert_int_equal(rf_serve_par_compute(&m, &o, &roof, &po, &so, &sv, &par, &pv, NULL), RF_OK);
    assert_int_equal(pv.rows, 160);
    assert_int_equal(pv.logit_rows, 33);
    const rf_coll *ar = coll_named(&par, 0, "tp_allreduce_attn");
    const rf_coll *ag = coll_named(&par, 0, "lm_head_allgather");
    assert_non_null(ar);
    assert_non_null(ag);
    assert_true(ar->bytes == 1310720 && ar->count == 32);
    assert_true(ag->bytes == 8464896 && ag->count == 1);
    assert_true(coll_named(&par, 0, "tp_allreduce_mlp")->count == 32);
    assert_true(coll_named(&par, 0, "embed_allreduce")->count == 1);
    double t_ar = 1310720 / 2 / 450e9 + 2e-6, t_ag = 8464896 / 2 / 450e9 + 1e-6;
    near(par.stages[0].comm_s, 65 * t_ar + t_ag, 1e-12);
    assert_true(round(par.stages[0].comm_s * 1e8) == 23507); /* 235.07 us */
    rf_model shard;
    assert_int_equal(rf_layout_shard(&m, &po.layout, 0, 32, &shard, NULL), RF_OK);
    assert_true(shard.n_q == 16 && shard.n_kv == 4 && shard.ffn == 7168 && shard.vocab == 64128);
    rf_mixed_opts mo = {.decode_batch = 32,
                        .decode_context = 2250,
                        .chunk = 128,
                        .chunk_context = 512,
                        .chunks = 1};
    assert_int_equal(rf_mixed_step_compute(&shard, &o, &roof, &mo, &shard_mix, NULL), RF_OK);
    near(pv.tpot_s, shard_mix.floor_sum_of_max_s + 65 * t_ar + t_ag, 1e-12);
    near(pv.ttft_s, 4 * pv.tpot_s, 1e-15);
    near(pv.tokens_per_s, 32 / pv.tpot_s, 1e-15);
    near(pv.tokens_per_s_device, 16 / pv.tpot_s, 1e-15);
    /* step --tp 2 at the same M: the prefill of 1 x 160 tokens */
    rf_step_opts p160 = o;
    p160.phase = RF_PREFILL;
    p160.tokens = 160;
    assert_int_equal(rf_par_compute(&m, &p160, &roof, &po, &pre, NULL), RF_OK);
    assert_true(coll_named(&pre, 0, "tp_allreduce_attn")->time_s == ar->time_s);
    /* KV a replica: 4 KV heads a device, kv_tok 65,536 B; the pool holds
     * floor(pool / (2250 x 65,536)) sequences */
    rf_par_capacity cap;
    assert_int_equal(rf_par_capacity_compute(&m, &o, &po, 2250, &cap, NULL), RF_OK);
    assert_true(pv.max_concurrency == floor(cap.sequences) && pv.fits);
    assert_true(par.stages[0].kv_bytes_resident == 32ull * 2250 * 65536);

    /* DP 2: the same step, twice the deployment's tokens/s */
    po.layout.dp = 2;
    assert_int_equal(rf_serve_par_compute(&m, &o, &roof, &po, &so, &sv, &par, &pv2, NULL), RF_OK);
    assert_true(pv2.tpot_s == pv.tpot_s && pv2.devices == 4);
    near(pv2.tokens_per_s, 2 * pv.tokens_per_s, 1e-15);
    near(pv2.tokens_per_s_device, pv.tokens_per_s_device, 1e-15);

    /* TP 1 x DP 1: the single device's steady state, its sum-of-max floor */
    po.layout = rf_layout_single();
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, &plain, NULL), RF_OK);
    assert_int_equal(rf_serve_par_compute(&m, &o, &roof, &po, &so, &sv, &par, &pv, NULL), RF_OK);
    assert_true(pv.tpot_s == plain.step.floor_sum_of_max_s && par.stages[0].n_coll == 0);
    assert_true(sv.step.flops == plain.step.flops && par.stages[0].step.flops == plain.step.flops);
    assert_true(pv.rows == 160 && pv.logit_rows == 33);

    /* TP 2 x PP 2: two micro-batches of 16 decode and 64 prompt tokens
     * (M = 80, L = 17); TPOT the cycle, the longer of a micro-batch's trip
     * through both stages and their send and 2 x the slowest stage */
    po.layout = (rf_layout){2, 2, 1, 1};
    assert_int_equal(rf_serve_par_compute(&m, &o, &roof, &po, &so, &sv, &par, &pv, NULL), RF_OK);
    assert_true(pv.micro_batches == 2 && pv.micro_decode == 16 && pv.micro_prompt_tokens == 64);
    assert_true(pv.rows == 80 && pv.logit_rows == 17);
    assert_true(coll_named(&par, 0, "pp_send")->bytes == 80 * 4096 * 2);
    assert_true(coll_named(&par, 1, "lm_head_allgather")->bytes == 17 * 128256 * 2);
    assert_null(coll_named(&par, 0, "lm_head_allgather"));
    assert_true(pv.tpot_s == fmax(par.token_latency_s, 2 * par.stages[par.slowest].floor_s));
    assert_true(par.token_latency_s == par.stages[0].floor_s + par.stages[1].floor_s + par.send_s);

    /* a shared prefix of 1,000 tokens, held once: a device's KV
     * 65,536 x (1,000 + 32 x (2,250 - 1,000)) = 2,686,976,000 B; the pool
     * admits floor((tokens - 1,000) / 1,250) requests */
    po.layout = (rf_layout){2, 1, 1, 1};
    so.prefix = (rf_prefix){1000, true};
    assert_int_equal(rf_serve_par_compute(&m, &o, &roof, &po, &so, &sv, &par, &pv, NULL), RF_OK);
    assert_true(par.stages[0].kv_bytes_resident == 2686976000ull);
    assert_true(pv.max_concurrency == floor((cap.tokens - 1000) / 1250));
    assert_true(pv.ttft_steps == 2); /* ceil(1,000 / 512) */
    so.prefix = (rf_prefix){0, false};

    /* EP: Mixtral-8x7B (top-2 of 8, H = 4,096) on TP 2 x EP 2: each MoE
     * layer's dispatch and combine carry M k H b_a = 160 x 2 x 4,096 x 2 =
     * 2,621,440 B in place of the MLP's all-reduce */
    rf_model mx = model("mixtral-8x7b");
    rf_step_opts ox = rf_step_opts_for_model(&mx);
    po.layout = (rf_layout){2, 1, 2, 1};
    assert_int_equal(rf_serve_par_compute(&mx, &ox, &roof, &po, &so, &sv, &par, &pv, NULL), RF_OK);
    assert_true(coll_named(&par, 0, "ep_dispatch")->bytes == 2621440);
    assert_true(coll_named(&par, 0, "ep_combine")->count == 32);
    assert_null(coll_named(&par, 0, "tp_allreduce_mlp"));
    /* EP 2 across two replicas of TP 1 (g = 2): the group's 2 x 160 rows
     * route, a replica still sends its own 160 x 2 rows */
    po.layout = (rf_layout){1, 1, 2, 2};
    assert_int_equal(rf_serve_par_compute(&mx, &ox, &roof, &po, &so, &sv, &par, &pv, NULL), RF_OK);
    assert_true(coll_named(&par, 0, "ep_dispatch")->bytes == 2621440 && pv.devices == 2);
    /* a sliding window (gemma-2) runs; MLA (deepseek-v2-lite) is refused,
     * as the single device's mixed step refuses it */
    rf_model gm = model("gemma-2-9b-it");
    rf_step_opts og = rf_step_opts_for_model(&gm);
    po.layout = (rf_layout){2, 1, 1, 1};
    assert_int_equal(rf_serve_par_compute(&gm, &og, &roof, &po, &so, &sv, &par, &pv, NULL), RF_OK);
    assert_true(pv.tpot_s > 0 && pv.rows == 160);
    rf_err e;
    rf_model mla = model("deepseek-v2-lite");
    rf_step_opts om = rf_step_opts_for_model(&mla);
    assert_int_equal(rf_serve_par_compute(&mla, &om, &roof, &po, &so, &sv, &par, &pv, &e),
                     RF_EINVAL);
    assert_non_null(strstr(e.msg, "MLA"));
    po.layout = (rf_layout){3, 1, 1, 1};
    assert_int_equal(rf_serve_par_compute(&m, &o, &roof, &po, &so, &sv, &par, &pv, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "--tp 3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_form_matches_loop),
        cmocka_unit_test(cost_flat_in_n),
        cmocka_unit_test(llama_by_hand),
        cmocka_unit_test(one_token_and_refusals),
        cmocka_unit_test(speculative),
        cmocka_unit_test(mixed_equals_parts),
        cmocka_unit_test(serve_steady_state),
        cmocka_unit_test(prefix_cache),
        cmocka_unit_test(frontier),
        cmocka_unit_test(serve_speculative),
        cmocka_unit_test(serve_prefix),
        cmocka_unit_test(generate_on_layouts),
        cmocka_unit_test(verify_scores_every_token),
        cmocka_unit_test(serve_on_layouts),
        cmocka_unit_test(mla_verify_absorbed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
