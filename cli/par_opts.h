/* par_opts.h - many devices (rf_parallel.h): the layout options and the
 * layout's section (par_opts.c). */
#ifndef RF_CLI_PAR_OPTS_H
#define RF_CLI_PAR_OPTS_H

#include "core.h"
#include <stdbool.h>
#include "budget.h"
#include "roofline/rf_parallel.h"

/* --tp/--pp/--ep/--dp (degrees, default 1), --overlap, and the link
 * overrides --link-bw GBPS (scale-up, a direction), --link-latency US (a
 * hop within a node), --devices-per-node N; 0 = the preset's. */
typedef struct cli_par {
    rf_layout layout;
    bool overlap;
    double link_bw_gbps, link_latency_us;
    int64_t devices_per_node;
} cli_par;
#define CLI_PAR_DEFAULT                                                                            \
    {                                                                                              \
        {1, 1, 1, 1}, false, 0, 0, 0                                                               \
    }
enum {
    CLI_O_TP = 970,
    CLI_O_PP,
    CLI_O_EP,
    CLI_O_DP,
    CLI_O_OVERLAP,
    CLI_O_LINK_BW,
    CLI_O_LINK_LAT,
    CLI_O_DPN
}; /* cli_par_opt's ids */
#define CLI_PAR_OPTS                                                                               \
    {"tp", 1, CLI_O_TP, "T", "tensor-parallel devices (default 1)"},                               \
        {"pp", 1, CLI_O_PP, "P", "pipeline stages (default 1)"},                                   \
        {"ep", 1, CLI_O_EP, "E",                                                                   \
         "expert-parallel devices: TP groups of E / T replicas (default 1)"},                      \
        {"dp", 1, CLI_O_DP, "D", "data-parallel replicas (default 1)"},                            \
        {"overlap", 0, CLI_O_OVERLAP, NULL, "also the bound where communication hides"},           \
        CLI_LINK_OPTS
/* The link overrides alone (plan, which chooses the layout itself). */
#define CLI_LINK_OPTS                                                                              \
    {"link-bw", 1, CLI_O_LINK_BW, "GBPS",                                                          \
     "scale-up link, GB/s a direction (the preset's unless given)"},                               \
        {"link-latency", 1, CLI_O_LINK_LAT, "US",                                                  \
         "latency of a hop within a node, us (default 1)"},                                        \
    {                                                                                              \
        "devices-per-node", 1, CLI_O_DPN, "N",                                                     \
            "devices the scale-up link joins (the preset's unless given)"                          \
    }
/* Handles the CLI_O_TP..CLI_O_DPN ids; CLI_NOT_MINE for any other. */
int cli_par_opt(cli_ctx *ctx, int id, const char *arg, cli_par *p);
/* cli_par_opt as a group's handler (user: the cli_par), for a table of
 * CLI_PAR_OPTS or a command's own wording of some of them. */
static inline int cli_par_group_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    return cli_par_opt(ctx, id, arg, user);
}

/* True when any of them was given (else the output stays today's). */
bool cli_par_wanted(const cli_par *p);
/* ctx->hw's links with the overrides applied, their origin saying which. */
void cli_par_links(const cli_ctx *ctx, const cli_par *p, rf_hw_links *out);
/* rf_layout_validate's refusal, printed (exit 2); RF_EXIT_OK otherwise. */
int cli_par_check(const cli_ctx *ctx, const rf_model *m, const cli_par *p);
/* The layout, links (overrides applied) and ctx->hw's memory under b. */
rf_par_opts cli_par_opts(const cli_ctx *ctx, const cli_budget *b, const cli_par *p);
/* cli_par_check, then cli_par_opts into *po, refusing a device without a
 * memory size (one line, exit 2); RF_EXIT_OK otherwise. */
int cli_par_setup(const cli_ctx *ctx, const rf_model *m, const cli_budget *b, const cli_par *p,
                  rf_par_opts *po);
/* rf_par_compute on ctx->hw's memory under budget b. */
rf_status cli_par_compute(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                          const rf_roof *roof, const cli_budget *b, const cli_par *p, rf_par *out,
                          rf_err *err);
/* The layout's assumption lines (links with their origin, the cost model);
 * l NULL: of many layouts (plan). */
void cli_par_assume(rf_report *r, const rf_hw_links *k, const rf_layout *l);
/* The layout section: devices, fit, floors, tokens/s, bubble, share; the
 * stage table and the collectives as operator rows. */
void cli_par_section(const cli_ctx *ctx, rf_report *r, const rf_par *par, const cli_par *p);

#endif
