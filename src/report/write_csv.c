/* write_csv.c - the first table, header = JSON keys (they carry units);
 * with no table, one row of every scalar ("section.key" headers). */
#include <string.h>

#include "report_impl.h"

void rf__csv_string(rf_buf *b, const char *s)
{
    bool quote = strpbrk(s, ",\"") != NULL;
    if (quote)
        rf_buf_put(b, "\"", 1);
    for (const char *run = s;; s++) {
        if (*s && *s != '"' && (unsigned char)*s >= 0x20 && *s != 0x7f)
            continue;
        rf_buf_put(b, run, (size_t)(s - run));
        if (!*s)
            break;
        rf_buf_puts(b, *s == '"' ? "\"\"" : "?"); /* a quote is doubled */
        run = s + 1;
    }
    if (quote)
        rf_buf_put(b, "\"", 1);
}

static void cell(rf_buf *b, const rf_cell *v)
{
    switch (v->kind) {
    case RF_CELL_INT:
        rf_buf_printf(b, "%llu", (unsigned long long)v->i);
        break;
    case RF_CELL_NUM:
        rf_buf_printf(b, "%.12g", v->num);
        break;
    case RF_CELL_STR:
        rf__csv_string(b, v->str);
        break;
    case RF_CELL_BOOL:
        rf_buf_puts(b, v->i ? "true" : "false");
        break;
    case RF_CELL_NULL:
    default:
        break;
    }
}

rf_status rf__write_csv(const rf_report *r, rf_buf *out)
{
    for (size_t i = 0; i < r->n_blocks; i++) {
        const rf__block *k = &r->blocks[i];
        if (!k->is_table)
            continue;
        for (size_t c = 0; c < k->n_cols; c++) {
            rf_buf_puts(out, c ? "," : "");
            rf_buf_puts(out, k->cols[c].key);
        }
        rf_buf_puts(out, "\n");
        for (size_t j = 0; j < k->n_cells; j++) {
            if (j % k->n_cols)
                rf_buf_puts(out, ",");
            cell(out, &k->cells[j]);
            if (j % k->n_cols == k->n_cols - 1)
                rf_buf_puts(out, "\n");
        }
        return RF_OK;
    }
    bool any = false;
    for (int pass = 0; pass < 2; pass++) {
        bool first = true;
        for (size_t i = 0; i < r->n_blocks; i++) {
            const rf__block *k = &r->blocks[i];
            for (size_t j = 0; j < k->n_fields; j++) {
                rf_buf_puts(out, first ? "" : ",");
                first = false;
                any = true;
                if (pass == 0) {
                    if (k->key)
                        rf_buf_printf(out, "%s.", k->key);
                    rf_buf_puts(out, k->fields[j].key);
                } else {
                    cell(out, &k->fields[j].v);
                }
            }
        }
        rf_buf_puts(out, "\n");
    }
    return any ? RF_OK : RF_EINVAL;
}
