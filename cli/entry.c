/* entry.c - the subcommand table and the two ways in: rf_cli_main, which
 * writes to the process's streams (the binary), and rf_cli_run, which
 * captures them in memory. Each command lives in cmd_<name>.c. */
#define _GNU_SOURCE /* open_memstream's declaration on glibc; fileno, strdup */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rf_cli.h"

#ifndef RF_VERSION
#define RF_VERSION "0.0.0"
#endif

typedef struct command {
    const char *name;
    int (*fn)(const cli_io *io, int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"gemm", cmd_gemm, "one GEMM: FLOPs, bytes, intensity, regime, floor"},
    {"attn", cmd_attn, "one attention layer, decode or prefill, flash or naive"},
    {"ops", cmd_ops, "per-operator intensities of a model (the course lesson's table)"},
    {"step", cmd_step, "a whole prefill or decode step: operators and totals"},
    {"generate", cmd_generate, "whole requests: TTFT, TPOT, latency, tokens/s, speculation"},
    {"serve", cmd_serve, "an engine under load, request by request (--steady-state)"},
    {"frontier", cmd_frontier, "latency against throughput over batch sizes, Pareto fronts"},
    {"crossover", cmd_crossover, "where each operator crosses the ridge"},
    {"capacity", cmd_capacity, "KV-cache capacity: tokens and sequences"},
    {"plan", cmd_plan, "how many devices, split how (TP, PP, EP, DP): the layouts that fit"},
    {"sweep", cmd_sweep, "decode floors over batch x context, one row a point"},
    {"models", cmd_models, "list built-in models"},
    {"hw", cmd_hw, "list built-in hardware"},
    {"plot", cmd_plot, "Figure 1: every operator on the roofline, as SVG"},
    {"report", cmd_report, "one self-contained HTML report: figure, tables, sweep"},
    {"info", cmd_info, "what a model (preset or config.json) holds: shapes, params, KV"},
    {"measure", cmd_measure, "measure this machine's roofline into a profile (--hw FILE)"},
    {"bench", cmd_bench, "bench gemm MODEL: time the model's GEMMs against the roofline"},
    {"profile", cmd_profile, "run real decoder layers; every operator beside its floor"},
};

static int usage(FILE *f)
{
    fprintf(f, "usage: roofline [--version] [--help] <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'roofline <command> --help' lists a command's options.\n"
               "exit codes: 0 ok, 1 runtime failure, 2 bad usage or input,\n"
               "            3 backend or device unavailable, 4 output not written\n");
    return ferror(f) ? RF_EXIT_IO : RF_EXIT_OK;
}

/* The command argv names, its exit code. */
static int dispatch(const cli_io *io, int argc, char **argv)
{
    if (argc < 2) { /* bad usage: one line, as every refusal (issue 28, finding 11) */
        fprintf(io->err, "roofline: no command given (usage: roofline [--version] [--help] "
                         "<command> [options]; 'roofline --help' lists the commands)\n");
        return RF_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return usage(io->out);
    if (!strcmp(argv[1], "--version")) {
        fprintf(io->out, "roofline %s\n", RF_VERSION);
        return RF_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(io, argc - 1, argv + 1);
    fprintf(io->err, "roofline: unknown command '%s' (see 'roofline --help')\n", argv[1]);
    return RF_EXIT_USAGE;
}

/* Flush the command's output and report a failed write (`> /dev/full`
 * must fail loudly): one line, and only when the command had not failed
 * and said so already. */
static int finish(const cli_io *io, int code)
{
    if (fflush(io->out) != 0 || ferror(io->out)) {
        if (code)
            return code;
        fprintf(io->err, "roofline: error writing standard output\n");
        return RF_EXIT_IO;
    }
    return code;
}

/* One command line on io. It shares nothing with another call: the
 * command's context and run value (with its GPU options and tables) are
 * its own (cli_parse) and freed before it returns, an output's temporary
 * ends with the output (rf_file_writer_free). */
static int run(const cli_io *io, int argc, char **argv)
{
    return finish(io, dispatch(io, argc, argv));
}

int rf_cli_main(int argc, char **argv)
{
    cli_io io = {stdout, stderr, isatty(fileno(stderr)) != 0};
    return run(&io, argc, argv);
}

#if defined(__EMSCRIPTEN__)
/* web/explorer.js and tests/test_explorer_cli.js read an rf_cli_result from
 * the module's memory at these offsets */
_Static_assert(offsetof(rf_cli_result, out_len) == 4 && offsetof(rf_cli_result, err) == 8 &&
                   offsetof(rf_cli_result, err_len) == 12 && offsetof(rf_cli_result, code) == 16 &&
                   sizeof(rf_cli_result) == 20,
               "rf_cli_result as the explorer reads it");
#endif

void rf_cli_result_free(rf_cli_result *res)
{
    if (!res)
        return;
    free(res->out);
    free(res->err);
    memset(res, 0, sizeof *res);
}

/* A heap copy of text into *dst (NULL when out of memory). */
static void set_text(char **dst, size_t *len, const char *text)
{
    *len = strlen(text);
    if ((*dst = malloc(*len + 1)))
        memcpy(*dst, text, *len + 1);
    else
        *len = 0;
}

/* A result that ran nothing: code and the one line saying why. */
static int refuse(rf_cli_result *res, int code, const char *why)
{
    rf_cli_result_free(res);
    set_text(&res->out, &res->out_len, "");
    set_text(&res->err, &res->err_len, why);
    res->code = code;
    return code;
}

/* argv run with its output and errors in two memory streams of its own
 * (open_memstream: glibc, musl, emscripten), which become res->out and
 * res->err: nothing of the process's streams is touched, so calls on two
 * threads write to two places. err is not a terminal (no progress line). */
static int capture(int argc, char **argv, rf_cli_result *res)
{
    FILE *out = open_memstream(&res->out, &res->out_len);
    FILE *err = out ? open_memstream(&res->err, &res->err_len) : NULL;
    if (!err) {
        if (out)
            fclose(out);
        return refuse(res, RF_EXIT_FAIL, "roofline: out of memory for the output\n");
    }
    cli_io io = {out, err, false};
    int code = run(&io, argc, argv);
    /* closing a memory stream writes its last bytes and the NUL; it fails
     * only when that memory cannot be had */
    int lost = fclose(out) != 0;
    lost |= fclose(err) != 0;
    if (lost || !res->out || !res->err)
        return refuse(res, RF_EXIT_FAIL, "roofline: out of memory for the output\n");
    res->code = code;
    return code;
}

int rf_cli_run(int argc, const char *const *argv, rf_cli_result *res)
{
    memset(res, 0, sizeof *res);
    if (argc < 1 || !argv)
        return refuse(res, RF_EXIT_USAGE, "roofline: rf_cli_run: argc must be at least 1\n");
    /* the option scanner moves operands after the options in the array it
     * scans, and a command may keep pointers into it: the call scans
     * copies, freed after it */
    char **copy = calloc((size_t)argc + 1, sizeof *copy);
    int code = copy ? RF_EXIT_OK : RF_EXIT_FAIL;
    for (int i = 0; i < argc && !code; i++)
        if (!(copy[i] = strdup(argv[i] ? argv[i] : "")))
            code = RF_EXIT_FAIL;
    if (code)
        refuse(res, code, "roofline: out of memory for the arguments\n");
    else
        code = capture(argc, copy, res);
    for (int i = 0; copy && i < argc; i++)
        free(copy[i]);
    free(copy);
    return code;
}
