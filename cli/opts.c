/* opts.c - parsing: the global options, a command's option table through
 * the scanner of scan.c (getopt_long's results, no process-wide state),
 * --help, the number parsers that name their option, and the one-line
 * error every command prints. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "scan.h"
#include "roofline/rf_parse.h"
#include "roofline/rf_sim.h"

enum {
    OPT_HW = 1,
    OPT_RIDGE,
    OPT_PEAK,
    OPT_BW,
    OPT_MEM,
    OPT_WDT,
    OPT_ADT,
    OPT_KVDT,
    OPT_YDT,
    OPT_GROUP,
    OPT_FAMILY,
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
    {"out-dtype", 1, OPT_YDT, "DT",
     "dtype GEMMs write (default the activations', bf16 after an fp8/int8/fp4 input)"},
    {"group-size", 1, OPT_GROUP, "N", "quantization group of int weights (scales counted)"},
    {"family", 1, OPT_FAMILY, "NAME", "read MODEL's config.json as this family (model_type)"},
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
    fprintf(ctx->io->err, "roofline %s: %s\n", ctx->cmd ? ctx->cmd : "", msg);
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

int cli_refuse_unused(const cli_ctx *ctx, unsigned unused, const char *why)
{
    const struct {
        unsigned bit;
        const char *name;
        bool given;
    } g[] = {
        {CLI_G_HW, "--hw", ctx->hw_name != NULL},
        {CLI_G_RIDGE, "--ridge", ctx->ridge > 0},
        {CLI_G_PEAK, "--peak", ctx->peak_tflops > 0},
        {CLI_G_BW, "--bw", ctx->bw_tbps > 0},
        {CLI_G_MEM, "--mem", ctx->mem_bytes != 0},
        {CLI_G_WDT, "--weight-dtype", ctx->w_given},
        {CLI_G_ADT, "--act-dtype", ctx->a_given},
        {CLI_G_KVDT, "--kv-dtype", ctx->kv_given},
        {CLI_G_GROUP, "--group-size", ctx->group_size != 0},
        {CLI_G_FAMILY, "--family", ctx->family != NULL},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if ((unused & g[i].bit) && g[i].given)
            return cli_fail(ctx, RF_EXIT_USAGE, "%s: %s", g[i].name, why);
    return RF_EXIT_OK;
}

static void print_opts(FILE *f, const cli_opt *o, size_t n)
{
    for (size_t i = 0; i < n && o[i].name; i++) {
        char left[64], letter[8] = "";
        if (o[i].letter)
            snprintf(letter, sizeof letter, "-%c, ", o[i].letter);
        snprintf(left, sizeof left, "%s--%s%s%s", letter, o[i].name, o[i].arg ? " " : "",
                 o[i].arg ? o[i].arg : "");
        fprintf(f, "  %-26s %s\n", left, o[i].help);
    }
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
    case OPT_YDT:
        return dtype_opt(ctx, "--out-dtype", arg, &ctx->y, &ctx->y_given);
    case OPT_GROUP:
        if (cli_i64(ctx, "--group-size", arg, 1, 1 << 24, &g))
            return RF_EXIT_USAGE;
        ctx->group_size = (uint32_t)g;
        return RF_EXIT_OK;
    case OPT_FAMILY: /* the reader refuses a family it does not know */
        if (!*arg)
            return cli_fail(ctx, RF_EXIT_USAGE, "--family: empty name");
        ctx->family = arg;
        return RF_EXIT_OK;
    case OPT_JSON:
    case OPT_CSV:
        if (ctx->format != RF_FMT_TABLE &&
            ctx->format != (id == OPT_JSON ? RF_FMT_JSON : RF_FMT_CSV))
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

/* --output X where the command counts output tokens with --output-tokens
 * and X reads as a count or a length distribution (rf_sim_lengths_parse's,
 * or any run of digits, or a distribution's name and colon): the old
 * spelling of the count, refused naming the new one. -o X stays a file. */
static int old_output_tokens(const cli_ctx *ctx, const cli_opt_group *groups, const char *arg)
{
    bool counts = false;
    for (const cli_opt_group *g = groups; g && g->opts; g++)
        for (const cli_opt *o = g->opts; o->name; o++)
            counts |= !strcmp(o->name, "output-tokens");
    rf_sim_lengths l;
    if (!counts || !*arg)
        return RF_EXIT_OK;
    bool like = strspn(arg, "0123456789") == strlen(arg) ||
                !rf_sim_lengths_parse(arg, "output", &l, NULL) || !strncmp(arg, "uniform:", 8) ||
                !strncmp(arg, "normal:", 7) || !strncmp(arg, "lognormal:", 10);
    if (!like)
        return RF_EXIT_OK;
    return cli_fail(ctx, RF_EXIT_USAGE,
                    "--output %s: --output is the file to write; the output "
                    "token count is --output-tokens (-n)",
                    arg);
}

/* The command's letters: each a letter, none taken twice nor -h or -o. */
static int check_letters(const cli_ctx *ctx, const cli_scan *s)
{
    const cli_opt *o = cli_scan_bad_letter(s);
    return o ? cli_fail(ctx, RF_EXIT_FAIL, "option table: -%c of --%s taken or not a letter",
                        o->letter, o->name)
             : RF_EXIT_OK;
}

static const cli_opt *global_of(int id)
{
    for (size_t i = 0; i < N_GLOBALS; i++)
        if (globals[i].id == id)
            return &globals[i];
    return NULL;
}

/* One option found: its group's handler called, --help printed (-1), or
 * a global set. */
static int take_opt(cli_ctx *ctx, const cli_scanned *f, const char *usage,
                    const cli_opt_group *groups)
{
    const cli_opt *o = f->opt;
    if (f->group)
        return f->group->fn ? f->group->fn(ctx, o->id, f->value, f->group->user) : RF_EXIT_USAGE;
    if (o->id == OPT_HELP) {
        fprintf(ctx->io->out, "usage: roofline %s\n\noptions:\n", usage);
        for (const cli_opt_group *g = groups; g && g->opts; g++)
            print_opts(ctx->io->out, g->opts, cli_opts_count(g->opts));
        fprintf(ctx->io->out, "\nglobal options:\n");
        print_opts(ctx->io->out, globals, N_GLOBALS);
        return -1;
    }
    /* --output X may be the old token count; -o X is always the file */
    int rc = o->id == OPT_OUT && !f->letter ? old_output_tokens(ctx, groups, f->value) : RF_EXIT_OK;
    return rc ? rc : global_opt(ctx, o->id, f->value);
}

int cli_parse(cli_ctx *ctx, const cli_io *io, int argc, char **argv, const char *usage,
              const cli_opt_group *groups, int *first_pos)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->io = io;
    ctx->cmd = argv[0];
    ctx->w = ctx->a = ctx->kv = ctx->y = rf_dtype_of(RF_BF16);
    cli_scan s = {.argv = argv,
                  .argc = argc,
                  .next = 1,
                  .opts_end = 1,
                  .groups = groups,
                  .globals = globals,
                  .n_globals = N_GLOBALS,
                  .help = global_of(OPT_HELP),
                  .output = global_of(OPT_OUT)};
    int rc = check_letters(ctx, &s);
    cli_scanned f;
    cli_scan_kind k;
    while (!rc && (k = cli_scan_next(&s, &f)) != CLI_SCAN_END) {
        if (k == CLI_SCAN_UNKNOWN)
            return cli_fail(ctx, RF_EXIT_USAGE, "unknown option '%s' (see --help)", f.typed);
        if (k == CLI_SCAN_NO_VALUE && f.letter)
            return cli_fail(ctx, RF_EXIT_USAGE, "option '-%c' needs a value", f.letter);
        if (k == CLI_SCAN_NO_VALUE)
            return cli_fail(ctx, RF_EXIT_USAGE, "option '--%s' needs a value", f.opt->name);
        rc = take_opt(ctx, &f, usage, groups);
    }
    if (rc)
        return rc;
    rf_err e;
    if (ctx->group_size && rf_dtype_set_group(&ctx->w, ctx->group_size, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--group-size: %s", e.msg);
    *first_pos = s.opts_end;
    return RF_EXIT_OK;
}
