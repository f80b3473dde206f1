/* sim_opts.c - the simulator's options (sim.h); sim_run.c runs it. */
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "sim.h"

int cli_sim_disagg(cli_ctx *ctx, const char *arg, cli_sim *s)
{
    char *end;
    long long p = strtoll(arg, &end, 10), d = -1;
    if (end != arg && *end == ':' && end[1])
        d = strtoll(end + 1, &end, 10);
    if (d < 0 || *end || p < 0)
        return cli_fail(ctx, RF_EXIT_USAGE,
                        "--disagg: '%s' is not P:D (prefill and decode "
                        "workers, such as 1:3)",
                        arg);
    if (p < 1 || d < 1)
        return cli_fail(ctx, RF_EXIT_USAGE, "--disagg %s: each side needs at least one worker",
                        arg);
    if (p > RF_SIM_PLAN_WORKERS * 4 || d > RF_SIM_PLAN_WORKERS * 4)
        return cli_fail(ctx, RF_EXIT_USAGE, "--disagg %s: at most %d workers a side", arg,
                        RF_SIM_PLAN_WORKERS * 4);
    s->disagg = true;
    s->disagg_p = p;
    s->disagg_d = d;
    return RF_EXIT_OK;
}

int cli_sim_opt(cli_ctx *ctx, int id, const char *arg, cli_sim *s)
{
    switch (id) {
    case CLI_O_RATE:
        if (cli_f64(ctx, "--rate", arg, -1e300, 1e12, &s->rate))
            return RF_EXIT_USAGE;
        return s->rate > 0 ? RF_EXIT_OK
                           : cli_fail(ctx, RF_EXIT_USAGE,
                                      "--rate: '%s' must be > 0 (requests "
                                      "a second)",
                                      arg);
    case CLI_O_ARRIVAL:
        s->arrival = arg;
        return RF_EXIT_OK;
    case CLI_O_REQUESTS:
        return cli_i64(ctx, "--requests", arg, 1, (int64_t)1 << 32, &s->requests);
    case CLI_O_SEED:
        s->seed_given = true;
        return cli_i64(ctx, "--seed", arg, 0, INT64_MAX, &s->seed);
    case CLI_O_TRACE:
        s->trace = arg;
        return RF_EXIT_OK;
    case CLI_O_MAX_SEQS:
        return cli_i64(ctx, "--max-seqs", arg, 1, RF_DIM_MAX, &s->max_seqs);
    case CLI_O_BLOCK:
        return cli_i64(ctx, "--block", arg, 1, 1 << 20, &s->block);
    case CLI_O_NO_PREEMPT:
        s->no_preempt = true;
        return RF_EXIT_OK;
    case CLI_O_STEADY:
        s->steady = true;
        return RF_EXIT_OK;
    case CLI_O_SLO_TTFT:
    case CLI_O_SLO_TPOT: {
        const char *name = id == CLI_O_SLO_TTFT ? "--slo-ttft" : "--slo-tpot";
        double *v = id == CLI_O_SLO_TTFT ? &s->slo_ttft : &s->slo_tpot;
        if (cli_f64(ctx, name, arg, -1e300, 1e9, v))
            return RF_EXIT_USAGE;
        return *v > 0 ? RF_EXIT_OK
                      : cli_fail(ctx, RF_EXIT_USAGE, "%s: '%s' must be > 0 (seconds)", name, arg);
    }
    case CLI_O_PERCENTILE:
        if (cli_f64(ctx, "--percentile", arg, -1e300, 1e300, &s->percentile))
            return RF_EXIT_USAGE;
        return s->percentile > 0 && s->percentile < 100
                   ? RF_EXIT_OK
                   : cli_fail(ctx, RF_EXIT_USAGE, "--percentile: '%s' must be in (0, 100)", arg);
    case CLI_O_DISAGG:
        return cli_sim_disagg(ctx, arg, s);
    case CLI_O_KV_LINK_BW:
        return cli_f64(ctx, "--kv-link-bw", arg, 1e-6, 1e9, &s->kv_link_gbps);
    case CLI_O_KV_LINK_LAT:
        return cli_f64(ctx, "--kv-link-latency", arg, 0, 1e9, &s->kv_link_us);
    case CLI_O_SCHEDULE:
        if (strcmp(arg, "mixed") && strcmp(arg, "unchunked") && strcmp(arg, "prefill-first"))
            return cli_fail(ctx, RF_EXIT_USAGE,
                            "--schedule: unknown schedule '%s' (mixed, "
                            "unchunked, prefill-first)",
                            arg);
        s->schedule = arg;
        return RF_EXIT_OK;
    case CLI_O_FRONTEND:
        s->frontend_given = true;
        return cli_f64(ctx, "--frontend-latency", arg, 0, 1e6, &s->frontend_s);
    case CLI_O_IDLE_FIRST:
        s->idle_first = true;
        return RF_EXIT_OK;
    default:
        return CLI_NOT_MINE;
    }
}

const char *cli_sim_given(const cli_sim *s)
{
    return s->rate             ? "--rate"
           : s->arrival        ? "--arrival"
           : s->requests       ? "--requests"
           : s->seed_given     ? "--seed"
           : s->trace          ? "--trace"
           : s->max_seqs       ? "--max-seqs"
           : s->block          ? "--block"
           : s->no_preempt     ? "--no-preempt"
           : s->slo_ttft       ? "--slo-ttft"
           : s->slo_tpot       ? "--slo-tpot"
           : s->percentile     ? "--percentile"
           : s->disagg         ? "--disagg"
           : s->kv_link_gbps   ? "--kv-link-bw"
           : s->kv_link_us     ? "--kv-link-latency"
           : s->schedule       ? "--schedule"
           : s->frontend_given ? "--frontend-latency"
           : s->idle_first     ? "--idle-first"
                               : NULL;
}
