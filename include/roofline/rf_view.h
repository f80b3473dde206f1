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

#endif
