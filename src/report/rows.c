/* rows.c - streamed rows (sweeps): the head of a report, then one line a
 * row, formatted without stdio in the hot path. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_impl.h"

static size_t utoa(uint64_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

static const double pow10_tab[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static double p10(int e) /* 10^e for |e| <= 22, exact table values */
{
    return e >= 0 ? pow10_tab[e] : 1.0 / pow10_tab[-e];
}

size_t rf_fmt_g6(double v, char *out)
{
    size_t o = 0;
    if (!isfinite(v)) {
        memcpy(out, "null", 5);
        return 4;
    }
    if (v == 0) {
        out[0] = '0';
        out[1] = '\0';
        return 1;
    }
    if (v < 0) {
        out[o++] = '-';
        v = -v;
    }
    int e = (int)floor(log10(v));
    if (e < -22 + 5 || e > 22) {
        /* far outside the figures we print: the C library's %.6g, whose
         * exponent has two or more digits here, as the fast path's does */
        return o + (size_t)snprintf(out + o, 24, "%.6g", v);
    }
    uint64_t m = (uint64_t)llround(e >= 5 ? v / p10(e - 5) : v * p10(5 - e));
    if (m >= 1000000) { /* rounding carried into a 7th digit */
        m = (m + 5) / 10;
        e++;
    }
    char dg[8];
    utoa(m, dg); /* exactly 6 digits */
    int last = 5;
    while (last > 0 && dg[last] == '0')
        last--;
    if (e >= 15 || e < -6) {
        out[o++] = dg[0];
        if (last > 0) {
            out[o++] = '.';
            memcpy(out + o, dg + 1, (size_t)last);
            o += (size_t)last;
        }
        out[o++] = 'e';
        out[o++] = e < 0 ? '-' : '+';
        o += utoa((uint64_t)(e < 0 ? -e : e), out + o);
        return o;
    }
    if (e < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int z = 0; z < -e - 1; z++)
            out[o++] = '0';
        memcpy(out + o, dg, (size_t)last + 1);
        o += (size_t)last + 1;
    } else {
        for (int i = 0; i <= e; i++)
            out[o++] = i <= 5 ? dg[i] : '0';
        if (last > e) {
            out[o++] = '.';
            memcpy(out + o, dg + e + 1, (size_t)(last - e));
            o += (size_t)(last - e);
        }
    }
    out[o] = '\0';
    return o;
}

static void raw_cell(rf_buf *b, const rf_cell *c, bool json)
{
    char tmp[40];
    switch (c->kind) {
    case RF_CELL_NUM:
        rf_buf_put(b, tmp, rf_fmt_g6(c->num, tmp));
        break;
    case RF_CELL_INT:
        rf_buf_put(b, tmp, utoa(c->i, tmp));
        break;
    case RF_CELL_STR:
        if (json)
            rf__json_string(b, c->str);
        else
            rf_buf_puts(b, c->str);
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
        rf_buf_puts(out, "{\n  \"title\": ");
        rf__json_string(out, head->title);
        rf_buf_puts(out, ",\n  \"assumptions\": [");
        for (size_t i = 0; i < head->n_assume; i++) {
            rf_buf_puts(out, i ? ",\n    " : "\n    ");
            rf__json_string(out, head->assume[i]);
        }
        rf_buf_puts(out, head->n_assume ? "\n  ],\n  " : "],\n  ");
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
            value v = {.kind = cells[c].kind == RF_CELL_NUM   ? V_NUM
                               : cells[c].kind == RF_CELL_INT ? V_INT
                               : cells[c].kind == RF_CELL_STR ? V_STR
                                                    : V_NULL,
                       .num = cells[c].num, .i = cells[c].i, .str = (char *)cells[c].str};
            const char *t = rf__value_text(&v, w->cols[c].unit, tmp, sizeof tmp);
            size_t n = strlen(t);
            rf_buf_puts(out, "  ");
            for (size_t p = n; p < (size_t)w->cols[c].width; p++)
                rf_buf_puts(out, " ");
            rf_buf_puts(out, t);
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
