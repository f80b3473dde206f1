/* test_cuda_calib.c - the host side of the GPU calibration (rf_cuda.h,
 * src/cuda/cuda_calib_plan.c): the grid, the sizes that keep W and the KV
 * cache out of L2, the operator each point stands for, how timed points
 * become a calibration, and the core's fit on them. No device needed: the
 * same code runs with the backend and without it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "roofline/rf_calib.h"
#include "roofline/rf_cuda.h"

#define MIB ((uint64_t)1 << 20)
/* An H200's L2 (the datasheet's 50 MB class; CUDA reports 50 MiB on an
 * H100 SXM) and its 132 SMs. */
#define L2 (50 * MIB)
#define SMS 132

static void increasing(const int64_t *v, size_t n, const char *what)
{
    if (n == 0)
        fail_msg("%s: empty", what);
    for (size_t i = 1; i < n; i++)
        if (v[i] <= v[i - 1])
            fail_msg("%s: not increasing at %zu (%lld after %lld)", what, i, (long long)v[i],
                     (long long)v[i - 1]);
}

static void plan_grid(void **state)
{
    (void)state;
    rf_cuda_calib_plan full = rf_cuda_calib_plan_of(false), quick = rf_cuda_calib_plan_of(true);
    const rf_cuda_calib_plan *pls[2] = {&full, &quick};
    for (int i = 0; i < 2; i++) {
        const rf_cuda_calib_plan *p = pls[i];
        increasing(p->m, p->n_m, "M");
        increasing(p->keys, p->n_keys, "keys");
        increasing(p->tokens, p->n_tokens, "tokens");
        increasing(p->elems, p->n_elems, "elements");
        increasing(p->copy_bytes, p->n_copy, "copy bytes");
        assert_true(p->n_gemm >= 4 && p->n_head_dims >= 1);
        /* the M range: 1 to 2048 */
        assert_int_equal(p->m[0], 1);
        assert_int_equal(p->m[p->n_m - 1], 2048);
        /* every series fits the calibration: GEMM shapes + attention
         * (decode, prefill) per d_h + the five element-wise kinds */
        assert_true(p->n_gemm + 2 * p->n_head_dims + 5 <= RF_CALIB_MAX_SERIES);
        assert_true(p->n_m <= RF_CALIB_MAX_POINTS && p->n_keys <= RF_CALIB_MAX_POINTS &&
                    p->n_elems <= RF_CALIB_MAX_POINTS && p->n_copy <= RF_CALIB_MAX_POINTS);
    }
    /* full: 10 shapes x 12 M + 2 d_h x (10 keys + 9 tokens) + 4 x 9 elements
     * + 9 copies = 120 + 38 + 36 + 9 = 203; quick: 4 x 6 + 1 x (4 + 4) +
     * 4 x 5 + 5 = 57, under a third */
    assert_int_equal(rf_cuda_calib_plan_points(&full), 203);
    assert_int_equal(rf_cuda_calib_plan_points(&quick), 57);
    /* the lm_head-sized shapes and Llama-3-8B's MLP are in both */
    bool lm = false, mlp = false;
    for (size_t i = 0; i < quick.n_gemm; i++) {
        lm = lm || quick.gemm[i][1] == 131072;
        mlp = mlp || (quick.gemm[i][0] == 4096 && quick.gemm[i][1] == 14336);
    }
    assert_true(lm && mlp);
}

static void rotation_defeats_l2(void **state)
{
    (void)state;
    const uint64_t big = (uint64_t)140 << 30, reserve = 256 * MIB;
    /* W of K = 2048, N = 256 in bf16 is 1 MiB: 200 copies make 4 x 50 MiB */
    assert_int_equal(rf_cuda_rotation_copies(MIB, L2, big, reserve), 200);
    /* K = 4096, N = 1024: 8 MiB a set, 25 copies */
    assert_int_equal(rf_cuda_rotation_copies(8 * MIB, L2, big, reserve), 25);
    /* 3 MiB: ceil(200 / 3) = 67; 66 would hold 198 MiB < 200 */
    uint64_t c = rf_cuda_rotation_copies(3 * MIB, L2, big, reserve);
    assert_int_equal(c, 67);
    assert_true(c * 3 * MIB >= 4 * L2 && (c - 1) * 3 * MIB < 4 * L2);
    /* an lm_head W (4096 x 131072 bf16 = 1 GiB) is larger than L2 itself */
    assert_int_equal(rf_cuda_rotation_copies((uint64_t)1 << 30, L2, big, reserve), 1);
    /* tiny sets stop at the cap; free memory bounds the count */
    assert_int_equal(rf_cuda_rotation_copies(64 << 10, L2, big, reserve), RF_CUDA_MAX_COPIES);
    assert_int_equal(rf_cuda_rotation_copies(MIB, L2, reserve + 100 * MIB, reserve), 100);
    assert_int_equal(rf_cuda_rotation_copies(MIB, L2, reserve / 2, reserve), 1);
    assert_int_equal(rf_cuda_rotation_copies(0, L2, big, reserve), 1);
}

static void decode_batch_and_split(void **state)
{
    (void)state;
    /* K and V of a sequence: 2 x 4 KV heads x S x d_h x 2 bytes.
     * S = 32768, d_h 128: 64 MiB, so 4 sequences hold 256 >= 200 MiB. */
    assert_int_equal(rf_cuda_calib_decode_batch(32768, 128, L2), 4);
    /* S = 64, d_h 64: 64 KiB a sequence, 3200 of them = 200 MiB exactly */
    assert_int_equal(rf_cuda_calib_decode_batch(64, 64, L2), 3200);
    rf_cuda_calib_plan full = rf_cuda_calib_plan_of(false);
    for (size_t d = 0; d < full.n_head_dims; d++)
        for (size_t i = 0; i < full.n_keys; i++) {
            int64_t S = full.keys[i], dh = full.head_dims[d];
            int64_t B = rf_cuda_calib_decode_batch(S, dh, L2);
            uint64_t per = 2 * 4 * (uint64_t)S * (uint64_t)dh * 2;
            assert_true((uint64_t)B * per >= 4 * L2 && (uint64_t)(B - 1) * per < 4 * L2);
            int split = rf_cuda_attn_split(B, 4, S, SMS);
            int64_t chunk = (S + split - 1) / split;
            assert_true(split >= 1 && split <= 64);
            assert_true((int64_t)(split - 1) * chunk < S); /* no empty slice */
            /* two blocks an SM, unless slices would drop below 256 keys */
            assert_true(B * 4 * split >= 2 * SMS || S / (split + 1) < 256 || split == 64);
        }
    /* B = 4 at S = 32768: 16 blocks, 17 slices of 1928 keys = 272 blocks */
    assert_int_equal(rf_cuda_attn_split(4, 4, 32768, SMS), 17);
    assert_int_equal(rf_cuda_attn_split(3200, 4, 64, SMS), 1);
    assert_int_equal(rf_cuda_attn_split(1, 4, 300, SMS), 1);
}

/* Every point's operator maps back to the point through the core's
 * rf_calib_shape_of, so `step --predict` reads the series it was timed in. */
static void points_are_step_operators(void **state)
{
    (void)state;
    rf_cuda_calib_plan full = rf_cuda_calib_plan_of(false);
    const rf_calib_kind ew[] = {RF_CALIB_NORM, RF_CALIB_ROPE, RF_CALIB_ACT, RF_CALIB_RESIDUAL};
    rf_op op;
    rf_err err;
    rf_calib_kind k;
    int64_t x, a, b;
    for (size_t i = 0; i < sizeof ew / sizeof ew[0]; i++)
        for (size_t j = 0; j < full.n_elems; j++) {
            if (rf_cuda_calib_op(ew[i], full.elems[j], 0, 1, &op, &err) != RF_OK)
                fail_msg("%s %lld: %s", rf_calib_kind_name(ew[i]), (long long)full.elems[j],
                         err.msg);
            assert_true(rf_calib_shape_of(&op, &k, &x, &a, &b));
            assert_int_equal(k, ew[i]);
            assert_int_equal(x, full.elems[j]);
            assert_true(op.n <= RF_CUDA_CALIB_WIDTH);
        }
    for (size_t j = 0; j < full.n_copy; j++) {
        assert_int_equal(rf_cuda_calib_op(RF_CALIB_COPY, full.copy_bytes[j], 0, 1, &op, &err),
                         RF_OK);
        assert_true(rf_calib_shape_of(&op, &k, &x, &a, &b));
        assert_int_equal(k, RF_CALIB_COPY);
        assert_int_equal(x, full.copy_bytes[j]);
        assert_int_equal(op.bytes, (uint64_t)full.copy_bytes[j]);
    }
    for (size_t d = 0; d < full.n_head_dims; d++) {
        for (size_t j = 0; j < full.n_keys; j++) {
            int64_t S = full.keys[j], dh = full.head_dims[d];
            int64_t B = rf_cuda_calib_decode_batch(S, dh, L2);
            assert_int_equal(rf_cuda_calib_op(RF_CALIB_ATTN_DECODE, S, dh, B, &op, &err), RF_OK);
            assert_true(rf_calib_shape_of(&op, &k, &x, &a, &b));
            assert_true(k == RF_CALIB_ATTN_DECODE && x == S && a == dh && b == 0);
        }
        for (size_t j = 0; j < full.n_tokens; j++) {
            int64_t T = full.tokens[j], dh = full.head_dims[d];
            assert_int_equal(rf_cuda_calib_op(RF_CALIB_ATTN_PREFILL, T, dh, 1, &op, &err), RF_OK);
            assert_true(rf_calib_shape_of(&op, &k, &x, &a, &b));
            assert_true(k == RF_CALIB_ATTN_PREFILL && x == T && a == dh && b == 0);
        }
    }

    /* Counted as the step counts them (docs/ACCOUNTING in the core):
     * norm over 2^20 elements = 256 rows of 4096: F = 4 M H = 4 x 2^20,
     * Q = 2 M H b_a + H b_w = 2 x 2^20 x 2 + 4096 x 2 = 4202496. */
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_NORM, 1 << 20, 0, 1, &op, &err), RF_OK);
    assert_int_equal(op.m, 256);
    assert_int_equal(op.flops, 4u << 20);
    assert_int_equal(op.bytes, 4202496u);
    /* residual: F = M H, Q = 3 M H b_a = 6 x 2^20 */
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_RESIDUAL, 1 << 20, 0, 1, &op, &err), RF_OK);
    assert_int_equal(op.flops, 1u << 20);
    assert_int_equal(op.bytes, 6u << 20);
    /* decode, S = 1024, d_h 128, B = 16, 16 query heads over 4 KV heads:
     * F = 4 n_q S d_h B = 4 x 16 x 1024 x 128 x 16 = 134217728;
     * Q = K and V, 2 n_kv S d_h b B = 2 x 4 x 1024 x 128 x 2 x 16 =
     * 33554432, + q read and o write, 2 x B n_q d_h b = 2 x 16 x 16 x 128 x 2
     * = 131072: 33685504 */
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_ATTN_DECODE, 1024, 128, 16, &op, &err), RF_OK);
    assert_int_equal(op.flops, 134217728u);
    assert_int_equal(op.bytes, 33685504u);
    /* causal prefill, T = 128, d_h 128: pairs T (T + 1) / 2 = 8256,
     * F = 4 n_q pairs d_h = 4 x 16 x 8256 x 128 = 67633152 */
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_ATTN_PREFILL, 128, 128, 1, &op, &err), RF_OK);
    assert_int_equal(op.flops, 67633152u);

    /* shapes the kernels do not run */
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_ROPE, 1000, 0, 1, &op, &err), RF_EINVAL);
    assert_non_null(strstr(err.msg, "rope"));
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_ATTN_DECODE, 1024, 96, 1, &op, &err), RF_EINVAL);
    assert_non_null(strstr(err.msg, "96"));
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_GEMM, 16, 4096, 1, &op, &err), RF_EINVAL);
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_COPY, 100, 0, 1, &op, &err), RF_EINVAL);
    assert_int_equal(rf_cuda_calib_op(RF_CALIB_NORM, 0, 0, 1, &op, &err), RF_EINVAL);
}

static void add_keeps_order(void **state)
{
    (void)state;
    rf_calib *c = calloc(1, sizeof *c);
    rf_err err;
    assert_non_null(c);
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_GEMM, 4096, 4096, 16, 1, 1, 1e-5, &err), RF_OK);
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_GEMM, 4096, 4096, 1, 1, 1, 1e-5, &err), RF_OK);
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_GEMM, 4096, 4096, 4, 1, 1, 1e-5, &err), RF_OK);
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_GEMM, 2048, 4096, 4, 1, 1, 1e-5, &err), RF_OK);
    assert_int_equal(c->n_series, 2);
    assert_int_equal(c->series[0].n, 3);
    assert_int_equal(c->series[0].pt[0].x, 1);
    assert_int_equal(c->series[0].pt[1].x, 4);
    assert_int_equal(c->series[0].pt[2].x, 16);
    /* a second point at the same x, a time that is not positive, no kind */
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_GEMM, 4096, 4096, 4, 1, 1, 2e-5, &err),
                     RF_EINVAL);
    assert_non_null(strstr(err.msg, "x=4"));
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_NORM, 0, 0, 64, 1, 1, -1e-6, &err), RF_EINVAL);
    assert_non_null(strstr(err.msg, "norm"));
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_NORM, 0, 0, 64, 0, 0, 1e-6, &err), RF_EINVAL);
    assert_int_equal(rf_cuda_calib_add(c, RF_CALIB_KIND_COUNT, 0, 0, 64, 1, 1, 1e-6, &err),
                     RF_EINVAL);
    assert_int_equal(c->series[0].n, 3);
    free(c);
}

/* The plan's points timed as t = c0 + floor / e with a known c0 and e per
 * kind, on an H200's roof (4.8 TB/s HBM3e, 989.4 TFLOP/s dense bf16): the
 * core's fit recovers both, every point's efficiency is e, and a
 * prediction at a calibrated shape is its time. */
static void fit_on_plan_points(void **state)
{
    (void)state;
    rf_calib *c = calloc(1, sizeof *c);
    rf_err err;
    assert_non_null(c);
    c->version = RF_CALIB_VERSION;
    c->bw_bytes_per_s = 4.8e12;
    c->peak_flops_per_s = 989.4e12;
    double c0[RF_CALIB_KIND_COUNT], e[RF_CALIB_KIND_COUNT];
    /* c0 of 1 .. 8 ns: under the fit's bound, 0.95 x the fastest call
     * (the smallest copy, 4 KiB, moves in 0.85 ns at 4.8 TB/s) */
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++)
        c0[k] = 1e-9 * (1 + k), e[k] = 0.3 + 0.08 * k;
    rf_cuda_calib_plan pl = rf_cuda_calib_plan_of(true);
#define PUT(kind, a_, b_, x_, F, Q)                                                                \
    assert_int_equal(rf_cuda_calib_add(c, kind, a_, b_, x_, F, Q,                                  \
                                       c0[kind] + rf_calib_floor_s(c, F, Q) / e[kind], &err),      \
                     RF_OK)
    for (size_t s = 0; s < pl.n_gemm; s++)
        for (size_t i = 0; i < pl.n_m; i++) {
            double M = (double)pl.m[i], K = (double)pl.gemm[s][0], N = (double)pl.gemm[s][1];
            PUT(RF_CALIB_GEMM, pl.gemm[s][0], pl.gemm[s][1], pl.m[i], 2 * M * K * N,
                (M * K + K * N + M * N) * 2);
        }
    rf_op op;
    for (size_t d = 0; d < pl.n_head_dims; d++) {
        int64_t dh = pl.head_dims[d];
        for (size_t i = 0; i < pl.n_keys; i++) {
            int64_t B = rf_cuda_calib_decode_batch(pl.keys[i], dh, L2);
            assert_int_equal(rf_cuda_calib_op(RF_CALIB_ATTN_DECODE, pl.keys[i], dh, B, &op, &err),
                             RF_OK);
            PUT(RF_CALIB_ATTN_DECODE, dh, 0, pl.keys[i], (double)op.flops, (double)op.bytes);
        }
        for (size_t i = 0; i < pl.n_tokens; i++) {
            assert_int_equal(
                rf_cuda_calib_op(RF_CALIB_ATTN_PREFILL, pl.tokens[i], dh, 1, &op, &err), RF_OK);
            PUT(RF_CALIB_ATTN_PREFILL, dh, 0, pl.tokens[i], (double)op.flops, (double)op.bytes);
        }
    }
    const rf_calib_kind ew[] = {RF_CALIB_NORM, RF_CALIB_ROPE, RF_CALIB_ACT, RF_CALIB_RESIDUAL};
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < pl.n_elems; i++) {
            assert_int_equal(rf_cuda_calib_op(ew[k], pl.elems[i], 0, 1, &op, &err), RF_OK);
            PUT(ew[k], 0, 0, pl.elems[i], (double)op.flops, (double)op.bytes);
        }
    for (size_t i = 0; i < pl.n_copy; i++) {
        assert_int_equal(rf_cuda_calib_op(RF_CALIB_COPY, pl.copy_bytes[i], 0, 1, &op, &err), RF_OK);
        PUT(RF_CALIB_COPY, 0, 0, pl.copy_bytes[i], (double)op.flops, (double)op.bytes);
    }
#undef PUT
    if (rf_calib_fit_all(c, &err) != RF_OK)
        fail_msg("fit: %s", err.msg);
    for (int k = 0; k < RF_CALIB_KIND_COUNT; k++) {
        const rf_calib_fit *f = &c->fit[k];
        if (fabs(f->overhead_s - c0[k]) > 1e-6 * c0[k] || fabs(f->efficiency - e[k]) > 1e-6)
            fail_msg("%s: c0 %g (want %g), e %g (want %g)", rf_calib_kind_name((rf_calib_kind)k),
                     f->overhead_s, c0[k], f->efficiency, e[k]);
        assert_true(f->rms_residual < 1e-6);
    }
    rf_calib_pred pr;
    /* M = 64 of K = 4096, N = 14336 (a calibrated shape in the quick plan) */
    double F = 2.0 * 64 * 4096 * 14336, Q = (64.0 * 4096 + 4096.0 * 14336 + 64.0 * 14336) * 2;
    assert_int_equal(rf_calib_predict(c, RF_CALIB_GEMM, 64, 4096, 14336, F, Q, &pr, &err), RF_OK);
    assert_true(pr.in_range);
    double want = c0[RF_CALIB_GEMM] + rf_calib_floor_s(c, F, Q) / e[RF_CALIB_GEMM];
    assert_true(fabs(pr.time_s - want) <= 1e-9 * want);
    free(c);
}

/* rf_cuda_calibrate: a profile without a bf16 peak is refused before any
 * device call (backend built); without the backend, unavailable. */
static void calibrate_refusals(void **state)
{
    (void)state;
    rf_hw_profile *p = calloc(1, sizeof *p);
    rf_err err;
    assert_non_null(p);
    rf_status st = rf_cuda_calibrate(NULL, NULL, p, &err);
    if (!rf_cuda_built()) {
        assert_int_equal(st, RF_EUNAVAIL);
        assert_non_null(strstr(err.msg, "CUDA backend not built"));
    } else {
        assert_int_equal(st, RF_EINVAL);
        assert_non_null(strstr(err.msg, "bf16 peak"));
        assert_int_equal(p->calib.version, 0);
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_grid),
        cmocka_unit_test(rotation_defeats_l2),
        cmocka_unit_test(decode_batch_and_split),
        cmocka_unit_test(points_are_step_operators),
        cmocka_unit_test(add_keeps_order),
        cmocka_unit_test(fit_on_plan_points),
        cmocka_unit_test(calibrate_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
