/* test_calib.c - the calibration (rf_calib.h): the fit recovers known
 * parameters, the interpolation is exact at calibrated shapes and flags a
 * shape outside them, bad calibration data is refused, a calibrated
 * profile round-trips through its file and an older profile still loads,
 * steps and profiled passes are predicted, and `measure --calibrate`'s
 * measurement runs on a tiny grid.
 *
 * `test_calib measure` runs only the measurement (a few seconds). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "roofline/rf_calib.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_measure_calib.h"
#include "roofline/rf_forward.h"
#include "roofline/rf_model.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_reader.h"
#include "roofline/rf_step.h"

/* A roof of round figures: 20 GB/s, 200 GFLOP/s. */
#define BW 20e9
#define PEAK 200e9

static void put_point(rf_calib_series *s, int64_t x, double flops, double bytes, double t)
{
    s->pt[s->n++] = (rf_calib_point){.x = x, .flops = flops, .bytes = bytes, .time_s = t};
}

static rf_calib_series *add_series(rf_calib *c, rf_calib_kind k, int64_t a, int64_t b)
{
    rf_calib_series *s = &c->series[c->n_series++];
    memset(s, 0, sizeof *s);
    s->kind = k, s->a = a, s->b = b;
    return s;
}

/* fp32 GEMM figures: F = 2 M K N, Q = (M K + K N + M N) 4. */
static void gemm_point(rf_calib_series *s, int64_t M, double eff, double c0)
{
    double K = (double)s->a, N = (double)s->b, F = 2 * (double)M * K * N;
    double Q = ((double)M * K + K * N + (double)M * N) * 4;
    double floor = fmax(F / PEAK, Q / BW);
    put_point(s, M, F, Q, c0 + floor / eff);
}

/* Every kind with points that follow t = c0 + floor / eff exactly: the GEMM
 * with an efficiency that varies with M (0.9 at M = 1, 0.3 at 4, 0.6 at
 * 16), the others with one efficiency each. */
static void synthetic(rf_calib *c)
{
    memset(c, 0, sizeof *c);
    c->version = RF_CALIB_VERSION;
    snprintf(c->backend, sizeof c->backend, "synthetic");
    c->bw_bytes_per_s = BW;
    c->peak_flops_per_s = PEAK;
    rf_calib_series *g = add_series(c, RF_CALIB_GEMM, 4096, 4096);
    gemm_point(g, 1, 0.9, 0);
    gemm_point(g, 4, 0.3, 0);
    gemm_point(g, 16, 0.6, 0);
    rf_calib_series *g2 = add_series(c, RF_CALIB_GEMM, 4096, 14336);
    gemm_point(g2, 1, 0.8, 0);
    gemm_point(g2, 16, 0.5, 0);
    for (int k = RF_CALIB_ATTN_DECODE; k < RF_CALIB_KIND_COUNT; k++) {
        rf_calib_series *s =
            add_series(c, (rf_calib_kind)k, k <= RF_CALIB_ATTN_PREFILL ? 128 : 0, 0);
        /* c0 = 3 us, eff = 0.25 + 0.05 k; memory-bound: Q = 4 x bytes */
        double c0 = 3e-6, eff = 0.25 + 0.05 * k;
        for (int64_t x = 1024; x <= 1 << 20; x *= 8) {
            double Q = 4.0 * (double)x, F = (double)x;
            put_point(s, x, F, Q, c0 + fmax(F / PEAK, Q / BW) / eff);
        }
    }
}

/* c0 = 3 us and eff = 0.25 + 0.05 k are recovered for each single-efficiency
 * kind, with no residual; each point's own efficiency is the one it was
 * made with. */
static void fit_recovers_parameters(void **state)
{
    (void)state;
    rf_calib *c = malloc(sizeof *c);
    rf_err e;
    synthetic(c);
    assert_int_equal(rf_calib_fit_all(c, &e), RF_OK);
    for (int k = RF_CALIB_ATTN_DECODE; k < RF_CALIB_KIND_COUNT; k++) {
        const rf_calib_fit *f = &c->fit[k];
        assert_true(fabs(f->overhead_s - 3e-6) < 1e-12);
        assert_true(fabs(f->efficiency - (0.25 + 0.05 * k)) < 1e-9);
        assert_true(f->rms_residual < 1e-9);
        assert_true(f->loo_worst < 1e-9); /* one efficiency: interpolation is exact too */
        assert_int_equal(f->n_points, 4);
    }
    /* the GEMM's points: the efficiency each was made with (c0 = 0) */
    assert_true(fabs(c->fit[RF_CALIB_GEMM].overhead_s) < 1e-12);
    assert_true(fabs(c->series[0].pt[1].eff - 0.3) < 1e-9);
    assert_true(fabs(c->series[1].pt[1].eff - 0.5) < 1e-9);
    free(c);
}

static rf_calib *fitted(void)
{
    rf_calib *c = malloc(sizeof *c);
    rf_err e;
    synthetic(c);
    assert_int_equal(rf_calib_fit_all(c, &e), RF_OK);
    return c;
}

/* At each calibrated shape the prediction is the measured time, in range. */
static void exact_at_calibrated_shapes(void **state)
{
    (void)state;
    rf_calib *c = fitted();
    rf_err e;
    for (size_t i = 0; i < c->n_series; i++) {
        const rf_calib_series *s = &c->series[i];
        for (size_t p = 0; p < s->n; p++) {
            rf_calib_pred pr;
            assert_int_equal(rf_calib_predict(c, s->kind, s->pt[p].x, s->a, s->b, s->pt[p].flops,
                                              s->pt[p].bytes, &pr, &e),
                             RF_OK);
            assert_true(fabs(pr.time_s - s->pt[p].time_s) <= 1e-12 * s->pt[p].time_s);
            assert_true(pr.in_range);
        }
    }
    free(c);
}

/* Between M = 1 (eff 0.9) and M = 4 (0.3), M = 2 lies halfway in ln M, so
 * ln eff is the mean: eff = sqrt(0.9 x 0.3) = 0.5196. */
static void log_space_between(void **state)
{
    (void)state;
    rf_calib *c = fitted();
    rf_err e;
    rf_calib_pred pr;
    double F = 2.0 * 2 * 4096 * 4096, Q = (2.0 * 4096 + 4096.0 * 4096 + 2.0 * 4096) * 4;
    assert_int_equal(rf_calib_predict(c, RF_CALIB_GEMM, 2, 4096, 4096, F, Q, &pr, &e), RF_OK);
    assert_true(fabs(pr.eff - sqrt(0.9 * 0.3)) < 1e-12);
    assert_true(fabs(pr.time_s - Q / BW / sqrt(0.9 * 0.3)) < 1e-12);
    assert_true(pr.in_range);
    free(c);
}

/* M = 64 is past the last calibrated M (16): the last point's efficiency,
 * flagged. K = 16384 is past every calibrated K (4096): flagged. N = 8192,
 * between the two series' N at the same K, is in range. */
static void outside_is_flagged(void **state)
{
    (void)state;
    rf_calib *c = fitted();
    rf_err e;
    rf_calib_pred pr;
    assert_int_equal(rf_calib_predict(c, RF_CALIB_GEMM, 64, 4096, 4096, 1e9, 1e8, &pr, &e), RF_OK);
    assert_false(pr.in_range);
    assert_true(fabs(pr.eff - 0.6) < 1e-12);
    assert_int_equal(rf_calib_predict(c, RF_CALIB_GEMM, 4, 16384, 4096, 1e9, 1e8, &pr, &e), RF_OK);
    assert_false(pr.in_range);
    assert_int_equal(rf_calib_predict(c, RF_CALIB_GEMM, 4, 4096, 8192, 1e9, 1e8, &pr, &e), RF_OK);
    assert_true(pr.in_range);
    assert_true(pr.eff > 0.3 && pr.eff < 0.8);
    /* below the smallest elementwise size (1024) */
    assert_int_equal(rf_calib_predict(c, RF_CALIB_NORM, 16, 0, 0, 16, 64, &pr, &e), RF_OK);
    assert_false(pr.in_range);
    free(c);
}

/* Each point of a series measured under roofs that moved by a known
 * factor while it ran (the bandwidth halved at M = 1, doubled at M = 4; a
 * core lost at M = 16, so the FMA peak halved) and timed accordingly:
 * t = floor on those roofs / 0.5. With each point's roofs kept beside it,
 * every point's efficiency is the 0.5 it was made with, the kind's fit is
 * c0 = 0, e = 0.5 with no residual, and a prediction at a calibrated shape
 * on the calibration's own roofs is floor(BW, PEAK) / 0.5. The same times
 * set against the global roofs alone give efficiencies off by the factors
 * and a fit that misses. */
static void per_point_roofs(void **state)
{
    (void)state;
    rf_calib *c = malloc(sizeof *c);
    rf_err e;
    synthetic(c);
    rf_calib_series *g = &c->series[0]; /* gemm 4096 x 4096 at M = 1, 4, 16 */
    g->n = 0;
    /* the kind's only series, so no other point moves its fit */
    memmove(&c->series[1], &c->series[2], (c->n_series - 2) * sizeof c->series[0]);
    c->n_series--;
    const double bw_f[] = {0.5, 2.0, 1.0}, pk_f[] = {1.0, 1.0, 0.5};
    const int64_t M[] = {1, 4, 16};
    for (int p = 0; p < 3; p++) {
        double Q = ((double)M[p] * 4096 * 2 + 4096.0 * 4096) * 4;
        double F = p == 2 ? 1e3 * Q : 2.0 * (double)M[p] * 4096 * 4096; /* M = 16 compute-bound */
        double beta = BW * bw_f[p], pi = PEAK * pk_f[p];
        put_point(g, M[p], F, Q, fmax(F / pi, Q / beta) / 0.5);
        g->pt[p].bw_bytes_per_s = beta;
        g->pt[p].peak_flops_per_s = pi;
    }
    c->point_bw = c->point_peak = true;
    assert_int_equal(rf_calib_fit_all(c, &e), RF_OK);
    const rf_calib_fit *f = &c->fit[RF_CALIB_GEMM];
    assert_true(fabs(f->overhead_s) < 1e-12);
    assert_true(fabs(f->efficiency - 0.5) < 1e-9);
    assert_true(f->rms_residual < 1e-9);
    for (int p = 0; p < 3; p++) {
        assert_true(fabs(g->pt[p].eff - 0.5) < 1e-9);
        rf_calib_pred pr;
        assert_int_equal(rf_calib_predict(c, RF_CALIB_GEMM, M[p], 4096, 4096, g->pt[p].flops,
                                          g->pt[p].bytes, &pr, &e),
                         RF_OK);
        double floor = fmax(g->pt[p].flops / PEAK, g->pt[p].bytes / BW);
        assert_true(fabs(pr.time_s - floor / 0.5) <= 1e-12 * pr.time_s);
    }
    /* without the points' roofs (none, or the calibration not using
     * them): the times are 2x, 0.5x and 2x the global floor / 0.5, so no
     * c0 and e fit them (an rms residual over 30%) */
    c->point_bw = c->point_peak = false;
    assert_int_equal(rf_calib_fit_all(c, &e), RF_OK);
    assert_true(f->rms_residual > 0.3);
    assert_true(fabs(g->pt[1].eff - 0.5) > 0.2);
    c->point_bw = c->point_peak = true;
    for (int p = 0; p < 3; p++)
        g->pt[p].bw_bytes_per_s = g->pt[p].peak_flops_per_s = 0;
    assert_int_equal(rf_calib_fit_all(c, &e), RF_OK);
    assert_true(f->rms_residual > 0.3);
    free(c);
}

static void refused(rf_calib *c, const char *needle)
{
    rf_err e;
    assert_int_equal(rf_calib_fit_all(c, &e), RF_EINVAL);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' does not say '%s'", e.msg, needle);
}

static void bad_data_refused(void **state)
{
    (void)state;
    rf_calib *c = malloc(sizeof *c);
    synthetic(c);
    c->series[0].pt[1].time_s = -1e-3;
    refused(c, "gemm K=4096 N=4096: point 1: time -0.001 s must be positive");
    synthetic(c);
    c->series[0].pt[2].x = 2; /* 1, 4, 2 */
    refused(c, "gemm K=4096 N=4096: M grid not increasing at point 2 (2 after 4)");
    synthetic(c);
    c->n_series--; /* the last kind, copy, is gone */
    refused(c, "calibration: no copy points");
    synthetic(c);
    c->series[3].pt[0].flops = c->series[3].pt[0].bytes = 0;
    refused(c, "attn_prefill d_h=128 g=0: point 0: FLOPs and bytes");
    synthetic(c);
    c->version = RF_CALIB_VERSION + 1;
    refused(c, "version 3 (this build reads 1 to 2)");
    synthetic(c);
    c->bw_bytes_per_s = 0;
    refused(c, "the roof");
    synthetic(c);
    c->series[1].pt[0].bw_bytes_per_s = -1e9; /* a point's own roof */
    refused(c, "gemm K=4096 N=14336: point 0: its roofs (-1e+09 B/s, 0 FLOP/s) must be positive");
    synthetic(c);
    c->series[2].pt[1].peak_flops_per_s = NAN;
    refused(c, "attn_decode d_h=128 g=0: point 1: its roofs");
    free(c);
}

/* A calibrated profile written and read back: the same points, the same
 * fit; an edit in the file (a negative time) is refused naming the file. */
static void round_trip(void **state)
{
    (void)state;
    rf_hw_profile *p = calloc(1, sizeof *p), *q = calloc(1, sizeof *q);
    rf_err e;
    assert_int_equal(rf_hw_profile_load(RF_TEST_DATA "/profile/cpu-roof.json", p, &e), RF_OK);
    p->bandwidth_sustained_bytes_per_s = 1.5e10;
    synthetic(&p->calib);
    p->calib.series[0].pt[1].bw_bytes_per_s = 1.25e10; /* a point's own roofs */
    p->calib.series[0].pt[1].peak_flops_per_s = 1.5e11;
    p->calib.point_bw = true; /* the memory roof per point, the compute one not */
    p->calib.round_spread[0][0] = 0.25, p->calib.round_spread[0][1] = 0.125;
    p->calib.round_spread[1][0] = 0.5, p->calib.round_spread[1][1] = 0.75;
    assert_int_equal(rf_calib_fit_all(&p->calib, &e), RF_OK);
    char path[] = "/tmp/rf_test_calib_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rf_hw_profile_save(p, path, &e), RF_OK);
    assert_int_equal(rf_hw_profile_load(path, q, &e), RF_OK);
    assert_true(q->bandwidth_sustained_bytes_per_s == 1.5e10);
    assert_int_equal(q->calib.version, RF_CALIB_VERSION);
    assert_string_equal(q->calib.backend, "synthetic");
    assert_int_equal(q->calib.n_series, p->calib.n_series);
    for (size_t i = 0; i < p->calib.n_series; i++) {
        const rf_calib_series *a = &p->calib.series[i], *b = &q->calib.series[i];
        assert_int_equal(a->kind, b->kind);
        assert_int_equal(a->a, b->a);
        assert_int_equal(a->n, b->n);
        for (size_t j = 0; j < a->n; j++) {
            assert_int_equal(a->pt[j].x, b->pt[j].x);
            assert_true(a->pt[j].time_s == b->pt[j].time_s);
            assert_true(a->pt[j].bw_bytes_per_s == b->pt[j].bw_bytes_per_s);
            assert_true(a->pt[j].peak_flops_per_s == b->pt[j].peak_flops_per_s);
            assert_true(a->pt[j].eff == b->pt[j].eff);
        }
    }
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++)
        assert_true(p->calib.fit[k].overhead_s == q->calib.fit[k].overhead_s);
    assert_true(q->calib.series[0].pt[1].bw_bytes_per_s == 1.25e10);
    assert_true(q->calib.point_bw && !q->calib.point_peak);
    assert_memory_equal(q->calib.round_spread, p->calib.round_spread, sizeof p->calib.round_spread);

    char *json = NULL;
    assert_int_equal(rf_hw_profile_to_json(p, &json, &e), RF_OK);
    char *at = strstr(json, "\"time_s\": [");
    assert_non_null(at);
    at += strlen("\"time_s\": [");
    while (*at == ' ' || *at == '\n')
        at++;
    size_t head = (size_t)(at - json), n = strlen(json) + 2;
    char *edited = malloc(n);
    snprintf(edited, n, "%.*s-%s", (int)head, json, at); /* the first time made negative */
    assert_int_equal(rf_hw_profile_from_json(edited, "edited.json", q, &e), RF_EINVAL);
    free(edited);
    if (!strstr(e.msg, "edited.json: calibration: gemm K=4096 N=4096: point 0: time"))
        fail_msg("%s", e.msg);
    free(json);
    unlink(path);
    free(p);
    free(q);
}

/* A profile from before calibrations loads (no sustained roof, version 0)
 * and converts to a roof as it did. */
static void old_profile_loads(void **state)
{
    (void)state;
    rf_hw_profile *p = calloc(1, sizeof *p);
    rf_err e;
    rf_hw hw;
    assert_int_equal(rf_hw_profile_load(RF_TEST_DATA "/profile/cpu-roof.json", p, &e), RF_OK);
    assert_int_equal(p->calib.version, 0);
    assert_true(p->bandwidth_sustained_bytes_per_s == 0);
    assert_int_equal(rf_hw_profile_to_hw(p, &hw, &e), RF_OK);
    assert_true(hw.bw_bytes_per_s == 20e9); /* the file's figure */
    free(p);
}

/* The GEMVs pooled: four GEMM series, M = 1 first, W of 64 MiB and more
 * (4096 x 4096, 4096 x 14336, 2048 x 151936) and one of 8 MiB (2048 x
 * 1024); their bandwidths 20, 24, 12 (the scattered one) and 30 GB/s. The
 * three large ones take the median, 20 GB/s: the 12 GB/s point's time
 * becomes bytes / 20e9, the 24 GB/s one's too; the small one is left; the
 * M = 4 points are left. With only two large series nothing moves. */
static void gemv_pooled(void **state)
{
    (void)state;
    rf_calib *c = calloc(1, sizeof *c);
    const int64_t shape[][2] = {{4096, 4096}, {4096, 14336}, {2048, 151936}, {2048, 1024}};
    const double gbs[] = {20e9, 24e9, 12e9, 30e9};
    for (int i = 0; i < 4; i++) {
        rf_calib_series *s = add_series(c, RF_CALIB_GEMM, shape[i][0], shape[i][1]);
        double Q = ((double)shape[i][0] * (double)shape[i][1] + shape[i][0] + shape[i][1]) * 4;
        put_point(s, 1, 2.0 * (double)shape[i][0] * (double)shape[i][1], Q, Q / gbs[i]);
        put_point(s, 4, 8.0 * (double)shape[i][0] * (double)shape[i][1], Q, 4 * Q / gbs[i]);
    }
    assert_int_equal(rf_calib_pool_gemv(c, 64.0 * (1 << 20)), 3);
    for (int i = 0; i < 4; i++) {
        const rf_calib_point *p = &c->series[i].pt[0];
        double want = i < 3 ? 20e9 : 30e9;
        assert_true(fabs(p->bytes / p->time_s - want) < 1e-6 * want);
        assert_true(fabs(c->series[i].pt[1].bytes / c->series[i].pt[1].time_s - gbs[i] / 4) <
                    1e-6 * gbs[i]);
    }
    c->n_series = 2; /* 4096 x 4096 and 4096 x 14336 only */
    c->series[0].pt[0].time_s = c->series[0].pt[0].bytes / 18e9;
    assert_int_equal(rf_calib_pool_gemv(c, 64.0 * (1 << 20)), 0);
    assert_true(fabs(c->series[0].pt[0].bytes / c->series[0].pt[0].time_s - 18e9) < 1e-3);
    free(c);
}

/* A profiled pass predicted: the GEMV (q_proj at M = 1, on the
 * synthetic calibration's (4096, 4096) eff 0.9, c0 0, memory-bound) takes
 * the memory roof sampled beside the run, here half the calibration's, so
 * its prediction doubles: Q / (BW / 2) / 0.9; the same projection at
 * M = 4 (eff 0.3) stays on the calibration's roof: floor / 0.3. */
/* profile's prediction is every operator on the calibration's roofs, as
 * step --predict's; the GEMV (M = 1) on the run's sampled memory roof only
 * in step_now_s beside it: the synthetic GEMV at M = 1 has eff 0.9, the
 * projection at M = 4 eff 0.3 (memory-bound at K = N = 4096: 2 M K N / (Q)
 * is under the ridge of 10). */
static void gemv_on_run_roof(void **state)
{
    (void)state;
    rf_calib *c = fitted();
    rf_forward_run *run = calloc(1, sizeof *run);
    rf_forward_pred *pr = malloc(sizeof *pr);
    rf_err e;
    run->opts.phase = RF_DECODE, run->opts.layers = 1, run->opts.batch = 1;
    run->model_layers = 1;
    const int64_t M[] = {1, 4};
    for (int i = 0; i < 2; i++) {
        rf_forward_op *o = &run->ops[run->n_ops++];
        o->id = RF_FWD_Q_PROJ, o->name = "q_proj", o->count = 1;
        o->m = M[i], o->k = 4096, o->n = 4096;
        o->flops = (uint64_t)(2 * M[i] * 4096 * 4096);
        o->bytes = (uint64_t)((M[i] * 4096 * 2 + 4096 * 4096) * 4);
        o->measured_s = 1e-3;
    }
    assert_int_equal(rf_calib_predict_forward(c, run, BW / 2, PEAK / 2, pr, &e), RF_OK);
    double q1 = (double)run->ops[0].bytes, q4 = (double)run->ops[1].bytes;
    double f4 = (double)run->ops[1].flops;
    double t4 = fmax(f4 / PEAK, q4 / BW) / 0.3;
    assert_true(fabs(pr->op[0].time_s - q1 / BW / 0.9) < 1e-12 * pr->op[0].time_s);
    assert_true(fabs(pr->op[1].time_s - t4) < 1e-12 * pr->op[1].time_s);
    assert_true(fabs(pr->step_s - (q1 / BW / 0.9 + t4)) < 1e-12 * pr->step_s);
    assert_true(fabs(pr->step_now_s - (q1 / (BW / 2) / 0.9 + t4)) < 1e-12 * pr->step_now_s);
    assert_true(pr->gemv_bw_bytes_per_s == BW / 2 && pr->bw_bytes_per_s == BW);
    assert_true(pr->sampled_peak_flops_per_s == PEAK / 2 && pr->peak_flops_per_s == PEAK);
    free(run);
    free(pr);
    free(c);
}

/* Every prediction carries the band of its kind: the GEMM series K = N =
 * 4096 has effs 0.9, 0.3, 0.6 at M = 1, 4, 16; M = 4 left out is predicted
 * from its neighbours at exp((ln 0.9 + ln 0.6) / 2) = sqrt(0.54), so its
 * time is off by 1 - 0.3 / sqrt(0.54) = 0.59175 of the measured: the GEMM
 * band. The other kinds follow one efficiency exactly: band 0. A step's
 * band is its operators' summed as the times are. */
static void bands(void **state)
{
    (void)state;
    rf_calib *c = fitted();
    rf_err e;
    double want = 1 - 0.3 / sqrt(0.54);
    assert_true(fabs(rf_calib_band(c, RF_CALIB_GEMM) - want) < 1e-9);
    assert_true(rf_calib_band(c, RF_CALIB_NORM) < 1e-9);
    rf_calib_pred p;
    const rf_calib_series *g = &c->series[0];
    assert_int_equal(rf_calib_predict(c, RF_CALIB_GEMM, 8, 4096, 4096, 2.0 * 8 * 4096 * 4096,
                                      (8.0 * 4096 * 2 + 4096.0 * 4096) * 4, &p, &e),
                     RF_OK);
    assert_true(p.band == rf_calib_band(c, RF_CALIB_GEMM));
    assert_true(fabs(p.lo_s - p.time_s * (1 - want)) < 1e-9 * p.time_s);
    assert_true(fabs(p.hi_s - p.time_s * (1 + want)) < 1e-9 * p.time_s);
    (void)g;
    /* a band of 1 or more leaves the low end at 0 */
    c->fit[RF_CALIB_NORM].loo_worst = 1.5;
    assert_int_equal(rf_calib_predict(c, RF_CALIB_NORM, 4096, 0, 0, 4096, 16384, &p, &e), RF_OK);
    assert_true(p.lo_s == 0 && fabs(p.hi_s - 2.5 * p.time_s) < 1e-12 * p.time_s);
    free(c);
}

/* One prediction path: on one calibration (the fixture of tests/data), the
 * operators of `step --predict`, of `generate --predict` (its prefill and
 * its first decode step) and of `profile` (rf_forward_plan's operators,
 * what profile predicts after timing them) each get the same predicted
 * time where they are the same operator, compared by name; profile's
 * element-wise operators against `step --traffic full`'s. */
static void one_prediction_path(void **state)
{
    (void)state;
    rf_hw_profile *hp = malloc(sizeof *hp);
    rf_model m;
    rf_hw hw;
    rf_roof roof;
    rf_err e;
    assert_non_null(hp);
    if (rf_hw_profile_load(RF_TEST_DATA "/profile/calibrated.json", hp, &e) ||
        rf_model_load(RF_TEST_DATA "/profile/tiny-llama.json", &m, &e) ||
        rf_hw_profile_to_hw(hp, &hw, &e) || rf_hw_roof(&hw, RF_FP32, &roof, &e))
        fail_msg("%s", e.msg);
    const rf_calib *c = &hp->calib;
    static rf_step st[2], pre;
    static rf_step_pred sp[2], pp;
    const int64_t S = 64, P = 63;
    for (int full = 0; full < 2; full++) {
        rf_step_opts so = rf_step_opts_default();
        so.w = so.a = so.kv = rf_dtype_of(RF_FP32);
        so.phase = RF_DECODE, so.batch = 1, so.context = S, so.tokens = 1;
        so.traffic = full ? RF_TRAFFIC_FULL : RF_TRAFFIC_COMPULSORY;
        if (rf_step_compute(&m, &so, &roof, &st[full], &e) ||
            rf_calib_predict_step(c, &st[full], 1, &sp[full], &e))
            fail_msg("%s", e.msg);
    }
    /* generate: the prompt P, two output tokens: its one decode step is at
     * context P + 1 = S; its TTFT the prefill of P tokens */
    rf_step_opts go = rf_step_opts_default();
    go.w = go.a = go.kv = rf_dtype_of(RF_FP32);
    go.batch = 1;
    rf_generate_pred gp;
    if (rf_calib_predict_generate(c, &m, &go, &roof, P, 2, NULL, &gp, &e))
        fail_msg("%s", e.msg);
    assert_true(fabs(gp.tpot_first_s - sp[0].time_s) <= 1e-12 * sp[0].time_s);
    assert_true(fabs(gp.decode_lo_s - sp[0].lo_s) <= 1e-12 * sp[0].time_s);
    rf_step_opts po = go;
    po.phase = RF_PREFILL, po.tokens = P, po.context = 0;
    if (rf_step_compute(&m, &po, &roof, &pre, &e) || rf_calib_predict_step(c, &pre, P, &pp, &e))
        fail_msg("%s", e.msg);
    assert_true(fabs(gp.ttft_s - pp.time_s) <= 1e-12 * pp.time_s);
    assert_true(fabs(gp.ttft_hi_s - pp.hi_s) <= 1e-12 * pp.time_s);
    /* profile: its planned operators, predicted as profile predicts them */
    rf_forward_opts fo = rf_forward_opts_default();
    fo.phase = RF_DECODE, fo.batch = 1, fo.context = S, fo.layers = m.layers;
    rf_forward_run *run = calloc(1, sizeof *run);
    rf_forward_pred *fp = calloc(1, sizeof *fp);
    assert_true(run && fp);
    /* with a memory roof sampled beside the run at half the calibration's:
     * the prediction stays the calibration's (the sample goes to step_now_s) */
    if (rf_forward_plan(&m, &fo, &roof, run, &e) ||
        rf_calib_predict_forward(c, run, c->bw_bytes_per_s / 2, c->peak_flops_per_s / 2, fp, &e))
        fail_msg("%s", e.msg);
    size_t matched = 0;
    for (size_t i = 0; i < run->n_ops; i++) {
        rf_op op;
        rf_calib_forward_op(run, &run->ops[i], &op);
        bool elementwise = op.kind == RF_OP_ELEMENTWISE;
        const rf_step *s = &st[elementwise];
        const rf_step_pred *p = &sp[elementwise];
        for (size_t j = 0; j < s->n_ops; j++) {
            if (strcmp(s->ops[j].name, run->ops[i].name))
                continue;
            if (fabs(fp->op[i].time_s - p->op[j].time_s) > 1e-12 * p->op[j].time_s)
                fail_msg("%s: profile predicts %.9g s, step %.9g s", run->ops[i].name,
                         fp->op[i].time_s, p->op[j].time_s);
            assert_true(fp->op[i].band == p->op[j].band);
            matched++;
        }
    }
    /* tiny-llama's decode: 7 GEMMs a layer and lm_head, attention, embed,
     * kv_write, 2 norms, rope, act, 2 residuals, final_norm: 18 rows */
    assert_int_equal(matched, run->n_ops);
    assert_int_equal(matched, 18);
    assert_true(fp->step_now_s > fp->step_s); /* the GEMVs on half the roof: slower */
    free(run), free(fp), free(hp);
}

/* A version 1 calibration (written before the points had roofs of their
 * own) loads: no roof columns, every point on the calibration's roofs, the
 * same efficiencies as when it was written. */
static void version1_loads(void **state)
{
    (void)state;
    rf_hw_profile *p = calloc(1, sizeof *p), *q = calloc(1, sizeof *q);
    rf_err e;
    assert_int_equal(rf_hw_profile_load(RF_TEST_DATA "/profile/cpu-roof.json", p, &e), RF_OK);
    synthetic(&p->calib);
    p->calib.version = 1;
    assert_int_equal(rf_calib_fit_all(&p->calib, &e), RF_OK);
    char *json = NULL;
    assert_int_equal(rf_hw_profile_to_json(p, &json, &e), RF_OK);
    assert_non_null(strstr(json, "\"version\": 1"));
    assert_null(strstr(json, "\"peak_flops_per_s\": ["));
    assert_int_equal(rf_hw_profile_from_json(json, "v1.json", q, &e), RF_OK);
    assert_int_equal(q->calib.version, 1);
    for (size_t i = 0; i < q->calib.n_series; i++)
        for (size_t j = 0; j < q->calib.series[i].n; j++) {
            assert_true(q->calib.series[i].pt[j].bw_bytes_per_s == 0);
            assert_true(q->calib.series[i].pt[j].eff == p->calib.series[i].pt[j].eff);
        }
    free(json);
    free(p);
    free(q);
}

/* Operators map to their kinds, and a step's prediction is the sum of
 * count x one instance's prediction. */
static void step_predicted(void **state)
{
    (void)state;
    rf_calib *c = fitted();
    rf_model m;
    rf_err e;
    assert_int_equal(rf_model_preset("llama-3-8b", &m, &e), RF_OK);
    rf_step_opts o = rf_step_opts_default();
    o.context = 1024;
    rf_roof roof = {
        .math = RF_BF16, .peak_flops_per_s = PEAK, .bw_bytes_per_s = BW, .ridge = PEAK / BW};
    rf_step *st = malloc(sizeof *st);
    rf_step_pred *pr = malloc(sizeof *pr);
    assert_int_equal(rf_step_compute(&m, &o, &roof, st, &e), RF_OK);
    assert_int_equal(rf_calib_predict_step(c, st, 1, pr, &e), RF_OK);
    double sum = 0;
    bool saw_q = false;
    for (size_t i = 0; i < st->n_ops; i++) {
        rf_calib_kind k;
        int64_t x, a, b;
        assert_true(rf_calib_shape_of(&st->ops[i], &k, &x, &a, &b));
        if (!strcmp(st->ops[i].name, "q_proj")) {
            saw_q = true;
            assert_int_equal(k, RF_CALIB_GEMM);
            assert_int_equal(x, 1);
            assert_int_equal(a, 4096);
            assert_int_equal(b, 4096);
            /* calibrated at (4096, 4096), M = 1: eff 0.9, c0 0, floor Q / beta */
            assert_true(fabs(pr->op[i].time_s - (double)st->ops[i].bytes / BW / 0.9) < 1e-15);
        }
        sum += (double)st->ops[i].count * pr->op[i].time_s;
    }
    assert_true(saw_q);
    assert_true(fabs(pr->time_s - sum) <= 1e-12 * sum);
    assert_true(fabs(pr->tokens_per_s - 1 / sum) <= 1e-9 / sum);
    free(st);
    free(pr);
    free(c);
}

/* The measurement on the test grid: every kind present, the fit done, a
 * GEMV's time within reason (it moved W at 1 MB/s to 10 TB/s). */
static void measure_tiny(void **state)
{
    (void)state;
    rf_hw_profile *p = calloc(1, sizeof *p);
    rf_err e;
    assert_int_equal(rf_hw_profile_load(RF_TEST_DATA "/profile/cpu-roof.json", p, &e), RF_OK);
    rf_calibrate_opts o = {.threads = 1, .tiny = true};
    rf_status s = rf_calibrate_cpu(&o, p, &e);
    if (s != RF_OK)
        fail_msg("%s", e.msg);
    assert_int_equal(p->calib.version, RF_CALIB_VERSION);
    bool seen[RF_CALIB_KIND_COUNT] = {false};
    for (size_t i = 0; i < p->calib.n_series; i++)
        seen[p->calib.series[i].kind] = true;
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++)
        assert_true(seen[k]);
    const rf_calib_point *gemv = &p->calib.series[0].pt[0];
    assert_int_equal(p->calib.series[0].kind, RF_CALIB_GEMM);
    assert_int_equal(gemv->x, 1);
    assert_true(gemv->bytes / gemv->time_s > 1e6 && gemv->bytes / gemv->time_s < 1e13);
    /* every point has the roofs sampled beside it, and the calibration's
     * are their medians */
    for (size_t i = 0; i < p->calib.n_series; i++)
        for (size_t j = 0; j < p->calib.series[i].n; j++) {
            assert_true(p->calib.series[i].pt[j].bw_bytes_per_s > 1e6);
            assert_true(p->calib.series[i].pt[j].peak_flops_per_s > 1e6);
        }
    assert_true(p->calib.bw_bytes_per_s != 20e9); /* not the file's roof */
    free(p);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test(fit_recovers_parameters),
        cmocka_unit_test(exact_at_calibrated_shapes),
        cmocka_unit_test(log_space_between),
        cmocka_unit_test(outside_is_flagged),
        cmocka_unit_test(bad_data_refused),
        cmocka_unit_test(round_trip),
        cmocka_unit_test(old_profile_loads),
        cmocka_unit_test(step_predicted),
        cmocka_unit_test(per_point_roofs),
        cmocka_unit_test(version1_loads),
        cmocka_unit_test(gemv_pooled),
        cmocka_unit_test(gemv_on_run_roof),
        cmocka_unit_test(bands),
        cmocka_unit_test(one_prediction_path),
    };
    const struct CMUnitTest measure[] = {cmocka_unit_test(measure_tiny)};
    if (argc > 1 && !strcmp(argv[1], "measure"))
        return cmocka_run_group_tests(measure, NULL, NULL);
    return cmocka_run_group_tests(all, NULL, NULL);
}
