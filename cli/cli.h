/* cli.h - the commands, as entry.c's table calls them.
 *
 * A command is `int cmd_<name>(const cli_io *io, int argc, char **argv)`
 * (core.h), writing only to io. It passes its option groups to cli_parse
 * (opts.h), resolves what it needs (resolve.h), asks the library, has a
 * view (rf_view.h) fill one rf_report and hands it to cli_emit (output.h).
 * No arithmetic lives in cli/. What several commands share is declared in
 * a header named after the file that defines it: opts.h, resolve.h,
 * assume.h, output.h, step_opts.h, budget.h, par_opts.h, figure.h,
 * measure_view.h, request.h, sim.h.
 */
#ifndef RF_CLI_H
#define RF_CLI_H

#include "core.h"

/* ---- the commands (entry.c's table) -------------------------------------- */

int cmd_gemm(const cli_io *io, int argc, char **argv);
int cmd_attn(const cli_io *io, int argc, char **argv);
int cmd_ops(const cli_io *io, int argc, char **argv);
int cmd_step(const cli_io *io, int argc, char **argv);
int cmd_generate(const cli_io *io, int argc, char **argv); /* cmd_generate.c: rf_serve.h */
int cmd_serve(const cli_io *io, int argc, char **argv);    /* cmd_serve.c: rf_serve.h */
int cmd_frontier(const cli_io *io, int argc, char **argv); /* cmd_frontier.c: rf_serve.h */
int cmd_crossover(const cli_io *io, int argc, char **argv);
int cmd_capacity(const cli_io *io, int argc, char **argv);
int cmd_sweep(const cli_io *io, int argc, char **argv);
int cmd_models(const cli_io *io, int argc, char **argv);
int cmd_hw(const cli_io *io, int argc, char **argv);
int cmd_plot(const cli_io *io, int argc, char **argv);
int cmd_report(const cli_io *io, int argc, char **argv);
int cmd_info(const cli_io *io, int argc, char **argv);
int cmd_measure(const cli_io *io, int argc, char **argv); /* lab/: roofline-lab's */
int cmd_bench(const cli_io *io, int argc, char **argv);
int cmd_profile(const cli_io *io, int argc, char **argv);
int cmd_plan(const cli_io *io, int argc, char **argv);

#endif
