/* measure_view.h - a measured profile as the analytic commands read it
 * (measure_view.c): the calibration --predict takes from the --hw profile,
 * a step predicted on it, the sustained roof on Figure 1. How the lab
 * shows what it measures is lab/lab_view.h's. */
#ifndef RF_CLI_MEASURE_VIEW_H
#define RF_CLI_MEASURE_VIEW_H

#include "core.h"
#include "roofline/rf_calib.h"
#include "roofline/rf_plot.h"
#include "roofline/rf_step.h"

/* --predict: the calibration of the profile --hw names. Refused (exit 2,
 * one line saying how to make one) without a calibrated profile. */
int cli_calib_load(const cli_ctx *ctx, rf_calib *out);

/* --predict where it is not supported (what names it): refused, exit 2. */
int cli_predict_refuse(const cli_ctx *ctx, bool unsupported, const char *what);
/* With --predict: the step predicted on the --hw profile's calibration
 * (*out, in ctx->run, which holds two steps at a time), or a one-line
 * refusal saying how to make one; without it *out = NULL. An exit code. */
int cli_step_predict(cli_ctx *ctx, const rf_step_opts *o, const rf_step *st,
                     const struct rf_step_pred **out);
/* Figure 1's second memory roof: the --hw profile's sustained one (the
 * median DRAM read), dashed beside the best, when the profile has it. */
void cli_plot_sustained(const cli_ctx *ctx, rf_plot *plot);

#endif
