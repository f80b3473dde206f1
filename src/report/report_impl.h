/* report_impl.h - the report's inside, shared by report.c and the writers
 * in this folder (private to src/report). */
#ifndef RF_REPORT_IMPL_H
#define RF_REPORT_IMPL_H

#include "roofline/rf_report.h"

typedef enum vkind { V_NUM, V_INT, V_STR, V_NULL } vkind;

typedef struct value {
    vkind kind;
    double num;
    uint64_t i;
    char *str; /* V_STR: the string; V_NULL: what a reader sees ("never") */
} value;

typedef struct field {
    char *key, *label;
    rf_unit unit;
    value v;
} field;

typedef struct column {
    char *key, *label;
    rf_unit unit;
} column;

typedef struct block {
    bool is_table;
    char *key, *label;     /* key NULL: top-level scalars                 */
    field *fields;         /* scalars                                     */
    size_t n_fields, cap_fields;
    column *cols;          /* tables                                      */
    size_t n_cols, cap_cols;
    value *cells;          /* row-major, n_cols a row                     */
    size_t n_cells, cap_cells;
} block;

struct rf_report {
    char *title;
    char **assume;
    size_t n_assume, cap_assume;
    char **notes;
    size_t n_notes, cap_notes;
    block *blocks;
    size_t n_blocks, cap_blocks;
    bool failed;
};

/* Format one value for human output. */
const char *rf__value_text(const value *v, rf_unit u, char *tmp, size_t cap);

rf_status rf__write_table(const rf_report *r, rf_buf *out);
rf_status rf__write_json(const rf_report *r, rf_buf *out);
rf_status rf__write_csv(const rf_report *r, rf_buf *out);

/* JSON string literal with escapes. */
void rf__json_string(rf_buf *b, const char *s);

#endif
