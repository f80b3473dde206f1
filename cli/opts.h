/* opts.h - parsing (cli_parse and its option groups), the number
 * parsers that name their option, and the one-line error (opts.c). */
#ifndef RF_CLI_OPTS_H
#define RF_CLI_OPTS_H

#include "core.h"
#include <stdint.h>

/* Parse argv: global options, the command's option groups (each option
 * passed to its group's handler), and positional arguments (left in
 * argv[*first_pos..argc-1]); groups may be NULL (none).
 * `--help` prints usage (usage line + options) to stdout and returns -1
 * after which the command returns RF_EXIT_OK. Errors print one line and
 * return RF_EXIT_USAGE; success returns RF_EXIT_OK. The handler returns
 * RF_EXIT_OK or an exit code after printing its one-line error via cli_fail.
 * hw/dtype overrides are not applied yet: call cli_resolve_hw. */
int cli_parse(cli_ctx *ctx, const cli_io *io, int argc, char **argv, const char *usage,
              const cli_opt_group *groups, int *first_pos);

/* Print "roofline <cmd>: <message>" on stderr and return code. */
int cli_fail(const cli_ctx *ctx, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Print an rf_err the same way, mapping its status to an exit code. */
int cli_fail_err(const cli_ctx *ctx, const rf_err *err);
int cli_exit_for(rf_status s);

/* The global options as bits, for cli_refuse_unused. */
enum {
    CLI_G_HW = 1,
    CLI_G_RIDGE = 2,
    CLI_G_PEAK = 4,
    CLI_G_BW = 8,
    CLI_G_MEM = 16,
    CLI_G_WDT = 32,
    CLI_G_ADT = 64,
    CLI_G_KVDT = 128,
    CLI_G_GROUP = 256,
    CLI_G_FAMILY = 512, /* --family: refused by the commands that read no MODEL */
    CLI_G_ROOF = CLI_G_HW | CLI_G_RIDGE | CLI_G_PEAK | CLI_G_BW | CLI_G_MEM,
    CLI_G_DTYPES = CLI_G_WDT | CLI_G_ADT | CLI_G_KVDT | CLI_G_GROUP
};
/* A global option that does nothing in this command is refused, not
 * ignored: the first of `unused` the user gave prints "--kv-dtype: why"
 * and returns RF_EXIT_USAGE; none given returns RF_EXIT_OK. */
int cli_refuse_unused(const cli_ctx *ctx, unsigned unused, const char *why);

/* Parse helpers that print "roofline <cmd>: --opt: <why>" and return
 * RF_EXIT_USAGE on failure. */
int cli_i64(const cli_ctx *ctx, const char *opt, const char *text, int64_t lo, int64_t hi,
            int64_t *out);
int cli_f64(const cli_ctx *ctx, const char *opt, const char *text, double lo, double hi,
            double *out);
int cli_range(const cli_ctx *ctx, const char *opt, const char *text, int64_t hi, int64_t **vals,
              size_t *n);

#endif
