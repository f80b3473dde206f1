/* resolve.h - MODEL and --hw resolved into the run value, the files
 * read, and an output checked against them (resolve.c). */
#ifndef RF_CLI_RESOLVE_H
#define RF_CLI_RESOLVE_H

#include "core.h"
#include <stdbool.h>
#include "roofline/rf_model.h"
#include "roofline/rf_step.h"

/* Resolve MODEL: a preset name, a config.json path, or a folder holding
 * one (rf_model_find), read as --family when given (ctx->family_as and
 * ctx->family_from then say so). A draft model (--draft) is read by
 * cli_resolve_draft: as its own family, whatever --family says. */
int cli_resolve_model(cli_ctx *ctx, const char *text, rf_model *out);
int cli_resolve_draft(cli_ctx *ctx, const char *text, rf_model *out);

/* The usual start of a model command: exactly one positional MODEL at
 * argv[pos], resolved; dtypes applied to *o; the roof of the math dtype.
 * Prints its one-line error and returns the exit code on failure. */
int cli_model_setup(cli_ctx *ctx, int argc, char **argv, int pos, rf_model *m, rf_step_opts *o,
                    rf_roof *roof);
/* The same without the roof (ctx->hw resolved by cli_resolve_hw), for a
 * command that needs no compute peak. */
int cli_model_hw_setup(cli_ctx *ctx, int argc, char **argv, int pos, rf_model *m, rf_step_opts *o);

/* Resolve --hw (default h100-sxm) and apply --peak/--bw/--mem/--ridge for
 * the given math dtype; fills ctx->hw and *roof. A math dtype the hardware
 * has no peak for falls back (rf_hw_roof_for: roof->math_fallback, said in
 * cli_assume_roof's lines) unless the user named it (--act-dtype, or
 * --weight-dtype where the math follows the weights): that is refused. */
int cli_resolve_roof(cli_ctx *ctx, rf_dtype_kind math, rf_roof *roof);

/* Resolve --hw and apply --bw/--mem/--ridge alone, for a command that needs
 * no compute peak (capacity); fills ctx->hw. */
int cli_resolve_hw(cli_ctx *ctx);
/* Read the profile at name into ctx->run (listed as read; its roof as
 * named, sustained memory roof and calibration): what cli_resolve_hw does
 * for a --hw profile, for a command that wants the calibration before the
 * roof (the lab's profile). An rf_status with *e. */
rf_status cli_read_profile(cli_ctx *ctx, const char *name, rf_err *e);

/* The math dtype was named by the user (--act-dtype, or --weight-dtype
 * where the math follows the weights, W8A8): no fallback for it. */
bool cli_math_given(const cli_ctx *ctx, rf_dtype_kind math);

/* Dtypes for a model: the user's if given, else the model's weights dtype
 * for b_w and bf16 for activations and KV. Fills o->w/a/kv. */
void cli_apply_dtypes(const cli_ctx *ctx, const rf_model *m, rf_step_opts *o);

/* The files this command has read (the model's config.json, a hardware
 * profile) into list, NULL-terminated: an output never writes over one of
 * them. */
void cli_inputs(const cli_ctx *ctx, const char *list[CLI_N_INPUTS + 1]);

/* Check an output path before any work: its folder exists and takes a new
 * file, the path is not a folder, a device or an unwritable file, and not
 * one of the NULL-terminated inputs. One line and RF_EXIT_USAGE if not;
 * NULL or "-" (stdout) passes. */
int cli_check_output(const cli_ctx *ctx, const char *path, const char *const *inputs);

/* The roof of commands that run on this machine (bench, profile): --hw when
 * given (as cli_resolve_roof), else this CPU measured now with --quick on
 * `threads` threads (RF_ISA honoured, progress on a terminal). Defined in
 * lab/lab_roof.c, with the lab's commands (the lab's to declare). */
int cli_measured_roof(cli_ctx *ctx, int threads, rf_dtype_kind math, rf_roof *roof);

#endif
