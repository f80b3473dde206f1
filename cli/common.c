/* common.c - global options, resolution of MODEL and --hw, output. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "roofline/rf_file.h"
#include "roofline/rf_measure.h"
#include "roofline/rf_parse.h"
#include "roofline/rf_hw_profile_io.h"
#include "roofline/rf_reader.h"

enum {
    OPT_HW = 1,
    OPT_RIDGE,
    OPT_PEAK,
    OPT_BW,
    OPT_MEM,
    OPT_WDT,
    OPT_ADT,
    OPT_KVDT,
    OPT_GROUP,
    OPT_JSON,
    OPT_CSV,
    OPT_OUT,
    OPT_HELP,
};

static const cli_opt globals[] = {
    {"hw", 1, OPT_HW, "NAME|FILE", "hardware preset or measured profile (default h100-sxm)"},
    {"ridge", 1, OPT_RIDGE, "X", "ridge point in FLOP/byte (compute roof = X x bandwidth)"},
    {"peak", 1, OPT_PEAK, "TFLOPS", "compute peak of the math dtype, TFLOP/s"},
    {"bw", 1, OPT_BW, "TBPS", "memory bandwidth, TB/s"},
    {"mem", 1, OPT_MEM, "SIZE", "usable memory (79.65GiB, 16GB)"},
    {"weight-dtype", 1, OPT_WDT, "DT", "weights dtype (bf16, fp8, int4, int4:g128, ...)"},
    {"act-dtype", 1, OPT_ADT, "DT", "activations dtype (default bf16)"},
    {"kv-dtype", 1, OPT_KVDT, "DT", "KV-cache dtype (default bf16)"},
    {"group-size", 1, OPT_GROUP, "N", "quantization group of int weights (scales counted)"},
    {"json", 0, OPT_JSON, NULL, "JSON output (stable keys)"},
    {"csv", 0, OPT_CSV, NULL, "CSV output (the main table)"},
    {"output", 1, OPT_OUT, "FILE", "write to FILE (atomically; - for stdout)"},
    {"help", 0, OPT_HELP, NULL, "this help"},
};
#define N_GLOBALS (sizeof globals / sizeof globals[0])

int cli_fail(const cli_ctx *ctx, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line whatever the input it quotes: a typed or file-borne newline
     * or other control character is shown as '?'. */
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    fprintf(stderr, "roofline %s: %s\n", ctx && ctx->cmd ? ctx->cmd : "", msg);
    return code;
}

int cli_exit_for(rf_status s)
{
    switch (s) {
    case RF_OK:
        return RF_EXIT_OK;
    case RF_EINVAL:
    case RF_ERANGE:
        return RF_EXIT_USAGE;
    case RF_EUNAVAIL:
        return RF_EXIT_UNAVAIL;
    case RF_EIO:
        return RF_EXIT_USAGE; /* an unreadable input file; writes map to 4 in cli_emit */
    default:
        return RF_EXIT_FAIL;
    }
}

int cli_fail_err(const cli_ctx *ctx, const rf_err *err)
{
    return cli_fail(ctx, cli_exit_for(err->status), "%s", err->msg);
}

static void print_opts(const cli_opt *o, size_t n)
{
    for (size_t i = 0; i < n && o[i].name; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o[i].name, o[i].arg ? " " : "",
                 o[i].arg ? o[i].arg : "");
        printf("  %-26s %s\n", left, o[i].help);
    }
}

static size_t count_opts(const cli_opt *o)
{
    size_t n = 0;
    while (o && o[n].name)
        n++;
    return n;
}

int cli_i64(const cli_ctx *ctx, const char *opt, const char *text, int64_t lo, int64_t hi,
            int64_t *out)
{
    rf_err e;
    if (rf_parse_i64(text, lo, hi, out, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "%s: %s", opt, e.msg);
    return RF_EXIT_OK;
}

int cli_f64(const cli_ctx *ctx, const char *opt, const char *text, double lo, double hi,
            double *out)
{
    rf_err e;
    if (rf_parse_f64(text, lo, hi, out, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "%s: %s", opt, e.msg);
    return RF_EXIT_OK;
}

int cli_range(const cli_ctx *ctx, const char *opt, const char *text, int64_t hi, int64_t **vals,
              size_t *n)
{
    rf_err e;
    size_t count;
    *vals = NULL;
    if (rf_parse_range_count(text, hi, &count, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "%s: %s", opt, e.msg);
    *vals = malloc(count * sizeof **vals);
    if (!*vals)
        return cli_fail(ctx, RF_EXIT_FAIL, "%s: out of memory for %zu values", opt, count);
    if (rf_parse_range(text, hi, *vals, count, n, &e)) {
        free(*vals);
        *vals = NULL;
        return cli_fail(ctx, RF_EXIT_USAGE, "%s: %s", opt, e.msg);
    }
    return RF_EXIT_OK;
}

static int dtype_opt(cli_ctx *ctx, const char *opt, const char *arg, rf_dtype *dt, bool *given)
{
    rf_err e;
    if (rf_dtype_parse(arg, dt, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "%s: %s", opt, e.msg);
    *given = true;
    return RF_EXIT_OK;
}

static int global_opt(cli_ctx *ctx, int id, const char *arg)
{
    rf_err e;
    int64_t g;
    switch (id) {
    case OPT_HW:
        if (!*arg)
            return cli_fail(ctx, RF_EXIT_USAGE, "--hw: empty name");
        ctx->hw_name = arg;
        return RF_EXIT_OK;
    case OPT_RIDGE:
        return cli_f64(ctx, "--ridge", arg, 1e-6, 1e9, &ctx->ridge);
    case OPT_PEAK:
        return cli_f64(ctx, "--peak", arg, 1e-9, 1e9, &ctx->peak_tflops);
    case OPT_BW:
        return cli_f64(ctx, "--bw", arg, 1e-9, 1e6, &ctx->bw_tbps);
    case OPT_MEM:
        if (rf_parse_size(arg, &ctx->mem_bytes, &e))
            return cli_fail(ctx, RF_EXIT_USAGE, "--mem: %s", e.msg);
        if (!ctx->mem_bytes)
            return cli_fail(ctx, RF_EXIT_USAGE, "--mem: size must be positive");
        return RF_EXIT_OK;
    case OPT_WDT:
        return dtype_opt(ctx, "--weight-dtype", arg, &ctx->w, &ctx->w_given);
    case OPT_ADT:
        return dtype_opt(ctx, "--act-dtype", arg, &ctx->a, &ctx->a_given);
    case OPT_KVDT:
        return dtype_opt(ctx, "--kv-dtype", arg, &ctx->kv, &ctx->kv_given);
    case OPT_GROUP:
        if (cli_i64(ctx, "--group-size", arg, 1, 1 << 24, &g))
            return RF_EXIT_USAGE;
        ctx->group_size = (uint32_t)g;
        return RF_EXIT_OK;
    case OPT_JSON:
    case OPT_CSV:
        if (ctx->format != RF_FMT_TABLE && ctx->format != (id == OPT_JSON ? RF_FMT_JSON : RF_FMT_CSV))
            return cli_fail(ctx, RF_EXIT_USAGE, "--json and --csv: give one output format");
        ctx->format = id == OPT_JSON ? RF_FMT_JSON : RF_FMT_CSV;
        return RF_EXIT_OK;
    case OPT_OUT:
        if (!*arg)
            return cli_fail(ctx, RF_EXIT_USAGE, "--output: empty path");
        ctx->out_path = arg;
        return RF_EXIT_OK;
    default:
        return RF_EXIT_USAGE;
    }
}

int cli_parse(cli_ctx *ctx, int argc, char **argv, const char *usage, const cli_opt *opts,
              cli_opt_fn fn, void *user, int *first_pos)
{
    size_t n_cmd = count_opts(opts), n = 0;
    struct option lo[N_GLOBALS + 64];
    const cli_opt *by_index[N_GLOBALS + 64];
    if (n_cmd > 63)
        return cli_fail(ctx, RF_EXIT_FAIL, "too many options");
    for (size_t i = 0; i < n_cmd; i++, n++) {
        lo[n] = (struct option){opts[i].name, opts[i].has_arg ? required_argument : no_argument,
                                NULL, 1000 + (int)n};
        by_index[n] = &opts[i];
    }
    for (size_t i = 0; i < N_GLOBALS; i++, n++) {
        lo[n] = (struct option){globals[i].name,
                                globals[i].has_arg ? required_argument : no_argument, NULL,
                                1000 + (int)n};
        by_index[n] = &globals[i];
    }
    lo[n] = (struct option){0, 0, 0, 0};

    memset(ctx, 0, sizeof *ctx);
    ctx->cmd = argv[0];
    ctx->w = ctx->a = ctx->kv = rf_dtype_of(RF_BF16);
    opterr = 0;
    optind = 1;
    int c, idx;
    while ((c = getopt_long(argc, argv, ":ho:", lo, &idx)) != -1) {
        int rc;
        if (c == 'h') {
            c = 1000 + (int)(n - 1); /* --help is the last global */
        } else if (c == 'o') {
            if ((rc = global_opt(ctx, OPT_OUT, optarg)))
                return rc;
            continue;
        } else if (c == '?') {
            return cli_fail(ctx, RF_EXIT_USAGE, "unknown option '%s' (see --help)",
                            argv[optind - 1]);
        } else if (c == ':') {
            return cli_fail(ctx, RF_EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
        }
        const cli_opt *o = by_index[c - 1000];
        if (o >= globals && o < globals + N_GLOBALS) {
            if (o->id == OPT_HELP) {
                printf("usage: roofline %s\n\noptions:\n", usage);
                print_opts(opts, n_cmd);
                printf("\nglobal options:\n");
                print_opts(globals, N_GLOBALS);
                return -1;
            }
            rc = global_opt(ctx, o->id, optarg);
        } else {
            rc = fn ? fn(ctx, o->id, optarg, user) : RF_EXIT_USAGE;
        }
        if (rc)
            return rc;
    }
    rf_err e;
    if (ctx->group_size && rf_dtype_set_group(&ctx->w, ctx->group_size, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--group-size: %s", e.msg);
    *first_pos = optind;
    return RF_EXIT_OK;
}

/* Files this run has read (slot 0: the model's config.json, slot 1: a
 * hardware profile). cli_write_file never writes over one of them. One
 * command runs per process, so a file-static list is enough. */
enum { INPUT_MODEL, INPUT_PROFILE, N_INPUTS };
static char read_files[N_INPUTS][4096];

static void note_input(int slot, const char *path)
{
    struct stat st;
    bool folder = stat(path, &st) == 0 && S_ISDIR(st.st_mode); /* a model folder */
    snprintf(read_files[slot], sizeof read_files[slot], folder ? "%s/config.json" : "%s", path);
}

int cli_resolve_model(cli_ctx *ctx, const char *text, rf_model *out)
{
    rf_err e;
    if (!text || !*text)
        return cli_fail(ctx, RF_EXIT_USAGE, "empty model name");
    if (rf_model_preset(text, out, &e) == RF_OK)
        return RF_EXIT_OK;
    /* models: not a preset, so a config.json or a folder holding one; a
     * name that looks like neither keeps the "unknown model" message */
    size_t n = strlen(text);
    if (access(text, F_OK) != 0 && !strchr(text, '/') &&
        !(n > 5 && !strcmp(text + n - 5, ".json")))
        return cli_fail_err(ctx, &e);
    if (rf_model_load(text, out, &e))
        return cli_fail_err(ctx, &e);
    note_input(INPUT_MODEL, text);
    return RF_EXIT_OK;
}

int cli_model_hw_setup(cli_ctx *ctx, int argc, char **argv, int pos, rf_model *m,
                       rf_step_opts *o)
{
    int rc;
    if (argc - pos != 1)
        return cli_fail(ctx, RF_EXIT_USAGE, "expected one MODEL (a preset or a config.json)");
    if ((rc = cli_resolve_model(ctx, argv[pos], m)))
        return rc;
    cli_apply_dtypes(ctx, m, o);
    return cli_resolve_hw(ctx);
}

int cli_model_setup(cli_ctx *ctx, int argc, char **argv, int pos, rf_model *m, rf_step_opts *o,
                    rf_roof *roof)
{
    int rc = cli_model_hw_setup(ctx, argc, argv, pos, m, o);
    return rc ? rc : cli_resolve_roof(ctx, rf_dtype_math(o->w, o->a), roof);
}

/* The math dtype was named by the user (--act-dtype, or --weight-dtype
 * where the math follows the weights, W8A8): no fallback for it. */
static bool math_given(const cli_ctx *ctx, rf_dtype_kind math)
{
    return (ctx->a_given && ctx->a.kind == math) || (ctx->w_given && ctx->w.kind == math);
}

int cli_resolve_roof(cli_ctx *ctx, rf_dtype_kind math, rf_roof *roof)
{
    rf_err e;
    int rc = cli_resolve_hw(ctx);
    if (rc)
        return rc;
    if (ctx->peak_tflops > 0)
        ctx->hw.peak_flops_per_s[rf_hw_peak_kind(math)] = ctx->peak_tflops * 1e12;
    if (rf_hw_roof_for(&ctx->hw, math, math_given(ctx, math), roof, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

int cli_resolve_hw(cli_ctx *ctx)
{
    rf_err e;
    if (ctx->peak_tflops > 0 && ctx->ridge > 0)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--peak and --ridge both set the compute roof (pi = ridge x bw); give one");
    const char *name = ctx->hw_name ? ctx->hw_name : "h100-sxm";
    if (rf_hw_preset(name, &ctx->hw, &e) == RF_OK) {
        snprintf(ctx->hw_origin, sizeof ctx->hw_origin, "preset %s", ctx->hw.name);
    } else if (access(name, F_OK) == 0) {
        /* measure: not a preset but a file: a profile from `roofline measure` */
        rf_hw_profile *p = malloc(sizeof *p);
        if (!p)
            return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        rf_status s = rf_hw_profile_load(name, p, &e);
        if (s == RF_OK && (s = rf_hw_profile_to_hw(p, &ctx->hw, &e)))
            rf_err_prefix(&e, s, "%s", name); /* the figure is the file's */
        if (s == RF_OK)
            note_input(INPUT_PROFILE, name);
        if (s == RF_OK)
            snprintf(ctx->hw_origin, sizeof ctx->hw_origin, "profile %.80s (measured %s)", name,
                     p->date[0] ? p->date : "undated");
        free(p);
        if (s != RF_OK)
            return cli_fail_err(ctx, &e);
    } else {
        return cli_fail_err(ctx, &e);
    }
    if (ctx->bw_tbps > 0)
        ctx->hw.bw_bytes_per_s = ctx->bw_tbps * 1e12;
    if (ctx->mem_bytes)
        ctx->hw.mem_bytes = ctx->mem_bytes;
    if (ctx->ridge > 0)
        ctx->hw.ridge_override = ctx->ridge;
    if (rf_hw_validate(&ctx->hw, &e))
        return cli_fail_err(ctx, &e);
    return RF_EXIT_OK;
}

static void measure_progress(void *user, int done, int total, const char *what)
{
    (void)user;
    fprintf(stderr, "\r  measuring the roof [%2d/%2d] %-40s", done + 1, total, what);
    fflush(stderr);
}

int cli_measured_roof(cli_ctx *ctx, int threads, rf_dtype_kind math, rf_roof *roof)
{
    if (ctx->hw_name)
        return cli_resolve_roof(ctx, math, roof);
    if (ctx->peak_tflops > 0 || ctx->bw_tbps > 0 || ctx->ridge > 0)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--peak, --bw and --ridge adjust a roof given by --hw; without --hw the "
                        "roof is measured now");
    rf_hw_profile *p = malloc(sizeof *p);
    if (!p)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    bool tty = isatty(STDERR_FILENO);
    rf_measure_opts mo = {.threads = threads, .quick = true, .isa = getenv("RF_ISA"),
                          .progress = tty ? measure_progress : NULL};
    rf_err e;
    rf_status s = rf_measure_cpu(&mo, p, &e);
    if (tty)
        fprintf(stderr, "\r%-78s\r", "");
    if (s == RF_OK)
        s = rf_hw_profile_to_hw(p, &ctx->hw, &e);
    if (s == RF_OK)
        s = rf_hw_roof_for(&ctx->hw, math, math_given(ctx, math), roof, &e);
    snprintf(ctx->hw_origin, sizeof ctx->hw_origin,
             "measured now (measure --quick, %d thread%s; give --hw PROFILE for a full one)",
             p->threads, p->threads == 1 ? "" : "s");
    free(p);
    return s == RF_OK ? RF_EXIT_OK : cli_fail_err(ctx, &e);
}

void cli_apply_dtypes(const cli_ctx *ctx, const rf_model *m, rf_step_opts *o)
{
    o->w = ctx->w_given ? ctx->w
           : m && m->has_weight_dtype ? m->weight_dtype
                                      : rf_dtype_of(RF_BF16);
    o->w_all_modules = ctx->w_given; /* models: an override covers every module */
    o->a = !ctx->a_given && m && m->has_act_dtype ? m->act_dtype : ctx->a;
    o->kv = ctx->kv;
}

void cli_assume_roof(const cli_ctx *ctx, rf_report *r, const rf_step_opts *o,
                     const rf_roof *roof)
{
    char w[64], a[64], kv[64], pk[32], bw[32];
    rf_report_assume(r, "dtypes: weights %s, activations %s, KV %s; math %s",
                     rf_dtype_describe(o->w, w, sizeof w), rf_dtype_describe(o->a, a, sizeof a),
                     rf_dtype_describe(o->kv, kv, sizeof kv), rf_dtype_name(roof->math));
    if (roof->math_fallback) {
        const char *asked = rf_dtype_name(roof->math_asked), *used = rf_dtype_name(roof->math);
        bool measured = strncmp(ctx->hw_origin, "preset", 6) != 0;
        rf_report_assume(r, "math %s: %s %s no %s peak, so %s, the fastest float it has that "
                            "holds every %s value, sets the compute roof (--act-dtype %s "
                            "--peak TFLOPS gives a %s roof)",
                         used, measured ? "the profile" : ctx->hw.name,
                         measured ? "measured" : "has", asked, used, asked, asked, asked);
    }
    rf_fmt(roof->peak_flops_per_s, RF_U_FLOP_RATE, pk, sizeof pk);
    rf_fmt(roof->bw_bytes_per_s, RF_U_BW, bw, sizeof bw);
    if (roof->ridge_given)
        rf_report_assume(r,
                         "roof: ridge %.4g FLOP/byte given by --ridge; bandwidth %s (%s), "
                         "compute roof = ridge x bandwidth = %s",
                         roof->ridge, bw, ctx->hw_origin, pk);
    else
        rf_report_assume(r, "roof: %s: %s %s, %s%s%s, ridge %.1f FLOP/byte", ctx->hw_origin, pk,
                         rf_dtype_name(roof->math), bw,
                         ctx->peak_tflops > 0 ? "; peak from --peak" : "",
                         ctx->bw_tbps > 0 ? "; bandwidth from --bw" : "", roof->ridge);
}

/* Bytes an output holds before they go to stdout or the file: large enough
 * that a write is cheap, small enough that memory stays flat. */
#define OUT_FLUSH_BYTES ((size_t)1 << 20)

/* The sink of a cli_out: the atomic file, or stdout. */
static rf_status out_sink(void *user, const char *data, size_t len)
{
    cli_out *o = user;
    rf_status s = RF_OK;
    if (o->file)
        s = rf_file_writer_put(o->file, data, len, &o->err);
    else if (fwrite(data, 1, len, stdout) != len)
        s = rf_err_set(&o->err, RF_EIO, "error writing standard output");
    o->sink_failed = s != RF_OK;
    return s;
}

/* The exit code of an output's failure, with its one-line message. */
static int out_fail(const cli_out *o)
{
    return cli_fail(o->ctx, o->err.status == RF_EINVAL ? RF_EXIT_USAGE : RF_EXIT_IO, "%s",
                    o->err.msg);
}

int cli_out_open(const cli_ctx *ctx, const char *path, cli_out *o)
{
    memset(o, 0, sizeof *o);
    o->ctx = ctx;
    rf_buf_init(&o->buf);
    if (path && strcmp(path, "-")) {
        const char *inputs[N_INPUTS + 1] = {NULL};
        for (size_t i = 0, n = 0; i < N_INPUTS; i++)
            if (read_files[i][0])
                inputs[n++] = read_files[i];
        if (rf_file_writer_new(path, inputs, &o->file, &o->err))
            return out_fail(o);
    }
    rf_buf_set_sink(&o->buf, out_sink, o, OUT_FLUSH_BYTES);
    return RF_EXIT_OK;
}

int cli_out_close(cli_out *o, int rc)
{
    if (rc == RF_EXIT_OK) {
        rf_buf_flush(&o->buf);
        if (o->sink_failed)
            rc = out_fail(o);
        else if (o->buf.failed)
            rc = cli_fail(o->ctx, RF_EXIT_FAIL, "out of memory for the output");
        else if (o->file && rf_file_writer_commit(o->file, &o->err))
            rc = out_fail(o);
    }
    rf_file_writer_free(o->file);
    o->file = NULL;
    rf_buf_free(&o->buf);
    return rc;
}

int cli_write_file(const cli_ctx *ctx, const char *path, const char *data, size_t len)
{
    cli_out o;
    int rc = cli_out_open(ctx, path, &o);
    if (rc)
        return rc;
    rf_buf_put(&o.buf, data, len);
    return cli_out_close(&o, RF_EXIT_OK);
}

int cli_emit(const cli_ctx *ctx, const rf_report *r)
{
    cli_out o;
    rf_err e;
    int rc = cli_out_open(ctx, ctx->out_path, &o);
    if (rc)
        return rc;
    /* a sink failure is the output's to report, in cli_out_close */
    if (rf_report_write(r, ctx->format, &o.buf, &e) && !o.sink_failed)
        rc = cli_fail(ctx, e.status == RF_ENOMEM ? RF_EXIT_FAIL : RF_EXIT_USAGE, "%s", e.msg);
    return cli_out_close(&o, rc);
}

int cli_step_opt(cli_ctx *ctx, int id, const char *arg, rf_step_opts *o)
{
    switch (id) {
    case CLI_O_PHASE:
        if (!strcmp(arg, "decode") || !strcmp(arg, "prefill")) {
            o->phase = arg[0] == 'p' ? RF_PREFILL : RF_DECODE;
            return RF_EXIT_OK;
        }
        return cli_fail(ctx, RF_EXIT_USAGE, "--phase: '%s' is not decode or prefill", arg);
    case CLI_O_BATCH:
        return cli_i64(ctx, "--batch", arg, 1, RF_DIM_MAX, &o->batch);
    case CLI_O_CONTEXT:
        ctx->step_given |= CLI_GIVEN_CONTEXT;
        return cli_i64(ctx, "--context", arg, 0, RF_DIM_MAX, &o->context);
    case CLI_O_TOKENS:
        ctx->step_given |= CLI_GIVEN_TOKENS;
        return cli_i64(ctx, "--tokens", arg, 1, RF_DIM_MAX, &o->tokens);
    case CLI_O_NAIVE:
        o->naive_attn = true;
        return RF_EXIT_OK;
    case CLI_O_CAUSAL:
        o->causal = true;
        return RF_EXIT_OK;
    case CLI_O_FUSED:
        o->fused = true;
        return RF_EXIT_OK;
    case CLI_O_TRAFFIC:
        if (!strcmp(arg, "compulsory") || !strcmp(arg, "full")) {
            o->traffic = arg[0] == 'f' ? RF_TRAFFIC_FULL : RF_TRAFFIC_COMPULSORY;
            return RF_EXIT_OK;
        }
        return cli_fail(ctx, RF_EXIT_USAGE, "--traffic: '%s' is not compulsory or full", arg);
    case CLI_O_FUSE_ELEMENTWISE:
        o->fuse_elementwise = true;
        return RF_EXIT_OK;
    case CLI_O_MOE:
        if (!strcmp(arg, "uniform") || !strcmp(arg, "all")) {
            ctx->step_given |= CLI_GIVEN_MOE;
            o->moe = arg[0] == 'a' ? RF_MOE_ALL : RF_MOE_UNIFORM;
            return RF_EXIT_OK;
        }
        return cli_fail(ctx, RF_EXIT_USAGE, "--moe-experts: '%s' is not uniform or all", arg);
    }
    return CLI_NOT_MINE;
}

void cli_assume_step(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_step *st)
{
    cli_assume_roof(ctx, r, o, &st->roof);
    cli_assume_math(r, m, o, &st->roof);
    cli_assume_phase(r, o);
    cli_assume_model(r, m, o, st);
}

const char *cli_plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void cli_assume_phase(rf_report *r, const rf_step_opts *o)
{
    long long B = (long long)o->batch, s = (long long)o->context, T = (long long)o->tokens;
    if (o->phase == RF_DECODE) {
        rf_report_assume(r, "decode: %lld %s at context %lld, one new token each; linear "
                            "layers run with M = B; lm_head on every sequence",
                         B, cli_plural(B, "sequence", "sequences"), s);
        return;
    }
    char cached[48] = ", nothing cached";
    if (s)
        snprintf(cached, sizeof cached, " after %lld cached", s);
    rf_report_assume(r, "prefill: %lld %s of %lld new %s%s; linear layers run with M = B T; "
                        "lm_head on the last position",
                     B, s ? cli_plural(B, "sequence", "sequences") : cli_plural(B, "prompt", "prompts"),
                     T, cli_plural(T, "token", "tokens"), cached);
}

void cli_assume_attn(rf_report *r, const rf_step_opts *o, bool square)
{
    if (!square) {
        if (o->causal)
            rf_report_assume(r, "attention: --causal changes nothing in decode (the new token "
                                "scores every key before it)");
        return;
    }
    if (!o->causal) {
        rf_report_assume(r, "attention: full S x S, no causal halving (each of q queries scores "
                            "all S keys: F = 4 n_q d_h q S a sequence; --causal counts the "
                            "triangle)");
        return;
    }
    rf_report_assume(r, "attention: causal, each query scores the keys up to itself, diagonal "
                        "included: q (S - q) + q (q + 1) / 2 pairs a sequence for q queries "
                        "against S keys, S (S + 1) / 2 for a fresh prompt (a sliding layer's "
                        "query at most the window); F = 4 n_q d_h pairs; K/V bytes unchanged "
                        "(flash reads each key once)%s",
                     o->naive_attn ? "; naive scores: the full q x S matrix is still written "
                                     "and read, masked, so score bytes are not halved"
                                   : "");
}

void cli_assume_moe(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st)
{
    if (!m->n_experts)
        return;
    long long E = (long long)m->n_experts, k = (long long)m->top_k;
    char touched[160] = "the experts touched and the rows each runs vary by point", n[32], rows[32];
    if (st) { /* as the operator table shows them */
        rf_fmt(st->experts_touched, RF_U_SIG3, n, sizeof n);
        rf_fmt(st->tokens_per_expert, RF_U_SIG3, rows, sizeof rows);
    }
    const char *row = st && st->tokens_per_expert == 1 ? "row" : "rows";
    if (st && o->moe == RF_MOE_ALL)
        snprintf(touched, sizeof touched, "all %lld a MoE layer, each running M k / E = %s %s",
                 E, rows, row);
    else if (st)
        snprintf(touched, sizeof touched,
                 "%s of %lld touched a MoE layer, each running M k / touched = %s %s", n, E,
                 rows, row);
    if (o->moe == RF_MOE_ALL)
        rf_report_assume(r, "MoE: every routed expert streamed (--moe-experts all), top-%lld of "
                            "%lld a token: %s; the weights of untouched experts are read too",
                         k, E, touched);
    else
        rf_report_assume(r, "MoE: uniform routing assumed, top-%lld of %lld a token: "
                            "E (1 - (1 - k/E)^M) experts touched at M tokens; %s; only touched "
                            "experts are streamed, so a small batch reads far less than the "
                            "resident weights",
                         k, E, touched);
    if (st)
        rf_report_assume(r, "expert rows: M = every token-expert pair of a layer (M k), "
                            "'experts' = experts streamed, 'M/expert' = M / experts; "
                            "F = 2 M K N, weights = experts K N b_w, per layer in 'count'");
}

/* What the full traffic model counts (rf_step.h, rf_op.h), line by line. */
static void assume_full(rf_report *r, const rf_model *m, const rf_step_opts *o)
{
    bool gelu = !strncmp(m->family, "gemma", 5);
    rf_report_assume(r, "traffic: full (--traffic full); every kernel of the forward pass: each "
                        "GEMM reads X and W and writes Y; attention reads Q, K, V and writes O; "
                        "step bytes = the sum of every operator's bytes");
    rf_report_assume(r, "traffic full: norms (RMSNorm: F = 4 M H, read x, write y, read the H "
                        "weights), rope on q and k (F = 3, read and write each element; the "
                        "cos/sin table not counted), kv_write (read the new K and V, write them "
                        "to the cache), act (%s x up: F = %d M F_ff, read gate and up, write), "
                        "residual adds (F = M H, two reads, one write)%s, final_norm on the rows "
                        "lm_head reads; not counted: the embedding's output write, the router's "
                        "softmax and top-k, kernel launches",
                     gelu ? "GELU-tanh(gate)" : "SiLU(gate)",
                     gelu ? RF_ACT_GELU_MUL_FLOPS : RF_ACT_SILU_MUL_FLOPS,
                     m->qkv_bias || m->o_bias || m->mlp_bias
                         ? ", biases (F = M N, the N-vector read in the GEMM's epilogue)"
                         : "");
    if (o->naive_attn)
        rf_report_assume(r, "naive attention: qk writes each head's q x S scores, softmax reads "
                            "and writes them (F = 5 a score), pv reads them: 4 B n_q q S b_a "
                            "bytes a layer, with the K read in qk and the V read in pv");
    if (o->fuse_elementwise)
        rf_report_assume(r, "--fuse-elementwise: each norm takes x from the residual add before "
                            "it and hands y to the next GEMM's read: a norm reads only its "
                            "weights (2 M H b_a less than unfused)");
}

void cli_assume_model(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st)
{
    if (o->traffic == RF_TRAFFIC_FULL) {
        assume_full(r, m, o);
        cli_assume_attn(r, o, o->phase == RF_PREFILL);
        cli_assume_moe(r, m, o, st);
        cli_assume_arch(r, m, o);
        return;
    }
    rf_report_assume(r,
                     "traffic: compulsory; weights read once per step, K/V read once, each "
                     "GEMM reads X and writes Y; step bytes = weights + KV%s; norms, RoPE, "
                     "biases and KV writes not counted",
                     o->naive_attn ? " + attention scores" : "");
    if (o->naive_attn)
        rf_report_assume(r, "naive attention: + 2 n_q q S b_a bytes a sequence and layer (scores "
                            "written by QK^T, read by softmax.V)");
    cli_assume_attn(r, o, o->phase == RF_PREFILL);
    cli_assume_moe(r, m, o, st);
    cli_assume_arch(r, m, o);
}

void cli_expert_cols(rf_report *r, bool moe)
{
    if (!moe)
        return;
    rf_report_col(r, "experts_touched", "experts", RF_U_SIG3);
    rf_report_col(r, "m_per_expert", "M/expert", RF_U_SIG3);
}

void cli_expert_cells(rf_report *r, const rf_op *op, bool moe)
{
    if (!moe)
        return;
    if (op->experts > 0) {
        rf_report_cell_num(r, op->experts);
        rf_report_cell_num(r, op->m_per_expert);
    } else {
        rf_report_cell_null(r, "-");
        rf_report_cell_null(r, "-");
    }
}

char *cli_weights_text(const rf_model *m, const rf_step_opts *o, char *out, size_t cap)
{
    char kept[160] = "", w[64], u[64];
    rf_dtype_describe(o->w, w, sizeof w);
    if (!m || !m->unquantized_modules || o->w_all_modules) {
        snprintf(out, cap, "%s", w);
        return out;
    }
    size_t used = 0;
    for (int i = 0; i < RF_MOD_COUNT && used < sizeof kept; i++)
        if (m->unquantized_modules & RF_MOD_BIT(i))
            used += (size_t)snprintf(kept + used, sizeof kept - used, "%s%s", used ? ", " : "",
                                     rf_module_name((rf_module)i));
    snprintf(out, cap, "%s, except %s in %s", w, kept,
             rf_dtype_describe(m->unquantized_dtype, u, sizeof u));
    return out;
}

void cli_assume_math(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_roof *roof)
{
    /* one roof for the whole step: only an 8-bit math roof lifts an
     * operator above the peak its own dtypes would run at */
    rf_dtype_kind math = roof->math;
    rf_param_counts p;
    if (!(rf_dtype_is_fp8(math) || math == RF_INT8) || rf_model_params(m, &p, NULL))
        return;
    char off[256] = "", dt[64];
    size_t used = 0;
    for (int i = 0; i < RF_MOD_COUNT && used < sizeof off; i++) {
        rf_dtype w = rf_model_module_dtype(m, (rf_module)i, o->w, o->w_all_modules);
        if (i == RF_MOD_EMBED || !p.by_module[i] || rf_dtype_math(w, o->a) == math)
            continue; /* the embedding is a gather: no FLOPs to place */
        used += (size_t)snprintf(off + used, sizeof off - used, "%s%s (%s weights)",
                                 used ? ", " : "", rf_module_name((rf_module)i),
                                 rf_dtype_describe(w, dt, sizeof dt));
    }
    if (o->kv.kind != math && used < sizeof off)
        used += (size_t)snprintf(off + used, sizeof off - used, "%sattention scores (%s KV)",
                                 used ? ", " : "", rf_dtype_name(o->kv.kind));
    if (used)
        rf_report_assume(r, "math: every operator is placed on the %s roof, %s too, though "
                            "they do not run %s x %s: where compute-bound, their floors are understated",
                         rf_dtype_name(math), off, rf_dtype_name(math), rf_dtype_name(math));
}

void cli_assume_arch(rf_report *r, const rf_model *m, const rf_step_opts *o)
{
    if (m->unquantized_modules && !o->w_all_modules) {
        char w[288];
        rf_report_assume(r, "quantized checkpoint: weights %s (quantization_config; "
                            "--weight-dtype overrides every module)",
                         cli_weights_text(m, o, w, sizeof w));
    }
    if (m->kv_lora_rank)
        rf_report_assume(r,
                         "MLA: cache holds kv_lora_rank + rope = %lld elements a token and layer; "
                         "decode absorbs the up-projections: F = 2 n_q S (2 r + rope), "
                         "Q = S (r + rope) b_kv a sequence, kv_b_proj read once as a GEMM; "
                         "prefill expands the latent of all B (s + T) keys with kv_b_proj and "
                         "runs multi-head attention, F = 2 n_q T S (nope + rope + v)",
                         (long long)(m->kv_lora_rank + m->qk_rope_dim));
    if (m->window && rf_model_sliding_layers(m))
        rf_report_assume(r, "sliding window: %lld of %lld layers keep at most %lld positions "
                            "of KV; each query attends to at most the window, so T prefill "
                            "queries together read min(S, window + T - 1) positions",
                         (long long)rf_model_sliding_layers(m), (long long)m->layers,
                         (long long)m->window);
    if (m->notes[0])
        rf_report_assume(r, "%s", m->notes);
}

int cli_budget_opt(cli_ctx *ctx, int id, const char *arg, cli_budget *b)
{
    rf_err e;
    switch (id) {
    case CLI_O_UTIL:
        return cli_f64(ctx, "--util", arg, 1e-6, 1.0, &b->util);
    case CLI_O_RESERVE:
        if (rf_parse_size(arg, &b->reserve_bytes, &e))
            return cli_fail(ctx, RF_EXIT_USAGE, "--reserve: %s", e.msg);
        return RF_EXIT_OK;
    }
    return CLI_NOT_MINE;
}

const char *cli_fit_text(const rf_fit *f, char *buf, size_t cap)
{
    char need[32], budget[32], more[32];
    rf_fmt((double)f->needed_bytes, RF_U_BYTES_BIN, need, sizeof need);
    rf_fmt(f->budget_bytes, RF_U_BYTES_BIN, budget, sizeof budget);
    rf_fmt((double)f->needed_bytes - f->budget_bytes, RF_U_BYTES_BIN, more, sizeof more);
    if (f->fits)
        snprintf(buf, cap, "fits: %s of the %s for weights + KV", need, budget);
    else
        snprintf(buf, cap, "does not fit: needs %s, %s more than the %s for weights + KV", need,
                 more, budget);
    return buf;
}

void cli_assume_fit(rf_report *r, const rf_fit *f, const cli_ctx *ctx)
{
    char mem[32], reserve[32], budget[32];
    rf_fmt((double)f->mem_bytes, RF_U_BYTES_BIN, mem, sizeof mem);
    rf_fmt((double)f->reserve_bytes, RF_U_BYTES_BIN, reserve, sizeof reserve);
    rf_fmt(f->budget_bytes, RF_U_BYTES_BIN, budget, sizeof budget);
    rf_report_assume(r, "memory fit: resident weights + B x KV of the positions each sequence "
                        "holds, against util x memory - reserve = %.2f x %s%s - %s = %s "
                        "(capacity's pool rule; --util, --reserve, --mem)",
                     f->util, mem, ctx->mem_bytes ? " (--mem)" : "", reserve, budget);
}

rf_status cli_fit(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                  const cli_budget *b, rf_fit *out)
{
    rf_fit f;
    rf_err e;
    char text[160];
    rf_status s = rf_step_fit(m, o, ctx->hw.mem_bytes, b->util, b->reserve_bytes, &f, &e);
    if (s) {
        rf_report_null(r, "fits", "memory", ctx->hw.mem_bytes ? e.msg
                                                    : "- (no memory size: give --mem)");
        rf_report_null(r, "memory_needed_bytes", "memory needed (weights + KV)", "-");
    } else {
        rf_report_bool(r, "fits", "memory", f.fits, cli_fit_text(&f, text, sizeof text));
        rf_report_int(r, "memory_needed_bytes", "memory needed (weights + KV)", f.needed_bytes,
                      RF_U_BYTES_BIN);
    }
    if (out && !s)
        *out = f;
    return s;
}

int cli_step_defaults(cli_ctx *ctx, const rf_model *m, rf_step_opts *o, bool figure)
{
    if (!figure && o->phase == RF_DECODE && (ctx->step_given & CLI_GIVEN_TOKENS))
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--tokens: new tokens are a prefill's (--phase prefill); a decode step "
                        "makes one a sequence");
    if (o->fuse_elementwise && o->traffic != RF_TRAFFIC_FULL)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--fuse-elementwise: fuses the full traffic model's norms and residuals; "
                        "give --traffic full");
    if ((ctx->step_given & CLI_GIVEN_MOE) && !m->n_experts)
        return cli_fail(ctx, RF_EXIT_USAGE, "--moe-experts: %s has no routed experts", m->name);
    if (!(ctx->step_given & CLI_GIVEN_CONTEXT))
        o->context = figure || o->phase == RF_DECODE ? cli_default_context(ctx, m) : 0;
    if (!(ctx->step_given & CLI_GIVEN_TOKENS)) {
        /* a prefill's s + T within the model's positions (a figure's
         * prefill caches nothing) */
        int64_t cached = figure ? 0 : o->context, max = m->max_context;
        o->tokens = CLI_DEFAULT_TOKENS;
        if ((figure || o->phase == RF_PREFILL) && max > cached && cached + o->tokens > max) {
            o->tokens = max - cached;
            ctx->step_given |= CLI_CLAMPED_TOKENS;
        }
    }
    return RF_EXIT_OK;
}

int64_t cli_default_context(cli_ctx *ctx, const rf_model *m)
{
    if (m->max_context > 0 && m->max_context < CLI_DEFAULT_CONTEXT) {
        ctx->step_given |= CLI_CLAMPED_CONTEXT;
        return m->max_context;
    }
    return CLI_DEFAULT_CONTEXT;
}

static void context_lines(const cli_ctx *ctx, rf_report *r, const rf_model *m,
                          int64_t positions, bool beyond)
{
    long long max = (long long)m->max_context;
    if (ctx->step_given & CLI_CLAMPED_CONTEXT)
        rf_report_assume(r, "context: the default %d cut to %s's max_position_embeddings (%lld)",
                         CLI_DEFAULT_CONTEXT, m->name, max);
    if (ctx->step_given & CLI_CLAMPED_TOKENS)
        rf_report_assume(r, "prefill tokens: the default %d cut so that each sequence stays "
                            "within %s's max_position_embeddings (%lld)",
                         CLI_DEFAULT_TOKENS, m->name, max);
    if (beyond)
        rf_report_assume(r, "WARNING: %lld positions a sequence are beyond %s's "
                            "max_position_embeddings (%lld): the model was not built for that "
                            "context; the figures are computed as asked",
                         (long long)positions, m->name, max);
}

void cli_context_check(const cli_ctx *ctx, rf_report *r, const rf_model *m, int64_t positions,
                       unsigned what)
{
    long long max = (long long)m->max_context;
    bool beyond = rf_model_context_beyond(m, positions);
    char shown[96];
    if (what & CLI_CTX_LINES)
        context_lines(ctx, r, m, positions, beyond);
    if (!(what & CLI_CTX_KEY))
        return;
    if (!max) {
        rf_report_null(r, "context_beyond_model_max", "past the model's context",
                       "unknown (no max_position_embeddings)");
        return;
    }
    snprintf(shown, sizeof shown, "%s: %lld positions of its %lld", beyond ? "yes" : "no",
             (long long)positions, max);
    rf_report_bool(r, "context_beyond_model_max", "past the model's context", beyond,
                   shown);
}

int cli_step_fail(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                  const rf_roof *roof, const rf_err *e, const char *const names[3])
{
    static const char *const typed[3] = {"--batch", "--context", "--tokens"};
    unsigned blame = e->status == RF_ERANGE ? rf_step_range_blame(m, o, roof) : 0;
    if (!blame)
        return cli_fail_err(ctx, e);
    const char *const *name = names ? names : typed;
    const int64_t value[3] = {o->batch, o->context, o->tokens};
    char who[192] = "";
    size_t used = 0;
    int n = 0;
    for (int i = 0; i < 3 && used < sizeof who; i++)
        if (blame & (1u << i))
            used += (size_t)snprintf(who + used, sizeof who - used, "%s%s %lld",
                                     n++ ? " with " : "", name[i], (long long)value[i]);
    return cli_fail(ctx, RF_EXIT_USAGE, "%s: too large%s for %s (%s)", who,
                    n > 1 ? " together" : "", m->name, e->msg);
}
