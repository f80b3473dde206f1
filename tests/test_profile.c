/* test_profile.c - a measured profile through its JSON file: round trips,
 * refusals that name the key, conversion to the analytic roof, and the CLI
 * accepting the file wherever --hw is.
 *
 * `test_profile cli ROOFLINE` runs the CLI checks against that binary. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_measured_io.h"

static const char *roofline_bin;
static char tmpdir[] = "/tmp/rf_test_profile_XXXXXX";

/* A profile shaped like one `roofline measure` writes (figures of this
 * lab's EPYC, rounded). */
static void sample(rf_hw_profile *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "lab-epyc");
    snprintf(p->cpu, sizeof p->cpu, "AMD EPYC");
    snprintf(p->isa, sizeof p->isa, "avx2");
    snprintf(p->date, sizeof p->date, "2025-01-01T00:00:00Z");
    snprintf(p->flags, sizeof p->flags, "sse2 avx fma avx2");
    p->threads = 2;
    p->cores = 2;
    p->clock_hz = 2.8581234e9;
    p->mem_bytes = 25276063744ull;
    p->cache_bytes[0] = 32768;
    p->cache_bytes[1] = 524288;
    p->cache_bytes[2] = 33554432;
    p->bandwidth_bytes_per_s = 1.8617e10;
    p->peak_flops_per_s[RF_FP32] = 1.79812345678e11;
    p->peak_flops_per_s[RF_FP64] = 9.0401e10;
    p->theoretical_flops_per_s[RF_FP32] = 1.829e11;
    p->spread = 0.0312;
    const char *names[] = {"L1", "L2", "L3", "DRAM"};
    const double bw[] = {2.8e11, 1.65e11, 1.21e11, 1.8617e10};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p->levels[i].name, sizeof p->levels[i].name, "%s", names[i]);
        p->levels[i].bandwidth_bytes_per_s = bw[i];
        p->levels[i].bytes = 16384ull << (4 * i);
    }
    p->n_levels = 4;
    rf_hw_profile_kernel *k = &p->kernels[0];
    snprintf(k->name, sizeof k->name, "read_avx2_f64");
    snprintf(k->level, sizeof k->level, "DRAM");
    snprintf(k->unit, sizeof k->unit, "bytes_per_s");
    k->bytes = 268435456;
    k->best = 1.8617e10;
    k->median = 1.70e10;
    k->min = 1.5e10;
    k->max = 1.8617e10;
    k = &p->kernels[1];
    snprintf(k->name, sizeof k->name, "fma_avx2_fp32");
    snprintf(k->level, sizeof k->level, "registers");
    snprintf(k->unit, sizeof k->unit, "flops_per_s");
    k->best = k->max = 1.79812345678e11;
    k->median = 1.77e11;
    k->min = 1.6e11;
    p->n_kernels = 2;
    /* the roof's bursts: the roof is the most the last one read */
    p->dram_bursts = (rf_hw_profile_bursts){
        .n = 3, .trials = 16, .runs = 1, .best = {1.70e10, 1.2345e10, 1.8617e10}};
}

static void round_trip(void **state)
{
    (void)state;
    rf_hw_profile *p = malloc(sizeof *p), *q = malloc(sizeof *q);
    assert_non_null(p);
    assert_non_null(q);
    sample(p);
    char *json = NULL;
    assert_int_equal(rf_hw_profile_to_json(p, &json, NULL), RF_OK);
    /* the stable keys are all there */
    const char *keys[] = {"\"name\"",
                          "\"cpu\"",
                          "\"threads\"",
                          "\"clock_hz\"",
                          "\"bandwidth_bytes_per_s\"",
                          "\"peak_flops_per_s\"",
                          "\"fp32\"",
                          "\"fp64\"",
                          "\"levels\"",
                          "\"kernels\"",
                          "\"spread\"",
                          "\"ridge_flop_per_byte\"",
                          "\"dram_bursts\"",
                          "\"burst_best\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_non_null(strstr(json, keys[i]));
    assert_int_equal(rf_hw_profile_from_json(json, "t.json", q, NULL), RF_OK);
    assert_memory_equal(p, q, sizeof *p); /* every field, doubles bit for bit */

    char path[128];
    snprintf(path, sizeof path, "%s/p.json", tmpdir);
    assert_int_equal(rf_hw_profile_save(p, path, NULL), RF_OK);
    assert_int_equal(rf_hw_profile_load(path, q, NULL), RF_OK);
    assert_memory_equal(p, q, sizeof *p);
    free(json);
    free(p);
    free(q);
}

/* Parse text and expect RF_EINVAL with a message holding `want`. */
static void refused(const char *text, const char *want)
{
    rf_hw_profile *p = malloc(sizeof *p);
    rf_err e;
    assert_non_null(p);
    rf_status s = rf_hw_profile_from_json(text, "bad.json", p, &e);
    if (s != RF_EINVAL || !strstr(e.msg, want) || strncmp(e.msg, "bad.json: ", 10))
        fail_msg("%s\n  -> status %d '%s', wanted '%s'", text, s, s ? e.msg : "", want);
    free(p);
}

#define OK_HEAD "{\"name\": \"x\", "
#define OK_ROOF "\"bandwidth_bytes_per_s\": 1e10, \"peak_flops_per_s\": {\"fp32\": 1e11}"

static void refusals(void **state)
{
    (void)state;
    rf_hw_profile *p = malloc(sizeof *p);
    assert_non_null(p);
    assert_int_equal(rf_hw_profile_from_json(OK_HEAD OK_ROOF "}", "ok.json", p, NULL), RF_OK);
    free(p);
    refused("{\"peak_flops_per_s\": {\"fp32\": 1e11}, \"bandwidth_bytes_per_s\": 1}",
            "name is missing");
    refused(OK_HEAD "\"peak_flops_per_s\": {\"fp32\": 1e11}}", "bandwidth_bytes_per_s is missing");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": -5, \"peak_flops_per_s\": {\"fp32\": 1}}",
            "bandwidth_bytes_per_s is negative (-5)");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": 0, \"peak_flops_per_s\": {\"fp32\": 1}}",
            "bandwidth_bytes_per_s must be positive");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": \"fast\", \"peak_flops_per_s\": {}}",
            "bandwidth_bytes_per_s must be a number");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": 1e10}", "peak_flops_per_s is missing");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": 1e10, \"peak_flops_per_s\": {\"fp32\": -1}}",
            "peak_flops_per_s.fp32 is negative (-1)");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": 1e10, \"peak_flops_per_s\": {\"fp33\": 1}}",
            "peak_flops_per_s.fp33: unknown dtype");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": 1e10, \"peak_flops_per_s\": {\"fp32\": 0}}",
            "peak_flops_per_s has no positive figure");
    refused(OK_HEAD OK_ROOF ", \"clock_hz\": -2.5e9}", "clock_hz is negative");
    /* a key given twice is refused, as in config.json and measured files */
    refused(OK_HEAD OK_ROOF ", \"clock_hz\": 1e9, \"clock_hz\": 2e9}", "duplicate");
    refused(OK_HEAD OK_ROOF ", \"spread\": -0.1}", "spread is negative");
    refused(OK_HEAD OK_ROOF ", \"threads\": -2}", "threads is negative (-2)");
    refused(OK_HEAD OK_ROOF ", \"levels\": [{\"name\": \"L1\", \"bytes\": 1}]}",
            "levels[0].bandwidth_bytes_per_s is missing");
    refused(OK_HEAD OK_ROOF ", \"levels\": [{\"name\": \"L1\", \"bytes\": 1, "
                            "\"bandwidth_bytes_per_s\": 1e11}, {\"name\": \"L2\", \"bytes\": 1, "
                            "\"bandwidth_bytes_per_s\": -3}]}",
            "levels[1].bandwidth_bytes_per_s is negative (-3)");
    refused(OK_HEAD OK_ROOF ", \"levels\": [{\"name\": \"L1\", \"bytes\": -1, "
                            "\"bandwidth_bytes_per_s\": 1e11}]}",
            "levels[0].bytes is negative (-1)");
    refused(OK_HEAD OK_ROOF ", \"kernels\": [{\"name\": \"k\", \"best\": 1, \"min\": 1, "
                            "\"max\": 1}]}",
            "kernels[0].median is missing");
    refused(OK_HEAD OK_ROOF ", \"kernels\": [{\"name\": \"k\", \"best\": 1, \"median\": 1, "
                            "\"min\": -1, \"max\": 1}]}",
            "kernels[0].min is negative (-1)");
    refused(OK_HEAD OK_ROOF ", \"levels\": {}}", "levels must be an array");
    refused(
        "{\"name\": \"0123456789012345678901234567890123456789012345678901234567890123\", " OK_ROOF
        "}",
        "name is longer than 63 characters");
    /* the roof's bursts: counted, in range, none above the roof */
#define BURSTS(n, t, r, list)                                                                      \
    OK_HEAD OK_ROOF ", \"dram_bursts\": {\"bursts\": " n ", \"trials_per_burst\": " t              \
                    ", \"runs\": " r ", \"burst_best\": [" list "]}}"
    rf_hw_profile *ok = malloc(sizeof *ok);
    assert_non_null(ok);
    assert_int_equal(
        rf_hw_profile_from_json(BURSTS("2", "16", "1", "9e9, 1e10"), "ok.json", ok, NULL), RF_OK);
    assert_true(ok->dram_bursts.n == 2 && ok->dram_bursts.best[1] == 1e10);
    free(ok);
    refused(BURSTS("2", "16", "1", "9e9, 2e10"),
            "dram_bursts.burst_best[1] (2e+10) is above the roof");
    refused(BURSTS("3", "16", "1", "9e9, 1e10"), "an array of dram_bursts.bursts (3)");
    refused(BURSTS("2", "16", "0", "9e9, 1e10"), "dram_bursts.runs must be within [1,");
    refused(BURSTS("1", "16", "1", "1e-300"), "dram_bursts.burst_best[0]");
    refused(BURSTS("65", "16", "1", "1e10"), "at most 64");
    refused(OK_HEAD OK_ROOF ", \"dram_bursts\": [1]}", "dram_bursts must be an object");
#undef BURSTS
    refused("[1, 2]", "the top level must be an object");
    refused("{\"name\": ", "line 1");
}

static void to_hw(void **state)
{
    (void)state;
    rf_hw_profile p;
    sample(&p);
    rf_hw hw;
    rf_roof roof;
    assert_int_equal(rf_hw_profile_to_hw(&p, &hw, NULL), RF_OK);
    assert_string_equal(hw.name, "lab-epyc");
    assert_non_null(strstr(hw.source, "measured 2025-01-01T00:00:00Z on AMD EPYC"));
    assert_true(hw.bw_bytes_per_s == p.bandwidth_bytes_per_s);
    assert_true(hw.mem_bytes == p.mem_bytes);
    assert_int_equal(rf_hw_roof(&hw, RF_FP32, &roof, NULL), RF_OK);
    /* ridge = 1.79812345678e11 / 1.8617e10 = 9.658 FLOP/byte */
    assert_true(roof.ridge == 1.79812345678e11 / 1.8617e10);
    rf_err e;
    assert_int_equal(rf_hw_roof(&hw, RF_BF16, &roof, &e), RF_EUNAVAIL);
    p.bandwidth_bytes_per_s = 0;
    assert_int_equal(rf_hw_profile_to_hw(&p, &hw, &e), RF_EINVAL);
}

static void load_missing_file(void **state)
{
    (void)state;
    rf_hw_profile p;
    rf_err e;
    assert_int_equal(rf_hw_profile_load("/nonexistent/p.json", &p, &e), RF_EIO);
    assert_non_null(strstr(e.msg, "/nonexistent/p.json"));
}

/* ---- the CLI ------------------------------------------------------------ */

/* Run the binary with a shell command line; return the exit code and the
 * first cap bytes of stdout+stderr in out. */
static int run(const char *args, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", roofline_bin, args);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    while (fgetc(f) != EOF)
        ;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cli_hw_profile(void **state)
{
    (void)state;
    rf_hw_profile p;
    sample(&p);
    char path[128], args[512], out[8192];
    snprintf(path, sizeof path, "%s/lab.json", tmpdir);
    assert_int_equal(rf_hw_profile_save(&p, path, NULL), RF_OK);
    /* a profile works wherever --hw does: the roof line names it */
    snprintf(args, sizeof args, "gemm 1 3584 3584 --act-dtype fp32 --weight-dtype fp32 --hw %s",
             path);
    assert_int_equal(run(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "profile"));
    assert_non_null(strstr(out, "18.62 GB/s")); /* sample()'s 1.8617e10 B/s */
    /* a bad figure: exit 2, the message names the file and the key */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(OK_HEAD "\"bandwidth_bytes_per_s\": 1e10, \"peak_flops_per_s\": {\"fp32\": -1}}", f);
    fclose(f);
    assert_int_equal(run(args, out, sizeof out), 2);
    assert_non_null(strstr(out, "peak_flops_per_s.fp32 is negative"));
    /* neither a preset nor a file */
    assert_int_equal(run("gemm 1 64 64 --hw no-such-hw", out, sizeof out), 2);
    assert_non_null(strstr(out, "no-such-hw"));
}

static void cli_usage(void **state)
{
    (void)state;
    char out[8192];
    /* the CUDA hook: any device but the CPU is unavailable until it is built */
    int rc = run("measure --device cuda", out, sizeof out);
    assert_true(rc == 3 || rc == 0);
    if (rc == 3)
        assert_non_null(strstr(out, "cuda"));
    assert_int_equal(run("measure --threads 0", out, sizeof out), 2);
    assert_non_null(strstr(out, "--threads"));
    assert_int_equal(run("measure --isa avx9", out, sizeof out), 2);
    assert_non_null(strstr(out, "avx9"));
    assert_int_equal(run("measure extra", out, sizeof out), 2);
    assert_int_equal(run("bench gemm", out, sizeof out), 2);
    assert_int_equal(run("bench conv qwen2.5-7b-instruct", out, sizeof out), 2);
    assert_non_null(strstr(out, "bench gemm MODEL"));
    /* a dtype no OpenBLAS GEMM runs in: exit 3 before any work, saying so;
     * a block format is not a GEMM dtype at all */
    assert_int_equal(run("bench gemm qwen2.5-7b-instruct --dtype fp16", out, sizeof out), 3);
    assert_non_null(strstr(out, "--dtype fp16: no fp16 GEMM in OpenBLAS"));
    assert_int_equal(run("bench gemm qwen2.5-7b-instruct --dtype q4_0", out, sizeof out), 2);
    assert_non_null(strstr(out, "--dtype"));
    assert_int_equal(run("bench gemm no-such-model --hw h100-sxm", out, sizeof out), 2);
    assert_int_equal(run("measure --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "--quick"));
}

/* bench gemm end to end on a tiny model, measuring the roof itself: every
 * shape at M = 1 (GEMM and GEMV) and M = 2, the DRAM read sampled before
 * each of the 3 passes and after the last (4 bursts of the full lab's 48
 * trials), the M = 1 verdicts printed. */
static void cli_bench_gemm(void **state)
{
    (void)state;
    static char out[65536];
    assert_int_equal(
        run("bench gemm " RF_TEST_DATA "/profile/tiny-llama.json --tokens 1,2", out, sizeof out),
        0);
    assert_non_null(strstr(out, "measured now (measure --quick"));
    assert_non_null(strstr(out, "DRAM read sampled again beside the GEMMs: 4 bursts of 48"));
    /* tiny-llama: q/o 64 x 64, k/v 64 x 32, gate/up 64 x 160, down 160 x 64,
     * lm_head 64 x 300: five shapes, each with an M = 1 GEMV verdict */
    const char *p = out;
    int m1 = 0;
    while ((p = strstr(p, "bandwidth x 2/b: ")))
        m1++, p++;
    assert_int_equal(m1, 5);
    assert_non_null(strstr(out, "cblas_sgemv"));
    assert_non_null(strstr(out, "lm_head"));
}

static int make_tmpdir(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- every reader: all the bytes, the same bounds ------------------------ */

/* A NUL inside the text is refused by each reader given the length (the
 * profile reader used to stop at it); byte counts stop at 2^60 (as --mem);
 * each figure is held to one range, shared by the profile and measured
 * readers: bandwidth [1e3, 1e16] B/s, peaks [1e6, 1e19] FLOP/s, an op's
 * FLOPs 0 or [1, 1e24], bytes [1, 1e21], times [1e-12, 1e6] s. */
static void readers_bounds_and_nul(void **state)
{
    (void)state;
    rf_hw_profile *p = malloc(sizeof *p);
    rf_measured *m = malloc(sizeof *m);
    rf_err e;
    assert_non_null(p);
    assert_non_null(m);
    static const char nul[] = OK_HEAD OK_ROOF "}\0{\"x\": 1}";
    assert_int_equal(rf_hw_profile_parse(nul, sizeof nul - 1, "n.json", p, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "n.json: not JSON: a NUL byte at offset"));
    assert_int_equal(rf_measured_parse(nul, sizeof nul - 1, "n.json", m, &e), RF_EINVAL);
    assert_non_null(strstr(e.msg, "a NUL byte"));
    /* the same text up to the NUL is a good profile */
    assert_int_equal(rf_hw_profile_parse(nul, strlen(nul), "n.json", p, &e), RF_OK);

    /* 2^60 is the last size accepted, 2^60 + 1 and 2^63 - 1 are not */
    assert_int_equal(rf_hw_profile_from_json(
                         OK_HEAD OK_ROOF ", \"mem_bytes\": 1152921504606846976}", "ok.json", p, &e),
                     RF_OK);
    assert_true(p->mem_bytes == (uint64_t)1 << 60);
    refused(OK_HEAD OK_ROOF ", \"mem_bytes\": 1152921504606846977}",
            "mem_bytes (1152921504606846977) is beyond 2^60 bytes");
    refused(OK_HEAD OK_ROOF ", \"mem_bytes\": 9223372036854775807}", "mem_bytes");
    refused(OK_HEAD OK_ROOF ", \"caches_reported_bytes\": {\"l3\": 4611686018427387904}}",
            "caches_reported_bytes.l3 (4611686018427387904) is beyond 2^60 bytes");
    /* figures: the profile's */
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": 5e-324, \"peak_flops_per_s\": {\"fp32\": 1e11}}",
            "bandwidth_bytes_per_s (4.94066e-324) must be within [1000, 1e+16] bytes/s");
    refused(OK_HEAD "\"bandwidth_bytes_per_s\": 1e10, \"peak_flops_per_s\": {\"fp32\": 1e300}}",
            "peak_flops_per_s.fp32 (1e+300) must be 0 (none) or within [1e+06, 1e+19] FLOP/s");
    refused(OK_HEAD OK_ROOF ", \"theoretical_flops_per_s\": {\"fp64\": 5e-324}}",
            "theoretical_flops_per_s.fp64 (4.94066e-324) must be 0 (none) or within");
    refused(OK_HEAD OK_ROOF ", \"clock_hz\": 1e300}",
            "clock_hz (1e+300) must be 0 (none) or within [1e+06, 1e+11] Hz");
    /* ... and the measured file's, the inputs and their kin */
    static const struct {
        const char *json, *says;
    } bad[] = {
        {"{\"ops\":[{\"name\":\"q\",\"flops\":1e-323,\"bytes\":1,\"measured_s\":1}]}",
         "m.json: ops[0].flops (9.88131e-324) must be 0 (none) or within [1, 1e+24] FLOPs"},
        {"{\"ops\":[{\"name\":\"q\",\"flops\":1e300,\"bytes\":1,\"measured_s\":1}]}",
         "ops[0].flops (1e+300) must be 0 (none) or within [1, 1e+24] FLOPs"},
        {"{\"bandwidth_bytes_per_s\": 5e-324}",
         "m.json: bandwidth_bytes_per_s (4.94066e-324) must be within [1000, 1e+16] bytes/s"},
        {"{\"peak_flops_per_s\": {\"bf16\": 1e300}}",
         "peak_flops_per_s.bf16 (1e+300) must be within [1e+06, 1e+19] FLOP/s"},
        {"{\"peak_flops_per_s\": {\"fp32\": 5e-324}}", "peak_flops_per_s.fp32 (4.94066e-324)"},
        {"{\"ops\":[{\"name\":\"q\",\"flops\":1,\"bytes\":1e-300,\"measured_s\":1}]}",
         "ops[0].bytes (1e-300) must be within [1, 1e+21] bytes"},
        {"{\"ops\":[{\"name\":\"q\",\"flops\":1,\"bytes\":1e22,\"measured_s\":1}]}",
         "ops[0].bytes (1e+22) must be within [1, 1e+21] bytes"},
        {"{\"ops\":[{\"name\":\"q\",\"flops\":1,\"bytes\":1,\"measured_s\":1e-300}]}",
         "ops[0].measured_s (1e-300) must be within [1e-12, 1e+06] s"},
        {"{\"ops\":[{\"name\":\"q\",\"flops\":1,\"bytes\":1,\"measured_s\":1e7}]}",
         "ops[0].measured_s (1e+07) must be within [1e-12, 1e+06] s"},
        {"{\"ops\":[{\"name\":\"q\",\"flops\":-1,\"bytes\":1,\"measured_s\":1}]}",
         "ops[0].flops must be a positive number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (rf_measured_parse(bad[i].json, strlen(bad[i].json), "m.json", m, &e) != RF_EINVAL)
            fail_msg("accepted %s", bad[i].json);
        if (!strstr(e.msg, bad[i].says))
            fail_msg("%s: '%s' lacks '%s'", bad[i].json, e.msg, bad[i].says);
    }
    /* the ends of each range pass, and an op without FLOPs (a gather) */
    static const char ends[] = "{\"bandwidth_bytes_per_s\": 1e16, \"peak_flops_per_s\":"
                               " {\"fp32\": 1e6}, \"ops\": [{\"name\": \"a\", \"flops\": 1e24,"
                               " \"bytes\": 1, \"measured_s\": 1e-12}, {\"name\": \"b\","
                               " \"flops\": 0, \"bytes\": 1e21, \"measured_s\": 1e6}]}";
    assert_int_equal(rf_measured_parse(ends, sizeof ends - 1, "m.json", m, &e), RF_OK);
    assert_int_equal(m->n_ops, 2);
    free(p);
    free(m);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "bench")) {
        roofline_bin = argv[2];
        const struct CMUnitTest bench[] = {cmocka_unit_test(cli_bench_gemm)};
        return cmocka_run_group_tests_name("profile_bench", bench, NULL, NULL);
    }
    if (argc > 2 && !strcmp(argv[1], "cli")) {
        roofline_bin = argv[2];
        const struct CMUnitTest cli[] = {cmocka_unit_test(cli_hw_profile),
                                         cmocka_unit_test(cli_usage)};
        return cmocka_run_group_tests_name("profile_cli", cli, make_tmpdir, remove_tmpdir);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(refusals),
        cmocka_unit_test(to_hw),
        cmocka_unit_test(load_missing_file),
        cmocka_unit_test(readers_bounds_and_nul),
    };
    return cmocka_run_group_tests_name("profile", tests, make_tmpdir, remove_tmpdir);
}
