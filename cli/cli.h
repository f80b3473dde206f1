/* cli.h - what every subcommand shares: global options, exit codes, model
 * and hardware resolution, and writing a report to stdout or a file.
 *
 * A subcommand is `int cmd_<name>(const cli_io *io, int argc, char **argv)`
 * listed in the table in entry.c, writing only to io. It declares its own options as a cli_opt array, calls
 * cli_parse() (which also handles every global option), resolves what it
 * needs, asks the library, builds one rf_report and hands it to
 * cli_emit(). No arithmetic lives in cli/.
 *
 * The declarations below are grouped by the file that defines them:
 * opts.c (parsing, errors), resolve.c (MODEL and --hw), assume.c
 * (assumption lines), output.c (stdout or a file), step_opts.c (the step
 * options), cmd_plot.c and cmd_step.c (what plot, report and step share),
 * budget.c (the memory budget and fit), then the subcommands.
 */
#ifndef RF_CLI_H
#define RF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roofline/rf_calib.h"
#include "roofline/rf_dtype.h"
#include "roofline/rf_error.h"
#include "roofline/rf_file.h"
#include "roofline/rf_hw.h"
#include "roofline/rf_measured_io.h"
#include "roofline/rf_model.h"
#include "roofline/rf_parallel.h"
#include "roofline/rf_plot.h"
#include "roofline/rf_report.h"
#include "roofline/rf_step.h"

/* Documented exit codes (docs/cli.md, `roofline --help`). */
enum {
    RF_EXIT_OK = 0,
    RF_EXIT_FAIL = 1,    /* a runtime failure: a check failed, memory    */
    RF_EXIT_USAGE = 2,   /* bad usage or bad input                       */
    RF_EXIT_UNAVAIL = 3, /* a backend or device is unavailable           */
    RF_EXIT_IO = 4       /* an output could not be written               */
};

/* Where a command writes: its report and --help to out, its one-line
 * errors, warnings and progress to err. The binary passes the process's
 * stdout and stderr (rf_cli_main); rf_cli_run passes memory streams of its
 * own, so two calls on two threads write to two places. err_tty: err is a
 * terminal (a progress line is shown there). */
typedef struct cli_io {
    FILE *out;
    FILE *err;
    bool err_tty;
} cli_io;

/* What this command's inputs resolved to, each file read once: resolve.c
 * fills it as it resolves MODEL and --hw, and what else a command takes
 * from the --hw profile (its calibration, its sustained memory roof) is
 * read from here (measure_view.c). cli_parse empties it with the rest of
 * the context, so nothing of one command line is left for the next. */
enum { CLI_INPUT_MODEL, CLI_INPUT_PROFILE, CLI_N_INPUTS };
typedef struct cli_run {
    char read[CLI_N_INPUTS][4096]; /* the files read: a config.json, a profile */
    bool hw_resolved;         /* --hw resolved into hw and hw_origin      */
    rf_hw hw;                 /* as --hw names it, before the overrides  */
    char hw_origin[160];
    bool profile;             /* --hw named a profile: the figures below */
    double sustained_bw;      /* its sustained memory roof (0: none)     */
    bool calibrated;          /* calib holds the --hw profile's          */
    rf_calib calib;
    rf_step_pred pred[2];     /* cli_step_predict's last two steps       */
    unsigned next_pred;
} cli_run;

/* Global state after cli_parse(). */
typedef struct cli_ctx {
    const char *cmd;          /* subcommand name, for messages           */
    rf_format format;         /* --json / --csv / table                  */
    const char *hw_name;      /* --hw as given (preset or profile path)  */
    rf_hw hw;                 /* resolved, with overrides applied        */
    char hw_origin[160];      /* "preset h100-sxm (NVIDIA H100 ...)"     */
    rf_dtype w, a, kv;        /* resolved dtypes                         */
    bool w_given, a_given, kv_given;
    rf_dtype y;               /* --out-dtype: what GEMMs write (y_given) */
    bool y_given;
    double ridge;             /* --ridge (0 = not given)                 */
    double peak_tflops;       /* --peak (0 = not given)                  */
    double bw_tbps;           /* --bw   (0 = not given)                  */
    uint64_t mem_bytes;       /* --mem  (0 = not given)                  */
    uint32_t group_size;      /* --group-size (0 = not given)            */
    const char *out_path;     /* -o / --output (NULL = stdout)           */
    unsigned step_given;      /* CLI_GIVEN_* bits: step options typed    */
    const char *family;       /* --family NAME (NULL = from model_type)  */
    /* The MODEL read with --family: the family it was read as and the
     * model_type its file said (empty when read as its own family);
     * cli_emit says so in the output (cli_assume_family). */
    char family_as[32], family_from[32];
    cli_run run;              /* the inputs, resolved and read once      */
    const cli_io *io;         /* where this command writes               */
} cli_ctx;

/* An option of a command or of a group commands share. */
typedef struct cli_opt {
    const char *name;   /* long name without dashes                       */
    int has_arg;        /* 0 no, 1 required                               */
    int id;             /* passed to its group's handler                  */
    const char *arg;    /* "N", "LIST", ... for --help                    */
    const char *help;   /* one line                                       */
    char letter;        /* its short form (-n), 0 for none; left out of
                           an initializer, none                           */
} cli_opt;

typedef int (*cli_opt_fn)(cli_ctx *ctx, int id, const char *arg, void *user);

/* A group of options and who handles them: opts ({0}-terminated), the
 * handler each of them is passed to with its id and the group's user
 * state. An id means something only within its group, so groups need no
 * agreement on ids. A command passes cli_parse its groups in the order
 * --help lists them, the list ending with {0}. */
typedef struct cli_opt_group {
    const cli_opt *opts;
    cli_opt_fn fn;
    void *user;
} cli_opt_group;

/* ---- opts.c: parsing and the one-line error ------------------------------- */

/* Parse argv: global options, the command's option groups (each option
 * passed to its group's handler), and positional arguments (left in
 * argv[*first_pos..argc-1]); groups may be NULL (none).
 * `--help` prints usage (usage line + options) to stdout and returns -1
 * after which the command returns RF_EXIT_OK. Errors print one line and
 * return RF_EXIT_USAGE; success returns RF_EXIT_OK. The handler returns
 * RF_EXIT_OK or an exit code after printing its one-line error via cli_fail.
 * hw/dtype overrides are not applied yet: call cli_resolve_hw. */
int cli_parse(cli_ctx *ctx, const cli_io *io, int argc, char **argv, const char *usage,
              const cli_opt_group *groups, int *first_pos);

/* Print "roofline <cmd>: <message>" on stderr and return code. */
int cli_fail(const cli_ctx *ctx, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Print an rf_err the same way, mapping its status to an exit code. */
int cli_fail_err(const cli_ctx *ctx, const rf_err *err);
int cli_exit_for(rf_status s);

/* The global options as bits, for cli_refuse_unused. */
enum { CLI_G_HW = 1, CLI_G_RIDGE = 2, CLI_G_PEAK = 4, CLI_G_BW = 8, CLI_G_MEM = 16,
       CLI_G_WDT = 32, CLI_G_ADT = 64, CLI_G_KVDT = 128, CLI_G_GROUP = 256,
       CLI_G_FAMILY = 512, /* --family: refused by the commands that read no MODEL */
       CLI_G_ROOF = CLI_G_HW | CLI_G_RIDGE | CLI_G_PEAK | CLI_G_BW | CLI_G_MEM,
       CLI_G_DTYPES = CLI_G_WDT | CLI_G_ADT | CLI_G_KVDT | CLI_G_GROUP };
/* A global option that does nothing in this command is refused, not
 * ignored: the first of `unused` the user gave prints "--kv-dtype: why"
 * and returns RF_EXIT_USAGE; none given returns RF_EXIT_OK. */
int cli_refuse_unused(const cli_ctx *ctx, unsigned unused, const char *why);

/* Parse helpers that print "roofline <cmd>: --opt: <why>" and return
 * RF_EXIT_USAGE on failure. */
int cli_i64(const cli_ctx *ctx, const char *opt, const char *text, int64_t lo, int64_t hi,
            int64_t *out);
int cli_f64(const cli_ctx *ctx, const char *opt, const char *text, double lo, double hi,
            double *out);
int cli_range(const cli_ctx *ctx, const char *opt, const char *text, int64_t hi,
              int64_t **vals, size_t *n);

/* ---- resolve.c: MODEL and --hw -------------------------------------------- */

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
int cli_model_hw_setup(cli_ctx *ctx, int argc, char **argv, int pos, rf_model *m,
                       rf_step_opts *o);

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

/* The roof of commands that run on this machine (bench, profile): --hw when
 * given (as cli_resolve_roof), else this CPU measured now with --quick on
 * `threads` threads (RF_ISA honoured, progress on a terminal). Defined in
 * lab/lab_roof.c, with the lab's commands. */
int cli_measured_roof(cli_ctx *ctx, int threads, rf_dtype_kind math, rf_roof *roof);

/* Dtypes for a model: the user's if given, else the model's weights dtype
 * for b_w and bf16 for activations and KV. Fills o->w/a/kv. */
void cli_apply_dtypes(const cli_ctx *ctx, const rf_model *m, rf_step_opts *o);

/* The files this command has read (the model's config.json, a hardware
 * profile) into list, NULL-terminated: an output never writes over one of
 * them. */
void cli_inputs(const cli_ctx *ctx, const char *list[CLI_N_INPUTS + 1]);

/* ---- assume.c: assumption lines ------------------------------------------- */

/* The standard assumption line: traffic model, dtypes, roof and its origin. */
void cli_assume_roof(const cli_ctx *ctx, rf_report *r, const rf_step_opts *o,
                     const rf_roof *roof);

/* Assumption lines for a step: the model, the traffic model in force, the
 * phase, and any MoE / MLA / sliding-window convention applied. */
void cli_assume_step(const cli_ctx *ctx, rf_report *r, const rf_model *m,
                     const rf_step_opts *o, const rf_step *st);
/* The noun that agrees with a count: one for n == 1, else many ("1 prompt",
 * "2 prompts"). */
const char *cli_plural(int64_t n, const char *one, const char *many);
/* The phase line: "decode: B sequences at context s ...", "prefill: B
 * prompts of T new tokens, nothing cached ..." (counts and nouns agreed). */
void cli_assume_phase(rf_report *r, const rf_step_opts *o);
/* The attention line: square (the output has prefill attention, q queries
 * against S keys) says "full S x S, no causal halving" or, under --causal,
 * the triangle's count and what it leaves unchanged; decode says only that
 * --causal changes nothing there. */
void cli_assume_attn(rf_report *r, const rf_step_opts *o, bool square);
/* The MoE line of a model with routed experts (nothing otherwise), from
 * the routing in o and, when st is given, the step's experts touched and
 * rows each, with what an expert row's columns mean. */
void cli_assume_moe(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st);
/* The same without the roof and phase lines (for sweeps, which pass st =
 * NULL: per-step figures such as the experts touched then vary by point). */
void cli_assume_model(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st);

/* The routed-expert columns of an operator table, after M: experts
 * streamed (experts_touched) and rows each runs (m_per_expert), 3
 * significant digits; "-" on other rows. Nothing when moe is false. */
void cli_expert_cols(rf_report *r, bool moe);
void cli_expert_cells(rf_report *r, const rf_op *op, bool moe);

/* The weights' dtypes as the resident and streamed bytes count them: "bf16",
 * or "mxfp4 (group 32, 1-byte scales), except attention, router, lm_head,
 * embed in bf16" for a checkpoint that quantizes some modules. Returns out. */
char *cli_weights_text(const rf_model *m, const rf_step_opts *o, char *out, size_t cap);
/* The module classes of an RF_MOD_BIT mask, ", "-joined ("attention,
 * router"), into out; returns out. */
char *cli_modules_text(uint32_t mask, char *out, size_t cap);
/* The layers unquantized_layer[] covers: the decoder's, then the MTP
 * layers' (at layers + i, as checkpoints number them). */
int64_t cli_layers_with_mtp(const rf_model *m);
/* Layers l in [from, to) whose unquantized_layer[l] keeps some module. */
int64_t cli_excluded_layers(const rf_model *m, int64_t from, int64_t to);
/* On an 8-bit math roof (W8A8 fp8 or int8): a line naming the operators
 * placed on it whose own dtypes are wider (modules kept in bf16, attention
 * over a bf16 cache), whose compute floors it therefore understates;
 * nothing otherwise. */
void cli_assume_math(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_roof *roof);

/* Assumption lines of a model alone: quantized modules, MLA, sliding
 * windows, and the notes its reader left. */
void cli_assume_arch(rf_report *r, const rf_model *m, const rf_step_opts *o);
/* A MODEL read with --family (ctx->family_as set): the assumption line
 * "family: read as F (--family); model_type was T" and the section
 * `family_forced` {read_as, model_type}; nothing otherwise. cli_emit calls
 * it; a streamed output (sweep) or a page (report) calls it on its head. */
void cli_assume_family(const cli_ctx *ctx, rf_report *r);
/* A model with Gated DeltaNet or Mamba2 layers (state, its
 * rf_model_state_bytes, nonzero): the line saying what a sequence's
 * recurrent state is and that memory fits count it beside the KV;
 * nothing when state is 0. */
void cli_assume_state(rf_report *r, const rf_model *m, uint64_t state);

/* ---- output.c: stdout or an atomic file ----------------------------------- */

/* Render r in ctx->format to stdout or ctx->out_path (written to a
 * temporary file in the same folder, then renamed), after
 * cli_assume_family. Frees nothing. */
int cli_emit(const cli_ctx *ctx, rf_report *r);

/* Write bytes to path atomically (temp + rename); "-" means stdout. */
int cli_write_file(const cli_ctx *ctx, const char *path, const char *data, size_t len);

/* An output written as it is made, so memory stays flat however large it
 * is: bytes put into buf reach stdout ("-" or NULL path) or an atomic file
 * (a temporary beside path, renamed over it at the end) about every MiB.
 * cli_out_open refuses a bad destination now (printing the error);
 * cli_out_close(o, rc) with rc 0 writes the rest and commits the file (its
 * failure is printed and returned); with rc != 0 it drops the file, leaving
 * the old one. Either way it frees o and returns the exit code. A sweep
 * watches buf.failed to stop early when the output cannot take more. */
typedef struct cli_out {
    rf_buf buf;             /* write here: rf_buf_put, a writer, rf_rows     */
    const cli_ctx *ctx;
    rf_file_writer *file;   /* NULL: standard output                         */
    rf_err err;             /* why the output failed                         */
    bool sink_failed;
} cli_out;

int cli_out_open(const cli_ctx *ctx, const char *path, cli_out *o);
int cli_out_close(cli_out *o, int rc);

/* ---- step_opts.c: the step options ---------------------------------------- */

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
enum { CLI_GIVEN_CONTEXT = 1, CLI_GIVEN_TOKENS = 2, CLI_GIVEN_MOE = 4,
       CLI_CLAMPED_CONTEXT = 8, CLI_CLAMPED_TOKENS = 16, /* a default cut to the model */
       CLI_GIVEN_PREDICT = 32,                            /* --predict                  */
       CLI_GIVEN_CAUSAL = 64, CLI_GIVEN_SQUARE = 128 };  /* --causal, --no-causal      */

/* Step options shared by step, sweep, plot, report, profile: put
 * CLI_STEP_OPTS in a command's cli_opt array and pass unknown ids to
 * cli_step_opt, which returns CLI_NOT_MINE for an id it does not own. */
enum { CLI_O_PHASE = 900, CLI_O_BATCH, CLI_O_CONTEXT, CLI_O_TOKENS, CLI_O_NAIVE, CLI_O_FUSED,
       CLI_O_MOE, CLI_O_CAUSAL, CLI_O_TRAFFIC, CLI_O_FUSE_ELEMENTWISE, CLI_O_PREDICT,
       CLI_O_NO_CAUSAL };
#define CLI_NOT_MINE (-2)
/* --causal: prefill attention scores the causal triangle, S (S + 1) / 2
 * query-key pairs, not the full S x S the lesson and the chapter count: the
 * default of every model-level command (cli_causal_default), an option of
 * `attn` and `ops`, the course's calculators, which count the square. */
#define CLI_CAUSAL_OPT                                                                         \
    {"causal", 0, CLI_O_CAUSAL, NULL, "prefill attention causal: S (S + 1) / 2 pairs, not S^2"}
/* --no-causal: a model-level command counts the full S x S instead */
#define CLI_NO_CAUSAL_OPT                                                                      \
    {"no-causal", 0, CLI_O_NO_CAUSAL, NULL,                                                    \
     "prefill attention as the full S x S (the course's count; default causal)"}
/* --traffic compulsory|full and --fuse-elementwise (full only): what the
 * bytes count (rf_traffic in rf_step.h) */
#define CLI_TRAFFIC_OPTS                                                                       \
    {"traffic", 1, CLI_O_TRAFFIC, "compulsory|full",                                           \
     "bytes counted (default compulsory): GEMM and attention only, or every kernel"},          \
    {"fuse-elementwise", 0, CLI_O_FUSE_ELEMENTWISE, NULL,                                      \
     "--traffic full: norms fused into the next GEMM's read, residuals into the norm"}
/* --predict: each operator's predicted time beside its floor, from the
 * calibration of the --hw profile (cli_calib_load, measure_view.h) */
#define CLI_PREDICT_OPT                                                                        \
    {"predict", 0, CLI_O_PREDICT, NULL,                                                       \
     "predicted times beside the floors, from the calibration of the --hw profile"}
/* --backend, --quant, --calibration: --predict on a GPU's kernel tables
 * (gpu_predict.h), in the commands that take them (step, generate, serve),
 * whose option handlers pass ids 980..982 to cli_gpu_opt */
enum { CLI_O_BACKEND = 980, CLI_O_QUANT, CLI_O_CALIBRATION };
#define CLI_GPU_OPTS                                                                           \
    {"backend", 1, CLI_O_BACKEND, "vllm|trtllm|sglang|llamacpp",                               \
     "--predict on the --hw GPU's kernel tables of this engine (data/gpu); llamacpp "         \
     "(step, generate): on its --calibration FILE"},                                         \
    {"quant", 1, CLI_O_QUANT, "fp8|fp8_block|nvfp4|mxfp4|int4_wo",                             \
     "the engine's quantization: weight and activation dtypes, and its tables' rows"},         \
    {"calibration", 1, CLI_O_CALIBRATION, "DIR|FILE",                                          \
     "--predict on an engine's directory of aiconfigurator-format tables of your own, or "     \
     "llama.cpp's calibration file"}
int cli_gpu_opt(cli_ctx *ctx, int id, const char *arg);
#define CLI_STEP_OPTS                                                                          \
    {"phase", 1, CLI_O_PHASE, "decode|prefill", "step phase (default decode)"},                \
    {"batch", 1, CLI_O_BATCH, "B", "sequences in the step (default 1)"},                      \
    {"context", 1, CLI_O_CONTEXT, "S",                                                         \
     "cached positions a sequence (default " CLI_STR(CLI_DEFAULT_CONTEXT) "; prefill 0)"},    \
    {"tokens", 1, CLI_O_TOKENS, "T",                                                           \
     "prefill only: new tokens a sequence (default " CLI_STR(CLI_DEFAULT_TOKENS) ")"},         \
    {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"},                    \
    CLI_CAUSAL_OPT,                                                                            \
    CLI_NO_CAUSAL_OPT,                                                                         \
    {"fused", 0, CLI_O_FUSED, NULL, "report qkv_proj and gate_up_proj fused"},               \
    CLI_TRAFFIC_OPTS,                                                                          \
    {"moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"}
int cli_step_opt(cli_ctx *ctx, int id, const char *arg, rf_step_opts *o);
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
int cli_step_fail(const cli_ctx *ctx, const rf_model *m, const rf_step_opts *o,
                  const rf_roof *roof, const rf_err *e, const char *const names[3]);

/* ---- cmd_plot.c, cmd_step.c: what plot, report and step share ------------- */

/* Figure commands (plot, report; cmd_plot.c): the options both take and
 * the figure both draw. Put CLI_FIGURE_OPTS in the cli_opt array and pass
 * their ids to cli_figure_opt (CLI_NOT_MINE for others). Decode runs B
 * sequences at context s (default CLI_DEFAULT_CONTEXT); prefill B prompts
 * of T tokens (default CLI_DEFAULT_TOKENS), nothing cached. */
typedef struct cli_figure {
    rf_step_opts opts;          /* as parsed: B, s, T and the switches    */
    const char *measured_path;  /* --measured FILE.json, or NULL          */
    rf_model model;
    rf_roof roof;
    rf_step_opts decode, prefill;
    rf_step decode_step, prefill_step;
    rf_measured measured;
    rf_plot plot;               /* fitted, ready to write                 */
} cli_figure;
enum { CLI_O_MEASURED = 950 };
#define CLI_FIGURE_OPTS                                                                        \
    {"batch", 1, CLI_O_BATCH, "B", "decode sequences, prefill prompts (default 1)"},           \
    {"context", 1, CLI_O_CONTEXT, "S",                                                         \
     "decode: cached positions a sequence (default " CLI_STR(CLI_DEFAULT_CONTEXT) ")"},       \
    {"tokens", 1, CLI_O_TOKENS, "T",                                                           \
     "prefill: new tokens a prompt (default " CLI_STR(CLI_DEFAULT_TOKENS) ")"},               \
    {"naive", 0, CLI_O_NAIVE, NULL, "attention materializes its scores"},                    \
    CLI_CAUSAL_OPT,                                                                            \
    CLI_NO_CAUSAL_OPT,                                                                         \
    {"fused", 0, CLI_O_FUSED, NULL, "qkv_proj and gate_up_proj fused"},                      \
    CLI_TRAFFIC_OPTS,                                                                          \
    {"moe-experts", 1, CLI_O_MOE, "uniform|all", "routed experts streamed (default uniform)"}, \
    {"measured", 1, CLI_O_MEASURED, "FILE.json", "draw measured roofs and operators too"}
void cli_figure_init(cli_figure *f);
int cli_figure_opt(cli_ctx *ctx, int id, const char *arg, cli_figure *f);
/* The start of plot and report: defaults, cli_parse (fn gets every option
 * id, user its state), the -o check (cli_check_output), MODEL and the roof,
 * both steps, --measured, the fitted figure. Returns -1 after --help (the
 * command then returns RF_EXIT_OK), else an exit code. */
int cli_figure_start(cli_ctx *ctx, const cli_io *io, int argc, char **argv, const char *usage,
                     const cli_opt_group *groups, cli_figure *f);

/* One step's operators as a report table: name, count, M, K, N, FLOPs and
 * bytes (summed over count), FLOP/B, regime, floor, bound by (cmd_step.c;
 * `report` prints the same columns). */
void cli_op_table(rf_report *r, const char *key, const char *label, const rf_step *st);
/* The same with --predict's columns (predicted_s, count x one instance, and
 * calibrated: yes or outside) when pr is not NULL (measure_view.h). */
struct rf_step_pred;
struct rf_generate_pred;
void cli_op_table_pred(rf_report *r, const char *key, const char *label, const rf_step *st,
                       const struct rf_step_pred *pr);

/* Check an output path before any work: its folder exists and takes a new
 * file, the path is not a folder, a device or an unwritable file, and not
 * one of the NULL-terminated inputs. One line and RF_EXIT_USAGE if not;
 * NULL or "-" (stdout) passes. */
int cli_check_output(const cli_ctx *ctx, const char *path, const char *const *inputs);

/* n outputs of one run (names[i] the option, paths[i] its file; NULL or
 * "-" skipped): an empty path is refused naming its option, and two that
 * are the same file (the same text, or the same folder and name once
 * symbolic links are followed) are refused naming both (output.c). */
int cli_outputs_distinct(const cli_ctx *ctx, size_t n, const char *const *names,
                         const char *const *paths);

/* ---- budget.c: the memory budget and fit ---------------------------------- */

/* The KV budget of capacity and report: --util and --reserve, with the
 * book chapter's defaults (0.92 of memory, a 6 GiB reserve). */
typedef struct cli_budget {
    double util;
    uint64_t reserve_bytes;
} cli_budget;
#define CLI_BUDGET_DEFAULT {0.92, 6ull << 30}
enum { CLI_O_UTIL = 960, CLI_O_RESERVE }; /* ids: step 900s, figure 950s, budget 960s */
#define CLI_BUDGET_OPTS                                                                        \
    {"util", 1, CLI_O_UTIL, "U", "KV capacity: fraction of memory the engine may use (default 0.92)"}, \
    {"reserve", 1, CLI_O_RESERVE, "SIZE", "KV capacity: activations and runtime reserve (default 6GiB)"}
/* Handles CLI_O_UTIL and CLI_O_RESERVE; CLI_NOT_MINE for any other id. */
int cli_budget_opt(cli_ctx *ctx, int id, const char *arg, cli_budget *b);

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

/* ---- the subcommands (main.c's table) ------------------------------------- */

/* Subcommands. */
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
int cmd_measure(const cli_io *io, int argc, char **argv); /* the measure views and CUDA
                                           branches: lab/lab_view.h */
int cmd_bench(const cli_io *io, int argc, char **argv);
int cmd_profile(const cli_io *io, int argc, char **argv);

/* ---- par_opts.c: many devices (rf_parallel.h) ----------------------------- */

/* --tp/--pp/--ep/--dp (degrees, default 1), --overlap, and the link
 * overrides --link-bw GBPS (scale-up, a direction), --link-latency US (a
 * hop within a node), --devices-per-node N; 0 = the preset's. */
typedef struct cli_par {
    rf_layout layout;
    bool overlap;
    double link_bw_gbps, link_latency_us;
    int64_t devices_per_node;
} cli_par;
#define CLI_PAR_DEFAULT {{1, 1, 1, 1}, false, 0, 0, 0}
enum { CLI_O_TP = 970, CLI_O_PP, CLI_O_EP, CLI_O_DP, CLI_O_OVERLAP, CLI_O_LINK_BW,
       CLI_O_LINK_LAT, CLI_O_DPN }; /* ids 970s */
#define CLI_PAR_OPTS                                                                           \
    {"tp", 1, CLI_O_TP, "T", "tensor-parallel devices (default 1)"},                           \
    {"pp", 1, CLI_O_PP, "P", "pipeline stages (default 1)"},                                   \
    {"ep", 1, CLI_O_EP, "E", "expert-parallel devices: TP groups of E / T replicas (default 1)"}, \
    {"dp", 1, CLI_O_DP, "D", "data-parallel replicas (default 1)"},                            \
    {"overlap", 0, CLI_O_OVERLAP, NULL, "also the bound where communication hides"},          \
    CLI_LINK_OPTS
/* The link overrides alone (plan, which chooses the layout itself). */
#define CLI_LINK_OPTS                                                                          \
    {"link-bw", 1, CLI_O_LINK_BW, "GBPS", "scale-up link, GB/s a direction (the preset's unless given)"}, \
    {"link-latency", 1, CLI_O_LINK_LAT, "US", "latency of a hop within a node, us (default 1)"}, \
    {"devices-per-node", 1, CLI_O_DPN, "N", "devices the scale-up link joins (the preset's unless given)"}
/* Handles the CLI_O_TP..CLI_O_DPN ids; CLI_NOT_MINE for any other. */
int cli_par_opt(cli_ctx *ctx, int id, const char *arg, cli_par *p);
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
                          const rf_roof *roof, const cli_budget *b, const cli_par *p,
                          rf_par *out, rf_err *err);
/* The layout's assumption lines (links with their origin, the cost model);
 * l NULL: of many layouts (plan). */
void cli_par_assume(rf_report *r, const rf_hw_links *k, const rf_layout *l);
/* The layout section: devices, fit, floors, tokens/s, bubble, share; the
 * stage table and the collectives as operator rows. */
void cli_par_section(const cli_ctx *ctx, rf_report *r, const rf_par *par, const cli_par *p);
int cmd_plan(const cli_io *io, int argc, char **argv); /* cmd_plan.c: the layouts that fit, ranked */
/* Figure 1 of a layout (plot, report; cmd_plot.c): both steps on it into
 * dec and pre (static storage: large), and f->plot rebuilt from a device
 * of the slowest stage, its operators and collectives on the link roofs
 * (rf_plot_add_layout). rf_layout_validate's refusal or the compute's
 * error printed; RF_EXIT_OK otherwise. */
int cli_figure_layout(cli_ctx *ctx, cli_figure *f, const cli_budget *b, const cli_par *p,
                      rf_par *dec, rf_par *pre);

/* ---- cmd_measure_mpi.c: measure --mpi ------------------------------------- */

/* A cluster measured with MPI, on every rank (cmd_measure.c's --mpi): the
 * node roofs and the links into p (rf_hw_profile.cluster), written by rank
 * 0. Exit 3 when built without MPI; a failing rank aborts every rank. */
typedef struct cli_mpi_args {
    int64_t threads;          /* the node's lab (0: one a core of its ranks) */
    bool quick;
    const char *isa;
    double timeout_s;         /* --timeout: a rank past it fails (0: none)   */
} cli_mpi_args;
struct rf_hw_profile;
int cli_mpi_measure(cli_ctx *ctx, const cli_mpi_args *a, struct rf_hw_profile *p);

/* ---- measure_view.c: --predict on step, report and sweep ------------------ */

/* --predict where it is not supported (what names it): refused, exit 2. */
int cli_predict_refuse(const cli_ctx *ctx, bool unsupported, const char *what);
/* With --predict: the step predicted on the --hw profile's calibration
 * (*out, in ctx->run, which holds two steps at a time), or a one-line
 * refusal saying how to make one; without it *out = NULL. An exit code. */
int cli_step_predict(cli_ctx *ctx, const rf_step_opts *o, const rf_step *st,
                     const struct rf_step_pred **out);
/* The operator table's columns and cells (nothing when pr is NULL). */
void cli_pred_cols(rf_report *r, const struct rf_step_pred *pr);
void cli_pred_cells(rf_report *r, const struct rf_step_pred *pr, const rf_step *st, size_t i);
/* The step's predicted time and tokens/s, in a section of their own (key,
 * label), labelled a prediction. */
void cli_pred_totals(rf_report *r, const struct rf_step_pred *pr, const char *key,
                     const char *label);
/* The prediction's assumption line alone (sweep's head); a step's predicted
 * time and tokens/s (0 when pr is NULL). */
void cli_pred_assume(rf_report *r);
/* A generation predicted, whichever calibration made it (the profile's,
 * or an engine's, rf_engine_gen.g): the rows TTFT .. output tokens/s of a
 * section "predicted", and the bands' rows (TPOT rows null with one
 * output token). */
void cli_pred_gen_times(rf_report *r, const struct rf_generate_pred *g);
void cli_pred_gen_bands(rf_report *r, const struct rf_generate_pred *g);
double cli_pred_step_s(const struct rf_step_pred *pr);
double cli_pred_tokens_per_s(const struct rf_step_pred *pr);
/* Figure 1's second memory roof: the --hw profile's sustained one (the
 * median DRAM read), dashed beside the best, when the profile has it. */
void cli_plot_sustained(const cli_ctx *ctx, rf_plot *plot);

#endif
