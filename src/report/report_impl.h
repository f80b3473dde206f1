/* report_impl.h - the report's inside, shared by report.c and the writers
 * in this folder (private to src/report). A report holds its values as
 * rf_cell, the type streamed rows use; its strings are its own copies.
 * Names shared between this layer's files carry rf__ (docs/architecture.md);
 * a file's own static helpers carry no prefix. */
#ifndef RF_REPORT_IMPL_H
#define RF_REPORT_IMPL_H

#include "roofline/rf_report.h"

typedef struct rf__field {
    char *key, *label;
    rf_unit unit;
    rf_cell v;
} rf__field;

typedef struct rf__column {
    char *key, *label;
    rf_unit unit;
} rf__column;

typedef struct rf__block {
    bool is_table;
    char *key, *label; /* key NULL: top-level scalars                    */
    rf__field *fields; /* scalars                                        */
    size_t n_fields, cap_fields;
    rf__column *cols; /* tables                                         */
    size_t n_cols, cap_cols;
    rf_cell *cells; /* row-major, n_cols a row                        */
    size_t n_cells, cap_cells;
} rf__block;

struct rf_report {
    char *title;
    char **assume;
    size_t n_assume, cap_assume;
    char **notes;
    size_t n_notes, cap_notes;
    rf__block *blocks;
    size_t n_blocks, cap_blocks;
    bool failed;
};

/* One value as a reader sees it (format.c): a number in its unit, a
 * string, or a null's or a yes/no's shown text. Returns tmp or the cell's
 * own string. */
const char *rf__cell_text(const rf_cell *v, rf_unit u, char *tmp, size_t cap);

/* s for a reader, on one line: every control character (a newline, a tab,
 * an escape, DEL) shown as '?', as error messages show them (format.c). */
void rf__put_text(rf_buf *b, const char *s);

/* A CSV field: control characters as '?', quoted when it holds a comma or
 * a quote, a quote doubled (write_csv.c). */
void rf__csv_string(rf_buf *b, const char *s);

/* The decimal digits of v into out (>= 21 bytes), NUL-terminated; returns
 * their count (format.c; no stdio, for streamed rows). */
size_t rf__utoa(uint64_t v, char *out);

rf_status rf__write_table(const rf_report *r, rf_buf *out);
rf_status rf__write_json(const rf_report *r, rf_buf *out);
rf_status rf__write_csv(const rf_report *r, rf_buf *out);

/* JSON string literal with escapes. */
void rf__json_string(rf_buf *b, const char *s);
/* The report's JSON object without its closing brace: title, assumptions
 * and every section (the streamed rows' head, rows.c, goes on from it). */
void rf__json_open(const rf_report *r, rf_buf *out);

#endif
