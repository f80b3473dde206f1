/* engine_predict.h - `--predict --backend llamacpp --calibration FILE`: a
 * step predicted on an engine's calibration (rf_engine.h), the engine's
 * own kernels timed through it, beside the floors. */
#ifndef CLI_ENGINE_PREDICT_H
#define CLI_ENGINE_PREDICT_H

#include "cli.h"
#include "roofline/rf_step.h"

/* The section "predicted" of a step: the calibration at path read, st (of
 * model m, options o) predicted, its terms, band and provenance. Exit 2
 * naming the file for a bad calibration, or for a step it has no fit for. */
int cli_engine_step(const cli_ctx *ctx, rf_report *r, const char *backend, const char *path,
                    const rf_model *m, const rf_step_opts *o, const rf_step *st);

/* generate's section "predicted": the prompt's prefill and every decode
 * step after it predicted on the calibration at path (one sequence). */
int cli_engine_generate(const cli_ctx *ctx, rf_report *r, const char *backend, const char *path,
                        const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                        int64_t prompt, int64_t output);

#endif
