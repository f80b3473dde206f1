/* rf_measure_levels.h - the memory levels (L1, L2, ..., DRAM) found in a
 * read-bandwidth sweep over growing working sets. */
#ifndef RF_MEASURE_LEVELS_H
#define RF_MEASURE_LEVELS_H

#include <stddef.h>

#include "rf_error.h"
#include "rf_hw_profile.h"
#include "rf_measure_bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Levels found in a read-bandwidth sweep over growing working sets.
 *   0. A point in the middle of a steep fall (over 10% below the point
 *      before it and over 10% above the one after it, DRAM's after the
 *      last) is on an edge: its set straddles two levels, and it belongs to
 *      no plateau.
 *   1. The cache region ends at the last point off an edge that is faster
 *      than 1.6x the DRAM figure; later points lie on DRAM's side.
 *   2. The cache region's points off an edge are cut into at most
 *      cache_levels runs of adjacent points (a fall between two runs ends
 *      the first), choosing the cuts that minimise the spread of log bandwidth
 *      within runs (exact, by dynamic programming): plateaus, whatever the
 *      reported cache sizes say. A run has two points or more when the
 *      region has enough: a single point is an edge, not a level.
 *   3. Neighbouring runs whose figures are within 10% are one level.
 *   4. A level's figure is its best point, leaving out the points next to an
 *      edge when the level has more: those straddle two levels.
 * Levels are named L1, L2, ... in order; the last is "DRAM" with the dram
 * measurement's figure and set (rf_cpu_cold_bytes). */
typedef struct rf_levels {
    rf_hw_profile_level level[RF_HW_PROFILE_MAX_LEVELS];
    size_t n;
    size_t point[RF_HW_PROFILE_MAX_LEVELS]; /* sweep index of each cache level's
                                            figure (DRAM: the sweep size n)   */
    size_t first[RF_HW_PROFILE_MAX_LEVELS]; /* sweep points [first, end) belong */
    size_t end[RF_HW_PROFILE_MAX_LEVELS];   /* to the level                       */
} rf_levels;

/* Errors: RF_EINVAL for cache_levels outside 1..RF_HW_PROFILE_MAX_LEVELS - 1
 * or sizes that do not grow. */
rf_status rf_levels_detect(const rf_measurement *sweep, size_t n, const rf_measurement *dram,
                           int cache_levels, rf_levels *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
