/* cmd_attn.c - `roofline attn`: one attention layer, decode or prefill. */
#include <string.h>

#include "assume.h"
#include "cli.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "roofline/rf_view.h"
#include "roofline/rf_op.h"

enum { O_HEADS = 1000, O_KV, O_CTX, O_PHASE, O_HDIM, O_BATCH, O_NAIVE, O_CAUSAL };

static const cli_opt opts[] = {
    {"heads", 1, O_HEADS, "NQ", "query heads (required)"},
    {"kv-heads", 1, O_KV, "NKV", "KV heads (default: heads, i.e. MHA)"},
    {"context", 1, O_CTX, "S", "keys per sequence (required)"},
    {"phase", 1, O_PHASE, "decode|prefill", "one query token, or S queries (default decode)"},
    {"head-dim", 1, O_HDIM, "D", "head dimension (default 128; cancels in the intensity)"},
    {"batch", 1, O_BATCH, "B", "sequences (default 1)"},
    {"naive", 0, O_NAIVE, NULL, "materialize the score matrices in memory"},
    {"causal", 0, O_CAUSAL, NULL, "prefill: score the causal triangle, S (S + 1) / 2 pairs"},
    {0},
};

typedef struct args {
    rf_attn_desc d;
    bool prefill;
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_HEADS:
        return cli_i64(ctx, "--heads", arg, 1, RF_DIM_MAX, &a->d.n_q);
    case O_KV:
        return cli_i64(ctx, "--kv-heads", arg, 1, RF_DIM_MAX, &a->d.n_kv);
    case O_CTX:
        return cli_i64(ctx, "--context", arg, 1, RF_DIM_MAX, &a->d.keys);
    case O_HDIM:
        return cli_i64(ctx, "--head-dim", arg, 1, RF_DIM_MAX, &a->d.head_dim);
    case O_BATCH:
        return cli_i64(ctx, "--batch", arg, 1, RF_DIM_MAX, &a->d.batch);
    case O_NAIVE:
        a->d.naive = true;
        return RF_EXIT_OK;
    case O_CAUSAL:
        a->d.causal = true;
        return RF_EXIT_OK;
    case O_PHASE:
        if (!strcmp(arg, "decode") || !strcmp(arg, "prefill")) {
            a->prefill = arg[0] == 'p';
            return RF_EXIT_OK;
        }
        return cli_fail(ctx, RF_EXIT_USAGE, "--phase: '%s' is not decode or prefill", arg);
    }
    return RF_EXIT_USAGE;
}

int cmd_attn(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.d = {.head_dim = 128, .batch = 1}};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "attn --heads NQ [--kv-heads NKV] --context S [--phase decode|prefill] "
                            "[--head-dim D] [--batch B] [--naive] [--causal]",
                            (const cli_opt_group[]){{opts, on_opt, &a}, {0}}, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    if ((rc = cli_refuse_unused(&ctx, CLI_G_WDT | CLI_G_GROUP,
                                "attention has no weights (its math follows --act-dtype, its "
                                "bytes --kv-dtype)")) ||
        (rc = cli_refuse_unused(&ctx, CLI_G_MEM,
                                "an attention layer's floor needs no memory size")) ||
        (rc = cli_refuse_unused(&ctx, CLI_G_FAMILY, "attn reads no MODEL")))
        return rc;
    if (a.d.causal && !a.prefill)
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "--causal: a decode query scores every key before "
                        "it, so no triangle is left out; give --phase prefill");
    if (pos < argc)
        return cli_fail(&ctx, RF_EXIT_USAGE, "unexpected argument '%s'", argv[pos]);
    if (!a.d.n_q)
        return cli_fail(&ctx, RF_EXIT_USAGE, "--heads is required");
    if (!a.d.keys)
        return cli_fail(&ctx, RF_EXIT_USAGE, "--context is required");
    if (!a.d.n_kv)
        a.d.n_kv = a.d.n_q;
    a.d.q_tokens = a.prefill ? a.d.keys : 1;

    rf_step_opts o = rf_step_opts_default();
    o.naive_attn = a.d.naive;
    o.causal = a.d.causal;
    cli_apply_dtypes(&ctx, NULL, &o);
    rf_roof roof;
    if ((rc = cli_resolve_roof(&ctx, rf_dtype_math(o.w, o.a), &roof)))
        return rc;
    rf_op op;
    rf_err e;
    if (rf_op_attention("attention", &a.d, o.kv, o.a, &op, &e))
        return cli_fail_err(&ctx, &e);

    rf_report *r = rf_report_new(a.prefill ? "attention, prefill (S queries against S keys)"
                                           : "attention, decode (one query token against S keys)");
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_roof(&ctx, r, &o, &roof);
    rf_view_attn_assume(r, &a.d);
    cli_assume_attn(r, &o, a.prefill);
    rf_view_attn(r, &a.d, &op, o.kv, &roof);
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
