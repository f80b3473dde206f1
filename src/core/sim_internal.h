/* sim_internal.h - private to src/core: the simulator's random numbers and
 * workload (sim_workload.c), which sim.c runs. */
#ifndef RF_CORE_SIM_INTERNAL_H
#define RF_CORE_SIM_INTERNAL_H

#include "roofline/rf_sim.h"

/* xoshiro256** (Blackman and Vigna 2018), its state seeded by splitmix64
 * from (seed, stream): one stream for the arrivals, one for the lengths, so
 * a change of rate keeps the lengths. */
typedef struct rf__rng {
    uint64_t s[4];
} rf__rng;

void rf__rng_seed(rf__rng *r, uint64_t seed, uint64_t stream);
uint64_t rf__rng_next(rf__rng *r);
/* Uniform in (0, 1): ((x >> 11) + 1/2) 2^-53, never 0 or 1. */
double rf__rng_uniform(rf__rng *r);

/* ln x (x > 0) and e^x with + - * / and the exact frexp and ldexp only,
 * so every IEEE-754 platform gets the same bits (within 1 ulp of libm). */
double rf__sim_log(double x);
double rf__sim_exp(double x);

/* The workload's checks (RF_EINVAL naming the value) and its n. */
rf_status rf__sim_workload_check(const rf_sim_workload *w, int64_t *n, rf_err *err);

/* Fill the n requests: lengths drawn in request order; arrivals for the
 * open loop (Poisson or gamma gaps from time 0) and the trace; the closed
 * loop's arrivals are left at 0 (the run sets them). */
rf_status rf__sim_requests(const rf_sim_workload *w, int64_t n, double *arrival, int64_t *prompt,
                           int64_t *output, rf_err *err);

/* A value and a count (or an index): the ITL log's entries, and what
 * rf__sim_sort orders. */
typedef struct rf__sim_entry {
    double gap_s;
    int64_t count;
} rf__sim_entry;

/* Sort e[0..n-1] by gap_s ascending (every gap_s >= 0), stable, tmp as
 * large: LSD radix on the doubles' bits. O(n), no allocation. */
void rf__sim_sort(rf__sim_entry *e, rf__sim_entry *tmp, int64_t n);

/* The statistics of the values e[0..n-1], each counted `count` times:
 * mean, the nearest-rank P50, P90, P99 and P_pct, max. Sorts e. */
rf_sim_stat rf__sim_stat(rf__sim_entry *e, rf__sim_entry *tmp, int64_t n, double pct);

/* rf_sim_run_group, and when ttft and e2e are not NULL each request's
 * TTFT and E2E (n each, in request order). */
rf_status rf__sim_run(const rf_sim_workload *w, const rf_sim_sched *sc, rf_sim_group_fn step,
                      void *user, void *work, size_t work_bytes, int64_t max_log,
                      rf_sim_result *out, double *ttft, double *e2e, rf_err *err);

#endif
