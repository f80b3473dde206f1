/* step_internal.h - private to src/core: the step's floors from its totals,
 * one rule for rf_step_compute and the serving steps built from it. */
#ifndef RF_CORE_STEP_INTERNAL_H
#define RF_CORE_STEP_INTERNAL_H

#include "roofline/rf_step.h"

/* From st's flops, total_bytes, op_bytes (set by the caller) fill floor_s
 * and regime (the roof at flops / total_bytes), floor_aggregate_s
 * (max(sum F / pi, sum Q / beta) over the operators' bytes), intensity,
 * step_intensity and tokens_per_s = new_tokens / floor_s. */
void rf__step_floors(rf_step *st, const rf_roof *roof, double new_tokens);

#endif
