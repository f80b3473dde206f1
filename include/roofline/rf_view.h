/* rf_view.h - results as report tables: the layer between the library's
 * results (rf_core, rf_io, rf_measure) and the front doors (the command
 * line, and through it the Python package and the explorer).
 *
 * A view function takes a result and an rf_report and adds the tables,
 * sections, figures and assumption lines that show it. It never prints,
 * reads a file or parses an option: the same result gives the same report
 * whichever door asked, and the report's writers (rf_report.h) give it as a
 * table, JSON, CSV or HTML.
 */
#ifndef RF_VIEW_H
#define RF_VIEW_H

#include "roofline/rf_model.h"
#include "roofline/rf_report.h"
#include "roofline/rf_step.h"

/* The crossing points as `crossover` shows them: M* per linear layer with
 * what it counts and the tokens in flight B* that reach it (a table under
 * table_key; for expert GEMMs an assumption line with the routing rule),
 * then the ridge, the square d = hidden T* and the prefill-attention S* (a
 * section under section_key, NULL for none). */
void rf_view_crossover(rf_report *r, const rf_crossover *cx, const rf_model *m,
                       const char *table_key, const char *section_key);

/* ---- one operator: `gemm` and `attn` ---- */
#include "roofline/rf_op.h"

/* A GEMM op (its weights and activations as o's dtypes, its output y) on
 * roof: how it is counted and what its output is written in (assumption
 * lines), M, K, N, FLOPs, bytes and their parts, intensity, regime, ridge,
 * attainable and its share of the peak, the floor, and M* (or never). */
void rf_view_gemm(rf_report *r, const rf_op *op, const rf_step_opts *o, rf_dtype y,
                  const rf_roof *roof);
/* Attention d's counting rule (and the naive scores' bytes) as assumption
 * lines. */
void rf_view_attn_assume(rf_report *r, const rf_attn_desc *d);
/* Attention d as op, its KV in kv, on roof: heads, group, S, query-key
 * pairs, FLOPs, bytes and their parts, intensity, regime, ridge, the
 * floor, and the prefill S* (the causal one under d->causal). */
void rf_view_attn(rf_report *r, const rf_attn_desc *d, const rf_op *op, rf_dtype kv,
                  const rf_roof *roof);
/* `ops`'s table "ops": operator, M (with routed experts when moe: experts
 * streamed, rows each), K, N, FLOPs, bytes, FLOP/B, regime; then a row of
 * op as name, placed on roof. */
void rf_view_ops_columns(rf_report *r, bool moe);
void rf_view_ops_row(rf_report *r, const rf_op *op, const char *name, const rf_roof *roof,
                     bool moe);

/* ---- a step: its operators and --predict beside them (step, report,
 * serve, sweep, generate) ---- */
#include "roofline/rf_calib.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"

/* One step's operators as the table key headed label: name, count, M (and
 * with routed experts the experts streamed and rows each), K, N, FLOPs and
 * bytes (summed over count), FLOP/B, regime, floor, bound by; with pr (not
 * NULL) --predict's columns: predicted_s (count x one instance), calibrated
 * (yes or outside) and the band. */
void rf_view_op_table(rf_report *r, const char *key, const char *label, const rf_step *st,
                      const rf_step_pred *pr);
/* The routed-expert columns of an operator table, after M: experts
 * streamed (experts_touched) and rows each runs (m_per_expert), 3
 * significant digits; "-" on other rows. Nothing when moe is false. */
void rf_view_expert_cols(rf_report *r, bool moe);
void rf_view_expert_cells(rf_report *r, const rf_op *op, bool moe);
/* In the current section, a step's totals after its fit: weights and KV
 * read, KV a token, scores (naive), bytes, FLOPs, intensity, ridge,
 * regime, the floor, sum-of-max and aggregate floors, tokens/s, the
 * blended intensity limit and throughput cap (decode reading KV; null
 * otherwise), the experts touched and tokens each. */
void rf_view_step_totals(rf_report *r, const rf_step_opts *o, const rf_step *st);
/* In the current section, a mixed step's (rf_mixed_step_compute of mo):
 * its tokens and contexts, weights, KV read by each part, then the totals
 * every step shows and tokens/s of decode and chunk together. */
void rf_view_mixed_totals(
    rf_report *r, const rf_mixed_opts *mo,
    const rf_step *st); /* The prediction's assumption line (what calibrated it, a PREDICTION, not a
 * floor, its band). */
void rf_view_pred_assume(rf_report *r);
/* With pr: rf_view_pred_assume's line and the section key headed label:
 * the predicted step, its band, tokens/s and the operators outside the
 * calibration. Nothing when pr is NULL. */
void rf_view_pred_totals(rf_report *r, const rf_step_pred *pr, const char *key, const char *label);
/* A step's predicted time and tokens/s (0 when pr is NULL). */
double rf_view_pred_step_s(const rf_step_pred *pr);
double rf_view_pred_tokens_per_s(const rf_step_pred *pr);
/* A generation predicted, whichever calibration made it (a profile's or an
 * engine's): in the current section the rows TTFT .. output tokens/s, and
 * the bands' rows (TPOT rows null with one output token). */
void rf_view_pred_gen_times(rf_report *r, const rf_generate_pred *g);
void rf_view_pred_gen_bands(rf_report *r, const rf_generate_pred *g);

/* ---- report's page: what it shows beside the step tables ---- */
#include "roofline/rf_plot.h"

/* In the current section, a phase's step as the page totals it: bytes
 * (weights + KV, or every operator's under --traffic full), FLOPs,
 * intensity, regime, the floor, the sum-of-max floor, tokens/s. */
void rf_view_phase_totals(rf_report *r, const rf_step_opts *o, const rf_step *st);
/* The section "capacity" (KV capacity) of c, or with s not RF_OK its
 * sequences null with e's message. */
void rf_view_capacity(rf_report *r, rf_status s, const rf_capacity *c, const rf_err *e);
/* The table "sweep": the batch chart's decode at this context, B by B:
 * floor, tokens/s, regime, whether the KV cache holds it. */
void rf_view_batch_sweep(rf_report *r, const rf_batch_chart *c);
/* The table "measured": each measured operator of p beside the attainable
 * throughput of the operator it matches. */
void rf_view_measured(rf_report *r, const rf_plot *p);
/* Figure 1's caption; under a layout (collectives on p) it says what a
 * device's figure shows. */
const char *rf_view_figure1_caption(const rf_plot *p);

/* ---- the KV pool: `capacity` ---- */
#include "roofline/rf_parallel.h"

/* In the current section, the pool's figures from the memory to the
 * sequences it holds (the recurrent state a sequence where nonzero; the
 * sequences null without a context). */
void rf_view_capacity_figures(rf_report *r, const rf_capacity *c);
/* On a layout: its assumption line and the section "layout", the pool of
 * a device of the stage with the smallest one. */
void rf_view_capacity_layout(rf_report *r, const rf_par_capacity *c);

/* ---- a model: `info` ---- */

/* info's sections of m (its weights as o counts them; st its batch-1
 * decode step, p its parameter counts): shapes, parameters, bytes,
 * weights by module, linear layers, the layers keeping modules
 * unquantized. RF_OK, or the status of a count that failed with *e. */
rf_status rf_view_info(rf_report *r, const rf_model *m, const rf_step_opts *o, const rf_step *st,
                       const rf_param_counts *p, rf_err *e);
/* The module classes of an RF_MOD_BIT mask, ", "-joined ("attention,
 * router"), into out; returns out. */
char *rf_view_modules_text(uint32_t mask, char *out, size_t cap);
/* The layers unquantized_layer[] covers: the decoder's, then the MTP
 * layers' (at layers + i, as checkpoints number them). */
int64_t rf_view_layers_with_mtp(const rf_model *m);
/* Layers l in [from, to) whose unquantized_layer[l] keeps some module. */
int64_t rf_view_excluded_layers(const rf_model *m, int64_t from, int64_t to);

/* ---- serving: serve, generate, frontier, plan, the simulation under load
 * (the command line's serve, generate, frontier and plan, and report's
 * figures of them). Each function adds what its comment names, in that
 * order; a command puts the lines that need its run (the model and roof
 * assumptions, the memory fit, the context check) between them. */
#include "roofline/rf_gpu.h"
#include "roofline/rf_load_svg.h"
#include "roofline/rf_parallel.h"
#include "roofline/rf_predict.h"
#include "roofline/rf_serve.h"
#include "roofline/rf_sim.h"

/* "TP 8 x PP 2 x DP 1, EP 8" into buf (EP only when above 1). */
void rf_view_layout_text(const rf_layout *l, char *buf, size_t cap);

/* The layout's assumption lines: what it is (NULL: "layouts", a plan's
 * many), the collectives' algorithms, the links k, no overlap. */
void rf_view_par_assume(rf_report *r, const rf_hw_links *k, const rf_layout *l);
/* A step on a layout: rf_view_par_assume's lines, the section "layout"
 * (devices, micro-batches, fit, floors, bubble, tokens/s; with overlap the
 * optimistic bound), the table "stages" and, when any, "collectives". */
void rf_view_par(rf_report *r, const rf_par *par, const rf_hw_links *k, bool overlap);

/* The speculative section under key "speculative", headed label: the
 * draft d, K, alpha, tokens an iteration, its parts, TPOT and tokens/s
 * with and without, the speedup, the break-even acceptance. */
void rf_view_spec(rf_report *r, const char *label, const rf_model *d, const rf_spec *sp);

/* A simulated run and what frames it: the command line's run of rf_sim.h
 * (serve under load, frontier's curve under load). */
typedef struct rf_view_sim_run {
    rf_sim_workload w;         /* w.trace NULL after the run; trace_len kept */
    rf_sim_sched s;            /* the engine (--disagg: each side's)    */
    rf_sim_result res;         /* aggregated                            */
    rf_sim_disagg_result dres; /* --disagg                              */
    rf_sim_disagg d;
    bool disagg, layout_given;
    rf_layout layout;
    int64_t devices;      /* a worker's (disagg: P + D workers')   */
    double ttft_floor_s;  /* the shortest prompt alone, chunked   */
    double tpot_floor_s;  /* one decode token at that prompt + 1  */
    int64_t floor_prompt; /* the prompt of the two floors          */
    size_t steps_computed;
    const rf_model *draft; /* speculative decoding's draft, or NULL */
} rf_view_sim_run;
/* The run's assumption lines (workload, schedule, engine, step model,
 * speculation, disaggregation), the sections "speculative" and "layout"
 * where they apply, the load's scalars, and the latency sections ttft_s,
 * tpot_s, itl_s, e2e_s, queue_s (disaggregated: transfer_s, prefill and
 * decode too). */
void rf_view_sim(rf_report *r, const rf_view_sim_run *run);

/* serve --steady-state: the assumption lines of sv (pv: on its layout,
 * NULL: one device). */
void rf_view_serve_assume(rf_report *r, const rf_serve *sv, const rf_serve_par *pv);
/* In the current section: concurrency, contexts, chunk, the step's bytes,
 * FLOPs, regime and floor, TPOT, TTFT, tokens/s and the largest
 * concurrency the KV pool admits (most; below 0: unknown, no memory size). */
void rf_view_serve_steady(rf_report *r, const rf_serve *sv, double most);
/* On a layout: the section "steady state" and whether every device fits. */
void rf_view_serve_par(rf_report *r, const rf_serve_par *pv);
/* Then, in it: concurrency a replica, contexts, chunk, the collectives'
 * rows, TPOT, TTFT, tokens/s of the deployment and a device, the largest
 * concurrency a replica and all replicas admit. */
void rf_view_serve_par_times(rf_report *r, const rf_serve *sv, const rf_serve_par *pv);
/* --draft: the speculative steady state's line, its section (rf_view_spec)
 * with the prompt tokens an iteration and TTFT. */
void rf_view_serve_spec(rf_report *r, const rf_model *d, const rf_serve_spec *sp);
/* --predict: the calibration's line (rf_view_pred_assume), the predicted
 * steady state's, and the section "predicted". */
void rf_view_serve_pred(rf_report *r, const rf_serve *sv, const rf_serve_pred *p);

/* generate: the assumption lines of g (watts: board power, 0 for none;
 * speculative: --draft given). */
void rf_view_generate_assume(rf_report *r, const rf_generate *g, double watts, bool speculative);
/* In the current section: the requests, TTFT, TPOT mean, first and last,
 * decode time, latency, tokens/s, the energy a token, sum-of-max beside. */
void rf_view_generate_times(rf_report *r, const rf_generate *g, double watts);
/* --predict on a calibration: the calibration's line (rf_view_pred_assume),
 * the predicted decode's, and the section "predicted": the times, the
 * operators outside the calibration, the bands. */
void rf_view_generate_pred(rf_report *r, const rf_generate_pred *p);
/* On a layout: the requests' line, the section "generation", the devices
 * and their fit. */
void rf_view_generate_par(rf_report *r, const rf_generate_par *g);
/* Then, in it: the batch, TTFT, TPOT, decode time, latency, tokens/s of the
 * deployment and a device, the energy a token (watts above 0). */
void rf_view_generate_par_times(rf_report *r, const rf_generate_par *g, double watts);

/* frontier: the assumption lines (po: the layout's options, NULL: one
 * device; cap: the KV limit, below 0 unknown; positions a request's last;
 * price an hour and watts, 0 for none). */
void rf_view_frontier_assume(rf_report *r, const rf_par_opts *po, int64_t cap, int64_t positions,
                             double price, double watts);
/* The section under key (NULL: top level) headed label: batches 1..n, the
 * KV limit cap (below 0: unknown), the weights crossing, the points on each
 * front. */
void rf_view_frontier_summary(rf_report *r, const char *key, const char *label,
                              const rf_frontier_point *pts, int64_t n, int64_t cap, int64_t cross);
/* --predict: the predicted points' line and their fronts' counts in the
 * current section (pred and outside: n of each). */
void rf_view_frontier_pred(rf_report *r, const rf_frontier_point *pred, const size_t *outside,
                           int64_t n);
/* The table "points": batch by batch TTFT, TPOT, latency, tokens/s, both
 * fronts, the fit against cap, cost (price above 0), energy (watts above
 * 0), and with pred (NULL: none) the predicted columns. layout: tokens/s a
 * device of a replica. */
void rf_view_frontier_table(rf_report *r, const rf_frontier_point *pts, size_t n, int64_t cap,
                            double price, double watts, bool layout, const rf_frontier_point *pred,
                            const size_t *outside);
/* The curve under load: its line (prompt, output, the closed loop's clients,
 * the percentile q), the section "load" (capacity, the first overloaded
 * rate, 0 for none) and the table "load_points" of the n rates. */
void rf_view_load_curve(rf_report *r, const rf_load_point *pts, size_t n, int64_t prompt,
                        int64_t output, int clients, double q, double capacity, double first_over);

/* plan: the layouts' lines (the links, the layouts tried up to max_devices,
 * the fit's budget util x memory - reserve_bytes). */
void rf_view_plan_assume(rf_report *r, const rf_hw_links *links, int64_t max_devices, double util,
                         uint64_t reserve_bytes);
/* --predict on kernel tables: how the layouts were predicted and ranked. */
void rf_view_plan_pred_assume(rf_report *r, rf_objective obj);
/* The section "plan" (a hybrid model's KV a token and state a sequence
 * when state_bytes, the layouts tried and fitting, the smallest deployment,
 * the largest short of fitting), a note a device count short, the table
 * "layouts" (with pred, NULL for none: row i's predictions) and with pred
 * the section "predicted" (source: the tables' label). */
void rf_view_plan(rf_report *r, const rf_plan *plan, uint64_t kv_bytes, uint64_t state_bytes,
                  const rf_gpu_par_pred *pred, const char *source);
/* The SLO plan p of po: the layouts' and SLOs' lines, the section "plan"
 * (layouts, pruned, simulated, the best) and the table "candidates". */
void rf_view_plan_slo(rf_report *r, const rf_sim_plan_opts *po, const rf_sim_plan *p);

/* ---- the lab: what roofline-lab measured (profile, measure) ---- */
#include "roofline/rf_forward.h"
#include "roofline/rf_gpu_compare.h"
#include "roofline/rf_measure_calib.h"

/* `profile`'s report, NULL out of memory (the caller frees it): its title
 * (the step, the layers run), the roof and how the pass ran, was timed and
 * checked (assumption lines; roof_source names the roof), the roof keyed as
 * a profile file keys it, the table "ops" (operators with FLOPs) and
 * "moves" (data movement) of run's operators, the sections "step" and
 * "model", the residual's owners and the whole model's estimate (notes).
 * With pr (NULL: none) the calibration's prediction beside each figure and
 * its line, the roofs sampled beside the steps the medians of samples. */
rf_report *rf_view_profile(const rf_model *m, const rf_forward_run *run, const rf_forward_pred *pr,
                           size_t samples, const char *roof_source);
/* `measure --compare-calibration A B`'s report, NULL out of memory (the
 * caller frees it): c, the tables a of folder a_dir predicted from those of
 * b_dir on the floors of floor_source (its lines), the section "summary"
 * (rows by how B predicted them, the median ratio A / B) and the tables
 * "groups" (by table and dtype) and "rows" (row by row, a's keys). */
rf_report *rf_view_gpu_compare(const char *floor_source, const char *a_dir, const char *b_dir,
                               const rf_gpu_tables *a, const rf_gpu_cmp *c);

#endif
