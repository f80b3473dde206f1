/* measure_internal.h - helpers shared inside rf_measure; not installed.
 * Names: what the files of a layer share but do not publish carries rf__
 * (RF__ for macros); file-private names no prefix; public names rf_. */
#ifndef RF_MEASURE_INTERNAL_H
#define RF_MEASURE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "roofline/rf_measure.h"

/* One CPU number per physical core among those this process may run on,
 * lowest first; returns the count (at most cap). */
int rf__cpu_core_list(int *cpus, int cap);

/* Run fn(thread, arg) on every thread of the team and wait for all. */
typedef void (*rf__team_fn)(int thread, void *arg);
void rf__team_run(rf_team *t, rf__team_fn fn, void *arg);

/* The same, timed: every thread starts its clock once all are running (a
 * spin barrier); returns the seconds from the first thread's start to the
 * last one's end. Waking the threads is not timed. */
double rf__team_run_timed(rf_team *t, rf__team_fn fn, void *arg);

/* The same, but each thread's own time counts: returns the harmonic mean
 * of the threads' times, so (work of all threads) / result is the sum of
 * the threads' own rates. For kernels that share nothing between cores
 * (registers): a thread the scheduler paused lowers only its own rate. */
double rf__team_run_timed_each(rf_team *t, rf__team_fn fn, void *arg);

/* Memory for a measurement: 2 MiB aligned, huge pages asked for when
 * large, NOT touched (the team first-touches it). Freed with free(). */
void *rf__alloc_untouched(uint64_t bytes);

/* Calibrate and time one kernel: trial(arg, reps) runs reps calls on every
 * thread and returns the seconds it took; work_per_rep is what one call on
 * all threads does (bytes, FLOPs, cycles). One warm-up call, reps doubled
 * until a trial lasts min_time_s / 4, scaled to min_time_s, then the
 * trials. */
typedef double (*rf__trial_fn)(void *arg, uint64_t reps);
rf_status rf__time_kernel(rf__trial_fn trial, void *arg, double work_per_rep, rf_timing timing,
                          rf_measurement *out, rf_err *err);

/* Add more's trials to into (same kernel, same working set): the rate is
 * recomputed over all of them; an empty into (zeroed) takes more whole.
 * RF_ERANGE past RF_STATS_MAX samples. */
rf_status rf__measurement_merge(rf_measurement *into, const rf_measurement *more, rf_err *err);

/* A DRAM sampler on a team the caller keeps (rf_measure_cpu's own). */
rf_status rf__dram_sampler_on(rf_team *team, const rf_kernel_table *kt, const rf_cpu *cpu,
                              bool quick, rf_dram_sampler **out, rf_err *err);

#endif
