/* test_cuda.c - the CUDA backend.
 *
 *   test_cuda              what needs no device: device specs, names, the
 *                          fallback's RF_EUNAVAIL, the no-device error path
 *   test_cuda device       smoke tests on a GPU (small sizes; plausibility
 *                          and agreement with the CPU reference, never
 *                          absolute speed); exits 77 (ctest: skipped) with a
 *                          message when there is no usable device
 *   test_cuda cli EXE      `roofline measure --device cuda:1023` (also with
 *                          --calibrate) exits 3 with one line naming the
 *                          device: no machine has 1024 GPUs, so this runs
 *                          everywhere
 */
#define _POSIX_C_SOURCE 200809L /* popen, pclose */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "roofline/rf_cuda.h"

#define SKIP_CODE 77

static void parse_ok(const char *text, int want)
{
    int index = -1;
    rf_err err;
    if (rf_cuda_device_parse(text, &index, &err) != RF_OK)
        fail_msg("'%s' refused: %s", text, err.msg);
    if (index != want)
        fail_msg("'%s' parsed as %d, expected %d", text, index, want);
}

static void parse_bad(const char *text)
{
    int index = -1;
    rf_err err;
    if (rf_cuda_device_parse(text, &index, &err) != RF_EINVAL)
        fail_msg("'%s' accepted as device %d", text, index);
    if (!strstr(err.msg, text))
        fail_msg("the message for '%s' does not name it: %s", text, err.msg);
}

static void device_specs(void **state)
{
    (void)state;
    parse_ok("cuda", 0);
    parse_ok("cuda:0", 0);
    parse_ok("cuda:3", 3);
    parse_ok("cuda:1023", 1023);
    parse_bad("cpu");
    parse_bad("cuda:");
    parse_bad("cuda:-1");
    parse_bad("cuda:x");
    parse_bad("cuda:1x");
    parse_bad("cudax");
    parse_bad("cuda:1024");
    parse_bad("CUDA");
}

static void names_and_dtypes(void **state)
{
    (void)state;
    assert_string_equal(rf_cuda_bw_kind_name(RF_CUDA_BW_COPY), "copy_v16");
    assert_string_equal(rf_cuda_bw_kind_name(RF_CUDA_BW_READ), "read_v16");
    assert_string_equal(rf_cuda_bw_kind_name(RF_CUDA_BW_MEMCPY), "memcpy_d2d");
    assert_string_equal(rf_cuda_gemm_impl_name(RF_CUDA_GEMM_CUBLASLT), "cublasLt");
    assert_string_equal(rf_cuda_gemm_impl_name(RF_CUDA_GEMM_GEMV), "gemv");
    /* cuBLASLt writes fp8 products as bf16; tf32 is stored as fp32. */
    assert_int_equal(rf_cuda_gemm_out_dtype(RF_FP8_E4M3), RF_BF16);
    assert_int_equal(rf_cuda_gemm_out_dtype(RF_TF32), RF_FP32);
    assert_int_equal(rf_cuda_gemm_out_dtype(RF_BF16), RF_BF16);
    /* fp16 keeps 3 more mantissa bits than bf16: a tolerance 8x tighter. */
    assert_true(fabs(rf_cuda_gemm_tolerance(RF_BF16) / rf_cuda_gemm_tolerance(RF_FP16) - 8.0) <
                1e-12);
    /* A swapped operand or layout errs by ~1.4 output scales: every
     * tolerance must stay well below that. */
    const rf_dtype_kind run[] = {RF_FP32, RF_TF32, RF_BF16, RF_FP16, RF_FP8_E4M3};
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++) {
        double tol = rf_cuda_gemm_tolerance(run[i]);
        if (!(tol > 0 && tol <= 0.25))
            fail_msg("%s tolerance %g outside (0, 0.25]", rf_dtype_name(run[i]), tol);
    }
    assert_true(rf_cuda_gemm_tolerance(RF_INT4) == 0.0);
}

static void timing_defaults(void **state)
{
    (void)state;
    rf_cuda_timing full = rf_cuda_timing_default(false);
    rf_cuda_timing quick = rf_cuda_timing_default(true);
    assert_true(full.trials >= 5 && full.trials % 2 == 1 && full.trials <= RF_CUDA_MAX_TRIALS);
    assert_true(quick.trials >= 1 && quick.trials < full.trials);
    assert_true(quick.min_trial_s > 0 && quick.min_trial_s < full.min_trial_s);
    assert_true(quick.max_algos >= 1 && quick.max_algos <= full.max_algos);
}

static void expect_unavail(rf_status st, const rf_err *err, const char *what)
{
    if (st != RF_EUNAVAIL)
        fail_msg("%s: status %d (%s), expected RF_EUNAVAIL", what, (int)st, err->msg);
    if (!err->msg[0])
        fail_msg("%s: RF_EUNAVAIL without a message", what);
}

/* Without the backend every entry point says so; with it, a device index
 * nobody has is unavailable, and so is everything when there is no device. */
static void unavailable(void **state)
{
    (void)state;
    rf_err err;
    rf_cuda_ctx *ctx = (rf_cuda_ctx *)&err; /* must be overwritten */
    int count = -1;
    rf_cuda_device dev;

    rf_status st = rf_cuda_ctx_new(1023, &ctx, &err);
    expect_unavail(st, &err, "rf_cuda_ctx_new(1023)");

    if (!rf_cuda_built()) {
        assert_null(ctx);
        assert_non_null(strstr(err.msg, "CUDA backend not built"));
        expect_unavail(rf_cuda_device_count(&count, &err), &err, "rf_cuda_device_count");
        assert_non_null(strstr(err.msg, "CUDA backend not built"));
        expect_unavail(rf_cuda_device_query(0, &dev, &err), &err, "rf_cuda_device_query");
        rf_hw_profile p;
        expect_unavail(rf_cuda_measure(NULL, NULL, &p, &err), &err, "rf_cuda_measure");
        expect_unavail(rf_cuda_calibrate(NULL, NULL, &p, &err), &err, "rf_cuda_calibrate");
        rf_cuda_timing t = rf_cuda_timing_default(true);
        rf_cuda_gemm_result g;
        expect_unavail(
            rf_cuda_gemm_time(NULL, RF_CUDA_GEMM_CUBLASLT, RF_BF16, 1, 16, 16, &t, NULL, &g, &err),
            &err, "rf_cuda_gemm_time");
        rf_cuda_bw_result b;
        expect_unavail(rf_cuda_bandwidth(NULL, RF_CUDA_BW_COPY, 1 << 20, &t, &b, &err), &err,
                       "rf_cuda_bandwidth");
        assert_null(rf_cuda_ctx_device(NULL));
        rf_cuda_ctx_free(NULL);
        return;
    }
    if (!strstr(err.msg, "no CUDA device") && !strstr(err.msg, "cuda:1023: no such device"))
        fail_msg("rf_cuda_ctx_new(1023) message: %s", err.msg);
    st = rf_cuda_device_count(&count, &err);
    if (st == RF_OK) {
        assert_true(count >= 1 && count < 1024);
        expect_unavail(rf_cuda_device_query(count, &dev, &err), &err,
                       "rf_cuda_device_query(count)");
        assert_non_null(strstr(err.msg, "no such device"));
    } else {
        /* The no-device path this machine has: the runtime's reason. */
        expect_unavail(st, &err, "rf_cuda_device_count");
        assert_non_null(strstr(err.msg, "no CUDA device"));
        expect_unavail(rf_cuda_ctx_new(0, &ctx, &err), &err, "rf_cuda_ctx_new(0)");
    }
    rf_cuda_ctx_free(NULL);
}

/* ---- On a device -------------------------------------------------------- */

static int open_ctx(void **state)
{
    rf_err err;
    rf_cuda_ctx *ctx = NULL;
    if (rf_cuda_ctx_new(0, &ctx, &err) != RF_OK) {
        fprintf(stderr, "test_cuda: cuda:0: %s\n", err.msg);
        return -1;
    }
    *state = ctx;
    return 0;
}

static int close_ctx(void **state)
{
    rf_cuda_ctx_free(*state);
    return 0;
}

static void identity(void **state)
{
    const rf_cuda_device *d = rf_cuda_ctx_device(*state);
    assert_non_null(d);
    assert_true(d->name[0] != '\0');
    assert_true(d->cc_major >= 5);
    assert_true(d->sm_count > 0);
    assert_true(d->clock_hz > 1e8 && d->clock_hz < 1e10);
    assert_true(d->mem_bytes >= ((uint64_t)1 << 30));
    assert_true(d->l2_bytes >= ((uint64_t)1 << 20));
    /* the interface rate follows from the clock and bus width */
    assert_true(fabs(d->bus_bw_bytes_per_s - d->mem_clock_hz * d->mem_bus_bits / 4.0) <=
                1e-9 * d->bus_bw_bytes_per_s);
}

static bool runs(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m)
{
    rf_err err;
    return rf_cuda_gemm_supported(ctx, impl, dt, m, &err) == RF_OK;
}

static void check_one(rf_cuda_ctx *ctx, rf_cuda_gemm_impl impl, rf_dtype_kind dt, int64_t m,
                      int64_t k, int64_t n)
{
    rf_err err;
    double e = -1;
    rf_status st = rf_cuda_gemm_check(ctx, impl, dt, m, k, n, &e, &err);
    if (st == RF_EUNAVAIL && dt == RF_FP8_E4M3 && m % 16) {
        fprintf(stderr, "test_cuda: note: %s\n", err.msg);
        return;
    }
    if (st != RF_OK)
        fail_msg("%s %s %lldx%lldx%lld: %s", rf_cuda_gemm_impl_name(impl), rf_dtype_name(dt),
                 (long long)m, (long long)k, (long long)n, err.msg);
    assert_true(e >= 0 && e <= rf_cuda_gemm_tolerance(dt));
}

/* Every dtype against the CPU reference, at shapes whose dimensions all
 * differ (a swapped operand cannot pass) and at M = 1. */
static void gemm_against_cpu(void **state)
{
    rf_cuda_ctx *ctx = *state;
    const rf_dtype_kind run[] = {RF_FP32, RF_TF32, RF_BF16, RF_FP16, RF_FP8_E4M3};
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++) {
        if (!runs(ctx, RF_CUDA_GEMM_CUBLASLT, run[i], 16))
            continue;
        check_one(ctx, RF_CUDA_GEMM_CUBLASLT, run[i], 48, 272, 80);
        check_one(ctx, RF_CUDA_GEMM_CUBLASLT, run[i], 1, 272, 80);
        check_one(ctx, RF_CUDA_GEMM_CUBLASLT, run[i], 32, 64, 160);
    }
    check_one(ctx, RF_CUDA_GEMM_GEMV, RF_BF16, 1, 3584, 96); /* 16-byte path, unrolled */
    check_one(ctx, RF_CUDA_GEMM_GEMV, RF_BF16, 1, 275, 33);  /* element path */
    check_one(ctx, RF_CUDA_GEMM_GEMV, RF_BF16, 1, 8, 5);     /* fewer rows than a block */
}

static void gemm_refusals(void **state)
{
    rf_cuda_ctx *ctx = *state;
    rf_err err;
    double e;
    assert_int_equal(
        rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_CUBLASLT, RF_FP8_E5M2, 16, 16, 16, &e, &err),
        RF_EINVAL);
    assert_non_null(strstr(err.msg, "fp8_e5m2"));
    assert_int_equal(rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_GEMV, RF_BF16, 2, 16, 16, &e, &err),
                     RF_EINVAL);
    assert_int_equal(rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_CUBLASLT, RF_BF16, 0, 16, 16, &e, &err),
                     RF_EINVAL);
    assert_int_equal(
        rf_cuda_gemm_check(ctx, RF_CUDA_GEMM_CUBLASLT, RF_BF16, 4096, 4096, 4096, &e, &err),
        RF_EINVAL); /* too big for a full CPU check */
    rf_cuda_timing t = rf_cuda_timing_default(true);
    rf_cuda_bw_result b;
    assert_int_equal(rf_cuda_bandwidth(ctx, RF_CUDA_BW_COPY, 1000, &t, &b, &err), RF_EINVAL);
    t.trials = 0;
    assert_int_equal(rf_cuda_bandwidth(ctx, RF_CUDA_BW_COPY, 1 << 20, &t, &b, &err), RF_EINVAL);
}

static void rate_sane(const rf_stats *r, const char *what)
{
    if (!(r->min > 0 && r->min <= r->median && r->median <= r->max && r->best == r->max))
        fail_msg("%s: rates min %g median %g max %g best %g", what, r->min, r->median, r->max,
                 r->best);
}

static void bandwidth_small(void **state)
{
    rf_cuda_ctx *ctx = *state;
    rf_cuda_timing t = rf_cuda_timing_default(true);
    for (int kind = 0; kind < RF_CUDA_BW_COUNT; kind++) {
        rf_cuda_bw_result b;
        rf_err err;
        if (rf_cuda_bandwidth(ctx, (rf_cuda_bw_kind)kind, 16 << 20, &t, &b, &err) != RF_OK)
            fail_msg("%s: %s", rf_cuda_bw_kind_name((rf_cuda_bw_kind)kind), err.msg);
        rate_sane(&b.bw_bytes_per_s, rf_cuda_bw_kind_name((rf_cuda_bw_kind)kind));
        assert_int_equal(b.bytes_per_call, kind == RF_CUDA_BW_READ ? 16u << 20 : 32u << 20);
        assert_true(b.reps >= 1 && b.trials == t.trials);
    }
}

static void gemm_timed(void **state)
{
    rf_cuda_ctx *ctx = *state;
    rf_cuda_timing t = rf_cuda_timing_default(true);
    rf_cuda_gemm_result g;
    rf_err err;
    /* A made-up roof: 1 TFLOP/s and 100 GB/s, ridge 10. */
    rf_roof roof = {.math = RF_BF16, .peak_flops_per_s = 1e12, .bw_bytes_per_s = 1e11, .ridge = 10};
    if (rf_cuda_gemm_time(ctx, RF_CUDA_GEMM_CUBLASLT, RF_BF16, 64, 256, 384, &t, &roof, &g, &err) !=
        RF_OK)
        fail_msg("bf16 64x256x384: %s", err.msg);
    /* F = 2 M K N; Q = (M K + N K + M N) 2 bytes */
    assert_int_equal(g.flops, 2ull * 64 * 256 * 384);
    assert_int_equal(g.bytes, (64ull * 256 + 384ull * 256 + 64ull * 384) * 2);
    rate_sane(&g.flops_per_s, "bf16 GEMM");
    assert_true(g.check_err <= rf_cuda_gemm_tolerance(RF_BF16));
    assert_true(g.algos_tried >= 1 && g.copies >= 1);
    double attainable = fmin(1e12, g.intensity * 1e11);
    assert_true(fabs(g.roof_flops_per_s - attainable) <= 1e-9 * attainable);
    assert_true(fabs(g.of_roof - g.flops_per_s.best / attainable) <= 1e-9);
    assert_true(fabs(g.of_roof_median - g.flops_per_s.median / attainable) <= 1e-9);
    /* I = F / Q = 2 M K N / ((M K + N K + M N) 2) = 45.2 > ridge 10 */
    assert_int_equal(g.regime, RF_COMPUTE_BOUND);

    if (rf_cuda_gemm_time(ctx, RF_CUDA_GEMM_GEMV, RF_BF16, 1, 3584, 512, &t, NULL, &g, &err) !=
        RF_OK)
        fail_msg("gemv 1x3584x512: %s", err.msg);
    rate_sane(&g.bw_bytes_per_s, "gemv");
    assert_true(g.roof_flops_per_s == 0 && g.of_roof == 0);
    /* Rotation: W is 3.5 MiB, so several copies fill 4 x L2. */
    assert_true(g.copies > 1);
}

static void measure_quick(void **state)
{
    rf_cuda_ctx *ctx = *state;
    rf_cuda_measure_opts o = {.quick = true, .dtype_mask = 1u << RF_BF16, .gemm_dim = 1024};
    rf_hw_profile p;
    rf_err err;
    if (rf_cuda_measure(ctx, &o, &p, &err) != RF_OK)
        fail_msg("measure: %s", err.msg);
    const rf_cuda_device *d = rf_cuda_ctx_device(ctx);
    assert_string_equal(p.device, d->name);
    assert_int_equal(p.sm_count, d->sm_count);
    assert_true(p.bandwidth_bytes_per_s > 0);
    assert_true(p.peak_flops_per_s[RF_BF16] > 0);
    assert_true(p.peak_flops_per_s[RF_FP16] == 0); /* not asked for */
    /* kernels: copy_v16, read_v16, memcpy_d2d and >= 1 GEMM peak */
    assert_true(p.n_levels >= 1 && p.n_kernels >= 4);
    /* the memory roof is the device-memory read figure */
    assert_true(p.levels[p.n_levels - 1].bandwidth_bytes_per_s == p.bandwidth_bytes_per_s);
    assert_true(p.spread >= 0 && p.spread < 1);
    for (size_t i = 0; i < p.n_kernels; i++)
        assert_true(p.kernels[i].best >= p.kernels[i].median && p.kernels[i].min > 0);
}

/* A quick calibration on the device: every kind has a series, every point
 * a positive time and an efficiency floor / t in (0, 1.2] (a fraction of
 * the bf16 peak and the sustained read: a call cannot beat the roof; 1.2
 * leaves room for the median read below the best), and after the fit a
 * positive, finite eff = floor / (t - c0) (which exceeds 1 where a call
 * barely outlasts the fitted overhead); the calibration's roofs are the
 * profile's. Every kernel's result was checked inside. */
static void calibrate_quick(void **state)
{
    rf_cuda_ctx *ctx = *state;
    rf_cuda_measure_opts mo = {.quick = true, .dtype_mask = 1u << RF_BF16, .gemm_dim = 4096};
    rf_cuda_calib_opts co = {.quick = true};
    rf_hw_profile *p = calloc(1, sizeof *p);
    rf_err err;
    assert_non_null(p);
    if (rf_cuda_measure(ctx, &mo, p, &err) != RF_OK)
        fail_msg("measure: %s", err.msg);
    assert_true(p->bandwidth_sustained_bytes_per_s > 0 &&
                p->bandwidth_sustained_bytes_per_s <= p->bandwidth_bytes_per_s);
    if (rf_cuda_calibrate(ctx, &co, p, &err) != RF_OK)
        fail_msg("calibrate: %s", err.msg);
    const rf_calib *c = &p->calib;
    assert_int_equal(c->version, RF_CALIB_VERSION);
    assert_true(c->peak_flops_per_s == p->peak_flops_per_s[RF_BF16]);
    assert_true(c->bw_bytes_per_s == p->bandwidth_sustained_bytes_per_s);
    bool seen[RF_CALIB_KIND_COUNT] = {false};
    size_t points = 0;
    for (size_t i = 0; i < c->n_series; i++) {
        const rf_calib_series *s = &c->series[i];
        seen[s->kind] = true;
        for (size_t j = 0; j < s->n; j++) {
            const rf_calib_point *pt = &s->pt[j];
            /* the GPU points carry no roofs of their own: the calibration's */
            double of_roof = rf_calib_floor_s(c, pt->flops, pt->bytes) / pt->time_s;
            if (!(pt->time_s > 0 && of_roof > 0 && of_roof <= 1.2 && pt->eff > 0 &&
                  isfinite(pt->eff)))
                fail_msg("%s a=%lld b=%lld x=%lld: time %g s, floor / t %g, eff %g",
                         rf_calib_kind_name(s->kind), (long long)s->a, (long long)s->b,
                         (long long)pt->x, pt->time_s, of_roof, pt->eff);
            points++;
        }
    }
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++)
        if (!seen[k] || c->fit[k].n_points == 0)
            fail_msg("no %s series", rf_calib_kind_name((rf_calib_kind)k));
    rf_cuda_calib_plan pl = rf_cuda_calib_plan_of(true);
    assert_int_equal(points, rf_cuda_calib_plan_points(&pl));
    fprintf(stderr,
            "test_cuda: calibration: %zu points; gemm e %.2f c0 %.2g s, decode e %.2f, "
            "prefill e %.2f, copy e %.2f\n",
            points, c->fit[RF_CALIB_GEMM].efficiency, c->fit[RF_CALIB_GEMM].overhead_s,
            c->fit[RF_CALIB_ATTN_DECODE].efficiency, c->fit[RF_CALIB_ATTN_PREFILL].efficiency,
            c->fit[RF_CALIB_COPY].efficiency);
    free(p);
}

/* ---- CLI ---------------------------------------------------------------- */

static int cli_no_device_run(const char *exe, const char *extra)
{
    char cmd[1024], out[4096] = "";
    snprintf(cmd, sizeof cmd, "'%s' measure --device cuda:1023%s 2>&1 >/dev/null", exe, extra);
    FILE *f = popen(cmd, "r");
    if (!f) {
        fprintf(stderr, "test_cuda: cannot run %s\n", exe);
        return 1;
    }
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    int status = pclose(f);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    /* one line: the message and its newline, nothing after */
    const char *nl = strchr(out, '\n');
    int ok = code == 3 && (strstr(out, "cuda:1023") || strstr(out, "CUDA")) && nl && !nl[1];
    fprintf(stderr, "test_cuda: `roofline measure --device cuda:1023%s` exit %d: %s%s", extra, code,
            out, n && out[n - 1] == '\n' ? "" : "\n");
    if (!ok)
        fprintf(stderr, "test_cuda: FAIL: expected exit 3 and one line naming the device\n");
    return ok ? 0 : 1;
}

/* measure --device cuda:1023, and with --calibrate (--quick): exit 3, one
 * line, before anything is timed. */
static int cli_no_device(const char *exe)
{
    int bad = cli_no_device_run(exe, "");
    bad |= cli_no_device_run(exe, " --calibrate");
    bad |= cli_no_device_run(exe, " --calibrate --quick");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "cli"))
        return cli_no_device(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "device")) {
        int count = 0;
        rf_err err;
        if (rf_cuda_device_count(&count, &err) != RF_OK) {
            printf("test_cuda: skipped: the device tests need a CUDA GPU: %s\n", err.msg);
            return SKIP_CODE;
        }
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(identity),        cmocka_unit_test(gemm_against_cpu),
            cmocka_unit_test(gemm_refusals),   cmocka_unit_test(bandwidth_small),
            cmocka_unit_test(gemm_timed),      cmocka_unit_test(measure_quick),
            cmocka_unit_test(calibrate_quick),
        };
        return cmocka_run_group_tests(tests, open_ctx, close_ctx);
    }
    if (argc != 1) {
        fprintf(stderr, "usage: test_cuda [device | cli ROOFLINE]\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_specs),
        cmocka_unit_test(names_and_dtypes),
        cmocka_unit_test(timing_defaults),
        cmocka_unit_test(unavailable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
