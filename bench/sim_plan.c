/* sim_plan.c - the SLO planner's speed (rf_sim.h, "planning"; issue 27:
 * Llama-3.1-70B over every layout up to 64 H100s in at most 10 s of CPU).
 * Llama-3.1-70B's shape (hidden 8192, 80 layers, 64 query and 8 KV heads,
 * FFN 28,672, vocabulary 128,256) on the h100-sxm preset, bf16; Poisson
 * arrivals, lognormal prompts (mean 1,000, sd 500) and outputs (mean 250,
 * sd 150), N requests a simulation; T 8192, chunk 2048, blocks of 16,
 * at most 256 sequences a replica; P99 TTFT 2 s and TPOT 50 ms.
 * (a) RATE requests/s: the fewest devices, then every layout evaluated
 * (no early stop: the whole table), then with disaggregated P:D
 * candidates in the same table; (b) 8 devices: the highest rate. Prints each answer, the simulations run, and the CPU seconds
 * (process CPU time, user + sys) with the load average.
 * usage: sim_plan [RATE] [N]   (built by bench/sim-plan.sh) */
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

static void show(const rf_sim_plan *p, size_t rows)
{
    printf("  %-22s %5s %7s %5s %9s %10s %10s %9s %9s  %s\n", "layout (tp pp ep dp)", "P:D",
           "devices", "cap", "rate/s", "P99 TTFT", "P99 TPOT", "goodput", "$/Mtok", "");
    for (size_t i = 0; i < p->n_rows && i < rows; i++) {
        const rf_sim_plan_row *r = &p->rows[i];
        char pd[24] = "-";
        if (r->prefill_workers)
            snprintf(pd, sizeof pd, "%lld:%lld", (long long)r->prefill_workers,
                     (long long)r->decode_workers);
        printf("  %4lld %4lld %4lld %4lld     %5s %7lld %5lld %9.3g %9.4gs %9.4gs %9.3g %9.3g  "
               "%s\n",
               (long long)r->layout.tp, (long long)r->layout.pp, (long long)r->layout.ep,
               (long long)r->layout.dp, pd, (long long)r->devices, (long long)r->max_seqs,
               r->rate_per_s, r->ttft_s, r->tpot_s, r->goodput_per_s, r->cost_per_mtok,
               r->meets ? "meets" : r->why);
    }
}

static int plan(const char *label, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                const rf_sim_plan_opts *po, rf_sim_plan *p)
{
    rf_err e;
    size_t bytes;
    double t0 = cpu_s();
    if (rf_sim_plan_work_bytes(m, po, p, &bytes, &e)) {
        fprintf(stderr, "sim_plan: %s\n", e.msg);
        return 1;
    }
    void *work = malloc(bytes);
    if (!work)
        return 1;
    rf_status s = rf_sim_plan_compute(m, o, roof, po, work, bytes, p, &e);
    double t = cpu_s() - t0;
    free(work);
    if (s) {
        fprintf(stderr, "sim_plan: %s\n", e.msg);
        return 1;
    }
    double load[3] = {0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = load[1] = load[2] = 0;
        fclose(f);
    }
    printf("%s: %zu layouts, %zu pruned by the bounds or memory, %zu simulations, %.2f s CPU "
           "(workspace %.1f MB; load %.2f %.2f %.2f)\n",
           label, p->n_layouts, p->n_pruned, p->n_sims, t, (double)bytes / 1e6, load[0], load[1],
           load[2]);
    show(p, 8);
    return 0;
}

int main(int argc, char **argv)
{
    double rate = argc > 1 ? atof(argv[1]) : 20;
    int64_t n = argc > 2 ? atoll(argv[2]) : 1000;
    rf_model m;
    rf_hw h;
    rf_roof roof;
    rf_err e;
    if (rf_model_preset("llama-3-8b", &m, &e) || rf_hw_preset("h100-sxm", &h, &e) ||
        rf_hw_roof(&h, RF_BF16, &roof, &e)) {
        fprintf(stderr, "sim_plan: %s\n", e.msg);
        return 1;
    }
    snprintf(m.name, sizeof m.name, "llama-3.1-70b");
    m.hidden = 8192;
    m.layers = 80;
    m.n_q = 64;
    m.n_kv = 8;
    m.ffn = 28672;
    m.vocab = 128256;
    m.max_context = 131072;
    rf_hw_links_defaults(&h.links);
    rf_step_opts o = rf_step_opts_for_model(&m);
    rf_sim_plan *p = calloc(1, sizeof *p);
    if (!p)
        return 1;
    rf_sim_plan_opts po = {
        .par = {.links = h.links, .util = 0.9, .mem_bytes = h.mem_bytes},
        .max_devices = 64,
        .workload =
            {.arrival = RF_SIM_POISSON,
             .requests = n,
             .rate_per_s = rate,
             .prompt = {.dist = RF_SIM_LOGNORMAL, .mean = 1000, .sd = 500, .lo = 16, .hi = 8000},
             .output = {.dist = RF_SIM_LOGNORMAL, .mean = 250, .sd = 150, .lo = 2, .hi = 2000},
             .seed = 1},
        .sched = {.max_batched_tokens = 8192, .max_seqs = 256, .chunk = 2048, .block_tokens = 16},
        .slo_ttft_s = 2,
        .slo_tpot_s = 0.05,
        .percentile = 99,
        .price_per_device_hour = 2.5};
    char label[128];
    snprintf(label, sizeof label, "(a) rate %g/s, %lld requests, up to 64 H100s", rate,
             (long long)n);
    int rc = plan(label, &m, &o, &roof, &po, p);
    po.every = true;
    snprintf(label, sizeof label, "(a) every layout: rate %g/s, %lld requests, up to 64 H100s",
             rate, (long long)n);
    rc = rc || plan(label, &m, &o, &roof, &po, p);
    po.every = false;
    po.disagg = true;
    snprintf(label, sizeof label,
             "(a) with disaggregated P:D candidates: rate %g/s, %lld requests, up to 64 H100s",
             rate, (long long)n);
    rc = rc || plan(label, &m, &o, &roof, &po, p);
    po.disagg = false;
    po.devices = 8;
    snprintf(label, sizeof label, "(b) 8 H100s, the highest rate, %lld requests", (long long)n);
    rc = rc || plan(label, &m, &o, &roof, &po, p);
    free(p);
    return rc;
}
