/* rf_measure.h - measuring the machine, one header per noun:
 *   rf_measure_stats.h    the clock, trials and their statistics, timing
 *   rf_measure_cpu.h      the CPU: ISA levels, cpuid, cold set size
 *   rf_measure_kernels.h  the kernel table (reference, ISA variants)
 *   rf_measure_team.h     a team of pinned threads
 *   rf_measure_bench.h    one kernel timed: bandwidth, FMA peak, clock
 *   rf_measure_levels.h   memory levels from a working-set sweep
 *   rf_measure_lab.h      the whole CPU lab and the DRAM sampler
 *   rf_measure_summary.h  figures derived from a profile for showing it
 *   rf_measure_gemm.h     GEMMs through CBLAS, one shape and a sweep
 * This header includes them all, for callers that use several.
 *
 * Everything here measures; nothing prints. Progress goes through a
 * callback; errors are rf_status + rf_err as everywhere else.
 */
#ifndef RF_MEASURE_H
#define RF_MEASURE_H

#include "rf_measure_bench.h"
#include "rf_measure_cpu.h"
#include "rf_measure_gemm.h"
#include "rf_measure_kernels.h"
#include "rf_measure_lab.h"
#include "rf_measure_levels.h"
#include "rf_measure_stats.h"
#include "rf_measure_summary.h"
#include "rf_measure_team.h"

#endif
