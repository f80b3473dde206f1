/* sim.h - serve under load and plan under SLOs: the request-level
 * simulator (rf_sim.h) behind the command line. sim_opts.c parses the
 * workload and engine options; sim_run.c runs the simulation on the floor
 * (one device) or the layout's step model (--tp/--pp/--ep/--dp);
 * rf_view_sim (src/view/sim.c) puts the result in a report. */
#ifndef RF_CLI_SIM_H
#define RF_CLI_SIM_H

#include "budget.h"
#include "core.h"
#include "par_opts.h"
#include "step_opts.h"
#include "roofline/rf_sim.h"
#include "roofline/rf_view.h"

/* the simulation's ids (step_opts.h: an id is its group's handler's alone) */
enum {
    CLI_O_RATE = 1200,
    CLI_O_ARRIVAL,
    CLI_O_REQUESTS,
    CLI_O_SEED,
    CLI_O_TRACE,
    CLI_O_MAX_SEQS,
    CLI_O_BLOCK,
    CLI_O_NO_PREEMPT,
    CLI_O_STEADY,
    CLI_O_SLO_TTFT,
    CLI_O_SLO_TPOT,
    CLI_O_PERCENTILE,
    CLI_O_DISAGG,
    CLI_O_KV_LINK_BW,
    CLI_O_KV_LINK_LAT,
    CLI_O_SCHEDULE,
    CLI_O_FRONTEND,
    CLI_O_IDLE_FIRST
};

/* The engine's defaults (vLLM V1's on an H100: a step of 8,192 tokens, 256
 * sequences, chunks cut by the budget, blocks of 16 tokens). */
#define CLI_SIM_MAX_TOKENS 8192
#define CLI_SIM_MAX_SEQS 256
#define CLI_SIM_BLOCK 16
#define CLI_SIM_REQUESTS 1000

#define CLI_SIM_LOAD_OPTS                                                                          \
    {"rate", 1, CLI_O_RATE, "R", "open loop: requests a second arriving"},                         \
        {"arrival", 1, CLI_O_ARRIVAL, "poisson|gamma:CV",                                          \
         "--rate: arrival gaps (default poisson)"},                                                \
        {"requests", 1, CLI_O_REQUESTS, "N",                                                       \
         "requests simulated (default 1000; closed loop at least 4 C)"},                           \
        {"seed", 1, CLI_O_SEED, "S", "random seed of arrivals and lengths (default 1)"},           \
    {                                                                                              \
        "trace", 1, CLI_O_TRACE, "FILE.csv", "requests from a CSV of arrival_s, prompt, output"    \
    }

#define CLI_SIM_ENGINE_OPTS                                                                        \
    {"max-seqs", 1, CLI_O_MAX_SEQS, "S",                                                           \
     "requests running at once a replica (default " CLI_STR(CLI_SIM_MAX_SEQS) ")"},                \
        {"block", 1, CLI_O_BLOCK, "B", "KV block, tokens (default " CLI_STR(CLI_SIM_BLOCK) ")"},   \
    {                                                                                              \
        "no-preempt", 0, CLI_O_NO_PREEMPT, NULL,                                                   \
            "reserve each request's whole KV at admission: never preempt"                          \
    }

/* serve's: the engine's schedule (default the --backend's, else mixed) */
#define CLI_SIM_SCHEDULE_OPTS                                                                      \
    {"schedule", 1, CLI_O_SCHEDULE, "NAME",                                                        \
     "mixed, unchunked or prefill-first: how prompts and decodes share a step (default: "          \
     "--backend's engine's, else mixed)"},                                                         \
        {"frontend-latency", 1, CLI_O_FRONTEND, "SECONDS",                                         \
         "a request reaches the scheduler this long after it is sent (default 0)"},                \
    {                                                                                              \
        "idle-first", 0, CLI_O_IDLE_FIRST, NULL,                                                   \
            "an idle engine steps on the first request alone, as vLLM's loop does (default: "      \
            "simultaneous requests together)"                                                      \
    }

#define CLI_SIM_SLO_OPTS                                                                           \
    {"slo-ttft", 1, CLI_O_SLO_TTFT, "SECONDS", "TTFT target (goodput; plan: required)"},           \
        {"slo-tpot", 1, CLI_O_SLO_TPOT, "SECONDS", "TPOT target (goodput; plan: required)"},       \
    {                                                                                              \
        "percentile", 1, CLI_O_PERCENTILE, "Q", "the SLOs' percentile, in (0, 100) (default 99)"   \
    }

#define CLI_SIM_DISAGG_OPTS                                                                        \
    {"kv-link-bw", 1, CLI_O_KV_LINK_BW, "GBPS",                                                    \
     "--disagg: the KV transfer's link, GB/s (default the scale-out link)"},                       \
    {                                                                                              \
        "kv-link-latency", 1, CLI_O_KV_LINK_LAT, "US", "--disagg: its latency, us"                 \
    }

typedef struct cli_sim {
    const char *prompt, *output; /* --prompt, --output-tokens as typed     */
    const char *arrival;         /* --arrival (NULL: poisson)              */
    const char *trace;           /* --trace FILE.csv                       */
    double rate;                 /* --rate (0: not given)                  */
    int64_t concurrency;         /* --concurrency (0: not given)           */
    int64_t requests, seed;      /* 0: the default                         */
    int64_t max_tokens, max_seqs, chunk, block, shared_prefix; /* 0: default */
    bool no_preempt, steady, seed_given;
    const char *schedule; /* --schedule as typed (NULL: default)    */
    const char *engine;   /* --backend as typed: the default schedule
                                     (set by the command's option handler)  */
    double frontend_s;    /* --frontend-latency (0: none)           */
    bool frontend_given;
    bool idle_first;                       /* --idle-first (rf_sim_sched.idle_first)  */
    double slo_ttft, slo_tpot, percentile; /* 0: none, none, 99            */
    int64_t disagg_p, disagg_d;            /* --disagg P:D (0: not given)            */
    bool disagg;                           /* --disagg given (plan: without P:D)     */
    double kv_link_gbps, kv_link_us;
    const rf_model *draft; /* --draft's model (serve sets it), or NULL */
    rf_step_opts draft_o;  /* its dtypes                             */
    int64_t spec_k;        /* --spec-k K (with draft)                */
    double spec_accept;    /* --accept ALPHA                         */
    /* --predict (gpu_predict.c): the run's step model in place of the
     * floor's (the floors of a lone request stay the floor's); NULL: none */
    rf_sim_group_fn predict;
    void *predict_user;
} cli_sim;

/* The ids of the lists above; CLI_NOT_MINE for any other. */
int cli_sim_opt(cli_ctx *ctx, int id, const char *arg, cli_sim *s);
/* cli_sim_opt as a group's handler (user: the cli_sim). */
static inline int cli_sim_group_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    return cli_sim_opt(ctx, id, arg, user);
}
/* --backend, --quant, --calibration (cli_gpu_opt) as a group's handler for
 * a command that simulates (user: the cli_sim): --backend also names the
 * engine whose schedule is the simulation's default. */
static inline int cli_sim_gpu_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    if (id == CLI_O_BACKEND)
        ((cli_sim *)user)->engine = arg;
    return cli_gpu_opt(ctx, id, arg);
}
/* --disagg P:D (both whole numbers >= 1; "0:1" is refused by name). */
int cli_sim_disagg(cli_ctx *ctx, const char *arg, cli_sim *s);
/* The option of a simulation that was given (for refusals: "--rate"), or
 * NULL when none. */
const char *cli_sim_given(const cli_sim *s);

/* A simulated run and what frames it (its view: rf_view_sim). */
typedef rf_view_sim_run cli_sim_out;

/* Build the workload and engine from s and the request options (budget
 * for the pool), run it on the floor (no layout) or the layout's step
 * model (par given), into *out. One line and the exit code on failure. */
int cli_sim_run(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                const cli_budget *b, const cli_par *par, const cli_sim *s, cli_sim_out *out);

#endif
