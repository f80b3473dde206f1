/* core.h - what every command and every header of cli/ shares: exit codes,
 * the streams a command writes to (cli_io), the context cli_parse fills
 * (cli_ctx, with the run value cli_run), an option and a group of them.
 */
#ifndef RF_CLI_CORE_H
#define RF_CLI_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "roofline/rf_calib.h"
#include "roofline/rf_dtype.h"
#include "roofline/rf_gpu.h"
#include "roofline/rf_hw.h"
#include "roofline/rf_report.h"

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

/* What this command's --backend, --calibration and --quant said, and the
 * kernel tables they name, read once (gpu_predict.c, which reads and
 * writes it through the context; gpu_predict.h). The tables are the
 * command's: it calls cli_gpu_free before it returns. */
typedef struct cli_gpu_call {
    const char *backend, *calibration;
    const char *engine; /* --backend llamacpp: --calibration is its file */
    rf_gpu_quant quant;
    bool quant_given;
    rf_gpu_tables tables;
    bool loaded;
    char label[160];  /* "preset h100_sxm/vllm" or the --calibration DIR */
    unsigned missing; /* kinds predicted without a table (frontier's lines) */
} cli_gpu_call;

/* What this command's inputs resolved to, each file read once: resolve.c
 * fills it as it resolves MODEL and --hw, and what else a command takes
 * from the --hw profile (its calibration, its sustained memory roof) is
 * read from here (measure_view.c). cli_parse empties it with the rest of
 * the context, so nothing of one command line is left for the next. */
enum { CLI_INPUT_MODEL, CLI_INPUT_PROFILE, CLI_N_INPUTS };
typedef struct cli_run {
    char read[CLI_N_INPUTS][4096]; /* the files read: a config.json, a profile */
    bool hw_resolved;              /* --hw resolved into hw and hw_origin      */
    rf_hw hw;                      /* as --hw names it, before the overrides  */
    char hw_origin[160];
    bool profile;        /* --hw named a profile: the figures below */
    double sustained_bw; /* its sustained memory roof (0: none)     */
    bool calibrated;     /* calib holds the --hw profile's          */
    rf_calib calib;
    rf_step_pred pred[2]; /* cli_step_predict's last two steps       */
    unsigned next_pred;
    cli_gpu_call gpu; /* --predict on a GPU's kernel tables      */
} cli_run;

/* Global state after cli_parse(). */
typedef struct cli_ctx {
    const char *cmd;     /* subcommand name, for messages           */
    rf_format format;    /* --json / --csv / table                  */
    const char *hw_name; /* --hw as given (preset or profile path)  */
    rf_hw hw;            /* resolved, with overrides applied        */
    char hw_origin[160]; /* "preset h100-sxm (NVIDIA H100 ...)"     */
    rf_dtype w, a, kv;   /* resolved dtypes                         */
    bool w_given, a_given, kv_given;
    rf_dtype y; /* --out-dtype: what GEMMs write (y_given) */
    bool y_given;
    double ridge;         /* --ridge (0 = not given)                 */
    double peak_tflops;   /* --peak (0 = not given)                  */
    double bw_tbps;       /* --bw   (0 = not given)                  */
    uint64_t mem_bytes;   /* --mem  (0 = not given)                  */
    uint32_t group_size;  /* --group-size (0 = not given)            */
    const char *out_path; /* -o / --output (NULL = stdout)           */
    unsigned step_given;  /* CLI_GIVEN_* bits: step options typed    */
    const char *family;   /* --family NAME (NULL = from model_type)  */
    /* The MODEL read with --family: the family it was read as and the
     * model_type its file said (empty when read as its own family);
     * cli_emit says so in the output (cli_assume_family). */
    char family_as[32], family_from[32];
    cli_run run;      /* the inputs, resolved and read once      */
    const cli_io *io; /* where this command writes               */
} cli_ctx;

/* An option of a command or of a group commands share. */
typedef struct cli_opt {
    const char *name; /* long name without dashes                       */
    int has_arg;      /* 0 no, 1 required                               */
    int id;           /* passed to its group's handler                  */
    const char *arg;  /* "N", "LIST", ... for --help                    */
    const char *help; /* one line                                       */
    char letter;      /* its short form (-n), 0 for none; left out of
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

/* A command whose results are large (steps, a layout's, a figure) runs as
 * fn with state, a zeroed block of size bytes on the heap that is fn's for
 * the call and freed after it (state.c); out of memory: one line, exit 1. */
typedef int (*cli_state_fn)(const cli_io *io, int argc, char **argv, void *state);
int cli_with_state(const cli_io *io, int argc, char **argv, size_t size, cli_state_fn fn);

#endif
