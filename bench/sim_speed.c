/* sim_speed.c - the simulator's speed (rf_sim.h): 100,000 requests on one
 * core, on a cheap step model (the scheduler alone) and on the default
 * floor model of Llama-3-8B on an H100 (its tables filled on first use,
 * which the first run pays), and with speculative decoding (K = 4,
 * alpha = 0.8, the same floor as its own draft: the scheduler's draws and
 * four draft passes a step; a self-draft costs more than it saves, so
 * that run is overloaded: it times the simulator, not a deployment). Prints the median CPU seconds of RUNS runs
 * (process CPU time, user + sys), the steps, and the load average, since
 * the machine may be shared. Issue 27's target: at most 1 s.
 * usage: sim_speed [RUNS]   (built by bench/sim-speed.sh) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "roofline/rf_hw.h"
#include "roofline/rf_model.h"
#include "roofline/rf_sim.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* 10 ms a step plus 10 us a token plus 1 ns a decode key */
static rf_status cheap(void *user, const rf_sim_batch *b, double *step_s, rf_err *err)
{
    (void)user;
    (void)err;
    *step_s = 10e-3 + 1e-5 * (double)b->tokens + 1e-9 * (double)b->decode_context_sum;
    return RF_OK;
}

static int bench(const char *label, const rf_sim_workload *w, const rf_sim_sched *sc,
                 rf_sim_step_fn fn, void *user, int runs)
{
    double t[64];
    rf_sim_result r;
    rf_err e;
    int64_t max_log = rf_sim_log_hint(w, sc);
    size_t bytes;
    void *work = NULL;
    for (int i = 0; i < runs; i++) {
        for (;;) {
            if (rf_sim_workspace_bytes(w, sc, max_log, &bytes, &e)) {
                fprintf(stderr, "sim_speed: %s\n", e.msg);
                return 1;
            }
            free(work);
            work = malloc(bytes);
            if (!work)
                return 1;
            double t0 = cpu_s();
            rf_status s = rf_sim_run(w, sc, fn, user, work, bytes, max_log, &r, &e);
            t[i] = cpu_s() - t0;
            if (s == RF_ERANGE && r.log_entries > max_log) {
                max_log = r.log_entries;
                continue;
            }
            if (s) {
                fprintf(stderr, "sim_speed: %s\n", e.msg);
                return 1;
            }
            break;
        }
    }
    free(work);
    qsort(t, (size_t)runs, sizeof t[0], cmp);
    printf("%-44s %lld requests %8lld steps  median %.3f s CPU (min %.3f, max %.3f)  "
           "%.0f req/s simulated, P99 TTFT %.3g s\n",
           label, (long long)r.requests, (long long)r.steps, t[runs / 2], t[0], t[runs - 1],
           r.requests_per_s, r.ttft_s.p99);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 64)
        runs = 5;
    static rf_sim_floor fl;
    rf_model m;
    rf_hw h;
    rf_roof roof;
    rf_err e;
    if (rf_model_preset("llama-3-8b", &m, &e) || rf_hw_preset("h100-sxm", &h, &e) ||
        rf_hw_roof(&h, RF_BF16, &roof, &e)) {
        fprintf(stderr, "sim_speed: %s\n", e.msg);
        return 1;
    }
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_sim_sched sc = {
        .max_batched_tokens = 8192, .max_seqs = 256, .chunk = 2048, .block_tokens = 16};
    int64_t blocks;
    if (rf_sim_pool_blocks(&m, &o, h.mem_bytes, 0.9, 0, 16, &blocks, &e)) {
        fprintf(stderr, "sim_speed: %s\n", e.msg);
        return 1;
    }
    sc.pool_blocks = blocks;
    /* a verification scores K + 1 = 5 rows a sequence */
    size_t tb = rf_sim_floor_table_bytes(sc.max_batched_tokens, 5 * sc.max_seqs);
    void *table = malloc(tb);
    if (!table || rf_sim_floor_prepare(&fl, &m, &o, &roof, sc.max_batched_tokens, 5 * sc.max_seqs,
                                       table, tb, &e)) {
        fprintf(stderr, "sim_speed: %s\n", table ? e.msg : "out of memory");
        return 1;
    }
    rf_sim_lengths prompt = {
        .dist = RF_SIM_LOGNORMAL, .lo = 1, .hi = 8000, .mean = 1000, .sd = 600};
    rf_sim_lengths output = {.dist = RF_SIM_LOGNORMAL, .lo = 1, .hi = 4000, .mean = 250, .sd = 200};
    rf_sim_workload w = {.arrival = RF_SIM_POISSON,
                         .requests = 100000,
                         .rate_per_s = 20,
                         .prompt = prompt,
                         .output = output,
                         .seed = 1};
    double load[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = load[1] = load[2] = -1;
        fclose(f);
    }
    printf("load average %.2f %.2f %.2f; %d runs each; lengths lognormal: prompt mean 1000 "
           "sd 600, output mean 250 sd 200; T 8192, 256 seqs, chunk 2048\n",
           load[0], load[1], load[2], runs);
    int rc = bench("cheap step model, Poisson 20/s", &w, &sc, cheap, NULL, runs);
    rc |= bench("floor llama-3-8b h100-sxm, Poisson 20/s", &w, &sc, rf_sim_floor_step, &fl, runs);
    w.arrival = RF_SIM_CLOSED;
    w.concurrency = 256;
    rc |= bench("floor llama-3-8b h100-sxm, closed C 256", &w, &sc, rf_sim_floor_step, &fl, runs);
    w.arrival = RF_SIM_POISSON;
    rf_sim_sched spec = sc;
    spec.spec_k = 4;
    spec.spec_accept = 0.8;
    spec.draft = rf_sim_floor_group;
    spec.draft_user = &fl;
    rc |= bench("floor, Poisson 20/s, K 4 alpha 0.8 self-draft", &w, &spec, rf_sim_floor_step, &fl,
                runs);
    free(table);
    return rc;
}
