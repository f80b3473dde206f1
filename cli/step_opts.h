/* step_opts.h - the step options shared by the model commands: their
 * table entries, defaults and refusals (step_opts.c). */
#ifndef RF_CLI_STEP_OPTS_H
#define RF_CLI_STEP_OPTS_H

#include "core.h"
#include <stdbool.h>
#include <stdint.h>
#include "roofline/rf_model.h"
#include "roofline/rf_step.h"

/* The one documented default context and prefill length of every command
 * (step, sweep, plot, report, capacity, profile): the book chapter's 1024, which is
 * also SGLang's default input length. Clamped to a model's
 * max_position_embeddings where that is smaller (and said so). */
#define CLI_DEFAULT_CONTEXT 1024
#define CLI_DEFAULT_TOKENS 1024
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x) /* a default in a help string */

/* Which step options the user typed (cli_ctx.step_given), so a default
 * applies only where none was given and an option that does nothing in the
 * chosen mode is refused (cli_step_defaults). */
enum {
    CLI_GIVEN_CONTEXT = 1,
    CLI_GIVEN_TOKENS = 2,
    CLI_GIVEN_MOE = 4,
    CLI_CLAMPED_CONTEXT = 8,
    CLI_CLAMPED_TOKENS = 16, /* a default cut to the model */
    CLI_GIVEN_PREDICT = 32,  /* --predict                  */
    CLI_GIVEN_CAUSAL = 64,
    CLI_GIVEN_SQUARE = 128
}; /* --causal, --no-causal      */

/* Step options shared by step, sweep, plot, report, profile: a group
 * (CLI_STEP_GROUP below, or a table of some of them with cli_step_opt).
 * An id means something to its group's handler alone: cli_parse passes an
 * option to the handler of the group whose table holds it, and no handler
 * passes an id on to another. The groups' values differ (900s here, the
 * budget's 960s, the layout's 970s, the GPU's 980s, a request's 1100s, a
 * simulation's 1200s, a command's own from 1000) to be told apart in a
 * debugger, not as a contract. */
enum {
    CLI_O_PHASE = 900,
    CLI_O_BATCH,
    CLI_O_CONTEXT,
    CLI_O_TOKENS,
    CLI_O_NAIVE,
    CLI_O_FUSED,
    CLI_O_MOE,
    CLI_O_CAUSAL,
    CLI_O_TRAFFIC,
    CLI_O_FUSE_ELEMENTWISE,
    CLI_O_PREDICT,
    CLI_O_NO_CAUSAL
};
#define CLI_NOT_MINE (-2)
/* --causal: prefill attention scores the causal triangle, S (S + 1) / 2
 * query-key pairs, not the full S x S the lesson and the chapter count: the
 * default of every model-level command (cli_causal_default), an option of
 * `attn` and `ops`, the course's calculators, which count the square. */
#define CLI_CAUSAL_OPT                                                                             \
    {                                                                                              \
        "causal", 0, CLI_O_CAUSAL, NULL, "prefill attention causal: S (S + 1) / 2 pairs, not S^2"  \
    }
/* --no-causal: a model-level command counts the full S x S instead */
#define CLI_NO_CAUSAL_OPT                                                                          \
    {                                                                                              \
        "no-causal", 0, CLI_O_NO_CAUSAL, NULL,                                                     \
            "prefill attention as the full S x S (the course's count; default causal)"             \
    }
/* --traffic compulsory|full and --fuse-elementwise (full only): what the
 * bytes count (rf_traffic in rf_step.h) */
#define CLI_TRAFFIC_OPTS                                                                           \
    {"traffic", 1, CLI_O_TRAFFIC, "compulsory|full",                                               \
     "bytes counted (default compulsory): GEMM and attention only, or every kernel"},              \
    {                                                                                              \
        "fuse-elementwise", 0, CLI_O_FUSE_ELEMENTWISE, NULL,                                       \
            "--traffic full: norms fused into the next GEMM's read, residuals into the norm"       \
    }
/* --predict: each operator's predicted time beside its floor, from the
 * calibration of the --hw profile (cli_calib_load, measure_view.h) */
#define CLI_PREDICT_OPT                                                                            \
    {                                                                                              \
        "predict", 0, CLI_O_PREDICT, NULL,                                                         \
            "predicted times beside the floors, from the calibration of the --hw profile"          \
    }
/* --backend, --quant, --calibration: --predict on a GPU's kernel tables
 * (gpu_predict.h), in the commands that take them (step, generate, serve),
 * whose groups pass them to cli_gpu_opt (CLI_GPU_GROUP) */
enum { CLI_O_BACKEND = 980, CLI_O_QUANT, CLI_O_CALIBRATION };
#define CLI_GPU_OPTS                                                                               \
    {"backend", 1, CLI_O_BACKEND, "vllm|trtllm|sglang|llamacpp",                                   \
     "--predict on the --hw GPU's kernel tables of this engine (data/gpu); llamacpp "              \
     "(step, generate): on its --calibration FILE"},                                               \
        {"quant", 1, CLI_O_QUANT, "fp8|fp8_block|nvfp4|mxfp4|int4_wo",                             \
         "the engine's quantization: weight and activation dtypes, and its tables' rows"},         \
    {                                                                                              \
        "calibration", 1, CLI_O_CALIBRATION, "DIR|FILE",                                           \
            "--predict on an engine's directory of aiconfigurator-format tables of your own, or "  \
            "llama.cpp's calibration file"                                                         \
    }
int cli_gpu_opt(cli_ctx *ctx, int id, const char *arg);
#define CLI_STEP_OPTS                                                                              \
    {"phase", 1, CLI_O_PHASE, "decode|prefill", "step phase (default decode)"},                    \
        {"batch", 1, CLI_O_BATCH, "B", "sequences in the step (default 1)"},                       \
        {"context", 1, CLI_O_CONTEXT, "S",                                                         \
         "cached positions a sequence (default " CLI_STR(CLI_DEFAULT_CONTEXT) "; prefill 0)"},     \
        {"tokens", 1, CLI_O_TOKENS, "T",                                                           \
         "prefill only: new tokens a sequence (default " CLI_STR(CLI_DEFAULT_TOKENS) ")"},         \
        {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"}, CLI_CAUSAL_OPT,      \
        CLI_NO_CAUSAL_OPT,                                                                         \
        {"fused", 0, CLI_O_FUSED, NULL, "report qkv_proj and gate_up_proj fused"},                 \
        CLI_TRAFFIC_OPTS,                                                                          \
    {                                                                                              \
        "moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"    \
    }
/* The handler of the step options' ids, a group's (user: the rf_step_opts
 * they set); CLI_NOT_MINE for another id. */
int cli_step_opt(cli_ctx *ctx, int id, const char *arg, void *user);
/* The groups as values ({0}-terminated tables): every step option, --predict
 * (both handled by cli_step_opt), and --backend, --quant, --calibration
 * (cli_gpu_opt, through cli_gpu_group_opt). A command that takes a few of
 * the step options, or words them its own way, passes cli_step_opt a table
 * of its own with the same ids. */
extern const cli_opt cli_step_opts[], cli_predict_opts[], cli_gpu_opts[];
#define CLI_STEP_GROUP(o)                                                                          \
    {                                                                                              \
        cli_step_opts, cli_step_opt, (o)                                                           \
    }
#define CLI_PREDICT_GROUP(o)                                                                       \
    {                                                                                              \
        cli_predict_opts, cli_step_opt, (o)                                                        \
    }
static inline int cli_gpu_group_opt(cli_ctx *ctx, int id, const char *arg, void *user)
{
    (void)user;
    return cli_gpu_opt(ctx, id, arg);
}
#define CLI_GPU_GROUP                                                                              \
    {                                                                                              \
        cli_gpu_opts, cli_gpu_group_opt, NULL                                                      \
    }
/* After parsing and MODEL: the documented defaults where the user gave
 * none (context CLI_DEFAULT_CONTEXT in decode, 0 before a prefill, which
 * is a fresh prompt of CLI_DEFAULT_TOKENS; figure: the decode's context
 * whatever o->phase), and the refusals of options that do nothing here:
 * --tokens in a decode step (unless figure, whose prefill takes it),
 * --moe-experts on a model with no routed experts. */
int cli_step_defaults(cli_ctx *ctx, const rf_model *m, rf_step_opts *o, bool figure);
/* Prefill attention of a model-level command: causal unless --no-causal
 * (cli_step_defaults calls it; so does a command without the other
 * defaults); --causal with --no-causal is refused. */
int cli_causal_default(cli_ctx *ctx, rf_step_opts *o);
/* CLI_DEFAULT_CONTEXT, or the model's max_context where that is smaller
 * (then CLI_CLAMPED_CONTEXT is set, for cli_context_check to say so). */
int64_t cli_default_context(cli_ctx *ctx, const rf_model *m);
/* The model's context limit in r. CLI_CTX_LINES: an assumption line for
 * each default clamped to it and a warning line when `positions` (a
 * sequence's, the largest asked) pass it; CLI_CTX_KEY:
 * `context_beyond_model_max` in the current section (JSON true/false; null
 * when the model states no limit). */
enum { CLI_CTX_LINES = 1, CLI_CTX_KEY = 2 };
void cli_context_check(const cli_ctx *ctx, rf_report *r, const rf_model *m, int64_t positions,
                       unsigned what);
/* A failed rf_step_compute of o, printed: an overflow (RF_ERANGE) names the
 * option(s) whose size caused it (rf_step_range_blame) with the value typed,
 * "--batch 1000000000000: too large for llama-3-8b (q_proj: ...)"; names
 * are the options of B, s and T (NULL: --batch, --context, --tokens).
 * Any other error prints as cli_fail_err. Returns the exit code. */
int cli_step_fail(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o, const rf_roof *roof,
                  const rf_err *e, const char *const names[3]);

#endif
