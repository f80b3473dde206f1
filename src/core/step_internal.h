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

/* The note of chunked attention's rows (fused or naive); predict.c puts
 * them on their floor (no calibrated kernel times chunked attention). */
#define RF__NOTE_CHUNKED "chunked local attention"

/* Bytes of module class mod's weights in p (its share 1 / share, e.g. the
 * routed experts a device of an expert group holds): the layers whose
 * unquantized_layer[] names mod in m->unquantized_dtype, the rest in its
 * dtype under o (rf_model_module_dtype). */
rf_status rf__module_bytes(const rf_model *m, const rf_step_opts *o, const rf_param_counts *p,
                           rf_module mod, uint64_t share, uint64_t *bytes, rf_err *err);

#endif
