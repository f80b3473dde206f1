/* cmd_plan.c - `roofline plan MODEL`: how many devices, split how, for this
 * model, batch and context (rf_plan_compute), smallest deployment first;
 * with `--rate R --slo-ttft X --slo-tpot Y` (or `--devices N`), the
 * fewest devices, layout and concurrency cap meeting the SLOs at that rate
 * (or the highest rate N devices meet them at), each candidate simulated
 * request by request (rf_sim_plan_compute). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "assume.h"
#include "opts.h"
#include "output.h"
#include "resolve.h"
#include "gpu_predict.h"
#include "sim.h"
#include "roofline/rf_view.h"

enum {
    O_MAX = 1000,
    O_OBJ,
    O_DEVICES,
    O_PROMPT,
    O_OUTPUT,
    O_MAX_TOKENS,
    O_CHUNK,
    O_PRICE,
    O_DISAGG,
    O_EVERY
};

/* The options in --help's order: each table a group (cmd_plan's list),
 * whose handler alone reads its ids. */
static const cli_opt step_opts[] = {
    {"batch", 1, CLI_O_BATCH, "B", "sequences to serve (default 1)"},
    {"context", 1, CLI_O_CONTEXT, "S",
     "positions a sequence (default " CLI_STR(CLI_DEFAULT_CONTEXT) ")"},
    {0}};
static const cli_opt search_opts[] = {
    {"max-devices", 1, O_MAX, "N", "largest deployment tried (default 64)"},
    {"objective", 1, O_OBJ, "latency|throughput|cost",
     "ranking (default cost: fewest devices, then tokens/s a device)"},
    {0}};
static const cli_opt link_opts[] = {CLI_LINK_OPTS, {0}};
static const cli_opt rate_opts[] = {
    {"rate", 1, CLI_O_RATE, "R", "SLO plan: requests a second to serve (the fewest devices)"}, {0}};
static const cli_opt devices_opts[] = {
    {"devices", 1, O_DEVICES, "N", "SLO plan: the highest rate N devices serve within the SLOs"},
    {0}};
static const cli_opt slo_opts[] = {CLI_SIM_SLO_OPTS, {0}};
static const cli_opt length_opts[] = {
    {"prompt", 1, O_PROMPT, "P|DIST",
     "SLO plan: prompt tokens (N, uniform:LO:HI, normal:MEAN:SD, lognormal:MEAN:SD)"},
    {"output-tokens", 1, O_OUTPUT, "N|DIST", "SLO plan: output tokens (as --prompt)", 'n'},
    {0}};
static const cli_opt arrival_opts[] = {
    {"arrival", 1, CLI_O_ARRIVAL, "poisson|gamma:CV", "SLO plan: arrival gaps (default poisson)"},
    {"requests", 1, CLI_O_REQUESTS, "N", "SLO plan: requests a simulation (default 1000)"},
    {"seed", 1, CLI_O_SEED, "S", "SLO plan: random seed (default 1)"},
    {0}};
static const cli_opt batching_opts[] = {
    {"max-batched-tokens", 1, O_MAX_TOKENS, "T",
     "SLO plan: tokens a step (default " CLI_STR(CLI_SIM_MAX_TOKENS) ")"},
    {"chunk", 1, O_CHUNK, "C", "SLO plan: prompt tokens a chunk (default the step's budget)"},
    {0}};
static const cli_opt engine_opts[] = {CLI_SIM_ENGINE_OPTS, {0}};
static const cli_opt cost_opts[] = {
    {"price-per-hour", 1, O_PRICE, "USD",
     "SLO plan: a device's price an hour (cost a million tokens)"},
    {"disagg", 0, O_DISAGG, NULL, "SLO plan: also disaggregated prefill and decode (P:D chosen)"},
    {0}};
static const cli_opt disagg_opts[] = {CLI_SIM_DISAGG_OPTS, {0}};
static const cli_opt every_opts[] = {
    {"every", 0, O_EVERY, NULL,
     "SLO plan: every device count, not only up to the fewest that meet"},
    {0}};
static const cli_opt predict_opts[] = {
    {"predict", 0, CLI_O_PREDICT, NULL,
     "rank the layouts on their predictions from a GPU's kernel tables (--backend, "
     "--calibration), the floors beside them"},
    {0}};

typedef struct args {
    rf_step_opts o;
    cli_budget budget;
    cli_par par;
    int64_t max_devices;
    rf_objective obj;
    bool obj_given, max_given;
    cli_sim sim;     /* the SLO plan's options                   */
    int64_t devices; /* --devices N                              */
    double price;
    bool every;
} args;

static int on_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    args *a = user;
    switch (id) {
    case O_MAX:
        a->max_given = true;
        return cli_i64(ctx, "--max-devices", arg, 1, RF_PAR_MAX_DEGREE, &a->max_devices);
    case O_DEVICES:
        return cli_i64(ctx, "--devices", arg, 1, RF_PAR_MAX_DEGREE, &a->devices);
    case O_PROMPT:
        a->sim.prompt = arg;
        return RF_EXIT_OK;
    case O_OUTPUT:
        a->sim.output = arg;
        return RF_EXIT_OK;
    case O_MAX_TOKENS:
        return cli_i64(ctx, "--max-batched-tokens", arg, 1, RF_DIM_MAX, &a->sim.max_tokens);
    case O_CHUNK:
        return cli_i64(ctx, "--chunk", arg, 1, RF_DIM_MAX, &a->sim.chunk);
    case O_PRICE:
        return cli_f64(ctx, "--price-per-hour", arg, 1e-9, 1e9, &a->price);
    case O_DISAGG:
        a->sim.disagg = true;
        return RF_EXIT_OK;
    case O_EVERY:
        a->every = true;
        return RF_EXIT_OK;
    default:
        break;
    }
    if (id == O_OBJ) {
        a->obj_given = true;
        static const char *const names[] = {"cost", "latency", "throughput"};
        for (int i = 0; i < 3; i++)
            if (!strcmp(arg, names[i])) {
                a->obj = (rf_objective)i;
                return RF_EXIT_OK;
            }
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--objective: '%s' is not one of latency, throughput, cost", arg);
    }
    return CLI_NOT_MINE;
}

/* plan --predict on kernel tables: every fitting row predicted and the
 * rows re-ranked on the predictions (rf_gpu_predict_plan), *pred (heap,
 * the caller frees) row i's; the assumption lines. */
static int plan_predict(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                        const rf_roof *roof, const rf_par_opts *po, rf_objective obj, rf_plan *plan,
                        rf_gpu_par_pred **pred)
{
    const rf_gpu_tables *g;
    rf_err e;
    int rc = cli_gpu_load(ctx, &g);
    if (rc)
        return rc;
    rf_gpu_par_work *work = malloc(sizeof *work);
    *pred = calloc(plan->n_rows ? plan->n_rows : 1, sizeof **pred);
    if (!work || !*pred)
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    else if (rf_gpu_predict_plan(g, cli_gpu_quant(ctx), m, o, roof, po, obj, plan, *pred, work, &e))
        rc = cli_fail_err(ctx, &e);
    free(work);
    if (rc)
        return rc;
    unsigned missing = 0;
    for (size_t i = 0; i < plan->n_rows; i++)
        missing |= (*pred)[i].missing;
    cli_gpu_assume(ctx, r, g, missing);
    rf_view_plan_pred_assume(r, obj);
    return RF_EXIT_OK;
}

/* plan --rate R --slo-ttft X --slo-tpot Y, or --devices N. */
static int plan_slo(cli_ctx *ctx, int argc, char **argv, int pos, args *a)
{
    const cli_sim *s = &a->sim;
    const char *no = a->obj_given                            ? "--objective"
                     : (ctx->step_given & CLI_GIVEN_CONTEXT) ? "--context"
                     : a->o.batch != 1                       ? "--batch"
                     : s->trace                              ? "--trace"
                     : s->concurrency                        ? "--concurrency"
                                                             : NULL;
    if (no)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "%s: not with an SLO plan (--rate, --devices: "
                        "lengths from --prompt and --output-tokens)",
                        no);
    if (!s->slo_ttft || !s->slo_tpot)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "an SLO plan needs --slo-ttft X and --slo-tpot Y "
                        "(seconds)");
    if (!s->rate && !a->devices)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "an SLO plan needs --rate R (the fewest devices) "
                        "or --devices N (the highest rate)");
    if (s->rate && a->devices)
        return cli_fail(ctx, RF_EXIT_USAGE, "--rate and --devices: give one");
    if (!s->prompt || !s->output)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "an SLO plan needs --prompt P and --output-tokens N "
                        "(tokens or a distribution)");
    rf_step_opts o = a->o;
    rf_model m;
    rf_roof roof;
    rf_err e;
    int rc;
    if ((rc = cli_model_setup(ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(ctx, &m, &o, false)))
        return rc;
    if (!ctx->hw.mem_bytes)
        return cli_fail(ctx, RF_EXIT_USAGE, "%s has no memory size: give --mem", ctx->hw.name);
    rf_sim_plan_opts po;
    memset(&po, 0, sizeof po);
    po.par = cli_par_opts(ctx, &a->budget, &a->par);
    po.max_devices = a->max_devices;
    po.devices = a->devices;
    rf_sim_workload *w = &po.workload;
    w->arrival = RF_SIM_POISSON;
    w->cv = 1;
    if (s->arrival && rf_sim_arrival_parse(s->arrival, &w->arrival, &w->cv, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--arrival: %s", e.msg);
    if (rf_sim_lengths_parse(s->prompt, "prompt", &w->prompt, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--prompt: %s", e.msg);
    if (rf_sim_lengths_parse(s->output, "output", &w->output, &e))
        return cli_fail(ctx, RF_EXIT_USAGE, "--output-tokens: %s", e.msg);
    w->rate_per_s = s->rate ? s->rate : 1;
    w->requests = s->requests ? s->requests : CLI_SIM_REQUESTS;
    w->seed = s->seed_given ? (uint64_t)s->seed : 1;
    po.sched.max_batched_tokens = s->max_tokens ? s->max_tokens : CLI_SIM_MAX_TOKENS;
    po.sched.max_seqs = s->max_seqs ? s->max_seqs : CLI_SIM_MAX_SEQS;
    po.sched.chunk = s->chunk ? s->chunk : po.sched.max_batched_tokens;
    po.sched.block_tokens = s->block ? s->block : CLI_SIM_BLOCK;
    po.sched.no_preempt = s->no_preempt;
    po.slo_ttft_s = s->slo_ttft;
    po.slo_tpot_s = s->slo_tpot;
    po.percentile = s->percentile ? s->percentile : 99;
    po.price_per_device_hour = a->price;
    po.every = a->every;
    po.disagg = s->disagg;
    po.kv_link_bw_bytes_per_s = s->kv_link_gbps * 1e9;
    po.kv_link_latency_s = s->kv_link_us * 1e-6;
    rf_sim_plan *p = calloc(1, sizeof *p);
    void *work = NULL;
    size_t bytes;
    if (!p)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    rf_status st = rf_sim_plan_work_bytes(&m, &po, p, &bytes, &e);
    if (!st && !(work = malloc(bytes))) {
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory (%zu bytes of workspace)", bytes);
        goto done;
    }
    if (!st)
        st = rf_sim_plan_compute(&m, &o, &roof, &po, work, bytes, p, &e);
    if (st) {
        rc = cli_fail_err(ctx, &e);
        goto done;
    }
    char title[768];
    if (a->devices)
        snprintf(title, sizeof title,
                 "plan: %s on %lld x %s, the highest rate within P%g TTFT "
                 "%g s and TPOT %g s",
                 m.name, (long long)a->devices, ctx->hw.name, po.percentile, s->slo_ttft,
                 s->slo_tpot);
    else
        snprintf(title, sizeof title,
                 "plan: %s on %s at %g requests/s within P%g TTFT %g s and "
                 "TPOT %g s",
                 m.name, ctx->hw.name, s->rate, po.percentile, s->slo_ttft, s->slo_tpot);
    rf_report *r = rf_report_new(title);
    if (!r) {
        rc = cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
        goto done;
    }
    cli_assume_model(r, &m, &o, NULL);
    cli_assume_roof(ctx, r, &o, &roof);
    rf_view_plan_slo(r, &po, p);
    rc = cli_emit(ctx, r);
    rf_report_free(r);
done:
    free(work);
    free(p);
    return rc;
}

/* The layouts that fit (rf_plan_compute) and, with --predict, their
 * predictions on the kernel tables. */
static int plan_layouts(cli_ctx *ctx, const args *a, const rf_model *m, const rf_step_opts *o,
                        const rf_roof *roof, rf_plan *plan, bool predict)
{
    rf_err e;
    int rc;
    rf_par_opts po = cli_par_opts(ctx, &a->budget, &a->par);
    uint64_t state, kv;
    if (rf_plan_compute(m, o, roof, &po, a->max_devices, a->obj, plan, &e) ||
        rf_model_state_bytes(m, &state, &e) || rf_model_kv_bytes(m, o->kv, 1, &kv, &e))
        return cli_fail_err(ctx, &e);
    char title[256];
    snprintf(title, sizeof title, "plan: %s on %s, %lld sequences at %lld positions", m->name,
             ctx->hw.name, (long long)o->batch, (long long)rf_step_positions(o));
    rf_report *r = rf_report_new(title);
    if (!r)
        return cli_fail(ctx, RF_EXIT_FAIL, "out of memory");
    rf_gpu_par_pred *pred = NULL; /* --predict: row i's */
    if (predict && (rc = plan_predict(ctx, r, m, o, roof, &po, a->obj, plan, &pred))) {
        rf_report_free(r);
        free(pred);
        return rc;
    }
    cli_assume_roof(ctx, r, o, roof);
    cli_assume_math(r, m, o, roof);
    cli_assume_phase(r, o);
    rf_view_plan_assume(r, &po.links, a->max_devices, a->budget.util, a->budget.reserve_bytes);
    cli_assume_state(r, m, state);
    rf_view_plan(r, plan, kv, state, pred, cli_gpu_label(ctx));
    rc = cli_emit(ctx, r);
    rf_report_free(r);
    free(pred);
    return rc;
}

int cmd_plan(const cli_io *io, int argc, char **argv)
{
    cli_ctx ctx;
    args a = {.o = rf_step_opts_default(),
              .budget = CLI_BUDGET_DEFAULT,
              .par = CLI_PAR_DEFAULT,
              .max_devices = 64,
              .obj = RF_OBJ_COST};
    int pos, rc = cli_parse(&ctx, io, argc, argv,
                            "plan MODEL --hw DEVICE [--batch B] [--context S] [--max-devices N] "
                            "[--objective latency|throughput|cost]; or plan MODEL --hw DEVICE "
                            "(--rate R | --devices N) --slo-ttft X --slo-tpot Y [--percentile Q] "
                            "--prompt P --output-tokens N [--disagg] [--price-per-hour USD]; "
                            "plan MODEL --hw GPU --predict --backend vllm|trtllm|sglang",
                            (const cli_opt_group[]){{step_opts, cli_step_opt, &a.o},
                                                    {search_opts, on_opt, &a},
                                                    CLI_BUDGET_GROUP(&a.budget),
                                                    {link_opts, cli_par_group_opt, &a.par},
                                                    {rate_opts, cli_sim_group_opt, &a.sim},
                                                    {devices_opts, on_opt, &a},
                                                    {slo_opts, cli_sim_group_opt, &a.sim},
                                                    {length_opts, on_opt, &a},
                                                    {arrival_opts, cli_sim_group_opt, &a.sim},
                                                    {batching_opts, on_opt, &a},
                                                    {engine_opts, cli_sim_group_opt, &a.sim},
                                                    {cost_opts, on_opt, &a},
                                                    {disagg_opts, cli_sim_group_opt, &a.sim},
                                                    {every_opts, on_opt, &a},
                                                    {predict_opts, cli_step_opt, &a.o},
                                                    CLI_GPU_GROUP,
                                                    {0}},
                            &pos);
    if (rc)
        return rc < 0 ? RF_EXIT_OK : rc;
    bool predict = ctx.step_given & CLI_GIVEN_PREDICT;
    if (a.sim.rate || a.devices || a.sim.slo_ttft || a.sim.slo_tpot)
        return predict ? cli_fail(&ctx, RF_EXIT_USAGE,
                                  "--predict: not for an SLO plan (--rate, "
                                  "--devices); plan MODEL --predict ranks "
                                  "layouts on the kernel tables")
                       : plan_slo(&ctx, argc, argv, pos, &a);
    if (predict && !cli_gpu_wanted(&ctx))
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "plan --predict: on a GPU's kernel tables only "
                        "(--backend vllm|trtllm|sglang or --calibration "
                        "DIR)");
    const char *sim_only = cli_sim_given(&a.sim);
    if (!sim_only)
        sim_only = a.sim.prompt       ? "--prompt"
                   : a.sim.output     ? "--output-tokens"
                   : a.price          ? "--price-per-hour"
                   : a.every          ? "--every"
                   : a.sim.max_tokens ? "--max-batched-tokens"
                   : a.sim.chunk      ? "--chunk"
                                      : NULL;
    if (sim_only)
        return cli_fail(&ctx, RF_EXIT_USAGE,
                        "%s: only in an SLO plan (--rate R or --devices N, "
                        "with --slo-ttft and --slo-tpot)",
                        sim_only);
    rf_step_opts o = a.o;
    rf_model m;
    rf_roof roof;
    if ((rc = cli_model_setup(&ctx, argc, argv, pos, &m, &o, &roof)) ||
        (rc = cli_step_defaults(&ctx, &m, &o, false)))
        return rc;
    if (!ctx.hw.mem_bytes)
        return cli_fail(&ctx, RF_EXIT_USAGE, "%s has no memory size: give --mem", ctx.hw.name);
    rf_plan *plan = malloc(sizeof *plan); /* ~1 MB: off the stack */
    if (!plan)
        return cli_fail(&ctx, RF_EXIT_FAIL, "out of memory");
    rc = plan_layouts(&ctx, &a, &m, &o, &roof, plan, predict);
    cli_gpu_free(&ctx);
    free(plan);
    return rc;
}
