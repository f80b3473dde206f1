/* request.h - what generate, serve and frontier share: a request's prompt
 * and output lengths, and the step switches and memory budget every one of
 * them passes on (request.c). */
#ifndef RF_CLI_REQUEST_H
#define RF_CLI_REQUEST_H

#include "budget.h"
#include "core.h"
#include "par_opts.h"
#include "step_opts.h"
#include "roofline/rf_serve.h"

/* cli_request_opt's and cli_spec_opt's ids (an id means something to its
 * group's handler alone: the value ranges of the groups are not a contract) */
enum {
    CLI_O_PROMPT = 1100,
    CLI_O_OUTPUT,
    CLI_O_DRAFT,
    CLI_O_SPEC_K,
    CLI_O_ACCEPT,
    CLI_O_PREFIX,
    CLI_O_PREFIX_KERNEL
};

#define CLI_REQUEST_LEN_OPTS                                                                       \
    {"prompt", 1, CLI_O_PROMPT, "P", "prompt tokens a request (required)"},                        \
    {                                                                                              \
        "output-tokens", 1, CLI_O_OUTPUT, "N", "output tokens a request (required)", 'n'           \
    }
/* The step switches a request passes on (cli_step_opt's ids). */
#define CLI_REQUEST_STEP_OPTS                                                                      \
    {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"}, CLI_CAUSAL_OPT,          \
        CLI_NO_CAUSAL_OPT, CLI_TRAFFIC_OPTS,                                                       \
    {                                                                                              \
        "moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"    \
    }

/* Speculative decoding and prefix caching (generate and serve). */
#define CLI_REQUEST_SPEC_OPTS                                                                      \
    {"draft", 1, CLI_O_DRAFT, "MODEL|mtp",                                                         \
     "speculative decoding with this draft (mtp: the model's own MTP layers)"},                    \
        {"spec-k", 1, CLI_O_SPEC_K, "K", "--draft: tokens speculated an iteration (default 4)"},   \
        {"accept", 1, CLI_O_ACCEPT, "ALPHA",                                                       \
         "--draft: acceptance a token, in [0, 1] (default 0.8)"},                                  \
        {"shared-prefix", 1, CLI_O_PREFIX, "P_s",                                                  \
         "prompt tokens every request shares (default 0)"},                                        \
    {                                                                                              \
        "prefix-kernel", 1, CLI_O_PREFIX_KERNEL, "common|cascade",                                 \
            "--shared-prefix: decode reads it once a sequence or once a step (default common)"     \
    }

typedef struct cli_spec {
    const char *draft; /* --draft MODEL, or NULL                    */
    int64_t k;         /* --spec-k                                  */
    double accept;     /* --accept                                  */
    bool k_given, accept_given, kernel_given;
    rf_prefix prefix; /* --shared-prefix, --prefix-kernel          */
} cli_spec;
#define CLI_SPEC_DEFAULT                                                                           \
    {                                                                                              \
        NULL, 4, 0.8, false, false, false, { 0, false }                                            \
    }

/* The ids of CLI_REQUEST_SPEC_OPTS, a group's handler (user: the
 * cli_spec); CLI_NOT_MINE for any other. */
int cli_spec_opt(cli_ctx *ctx, int id, const char *arg, void *user);
/* The options that need another: --spec-k/--accept need --draft,
 * --prefix-kernel needs --shared-prefix, which fits in the prompt and does
 * not go with --draft. One line and RF_EXIT_USAGE, else RF_EXIT_OK. */
int cli_spec_check(const cli_ctx *ctx, const cli_spec *sp, int64_t prompt);
/* --predict on a request (generate, serve): refused, one line, on a layout,
 * with --draft and with the cascade prefix kernel, which no calibration
 * times. RF_EXIT_OK when none of them (or no --predict). */
int cli_spec_predict_refuse(const cli_ctx *ctx, const cli_spec *sp, bool layout);
/* The draft model of --draft and its step options: o's switches, the
 * draft's own dtypes. --draft mtp: the target m's MTP layers as the draft
 * (rf_model_mtp_draft), refused in one line when m has none; any other
 * name is a MODEL read as its own family (--family is the target's). */
#define CLI_DRAFT_MTP "mtp"
int cli_spec_draft(cli_ctx *ctx, const cli_spec *sp, const rf_model *m, const rf_step_opts *o,
                   rf_model *d, rf_step_opts *draft_o);

/* The latency-throughput frontier of `frontier` (cmd_frontier.c), which
 * `report` draws too: static batches 1..n, the KV limit, the batch where
 * the KV read reaches the weights. */
typedef struct cli_frontier {
    int64_t prompt, output;    /* P, N                                    */
    int64_t n;                 /* batches 1..n                            */
    int64_t cap;               /* the KV pool's largest batch; -1 unknown */
    int64_t cross;             /* rf_frontier_weights_cross               */
    rf_frontier_point *points; /* n of them; cli_frontier_free frees      */
} cli_frontier;
/* n = max_batch, else the KV limit, else fallback (0: an error naming
 * --max-batch or --mem). par (NULL or none wanted: one device) puts every
 * point on its layout (rf_frontier_par_compute: tokens/s a device, a
 * replica's KV limit). Prints its one-line error; returns the exit code. */
int cli_frontier_build(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                       const rf_roof *roof, const cli_budget *b, const cli_par *par, int64_t prompt,
                       int64_t output, int64_t max_batch, int64_t fallback, cli_frontier *fr);
void cli_frontier_free(cli_frontier *fr);
/* The frontier's section (key may be NULL): batches, KV limit, weights
 * crossing, the points on each front. */
void cli_frontier_summary(rf_report *r, const char *key, const char *label, const cli_frontier *fr);
/* The figure (rf_frontier_svg_write, the limits marked where drawn). */
int cli_frontier_svg(const cli_ctx *ctx, const cli_frontier *fr, const char *title, rf_buf *out);
/* The curve under load (cmd_frontier.c): the closed loop's capacity and
 * twelve open-loop rates at prompt and output on one device or par's
 * layout, P_q TTFT and TPOT of each (marks gives the SLOs and q); a
 * section "load" and a table "load_points" in r, the figure
 * (rf_load_svg_write) appended to svg. Returns the exit code. */
struct cli_sim;
int cli_load_curve(const cli_ctx *ctx, rf_report *r, const rf_model *m, const rf_step_opts *o,
                   const rf_roof *roof, const cli_budget *b, const cli_par *par, int64_t prompt,
                   int64_t output, const struct cli_sim *marks, const char *title, rf_buf *svg);

typedef struct cli_request {
    rf_step_opts o; /* the switches; batch as the command sets it */
    cli_budget budget;
    int64_t prompt, output; /* 0 until given                              */
} cli_request;
#define CLI_REQUEST_DEFAULT                                                                        \
    {                                                                                              \
        rf_step_opts_default(), CLI_BUDGET_DEFAULT, 0, 0                                           \
    }

/* --prompt and --output-tokens (CLI_REQUEST_LEN_OPTS), a group's handler
 * (user: the cli_request); CLI_NOT_MINE for any other id. */
int cli_request_opt(cli_ctx *ctx, int id, const char *arg, void *user);
/* The groups as values: the lengths; the step switches and then the
 * memory budget (CLI_REQUEST_STEP_OPTS, CLI_BUDGET_OPTS: two groups, each
 * to its own handler, in --help's order); speculation and prefixes. */
extern const cli_opt cli_request_len_opts[], cli_request_step_opts[], cli_request_spec_opts[];
#define CLI_REQUEST_LEN_GROUP(rq)                                                                  \
    {                                                                                              \
        cli_request_len_opts, cli_request_opt, (rq)                                                \
    }
#define CLI_REQUEST_STEP_GROUPS(rq)                                                                \
    {cli_request_step_opts, cli_step_opt, &(rq)->o}, CLI_BUDGET_GROUP(&(rq)->budget)
#define CLI_REQUEST_SPEC_GROUP(sp)                                                                 \
    {                                                                                              \
        cli_request_spec_opts, cli_spec_opt, (sp)                                                  \
    }
/* After parsing: both lengths given, or one line and RF_EXIT_USAGE. */
int cli_request_check(const cli_ctx *ctx, const cli_request *r);

#endif
