/* measure_view.h - a measured profile as the analytic commands read it
 * (measure_view.c): the calibration --predict takes from the --hw profile.
 * The rest of measure_view.c (--predict's columns, the sustained roof on
 * Figure 1) is declared in cli.h; how the lab shows what it measures is
 * lab/lab_view.h's. */
#ifndef RF_CLI_MEASURE_VIEW_H
#define RF_CLI_MEASURE_VIEW_H

#include "cli.h"
#include "roofline/rf_calib.h"

/* --predict: the calibration of the profile --hw names. Refused (exit 2,
 * one line saying how to make one) without a calibrated profile. */
int cli_calib_load(const cli_ctx *ctx, rf_calib *out);

#endif
