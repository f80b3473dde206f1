/* gpu_sim.h - the commands' predictions on a GPU's kernel tables
 * (gpu_sim.c): serve under load, generate, frontier and one step, each a
 * section "predicted" beside the floors; the tables are read once
 * through gpu_predict.h's cli_gpu_load. */
#ifndef RF_CLI_GPU_SIM_H
#define RF_CLI_GPU_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "core.h"
#include "par_opts.h"
#include "roofline/rf_gpu.h"
#include "roofline/rf_report.h"
#include "sim.h"

/* `serve --predict` under load: the simulation run again with each step
 * predicted (rf_gpu_sim), and a section "predicted" (ttft_s, tpot_s means,
 * ttft_p90_s, tpot_p90_s, tokens_per_s: the keys --steady-state --predict
 * writes, and band, source) beside the floors' view. */
int cli_gpu_serve_load(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                       const cli_budget *b, const cli_par *par, const cli_sim *s, rf_report *r);

/* `generate --predict` on the tables: a static batch (o->batch) of prompt
 * and output tokens on par's layout (rf_gpu_sim_generate), a section
 * "predicted" as the calibration's (ttft_s, tpot_mean_s, ...). Refuses a
 * shared prefix. */
int cli_gpu_generate(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                     const rf_roof *roof, const cli_budget *b, const cli_par *par, int64_t prompt,
                     int64_t output, int64_t shared_prefix);

/* `frontier --predict` on the tables: batches 1..n (points[0..n-1]) on
 * par's layout (rf_gpu_sim_frontier); the kinds met without a table are
 * kept for cli_gpu_assume_loaded. */
struct rf_frontier_point;
int cli_gpu_frontier(cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                     const cli_budget *b, const cli_par *par, int64_t prompt, int64_t output,
                     struct rf_frontier_point *points, size_t n);
/* `step --predict` on the tables: the step of one device (st, with the
 * layout's collectives coll[0..n_coll-1]; NULL, 0 on one device), a
 * section "predicted" and a table of each row's prediction and
 * provenance. shard: the model a device runs. */
int cli_gpu_step(cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_model *shard,
                 const rf_layout *l, const rf_step_opts *o, const rf_step *st, const rf_coll *coll,
                 size_t n_coll);

#endif
