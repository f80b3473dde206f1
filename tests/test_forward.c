/* test_forward.c - the real forward pass (rf_forward.h): the reference
 * check (and that it can fail), the plan's figures against rf_step, the
 * timing statistics, the memory guard, bad options, and a smoke run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attn_kernels.h"
#include "forward_internal.h"
#include "roofline/rf_forward.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_reader.h"
#include "roofline/rf_step.h"

#define TINY RF_TEST_DATA "/profile/tiny-llama.json"

/* tiny-llama.json: H = 64, n_q = 4, n_kv = 2, d_h = 16, F_ff = 160,
 * V = 300, L = 3, untied, no biases. */
static rf_model tiny(void)
{
    rf_model m;
    rf_err e;
    assert_int_equal(rf_model_load(TINY, &m, &e), RF_OK);
    return m;
}

static rf_model preset(const char *name)
{
    rf_model m;
    assert_int_equal(rf_model_preset(name, &m, NULL), RF_OK);
    return m;
}

/* Round figures: pi = 1e11 FLOP/s, beta = 1e10 B/s, ridge 10. */
static rf_roof roof(void)
{
    rf_roof r = {.math = RF_FP32, .peak_flops_per_s = 1e11, .bw_bytes_per_s = 1e10, .ridge = 10};
    return r;
}

static const rf_forward_op *op_named(const rf_forward_run *run, const char *name)
{
    for (size_t i = 0; i < run->n_ops; i++)
        if (!strcmp(run->ops[i].name, name))
            return &run->ops[i];
    return NULL;
}

/* ---- the reference check -------------------------------------------------- */

/* Every shape family the pass supports agrees with the scalar reference:
 * Qwen2 (g = 7, q/k/v biases), Llama-3 (g = 4), Gemma-2 (sliding-window
 * layers, d_h != H / n_q), and multi-head attention (g = 1, GEMV scores).
 * The error is not 0: the pass is fp32 and the reference double, so a 0
 * would mean the comparison read the pass's own numbers. */
static void check_agrees_for_every_family(void **state)
{
    (void)state;
    const char *names[] = {"qwen2.5-7b-instruct", "llama-3-8b", "gemma-2-9b-it"};
    rf_err e;
    double err = -1;
    for (size_t i = 0; i < 3; i++) {
        rf_model m = preset(names[i]);
        assert_int_equal(rf_forward_check(&m, NULL, &err, &e), RF_OK);
        assert_true(err > 0 && err <= RF_FORWARD_TOLERANCE);
    }
    rf_model mha = preset("llama-3-8b");
    mha.n_kv = mha.n_q;
    assert_int_equal(rf_forward_check(&mha, NULL, &err, &e), RF_OK);
    assert_true(err > 0 && err <= RF_FORWARD_TOLERANCE);
}

static double max_diff(const float *a, const float *b, int64_t n)
{
    double d = 0;
    for (int64_t i = 0; i < n; i++)
        d = fmax(d, fabs((double)a[i] - (double)b[i]));
    return d;
}

/* The comparison can fail: after one weight of q_proj changes under the
 * pass, the reference (which reads the changed weight) no longer matches
 * the hidden states the pass computed with the old one. */
static void reference_detects_a_changed_weight(void **state)
{
    (void)state;
    rf_model m = tiny();
    rf_forward_opts o = rf_forward_opts_default();
    o.context = 6;
    o.batch = 2;
    o.layers = 1;
    rf_forward *f = NULL;
    rf_forward_times t;
    rf_err e;
    assert_int_equal(rf_forward_new(&m, &o, &f, &e), RF_OK);
    assert_int_equal(rf_forward_step(f, &t, &e), RF_OK);
    int64_t nx = f->d.M * f->d.H, nkv = f->d.N * f->d.M * f->d.kv_dim;
    float *x = malloc((size_t)nx * sizeof *x), *lg = malloc((size_t)(2 * f->d.V) * sizeof *lg);
    float *k = malloc((size_t)nkv * sizeof *k), *v = malloc((size_t)nkv * sizeof *v);
    assert_non_null(x);
    assert_non_null(lg);
    assert_non_null(k);
    assert_non_null(v);
    assert_int_equal(rf__forward_ref(f, x, lg, k, v, &e), RF_OK);
    /* fp32 through BLAS against the scalar loops: only the summation order
     * differs, a few ulps of values near 1 over a handful of layers, far
     * below 1e-4; a weight moved by 0.5 moves the output far above 1e-3 */
    assert_true(max_diff(f->x, x, nx) < 1e-4);
    f->layers[0].wq[3] += 0.5f;
    assert_int_equal(rf__forward_ref(f, x, lg, k, v, &e), RF_OK);
    assert_true(max_diff(f->x, x, nx) > 1e-3);
    free(x);
    free(lg);
    free(k);
    free(v);
    rf_forward_free(f);
}

/* ---- the decode attention kernels ------------------------------------------ */

/* Every kernel table this CPU has, its attention kernels against the
 * portable reference on awkward shapes: g of 1 (MHA), 4 and 7; key counts
 * around the 4-key and 64-key blocks; d_h of 8 (one vector), 72 (a 64-wide
 * chunk and a tail) and 128 (each where the table's variant takes it). */
static void attn_kernels_agree(void **state)
{
    (void)state;
    rf_cpu cpu;
    assert_int_equal(rf_cpu_query(&cpu, NULL), RF_OK);
    const int64_t gs[] = {1, 4, 7}, nks[] = {1, 3, 4, 5, 63, 64, 65, 130}, dhs[] = {8, 72, 128};
    float *q = malloc(7 * 128 * sizeof *q), *kv = malloc(130 * 128 * sizeof *kv);
    float *a = malloc(7 * 130 * sizeof *a), *b = malloc(7 * 130 * sizeof *b);
    assert_non_null(q);
    assert_non_null(kv);
    assert_non_null(a);
    assert_non_null(b);
    uint32_t x = 12345;
    for (int i = 0; i < 130 * 128; i++) {
        x = x * 1664525u + 1013904223u;
        kv[i] = (float)(x >> 8) / 16777216.0f - 0.5f;
        if (i < 7 * 128)
            q[i] = kv[i] * 2;
    }
    for (int isa = 0; isa < RF_ISA_COUNT; isa++) {
        rf_kernel_table t;
        if (rf_kernels_for(&cpu, (rf_isa)isa, &t, NULL) != RF_OK)
            continue; /* not on this CPU */
        for (size_t gi = 0; gi < 3; gi++)
            for (size_t ni = 0; ni < 8; ni++)
                for (size_t di = 0; di < 3; di++) {
                    int64_t g = gs[gi], nk = nks[ni], dh = dhs[di];
                    if (dh % t.attn_dh_multiple)
                        continue;
                    rf_kern_attn_scores_ref_f32(q, kv, g, nk, dh, 0.125f, a);
                    t.attn_scores_f32(q, kv, g, nk, dh, 0.125f, b);
                    /* the same fp32 dot products summed in another order:
                     * the logits differ by a few ulps (~1e-7 each), and a
                     * softmax weight in [0, 1] moves by about as much,
                     * relatively, so 1e-5 leaves two decades; the values
                     * then sum up to 7 x 128 such products: 1e-4 */
                    assert_true(max_diff(a, b, g * nk) < 1e-5);
                    /* values: p = the scores as weights */
                    float out_ref[7 * 128], out_isa[7 * 128];
                    rf_kern_attn_values_ref_f32(a, kv, g, nk, dh, out_ref);
                    t.attn_values_f32(a, kv, g, nk, dh, out_isa);
                    assert_true(max_diff(out_ref, out_isa, g * dh) < 1e-4);
                }
    }
    free(q);
    free(kv);
    free(a);
    free(b);
}

/* The table's attention entries: the reference at the scalar level, AVX2's
 * for the AVX2 and AVX-512 levels (made-up CPUs, so every level is seen);
 * the pass takes the ISA RF_ISA names and says which kernel ran. */
static void attn_kernels_from_the_table(void **state)
{
    (void)state;
    rf_cpu c;
    memset(&c, 0, sizeof c);
    c.sse2 = c.avx = c.fma = c.avx2 = c.os_ymm = c.avx512f = c.os_zmm = true;
    rf_kernel_table t;
    assert_int_equal(rf_kernels_for(&c, RF_ISA_SCALAR, &t, NULL), RF_OK);
    assert_ptr_equal(t.attn_scores_f32, rf_kern_attn_scores_ref_f32);
    assert_ptr_equal(t.attn_values_f32, rf_kern_attn_values_ref_f32);
    assert_int_equal(t.attn_isa, RF_ISA_SCALAR);
    assert_int_equal(t.attn_dh_multiple, 1);
#if defined(__x86_64__) || defined(__i386__)
    assert_int_equal(rf_kernels_for(&c, RF_ISA_SSE, &t, NULL), RF_OK);
    assert_int_equal(t.attn_isa, RF_ISA_SCALAR); /* no SSE variant */
    for (rf_isa isa = RF_ISA_AVX2; isa <= RF_ISA_AVX512; isa++) {
        assert_int_equal(rf_kernels_for(&c, isa, &t, NULL), RF_OK);
        assert_ptr_equal(t.attn_scores_f32, rf_kern_attn_scores_avx2_f32);
        assert_ptr_equal(t.attn_values_f32, rf_kern_attn_values_avx2_f32);
        assert_int_equal(t.attn_isa, RF_ISA_AVX2);
        assert_int_equal(t.attn_dh_multiple, 8);
    }
#endif
    /* tiny-llama (d_h = 16) forced to the scalar level runs the reference */
    rf_model m = tiny();
    rf_forward_opts o = rf_forward_opts_default();
    o.context = 4;
    o.layers = 1;
    o.isa = "scalar";
    rf_forward *f = NULL;
    rf_err e;
    assert_int_equal(rf_forward_new(&m, &o, &f, &e), RF_OK);
    assert_string_equal(f->attn_kernel, "attn_scalar_f32");
    rf_forward_free(f);
    o.isa = "avx9";
    assert_int_equal(rf_forward_new(&m, &o, &f, &e), RF_EINVAL);
    assert_null(f);
    assert_non_null(strstr(e.msg, "avx9"));
}

/* ---- the plan: the same figures as rf_step -------------------------------- */

/* Llama-3-8B decode, B = 1, S = 1024, two layers, fp32 (b = 4):
 *   q_proj     F = 2 M K N = 2 x 4096 x 4096 = 33,554,432
 *              Q = (M K + K N + M N) b = (4096 + 16,777,216 + 4096) x 4
 *                = 67,141,632
 *   attention  F = 4 n_q S d_h = 4 x 32 x 1024 x 128 = 16,777,216
 *              Q = 2 n_kv S d_h b = 2 x 8 x 1024 x 128 x 4 = 8,388,608
 *   attn_norm  F = 4 M H = 16,384;  Q = (2 M H + H) b = 49,152
 *   act        F = 4 M F_ff = 57,344;  Q = 3 M F_ff b = 172,032
 * floors on pi = 1e11, beta = 1e10: q_proj is memory-bound,
 * 67,141,632 / 1e10 s. */
static void plan_matches_rf_step(void **state)
{
    (void)state;
    rf_model m = preset("llama-3-8b");
    rf_forward_opts o = rf_forward_opts_default();
    rf_roof r = roof();
    rf_forward_run *run = malloc(sizeof *run);
    rf_err e;
    assert_non_null(run);
    assert_int_equal(rf_forward_plan(&m, &o, &r, run, &e), RF_OK);
    const rf_forward_op *q = op_named(run, "q_proj"), *a = op_named(run, "attention");
    const rf_forward_op *n = op_named(run, "attn_norm"), *act = op_named(run, "act");
    const rf_forward_op *head = op_named(run, "lm_head");
    assert_non_null(q);
    assert_non_null(a);
    assert_non_null(n);
    assert_non_null(act);
    assert_non_null(head);
    assert_null(op_named(run, "attention_swa")); /* no sliding layer */
    assert_int_equal(q->flops, 33554432);
    assert_int_equal(q->bytes, 67141632);
    assert_int_equal(q->count, 2);
    assert_true(q->in_step_floor);
    assert_int_equal(q->bound, RF_MEMORY_BOUND);
    assert_true(fabs(q->floor_s - 67141632 / 1e10) < 1e-15);
    assert_int_equal(a->flops, 16777216);
    assert_int_equal(a->bytes, 8388608);
    assert_int_equal(n->flops, 16384);
    assert_int_equal(n->bytes, 49152);
    assert_false(n->in_step_floor);
    assert_int_equal(act->flops, 57344);
    assert_int_equal(act->bytes, 172032);
    assert_int_equal(head->count, 1);

    /* the step floor is rf_step's for the two layers run, the model floor
     * rf_step's for all 32 */
    rf_step_opts so = rf_step_opts_default();
    so.context = 1024;
    so.w = so.a = so.kv = rf_dtype_of(RF_FP32);
    rf_step st;
    assert_int_equal(rf_step_compute(&m, &so, &r, &st, &e), RF_OK);
    assert_true(run->model_floor_s == st.floor_s);
    m.layers = 2;
    assert_int_equal(rf_step_compute(&m, &so, &r, &st, &e), RF_OK);
    assert_true(run->floor_s == st.floor_s);
    assert_true(run->floor_sum_of_max_s == st.floor_sum_of_max_s);
    free(run);
}

/* The element-wise formulas live in core (rf_op.h); at mixed dtypes, for
 * Llama-3-8B decode at M = 1 (H = 4096, n_q 32, n_kv 8, d_h 128,
 * F_ff 14,336), bf16 activations and weights (b_a = b_w = 2), fp8 cache
 * (b_kv = 1):
 *   norm      F = 4 M H = 16,384;  Q = 2 M H b_a + H b_w = 16,384 + 8,192
 *             = 24,576 (weight 8,192)
 *   rope      E = M (32 + 8) 128 = 5,120: F = 3 E = 15,360; Q = 2 E b_a
 *             = 20,480
 *   kv_write  F = 0; Q = 2 M 1024 b_a + 2 M 1024 b_kv = 4,096 + 2,048
 *             = 6,144 (kv 2,048)
 *   residual  F = M H = 4,096;  Q = 3 M H b_a = 24,576
 *   act       F = 5 M F_ff = 71,680;  Q = 3 M F_ff b_a = 86,016
 * and a zero-row operator is refused naming the rows. */
static void elementwise_formulas_in_core(void **state)
{
    (void)state;
    rf_dtype bf16 = rf_dtype_of(RF_BF16), fp8 = rf_dtype_of(RF_FP8_E4M3);
    rf_op o;
    rf_err e;
    assert_int_equal(rf_op_norm("attn_norm", 1, 4096, bf16, bf16, &o, &e), RF_OK);
    assert_int_equal(o.kind, RF_OP_ELEMENTWISE);
    assert_int_equal(o.flops, 16384);
    assert_int_equal(o.bytes, 24576);
    assert_int_equal(o.weight_bytes, 8192);
    assert_int_equal(rf_op_rope("rope", 1, 40, 128, bf16, &o, &e), RF_OK);
    assert_int_equal(o.n, 5120);
    assert_int_equal(o.flops, 15360);
    assert_int_equal(o.bytes, 20480);
    assert_int_equal(rf_op_kv_write("kv_write", 1, 8, 128, fp8, bf16, &o, &e), RF_OK);
    assert_int_equal(o.flops, 0);
    assert_int_equal(o.bytes, 6144);
    assert_int_equal(o.kv_bytes, 2048);
    assert_int_equal(rf_op_residual("attn_residual", 1, 4096, bf16, &o, &e), RF_OK);
    assert_int_equal(o.flops, 4096);
    assert_int_equal(o.bytes, 24576);
    assert_int_equal(rf_op_act("act", 1, 14336, RF_ACT_SILU_MUL_FLOPS, bf16, &o, &e), RF_OK);
    assert_int_equal(o.flops, 71680);
    assert_int_equal(o.bytes, 86016);
    assert_int_equal(rf_op_residual("mlp_residual", 0, 4096, bf16, &o, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "rows (0)"));
}

/* The plan's element-wise rows are core's figures at fp32 (profile keeps
 * no copy of the formulas): every one equals the rf_op_* call's. */
static void plan_elementwise_is_core(void **state)
{
    (void)state;
    rf_model m = preset("llama-3-8b");
    rf_forward_opts o = rf_forward_opts_default();
    o.batch = 3;
    rf_roof r = roof();
    rf_forward_run *run = malloc(sizeof *run);
    rf_err e;
    assert_non_null(run);
    assert_int_equal(rf_forward_plan(&m, &o, &r, run, &e), RF_OK);
    rf_dtype f32 = rf_dtype_of(RF_FP32);
    rf_op want[7];
    const char *names[7] = {"attn_norm", "rope",         "kv_write",  "attn_residual",
                            "act",       "mlp_residual", "final_norm"};
    assert_int_equal(rf_op_norm("", 3, 4096, f32, f32, &want[0], &e), RF_OK);
    assert_int_equal(rf_op_rope("", 3, 40, 128, f32, &want[1], &e), RF_OK);
    assert_int_equal(rf_op_kv_write("", 3, 8, 128, f32, f32, &want[2], &e), RF_OK);
    assert_int_equal(rf_op_residual("", 3, 4096, f32, &want[3], &e), RF_OK);
    assert_int_equal(rf_op_act("", 3, 14336, RF_ACT_SILU_MUL_FLOPS_AS_RUN, f32, &want[4], &e),
                     RF_OK);
    want[5] = want[3];
    assert_int_equal(rf_op_norm("", 3, 4096, f32, f32, &want[6], &e), RF_OK); /* M = B */
    for (int i = 0; i < 7; i++) {
        const rf_forward_op *got = op_named(run, names[i]);
        assert_non_null(got);
        assert_int_equal(got->flops, want[i].flops);
        assert_int_equal(got->bytes, want[i].bytes);
        assert_int_equal(got->n, want[i].n);
    }
    free(run);
}

/* Gemma-2 alternates sliding and global layers: two layers give one row of
 * each kind, count 1 each. */
static void plan_splits_sliding_layers(void **state)
{
    (void)state;
    rf_model m = preset("gemma-2-9b-it");
    rf_forward_opts o = rf_forward_opts_default();
    rf_roof r = roof();
    rf_forward_run *run = malloc(sizeof *run);
    assert_non_null(run);
    assert_int_equal(rf_forward_plan(&m, &o, &r, run, NULL), RF_OK);
    const rf_forward_op *g = op_named(run, "attention"), *w = op_named(run, "attention_swa");
    assert_non_null(g);
    assert_non_null(w);
    assert_int_equal(g->count + w->count, 2);
    free(run);
}

/* ---- timing statistics ---------------------------------------------------- */

/* Three steps of made-up times on tiny-llama (L = 3) with one layer run:
 * every operator takes count x {1, 3, 2} ms, so per instance the median is
 * 2 ms, min 1, max 3, whatever its count; down_proj takes ten times as
 * long (median 20 ms), so it owns the largest residual. Steps take
 * {50, 10, 30} ms (median 30), layers {20, 6, 10} (median 10), head
 * {30, 4, 20} (median 20); the model estimate is 10 x 3 / 1 + 20 = 50 ms. */
static void summary_takes_medians(void **state)
{
    (void)state;
    rf_model m = tiny();
    rf_forward_opts o = rf_forward_opts_default();
    o.layers = 1;
    o.context = 8;
    rf_roof r = roof();
    rf_forward_run *run = malloc(sizeof *run);
    rf_err e;
    assert_non_null(run);
    assert_int_equal(rf_forward_plan(&m, &o, &r, run, &e), RF_OK);
    const double scale[3] = {1, 3, 2}, step[3] = {50, 10, 30}, layers[3] = {20, 6, 10},
                 head[3] = {30, 4, 20};
    rf_forward_times t[3];
    memset(t, 0, sizeof t);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < run->n_ops; i++) {
            const rf_forward_op *op = &run->ops[i];
            double x = op->id == RF_FWD_DOWN_PROJ ? 10 : 1;
            t[k].op_s[op->id] = (double)op->count * scale[k] * x * 1e-3;
        }
        t[k].step_s = step[k] * 1e-3;
        t[k].layers_s = layers[k] * 1e-3;
        t[k].head_s = head[k] * 1e-3;
    }
    assert_int_equal(rf_forward_summarize(run, t, 3, &e), RF_OK);
    for (size_t i = 0; i < run->n_ops; i++) {
        const rf_forward_op *op = &run->ops[i];
        double x = op->id == RF_FWD_DOWN_PROJ ? 10 : 1;
        assert_true(fabs(op->measured_s - 2e-3 * x) < 1e-12);
        assert_true(fabs(op->min_s - 1e-3 * x) < 1e-12);
        assert_true(fabs(op->max_s - 3e-3 * x) < 1e-12);
        assert_true(fabs(op->efficiency - op->floor_s / (2e-3 * x)) < 1e-12);
        assert_true(fabs(op->residual_s - (double)op->count * (2e-3 * x - op->floor_s)) < 1e-12);
        if (op->flops)
            assert_true(fabs(op->flops_per_s - (double)op->flops / (2e-3 * x)) <
                        1e-6 * op->flops_per_s);
    }
    assert_true(fabs(run->measured_s - 30e-3) < 1e-12);
    assert_true(fabs(run->measured_min_s - 10e-3) < 1e-12);
    assert_true(fabs(run->measured_max_s - 50e-3) < 1e-12);
    assert_true(fabs(run->residual_s - (30e-3 - run->floor_s)) < 1e-12);
    assert_true(fabs(run->layers_s - 10e-3) < 1e-12);
    assert_true(fabs(run->head_s - 20e-3) < 1e-12);
    assert_true(fabs(run->estimated_model_s - 50e-3) < 1e-12);
    assert_true(fabs(run->estimated_tokens_per_s - 1 / 50e-3) < 1e-9);
    assert_int_equal(run->opts.steps, 3);
    assert_int_equal(run->n_owners, RF_FORWARD_OWNERS);
    assert_string_equal(run->ops[run->owners[0]].name, "down_proj");
    assert_true(run->ops[run->owners[1]].residual_s >= run->ops[run->owners[2]].residual_s);
    assert_true(fabs(run->owner_share[0] - run->ops[run->owners[0]].residual_s / run->residual_s) <
                1e-12);

    /* An even count takes the mean of the middle two: {1, 3, 2, 4} -> 2.5. */
    rf_forward_times t4[4];
    memset(t4, 0, sizeof t4);
    const double s4[4] = {1, 3, 2, 4};
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < run->n_ops; i++)
            t4[k].op_s[run->ops[i].id] = (double)run->ops[i].count * s4[k] * 1e-3;
        t4[k].step_s = t4[k].layers_s = t4[k].head_s = s4[k] * 1e-3;
    }
    assert_int_equal(rf_forward_summarize(run, t4, 4, &e), RF_OK);
    assert_true(fabs(run->ops[0].measured_s - 2.5e-3) < 1e-12);
    assert_true(fabs(run->measured_s - 2.5e-3) < 1e-12);

    assert_int_equal(rf_forward_summarize(run, t, 0, &e), RF_EINVAL);
    free(run);
}

/* ---- the memory guard ------------------------------------------------------ */

/* tiny-llama, one layer, decode B = 1, S = 8 (cache of 8 positions), b = 4:
 *   layer  2 H + (n_q + 2 n_kv) d_h H + H n_q d_h + 3 F_ff H
 *          = 128 + 128 x 64 + 64 x 64 + 3 x 160 x 64 = 43,136 elements
 *          = 172,544 bytes
 *   head   V H + H = 300 x 64 + 64 = 19,264 elements = 77,056 bytes
 *   KV     N B cap 2 n_kv d_h = 1 x 1 x 8 x 64 = 512 elements = 2,048 bytes */
static void memory_is_counted_exactly(void **state)
{
    (void)state;
    rf_model m = tiny();
    rf_forward_opts o = rf_forward_opts_default();
    o.layers = 1;
    o.context = 8;
    rf_forward_mem mem;
    rf_err e;
    assert_int_equal(rf_forward_mem_of(&m, &o, &mem, &e), RF_OK);
    assert_int_equal(mem.layer_bytes, 172544);
    assert_int_equal(mem.head_bytes, 77056);
    assert_int_equal(mem.kv_bytes, 2048);
    assert_int_equal(mem.total_bytes,
                     mem.layer_bytes + mem.head_bytes + mem.kv_bytes + mem.act_bytes);
}

/* A request that does not fit is refused with its size and what would fit;
 * the suggestions are the largest that fit. */
static void guard_suggests_what_fits(void **state)
{
    (void)state;
    rf_model m = tiny();
    rf_forward_opts o = rf_forward_opts_default();
    o.context = 64;
    o.layers = 3;
    rf_forward_mem two, three;
    rf_err e;
    rf_forward_opts t = o;
    t.layers = 2;
    assert_int_equal(rf_forward_mem_of(&m, &t, &two, &e), RF_OK);
    assert_int_equal(rf_forward_mem_of(&m, &o, &three, &e), RF_OK);
    /* room for exactly two layers: usable = 0.9 x avail >= two.total */
    uint64_t avail = (uint64_t)ceil((double)two.total_bytes / RF_FORWARD_MEM_FRACTION) + 1;
    assert_true((double)avail * RF_FORWARD_MEM_FRACTION < (double)three.total_bytes);
    assert_int_equal(rf_forward_fit(&m, &t, avail, &e), RF_OK);
    assert_int_equal(rf_forward_fit(&m, &o, avail, &e), RF_ENOMEM);
    assert_non_null(strstr(e.msg, "tiny-llama needs"));
    assert_non_null(strstr(e.msg, "--layers 2"));

    /* one layer, batch 8; room for batch 5 but not 6 */
    o.layers = 1;
    o.batch = 5;
    rf_forward_mem five, six;
    assert_int_equal(rf_forward_mem_of(&m, &o, &five, &e), RF_OK);
    o.batch = 6;
    assert_int_equal(rf_forward_mem_of(&m, &o, &six, &e), RF_OK);
    avail = (uint64_t)ceil((double)five.total_bytes / RF_FORWARD_MEM_FRACTION) + 1;
    assert_true((double)avail * RF_FORWARD_MEM_FRACTION < (double)six.total_bytes);
    o.batch = 8;
    assert_int_equal(rf_forward_fit(&m, &o, avail, &e), RF_ENOMEM);
    assert_non_null(strstr(e.msg, "--batch 5 would fit"));
    assert_null(strstr(e.msg, "--layers"));
}

/* More memory than the machine has: two layers of Qwen2.5-7B at a million
 * sequences of 4096 positions hold 2^20 x 4096 x 2 layers x (2 x 4 x 128)
 * x 4 bytes = 32 TiB of fp32 KV. rf_forward_new refuses it from the
 * size alone (the guard's message, not an allocation failure) and returns
 * no object. */
static void guard_refuses_before_allocating(void **state)
{
    (void)state;
    rf_model m = preset("qwen2.5-7b-instruct");
    rf_forward_opts o = rf_forward_opts_default();
    o.batch = (int64_t)1 << 20;
    o.context = 4096;
    rf_forward *f = (rf_forward *)&o; /* must come back NULL */
    rf_err e;
    assert_int_equal(rf_forward_new(&m, &o, &f, &e), RF_ENOMEM);
    assert_null(f);
    assert_non_null(strstr(e.msg, "needs"));
    assert_non_null(strstr(e.msg, "may be used"));
    assert_null(strstr(e.msg, "allocation failed"));
}

/* ---- bad options ------------------------------------------------------------ */

static void bad_options_are_refused(void **state)
{
    (void)state;
    rf_model m = tiny();
    rf_forward_mem mem;
    rf_err e;
    rf_forward_opts o = rf_forward_opts_default();
    o.layers = 4;
    assert_int_equal(rf_forward_mem_of(&m, &o, &mem, &e), RF_EINVAL);
    assert_string_equal(e.msg, "layers (4) must be in [1, 3]");
    o = rf_forward_opts_default();
    o.context = 0;
    assert_int_equal(rf_forward_mem_of(&m, &o, &mem, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "context (0) must be at least 1 in decode"));
    o = rf_forward_opts_default();
    o.steps = RF_STATS_MAX + 1;
    assert_int_equal(rf_forward_mem_of(&m, &o, &mem, &e), RF_EINVAL);
    o = rf_forward_opts_default();
    o.phase = RF_PREFILL;
    o.context = 0; /* prefill may start from nothing */
    o.tokens = 4;
    assert_int_equal(rf_forward_mem_of(&m, &o, &mem, &e), RF_OK);
    rf_model moe = preset("mixtral-8x7b");
    assert_int_equal(rf_forward_mem_of(&moe, &o, &mem, &e), RF_EUNAVAIL);
    assert_non_null(strstr(e.msg, "MoE"));
    rf_model mla = preset("deepseek-v2-lite");
    assert_int_equal(rf_forward_mem_of(&mla, &o, &mem, &e), RF_EUNAVAIL);
}

/* ---- a smoke run ------------------------------------------------------------ */

/* The clock points nest: in one step, the operators' times add up to no
 * more than the layers' wall time plus the head's, which is the step. */
static void step_times_nest(void **state)
{
    (void)state;
    rf_model m = tiny();
    rf_forward_opts o = rf_forward_opts_default();
    o.layers = 3;
    o.context = 16;
    o.batch = 3;
    rf_forward *f = NULL;
    rf_forward_times t;
    rf_err e;
    assert_int_equal(rf_forward_new(&m, &o, &f, &e), RF_OK);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(rf_forward_step(f, &t, &e), RF_OK);
        double layer_ops = 0, head_ops = 0;
        for (int id = 0; id < RF_FWD_OP_COUNT; id++) {
            assert_true(t.op_s[id] >= 0);
            bool head = id == RF_FWD_EMBED || id == RF_FWD_FINAL_NORM || id == RF_FWD_LM_HEAD;
            *(head ? &head_ops : &layer_ops) += t.op_s[id];
        }
        assert_true(t.op_s[RF_FWD_Q_PROJ] > 0 && t.op_s[RF_FWD_ATTENTION] > 0);
        assert_true(t.op_s[RF_FWD_ATTENTION_SWA] == 0); /* no sliding layer */
        assert_true(layer_ops <= t.layers_s);
        assert_true(head_ops <= t.head_s);
        assert_true(fabs(t.layers_s + t.head_s - t.step_s) < 1e-12);
    }
    rf_forward_free(f);
}

/* One layer of tiny-llama through the whole profile, decode and prefill:
 * every operator timed, min <= median <= max. */
static void profile_runs_one_layer(void **state)
{
    (void)state;
    rf_model m = tiny();
    rf_roof r = roof();
    rf_forward_run *run = malloc(sizeof *run);
    rf_err e;
    assert_non_null(run);
    const rf_phase phases[2] = {RF_DECODE, RF_PREFILL};
    for (int p = 0; p < 2; p++) {
        rf_forward_opts o = rf_forward_opts_default();
        o.phase = phases[p];
        o.layers = 1;
        o.context = 8;
        o.tokens = phases[p] == RF_PREFILL ? 6 : 1;
        o.batch = 2;
        o.steps = 3;
        assert_int_equal(rf_forward_profile(&m, &o, &r, run, &e), RF_OK);
        assert_int_equal(run->opts.steps, 3);
        assert_true(run->check_max_err > 0 && run->check_max_err <= RF_FORWARD_TOLERANCE);
        assert_int_equal(run->n_ops, RF_FWD_OP_COUNT - 1); /* no sliding layer */
        for (size_t i = 0; i < run->n_ops; i++) {
            const rf_forward_op *op = &run->ops[i];
            assert_true(op->min_s > 0);
            assert_true(op->min_s <= op->measured_s && op->measured_s <= op->max_s);
        }
        assert_true(run->measured_min_s <= run->measured_s &&
                    run->measured_s <= run->measured_max_s);
        assert_true(run->estimated_model_s > run->measured_s); /* 3 layers, 1 run */
    }
    free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_agrees_for_every_family),
        cmocka_unit_test(reference_detects_a_changed_weight),
        cmocka_unit_test(attn_kernels_agree),
        cmocka_unit_test(attn_kernels_from_the_table),
        cmocka_unit_test(plan_matches_rf_step),
        cmocka_unit_test(elementwise_formulas_in_core),
        cmocka_unit_test(plan_elementwise_is_core),
        cmocka_unit_test(plan_splits_sliding_layers),
        cmocka_unit_test(summary_takes_medians),
        cmocka_unit_test(memory_is_counted_exactly),
        cmocka_unit_test(guard_suggests_what_fits),
        cmocka_unit_test(guard_refuses_before_allocating),
        cmocka_unit_test(bad_options_are_refused),
        cmocka_unit_test(step_times_nest),
        cmocka_unit_test(profile_runs_one_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
