/* request.c - the options of generate, serve and frontier (request.h). */
#include "request.h"

int cli_request_opt(cli_ctx *ctx, int id, const char *arg, cli_request *r)
{
    switch (id) {
    case CLI_O_PROMPT:
        return cli_i64(ctx, "--prompt", arg, 1, RF_DIM_MAX, &r->prompt);
    case CLI_O_OUTPUT:
        return cli_i64(ctx, "--output", arg, 1, RF_DIM_MAX, &r->output);
    case CLI_O_BATCH:
    case CLI_O_NAIVE:
    case CLI_O_CAUSAL:
    case CLI_O_TRAFFIC:
    case CLI_O_FUSE_ELEMENTWISE:
    case CLI_O_MOE:
        return cli_step_opt(ctx, id, arg, &r->o);
    default:
        return cli_budget_opt(ctx, id, arg, &r->budget);
    }
}

int cli_request_check(const cli_ctx *ctx, const cli_request *r)
{
    if (!r->prompt || !r->output)
        return cli_fail(ctx, RF_EXIT_USAGE, "give --prompt P and --output N (tokens a request)");
    return RF_EXIT_OK;
}
