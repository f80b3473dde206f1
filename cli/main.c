/* main.c - the subcommand table. Each command lives in cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef RF_VERSION
#define RF_VERSION "0.0.0"
#endif

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"gemm", cmd_gemm, "one GEMM: FLOPs, bytes, intensity, regime, floor"},
    {"attn", cmd_attn, "one attention layer, decode or prefill, flash or naive"},
    {"ops", cmd_ops, "per-operator intensities of a model (the course lesson's table)"},
    {"step", cmd_step, "a whole prefill or decode step: operators and totals"},
    {"generate", cmd_generate, "whole requests: TTFT, TPOT, latency, tokens/s, speculation"},
    {"serve", cmd_serve, "continuous batching in steady state, chunked prefill"},
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

/* Flush stdout and report a failed write (`> /dev/full` must fail loudly). */
static int finish(int code)
{
    if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
        if (code) /* the command failed and said so already: one line */
            return code;
        fprintf(stderr, "roofline: error writing standard output\n");
        return RF_EXIT_IO;
    }
    return code;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return finish(usage(stderr) ? RF_EXIT_IO : RF_EXIT_USAGE);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return finish(usage(stdout));
    if (!strcmp(argv[1], "--version")) {
        printf("roofline %s\n", RF_VERSION);
        return finish(RF_EXIT_OK);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return finish(commands[i].fn(argc - 1, argv + 1));
    fprintf(stderr, "roofline: unknown command '%s' (see 'roofline --help')\n", argv[1]);
    return finish(RF_EXIT_USAGE);
}
