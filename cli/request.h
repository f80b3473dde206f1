/* request.h - what generate, serve and frontier share: a request's prompt
 * and output lengths, and the step switches and memory budget every one of
 * them passes on (request.c). */
#ifndef RF_CLI_REQUEST_H
#define RF_CLI_REQUEST_H

#include "cli.h"

/* ids 1100s: a command's own start at 1000 */
enum { CLI_O_PROMPT = 1100, CLI_O_OUTPUT };

#define CLI_REQUEST_LEN_OPTS                                                                   \
    {"prompt", 1, CLI_O_PROMPT, "P", "prompt tokens a request (required)"},                    \
    {"output", 1, CLI_O_OUTPUT, "N", "output tokens a request (required; -o names a file)"}
#define CLI_REQUEST_STEP_OPTS                                                                  \
    {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"},                    \
    CLI_CAUSAL_OPT,                                                                            \
    CLI_TRAFFIC_OPTS,                                                                          \
    {"moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"}, \
    CLI_BUDGET_OPTS

typedef struct cli_request {
    rf_step_opts o;         /* the switches; batch as the command sets it */
    cli_budget budget;
    int64_t prompt, output; /* 0 until given                              */
} cli_request;
#define CLI_REQUEST_DEFAULT {rf_step_opts_default(), CLI_BUDGET_DEFAULT, 0, 0}

/* The ids of both lists (and CLI_O_BATCH); CLI_NOT_MINE for any other. */
int cli_request_opt(cli_ctx *ctx, int id, const char *arg, cli_request *r);
/* After parsing: both lengths given, or one line and RF_EXIT_USAGE. */
int cli_request_check(const cli_ctx *ctx, const cli_request *r);

#endif
