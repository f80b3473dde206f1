/* write_table.c - aligned text for people: title, assumptions, sections of
 * "label  value" lines, tables with right-aligned numbers. Every string is
 * written through rf__put_text: a name read from a file (a profile's, a
 * model folder's) cannot break a line or send a terminal escape. */
#include <string.h>

#include "report_impl.h"

#define CELL 96

static void pad(rf_buf *b, size_t n)
{
    while (n--)
        rf_buf_put(b, " ", 1);
}

/* One line: head, then text with its control characters shown as '?'. */
static void line(rf_buf *b, const char *head, const char *text)
{
    rf_buf_puts(b, head);
    rf__put_text(b, text);
    rf_buf_put(b, "\n", 1);
}

/* Display width: count UTF-8 lead bytes only. */
static size_t width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void section(const rf__block *k, rf_buf *out)
{
    size_t w = 0;
    for (size_t i = 0; i < k->n_fields; i++)
        if (width(k->fields[i].label) > w)
            w = width(k->fields[i].label);
    if (k->label)
        line(out, "", k->label);
    for (size_t i = 0; i < k->n_fields; i++) {
        const rf__field *f = &k->fields[i];
        char tmp[CELL];
        rf_buf_puts(out, "  ");
        rf__put_text(out, f->label);
        pad(out, w - width(f->label) + 2);
        line(out, "", rf__cell_text(&f->v, f->unit, tmp, sizeof tmp));
    }
}

static void table(const rf__block *k, rf_buf *out)
{
    size_t nc = k->n_cols, nr = nc ? k->n_cells / nc : 0;
    size_t w[64] = {0};
    if (nc > 64)
        nc = 64;
    char tmp[CELL];
    for (size_t c = 0; c < nc; c++)
        w[c] = width(k->cols[c].label);
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++) {
            size_t n = width(
                rf__cell_text(&k->cells[r * k->n_cols + c], k->cols[c].unit, tmp, sizeof tmp));
            if (n > w[c])
                w[c] = n;
        }
    if (k->label)
        line(out, "", k->label);
    /* a column is left-aligned when its first cell is text */
    bool left[64];
    for (size_t c = 0; c < nc; c++)
        left[c] = nr && k->cells[c].kind == RF_CELL_STR;
    for (size_t c = 0; c < nc; c++) {
        const char *l = k->cols[c].label;
        rf_buf_puts(out, "  ");
        if (!left[c])
            pad(out, w[c] - width(l));
        rf__put_text(out, l);
        if (left[c] && c + 1 < nc)
            pad(out, w[c] - width(l));
    }
    rf_buf_puts(out, "\n");
    for (size_t r = 0; r < nr; r++) {
        for (size_t c = 0; c < nc; c++) {
            const char *t =
                rf__cell_text(&k->cells[r * k->n_cols + c], k->cols[c].unit, tmp, sizeof tmp);
            rf_buf_puts(out, "  ");
            if (!left[c])
                pad(out, w[c] - width(t));
            rf__put_text(out, t);
            if (left[c] && c + 1 < nc)
                pad(out, w[c] - width(t));
        }
        rf_buf_puts(out, "\n");
    }
}

rf_status rf__write_table(const rf_report *r, rf_buf *out)
{
    if (r->title && *r->title)
        line(out, "", r->title);
    for (size_t i = 0; i < r->n_assume; i++)
        line(out, "  assuming: ", r->assume[i]);
    for (size_t i = 0; i < r->n_blocks; i++) {
        const rf__block *k = &r->blocks[i];
        if (!k->n_fields && !k->n_cols)
            continue;
        rf_buf_puts(out, "\n");
        if (k->is_table)
            table(k, out);
        else
            section(k, out);
    }
    if (r->n_notes)
        rf_buf_puts(out, "\n");
    for (size_t i = 0; i < r->n_notes; i++)
        line(out, "", r->notes[i]);
    return RF_OK;
}
