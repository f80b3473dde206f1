/* test_gpu_cal.c - a GPU calibration as kernel tables (issue 26, item 5):
 * the points `measure --device cuda --calibrate -o DIR` times, turned into
 * the tables' format (rf_cuda_calib_tables, plain C), written
 * (rf_gpu_tables_write), read back by the tables' reader and predicted
 * from, each figure derived by hand in its comment; two such calibrations
 * compared row by row (rf_gpu_compare); the refusals; every point of the
 * backend's quick and full plans read back. No GPU is needed:
 * the calibrations are synthetic, as the GPU would fill them. */
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

#include "roofline/rf_cuda.h"
#include "roofline/rf_file.h"
#include "roofline/rf_gpu_compare.h"
#include "roofline/rf_gpu_io.h"

/* A GPU of round figures: bf16 100 TFLOP/s, 1 TB/s. */
static rf_hw round_hw(void)
{
    rf_hw hw;
    memset(&hw, 0, sizeof hw);
    snprintf(hw.name, sizeof hw.name, "round");
    hw.peak_flops_per_s[RF_BF16] = 1e14;
    hw.bw_bytes_per_s = 1e12;
    return hw;
}

/* |got - want| <= tol, both shown when not */
#define assert_double_equal(got, want, tol) near((got), (want), (tol), __LINE__)
static void near(double got, double want, double tol, int line)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("line %d: %.12g, expected %.12g (tolerance %g)", line, got, want, tol);
}

#define L2_BYTES ((uint64_t)50 << 20) /* 50 MiB, an H100's */
#define US 1e-6

typedef struct fixture {
    char dir[64], a[96], b[96], path[160];
    rf_calib bf16, fp16, other; /* A's bf16 and fp16 parts; B's bf16 */
} fixture;

static void add(rf_calib *c, rf_calib_kind k, int64_t a, int64_t b, int64_t x, double t)
{
    rf_err e;
    /* flops and bytes as the GPU would count them do not reach the tables */
    if (rf_cuda_calib_add(c, k, a, b, x, 1, 1, t, &e))
        fail_msg("%s", e.msg);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/rf_gpu_cal_XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->a, sizeof f->a, "%s/measured/cuda", f->dir); /* made by the writer */
    snprintf(f->b, sizeof f->b, "%s/tables/vllm", f->dir);
    /* A: bf16 GEMMs K = N = 4096 at M = 16, 32, 64; fp16 at M = 16; a
     * decode point (d_h 128, 1024 keys), a prefill one (d_h 128, 512
     * tokens), a copy of 1 MiB */
    add(&f->bf16, RF_CALIB_GEMM, 4096, 4096, 16, 50 * US);
    add(&f->bf16, RF_CALIB_GEMM, 4096, 4096, 32, 55 * US);
    add(&f->bf16, RF_CALIB_GEMM, 4096, 4096, 64, 60 * US);
    add(&f->bf16, RF_CALIB_ATTN_DECODE, 128, 0, 1024, 80 * US);
    add(&f->bf16, RF_CALIB_ATTN_PREFILL, 128, 0, 512, 300 * US);
    add(&f->bf16, RF_CALIB_NORM, 0, 0, 4096, 3 * US); /* no table: left out */
    add(&f->bf16, RF_CALIB_COPY, 0, 0, 1 << 20, 2 * US);
    add(&f->fp16, RF_CALIB_GEMM, 4096, 4096, 16, 51 * US);
    /* B: bf16 GEMMs at M = 16 and 64 only */
    add(&f->other, RF_CALIB_GEMM, 4096, 4096, 16, 40 * US);
    add(&f->other, RF_CALIB_GEMM, 4096, 4096, 64, 60 * US);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

/* Write A's parts as tables into f->a (and the copy beside them). */
static void write_a(fixture *f)
{
    rf_cuda_calib_part parts[] = {{RF_BF16, &f->bf16}, {RF_FP16, &f->fp16}};
    rf_gpu_tables g;
    rf_gpu_table copy;
    rf_err e;
    if (rf_cuda_calib_tables(parts, 2, L2_BYTES, &g, &copy, &e) ||
        rf_gpu_tables_write(&g, f->a, &e))
        fail_msg("%s", e.msg);
    snprintf(f->path, sizeof f->path, "%s/mem_copy_perf.csv", f->a);
    if (rf_gpu_table_write(&copy, f->path, &e))
        fail_msg("%s", e.msg);
    rf_gpu_tables_free(&g);
    rf_gpu_table_free(&copy);
}

static void write_b(fixture *f)
{
    rf_cuda_calib_part parts[] = {{RF_BF16, &f->other}};
    rf_gpu_tables g;
    rf_gpu_table copy;
    rf_err e;
    if (rf_cuda_calib_tables(parts, 1, L2_BYTES, &g, &copy, &e) ||
        rf_gpu_tables_write(&g, f->b, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(copy.n_rows, 0);
    rf_gpu_tables_free(&g);
    rf_gpu_table_free(&copy);
}

static void expect_file(fixture *f, const char *dir, const char *name, const char *text)
{
    char *data = NULL;
    size_t len;
    rf_err e;
    snprintf(f->path, sizeof f->path, "%s/%s", dir, name);
    if (rf_file_read_all(f->path, 1 << 20, &data, &len, &e))
        fail_msg("%s", e.msg);
    assert_string_equal(data, text);
    free(data);
}

/* The files as aiconfigurator's collector would write them: its column
 * names in the reader's order, latency in ms (50 us = 0.05 ms). The decode
 * point ran B sequences whose K and V (2 n_kv S d_h bf16 = 2 x 4 x 1024 x
 * 128 x 2 = 2 MiB each) pass 4 x L2 = 200 MiB: B = 100, at step = 1024 - 1
 * keys already cached. */
static void files_written(void **state)
{
    fixture *f = *state;
    write_a(f);
    expect_file(f, f->a, "gemm_perf.csv",
                "gemm_dtype,n,k,m,latency\n"
                "bfloat16,4096,4096,16,0.05\n"
                "bfloat16,4096,4096,32,0.055\n"
                "bfloat16,4096,4096,64,0.06\n"
                "float16,4096,4096,16,0.051\n");
    expect_file(f, f->a, "generation_attention_perf.csv",
                "attn_dtype,kv_cache_dtype,window_size,head_dim,num_heads,num_key_value_heads,"
                "batch_size,step,latency\n"
                "bfloat16,bfloat16,0,128,16,4,100,1023,0.08\n");
    expect_file(f, f->a, "context_attention_perf.csv",
                "attn_dtype,kv_cache_dtype,window_size,head_dim,num_heads,num_key_value_heads,"
                "batch_size,isl,latency\n"
                "bfloat16,bfloat16,0,128,16,4,1,512,0.3\n");
    expect_file(f, f->a, "mem_copy_perf.csv", "bytes,latency\n1048576,0.002\n");
    snprintf(f->path, sizeof f->path, "%s/moe_perf.csv", f->a);
    assert_int_not_equal(access(f->path, F_OK), 0); /* no rows, no file */
}

/* The GEMM floor on round_hw at K = N = 4096 in bf16 (2 bytes):
 *   F = 2 M K N, Q = (M K + K N) 2 + M N 2, floor = max(F / 1e14, Q / 1e12)
 *   M = 16:  F = 536,870,912 (5.37 us),   Q = 33,816,576 (33.816576 us)
 *   M = 32:  F = 1,073,741,824 (10.7 us), Q = 34,078,720 (34.07872 us)
 *   M = 64:  F = 2,147,483,648 (21.5 us), Q = 34,603,008 (34.603008 us)
 *   M = 128: F = 4,294,967,296 (42.94967296 us), Q = 35,651,584 (35.65 us):
 *            compute-bound. */
#define FLOOR16 33.816576
#define FLOOR32 34.07872
#define FLOOR64 34.603008
#define FLOOR128 42.94967296

/* Read back by the tables' reader: in range, interpolated, extrapolated. */
static void read_back_and_predict(void **state)
{
    fixture *f = *state;
    rf_hw hw = round_hw();
    rf_gpu_tables g;
    rf_gpu_pred p;
    rf_err e;
    write_a(f);
    if (rf_gpu_tables_load(f->a, &hw, &g, &e))
        fail_msg("%s", e.msg);
    assert_true(g.t[RF_GPU_GEMM].present);
    assert_int_equal(g.t[RF_GPU_GEMM].n_rows, 4);
    assert_true(g.t[RF_GPU_ATTN_GENERATION].present);
    assert_true(g.t[RF_GPU_ATTN_CONTEXT].present);
    assert_false(g.t[RF_GPU_MOE].present);
    const char *bf[] = {"bfloat16", NULL, NULL, NULL};
    /* in range: M = 32 is its own latency */
    double q[] = {0, 4096, 4096, 32};
    if (rf_gpu_predict(&g, RF_GPU_GEMM, q, bf, &p, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(p.how, RF_GPU_IN_RANGE);
    assert_double_equal(p.time_s / US, 55, 55 * 1e-9);
    /* interpolated: M = 48 between 32 and 64, w = ln(48/32) / ln(64/32),
     * ln r = (1 - w) ln(55 / FLOOR32) + w ln(60 / FLOOR64), t = r floor(48)
     * with floor(48) = Q / 1e12 = ((48 + 4096) 4096 2 + 48 4096 2) / 1e6 us
     * = 34.340864 us (F = 16.1 us, below it) */
    q[3] = 48;
    if (rf_gpu_predict(&g, RF_GPU_GEMM, q, bf, &p, &e))
        fail_msg("%s", e.msg);
    double w = log(48.0 / 32) / log(2.0);
    double want = exp((1 - w) * log(55 / FLOOR32) + w * log(60 / FLOOR64)) * 34.340864;
    assert_int_equal(p.how, RF_GPU_INTERPOLATED);
    assert_double_equal(p.time_s / US, want, want * 1e-9);
    /* extrapolated: M = 128, the edge's (M = 64) ratio on its own floor,
     * now compute-bound: 60 / FLOOR64 x FLOOR128 = 74.47 us */
    q[3] = 128;
    if (rf_gpu_predict(&g, RF_GPU_GEMM, q, bf, &p, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(p.how, RF_GPU_EXTRAPOLATED);
    assert_double_equal(p.time_s / US, 60 / FLOOR64 * FLOOR128, 1e-6);
    /* the fp16 rows are their own dtype: M = 16 in range */
    const char *half[] = {"float16", NULL, NULL, NULL};
    q[3] = 16;
    if (rf_gpu_predict(&g, RF_GPU_GEMM, q, half, &p, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(p.how, RF_GPU_IN_RANGE);
    assert_double_equal(p.time_s / US, 51, 51 * 1e-9);
    /* the decode point: at its own keys, in range */
    const char *attn[] = {"bfloat16", "bfloat16", "0", NULL, NULL, NULL, NULL, NULL};
    double qd[] = {0, 0, 0, 128, 16, 4, 100, 1023};
    if (rf_gpu_predict(&g, RF_GPU_ATTN_GENERATION, qd, attn, &p, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(p.how, RF_GPU_IN_RANGE);
    assert_double_equal(p.time_s / US, 80, 80 * 1e-9);
    rf_gpu_tables_free(&g);
}

/* A against B, row by row:
 *   bf16 M = 16: 50 / 40 = 1.25, in range;
 *   bf16 M = 32: B interpolates, w = ln 2 / ln 4 = 1/2:
 *        r_B = sqrt(40 / FLOOR16 x 60 / FLOOR64), t_B = r_B FLOOR32, ratio 55 / t_B;
 *   bf16 M = 64: 60 / 60 = 1, in range;
 *   fp16 M = 16, the decode and prefill points: B has no rows: on its floor.
 * The bf16 group's median is the middle of the three; the whole median too. */
static void compare_two(void **state)
{
    fixture *f = *state;
    rf_hw hw = round_hw();
    rf_gpu_tables a, b;
    rf_gpu_cmp c;
    rf_err e;
    write_a(f);
    write_b(f);
    if (rf_gpu_tables_load(f->a, &hw, &a, &e) || rf_gpu_tables_load(f->b, &hw, &b, &e))
        fail_msg("%s", e.msg);
    size_t n = rf_gpu_compare_len(&a);
    assert_int_equal(n, 6);
    rf_gpu_cmp_row rows[6];
    double scratch[6];
    /* room for fewer rows than A holds: refused */
    assert_int_equal(rf_gpu_compare(&a, &b, rows, scratch, 5, &c, &e), RF_ERANGE);
    if (rf_gpu_compare(&a, &b, rows, scratch, n, &c, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(c.n_rows, 6);
    double tb32 = sqrt(40 / FLOOR16 * 60 / FLOOR64) * FLOOR32;
    double r32 = 55 / tb32; /* 55 / 47.36 = 1.161 */
    /* the rows in A's order: gemm (sorted: bfloat16 M = 16, 32, 64, then
     * float16), then context, then generation attention */
    assert_int_equal(rows[0].kind, RF_GPU_GEMM);
    assert_int_equal(rows[0].b.how, RF_GPU_IN_RANGE);
    assert_double_equal(rows[0].ratio, 1.25, 1e-9);
    assert_double_equal(rows[0].over_floor, 50 / FLOOR16, 1e-9);
    assert_int_equal(rows[1].b.how, RF_GPU_INTERPOLATED);
    assert_double_equal(rows[1].ratio, r32, 1e-9);
    assert_double_equal(rows[2].ratio, 1, 1e-9);
    assert_int_equal(rows[3].b.how, RF_GPU_NO_TABLE);
    assert_int_equal(rows[4].kind, RF_GPU_ATTN_CONTEXT);
    assert_int_equal(rows[4].b.how, RF_GPU_NO_TABLE);
    assert_int_equal(rows[5].kind, RF_GPU_ATTN_GENERATION);
    assert_int_equal(c.n_how[RF_GPU_IN_RANGE], 2);
    assert_int_equal(c.n_how[RF_GPU_INTERPOLATED], 1);
    assert_int_equal(c.n_how[RF_GPU_NO_TABLE], 3);
    assert_double_equal(c.ratio_median, r32, 1e-9); /* of 1, 1.161, 1.25 */
    /* groups: gemm bfloat16, gemm float16, context and generation attention */
    assert_int_equal(c.n_groups, 4);
    assert_string_equal(c.group[0].cats, "bfloat16");
    assert_int_equal(c.group[0].n, 3);
    assert_double_equal(c.group[0].ratio_median, r32, 1e-9);
    assert_double_equal(c.group[0].ratio_min, 1, 1e-9);
    assert_double_equal(c.group[0].ratio_max, 1.25, 1e-9);
    assert_string_equal(c.group[1].cats, "float16");
    assert_int_equal(c.group[1].n_how[RF_GPU_NO_TABLE], 1);
    assert_double_equal(c.group[1].ratio_median, 0, 0); /* none B has a table for */
    /* A over the floor at the fp16 point: 51 / FLOOR16 (fp16 bytes are 2) */
    assert_double_equal(c.group[1].over_floor_median, 51 / FLOOR16, 1e-9);
    assert_string_equal(c.group[2].cats, "bfloat16 bfloat16 0");
    /* B against itself: every ratio 1 */
    rf_gpu_cmp_row brows[2];
    double bscratch[2];
    if (rf_gpu_compare(&b, &b, brows, bscratch, 2, &c, &e))
        fail_msg("%s", e.msg);
    assert_double_equal(c.ratio_median, 1, 1e-12);
    rf_gpu_tables_free(&a);
    rf_gpu_tables_free(&b);
}

static void refusals(void **state)
{
    fixture *f = *state;
    rf_gpu_tables g;
    rf_gpu_table copy;
    rf_err e;
    /* a dtype without a table name */
    rf_cuda_calib_part bad[] = {{RF_INT8, &f->other}};
    assert_int_equal(rf_cuda_calib_tables(bad, 1, L2_BYTES, &g, &copy, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "int8"));
    /* a decode point with one key: no step before the new token */
    rf_calib one;
    memset(&one, 0, sizeof one);
    add(&one, RF_CALIB_ATTN_DECODE, 128, 0, 1, 1 * US);
    rf_cuda_calib_part p1[] = {{RF_BF16, &one}};
    assert_int_equal(rf_cuda_calib_tables(p1, 1, L2_BYTES, &g, &copy, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "2 or more"));
    /* nothing to write */
    rf_calib none;
    memset(&none, 0, sizeof none);
    rf_cuda_calib_part p0[] = {{RF_BF16, &none}};
    if (rf_cuda_calib_tables(p0, 1, L2_BYTES, &g, &copy, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(rf_gpu_tables_write(&g, f->a, &e), RF_EINVAL);
    assert_int_equal(rf_gpu_table_write(&copy, "/dev/null", &e), RF_EINVAL);
    rf_gpu_tables_free(&g);
    rf_gpu_table_free(&copy);
    /* a file where the folder should be */
    snprintf(f->path, sizeof f->path, "%s/file", f->dir);
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    assert_int_equal(fclose(fp), 0);
    rf_cuda_calib_part pa[] = {{RF_BF16, &f->bf16}};
    if (rf_cuda_calib_tables(pa, 1, L2_BYTES, &g, &copy, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(rf_gpu_tables_write(&g, f->path, &e), RF_EIO);
    assert_non_null(strstr(e.msg, "not a folder"));
    rf_gpu_tables_free(&g);
    rf_gpu_table_free(&copy);
    /* the dtypes' table names */
    assert_string_equal(rf_cuda_table_dtype(RF_BF16), "bfloat16");
    assert_string_equal(rf_cuda_table_dtype(RF_FP8_E4M3), "fp8");
    assert_null(rf_cuda_table_dtype(RF_INT4));
}

/* Every point of the calibration's plans (quick and full), as
 * rf_cuda_calibrate and rf_cuda_calib_gemm_dtype fill them, a time each,
 * written and read back by the reader: no point refused or repeated, a row
 * per point (GEMMs per dtype: shapes x M; decode and prefill: head dims x
 * keys or tokens; the copy's sizes), and each GEMM row predicted in range
 * as its own time. */
static void plans_read_back(void **state)
{
    fixture *f = *state;
    rf_hw hw = round_hw();
    for (int quick = 0; quick < 2; quick++) {
        rf_cuda_calib_plan pl = rf_cuda_calib_plan_of(quick);
        rf_calib *bf = calloc(1, sizeof *bf), *f8 = calloc(1, sizeof *f8);
        assert_non_null(bf);
        assert_non_null(f8);
        for (size_t s = 0; s < pl.n_gemm; s++)
            for (size_t i = 0; i < pl.n_m; i++) {
                double t = (1 + (double)pl.m[i] / 64) * (double)(s + 1) * US;
                add(bf, RF_CALIB_GEMM, pl.gemm[s][0], pl.gemm[s][1], pl.m[i], t);
                add(f8, RF_CALIB_GEMM, pl.gemm[s][0], pl.gemm[s][1], pl.m[i], t / 2);
            }
        for (size_t d = 0; d < pl.n_head_dims; d++) {
            for (size_t i = 0; i < pl.n_keys; i++)
                add(bf, RF_CALIB_ATTN_DECODE, pl.head_dims[d], 0, pl.keys[i], 10 * US);
            for (size_t i = 0; i < pl.n_tokens; i++)
                add(bf, RF_CALIB_ATTN_PREFILL, pl.head_dims[d], 0, pl.tokens[i], 20 * US);
        }
        for (size_t i = 0; i < pl.n_copy; i++)
            add(bf, RF_CALIB_COPY, 0, 0, pl.copy_bytes[i], 3 * US);
        rf_cuda_calib_part parts[] = {{RF_BF16, bf}, {RF_FP8_E4M3, f8}};
        rf_gpu_tables g, back;
        rf_gpu_table copy;
        rf_err e;
        if (rf_cuda_calib_tables(parts, 2, L2_BYTES, &g, &copy, &e) ||
            rf_gpu_tables_write(&g, f->a, &e) || rf_gpu_tables_load(f->a, &hw, &back, &e))
            fail_msg("%s", e.msg);
        assert_int_equal(back.t[RF_GPU_GEMM].n_rows, 2 * pl.n_gemm * pl.n_m);
        assert_int_equal(back.t[RF_GPU_ATTN_GENERATION].n_rows, pl.n_head_dims * pl.n_keys);
        assert_int_equal(back.t[RF_GPU_ATTN_CONTEXT].n_rows, pl.n_head_dims * pl.n_tokens);
        assert_int_equal(copy.n_rows, pl.n_copy);
        const char *f8name[] = {"fp8", NULL, NULL, NULL};
        for (size_t s = 0; s < pl.n_gemm; s++)
            for (size_t i = 0; i < pl.n_m; i++) {
                double q[] = {0, (double)pl.gemm[s][1], (double)pl.gemm[s][0], (double)pl.m[i]};
                double t = (1 + (double)pl.m[i] / 64) * (double)(s + 1) * US / 2;
                rf_gpu_pred p;
                if (rf_gpu_predict(&back, RF_GPU_GEMM, q, f8name, &p, &e))
                    fail_msg("%s", e.msg);
                assert_int_equal(p.how, RF_GPU_IN_RANGE);
                assert_double_equal(p.time_s, t, t * 1e-8);
            }
        rf_gpu_tables_free(&g);
        rf_gpu_tables_free(&back);
        rf_gpu_table_free(&copy);
        free(bf);
        free(f8);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(files_written, setup, teardown),
        cmocka_unit_test_setup_teardown(read_back_and_predict, setup, teardown),
        cmocka_unit_test_setup_teardown(compare_two, setup, teardown),
        cmocka_unit_test_setup_teardown(refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(plans_read_back, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
