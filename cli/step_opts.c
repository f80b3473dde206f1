/* step_opts.c - the step options shared by step, sweep, plot, report and
 * profile: parsing, the documented defaults, the refusals of options that do
 * nothing, the model's context limit, and a failed step's message. */
#include <stdio.h>
#include <string.h>

#include "opts.h"
#include "step_opts.h"

const cli_opt cli_step_opts[] = {CLI_STEP_OPTS, {0}};
const cli_opt cli_predict_opts[] = {CLI_PREDICT_OPT, {0}};
const cli_opt cli_gpu_opts[] = {CLI_GPU_OPTS, {0}};

int cli_step_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    rf_step_opts *o = user;
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
        ctx->step_given |= CLI_GIVEN_CAUSAL;
        o->causal = true;
        return RF_EXIT_OK;
    case CLI_O_NO_CAUSAL:
        ctx->step_given |= CLI_GIVEN_SQUARE;
        o->causal = false;
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
    case CLI_O_PREDICT:
        ctx->step_given |= CLI_GIVEN_PREDICT;
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

int cli_causal_default(cli_ctx *ctx, rf_step_opts *o)
{
    if ((ctx->step_given & CLI_GIVEN_CAUSAL) && (ctx->step_given & CLI_GIVEN_SQUARE))
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--causal and --no-causal: give one (prefill "
                        "attention is causal unless --no-causal)");
    /* a floor counts what a causal model's kernel computes: the triangle */
    o->causal = !(ctx->step_given & CLI_GIVEN_SQUARE);
    return RF_EXIT_OK;
}

int cli_step_defaults(cli_ctx *ctx, const rf_model *m, rf_step_opts *o, bool figure)
{
    int rc = cli_causal_default(ctx, o);
    if (rc)
        return rc;
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

static void context_lines(const cli_ctx *ctx, rf_report *r, const rf_model *m, int64_t positions,
                          bool beyond)
{
    long long max = (long long)m->max_context;
    if (ctx->step_given & CLI_CLAMPED_CONTEXT)
        rf_report_assume(r, "context: the default %d cut to %s's max_position_embeddings (%lld)",
                         CLI_DEFAULT_CONTEXT, m->name, max);
    if (ctx->step_given & CLI_CLAMPED_TOKENS)
        rf_report_assume(r,
                         "prefill tokens: the default %d cut so that each sequence stays "
                         "within %s's max_position_embeddings (%lld)",
                         CLI_DEFAULT_TOKENS, m->name, max);
    if (beyond)
        rf_report_assume(r,
                         "WARNING: %lld positions a sequence are beyond %s's "
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
    rf_report_bool(r, "context_beyond_model_max", "past the model's context", beyond, shown);
}

int cli_step_fail(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                  const rf_err *e, const char *const names[3])
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
