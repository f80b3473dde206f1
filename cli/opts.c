/* opts.c - parsing: the global options, a command's option table through
 * getopt_long, --help, the number parsers that name their option, and the
 * one-line error every command prints. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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
    fprintf(ctx && ctx->io ? ctx->io->err : stderr, "roofline %s: %s\n",
            ctx && ctx->cmd ? ctx->cmd : "", msg);
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

/* --output X where the command counts output tokens with --output-tokens
 * and X reads as a count or a length distribution (rf_sim_lengths_parse's,
 * or any run of digits, or a distribution's name and colon): the old
 * spelling of the count, refused naming the new one. -o X stays a file. */
static int old_output_tokens(const cli_ctx *ctx, const cli_opt *const *opts, size_t n_cmd,
                             const char *arg)
{
    bool counts = false;
    for (size_t i = 0; i < n_cmd; i++)
        counts |= !strcmp(opts[i]->name, "output-tokens");
    rf_sim_lengths l;
    if (!counts || !*arg)
        return RF_EXIT_OK;
    bool like = strspn(arg, "0123456789") == strlen(arg) ||
                !rf_sim_lengths_parse(arg, "output", &l, NULL) ||
                !strncmp(arg, "uniform:", 8) || !strncmp(arg, "normal:", 7) ||
                !strncmp(arg, "lognormal:", 10);
    if (!like)
        return RF_EXIT_OK;
    return cli_fail(ctx, RF_EXIT_USAGE, "--output %s: --output is the file to write; the output "
                                        "token count is --output-tokens (-n)",
                    arg);
}

int cli_parse(cli_ctx *ctx, const cli_io *io, int argc, char **argv, const char *usage,
              const cli_opt_group *groups, int *first_pos)
{
    size_t n_cmd = 0, n = 0;
    struct option lo[N_GLOBALS + 64];
    const cli_opt *by_index[N_GLOBALS + 64];
    const cli_opt_group *group_of[64]; /* the command's options' groups */
    /* ':' (a missing value reported as such), -h, -o, then the command's
     * letters, each with ':' when it takes a value. */
    char shorts[4 + 2 * 64] = ":ho:";
    size_t ns = strlen(shorts);
    for (const cli_opt_group *g = groups; g && g->opts; g++) {
        size_t k = count_opts(g->opts);
        if (n_cmd + k > 63)
            return cli_fail(ctx, RF_EXIT_FAIL, "too many options");
        for (size_t i = 0; i < k; i++, n_cmd++) {
            by_index[n_cmd] = &g->opts[i];
            group_of[n_cmd] = g;
        }
    }
    for (size_t i = 0; i < n_cmd; i++, n++) {
        const cli_opt *o = by_index[i];
        lo[n] = (struct option){o->name, o->has_arg ? required_argument : no_argument, NULL,
                                1000 + (int)n};
        char c = o->letter;
        if (!c)
            continue;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) || strchr(shorts, c))
            return cli_fail(ctx, RF_EXIT_FAIL, "option table: -%c of --%s taken or not a letter",
                            c, o->name);
        shorts[ns++] = c;
        if (o->has_arg)
            shorts[ns++] = ':';
        shorts[ns] = '\0';
    }
    for (size_t i = 0; i < N_GLOBALS; i++, n++) {
        lo[n] = (struct option){globals[i].name,
                                globals[i].has_arg ? required_argument : no_argument, NULL,
                                1000 + (int)n};
        by_index[n] = &globals[i];
    }
    lo[n] = (struct option){0, 0, 0, 0};

    memset(ctx, 0, sizeof *ctx);
    ctx->io = io;
    ctx->cmd = argv[0];
    ctx->w = ctx->a = ctx->kv = ctx->y = rf_dtype_of(RF_BF16);
    opterr = 0;
    optind = 0; /* 0, not 1: glibc and musl reset all their scanning state */
    int c, idx;
    while ((c = getopt_long(argc, argv, shorts, lo, &idx)) != -1) {
        int rc;
        if (c == 'h') {
            c = 1000 + (int)(n - 1); /* --help is the last global */
        } else if (c == 'o') {
            if ((rc = global_opt(ctx, OPT_OUT, optarg)))
                return rc;
            continue;
        } else if (c > 0 && c < 1000 && c != '?' && c != ':') {
            for (size_t i = 0; i < n_cmd; i++) /* a command's letter, in shorts */
                if (by_index[i]->letter == c)
                    c = 1000 + (int)i;
        } else if (c == '?') {
            return cli_fail(ctx, RF_EXIT_USAGE, "unknown option '%s' (see --help)",
                            argv[optind - 1]);
        } else if (c == ':') {
            /* optopt, not argv[optind - 1]: glibc and musl (emscripten's) set it
             * to the option's letter or long option's value, and permute argv
             * differently (musl's optind - 1 is past the end after a letter) */
            char name[80];
            if (optopt >= 1000 && optopt < 1000 + (int)n)
                snprintf(name, sizeof name, "--%s", by_index[optopt - 1000]->name);
            else if (optopt > 0 && optopt < 128)
                snprintf(name, sizeof name, "-%c", optopt);
            else
                snprintf(name, sizeof name, "%s", argv[argc - 1]);
            return cli_fail(ctx, RF_EXIT_USAGE, "option '%s' needs a value", name);
        }
        const cli_opt *o = by_index[c - 1000];
        if (o >= globals && o < globals + N_GLOBALS) {
            if (o->id == OPT_HELP) {
                fprintf(io->out, "usage: roofline %s\n\noptions:\n", usage);
                for (const cli_opt_group *g = groups; g && g->opts; g++)
                    print_opts(io->out, g->opts, count_opts(g->opts));
                fprintf(io->out, "\nglobal options:\n");
                print_opts(io->out, globals, N_GLOBALS);
                return -1;
            }
            rc = o->id == OPT_OUT ? old_output_tokens(ctx, by_index, n_cmd, optarg) : RF_EXIT_OK;
            if (!rc)
                rc = global_opt(ctx, o->id, optarg);
        } else { /* the handler of the option's own group, with its state */
            const cli_opt_group *g = group_of[c - 1000];
            rc = g->fn ? g->fn(ctx, o->id, optarg, g->user) : RF_EXIT_USAGE;
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
