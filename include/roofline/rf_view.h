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

/* ---- a step: its operators and --predict beside them (step, report,
 * serve, sweep, generate) ---- */
#include "roofline/rf_calib.h"
#include "roofline/rf_predict.h"

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
/* The prediction's assumption line (what calibrated it, a PREDICTION, not a
 * floor, its band). */
void rf_view_pred_assume(rf_report *r);
/* With pr: rf_view_pred_assume's line and the section key headed label:
 * the predicted step, its band, tokens/s and the operators outside the
 * calibration. Nothing when pr is NULL. */
void rf_view_pred_totals(rf_report *r, const rf_step_pred *pr, const char *key,
                         const char *label);
/* A step's predicted time and tokens/s (0 when pr is NULL). */
double rf_view_pred_step_s(const rf_step_pred *pr);
double rf_view_pred_tokens_per_s(const rf_step_pred *pr);
/* A generation predicted, whichever calibration made it (a profile's or an
 * engine's): in the current section the rows TTFT .. output tokens/s, and
 * the bands' rows (TPOT rows null with one output token). */
void rf_view_pred_gen_times(rf_report *r, const rf_generate_pred *g);
void rf_view_pred_gen_bands(rf_report *r, const rf_generate_pred *g);

#endif
