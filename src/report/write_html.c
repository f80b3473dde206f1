/* write_html.c - one self-contained HTML page: a report's title,
 * assumptions, sections and tables, with SVG figures inline. No script and
 * no external reference; a print stylesheet; reads on a narrow screen. */
#include <string.h>

#include "plot_impl.h"
#include "report_impl.h"

static const char style[] =
    "<style>\n"
    ":root{color-scheme:light}\n"
    "body{margin:0;background:#fff;color:#1a1a1a;font:15px/1.45 " RF__FONT_FAMILY "}\n"
    "main{max-width:960px;margin:0 auto;padding:16px 20px 40px}\n"
    "h1{font-size:1.45em;margin:.4em 0 .2em}\n"
    "h2{font-size:1.1em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid #ddd}\n"
    "ul.assume{margin:.3em 0;padding-left:1.2em;color:#444;font-size:.9em}\n"
    "figure{margin:1.2em 0}\n"
    "figure svg{display:block;width:100%;height:auto;max-width:900px}\n"
    "figcaption{font-size:.88em;color:#444;margin-top:.4em}\n"
    ".scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}\n"
    "table{border-collapse:collapse;font-size:.86em;font-variant-numeric:tabular-nums}\n"
    "th,td{padding:3px 9px;border-bottom:1px solid #e6e6e6;text-align:left;white-space:nowrap}\n"
    "thead th{border-bottom:2px solid #bbb;background:#f6f6f6}\n"
    "td.num,th.num{text-align:right}\n"
    "table.kv th{font-weight:normal;color:#333}\n"
    "p.note{font-size:.9em;color:#444}\n"
    "@media (max-width:640px){body{font-size:14px}main{padding:10px}"
    "th,td{padding:2px 5px}h1{font-size:1.25em}figure svg{min-width:600px}}\n"
    "@media print{@page{size:A4;margin:14mm}"
    "body{font-size:10pt;color:#000}main{max-width:none;padding:0}"
    ".scroll{overflow:visible}table{font-size:8.5pt}"
    "figure,table.kv,ul.assume{break-inside:avoid}h2{break-after:avoid}"
    "thead{display:table-header-group}tr{break-inside:avoid}"
    "thead th{background:none}}\n"
    "</style>\n";

static bool numeric(rf_unit u) { return u != RF_U_NONE; }

static void scalars(rf_buf *b, const rf__block *k)
{
    char tmp[96];
    rf_buf_puts(b, "<div class=\"scroll\"><table class=\"kv\"><tbody>\n");
    for (size_t i = 0; i < k->n_fields; i++) {
        const rf__field *f = &k->fields[i];
        rf_buf_puts(b, "<tr><th scope=\"row\">");
        rf__xml_text(b, f->label);
        rf_buf_printf(b, "</th><td%s>", numeric(f->unit) ? " class=\"num\"" : "");
        rf__xml_text(b, rf__cell_text(&f->v, f->unit, tmp, sizeof tmp));
        rf_buf_puts(b, "</td></tr>\n");
    }
    rf_buf_puts(b, "</tbody></table></div>\n");
}

static void table(rf_buf *b, const rf__block *k)
{
    char tmp[96];
    size_t nc = k->n_cols, nr = nc ? k->n_cells / nc : 0;
    rf_buf_puts(b, "<div class=\"scroll\"><table><thead><tr>");
    for (size_t c = 0; c < nc; c++) {
        rf_buf_printf(b, "<th scope=\"col\"%s>", numeric(k->cols[c].unit) ? " class=\"num\"" : "");
        rf__xml_text(b, k->cols[c].label);
        rf_buf_puts(b, "</th>");
    }
    rf_buf_puts(b, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < nr; r++) {
        rf_buf_puts(b, "<tr>");
        for (size_t c = 0; c < nc; c++) {
            const rf_cell *v = &k->cells[r * nc + c];
            rf_buf_printf(b, "<td%s>",
                          numeric(k->cols[c].unit) && v->kind != RF_CELL_STR ? " class=\"num\""
                                                                             : "");
            rf__xml_text(b, rf__cell_text(v, k->cols[c].unit, tmp, sizeof tmp));
            rf_buf_puts(b, "</td>");
        }
        rf_buf_puts(b, "</tr>\n");
    }
    rf_buf_puts(b, "</tbody></table></div>\n");
}

static void figure(rf_buf *b, const rf_html_figure *f)
{
    const char *svg = f->svg ? f->svg : "";
    if (!strncmp(svg, "<?xml", 5)) { /* inline SVG takes no XML declaration */
        const char *end = strstr(svg, "?>");
        svg = end ? end + 2 : svg;
        while (*svg == '\n')
            svg++;
    }
    rf_buf_puts(b, "<figure>\n<div class=\"scroll\">\n");
    rf_buf_puts(b, svg);
    rf_buf_puts(b, "</div>\n");
    if (f->caption) {
        rf_buf_puts(b, "<figcaption>");
        rf__xml_text(b, f->caption);
        rf_buf_puts(b, "</figcaption>\n");
    }
    rf_buf_puts(b, "</figure>\n");
}

static void figures_after(rf_buf *b, const rf_html_figure *figs, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (key ? figs[i].after && !strcmp(figs[i].after, key) : !figs[i].after)
            figure(b, &figs[i]);
}

rf_status rf_report_write_html(const rf_report *r, const rf_html_figure *figs, size_t n_figs,
                               rf_buf *out, rf_err *err)
{
    if (r->failed)
        return rf_err_set(err, RF_ENOMEM, "out of memory while building the report");
    for (size_t i = 0; i < n_figs; i++) {
        bool found = !figs[i].after;
        for (size_t k = 0; k < r->n_blocks && !found; k++)
            found = r->blocks[k].key && !strcmp(r->blocks[k].key, figs[i].after);
        if (!found)
            return rf_err_set(err, RF_EINVAL,
                              "figure %zu follows block '%s', which the report lacks", i + 1,
                              figs[i].after);
    }
    rf_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
                     "<title>");
    rf__xml_text(out, r->title);
    rf_buf_puts(out, "</title>\n");
    rf_buf_puts(out, style);
    rf_buf_puts(out, "</head>\n<body>\n<main>\n<h1>");
    rf__xml_text(out, r->title);
    rf_buf_puts(out, "</h1>\n");
    if (r->n_assume) {
        rf_buf_puts(out, "<ul class=\"assume\">\n");
        for (size_t i = 0; i < r->n_assume; i++) {
            rf_buf_puts(out, "<li>");
            rf__xml_text(out, r->assume[i]);
            rf_buf_puts(out, "</li>\n");
        }
        rf_buf_puts(out, "</ul>\n");
    }
    figures_after(out, figs, n_figs, NULL);
    for (size_t k = 0; k < r->n_blocks; k++) {
        const rf__block *bl = &r->blocks[k];
        rf_buf_puts(out, "<section>\n");
        if (bl->label) {
            rf_buf_puts(out, "<h2>");
            rf__xml_text(out, bl->label);
            rf_buf_puts(out, "</h2>\n");
        }
        if (bl->is_table)
            table(out, bl);
        else
            scalars(out, bl);
        rf_buf_puts(out, "</section>\n");
        if (bl->key)
            figures_after(out, figs, n_figs, bl->key);
    }
    for (size_t i = 0; i < r->n_notes; i++) {
        rf_buf_puts(out, "<p class=\"note\">");
        rf__xml_text(out, r->notes[i]);
        rf_buf_puts(out, "</p>\n");
    }
    rf_buf_puts(out, "</main>\n</body>\n</html>\n");
    if (out->failed)
        return rf_err_set(err, RF_ENOMEM, "out of memory while writing the report");
    return RF_OK;
}
