/* rf_measure_team.h - a team of threads pinned one per physical core, each
 * first-touching its slice of what it measures. */
#ifndef RF_MEASURE_TEAM_H
#define RF_MEASURE_TEAM_H

#include "rf_error.h"
#include "rf_measure_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads pinned one per core (one CPU of each physical core among those
 * this process may use), each owning a slice of every array it touches
 * first. Opaque; rf_team_free accepts NULL. */
typedef struct rf_team rf_team;

/* threads = 0: one per core. RF_EINVAL when threads exceeds the CPUs this
 * process may use (pinning two threads on one CPU measures nothing). */
rf_status rf_team_new(const rf_cpu *cpu, int threads, rf_team **out, rf_err *err);
void rf_team_free(rf_team *t);
int rf_team_size(const rf_team *t);

#ifdef __cplusplus
}
#endif
#endif
