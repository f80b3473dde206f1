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
rf_status rf__sim_requests(const rf_sim_workload *w, int64_t n, double *arrival,
                           int64_t *prompt, int64_t *output, rf_err *err);

#endif
