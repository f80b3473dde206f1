/* test_gpu_predict.c - GPU predictions from kernel tables (rf_gpu.h),
 * derived by hand on tiny synthetic tables the test writes into a
 * temporary directory: a point in range, one interpolated, one
 * extrapolated, a collective, a kind with no table, the leave-one-out
 * band, and the bad tables refused with their file and line; a pipeline's
 * stages and send combined, MLA decode from its table, and the kinds no
 * table holds (a send, MLA of other widths, a linear-attention mixer) on
 * their floor and marked. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "roofline/rf_gpu_io.h"
#include "roofline/rf_sim.h"

/* A GPU of round figures: bf16 100 TFLOP/s, 1 TB/s, a 100 GB/s scale-up
 * link with 1 us a hop. */
static rf_hw round_hw(void)
{
    rf_hw hw;
    memset(&hw, 0, sizeof hw);
    snprintf(hw.name, sizeof hw.name, "round");
    hw.peak_flops_per_s[RF_BF16] = 1e14;
    hw.bw_bytes_per_s = 1e12;
    hw.links.up_bw_bytes_per_s = 1e11;
    hw.links.up_latency_s = 1e-6;
    return hw;
}

typedef struct fixture {
    char dir[64], eng[96], path[160];
} fixture;

static void put(fixture *f, const char *rel, const char *text)
{
    snprintf(f->path, sizeof f->path, "%s/%s", f->dir, rel);
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

/* eng/gemm_perf.csv: bfloat16, N = K = 1024, M = 1, 4, 16 (columns in
 * the source's order, an extra column ignored); eng/custom_allreduce_perf:
 * 2 and 4 GPUs at 1024 and 4096 elements. No attention or MoE table. */
static const char gemm_csv[] = "gemm_dtype,m,n,k,extra,latency\n"
                               "bfloat16,1,1024,1024,x,0.004\n"
                               "bfloat16,4,1024,1024,x,0.005\n"
                               "bfloat16,16,1024,1024,x,0.008\n";
static const char ar_csv[] = "op_name,allreduce_dtype,num_gpus,message_size,latency\n"
                             "all_reduce,bfloat16,2,1024,0.005\n"
                             "all_reduce,bfloat16,2,4096,0.006\n"
                             "all_reduce,bfloat16,4,1024,0.007\n"
                             "all_reduce,bfloat16,4,4096,0.009\n";

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/rf_gpu_XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->eng, sizeof f->eng, "%s/eng", f->dir);
    snprintf(f->path, sizeof f->path, "%s/nccl", f->dir);
    if (mkdir(f->eng, 0700) || mkdir(f->path, 0700))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    static const char *const files[] = {"eng/gemm_perf.csv", "eng/custom_allreduce_perf.csv",
                                        "nccl/nccl_perf.csv", "eng/generation_mla_perf.csv"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(f->path, sizeof f->path, "%s/%s", f->dir, files[i]);
        unlink(f->path);
    }
    snprintf(f->path, sizeof f->path, "%s/eng", f->dir);
    rmdir(f->path);
    snprintf(f->path, sizeof f->path, "%s/nccl", f->dir);
    rmdir(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* The GEMM's floor on round_hw at N = K = 1024 (memory-bound up to M =
 * 64: F = 2 M 2^20 over 1e14 is below Q over 1e12):
 *     Q(M) = (M K + K N) x 2 + M N x 2 bytes,  floor = Q / 1e12. */
static double gemm_floor(double m)
{
    return ((m * 1024 + 1024.0 * 1024) * 2 + m * 1024 * 2) / 1e12;
}

static rf_gpu_pred gemm_at(const rf_gpu_tables *g, double m)
{
    const char *cat[4] = {"bfloat16"};
    double q[4] = {0, 1024, 1024, m};
    rf_gpu_pred p;
    rf_err e;
    assert_int_equal(rf_gpu_predict(g, RF_GPU_GEMM, q, cat, &p, &e), RF_OK);
    return p;
}

static void load(fixture *f, rf_gpu_tables *g)
{
    rf_hw hw = round_hw();
    rf_err e;
    rf_status s = rf_gpu_tables_load(f->eng, &hw, g, &e);
    if (s)
        fail_msg("%s", e.msg);
}

static void test_gemm(void **state)
{
    fixture *f = *state;
    put(f, "eng/gemm_perf.csv", gemm_csv);
    rf_gpu_tables g;
    load(f, &g);
    assert_true(g.t[RF_GPU_GEMM].present);
    assert_false(g.t[RF_GPU_MOE].present);
    assert_int_equal(g.t[RF_GPU_GEMM].n_rows, 3);

    /* in range: M = 4 is a row, its latency (5 us) exactly */
    rf_gpu_pred p = gemm_at(&g, 4);
    assert_int_equal(p.how, RF_GPU_IN_RANGE);
    assert_true(fabs(p.time_s - 5e-6) < 1e-15);
    assert_ptr_equal(p.table, &g.t[RF_GPU_GEMM]);

    /* interpolated: M = 2 lies halfway between 1 and 4 in ln M, so
     *     ln r = (ln r(1) + ln r(4)) / 2,  r(M) = t(M) / floor(M),
     *     t = sqrt(r(1) r(4)) x floor(2) */
    double r1 = 4e-6 / gemm_floor(1), r4 = 5e-6 / gemm_floor(4), r16 = 8e-6 / gemm_floor(16);
    p = gemm_at(&g, 2);
    assert_int_equal(p.how, RF_GPU_INTERPOLATED);
    assert_true(fabs(p.time_s - sqrt(r1 * r4) * gemm_floor(2)) < 1e-12 * p.time_s);

    /* extrapolated: M = 64 is above the last row, whose ratio (8 us over
     * its floor, 3.8x) it takes on its own floor */
    p = gemm_at(&g, 64);
    assert_int_equal(p.how, RF_GPU_EXTRAPOLATED);
    assert_true(r16 > 1);
    assert_true(fabs(p.time_s - r16 * gemm_floor(64)) < 1e-12 * p.time_s);
    assert_true(p.time_s >= p.floor_s);

    /* leave-one-out: only M = 4 has neighbours on both sides, predicted
     * from M = 1 and 16 at w = ln 4 / ln 16 = 1/2:
     *     |sqrt(r(1) r(16)) / r(4) - 1| */
    assert_int_equal(g.t[RF_GPU_GEMM].loo_n, 1);
    double loo = fabs(sqrt(r1 * r16) / r4 - 1);
    assert_true(fabs(g.t[RF_GPU_GEMM].loo_median - loo) < 1e-12);
    assert_true(fabs(p.band - loo) < 1e-12);

    /* a dtype the table has no rows of: on its floor, marked */
    const char *cat[4] = {"fp8"};
    double q[4] = {0, 1024, 1024, 4};
    rf_err e;
    assert_int_equal(rf_gpu_predict(&g, RF_GPU_GEMM, q, cat, &p, &e), RF_OK);
    assert_int_equal(p.how, RF_GPU_NO_TABLE);
    assert_true(p.time_s == p.floor_s);
    rf_gpu_tables_free(&g);
}

/* The all-reduce's floor on round_hw: 2 (t-1)/t x n x 2 bytes over 100
 * GB/s, plus one 1 us hop. */
static double ar_floor(double t, double n) { return 2 * (t - 1) / t * n * 2 / 1e11 + 1e-6; }

static void test_collective(void **state)
{
    fixture *f = *state;
    put(f, "eng/gemm_perf.csv", gemm_csv);
    put(f, "eng/custom_allreduce_perf.csv", ar_csv);
    rf_gpu_tables g;
    load(f, &g);
    /* a TP all-reduce of 4096 bytes (2048 bf16 elements) on 2 GPUs:
     * halfway between 1024 and 4096 elements in ln n,
     *     t = sqrt(r(2, 1024) r(2, 4096)) x floor(2, 2048) */
    rf_coll c = {
        .name = "tp_allreduce", .kind = RF_COLL_ALLREDUCE, .count = 1, .bytes = 4096, .ranks = 2};
    static rf_step st; /* no operators */
    rf_model m;
    memset(&m, 0, sizeof m);
    rf_step_opts o = rf_step_opts_default();
    rf_gpu_ctx ctx = {.g = &g, .shard = &m, .model = &m, .layout = {2, 1, 1, 1}, .opts = &o};
    rf_gpu_step_pred sp;
    rf_err e;
    assert_int_equal(rf_gpu_predict_step(&ctx, &st, &c, 1, &sp, &e), RF_OK);
    double r0 = 5e-6 / ar_floor(2, 1024), r1 = 6e-6 / ar_floor(2, 4096);
    double want = sqrt(r0 * r1) * ar_floor(2, 2048);
    assert_int_equal(sp.coll[0].how, RF_GPU_INTERPOLATED);
    assert_true(fabs(sp.coll[0].time_s - want) < 1e-12 * want);
    assert_true(fabs(sp.time_s - want) < 1e-12 * want);
    assert_int_equal(sp.missing, 0);

    /* 3 GPUs at 1024 elements: between the 2- and 4-GPU rows in ln t */
    c.ranks = 3, c.bytes = 2048;
    assert_int_equal(rf_gpu_predict_step(&ctx, &st, &c, 1, &sp, &e), RF_OK);
    double w = log(1.5) / log(2);
    double ra = 5e-6 / ar_floor(2, 1024), rb = 7e-6 / ar_floor(4, 1024);
    want = exp((1 - w) * log(ra) + w * log(rb)) * ar_floor(3, 1024);
    assert_true(fabs(sp.coll[0].time_s - want) < 1e-12 * want);

    /* an all-gather: no nccl table here, on its floor and marked missing */
    c.kind = RF_COLL_ALLGATHER;
    assert_int_equal(rf_gpu_predict_step(&ctx, &st, &c, 1, &sp, &e), RF_OK);
    assert_int_equal(sp.coll[0].how, RF_GPU_NO_TABLE);
    assert_true(sp.missing & (1u << RF_GPU_NCCL));
    rf_gpu_tables_free(&g);
}

/* A decode step with a GEMM (in the table) and decode attention (no
 * table): the attention row on its floor, the kind reported missing. */
static void test_missing_kind(void **state)
{
    fixture *f = *state;
    put(f, "eng/gemm_perf.csv", gemm_csv);
    rf_gpu_tables g;
    load(f, &g);
    static rf_step st;
    memset(&st, 0, sizeof st);
    st.roof = (rf_roof){.peak_flops_per_s = 1e14, .bw_bytes_per_s = 1e12};
    rf_err e;
    rf_dtype bf = rf_dtype_of(RF_BF16);
    assert_int_equal(rf_op_gemm("q_proj", 4, 1024, 1024, bf, bf, &st.ops[0], &e), RF_OK);
    st.ops[0].count = 2;
    rf_attn_desc d = {.n_q = 8, .n_kv = 8, .head_dim = 128, .batch = 4, .q_tokens = 1, .keys = 100};
    assert_int_equal(rf_op_attention("attention", &d, bf, bf, &st.ops[1], &e), RF_OK);
    st.ops[1].count = 2;
    st.n_ops = 2;
    rf_model m;
    memset(&m, 0, sizeof m);
    m.n_q = m.n_kv = 8, m.head_dim = 128;
    rf_step_opts o = rf_step_opts_default();
    rf_gpu_ctx ctx = {.g = &g, .shard = &m, .model = &m, .layout = {1, 1, 1, 1}, .opts = &o};
    rf_gpu_step_pred sp;
    assert_int_equal(rf_gpu_predict_step(&ctx, &st, NULL, 0, &sp, &e), RF_OK);
    assert_int_equal(sp.op[0].how, RF_GPU_IN_RANGE);
    assert_int_equal(sp.op[1].how, RF_GPU_NO_TABLE);
    assert_true(sp.missing & (1u << RF_GPU_ATTN_GENERATION));
    /* decode attention's floor: 4 sequences x 100 keys x (K and V) x 8
     * heads x 128 x 2 bytes + 4 x 8 x 128 x 2 x 2 (q in, o out) =
     * 1,638,400 + 16,384 bytes over 1 TB/s (FLOPs 4 x 4 x 8 x 128 x 100
     * = 1.6 MFLOP, far under) */
    double att = (4.0 * 100 * 2 * 8 * 128 * 2 + 4.0 * 8 * 128 * 2 * 2) / 1e12;
    assert_true(fabs(sp.op[1].time_s - att) < 1e-12 * att);
    /* the step: 2 x 5 us + 2 x the attention's floor */
    assert_true(fabs(sp.time_s - (2 * 5e-6 + 2 * att)) < 1e-12 * sp.time_s);
    rf_gpu_tables_free(&g);
}

/* A pipeline of two stages, hand-built, predicted as rf_par combines its
 * floors (rf_gpu_predict_par): stage 0 two q_proj rows (M = 4: the
 * table's 5 us each) and its send to stage 1 (3 us: no point-to-point
 * table, on its floor, RF_GPU_NEED_P2P); stage 1 the same GEMMs and two
 * MLA attention rows (a latent KV of widths the MLA tables do not
 * measure: on their floor, RF_GPU_NEED_MLA) and two of a Gated DeltaNet
 * recurrence (on its floor,
 * RF_GPU_NEED_LINEAR). Two micro-batches of 2 sequences each. */
static void test_pipeline(void **state)
{
    fixture *f = *state;
    put(f, "eng/gemm_perf.csv", gemm_csv);
    rf_gpu_tables g;
    load(f, &g);
    rf_par *par = calloc(1, sizeof *par);
    rf_gpu_par_work *work = malloc(sizeof *work);
    assert_non_null(par);
    assert_non_null(work);
    rf_err e;
    rf_dtype bf = rf_dtype_of(RF_BF16);
    rf_model m;
    memset(&m, 0, sizeof m);
    m.n_q = m.n_kv = 8, m.head_dim = 128, m.kv_lora_rank = 512;
    par->layout = (rf_layout){1, 2, 1, 1};
    par->devices = 2, par->n_stages = 2, par->micro_batches = 2, par->micro_batch = 2;
    rf_attn_desc d = {.n_q = 8, .n_kv = 8, .head_dim = 128, .batch = 4, .q_tokens = 1, .keys = 100};
    for (size_t i = 0; i < 2; i++) {
        rf_par_stage *ps = &par->stages[i];
        ps->shard = m;
        ps->step.roof = (rf_roof){.peak_flops_per_s = 1e14, .bw_bytes_per_s = 1e12};
        assert_int_equal(rf_op_gemm("q_proj", 4, 1024, 1024, bf, bf, &ps->step.ops[0], &e), RF_OK);
        ps->step.ops[0].count = 2;
        ps->step.n_ops = 1;
    }
    rf_step *s1 = &par->stages[1].step;
    assert_int_equal(rf_op_attention("attention", &d, bf, bf, &s1->ops[1], &e), RF_OK);
    assert_int_equal(rf_op_attention("gdn_delta_rule", &d, bf, bf, &s1->ops[2], &e), RF_OK);
    s1->ops[1].count = s1->ops[2].count = 2;
    s1->n_ops = 3;
    par->stages[0].coll[0] = (rf_coll){.name = "pp_send",
                                       .kind = RF_COLL_P2P,
                                       .count = 1,
                                       .bytes = 16384,
                                       .ranks = 2,
                                       .time_s = 3e-6};
    par->stages[0].n_coll = 1;
    rf_step_opts o = rf_step_opts_default();
    o.batch = 4;
    rf_gpu_par_pred q;
    assert_int_equal(rf_gpu_predict_par(&g, NULL, &m, &o, par, work, &q, &e), RF_OK);
    /* on their own floor, the operator's bytes: rf_op_attention's K and V
     * read, 4 sequences x 100 keys x 2 x 8 heads x 128 x 2 bytes = 1,638,400
     * at 1 TB/s (the step's rows add q and o; this bare operator has not;
     * FLOPs 4 x 4 x 8 x 128 x 100 = 1.6 M, far under) */
    double att = 4.0 * 100 * 2 * 8 * 128 * 2 / 1e12;
    double st0 = 2 * 5e-6, st1 = 2 * 5e-6 + 2 * att + 2 * att;
    assert_true(fabs(q.stage_s[0] - st0) < 1e-12 * st0);
    assert_true(fabs(q.stage_s[1] - st1) < 1e-12 * st1);
    assert_true(fabs(q.send_s - 3e-6) < 1e-18);
    assert_int_equal(q.slowest, 1);
    /* latency = 10 us + 3 us + stage 1; cycle = max(latency, 2 x stage 1)
     * = 2 x stage 1 (stage 1 is 16.6 us, more than 10 + 3); tokens/s =
     * D B / cycle = 4 / cycle */
    double lat = st0 + 3e-6 + st1;
    assert_true(fabs(q.token_latency_s - lat) < 1e-12 * lat);
    assert_true(2 * st1 > lat);
    assert_true(fabs(q.cycle_s - 2 * st1) < 1e-12 * st1);
    assert_true(fabs(q.tokens_per_s - 4 / (2 * st1)) < 1e-9 * q.tokens_per_s);
    assert_true(fabs(q.tokens_per_s_device - q.tokens_per_s / 2) < 1e-9 * q.tokens_per_s);
    /* provenance: 2 GEMM rows in range; the send, MLA and GDN rows on their floor */
    assert_int_equal(q.n_how[RF_GPU_IN_RANGE], 2);
    assert_int_equal(q.n_how[RF_GPU_NO_TABLE], 3);
    assert_int_equal(q.missing, RF_GPU_NEED_P2P | RF_GPU_NEED_MLA | RF_GPU_NEED_LINEAR);
    assert_string_equal(rf_gpu_need_name(RF_GPU_KIND_COUNT), "p2p");
    assert_string_equal(rf_gpu_need_name(RF_GPU_KIND_COUNT + 2), "linear_attention");
    assert_null(rf_gpu_need_name(RF_GPU_NEED_COUNT));
    free(work);
    free(par);
    rf_gpu_tables_free(&g);
}

/* MLA decode from generation_mla_perf (DeepSeek's widths: keys of 576 a
 * token, a latent read once for every head). Two rows of 16 heads at
 * batch 1, step 1023 and 4095 (1024 and 4096 keys); the query, a decode
 * of one sequence over 2048 keys (step 2047), between them. On round_hw a
 * row's floor is memory-bound (FLOPs 2 x 16 x keys x 1088 over 1e14 are
 * 0.35 keys ps, the bytes 1.15 keys ps):
 *     floor(keys) = (keys x 576 x 2 + 16 x (576 + 512) x 2) / 1e12
 * and ln r is interpolated in ln step:
 *     w = (ln 2047 - ln 1023) / (ln 4095 - ln 1023),
 *     t = exp((1 - w) ln r(1023) + w ln r(4095)) x floor(2048).
 * A model of other widths (kv_lora_rank 256) is on its own floor,
 * RF_GPU_NEED_MLA. */
static double mla_floor(double keys) { return (keys * 576 * 2 + 16.0 * 1088 * 2) / 1e12; }

static void test_mla(void **state)
{
    fixture *f = *state;
    put(f, "eng/gemm_perf.csv", gemm_csv);
    put(f, "eng/generation_mla_perf.csv",
        "mla_dtype,kv_cache_dtype,num_heads,batch_size,isl,tp_size,step,latency\n"
        "bfloat16,bfloat16,16,1,1,8,1023,0.004\n"
        "bfloat16,bfloat16,16,1,1,8,4095,0.010\n");
    rf_gpu_tables g;
    load(f, &g);
    assert_true(g.t[RF_GPU_MLA_GENERATION].present);
    static rf_step st;
    memset(&st, 0, sizeof st);
    st.roof = (rf_roof){.peak_flops_per_s = 1e14, .bw_bytes_per_s = 1e12};
    rf_err e;
    rf_dtype bf = rf_dtype_of(RF_BF16);
    rf_attn_desc d = {
        .n_q = 16, .n_kv = 1, .head_dim = 576, .batch = 1, .q_tokens = 1, .keys = 2048};
    assert_int_equal(rf_op_attention("attention", &d, bf, bf, &st.ops[0], &e), RF_OK);
    st.n_ops = 1;
    rf_model m;
    memset(&m, 0, sizeof m);
    m.n_q = 16, m.n_kv = 16, m.head_dim = 192;
    m.kv_lora_rank = 512, m.qk_rope_dim = 64, m.qk_nope_dim = 128, m.v_head_dim = 128;
    rf_step_opts o = rf_step_opts_default();
    rf_gpu_ctx ctx = {.g = &g, .shard = &m, .model = &m, .layout = {8, 1, 1, 1}, .opts = &o};
    rf_gpu_step_pred sp;
    assert_int_equal(rf_gpu_predict_step(&ctx, &st, NULL, 0, &sp, &e), RF_OK);
    double r0 = 4e-6 / mla_floor(1024), r1 = 10e-6 / mla_floor(4096);
    double w = (log(2047) - log(1023)) / (log(4095) - log(1023));
    double want = exp((1 - w) * log(r0) + w * log(r1)) * mla_floor(2048);
    assert_int_equal(sp.op[0].how, RF_GPU_INTERPOLATED);
    assert_ptr_equal(sp.op[0].table, &g.t[RF_GPU_MLA_GENERATION]);
    assert_true(fabs(sp.op[0].time_s - want) < 1e-12 * want);
    assert_int_equal(sp.missing, 0);
    /* other widths: the operator's own floor (its bytes at 1 TB/s), marked */
    m.kv_lora_rank = 256;
    assert_int_equal(rf_gpu_predict_step(&ctx, &st, NULL, 0, &sp, &e), RF_OK);
    assert_int_equal(sp.op[0].how, RF_GPU_NO_TABLE);
    assert_true(fabs(sp.op[0].time_s - (double)st.ops[0].bytes / 1e12) < 1e-12 * sp.op[0].time_s);
    assert_int_equal(sp.missing, RF_GPU_NEED_MLA);
    rf_gpu_tables_free(&g);
}

/* A bad table is refused naming its file and line. */
static void expect_bad(fixture *f, const char *csv, const char *want)
{
    put(f, "eng/gemm_perf.csv", csv);
    rf_hw hw = round_hw();
    rf_gpu_tables g;
    rf_err e;
    assert_int_equal(rf_gpu_tables_load(f->eng, &hw, &g, &e), RF_EINVAL);
    if (!strstr(e.msg, want) || !strstr(e.msg, "eng/gemm_perf.csv"))
        fail_msg("'%s' lacks '%s'", e.msg, want);
}

static void test_bad_tables(void **state)
{
    fixture *f = *state;
    expect_bad(f, "gemm_dtype,m,n,k,latency\nbfloat16,1,64,64,0.001\nbfloat16,2,64,64,0\n",
               "line 3: latency '0' must be a positive");
    expect_bad(f, "gemm_dtype,m,n,k,latency\nbfloat16,1,64,64,-0.5\n",
               "line 2: latency '-0.5' must be a positive");
    /* the grid must strictly increase: one point measured twice */
    expect_bad(f,
               "gemm_dtype,m,n,k,latency\nbfloat16,2,64,64,0.001\nbfloat16,4,64,64,0.002\n"
               "bfloat16,2,64,64,0.003\n",
               "repeats the point of line");
    expect_bad(f, "gemm_dtype,m,n,latency\nbfloat16,1,64,0.001\n", "line 1: no column 'k'");
    expect_bad(f, "gemm_dtype,m,n,k,latency\nbfloat16,0,64,64,0.001\n",
               "line 2: m '0' must be a number >= 1");
    /* and a directory with no table at all */
    snprintf(f->path, sizeof f->path, "%s/eng/gemm_perf.csv", f->dir);
    unlink(f->path);
    rf_hw hw = round_hw();
    rf_gpu_tables g;
    rf_err e;
    assert_int_equal(rf_gpu_tables_load(f->eng, &hw, &g, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "no kernel table"));
}

/* The reader's numbers are strtod's, bit for bit, on both of its paths
 * (plain decimals of up to 15 digits read as a whole number over a power
 * of ten; the rest by strtod itself), and its rows' order does not depend
 * on the file's: the table written forwards and backwards gives the same
 * sorted rows, ratios, leave-one-out errors and predictions. */
static void test_numbers_and_order(void **state)
{
    fixture *f = *state;
    /* 0.3, 2.9, 1.7 and 3.3 are among the decimals that w x (1 / 10^f) gets
     * wrong, where w / 10^f is right */
    static const char *const lat[] = {"0.004",
                                      "5.",
                                      ".5",
                                      "1e-3",
                                      "0.3",
                                      "2.9",
                                      "17.47",
                                      "123456789012345",
                                      "0.0001",
                                      "1234567890123.4567",
                                      "7.000000000000001"};
    static const char *const n_key[] = {"1024", "0001024", "2048", "1e3", "1.7", "3.3"};
    enum { NL = sizeof lat / sizeof lat[0], NN = sizeof n_key / sizeof n_key[0] };
    char fwd[8192], bwd[8192], row[NL * NN][96];
    size_t r = 0;
    for (size_t i = 0; i < NL; i++)
        for (size_t j = 0; j < NN; j++, r++)
            snprintf(row[r], sizeof row[r], "bfloat16,%zu,%s,%zu,%s\n", i + 1, n_key[j], 64 + j,
                     lat[i]);
    int o = snprintf(fwd, sizeof fwd, "gemm_dtype,m,n,k,latency\n");
    int b = snprintf(bwd, sizeof bwd, "gemm_dtype,m,n,k,latency\n");
    for (size_t i = 0; i < r; i++) {
        o += snprintf(fwd + o, sizeof fwd - (size_t)o, "%s", row[i]);
        b += snprintf(bwd + b, sizeof bwd - (size_t)b, "%s", row[r - 1 - i]);
    }
    rf_gpu_tables g[2];
    put(f, "eng/gemm_perf.csv", fwd);
    load(f, &g[0]);
    put(f, "eng/gemm_perf.csv", bwd);
    load(f, &g[1]);
    const rf_gpu_table *t = &g[0].t[RF_GPU_GEMM], *u = &g[1].t[RF_GPU_GEMM];
    assert_int_equal(t->n_rows, r);
    assert_int_equal(u->n_rows, r);
    for (size_t k = 0; k < r; k++) {
        /* line L of the forward file is row[L - 2], of the backward one
         * row[r + 1 - L]: the same point at the same place in both */
        size_t i = (size_t)t->line[k] - 2;
        assert_int_equal((size_t)u->line[k], r + 1 - i);
        double want_lat = strtod(lat[i / NN], NULL) * 1e-3;
        assert_memory_equal(&t->latency_s[k], &want_lat, sizeof want_lat);
        double want_n = strtod(n_key[i % NN], NULL);
        assert_memory_equal(&t->key[k * t->n_keys + 1], &want_n, sizeof want_n);
        assert_memory_equal(&t->key[k * t->n_keys], &u->key[k * u->n_keys],
                            t->n_keys * sizeof *t->key);
        assert_memory_equal(&t->ln_ratio[k], &u->ln_ratio[k], sizeof t->ln_ratio[k]);
        if (k > 0) /* strictly ascending: gemm_dtype, n, k, m */
            assert_true(memcmp(&t->key[(k - 1) * t->n_keys], &t->key[k * t->n_keys],
                               t->n_keys * sizeof *t->key) != 0);
    }
    assert_true(t->loo_n > 0);
    assert_int_equal(t->loo_n, u->loo_n);
    assert_memory_equal(&t->loo_median, &u->loo_median, sizeof t->loo_median);
    assert_memory_equal(&t->loo_p90, &u->loo_p90, sizeof t->loo_p90);
    for (double m = 1; m <= 16; m *= 1.5) {
        const char *cat[4] = {"bfloat16"};
        double q[4] = {0, 1500, 65, m};
        rf_gpu_pred p[2];
        rf_err e;
        for (int h = 0; h < 2; h++)
            assert_int_equal(rf_gpu_predict(&g[h], RF_GPU_GEMM, q, cat, &p[h], &e), RF_OK);
        assert_memory_equal(&p[0].time_s, &p[1].time_s, sizeof p[0].time_s);
        assert_int_equal(p[0].how, p[1].how);
    }
    rf_gpu_tables_free(&g[0]);
    rf_gpu_tables_free(&g[1]);
    /* of two equal rows the sort keeps the file's order: the later line
     * names the earlier one */
    expect_bad(f,
               "gemm_dtype,m,n,k,latency\nbfloat16,4,64,64,0.002\nbfloat16,2,64,64,0.001\n"
               "bfloat16,8,64,64,0.003\nbfloat16,2,64,64,0.004\n",
               "line 5 repeats the point of line 3");
}

/* A reader's refusal of a bad file: RF_EINVAL, nothing found, a message
 * naming the file and holding want. */
static void refused(rf_status s, bool found, const rf_err *e, const char *file, const char *want)
{
    assert_int_equal(s, RF_EINVAL);
    assert_false(found);
    if (!strstr(e->msg, want) || !strstr(e->msg, file))
        fail_msg("'%s' lacks '%s' or '%s'", e->msg, want, file);
}

/* The serving-error file (rf_gpu_serving_error_load): an engine's entry
 * read as written, an absent engine or file found false, and every bad
 * field refused naming the file and the field. */
static void test_serving_error(void **state)
{
    fixture *f = *state;
    rf_gpu_serving_error m;
    bool found = true;
    rf_err e;
    snprintf(f->path, sizeof f->path, "%s/eng/serving_error.json", f->dir);
    assert_int_equal(rf_gpu_serving_error_load(f->path, "vllm", 0, &m, &found, &e), RF_OK);
    assert_false(found); /* no file */
    put(f, "eng/serving_error.json",
        "{\"source\": \"bench\", \"engines\": {\"vllm\": {\"runs\": 237, \"ttft_median\": "
        "0.3478, \"ttft_p90\": 1.5918, \"tpot_median\": 0.1567, \"tpot_p90\": 1.1329}}}");
    assert_int_equal(rf_gpu_serving_error_load(f->path, "vllm", 0, &m, &found, &e), RF_OK);
    assert_true(found);
    assert_int_equal(m.runs, 237);
    assert_true(m.ttft_median == 0.3478 && m.ttft_p90 == 1.5918);
    assert_true(m.tpot_median == 0.1567 && m.tpot_p90 == 1.1329);
    assert_string_equal(m.source, "bench");
    assert_int_equal(rf_gpu_serving_error_load(f->path, "sglang", 0, &m, &found, &e), RF_OK);
    assert_false(found);
    /* a concurrency's bucket where one holds it, else every run (the
     * figures are the file's, read back as written) */
    put(f, "eng/serving_error.json",
        "{\"source\": \"bench\", \"engines\": {\"vllm\": {\"runs\": 237, \"ttft_median\": "
        "0.3478, \"ttft_p90\": 1.5918, \"tpot_median\": 0.1567, \"tpot_p90\": 1.1329, "
        "\"by_concurrency\": [{\"min\": 1, \"max\": 8, \"runs\": 78, \"ttft_median\": 0.5, "
        "\"ttft_p90\": 1.3, \"tpot_median\": 0.14, \"tpot_p90\": 0.35}, {\"min\": 9, \"max\": 32, "
        "\"runs\": 88, \"ttft_median\": 0.28, \"ttft_p90\": 1.4, \"tpot_median\": 0.15, "
        "\"tpot_p90\": 0.58}]}}}");
    static const struct {
        int64_t c, runs, lo, hi;
        double ttft;
    } pick[] = {{0, 237, 0, 0, 0.3478}, {1, 78, 1, 8, 0.5},    {8, 78, 1, 8, 0.5},
                {9, 88, 9, 32, 0.28},   {32, 88, 9, 32, 0.28}, {33, 237, 0, 0, 0.3478}};
    for (size_t i = 0; i < sizeof pick / sizeof pick[0]; i++) {
        assert_int_equal(rf_gpu_serving_error_load(f->path, "vllm", pick[i].c, &m, &found, &e),
                         RF_OK);
        assert_true(found);
        assert_int_equal(m.runs, pick[i].runs);
        assert_int_equal(m.c_min, pick[i].lo);
        assert_int_equal(m.c_max, pick[i].hi);
        assert_true(m.ttft_median == pick[i].ttft);
        assert_string_equal(m.source, "bench");
    }
    /* each bad file an engine entry of valid figures (FIGS) with one thing
     * wrong, in the engine (VLLM) or in a bucket of it */
#define FIGS "\"ttft_median\": 0.1, \"ttft_p90\": 0.2, \"tpot_median\": 0.1, \"tpot_p90\": 0.2"
#define VLLM(e) "{\"source\": \"b\", \"engines\": {\"vllm\": " e "}}"
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"[]", "the top level must be an object"},
        {"{\"engines\": {}}", "source is missing"},
        {"{\"source\": \"b\", \"engines\": []}", "engines must be an object"},
        {VLLM("3"), "engines.vllm must be an object"},
        {VLLM("{\"runs\": 0, " FIGS "}"), "engines.vllm.runs (0) must be within [1, 1000000]"},
        {VLLM("{\"runs\": 3, \"ttft_median\": -0.1, \"ttft_p90\": 0.2, \"tpot_median\": 0.1, "
              "\"tpot_p90\": 0.2}"),
         "engines.vllm.ttft_median (-0.1) must be within [0, 100]"},
        {VLLM("{\"runs\": 3, \"ttft_median\": 0.1, \"ttft_p90\": \"x\", \"tpot_median\": 0.1, "
              "\"tpot_p90\": 0.2}"),
         "engines.vllm.ttft_p90 must be a number"},
        {VLLM("{\"runs\": 3, \"ttft_median\": 0.1, \"ttft_p90\": 0.2, \"tpot_median\": 0.3, "
              "\"tpot_p90\": 0.2}"),
         "a p90 below its median"},
        {VLLM("{\"runs\": 3, \"ttft_median\": 0.1, \"ttft_p90\": 0.2, \"tpot_median\": 0.1}"),
         "engines.vllm.tpot_p90 is missing"},
        {VLLM("{\"runs\": 3, " FIGS ", \"by_concurrency\": [{\"min\": 9, \"max\": 8, "
              "\"runs\": 3, " FIGS "}]}"),
         "engines.vllm.by_concurrency[0].max (8) must be within [9, 1000000]"},
        {VLLM("{\"runs\": 3, " FIGS ", \"by_concurrency\": [{\"min\": 1, \"max\": 8, "
              "\"runs\": 3, \"ttft_median\": 0.1, \"ttft_p90\": 0.2, \"tpot_median\": 0.1}]}"),
         "engines.vllm.by_concurrency[0].tpot_p90 is missing"},
        {VLLM("{\"runs\": 3, " FIGS ", \"by_concurrency\": [7]}"),
         "engines.vllm.by_concurrency[0] must be an object"},
        {"not json", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put(f, "eng/serving_error.json", bad[i].json);
        rf_status s = rf_gpu_serving_error_load(f->path, "vllm", 0, &m, &found, &e);
        refused(s, found, &e, "serving_error.json", bad[i].want);
    }
#undef VLLM
#undef FIGS
    unlink(f->path);
}

/* The closed loop's TTFT factor (rf_closed_loop_factor): log f linear in
 * log c between the points, held beyond them, extrapolated outside the
 * runs' range. On the points (4, 2) and (16, 32): at c = 8 the weight is
 * log(8/4) / log(16/4) = 1/2, so f = 2 x (32/2)^(1/2) = 8 (linear in c
 * would give 12, f linear in log c 17); at c = 2 and 32 the ends, 2 and
 * 32, held. */
static void test_closed_loop_factor(void **state)
{
    (void)state;
    rf_closed_loop l = {.n = 2, .c = {4, 16}, .f = {2, 32}, .c_min = 4, .c_max = 16};
    bool x = true;
    assert_true(fabs(rf_closed_loop_factor(&l, 8, &x) - 8) < 1e-12);
    assert_false(x);
    assert_true(rf_closed_loop_factor(&l, 4, &x) == 2 && !x);
    assert_true(rf_closed_loop_factor(&l, 16, &x) == 32 && !x);
    assert_true(rf_closed_loop_factor(&l, 2, &x) == 2 && x);
    assert_true(rf_closed_loop_factor(&l, 32, &x) == 32 && x);
    /* three points: between the second and third, (16, 8) to (64, 2):
     * c = 32 is halfway in log c, f = 8 x (2/8)^(1/2) = 4 (linear in c: 6) */
    rf_closed_loop m = {.n = 3, .c = {4, 16, 64}, .f = {2, 8, 2}, .c_min = 1, .c_max = 100};
    assert_true(fabs(rf_closed_loop_factor(&m, 32, &x) - 4) < 1e-12);
    assert_false(x);
    assert_true(rf_closed_loop_factor(&m, 1, &x) == 2 && !x); /* held, but within the runs */
    /* at an inner point, the point's factor bit for bit: on (16, 5.74),
     * (32, 6.788), (64, 9.18), the interpolation's 5.74 x (6.788 / 5.74)^1
     * is 6.788000000000001 in doubles (fuzz_serving's first finding) */
    rf_closed_loop p = {
        .n = 3, .c = {16, 32, 64}, .f = {5.74, 6.788, 9.18}, .c_min = 16, .c_max = 64};
    assert_true(rf_closed_loop_factor(&p, 32, &x) == 6.788);
    /* applied (rf_closed_loop_apply): at c = 8 on l, f = 8 and t1 = 10 ms
     * give 80 ms; the simulation's p90 of 100 ms over its mean of 50 ms
     * scales alike, to 160 ms. At c = 32, outside [4, 16], and with no
     * factor, the simulation's 50 and 100 ms stand. */
    rf_closed_loop_ttft t = rf_closed_loop_apply(&l, 8, 0.010, 0.050, 0.100);
    assert_true(t.applied && fabs(t.f - 8) < 1e-12);
    assert_true(fabs(t.mean_s - 0.080) < 1e-15 && fabs(t.p90_s - 0.160) < 1e-15);
    t = rf_closed_loop_apply(&l, 32, 0.010, 0.050, 0.100);
    assert_true(!t.applied && t.mean_s == 0.050 && t.p90_s == 0.100);
    t = rf_closed_loop_apply(NULL, 8, 0.010, 0.050, 0.100);
    assert_true(!t.applied && t.f == 0 && t.mean_s == 0.050 && t.p90_s == 0.100);
}

/* The closed-loop factor's file (rf_closed_loop_load): an engine's points
 * for fixed or varied lengths read as written, an absent engine or file
 * found false, every bad field refused naming the file and the field. */
static void test_closed_loop_load(void **state)
{
    fixture *f = *state;
    rf_closed_loop l;
    bool found = true;
    rf_err e;
    snprintf(f->path, sizeof f->path, "%s/closed_loop_ttft.json", f->dir);
    assert_int_equal(rf_closed_loop_load(f->path, "vllm", false, &l, &found, &e), RF_OK);
    assert_false(found); /* no file */
#define HEAD "\"runs\": 237, \"c_min\": 1, \"c_max\": 512, \"in_sample_median\": 0.15, "
#define ERRS "\"held_out_median\": 0.23, \"held_out_p90\": 0.98, "
#define ENG(e) "{\"source\": \"fit\", \"engines\": {\"vllm\": " e "}}"
    put(f, "closed_loop_ttft.json",
        ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[4, 2.5], [8, 3.62]], \"varied\": "
            "[[4, 2], [8, 2.9], [16, 3.5]]}}"));
    assert_int_equal(rf_closed_loop_load(f->path, "vllm", false, &l, &found, &e), RF_OK);
    assert_true(found);
    assert_int_equal(l.n, 2);
    assert_true(l.c[0] == 4 && l.f[0] == 2.5 && l.c[1] == 8 && l.f[1] == 3.62);
    assert_true(l.c_min == 1 && l.c_max == 512 && l.runs == 237);
    assert_true(l.in_sample_median == 0.15 && l.held_out_median == 0.23 && l.held_out_p90 == 0.98);
    assert_string_equal(l.source, "fit");
    assert_int_equal(rf_closed_loop_load(f->path, "vllm", true, &l, &found, &e), RF_OK);
    assert_true(found && l.n == 3 && l.c[2] == 16 && l.f[2] == 3.5);
    assert_int_equal(rf_closed_loop_load(f->path, "sglang", false, &l, &found, &e), RF_OK);
    assert_false(found);
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"[]", "the top level must be an object"},
        {"{\"engines\": {}}", "source is missing"},
        {ENG("[]"), "engines.vllm must be an object"},
        {ENG("{\"runs\": 0, \"c_min\": 1, \"c_max\": 8, \"in_sample_median\": 0.1, " ERRS
             "\"lengths\": {\"fixed\": [[4, 2]]}}"),
         "engines.vllm.runs (0) must be within [1, 1000000]"},
        {ENG("{\"runs\": 3, \"c_min\": 9, \"c_max\": 8, \"in_sample_median\": 0.1, " ERRS
             "\"lengths\": {\"fixed\": [[4, 2]]}}"),
         "engines.vllm.c_max (8) must be within [9, 1000000]"},
        {ENG("{" HEAD "\"held_out_median\": 0.5, \"held_out_p90\": 0.4, "
             "\"lengths\": {\"fixed\": [[4, 2]]}}"),
         "engines.vllm.held_out_p90 is below held_out_median"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"varied\": [[4, 2]]}}"),
         "engines.vllm.lengths.fixed is missing"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": []}}"),
         "engines.vllm.lengths.fixed has no points"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[4, 2], [4, 3]]}}"),
         "engines.vllm.lengths.fixed[1]: concurrency 4 after 4: the grid must increase"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[8, 2], [4, 3]]}}"),
         "the grid must increase"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[4, 0]]}}"),
         "engines.vllm.lengths.fixed[0]: factor 0 must be within [0.001, 1e6]"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[4, -1]]}}"), "factor -1 must be within"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[1, 1e-320], [8, 1]]}}"),
         "fixed[0]: factor 9.99989e-321 must be within [0.001, 1e6]"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[0.5, 2]]}}"),
         "concurrency 0.5 must be within [1, 1e6]"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [[4]]}}"),
         "engines.vllm.lengths.fixed[0] must be [concurrency, factor], two numbers"},
        {ENG("{" HEAD ERRS "\"lengths\": {\"fixed\": [4, 2]}}"), "two numbers"},
        {ENG("{" HEAD ERRS "\"lengths\": [1]}"), "engines.vllm.lengths must be an object"},
        {ENG("{" HEAD "\"held_out_median\": 101, \"held_out_p90\": 102, \"lengths\": {}}"),
         "engines.vllm.held_out_median (101) must be within [0, 100]"},
        {"not json", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put(f, "closed_loop_ttft.json", bad[i].json);
        rf_status s = rf_closed_loop_load(f->path, "vllm", false, &l, &found, &e);
        refused(s, found, &e, "closed_loop_ttft.json", bad[i].want);
    }
#undef ENG
#undef ERRS
#undef HEAD
    unlink(f->path);
}

static void test_quant(void **state)
{
    (void)state;
    rf_gpu_quant q;
    rf_err e;
    assert_int_equal(rf_gpu_quant_of("mxfp4", &q, &e), RF_OK);
    assert_int_equal(q.w.kind, RF_MXFP4);
    assert_int_equal(q.a.kind, RF_BF16);
    assert_string_equal(q.moe_dtype, "w4a16_mxfp4");
    assert_int_equal(rf_gpu_quant_of("fp8_block", &q, &e), RF_OK);
    assert_int_equal(q.a.kind, RF_FP8_E4M3);
    assert_string_equal(q.gemm_dtype, "fp8_block");
    assert_int_equal(rf_gpu_quant_of("awq", &q, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "'awq'"));
}

/* llama-3-8b on the H100 with the GEMM-only tables (tests/data/gpu):
 * what the simulator's tests prepare on, one device. */
static void llama_on_gemm_only(rf_gpu_tables *g, rf_model *m, rf_step_opts *o, rf_roof *roof,
                               rf_par_opts *po)
{
    rf_hw hw;
    rf_err e;
    assert_int_equal(rf_hw_preset("h100-sxm", &hw, &e), RF_OK);
    if (rf_gpu_tables_load(RF_TEST_DATA "/gpu/gemm-only/vllm", &hw, g, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(rf_model_preset("llama-3-8b", m, &e), RF_OK);
    *o = rf_step_opts_for_model(m);
    assert_int_equal(rf_hw_roof(&hw, RF_BF16, roof, &e), RF_OK);
    *po = (rf_par_opts){
        .layout = rf_layout_single(), .links = hw.links, .util = 0.9, .mem_bytes = hw.mem_bytes};
}

/* A pipeline under load: one decode token (one micro-batch) on two stages
 * is the one-device step plus the send between them. With a GEMM table
 * and no attention table every row is predicted per operator (the GEMMs
 * of M = 1 from the table, attention and element-wise rows on their
 * floor), so the two stages' rows are the single device's rows split;
 * the send is on its floor (rf_par_compute's pp_send at one row), marked
 * RF_GPU_NEED_P2P. */
static void test_sim_pipeline(void **state)
{
    (void)state;
    rf_err e;
    rf_status s;
    static rf_gpu_tables g;
    rf_model m;
    rf_step_opts o;
    rf_roof roof;
    rf_par_opts po;
    llama_on_gemm_only(&g, &m, &o, &roof, &po);
    double step[2];
    int64_t ctx[1] = {300};
    rf_sim_batch dec = {
        .n_decode = 1, .decode_context = ctx, .decode_context_sum = 300, .tokens = 1};
    rf_gpu_sim *gs = calloc(1, sizeof *gs);
    rf_par *par = calloc(1, sizeof *par);
    assert_non_null(gs);
    assert_non_null(par);
    for (int pp = 1; pp <= 2; pp++) {
        po.layout.pp = pp;
        size_t len = rf_gpu_sim_table_len(pp, 64, 64);
        double *table = malloc(len * sizeof *table);
        assert_non_null(table);
        s = rf_gpu_sim_prepare(gs, &g, NULL, &m, &o, &roof, &po, 64, 64, table, len, &e);
        if (s)
            fail_msg("%s", e.msg);
        assert_int_equal(rf_gpu_sim_group(gs, &dec, 1, &step[pp - 1], &e), RF_OK);
        assert_int_equal(!!(gs->missing & RF_GPU_NEED_P2P), pp == 2);
        free(table);
    }
    rf_step_opts d = o;
    d.phase = RF_DECODE, d.batch = 2, d.context = 1, d.tokens = 1;
    assert_int_equal(rf_par_compute(&m, &d, &roof, &po, par, &e), RF_OK);
    assert_string_equal(par->stages[0].coll[par->stages[0].n_coll - 1].name, "pp_send");
    double send = par->stages[0].coll[par->stages[0].n_coll - 1].time_s;
    assert_true(fabs(step[1] - (step[0] + send)) <= 1e-9 * step[1]);
    free(par);
    free(gs);
    rf_gpu_tables_free(&g);
}

/* The serving step model and the static batch agree: a lone prompt's
 * chunk step (rf_gpu_sim_group) is generate's TTFT at B = 1, and B decode
 * tokens at context P + 1 are its first decode step, on llama-3-8b with a
 * GEMM table and no attention table (attention on its floor, marked). */
static void test_sim_generate(void **state)
{
    (void)state;
    rf_err e;
    rf_status s;
    static rf_gpu_tables g;
    rf_model m;
    rf_step_opts o;
    rf_roof roof;
    rf_par_opts po;
    llama_on_gemm_only(&g, &m, &o, &roof, &po);
    const int64_t b = 4, p = 256;
    size_t len = rf_gpu_sim_table_len(1, b * p, b);
    double *table = malloc(len * sizeof *table);
    rf_gpu_sim *gs = calloc(1, sizeof *gs);
    assert_non_null(table);
    assert_non_null(gs);
    s = rf_gpu_sim_prepare(gs, &g, NULL, &m, &o, &roof, &po, b * p, b, table, len, &e);
    if (s)
        fail_msg("%s", e.msg);
    rf_gpu_generate one, many;
    assert_int_equal(rf_gpu_sim_generate(gs, 1, p, 2, &one, &e), RF_OK);
    assert_int_equal(rf_gpu_sim_generate(gs, b, p, 2, &many, &e), RF_OK);
    rf_sim_chunk ch = {.tokens = p, .offset = 0, .request = 0, .logits = 1};
    rf_sim_batch pre = {.n_chunks = 1, .chunks = &ch, .tokens = p};
    double t;
    assert_int_equal(rf_gpu_sim_group(gs, &pre, 1, &t, &e), RF_OK);
    assert_true(fabs(t - one.ttft_s) <= 1e-12 * t);
    int64_t ctx[4] = {p + 1, p + 1, p + 1, p + 1};
    rf_sim_batch dec = {
        .n_decode = b, .decode_context = ctx, .decode_context_sum = b * (p + 1), .tokens = b};
    assert_int_equal(rf_gpu_sim_group(gs, &dec, 1, &t, &e), RF_OK);
    assert_true(fabs(t - many.tpot_first_s) <= 1e-12 * t);
    /* a bigger batch amortizes the weights: more tokens/s, each step longer */
    assert_true(many.tpot_first_s > one.tpot_first_s);
    assert_true(many.tokens_per_s > one.tokens_per_s);
    /* no attention table: both attention kinds on their floor, said so */
    assert_true(gs->missing & (1u << RF_GPU_ATTN_GENERATION));
    assert_true(gs->missing & (1u << RF_GPU_ATTN_CONTEXT));
    assert_false(gs->missing & (1u << RF_GPU_GEMM));
    free(gs);
    free(table);
    rf_gpu_tables_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gemm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collective, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_numbers_and_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_serving_error, setup, teardown),
        cmocka_unit_test(test_closed_loop_factor),
        cmocka_unit_test_setup_teardown(test_closed_loop_load, setup, teardown),
        cmocka_unit_test(test_quant),
        cmocka_unit_test(test_sim_generate),
        cmocka_unit_test_setup_teardown(test_pipeline, setup, teardown),
        cmocka_unit_test(test_sim_pipeline),
        cmocka_unit_test_setup_teardown(test_mla, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
