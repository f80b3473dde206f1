/* rows.c - streamed rows (sweeps): the head of a report, then one line a
 * row, formatted without stdio in the hot path (format.c's RF_U_RAW6 and
 * rf__utoa). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_impl.h"

static void raw_cell(rf_buf *b, const rf_cell *c, bool json)
{
    char tmp[40];
    switch (c->kind) {
    case RF_CELL_NUM:
        rf_buf_puts(b, rf_fmt(c->num, RF_U_RAW6, tmp, sizeof tmp));
        break;
    case RF_CELL_INT:
        rf_buf_put(b, tmp, rf__utoa(c->i, tmp));
        break;
    case RF_CELL_STR:
        if (json)
            rf__json_string(b, c->str);
        else
            rf__csv_string(b, c->str);
        break;
    case RF_CELL_BOOL:
        rf_buf_puts(b, c->i ? "true" : "false");
        break;
    default:
        if (json)
            rf_buf_puts(b, "null");
    }
}

void rf_rows_begin(rf_rows *w, rf_buf *out, rf_format f, const rf_report *head, const char *key,
                   const rf_rowcol *cols, size_t n_cols)
{
    w->fmt = f;
    w->cols = cols;
    w->n_cols = n_cols;
    w->n_rows = 0;
    if (f == RF_FMT_CSV) {
        for (size_t c = 0; c < n_cols; c++) {
            rf_buf_puts(out, c ? "," : "");
            rf_buf_puts(out, cols[c].key);
        }
        rf_buf_puts(out, "\n");
        return;
    }
    if (f == RF_FMT_JSON) {
        /* the head as a report's JSON (its sections too: family_forced),
         * then the rows' array */
        rf__json_open(head, out);
        rf_buf_puts(out, ",\n  ");
        rf__json_string(out, key);
        rf_buf_puts(out, ": [");
        return;
    }
    rf__write_table(head, out);
    rf_buf_puts(out, "\n");
    for (size_t c = 0; c < n_cols; c++) {
        size_t n = strlen(cols[c].label);
        rf_buf_puts(out, "  ");
        for (size_t p = n; p < (size_t)cols[c].width; p++)
            rf_buf_puts(out, " ");
        rf_buf_puts(out, cols[c].label);
    }
    rf_buf_puts(out, "\n");
}

void rf_rows_add(rf_rows *w, rf_buf *out, const rf_cell *cells)
{
    if (w->fmt == RF_FMT_CSV) {
        for (size_t c = 0; c < w->n_cols; c++) {
            if (c)
                rf_buf_put(out, ",", 1);
            raw_cell(out, &cells[c], false);
        }
        rf_buf_put(out, "\n", 1);
    } else if (w->fmt == RF_FMT_JSON) {
        rf_buf_puts(out, w->n_rows ? ",\n    {" : "\n    {");
        for (size_t c = 0; c < w->n_cols; c++) {
            if (c)
                rf_buf_puts(out, ", ");
            rf__json_string(out, w->cols[c].key);
            rf_buf_puts(out, ": ");
            raw_cell(out, &cells[c], true);
        }
        rf_buf_puts(out, "}");
    } else {
        for (size_t c = 0; c < w->n_cols; c++) {
            char tmp[96];
            const char *t = rf__cell_text(&cells[c], w->cols[c].unit, tmp, sizeof tmp);
            size_t n = strlen(t);
            rf_buf_puts(out, "  ");
            for (size_t p = n; p < (size_t)w->cols[c].width; p++)
                rf_buf_puts(out, " ");
            rf__put_text(out, t);
        }
        rf_buf_puts(out, "\n");
    }
    w->n_rows++;
}

void rf_rows_end(rf_rows *w, rf_buf *out)
{
    if (w->fmt == RF_FMT_JSON)
        rf_buf_puts(out, w->n_rows ? "\n  ]\n}\n" : "]\n}\n");
}
