/* cmd_attn.c - `roofline attn`: one attention layer, decode or prefill. */
#include <string.h>

#include "cli.h"
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
        (rc = cli_refuse_unused(&ctx, CLI_G_MEM, "an attention layer's floor needs no memory size")) ||
        (rc = cli_refuse_unused(&ctx, CLI_G_FAMILY, "attn reads no MODEL")))
        return rc;
    if (a.d.causal && !a.prefill)
        return cli_fail(&ctx, RF_EXIT_USAGE, "--causal: a decode query scores every key before "
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
    rf_point p = rf_roof_place(&roof, (double)op.flops, (double)op.bytes);

    rf_report *r = rf_report_new(a.prefill ? "attention, prefill (S queries against S keys)"
                                           : "attention, decode (one query token against S keys)");
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_roof(&ctx, r, &o, &roof);
    rf_report_assume(r, "F = 4 n_q d_h B x query-key pairs a sequence; Q = 2 n_kv S d_h b_kv B "
                        "(K and V read once)%s",
                     a.d.naive ? "" : "; scores kept on chip (flash): no score bytes");
    if (a.d.naive)
        rf_report_assume(r, "naive: + 2 n_q q S b_a B bytes (every head's q x S scores written "
                            "by QK^T and read back by softmax.V, not kept on chip)");
    cli_assume_attn(r, &o, a.prefill);
    rf_report_int(r, "heads", "query heads", (uint64_t)a.d.n_q, RF_U_INT);
    rf_report_int(r, "kv_heads", "KV heads", (uint64_t)a.d.n_kv, RF_U_INT);
    rf_report_num(r, "group", "group g = n_q / n_kv", (double)a.d.n_q / (double)a.d.n_kv, RF_U_NONE);
    rf_report_int(r, "context", "context S", (uint64_t)a.d.keys, RF_U_INT);
    uint64_t pairs;
    if (rf_attn_pairs(&a.d, &pairs, &e) == RF_OK) /* rf_op_attention counted them */
        rf_report_int(r, "pairs", "query-key pairs a sequence", pairs, RF_U_INT);
    rf_report_int(r, "flops", "FLOPs", op.flops, RF_U_INT);
    rf_report_int(r, "bytes", "bytes", op.bytes, RF_U_INT);
    rf_report_int(r, "kv_bytes", "  of which K and V", op.kv_bytes, RF_U_INT);
    rf_report_int(r, "score_bytes", "  of which scores (naive)", op.extra_bytes, RF_U_INT);
    rf_report_num(r, "intensity", "intensity (FLOP/byte)", p.intensity, RF_U_INTENSITY4);
    rf_report_str(r, "regime", "regime", rf_regime_name(p.regime));
    rf_report_num(r, "ridge", "ridge (FLOP/byte)", roof.ridge, RF_U_INTENSITY);
    rf_report_num(r, "floor_s", "time floor", p.floor_s, RF_U_SECONDS);
    double s_star = rf_attn_prefill_sstar(a.d.n_q, a.d.n_kv, o.kv, roof.ridge);
    rf_report_num(r, "s_star", "prefill compute-bound from S =",
                  a.d.causal ? rf_attn_causal_sstar(s_star) : s_star, RF_U_INTENSITY);
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
