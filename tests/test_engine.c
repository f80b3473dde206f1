/* test_engine.c - an engine's calibration (rf_engine.h, rf_engine_io.h):
 * the fit recovers known slowdowns and per-layer cost, holds k >= 1 when
 * the data would go under the floor, leaves each point out honestly; a step
 * is split and predicted term by term; the file is read, fitted, and
 * refused where it is wrong, naming the key. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_engine.h"
#include "roofline/rf_engine_io.h"
#include "roofline/rf_file.h"
#include "roofline/rf_reader.h"

static rf_engine_calib *calib_new(void)
{
    rf_engine_calib *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->version = RF_ENGINE_VERSION;
    snprintf(c->engine, sizeof c->engine, "llamacpp");
    c->bw_bytes_per_s = 50e9;
    c->peak_flops_per_s[RF_FP32] = 400e9;
    c->peak_flops_per_s[RF_INT8] = 1.6e12;
    c->act = rf_dtype_of(RF_FP32);
    c->kv = rf_dtype_of(RF_FP16);
    return c;
}

/* Llama-3-8B and llama.cpp's q4_0. */
static void llama_q4(rf_model *m, rf_dtype *q4)
{
    rf_err e;
    assert_int_equal(rf_model_find("llama-3-8b", NULL, m, &e), RF_OK);
    assert_int_equal(rf_dtype_parse("q4_0", q4, &e), RF_OK);
}

/* A roof that only builds steps: their operators' F and Q do not depend on
 * it, and the predictions use the calibration's roofs. */
static const rf_roof any_roof = {.peak_flops_per_s = 1e12, .bw_bytes_per_s = 1e11, .ridge = 10};

/* A q4_0 fit with no per-step cost. */
static rf_engine_fit q4_fit(rf_phase phase, double k_gemm, double k_attn, double layer_s,
                            size_t n_points, double loo_worst)
{
    rf_engine_fit f = {.phase = phase,
                       .k_gemm = k_gemm,
                       .k_attn = k_attn,
                       .layer_s = layer_s,
                       .n_points = n_points,
                       .loo_worst = loo_worst};
    snprintf(f.weights, sizeof f.weights, "q4_0");
    return f;
}

/* A timed step of a model with a vocabulary of v. */
static void put_v(rf_engine_calib *c, double g, double a, double e, double layers, double v,
                  double t)
{
    rf_engine_point *p = &c->pt[c->n_points++];
    snprintf(p->weights, sizeof p->weights, "q4_0");
    p->phase = RF_PREFILL;
    p->gemm_s = g, p->attn_s = a, p->other_s = e, p->layers = layers, p->vocab = v, p->time_s = t;
}

/* One of a 32,000-token vocabulary (every shape the same: no per-logit fit). */
static void put(rf_engine_calib *c, double g, double a, double e, double layers, double t)
{
    put_v(c, g, a, e, layers, 32000, t);
}

/* Times made as t = 2 G + 3 A + E + 1 ms x L + 5 ms: the fit gives k_gemm
 * 2, k_attn 3, c 1 ms, c0 5 ms, no residual, and each point left out is
 * predicted exactly from the other five (the model holds for all). */
static void fit_recovers(void **state)
{
    (void)state;
    rf_engine_calib *c = calib_new();
    const double pts[][4] = {{1.0, 0.1, 0.01, 2}, {2.0, 0.5, 0.0, 2},  {0.5, 0.2, 0.0, 4},
                             {3.0, 0.3, 0.02, 1}, {0.2, 0.05, 0.0, 8}, {1.5, 0.4, 0.0, 3}};
    for (size_t i = 0; i < 6; i++)
        put(c, pts[i][0], pts[i][1], pts[i][2], pts[i][3],
            2 * pts[i][0] + 3 * pts[i][1] + pts[i][2] + 1e-3 * pts[i][3] + 5e-3);
    rf_err e;
    assert_int_equal(rf_engine_fit_all(c, &e), RF_OK);
    assert_int_equal(c->n_fits, 1);
    const rf_engine_fit *f = &c->fit[0];
    assert_string_equal(f->weights, "q4_0");
    assert_int_equal(f->n_points, 6);
    assert_true(fabs(f->k_gemm - 2.0) < 1e-9);
    assert_true(fabs(f->k_attn - 3.0) < 1e-9);
    assert_true(fabs(f->layer_s - 1e-3) < 1e-10);
    assert_true(fabs(f->step_s - 5e-3) < 1e-10);
    assert_true(f->rms_residual < 1e-10 && f->loo_worst < 1e-8);
    /* the fitted time of a point: 2 x 1 + 3 x 0.1 + 0.01 + 2 ms + 5 ms = 2.317 s */
    assert_true(fabs(rf_engine_fitted_s(f, &c->pt[0]) - 2.317) < 1e-9);
    free(c);
}

/* The sampler's cost a logit, where the shapes differ in vocabulary:
 * t = 2 G + 3 A + E + 1 ms x L + 20 ns x V + 5 ms over six points of
 * vocabularies 32,000 to 152,000 gives c_v = 20 ns and the rest as in
 * fit_recovers. On one vocabulary (every V 128,000) the same model leaves
 * c_v unfitted (0), and c0 takes the whole sampler: 5 ms + 20 ns x 128,000
 * = 7.56 ms. */
static void fit_per_logit(void **state)
{
    (void)state;
    const double pts[][5] = {{1.0, 0.1, 0.01, 2, 32000}, {2.0, 0.5, 0.0, 2, 152000},
                             {0.5, 0.2, 0.0, 4, 64000},  {3.0, 0.3, 0.02, 1, 128000},
                             {0.2, 0.05, 0.0, 8, 32000}, {1.5, 0.4, 0.0, 3, 100000}};
    for (int one_vocab = 0; one_vocab < 2; one_vocab++) {
        rf_engine_calib *c = calib_new();
        for (size_t i = 0; i < 6; i++) {
            double v = one_vocab ? 128000 : pts[i][4];
            put_v(c, pts[i][0], pts[i][1], pts[i][2], pts[i][3], v,
                  2 * pts[i][0] + 3 * pts[i][1] + pts[i][2] + 1e-3 * pts[i][3] + 20e-9 * v + 5e-3);
        }
        rf_err e;
        assert_int_equal(rf_engine_fit_all(c, &e), RF_OK);
        const rf_engine_fit *f = &c->fit[0];
        assert_true(fabs(f->k_gemm - 2.0) < 1e-9 && fabs(f->k_attn - 3.0) < 1e-9);
        assert_true(fabs(f->layer_s - 1e-3) < 1e-10);
        assert_true(fabs(f->vocab_s - (one_vocab ? 0.0 : 20e-9)) < 1e-14);
        assert_true(fabs(f->step_s - (one_vocab ? 7.56e-3 : 5e-3)) < 1e-10);
        assert_true(f->rms_residual < 1e-10 && f->loo_worst < 1e-8);
        free(c);
    }
}

/* Steps faster than their floor (t = G / 2, as if the roofs were half the
 * machine's): the unconstrained fit would take k_gemm = 1/2; held at 1 and
 * c, c0 at 0, the prediction is the floor, and every point, in the fit or
 * left out of it, is off by (G - G/2) / (G/2) = 100%. */
static void fit_holds_floor(void **state)
{
    (void)state;
    rf_engine_calib *c = calib_new();
    for (int i = 1; i <= 5; i++)
        put(c, 0.1 * i, 0.0, 0.0, 2, 0.05 * i);
    rf_err e;
    assert_int_equal(rf_engine_fit_all(c, &e), RF_OK);
    const rf_engine_fit *f = &c->fit[0];
    assert_true(f->k_gemm == 1.0 && f->k_attn == 1.0 && f->layer_s == 0.0 && f->step_s == 0.0);
    assert_true(fabs(f->rms_residual - 1.0) < 1e-12 && fabs(f->worst_residual - 1.0) < 1e-12);
    assert_true(fabs(f->loo_median - 1.0) < 1e-12);
    free(c);
}

/* Leave-one-out is a prediction without the point: five points on
 * t = 2.001 G (A = 0.001 G, one layer), the last of them 10% slow. Left
 * out, it is predicted from the four exact ones (through the origin: no
 * per-layer or per-step cost fits them) at t / 1.1: an error of
 * 1 - 1 / 1.1 = 0.0909. The others, left out, are predicted from fits the
 * slow point pulls, by less than the 10% it is off. */
static void loo_honest(void **state)
{
    (void)state;
    rf_engine_calib *c = calib_new();
    for (int i = 1; i <= 5; i++) {
        double g = 0.1 * i, t = 2.0 * g + 0.001 * g;
        put(c, g, 0.001 * g, 0.0, 1, i == 5 ? 1.1 * t : t);
    }
    rf_err e;
    assert_int_equal(rf_engine_fit_all(c, &e), RF_OK);
    const rf_engine_fit *f = &c->fit[0];
    assert_true(f->loo_worst >= 0.0909 - 1e-3);
    assert_true(f->loo_worst < 0.25);
    free(c);
}

static void fit_refuses(void **state)
{
    (void)state;
    rf_engine_calib *c = calib_new();
    rf_err e;
    put(c, 1.0, 0.1, 0.0, 2, 3.0);
    put(c, 2.0, 0.1, 0.0, 2, 5.0);
    assert_int_equal(rf_engine_fit_all(c, &e), RF_EINVAL); /* two points, four unknowns */
    assert_non_null(strstr(e.msg, "q4_0 prefill: 2 timed steps, at least 4"));
    put(c, 1.0, 0.1, 0.0, 2, -1.0);
    assert_int_equal(rf_engine_fit_all(c, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "step 2: time -1 s"));
    c->pt[2].time_s = 1.0;
    c->pt[2].gemm_s = NAN;
    assert_int_equal(rf_engine_fit_all(c, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "step 2: floors"));
    c->pt[2].gemm_s = 1.0;
    c->pt[2].layers = 0;
    assert_int_equal(rf_engine_fit_all(c, &e), RF_EINVAL);
    c->pt[2].layers = 2;
    c->pt[2].vocab = 0;
    assert_int_equal(rf_engine_fit_all(c, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "step 2: a vocabulary of 0"));
    free(c);
}

/* A q4_0 decode step of Llama-3-8B split on 50 GB/s: every GEMM of batch 1
 * is memory-bound (intensity about 2 FLOP/byte, the int8 ridge 32), so G
 * is the GEMMs' bytes over 50 GB/s; the prediction is the sum of its
 * terms, and never below the floor. */
static void split_and_predict(void **state)
{
    (void)state;
    rf_engine_calib *c = calib_new();
    rf_model m;
    rf_dtype q4;
    rf_err e;
    llama_q4(&m, &q4);
    rf_step_opts o = rf_engine_step_opts(c, &m, q4, RF_DECODE, 1, 1000);
    rf_step *st = malloc(sizeof *st);
    assert_non_null(st);
    assert_int_equal(rf_step_compute(&m, &o, &any_roof, st, &e), RF_OK);
    double g, a, x, gemm_bytes = 0;
    for (size_t i = 0; i < st->n_ops; i++)
        if (st->ops[i].kind == RF_OP_GEMM)
            gemm_bytes += (double)st->ops[i].count * (double)st->ops[i].bytes;
    assert_int_equal(rf_engine_split(c, st, &o, &g, &a, &x, &e), RF_OK);
    assert_true(fabs(g - gemm_bytes / 50e9) <= 1e-12 * g);
    assert_true(a > 0);
    /* a fit of k_gemm 1.5, k_attn 2, 10 us a layer, 20 ns a logit, made
     * from 6 steps (more than the unknowns, so its band is the leave-one-out
     * worst, 0.1: the high end is 1.1 x the prediction) */
    c->n_fits = 1;
    c->fit[0] = q4_fit(RF_DECODE, 1.5, 2.0, 10e-6, 6, 0.1);
    c->fit[0].vocab_s = 20e-9;
    rf_engine_pred p;
    assert_int_equal(rf_engine_predict(c, st, &o, (double)m.layers, (double)m.vocab, &p, &e),
                     RF_OK);
    double want = 1.5 * g + 2.0 * a + x + 10e-6 * (double)m.layers + 20e-9 * (double)m.vocab;
    assert_true(fabs(p.time_s - want) <= 1e-12 * want);
    assert_true(fabs(p.hi_s - 1.1 * want) <= 1e-12 * want);
    assert_true(p.lo_s >= p.floor_s && p.time_s >= p.floor_s);
    /* no fit for fp16 weights: named, with what it has */
    o.w = rf_dtype_of(RF_FP16);
    assert_int_equal(rf_engine_predict(c, st, &o, (double)m.layers, (double)m.vocab, &p, &e),
                     RF_EINVAL);
    assert_non_null(strstr(e.msg, "no fit for fp16 weights in decode (it has: q4_0 decode)"));
    free(st);
    free(c);
}

/* The committed tiny calibration: two shapes, q4_0, two prefills and two
 * decodes each, so two fits of four points. */
/* A generation on a fit of k = 1, c = 0 is the floors on the calibration's
 * roofs: its TTFT the prompt's prefill floor, its decode the floors of the
 * steps at contexts prompt + 1 .. prompt + output - 1 summed (each
 * computed here the same way), its latency the two, its TPOT mean the
 * decode over output - 1. A batch of 2 is refused: the fits are of one
 * sequence's steps. */
static void generate_sums(void **state)
{
    (void)state;
    rf_engine_calib *c = calib_new();
    rf_model m;
    rf_dtype q4;
    rf_err e;
    llama_q4(&m, &q4);
    c->n_fits = 2;
    c->fit[0] = q4_fit(RF_PREFILL, 1, 1, 0, 4, 0);
    c->fit[1] = q4_fit(RF_DECODE, 1, 1, 0, 4, 0);
    rf_step_opts o = rf_engine_step_opts(c, &m, q4, RF_DECODE, 1, 0);
    rf_step *st = malloc(sizeof *st);
    assert_non_null(st);
    rf_engine_gen g;
    assert_int_equal(rf_engine_predict_generate(c, &m, &o, &any_roof, 100, 4, st, &g, &e), RF_OK);
    /* by hand: the prefill of 100 tokens, the decodes at contexts 101, 102, 103 */
    double want[4], gs, as, xs;
    for (int j = 0; j < 4; j++) {
        rf_step_opts so =
            rf_engine_step_opts(c, &m, q4, j ? RF_DECODE : RF_PREFILL, 100, j ? 100 + j : 0);
        assert_int_equal(rf_step_compute(&m, &so, &any_roof, st, &e), RF_OK);
        assert_int_equal(rf_engine_split(c, st, &so, &gs, &as, &xs, &e), RF_OK);
        want[j] = gs + as + xs;
    }
    double decode = want[1] + want[2] + want[3];
    assert_true(fabs(g.g.ttft_s - want[0]) <= 1e-12 * want[0]);
    assert_true(fabs(g.g.decode_s - decode) <= 1e-12 * decode);
    assert_true(fabs(g.g.tpot_mean_s - decode / 3) <= 1e-12 * decode);
    assert_true(g.g.tpot_first_s == want[1] && g.g.tpot_last_s == want[3]);
    assert_true(fabs(g.g.latency_s - want[0] - decode) <= 1e-12 * g.g.latency_s);
    assert_true(fabs(g.g.tokens_per_s - 4 / g.g.latency_s) <= 1e-9 * g.g.tokens_per_s);
    /* one output token: no decode step, no TPOT */
    assert_int_equal(rf_engine_predict_generate(c, &m, &o, &any_roof, 100, 1, st, &g, &e), RF_OK);
    assert_true(g.g.decode_s == 0 && g.g.tpot_mean_s == 0 && g.decode_fit == NULL);
    o.batch = 2;
    assert_int_equal(rf_engine_predict_generate(c, &m, &o, &any_roof, 100, 4, st, &g, &e),
                     RF_EINVAL);
    assert_non_null(strstr(e.msg, "a batch of 2"));
    free(st);
    free(c);
}

static void file_reads(void **state)
{
    (void)state;
    rf_engine_calib *c = malloc(sizeof *c);
    rf_err e;
    assert_int_equal(rf_engine_calib_load(RF_TEST_DATA "/engine/llamacpp-tiny.json", c, &e), RF_OK);
    assert_int_equal(c->n_points, 8);
    assert_int_equal(c->n_fits, 2);
    assert_string_equal(c->pt[0].model, "tiny-a, 2 layers");
    for (size_t i = 0; i < c->n_fits; i++) {
        assert_int_equal(c->fit[i].n_points, 4);
        assert_true(c->fit[i].k_gemm >= 1.0 && c->fit[i].layer_s >= 0.0);
    }
    assert_true(c->bw_bytes_per_s == 50e9 && c->peak_flops_per_s[RF_INT8] == 1.6e12);
    free(c);
}

/* Each edit of the tiny file, and the message that names it. */
static void file_refuses(void **state)
{
    (void)state;
    size_t len;
    char *good = NULL;
    rf_err fe;
    assert_int_equal(
        rf_file_read_all(RF_TEST_DATA "/engine/llamacpp-tiny.json", 1 << 20, &good, &len, &fe),
        RF_OK);
    const struct {
        const char *from, *to, *msg;
    } bad[] = {
        {"\"measured_s\": 0.004", "\"measured_s\": -0.004", "steps[0].measured_s"},
        {"\"engine\": \"llamacpp\"", "\"engine\": \"vllm\"", "unknown engine 'vllm'"},
        {"\"weights\": \"q4_0\"", "\"weights\": \"q5_k\"", "steps[0].weights: 'q5_k'"},
        {"\"phase\": \"prefill\"", "\"phase\": \"verify\"", "steps[0].phase: 'verify'"},
        {"\"model\": \"tiny-a\"", "\"model\": \"tiny-z\"", "models.tiny-z is missing"},
        {"\"bandwidth_bytes_per_s\": 50000000000.0", "\"bandwidth_bytes_per_s\": 1e-300",
         "bandwidth_bytes_per_s"},
        {"\"hidden_size\": 256", "\"hidden_size\": -256", "models.tiny-a"},
        {"\"tokens\": 16", "\"tokens\": 0", "steps[0].tokens (0)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *hit = strstr(good, bad[i].from);
        if (!hit)
            fail_msg("edit %zu: %s not in the file", i, bad[i].from);
        size_t n = strlen(good) + strlen(bad[i].to) + 1;
        char *text = malloc(n);
        size_t pre = (size_t)(hit - good);
        memcpy(text, good, pre);
        snprintf(text + pre, n - pre, "%s%s", bad[i].to, hit + strlen(bad[i].from));
        rf_engine_calib *c = malloc(sizeof *c);
        rf_err e;
        rf_status s = rf_engine_calib_parse(text, strlen(text), "cal.json", c, &e);
        if (s != RF_EINVAL || !strstr(e.msg, bad[i].msg) || strncmp(e.msg, "cal.json", 8))
            fail_msg("edit %zu: status %d, message '%s' (wanted '%s')", i, s, e.msg, bad[i].msg);
        free(c);
        free(text);
    }
    free(good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fit_recovers),    cmocka_unit_test(fit_per_logit),
        cmocka_unit_test(fit_holds_floor), cmocka_unit_test(loo_honest),
        cmocka_unit_test(fit_refuses),     cmocka_unit_test(split_and_predict),
        cmocka_unit_test(generate_sums),   cmocka_unit_test(file_reads),
        cmocka_unit_test(file_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
