/* cmd_ops.c - `roofline ops MODEL`: the course lesson's per-operator
 * table (its section 4): every distinct linear layer at each M, and
 * attention in decode and prefill at each context. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assume.h"
#include "budget.h"
#include "cli.h"
#include "opts.h"
#include "output.h"
#include "par_opts.h"
#include "resolve.h"
#include "step_opts.h"
#include "roofline/rf_view.h"

enum { O_TOKENS = 1000, O_CONTEXT };

static const cli_opt opts[] = {
    {"tokens", 1, O_TOKENS, "LIST", "tokens in flight M for the GEMMs (default 1,256)"},
    {"context", 1, O_CONTEXT, "LIST", "contexts S for attention (default 128,512,2048)"},
    CLI_CAUSAL_OPT, /* its own: the rows' attention, not a step's */
    {0},
};

/* what the bytes count (cli_step_opt's ids, into args.traffic) */
static const cli_opt traffic_opts[] = {CLI_TRAFFIC_OPTS, {0}};

/* the layout's degrees (cli_par_opt's ids) */
static const cli_opt par_opts[] = {
    {"tp", 1, CLI_O_TP, "T", "the shard one of T tensor-parallel devices runs (default 1)"},
    {"pp", 1, CLI_O_PP, "P", "pipeline stages (default 1): a stage runs the same shapes"},
    {"ep", 1, CLI_O_EP, "E", "expert-parallel devices: TP groups of E / T replicas (default 1)"},
    {"dp", 1, CLI_O_DP, "D", "data-parallel replicas (default 1)"},
    {0},
};

typedef struct args {
    const char *tokens, *context;
    bool causal;
    rf_step_opts traffic; /* --traffic, --fuse-elementwise */
    cli_budget budget;    /* the memory fit at the largest S */
    cli_par par;          /* --tp, --pp, --ep, --dp */
    rf_model full;        /* the model before its shard (EP rows, a layout's fit) */
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (id == CLI_O_CAUSAL)
        a->causal = true;
    else if (id == O_TOKENS)
        a->tokens = arg;
    else
        a->context = arg;
    return RF_EXIT_OK;
}

/* The options behind a row's step sizes: B is a GEMM's M (--tokens); s
 * and T are attention's S (--context). */
static const char *const names[3] = {"--tokens", "--context", "--context"};

/* Rows for one M: each distinct (name) linear layer once, per layer;
 * under EP a device's share of its expert group's routed rows. */
static int gemm_rows(cli_ctx *ctx, rf_report *r, const rf_model *m, rf_step_opts o, int64_t M,
                     const rf_roof *roof, rf_step *st, const args *a)
{
    rf_err e;
    rf_model shard;
    o.phase = RF_DECODE;
    o.batch = M;
    o.context = 0;
    if (a->par.layout.ep > 1 ? rf_par_device_step(&a->full, &a->par.layout, 0, a->full.layers, &o,
                                                  roof, &shard, st, &e)
                             : rf_step_compute(m, &o, roof, st, &e))
        return cli_step_fail(ctx, m, &o, roof, &e, names);
    for (size_t i = 0; i < st->n_ops; i++)
        if (st->ops[i].kind == RF_OP_GEMM || st->ops[i].kind == RF_OP_ELEMENTWISE)
            rf_view_ops_row(r, &st->ops[i], st->ops[i].name, roof, m->n_experts > 0);
    return RF_EXIT_OK;
}

static int attn_rows(cli_ctx *ctx, rf_report *r, const rf_model *m, rf_step_opts o, int64_t S,
                     const rf_roof *roof, rf_step *st)
{
    rf_err e;
    for (int ph = 0; ph < 2; ph++) {
        o.phase = ph ? RF_PREFILL : RF_DECODE;
        o.batch = 1;
        o.context = ph ? 0 : S;
        o.tokens = S;
        if (rf_step_compute(m, &o, roof, st, &e))
            return cli_step_fail(ctx, m, &o, roof, &e, names);
        for (size_t i = 0; i < st->n_ops; i++) {
            const rf_op *op = &st->ops[i];
            if (op->kind != RF_OP_ATTN_DECODE && op->kind != RF_OP_ATTN_PREFILL)
                continue;
            char name[48];
            snprintf(name, sizeof name, "%s_%s", op->name, ph ? "prefill" : "decode");
            rf_view_ops_row(r, op, name, roof, m->n_experts > 0);
        }
    }
    return RF_EXIT_OK;
}

/* The assumption lines: the roof, how a GEMM and attention are counted,
 * the tensor-parallel shard, the full traffic model's extra rows. */
static void assume_ops(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                       const rf_roof *roof, const cli_par *par)
{
    cli_assume_roof(ctx, r, o, roof);
    cli_assume_math(r, m, o, roof);
    rf_report_assume(r, "GEMM: M = tokens in flight, Q = M K b_a + K N b_w + M N b_a; attention: "
                        "decode = 1 query against S keys, prefill = S queries against S keys, "
                        "K/V read once (flash)");
    cli_assume_attn(r, o, true);
    if (par->layout.tp > 1)
        rf_report_assume(r,
                         "one of %lld tensor-parallel devices: %lld query heads, %lld KV "
                         "heads, MLP width %lld, vocabulary shard %lld (the collectives: "
                         "`step --tp`)",
                         (long long)par->layout.tp, (long long)m->n_q, (long long)m->n_kv,
                         (long long)m->ffn, (long long)m->vocab);
    if (o->traffic == RF_TRAFFIC_FULL)
        rf_report_assume(r,
                         "traffic full (--traffic full): each M also has the step's "
                         "element-wise rows at M tokens (norms, rope, kv_write, residuals, "
                         "act, biases; final_norm on the M rows lm_head reads), attention "
                         "also reads Q and writes O; `step --traffic full` says what each "
                         "counts%s",
                         o->fuse_elementwise ? "; --fuse-elementwise: a norm reads only its "
                                               "weights"
                                             : "");
}

/* The model's memory fit: one sequence (the table's) at the largest S. */
static void memory_fit(const cli_ctx *ctx, rf_report *r, const rf_model *m, rf_step_opts o,
                       const int64_t *ctxs, size_t nc, const cli_budget *b)
{
    o.context = 0;
    for (size_t i = 0; i < nc; i++)
        o.context = ctxs[i] > o.context ? ctxs[i] : o.context;
    char label[96];
    snprintf(label, sizeof label, "memory fit: the weights and one sequence at context %lld",
             (long long)o.context);
    rf_report_section(r, "memory", label);
    rf_fit fit;
    if (cli_fit(ctx, r, m, &o, b, &fit) == RF_OK)
        cli_assume_fit(r, &fit, ctx);
    cli_context_check(ctx, r, m, o.context, CLI_CTX_LINES | CLI_CTX_KEY);
}

/* Under PP or EP a device holds a stage's layers or 1 / E of the experts:
 * its fit is the layout's (rf_par_compute of one sequence at the largest
 * S, into par), its most loaded device against one device's budget. */
static void layout_fit(const cli_ctx *ctx, rf_report *r, rf_step_opts o, const rf_roof *roof,
                       const int64_t *ctxs, size_t nc, const args *a, rf_par *par)
{
    rf_err e;
    o.context = 0;
    for (size_t i = 0; i < nc; i++)
        o.context = ctxs[i] > o.context ? ctxs[i] : o.context;
    char label[128];
    snprintf(label, sizeof label,
             "memory fit: a device, the weights and one sequence at "
             "context %lld",
             (long long)o.context);
    rf_report_section(r, "memory", label);
    if (cli_par_compute(ctx, &a->full, &o, roof, &a->budget, &a->par, par, &e)) {
        rf_report_null(r, "fits", "fits", e.msg);
        return;
    }
    const rf_par_stage *w = &par->stages[0];
    for (size_t i = 1; i < par->n_stages; i++)
        w = par->stages[i].needed_bytes > w->needed_bytes ? &par->stages[i] : w;
    char need[32], budget[32], text[128];
    rf_fmt((double)w->needed_bytes, RF_U_BYTES, need, sizeof need);
    rf_fmt(w->budget_bytes, RF_U_BYTES, budget, sizeof budget);
    snprintf(text, sizeof text, "%s: a device needs %s of a %s budget",
             par->fits ? "fits" : "does not fit", need, budget);
    rf_report_bool(r, "fits", "fits", par->fits, text);
    rf_report_int(r, "memory_needed_bytes", "memory needed (the most loaded device)",
                  w->needed_bytes, RF_U_BYTES);
}

int cmd_ops(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.tokens = "1,256",
              .context = "128,512,2048",
              .traffic = rf_step_opts_default(),
              .budget = CLI_BUDGET_DEFAULT,
              .par = CLI_PAR_DEFAULT};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "ops MODEL [--tokens LIST] [--context LIST] [--causal]",
                            (const cli_opt_group[]){{opts, on_opt, &a},
                                                    {traffic_opts, cli_step_opt, &a.traffic},
                                                    CLI_BUDGET_GROUP(&a.budget),
                                                    {par_opts, cli_par_group_opt, &a.par},
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    int64_t *toks = NULL, *ctxs = NULL;
    size_t nt = 0, nc = 0;
    rf_model m;
    rf_roof roof;
    rf_report *r = NULL;
    /* the command's results, large: a step and a layout's steps */
    struct {
        rf_step st;
        rf_par par;
    } *res = calloc(1, sizeof *res);
    rf_step_opts o = rf_step_opts_default();
    o.causal = a.causal;
    o.traffic = a.traffic.traffic;
    o.fuse_elementwise = a.traffic.fuse_elementwise;
    if (!res) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_range(&ctx, "--tokens", a.tokens, RF_DIM_MAX, &toks, &nt)) ||
        (rc = cli_range(&ctx, "--context", a.context, RF_DIM_MAX, &ctxs, &nc)) ||
        (rc = cli_par_check(&ctx, &m, &a.par)))
        goto out;
    rf_err pe;
    a.full = m;
    if (!rf_layout_is_single(&a.par.layout) &&
        rf_layout_shard(&m, &a.par.layout, 0, m.layers, &m, &pe)) {
        rc = cli_fail_err(&ctx, &pe);
        goto out;
    }
    char title[256];
    snprintf(title, sizeof title, "operator intensities: %s (one layer, one sequence)", m.name);
    if (!(r = rf_report_new(title))) {
        rc = cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
        goto out;
    }
    assume_ops(&ctx, r, &m, &o, &roof, &a.par);
    rf_view_ops_columns(r, m.n_experts > 0);
    for (size_t i = 0; i < nt && !rc; i++)
        rc = gemm_rows(&ctx, r, &m, o, toks[i], &roof, &res->st, &a);
    for (size_t i = 0; i < nc && !rc; i++)
        rc = attn_rows(&ctx, r, &m, o, ctxs[i], &roof, &res->st);
    if (a.par.layout.ep > 1 || a.par.layout.pp > 1)
        layout_fit(&ctx, r, o, &roof, ctxs, nc, &a, &res->par);
    else
        memory_fit(&ctx, r, &m, o, ctxs, nc, &a.budget);
    if (!rc)
        rc = cli_emit(&ctx, r);
out:
    rf_report_free(r);
    free(res);
    free(toks);
    free(ctxs);
    return rc;
}
