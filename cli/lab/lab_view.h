/* lab_view.h - what the lab's commands (`measure`, `bench gemm`, `profile`)
 * share on the CPU and on CUDA: the views of measured figures (lab_view.c)
 * and the CUDA branches (measure_cuda.c, bench_cuda.c). A measured
 * profile as the analytic commands read it is ../measure_view.h's. */
#ifndef RF_CLI_LAB_VIEW_H
#define RF_CLI_LAB_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "roofline/rf_hw_profile.h"
#include "roofline/rf_measure_summary.h"

/* ---- views (lab_view.c) ----------------------------------------------- */

/* The columns of `bench gemm`, CPU and CUDA (`dtype` is a column when the
 * sweep mixes dtypes). Rows follow in column order. */
void cli_gemm_table(rf_report *r, bool with_dtype);

/* A profile's kernels of one unit ("bytes_per_s", "flops_per_s") as a report
 * table: name, level, working set, best, median, min, max, spread. */
void cli_kernel_table(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s,
                      const char *unit, const char *key, const char *label, rf_unit u);

/* The unsteady-kernels warning under a profile's tables, when any kernel's
 * best and median are more than RF_SPREAD_WARN apart. */
void cli_unsteady_note(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s);

/* A measured profile's output. cli_profile_json writes its JSON to -o FILE,
 * and prints it (setting *printed) for --json or -o -; otherwise the caller
 * builds its table and shows it with cli_profile_emit, which prints it on
 * the command's output with a "profile written" note when -o FILE took the JSON. */
int cli_profile_json(const cli_ctx *ctx, const rf_hw_profile *p, bool *printed);
int cli_profile_emit(const cli_ctx *ctx, rf_report *r);

/* bench gemm's shapes: the linear layers of m's decode step in dtype dt on
 * roof, de-duplicated by K x N (rf_step_gemm_shapes), into
 * shapes[RF_STEP_MAX_OPS], *n of them. The step is the heap's for the call.
 * Prints and returns the exit code on failure. */
int cli_gemm_shapes(const cli_ctx *ctx, const rf_model *m, rf_dtype_kind dt, const rf_roof *roof,
                    rf_gemm_shape *shapes, size_t *n);

/* ---- the sustained roof and the calibration (lab_view.c) ----------------- */

/* The roof section's sustained memory roof row, when the profile has one. */
void cli_sustained_row(rf_report *r, const rf_hw_profile *p);

/* The summary's one memory roof (the most the DRAM bursts showed, which
 * floors use) with its spread beside it: the bursts' median best and
 * interquartile range, bursts x trials, runs pooled. */
void cli_memory_roof_rows(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s);
/* The other memory roofs, labelled, each with what uses it. */
void cli_memory_roofs_detail(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s);
/* The warning when the bursts' bests span more than RF_ROOF_MOVES of the
 * roof: another run could read much lower. */
void cli_roof_moves_note(rf_report *r, const rf_hw_profile *p, const rf_hw_profile_summary *s);

/* The calibration's fit per kind (overhead, one efficiency, residuals) and
 * its series, when p has one. */
void cli_calib_tables(rf_report *r, const rf_hw_profile *p);

/* ---- the --device cuda[:N] branches ------------------------------------- */

/* measure (measure_cuda.c): fills *p (with calibrate, p->calib too:
 * rf_cuda_calibrate) and writes the profile and report as the CPU branch
 * does. bench (bench_cuda.c): sweeps M (tokens, NULL for the default list) over the model's shapes in bf16 and fp8 (sm_89+),
 * or in *dtype when given; trials is --trials, or 0 for
 * rf_cuda_timing_default's. Both return an exit code (3: no device). */
int cli_cuda_measure(cli_ctx *ctx, const char *device, bool quick, bool calibrate,
                     rf_hw_profile *p);
/* measure --compare-calibration A B (measure_cuda.c): the kernel tables
 * of folder A against those of B (the n positional arguments: exactly one),
 * floors on --hw (rf_gpu_compare.h); `other` says a measuring option was
 * given too (refused). An exit code. */
int cli_calibration_compare(cli_ctx *ctx, const char *a_dir, int n, char **pos, bool other);
int cli_cuda_bench(cli_ctx *ctx, const char *device, const char *tokens, const rf_dtype_kind *dtype,
                   int trials, const rf_model *m);

/* What a CUDA measurement tells the user while it runs: progress on a
 * terminal, and notes (a dtype left out and why) kept for the error stream and the
 * report. */
#define CLI_CUDA_NOTES 8
typedef struct cli_cuda_talk {
    const char *device; /* "cuda:0" as given                          */
    FILE *err;          /* the command's error stream                 */
    bool shown;         /* err is a terminal                          */
    char notes[CLI_CUDA_NOTES][RF_ERR_MSG_MAX + 64];
    int n_notes;
} cli_cuda_talk;

struct rf_cuda_ctx;

/* Open the device a spec names. Prints and returns the exit code. */
int cli_cuda_open(cli_ctx *ctx, const char *spec, struct rf_cuda_ctx **out);

/* rf_cuda_measure on cu with progress on a terminal; the notes go to talk
 * and, once it ends, to the command's error stream as warnings. dtype_mask and gemm_dim as in
 * rf_cuda_measure_opts (0: every dtype, the default size). */
rf_status cli_cuda_profile(const cli_ctx *ctx, struct rf_cuda_ctx *cu, const char *device,
                           bool quick, uint32_t dtype_mask, int64_t gemm_dim, rf_hw_profile *p,
                           cli_cuda_talk *talk, rf_err *err);

/* talk's notes as "warning: ..." notes of r. */
void cli_cuda_talk_report(const cli_cuda_talk *talk, rf_report *r);

#endif
