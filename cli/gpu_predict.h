/* gpu_predict.h - --predict on a GPU's kernel tables (rf_gpu.h): the
 * options --backend, --quant and --calibration, where the tables are
 * found, their assumption lines (gpu_predict.c; docs/gpu-predict.md).
 * The commands' predictions on them are gpu_sim.h's. */
#ifndef RF_CLI_GPU_PREDICT_H
#define RF_CLI_GPU_PREDICT_H

#include <stdbool.h>

#include "core.h"
#include "roofline/rf_gpu.h"
#include "roofline/rf_report.h"

/* The options and tables live in the command's run value (ctx->run.gpu,
 * cli_gpu_call in core.h), which cli_parse empties: nothing of one call
 * is seen by another. */

/* The tables this command read, freed (nothing when none was read): a
 * command that takes the GPU options calls it before it returns. */
void cli_gpu_free(cli_ctx *ctx);

/* cli_gpu_opt (cli.h): --backend (vllm, trtllm, sglang; another exits 2
 * naming it), --quant (rf_gpu_quant_of: sets the weight and activation
 * dtypes; refused after --weight-dtype or --act-dtype), --calibration DIR. */

/* Whether --backend or --calibration was given: --predict then predicts
 * on kernel tables, not on a calibrated profile. */
bool cli_gpu_wanted(const cli_ctx *ctx);

/* --backend naming a CPU engine (llamacpp, rf_engine_known), in step
 * and generate: --calibration is then its file. Other commands refuse it
 * (cli_gpu_opt). */
int cli_gpu_engine_opt(cli_ctx *ctx, const char *arg);

/* --backend naming a CPU engine (llamacpp), or NULL; *calibration its
 * --calibration FILE (or NULL). */
const char *cli_gpu_engine(const cli_ctx *ctx, const char **calibration);

/* The folder holding <gpu>/<engine>/ tables: $ROOFLINE_GPU_DATA, else the
 * source tree's data/gpu when it exists (a build), else the install
 * prefix's share/roofline/gpu. */
const char *cli_gpu_data_dir(void);

/* The tables (read once): --calibration DIR, else <data>/<gpu>/<backend>
 * with gpu the --hw preset's name, '-' as '_' (h100-sxm: h100_sxm). One
 * line and exit 2 when neither was given, the folder is missing or a
 * table is bad. */
int cli_gpu_load(cli_ctx *ctx, const rf_gpu_tables **out);
const rf_gpu_quant *cli_gpu_quant(const cli_ctx *ctx);
/* Where the tables came from, once read: "preset h100_sxm/vllm" or the
 * --calibration DIR (the `source` of a predicted section). */
const char *cli_gpu_label(const cli_ctx *ctx);

/* The assumption lines of a prediction on the tables: the folder, the
 * source, how a figure is predicted, each table's leave-one-out band; and
 * for each kind in `missing` a line and a warning on ctx->io->err. */
void cli_gpu_assume(const cli_ctx *ctx, rf_report *r, const rf_gpu_tables *g, unsigned missing);

/* The measured error of serve --predict on the --hw preset's tables for
 * --backend (rf_gpu_serving_error_load: <data>/<gpu>/serving_error.json),
 * of the runs at this concurrency where the file has a bucket for it (0,
 * an open loop: of every run), as lines of r's current section and an
 * assumption naming its source; an assumption that there is none for
 * --calibration tables or an engine the file lacks. One line and exit 2
 * when the file is bad. */
int cli_gpu_serving_error(cli_ctx *ctx, rf_report *r, int64_t concurrency);

/* A warning on ctx->io->err for each kind in `missing` (cli_gpu_assume's). */
void cli_gpu_warn(const cli_ctx *ctx, const rf_gpu_tables *g, unsigned missing);

/* cli_gpu_assume's lines for the tables read, without the warnings
 * (cli_gpu_frontier, gpu_sim.h, gave them); nothing when none was read. */
void cli_gpu_assume_loaded(const cli_ctx *ctx, rf_report *r);

#endif
