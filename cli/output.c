/* output.c - where a report's bytes go: the command's output stream
 * (ctx->io->out) or an atomic file, written as they are made. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assume.h"
#include "cli.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_file.h"

/* Bytes an output holds before they go to the stream or the file: large enough
 * that a write is cheap, small enough that memory stays flat. */
#define OUT_FLUSH_BYTES ((size_t)1 << 20)

/* The sink of a cli_out: the atomic file, or the command's output stream. */
static rf_status out_sink(void *user, const char *data, size_t len)
{
    cli_out *o = user;
    rf_status s = RF_OK;
    if (o->file)
        s = rf_file_writer_put(o->file, data, len, &o->err);
    else if (fwrite(data, 1, len, o->ctx->io->out) != len)
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
        const char *inputs[CLI_N_INPUTS + 1];
        cli_inputs(ctx, inputs);
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

int cli_emit(const cli_ctx *ctx, rf_report *r)
{
    cli_out o;
    rf_err e;
    int rc = cli_out_open(ctx, ctx->out_path, &o);
    if (rc)
        return rc;
    cli_assume_family(ctx, r);
    /* a sink failure is the output's to report, in cli_out_close */
    if (rf_report_write(r, ctx->format, &o.buf, &e) && !o.sink_failed)
        rc = cli_fail(ctx, e.status == RF_ENOMEM ? RF_EXIT_FAIL : RF_EXIT_USAGE, "%s", e.msg);
    return cli_out_close(&o, rc);
}

/* The file path names, as "real folder/name" (its target, for a symbolic
 * link that resolves), into out; path itself when its folder does not
 * resolve (cli_check_output refuses that one). */
static void canonical(const char *path, char *out, size_t cap)
{
    char real[PATH_MAX];
    if (realpath(path, real)) {
        snprintf(out, cap, "%s", real);
        return;
    }
    char *d = strdup(path), *b = strdup(path);
    if (d && b && realpath(dirname(d), real))
        snprintf(out, cap, "%s/%s", real, basename(b));
    else
        snprintf(out, cap, "%s", path);
    free(d);
    free(b);
}

int cli_outputs_distinct(const cli_ctx *ctx, size_t n, const char *const *names,
                         const char *const *paths)
{
    for (size_t i = 0; i < n; i++) {
        if (!paths[i] || !strcmp(paths[i], "-"))
            continue;
        if (!paths[i][0])
            return cli_fail(ctx, RF_EXIT_USAGE, "%s: empty file name", names[i]);
        char a[PATH_MAX + 256];
        canonical(paths[i], a, sizeof a);
        for (size_t j = 0; j < i; j++) {
            if (!paths[j] || !paths[j][0] || !strcmp(paths[j], "-"))
                continue;
            char b[PATH_MAX + 256];
            canonical(paths[j], b, sizeof b);
            if (!strcmp(paths[i], paths[j]) || !strcmp(a, b))
                return cli_fail(ctx, RF_EXIT_USAGE,
                                "%s and %s name the same file '%s': give each its own", names[j],
                                names[i], paths[i]);
        }
    }
    return RF_EXIT_OK;
}
