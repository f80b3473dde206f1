/* cmd_plan.c - `roofline plan MODEL`: how many devices, split how, for this
 * model, batch and context (rf_plan_compute), smallest deployment first. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum { O_MAX = 1000, O_OBJ };

static const cli_opt opts[] = {
    {"batch", 1, CLI_O_BATCH, "B", "sequences to serve (default 1)"},
    {"context", 1, CLI_O_CONTEXT, "S",
     "positions a sequence (default " CLI_STR(CLI_DEFAULT_CONTEXT) ")"},
    {"max-devices", 1, O_MAX, "N", "largest deployment tried (default 64)"},
    {"objective", 1, O_OBJ, "latency|throughput|cost",
     "ranking (default cost: fewest devices, then tokens/s a device)"},
    CLI_BUDGET_OPTS,
    CLI_LINK_OPTS,
    {0},
};

typedef struct args {
    rf_step_opts o;
    cli_budget budget;
    cli_par par;
    int64_t max_devices;
    rf_objective obj;
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    if (id == O_MAX)
        return cli_i64(ctx, "--max-devices", arg, 1, RF_PAR_MAX_DEGREE, &a->max_devices);
    if (id == O_OBJ) {
        static const char *const names[] = {"cost", "latency", "throughput"};
        for (int i = 0; i < 3; i++)
            if (!strcmp(arg, names[i])) {
                a->obj = (rf_objective)i;
                return RF_EXIT_OK;
            }
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--objective: '%s' is not one of latency, throughput, cost", arg);
    }
    int rc = cli_budget_opt(ctx, id, arg, &a->budget);
    if (rc == CLI_NOT_MINE)
        rc = cli_par_opt(ctx, id, arg, &a->par);
    return rc == CLI_NOT_MINE ? cli_step_opt(ctx, id, arg, &a->o) : rc;
}

/* "TP 8 x PP 2 x DP 1", with ", EP 8" when experts are spread. */
static void layout_text(const rf_layout *l, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "TP %lld x PP %lld x DP %lld", (long long)l->tp, (long long)l->pp,
                     (long long)l->dp);
    if (l->ep > 1 && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ", EP %lld", (long long)l->ep);
}

static void rows_table(rf_report *r, const rf_plan *p)
{
    rf_report_table(r, "layouts", "layouts that fit, ranked");
    rf_report_col(r, "rank", "rank", RF_U_INT);
    rf_report_col(r, "tp", "TP", RF_U_INT);
    rf_report_col(r, "pp", "PP", RF_U_INT);
    rf_report_col(r, "ep", "EP", RF_U_INT);
    rf_report_col(r, "dp", "DP", RF_U_INT);
    rf_report_col(r, "devices", "devices", RF_U_INT);
    rf_report_col(r, "margin_bytes", "fit margin", RF_U_BYTES);
    rf_report_col(r, "floor_s", "step floor", RF_U_SECONDS);
    rf_report_col(r, "token_latency_s", "token latency", RF_U_SECONDS);
    rf_report_col(r, "tokens_per_s", "tokens/s", RF_U_TOK_RATE);
    rf_report_col(r, "tokens_per_s_device", "tokens/s a device", RF_U_TOK_RATE);
    rf_report_col(r, "comm_share", "communicating", RF_U_PERCENT);
    for (size_t i = 0; i < p->n_rows; i++) {
        const rf_plan_row *w = &p->rows[i];
        rf_report_row(r);
        rf_report_cell_int(r, i + 1);
        rf_report_cell_int(r, (uint64_t)w->layout.tp);
        rf_report_cell_int(r, (uint64_t)w->layout.pp);
        rf_report_cell_int(r, (uint64_t)w->layout.ep);
        rf_report_cell_int(r, (uint64_t)w->layout.dp);
        rf_report_cell_int(r, (uint64_t)w->devices);
        rf_report_cell_num(r, w->margin_bytes);
        rf_report_cell_num(r, w->floor_s);
        rf_report_cell_num(r, w->token_latency_s);
        rf_report_cell_num(r, w->tokens_per_s);
        rf_report_cell_num(r, w->tokens_per_s_device);
        rf_report_cell_num(r, w->comm_share);
    }
}

int cmd_plan(int argc, char **argv)
{
    cli_ctx ctx;
    args a = {rf_step_opts_default(), CLI_BUDGET_DEFAULT, CLI_PAR_DEFAULT, 64, RF_OBJ_COST};
    int pos, rc = cli_parse(&ctx, argc, argv,
                            "plan MODEL --hw DEVICE [--batch B] [--context S] [--max-devices N] "
                            "[--objective latency|throughput|cost]",
                            opts, on_opt, &a, &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    rf_step_opts o = a.o;
    rf_model m;
    rf_roof roof;
    rf_err e;
    static rf_plan plan; /* ~1 MB: off the stack */
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)))
        return rc;
    if (!ctx.hw.mem_bytes)
        return cli_fail(&ctx, RF_EXIT_USAGE, "%s has no memory size: give --mem", ctx.hw.name);
    rf_par_opts po = cli_par_opts(&ctx, &a.budget, &a.par);
    uint64_t state, kv;
    if (rf_plan_compute(&m, &o, &roof, &po, a.max_devices, a.obj, &plan, &e) ||
        rf_model_state_bytes(&m, &state, &e) || rf_model_kv_bytes(&m, o.kv, 1, &kv, &e))
        return cli_fail_err(&ctx, &e);

    char title[256], lay[96], need[32], budget[32];
    snprintf(title, sizeof title, "plan: %s on %s, %lld sequences at %lld positions", m.name,
             ctx.hw.name, (long long)o.batch, (long long)rf_step_positions(&o));
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    cli_assume_roof(&ctx, r, &o, &roof);
    cli_assume_math(r, &m, &o, &roof);
    cli_assume_phase(r, &o);
    cli_par_assume(r, &po.links, NULL);
    rf_report_assume(r, "layouts tried: TP, PP and DP powers of two with TP x PP x DP <= %lld; "
                        "on a MoE model EP 1 and TP x 1, 2, 4 ... DP; a DP replica serves "
                        "ceil(B / DP) "
                        "sequences; fit: every device's weights and KV within util x memory "
                        "- reserve (%g x memory - %llu bytes)",
                     (long long)a.max_devices, a.budget.util,
                     (unsigned long long)a.budget.reserve_bytes);
    cli_assume_state(r, &m, state);
    rf_report_section(r, "plan", "plan");
    if (state) { /* a hybrid model: what a sequence holds, beside its KV */
        rf_report_int(r, "kv_bytes_per_token", "KV a token", kv, RF_U_INT);
        rf_report_int(r, "state_bytes_per_sequence", "recurrent state a sequence", state,
                      RF_U_INT);
    }
    rf_report_int(r, "tried", "layouts tried", plan.n_tried, RF_U_INT);
    rf_report_int(r, "fitting", "layouts that fit", plan.n_rows, RF_U_INT);
    const rf_plan_row *small = NULL;
    for (size_t i = 0; i < plan.n_rows; i++)
        if (!small || plan.rows[i].devices < small->devices)
            small = &plan.rows[i];
    if (small) {
        layout_text(&small->layout, lay, sizeof lay);
        char text[160];
        snprintf(text, sizeof text, "%s, %lld devices", lay, (long long)small->devices);
        rf_report_str(r, "smallest", "smallest deployment that fits", text);
    } else {
        rf_report_null(r, "smallest", "smallest deployment that fits",
                       "none up to --max-devices");
    }
    if (plan.n_short) { /* the largest count short of it, for machines too */
        const rf_plan_row *w = &plan.short_of[plan.n_short - 1];
        char why[160];
        rf_fmt(w->needed_bytes, RF_U_BYTES, need, sizeof need);
        rf_fmt(w->budget_bytes, RF_U_BYTES, budget, sizeof budget);
        snprintf(why, sizeof why, "%lld devices: a device needs %s of a %s budget",
                 (long long)w->devices, need, budget);
        rf_report_str(r, "largest_short", "the most devices that do not fit", why);
    }
    for (size_t i = 0; i < plan.n_short; i++) {
        const rf_plan_row *w = &plan.short_of[i];
        layout_text(&w->layout, lay, sizeof lay);
        rf_fmt(w->needed_bytes, RF_U_BYTES, need, sizeof need);
        rf_fmt(w->budget_bytes, RF_U_BYTES, budget, sizeof budget);
        rf_report_note(r, "%lld device%s not enough: the best split, %s, needs %s on a device "
                          "of a %s budget",
                       (long long)w->devices, w->devices == 1 ? " is" : "s are", lay, need,
                       budget);
    }
    rows_table(r, &plan);
    rc = cli_emit(&ctx, r);
    rf_report_free(r);
    return rc;
}
