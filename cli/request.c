/* request.c - the options of generate, serve and frontier (request.h). */
#include <string.h>

#include "budget.h"
#include "gpu_predict.h"
#include "measure_view.h"
#include "opts.h"
#include "request.h"
#include "resolve.h"
#include "step_opts.h"

int cli_request_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    cli_request *r = user;
    switch (id) {
    case CLI_O_PROMPT:
        return cli_i64(ctx, "--prompt", arg, 1, RF_DIM_MAX, &r->prompt);
    case CLI_O_OUTPUT:
        return cli_i64(ctx, "--output-tokens", arg, 1, RF_DIM_MAX, &r->output);
    default:
        return CLI_NOT_MINE;
    }
}

const cli_opt cli_request_len_opts[] = {CLI_REQUEST_LEN_OPTS, {0}};
const cli_opt cli_request_step_opts[] = {CLI_REQUEST_STEP_OPTS, {0}};
const cli_opt cli_request_spec_opts[] = {CLI_REQUEST_SPEC_OPTS, {0}};

int cli_request_check(const cli_ctx *ctx, const cli_request *r)
{
    if (!r->prompt || !r->output)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "give --prompt P and --output-tokens N (tokens a "
                        "request)");
    return RF_EXIT_OK;
}

int cli_spec_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    cli_spec *sp = user;
    switch (id) {
    case CLI_O_PREFIX:
        return cli_i64(ctx, "--shared-prefix", arg, 1, RF_DIM_MAX, &sp->prefix.shared);
    case CLI_O_PREFIX_KERNEL:
        sp->kernel_given = true;
        if (!strcmp(arg, "common") || !strcmp(arg, "cascade")) {
            sp->prefix.cascade = arg[1] == 'a';
            return RF_EXIT_OK;
        }
        return cli_fail(ctx, RF_EXIT_USAGE, "--prefix-kernel: '%s' is not common or cascade", arg);
    case CLI_O_DRAFT:
        sp->draft = arg;
        return RF_EXIT_OK;
    case CLI_O_SPEC_K:
        sp->k_given = true;
        return cli_i64(ctx, "--spec-k", arg, 1, 64, &sp->k);
    case CLI_O_ACCEPT:
        sp->accept_given = true;
        return cli_f64(ctx, "--accept", arg, 0, 1, &sp->accept);
    default:
        return CLI_NOT_MINE;
    }
}

int cli_spec_check(const cli_ctx *ctx, const cli_spec *sp, int64_t prompt)
{
    if (!sp->draft && (sp->k_given || sp->accept_given))
        return cli_fail(ctx, RF_EXIT_USAGE, "--spec-k and --accept need --draft MODEL");
    if (sp->kernel_given && !sp->prefix.shared)
        return cli_fail(ctx, RF_EXIT_USAGE, "--prefix-kernel needs --shared-prefix P_s");
    if (sp->prefix.shared > prompt)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--shared-prefix: %lld tokens is longer than the prompt (%lld)",
                        (long long)sp->prefix.shared, (long long)prompt);
    if (sp->prefix.shared && sp->draft)
        return cli_fail(ctx, RF_EXIT_USAGE, "--shared-prefix and --draft: give one");
    return RF_EXIT_OK;
}

int cli_spec_predict_refuse(const cli_ctx *ctx, const cli_spec *sp, bool layout)
{
    int rc;
    if ((rc = cli_predict_refuse(ctx, layout && !cli_gpu_wanted(ctx), "layouts")) || /* tables */
        (rc = cli_predict_refuse(ctx, sp->draft != NULL, "speculative decoding (--draft)")) ||
        (rc = cli_predict_refuse(ctx, sp->prefix.cascade,
                                 "--prefix-kernel cascade (a kernel "
                                 "the calibration did not time)")))
        return rc;
    return RF_EXIT_OK;
}

int cli_spec_draft(cli_ctx *ctx, const cli_spec *sp, const rf_model *m, const rf_step_opts *o,
                   rf_model *d, rf_step_opts *draft_o)
{
    rf_err e;
    int rc;
    if (!strcmp(sp->draft, CLI_DRAFT_MTP)) {
        if (!m->mtp_layers)
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--draft mtp: %s has no MTP layers "
                            "(num_nextn_predict_layers is 0 or absent)",
                            m->name);
        if (rf_model_mtp_draft(m, d, &e))
            return cli_fail(ctx, cli_exit_for(e.status), "--draft mtp: %s", e.msg);
    } else if ((rc = cli_resolve_draft(ctx, sp->draft, d))) {
        return rc;
    }
    *draft_o = *o;
    cli_apply_dtypes(ctx, d, draft_o);
    return RF_EXIT_OK;
}
