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
#include "roofline/rf_serve.h"
#include "roofline/rf_step.h"

/* |a - b| <= rel * |b| */
static void near(double a, double b, double rel)
{
    if (!(fabs(a - b) <= rel * fabs(b)))
        fail_msg("%.15g is not within %.3g relative of %.15g", a, rel, b);
}

static rf_roof roof_of(const char *hw)
{
    rf_hw h;
    rf_roof r;
    assert_int_equal(rf_hw_preset(hw, &h, NULL), RF_OK);
    assert_int_equal(rf_hw_roof(&h, RF_BF16, &r, NULL), RF_OK);
    return r;
}

static rf_model model(const char *name)
{
    rf_model m;
    assert_int_equal(rf_model_preset(name, &m, NULL), RF_OK);
    return m;
}

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
        rf_step_opts v = o;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_form_matches_loop), cmocka_unit_test(cost_flat_in_n),
        cmocka_unit_test(llama_by_hand),            cmocka_unit_test(one_token_and_refusals),
        cmocka_unit_test(speculative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
