/* figure.h - Figure 1 as plot and report draw it: the figure options
 * and the figure (figure.c). */
#ifndef RF_CLI_FIGURE_H
#define RF_CLI_FIGURE_H

#include "core.h"
#include "budget.h"
#include "par_opts.h"
#include "step_opts.h"
#include "roofline/rf_measured_io.h"
#include "roofline/rf_plot.h"

/* Figure commands (plot, report): the options both take (a group:
 * CLI_FIGURE_GROUP) and the figure both draw. Decode runs B sequences at
 * context s (default CLI_DEFAULT_CONTEXT); prefill B prompts of T tokens
 * (default CLI_DEFAULT_TOKENS), nothing cached. */
typedef struct cli_figure {
    rf_step_opts opts;         /* as parsed: B, s, T and the switches    */
    const char *measured_path; /* --measured FILE.json, or NULL          */
    rf_model model;
    rf_roof roof;
    rf_step_opts decode, prefill;
    rf_step decode_step, prefill_step;
    rf_measured measured;
    rf_plot plot; /* fitted, ready to write                 */
} cli_figure;
enum { CLI_O_MEASURED = 950 }; /* cli_figure_opt's, beside the step options' */
#define CLI_FIGURE_OPTS                                                                            \
    {"batch", 1, CLI_O_BATCH, "B", "decode sequences, prefill prompts (default 1)"},               \
        {"context", 1, CLI_O_CONTEXT, "S",                                                         \
         "decode: cached positions a sequence (default " CLI_STR(CLI_DEFAULT_CONTEXT) ")"},        \
        {"tokens", 1, CLI_O_TOKENS, "T",                                                           \
         "prefill: new tokens a prompt (default " CLI_STR(CLI_DEFAULT_TOKENS) ")"},                \
        {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"}, CLI_CAUSAL_OPT,      \
        CLI_NO_CAUSAL_OPT, {"fused", 0, CLI_O_FUSED, NULL, "qkv_proj and gate_up_proj fused"},     \
        CLI_TRAFFIC_OPTS,                                                                          \
        {"moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"}, \
    {                                                                                              \
        "measured", 1, CLI_O_MEASURED, "FILE.json", "draw measured roofs and operators too"        \
    }
void cli_figure_init(cli_figure *f);
int cli_figure_opt(cli_ctx *ctx, int id, const char *arg, void *user);
/* The group as a value: CLI_FIGURE_OPTS and cli_figure_opt on f. */
extern const cli_opt cli_figure_opts[];
#define CLI_FIGURE_GROUP(f)                                                                        \
    {                                                                                              \
        cli_figure_opts, cli_figure_opt, (f)                                                       \
    }
/* The start of plot and report: defaults, cli_parse of the groups, the -o
 * check (cli_check_output), MODEL and the roof, both steps, --measured,
 * the fitted figure. Returns -1 after --help (the
 * command then returns RF_EXIT_OK), else an exit code. */
int cli_figure_start(cli_ctx *ctx, const cli_io *io, int argc, char **argv, const char *usage,
                     const cli_opt_group *groups, cli_figure *f);

/* Figure 1 of a layout (plot, report): both steps on it into
 * dec and pre (large: the caller's, on the heap), and f->plot rebuilt from a device
 * of the slowest stage, its operators and collectives on the link roofs
 * (rf_plot_add_layout). rf_layout_validate's refusal or the compute's
 * error printed; RF_EXIT_OK otherwise. */
int cli_figure_layout(cli_ctx *ctx, cli_figure *f, const cli_budget *b, const cli_par *p,
                      rf_par *dec, rf_par *pre);

#endif
