/* rf_measure_lab.h - the whole CPU lab: every figure of a hardware
 * profile measured in one run, and the memory roof sampled again beside
 * other work. */
#ifndef RF_MEASURE_LAB_H
#define RF_MEASURE_LAB_H

#include <stdbool.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_hw.h"
#include "rf_hw_profile.h"
#include "rf_measure_bench.h"
#include "rf_measure_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called between kernels: done of total steps, and what runs next. */
typedef void (*rf_progress_fn)(void *user, int done, int total, const char *what);

typedef struct rf_measure_opts {
    int threads;             /* 0 = one per core                             */
    bool quick;              /* fewer sweep points, shorter trials (<= 5 s)  */
    const char *isa;         /* override ("avx2", ...); NULL = best          */
    rf_progress_fn progress; /* NULL = silent                                */
    void *progress_user;
} rf_measure_opts;

/* The lab's schedule (rf_measure_cpu) places its bursts at fixed points of
 * the run; these are its counts, which rf_measure_plan reports. */
#define RF_LAB_CORE_ROUNDS 3
#define RF_LAB_ROOF_BURSTS 5

/* The timing the lab uses. On a shared machine the best of many short
 * trials, taken at several moments of the run, is the figure that moves
 * least from run to run: a few milliseconds often fit between two
 * disturbances, and a neighbour busy for a second spoils one burst, not
 * the roof. */
typedef struct rf_measure_plan {
    rf_timing bandwidth; /* every bandwidth kernel (3 ms x 11; quick 1 ms x 5)  */
    rf_timing core;      /* one burst of the clock or an FMA kernel (3 ms x 15;
                             quick 3 ms x 9)                                   */
    int core_bursts;     /* clock + FMA rounds spread over the run, pooled: 3
                             (the clock once more at the end)                  */
    int dot_rounds;      /* of those, the rounds that also time the dot
                             products (bf16, fp16, int8, q8_0, q4_0): every
                             one (3); quick only the middle one (1), which
                             keeps --quick near its old time                   */
    rf_timing roof;      /* one burst of the DRAM read (3 ms x 48; quick 1 ms x
                             16)                                               */
    int roof_bursts;     /* DRAM read bursts spread over the run, pooled: 5    */
    int roof_chunks;     /* the DRAM set is read a 1/8 chunk a call, in turn   */
} rf_measure_plan;

rf_measure_plan rf_measure_plan_of(bool quick);

/* Run the whole CPU lab and fill a profile: identity (CPU, cores, caches,
 * flags, date), the clock, FMA peaks (fp32, fp64) and their theoretical
 * value at the measured clock, the read sweep, the levels it finds, copy /
 * triad (with and without streaming stores) at every level, the memory
 * roof (best read-only DRAM figure) and the worst spread. */
rf_status rf_measure_cpu(const rf_measure_opts *o, rf_hw_profile *out, rf_err *err);

/* The memory roof sampled again beside other work, so that the roof and
 * what is set against it are measured at the same moments of a shared
 * machine: the lab's DRAM read (same set, chunks and timing as
 * rf_measure_cpu with o's threads, isa and quick) on a team of its own,
 * each burst pooled. The team sleeps between bursts. A burst is some 0.1 to
 * 0.3 s; RF_ERANGE once RF_STATS_MAX trials are pooled. */
typedef struct rf_dram_sampler rf_dram_sampler;
rf_status rf_dram_sampler_open(const rf_measure_opts *o, rf_dram_sampler **out, rf_err *err);
rf_status rf_dram_sampler_burst(rf_dram_sampler *d, rf_err *err);
const rf_measurement *rf_dram_sampler_result(const rf_dram_sampler *d, int *bursts);
uint64_t rf_dram_sampler_bytes(const rf_dram_sampler *d); /* the set it holds */
/* The memory roof of hw raised to the sampled best when that is higher:
 * what the machine showed it can do at any moment of the run. */
void rf_dram_sampler_raise(const rf_dram_sampler *d, rf_hw *hw);
void rf_dram_sampler_close(rf_dram_sampler *d);

#ifdef __cplusplus
}
#endif
#endif
