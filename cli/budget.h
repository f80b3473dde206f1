/* budget.h - the memory budget (--util, --reserve) and whether a step
 * fits in it (budget.c). */
#ifndef RF_CLI_BUDGET_H
#define RF_CLI_BUDGET_H

#include "core.h"
#include <stdint.h>
#include "roofline/rf_step.h"

/* The KV budget of capacity and report: --util and --reserve, with the
 * book chapter's defaults (0.92 of memory, a 6 GiB reserve). */
typedef struct cli_budget {
    double util;
    uint64_t reserve_bytes;
} cli_budget;
#define CLI_BUDGET_DEFAULT                                                                         \
    {                                                                                              \
        0.92, 6ull << 30                                                                           \
    }
enum { CLI_O_UTIL = 960, CLI_O_RESERVE }; /* cli_budget_opt's ids */
#define CLI_BUDGET_OPTS                                                                            \
    {"util", 1, CLI_O_UTIL, "U",                                                                   \
     "KV capacity: fraction of memory the engine may use (default 0.92)"},                         \
    {                                                                                              \
        "reserve", 1, CLI_O_RESERVE, "SIZE",                                                       \
            "KV capacity: activations and runtime reserve (default 6GiB)"                          \
    }
/* Handles CLI_O_UTIL and CLI_O_RESERVE; CLI_NOT_MINE for any other id. */
int cli_budget_opt(cli_ctx *ctx, int id, const char *arg, void *user);
/* The group as a value: CLI_BUDGET_OPTS and cli_budget_opt on b. */
extern const cli_opt cli_budget_opts[];
#define CLI_BUDGET_GROUP(b)                                                                        \
    {                                                                                              \
        cli_budget_opts, cli_budget_opt, (b)                                                       \
    }

/* Does the step fit? rf_step_fit of o on ctx->hw's memory under budget b:
 * an assumption line with the rule, then in the current section `fits`
 * (JSON true/false; "fits: 15.1 GiB of the 67.3 GiB ..." / "does not fit:
 * needs ..., ... more than ...") and `memory_needed_bytes`. A hardware with no
 * memory size gives null and says to give --mem. what names the batch in
 * the line ("1 sequence at 1,024 positions"); out (NULL: not wanted)
 * receives the fit, and the return is its status. */
rf_status cli_fit(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                  const cli_budget *b, rf_fit *out);
/* The shown text of a fit ("fits: ..." / "does not fit: ..."), into buf. */
const char *cli_fit_text(const rf_fit *f, char *buf, size_t cap);
/* The rule's assumption line. */
void cli_assume_fit(rf_report *r, const rf_fit *f, const cli_ctx *ctx);

#endif
