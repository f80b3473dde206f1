/* output.h - a report or bytes to the command's out stream or an
 * atomic file (output.c). */
#ifndef RF_CLI_OUTPUT_H
#define RF_CLI_OUTPUT_H

#include "core.h"
#include <stdbool.h>
#include <stddef.h>
#include "roofline/rf_file.h"
#include "roofline/rf_report.h"

/* Render r in ctx->format to stdout or ctx->out_path (written to a
 * temporary file in the same folder, then renamed), after
 * cli_assume_family. Frees nothing. */
int cli_emit(const cli_ctx *ctx, rf_report *r);

/* Write bytes to path atomically (temp + rename); "-" means stdout. */
int cli_write_file(const cli_ctx *ctx, const char *path, const char *data, size_t len);

/* An output written as it is made, so memory stays flat however large it
 * is: bytes put into buf reach stdout ("-" or NULL path) or an atomic file
 * (a temporary beside path, renamed over it at the end) about every MiB.
 * cli_out_open refuses a bad destination now (printing the error);
 * cli_out_close(o, rc) with rc 0 writes the rest and commits the file (its
 * failure is printed and returned); with rc != 0 it drops the file, leaving
 * the old one. Either way it frees o and returns the exit code. A sweep
 * watches buf.failed to stop early when the output cannot take more. */
typedef struct cli_out {
    rf_buf buf; /* write here: rf_buf_put, a writer, rf_rows     */
    const cli_ctx *ctx;
    rf_file_writer *file; /* NULL: standard output                         */
    rf_err err;           /* why the output failed                         */
    bool sink_failed;
} cli_out;

int cli_out_open(const cli_ctx *ctx, const char *path, cli_out *o);
int cli_out_close(cli_out *o, int rc);

/* n outputs of one run (names[i] the option, paths[i] its file; NULL or
 * "-" skipped): an empty path is refused naming its option, and two that
 * are the same file (the same text, or the same folder and name once
 * symbolic links are followed) are refused naming both (output.c). */
int cli_outputs_distinct(const cli_ctx *ctx, size_t n, const char *const *names,
                         const char *const *paths);

#endif
