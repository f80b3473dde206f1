/* test_predict_req.c - whole requests predicted on a calibration
 * (rf_predict.h): generate's TTFT and decode time equal the hand sum of
 * rf_calib_predict_step over every context (also across a sliding window's
 * cap, and at N = 100,000 in well under a second), serve's steady state is
 * its mixed step predicted, frontier's points are the generations predicted
 * with both fronts marked on them, operators outside the calibration are
 * counted, and a cascade prefix kernel is refused.
 *
 * The calibration is synthetic: every kind's points have eff = 0.5 and the
 * overhead c0 = 0, so every operator predicts
 *     t = c0 + floor / eff = 2 max(F / pi, Q / beta)
 * on the calibration's roof, and a step (the sum of count x t) predicts
 * twice its sum-of-max floor on that roof. With the hardware roof equal to
 * the calibration's, a predicted generation is twice the sum-of-max figures
 * rf_generate_compute sums in closed form: a second, independent check. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "roofline/rf_calib.h"
#include "roofline/rf_model.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_reader.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_step.h"

/* The calibration's roof, and the hardware roof of every step here. */
#define BW 20e9
#define PEAK 200e9
static const rf_roof roof = {
    .math = RF_BF16, .peak_flops_per_s = PEAK, .bw_bytes_per_s = BW, .ridge = PEAK / BW};

static bool close_rel(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want);
}

/* A series of kind k at (a, b) over the coordinates x[0..n-1]; a point
 * moves F = x flops and Q = 4 x bytes in 2 floor seconds (eff 0.5). */
static void add_series(rf_calib *c, rf_calib_kind k, int64_t a, int64_t b, const int64_t *x,
                       size_t n)
{
    rf_calib_series *s = &c->series[c->n_series++];
    memset(s, 0, sizeof *s);
    s->kind = k, s->a = a, s->b = b, s->n = n;
    for (size_t i = 0; i < n; i++) {
        double f = (double)x[i], q = 4 * (double)x[i];
        s->pt[i] = (rf_calib_point){
            .x = x[i], .flops = f, .bytes = q, .time_s = 2 * fmax(f / PEAK, q / BW), .eff = 0.5};
    }
}

/* GEMMs over M = 1..64 at llama-3-8b's (K, N) box, decode attention over
 * 16..8192 keys and prefill attention over 16..8192 (d_h 128 and 256), the
 * element-wise kinds over 2^10..2^30 elements or bytes. */
static rf_calib *synthetic(void)
{
    rf_calib *c = calloc(1, sizeof *c);
    static const int64_t m[] = {1, 8, 64}, dec[] = {16, 1024, 8192}, pre[] = {16, 1024, 8192},
                         el[] = {1 << 10, 1 << 20, 1 << 30};
    c->version = RF_CALIB_VERSION;
    c->bw_bytes_per_s = BW, c->peak_flops_per_s = PEAK;
    add_series(c, RF_CALIB_GEMM, 4096, 1024, m, 3);
    add_series(c, RF_CALIB_GEMM, 4096, 128256, m, 3);
    add_series(c, RF_CALIB_GEMM, 14336, 4096, m, 3);
    add_series(c, RF_CALIB_GEMM, 4096, 14336, m, 3);
    for (int64_t dh = 128; dh <= 256; dh *= 2) {
        add_series(c, RF_CALIB_ATTN_DECODE, dh, 0, dec, 3);
        add_series(c, RF_CALIB_ATTN_PREFILL, dh, 0, pre, 3);
    }
    for (int k = RF_CALIB_NORM; k < RF_CALIB_KIND_COUNT; k++)
        add_series(c, (rf_calib_kind)k, 0, 0, el, 3);
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++)
        c->fit[k] = (rf_calib_fit){.efficiency = 0.5}; /* c0 = 0 */
    return c;
}

static rf_model model(const char *name)
{
    rf_model m;
    rf_err e;
    assert_int_equal(rf_model_preset(name, &m, &e), RF_OK);
    return m;
}

/* The hand sums: the prefill step predicted, and every decode step at
 * S = P+1..P+N-1 predicted one after another. */
typedef struct hand {
    double ttft_s, decode_s, first_s, last_s;
    size_t prefill_outside;
} hand;

static hand hand_sum(const rf_calib *c, const rf_model *m, int64_t batch, int64_t p, int64_t n)
{
    rf_step *st = malloc(sizeof *st);
    rf_step_pred *pr = malloc(sizeof *pr);
    rf_err e;
    hand h = {0};
    rf_step_opts o = rf_step_opts_default();
    o.phase = RF_PREFILL, o.batch = batch, o.tokens = p, o.context = 0;
    assert_int_equal(rf_step_compute(m, &o, &roof, st, &e), RF_OK);
    assert_int_equal(rf_calib_predict_step(c, st, (double)(batch * p), pr, &e), RF_OK);
    h.ttft_s = pr->time_s, h.prefill_outside = pr->n_outside;
    o.phase = RF_DECODE, o.tokens = 1;
    for (int64_t s = p + 1; s <= p + n - 1; s++) {
        o.context = s;
        assert_int_equal(rf_step_compute(m, &o, &roof, st, &e), RF_OK);
        assert_int_equal(rf_calib_predict_step(c, st, (double)batch, pr, &e), RF_OK);
        h.decode_s += pr->time_s;
        h.first_s = s == p + 1 ? pr->time_s : h.first_s;
        h.last_s = pr->time_s;
    }
    free(st);
    free(pr);
    return h;
}

/* The prediction against the hand sum (1e-12) and against twice the
 * closed-form sum-of-max figures of rf_generate_compute (1e-9: the closed
 * form sums arithmetic series). */
static void check_generate(const rf_model *m, int64_t batch, int64_t p, int64_t n,
                           rf_generate_pred *g)
{
    rf_calib *c = synthetic();
    rf_err e;
    rf_step_opts o = rf_step_opts_default();
    o.batch = batch;
    assert_int_equal(rf_calib_predict_generate(c, m, &o, &roof, p, n, NULL, g, &e), RF_OK);
    hand h = hand_sum(c, m, batch, p, n);
    assert_true(close_rel(g->ttft_s, h.ttft_s, 1e-12));
    assert_true(close_rel(g->decode_s, h.decode_s, 1e-12));
    assert_true(close_rel(g->tpot_first_s, h.first_s, 1e-12));
    assert_true(close_rel(g->tpot_last_s, h.last_s, 1e-12));
    assert_true(close_rel(g->tpot_mean_s, h.decode_s / (double)(n - 1), 1e-12));
    assert_true(close_rel(g->latency_s, h.ttft_s + h.decode_s, 1e-12));
    assert_true(close_rel(g->tokens_per_s, (double)(batch * n) / (h.ttft_s + h.decode_s), 1e-12));
    assert_int_equal(g->decode_steps, n - 1);
    rf_generate fl;
    assert_int_equal(rf_generate_compute(m, &o, &roof, p, n, &fl, &e), RF_OK);
    assert_true(close_rel(g->ttft_s, 2 * fl.ttft_sum_of_max_s, 1e-9));
    assert_true(close_rel(g->decode_s, 2 * fl.decode.sum_of_max_s, 1e-9));
    free(c);
}

/* llama-3-8b, B = 2, P = 16, N = 40: contexts 17..55, one affine piece;
 * the attention row (keys S) predicted at each, the others once. */
static void generate_hand_sum(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_generate_pred g;
    check_generate(&m, 2, 16, 40, &g);
    assert_int_equal(g.pieces, 1);
    assert_int_equal(g.ops_varying, 1); /* attention: its keys and K/V read */
    assert_true(g.ops_fixed >= 8);
    assert_int_equal(g.n_outside, 0);
}

/* gemma-2-9b-it (window 4096 on even layers), P = 4000, N = 200: contexts
 * 4001..4199 cross the cap at 4096, so the sliding rows stop moving there:
 * more than one piece, and still the hand sum. */
static void generate_sliding_window(void **state)
{
    (void)state;
    rf_model m = model("gemma-2-9b-it");
    rf_generate_pred g;
    check_generate(&m, 1, 4000, 200, &g);
    assert_true(g.pieces >= 2);
    assert_true(g.ops_varying >= 2); /* the sliding and the global attention rows */
}

/* N = 100,000 at P = 16: one piece, 99,999 contexts of the attention row,
 * in well under a second (measured about 0.05 s in Release); still twice
 * the closed-form sum-of-max. */
static void generate_long(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_calib *c = synthetic();
    rf_err e;
    rf_step_opts o = rf_step_opts_default();
    rf_generate_pred g;
    rf_generate fl;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(rf_calib_predict_generate(c, &m, &o, &roof, 16, 100000, NULL, &g, &e), RF_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_true(wall < 1.0);
    assert_int_equal(rf_generate_compute(&m, &o, &roof, 16, 100000, &fl, &e), RF_OK);
    assert_true(close_rel(g.decode_s, 2 * fl.decode.sum_of_max_s, 1e-9));
    assert_int_equal(g.decode_steps, 99999);
    /* contexts past 8,192 keys lie outside the decode attention series */
    assert_int_equal(g.outside_decode, 1);
    free(c);
}

/* Outside the calibration, counted: P = 100 puts the prefill's GEMMs at
 * M = 100 past the grid's 64 (every GEMM row but lm_head, which runs one
 * position a sequence, M = 1); contexts past 8,192 keys put the decode's
 * attention row outside, once however many contexts. */
static void outside_counted(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_calib *c = synthetic();
    rf_err e;
    rf_step_opts o = rf_step_opts_default();
    rf_step *st = malloc(sizeof *st);
    rf_generate_pred g;
    rf_step_opts pre = o;
    pre.phase = RF_PREFILL, pre.tokens = 100, pre.context = 0;
    assert_int_equal(rf_step_compute(&m, &pre, &roof, st, &e), RF_OK);
    size_t gemms_past = 0;
    for (size_t i = 0; i < st->n_ops; i++)
        gemms_past += st->ops[i].kind == RF_OP_GEMM && st->ops[i].m > 64;
    assert_true(gemms_past >= 7); /* q k v o gate up down */
    assert_int_equal(rf_calib_predict_generate(c, &m, &o, &roof, 100, 8, NULL, &g, &e), RF_OK);
    assert_int_equal(g.outside_prefill, gemms_past);
    assert_int_equal(g.outside_decode, 0);
    assert_int_equal(g.n_outside, gemms_past);
    /* contexts 8,101..8,299: the attention row outside from 8,193 on */
    assert_int_equal(rf_calib_predict_generate(c, &m, &o, &roof, 8100, 200, NULL, &g, &e), RF_OK);
    assert_int_equal(g.outside_decode, 1);
    free(st);
    free(c);
}

/* The shared prefix: TTFT = the prefix's prefill (1 x P_s) + the suffixes'
 * (B x (P - P_s) after P_s), each predicted; a cascade kernel refused. */
static void generate_prefix(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_calib *c = synthetic();
    rf_err e;
    rf_step_opts o = rf_step_opts_default();
    o.batch = 4;
    rf_prefix px = {.shared = 12};
    rf_generate_pred g;
    rf_generate fl;
    assert_int_equal(rf_calib_predict_generate(c, &m, &o, &roof, 16, 10, &px, &g, &e), RF_OK);
    assert_int_equal(rf_generate_prefix_compute(&m, &o, &roof, 16, 10, &px, &fl, &e), RF_OK);
    assert_true(close_rel(g.ttft_s, 2 * fl.ttft_sum_of_max_s, 1e-12));
    assert_true(close_rel(g.decode_s, 2 * fl.decode.sum_of_max_s, 1e-9));
    px.cascade = true;
    assert_int_equal(rf_calib_predict_generate(c, &m, &o, &roof, 16, 10, &px, &g, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "cascade"));
    assert_int_equal(rf_calib_predict_generate(c, &m, &o, &roof, 16, 0, NULL, &g, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "output"));
    free(c);
}

/* serve's steady state (B = 8, P = 64, N = 32, chunks of 16): TPOT = its
 * mixed step predicted (twice the step's sum-of-max), TTFT = ceil(P / C) =
 * 4 steps of it, tokens/s = B / TPOT. */
static void serve_steady_state(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_calib *c = synthetic();
    rf_err e;
    rf_step_opts o = rf_step_opts_default();
    rf_serve_opts so = {.concurrency = 8, .prompt = 64, .output = 32, .chunk = 16};
    rf_serve *sv = malloc(sizeof *sv);
    rf_serve_pred *p = malloc(sizeof *p);
    rf_step_pred *hp = malloc(sizeof *hp);
    assert_int_equal(rf_serve_compute(&m, &o, &roof, &so, sv, &e), RF_OK);
    assert_int_equal(rf_calib_predict_serve(c, sv, p, &e), RF_OK);
    assert_int_equal(rf_calib_predict_step(c, &sv->step, 1, hp, &e), RF_OK);
    assert_true(close_rel(p->tpot_s, hp->time_s, 1e-12));
    assert_true(close_rel(p->tpot_s, 2 * sv->step.floor_sum_of_max_s, 1e-12));
    assert_int_equal(sv->ttft_steps, 4);
    assert_true(close_rel(p->ttft_s, 4 * hp->time_s, 1e-12));
    assert_true(close_rel(p->tokens_per_s, 8 / hp->time_s, 1e-12));
    /* every token the step runs: 8 decode + ceil(8 x 64 / 32) = 16 prompt */
    assert_int_equal(sv->prompt_tokens, 16);
    assert_true(close_rel(p->step.tokens_per_s, 24 / hp->time_s, 1e-12));
    assert_int_equal(p->n_outside, hp->n_outside);
    free(sv);
    free(p);
    free(hp);
    free(c);
}

/* frontier, B = 1..6: each point the generation of B predicted, both
 * fronts marked as rf_pareto_mark (every pair compared) marks them. */
static void frontier_points(void **state)
{
    (void)state;
    rf_model m = model("llama-3-8b");
    rf_calib *c = synthetic();
    rf_err e;
    rf_step_opts o = rf_step_opts_default();
    rf_frontier_point pt[6];
    size_t outside[6];
    double tpot[6], ttft[6], tps[6];
    bool on_tpot[6], on_ttft[6];
    assert_int_equal(rf_calib_predict_frontier(c, &m, &o, &roof, 32, 16, pt, outside, 6, &e),
                     RF_OK);
    for (int i = 0; i < 6; i++) {
        rf_generate_pred g;
        rf_step_opts b = o;
        b.batch = i + 1;
        assert_int_equal(rf_calib_predict_generate(c, &m, &b, &roof, 32, 16, NULL, &g, &e), RF_OK);
        hand h = hand_sum(c, &m, i + 1, 32, 16);
        assert_int_equal(pt[i].batch, i + 1);
        assert_true(close_rel(pt[i].ttft_s, h.ttft_s, 1e-12));
        assert_true(close_rel(pt[i].tpot_s, h.decode_s / 15, 1e-12));
        assert_true(close_rel(pt[i].tokens_per_s, g.tokens_per_s, 1e-15));
        assert_int_equal(outside[i], g.n_outside);
        /* B x 32 prompt tokens past M = 64 from B = 3 on */
        assert_int_equal(outside[i] > 0, i + 1 >= 3);
        tpot[i] = pt[i].tpot_s, ttft[i] = pt[i].ttft_s, tps[i] = pt[i].tokens_per_s;
    }
    rf_pareto_mark(tpot, tps, 6, on_tpot);
    rf_pareto_mark(ttft, tps, 6, on_ttft);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(pt[i].pareto_tpot, on_tpot[i]);
        assert_int_equal(pt[i].pareto_ttft, on_ttft[i]);
    }
    free(c);
}

/* The hybrid stacks' attention-kind rows are kernels the calibration did
 * not time (it times softmax attention): a decode step at context 1024 of
 * Qwen3-Next (Gated DeltaNet's delta rule and short conv), Nemotron-3-Nano
 * (Mamba2's SSD scan and conv) and Llama-4-Scout (chunked attention) puts
 * each such row at exactly its floor on the calibration's roof,
 * max(F / pi, Q / beta) (eff 1, c0 0; attention's efficiency here, 0.5,
 * would double it), marked outside; softmax attention at 1,024 keys keeps
 * the calibration: twice its floor, inside. */
static void hybrid_rows_on_floor(void **state)
{
    (void)state;
    static const char *const models[] = {"qwen3-next-80b-a3b", "nemotron-3-nano", "llama-4-scout"};
    static const char *const rows[] = {"gdn_delta_rule", "gdn_conv", "mamba_ssd", "mamba_conv",
                                       "attention_chunked"};
    rf_calib *c = synthetic();
    rf_step *st = malloc(sizeof *st);
    rf_step_pred *pr = malloc(sizeof *pr);
    static rf_model m;
    rf_err e;
    size_t seen = 0, attention = 0;
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        if (rf_model_find(models[k], NULL, &m, &e))
            fail_msg("%s: %s", models[k], e.msg);
        rf_step_opts o = rf_step_opts_default();
        o.context = 1024;
        assert_int_equal(rf_step_compute(&m, &o, &roof, st, &e), RF_OK);
        assert_int_equal(rf_calib_predict_step(c, st, 1, pr, &e), RF_OK);
        for (size_t i = 0; i < st->n_ops; i++) {
            const rf_op *op = &st->ops[i];
            double floor_s = fmax((double)op->flops / PEAK, (double)op->bytes / BW);
            bool hybrid = false;
            for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
                hybrid = hybrid || !strcmp(op->name, rows[r]);
            if (hybrid) {
                if (!close_rel(pr->op[i].time_s, floor_s, 1e-12))
                    fail_msg("%s %s: %g s, floor %g s", models[k], op->name, pr->op[i].time_s,
                             floor_s);
                assert_false(pr->op[i].in_range);
                seen++;
            } else if (!strcmp(op->name, "attention")) {
                assert_true(close_rel(pr->op[i].time_s, 2 * floor_s, 1e-12));
                assert_true(pr->op[i].in_range);
                attention++;
            }
        }
    }
    assert_int_equal(seen, 5);
    assert_int_equal(attention, 3);
    free(pr);
    free(st);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generate_hand_sum), cmocka_unit_test(generate_sliding_window),
        cmocka_unit_test(generate_long),     cmocka_unit_test(outside_counted),
        cmocka_unit_test(generate_prefix),   cmocka_unit_test(serve_steady_state),
        cmocka_unit_test(frontier_points),   cmocka_unit_test(hybrid_rows_on_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
