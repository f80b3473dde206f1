/* write_json.c - stable keys, raw SI numbers, exact integers, null for a
 * figure that does not exist ("never", or not finite). */
#include <stdio.h>

#include "report_impl.h"

void rf__json_string(rf_buf *b, const char *s)
{
    rf_buf_put(b, "\"", 1);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            rf_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            rf_buf_puts(b, "\\n");
        else if (c < 0x20)
            rf_buf_printf(b, "\\u%04x", c);
        else
            rf_buf_put(b, (const char *)&c, 1);
    }
    rf_buf_put(b, "\"", 1);
}

static void val(rf_buf *b, const rf_cell *v)
{
    switch (v->kind) {
    case RF_CELL_INT:
        rf_buf_printf(b, "%llu", (unsigned long long)v->i);
        break;
    case RF_CELL_NUM:
        rf_buf_printf(b, "%.12g", v->num);
        break;
    case RF_CELL_STR:
        rf__json_string(b, v->str);
        break;
    case RF_CELL_BOOL:
        rf_buf_puts(b, v->i ? "true" : "false");
        break;
    case RF_CELL_NULL:
    default:
        rf_buf_puts(b, "null");
    }
}

static void fields(rf_buf *b, const rf__block *k, const char *indent, bool *first)
{
    for (size_t i = 0; i < k->n_fields; i++) {
        rf_buf_printf(b, "%s\n%s", *first ? "" : ",", indent);
        *first = false;
        rf__json_string(b, k->fields[i].key);
        rf_buf_puts(b, ": ");
        val(b, &k->fields[i].v);
    }
}

void rf__json_open(const rf_report *r, rf_buf *out)
{
    bool first = false;
    rf_buf_puts(out, "{\n  \"title\": ");
    rf__json_string(out, r->title);
    rf_buf_puts(out, ",\n  \"assumptions\": [");
    for (size_t i = 0; i < r->n_assume; i++) {
        rf_buf_puts(out, i ? ",\n    " : "\n    ");
        rf__json_string(out, r->assume[i]);
    }
    rf_buf_puts(out, r->n_assume ? "\n  ]" : "]");
    for (size_t i = 0; i < r->n_blocks; i++) {
        const rf__block *k = &r->blocks[i];
        if (!k->is_table && !k->key) {
            fields(out, k, "  ", &first);
            continue;
        }
        rf_buf_puts(out, ",\n  ");
        rf__json_string(out, k->key ? k->key : "");
        if (!k->is_table) {
            bool f = true;
            rf_buf_puts(out, ": {");
            fields(out, k, "    ", &f);
            rf_buf_puts(out, f ? "}" : "\n  }");
            continue;
        }
        size_t nc = k->n_cols, nr = nc ? k->n_cells / nc : 0;
        rf_buf_puts(out, ": [");
        for (size_t row = 0; row < nr; row++) {
            rf_buf_puts(out, row ? ",\n    {" : "\n    {");
            for (size_t c = 0; c < nc; c++) {
                if (c)
                    rf_buf_puts(out, ", ");
                rf__json_string(out, k->cols[c].key);
                rf_buf_puts(out, ": ");
                val(out, &k->cells[row * nc + c]);
            }
            rf_buf_puts(out, "}");
        }
        rf_buf_puts(out, nr ? "\n  ]" : "]");
    }
}

rf_status rf__write_json(const rf_report *r, rf_buf *out)
{
    rf__json_open(r, out);
    rf_buf_puts(out, "\n}\n");
    return RF_OK;
}
