/* write_svg.c - the roofline figure and the batch-sweep chart as SVG text:
 * plain shapes and text, no fonts, no rasters, no external references. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_impl.h"

void rf__xml_text(rf_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            rf_buf_puts(b, "&amp;");
            break;
        case '<':
            rf_buf_puts(b, "&lt;");
            break;
        case '>':
            rf_buf_puts(b, "&gt;");
            break;
        case '"':
            rf_buf_puts(b, "&quot;");
            break;
        default:
            /* A name is one line of text: a control character (a newline
             * or a tab too) shows as '?', as in an error message. */
            if ((unsigned char)*s < 0x20 || *s == 0x7f)
                rf_buf_puts(b, "?");
            else
                rf_buf_put(b, s, 1);
        }
    }
}

void rf__decade_label(int e, char kind, char *out, size_t cap)
{
    static const char *const si[] = {"", "k", "M", "G", "T", "P", "E"};
    static const char *const small[] = {"", "m", "u", "n", "p"};
    int m = ((e % 3) + 3) % 3, g = (e - m) / 3; /* 10^e = 10^m x 1000^g */
    static const char *const mant[] = {"1", "10", "100"};
    switch (kind) {
    case 'F':
    case 'O':
        if (g >= 0 && g <= 6)
            snprintf(out, cap, "%s %s%s", mant[m], si[g], kind == 'F' ? "FLOP/s" : "OP/s");
        else
            snprintf(out, cap, "1e%d %s", e, kind == 'F' ? "FLOP/s" : "OP/s");
        return;
    case 's':
        if (g <= 0 && g >= -4)
            snprintf(out, cap, "%s %ss", mant[m], small[-g]);
        else
            snprintf(out, cap, "1e%d s", e);
        return;
    default: /* plain numbers: 0.01, 0.1, 1, 10, 100, 1,000, 10,000, 100,000, 1M */
        if (e < 0 && e >= -6)
            snprintf(out, cap, "%.*f", -e, pow(10, e));
        else if (e >= 0 && e <= 2)
            snprintf(out, cap, "%s", mant[e]);
        else if (e >= 3 && e <= 5)
            snprintf(out, cap, "%s,000", mant[m]);
        else if (e >= 6 && e <= 11)
            snprintf(out, cap, "%s%s", mant[m], e < 9 ? "M" : "G");
        else
            snprintf(out, cap, "1e%d", e);
        return;
    }
}

/* <text> at (x, y) with the given size, anchor and fill; a white halo keeps
 * it readable over lines. */
static void text(rf_buf *b, double x, double y, double size, const char *anchor, const char *fill,
                 bool halo, const char *s)
{
    rf_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\"", x, y, size);
    if (anchor)
        rf_buf_printf(b, " text-anchor=\"%s\"", anchor);
    if (fill)
        rf_buf_printf(b, " fill=\"%s\"", fill);
    if (halo)
        rf_buf_puts(b, " stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" "
                       "paint-order=\"stroke\"");
    rf_buf_puts(b, ">");
    rf__xml_text(b, s);
    rf_buf_puts(b, "</text>\n");
}

static void svg_open(rf_buf *b, double w, double h, const char *title)
{
    rf_buf_printf(b,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                  "viewBox=\"0 0 %g %g\" font-family=\"%s\" role=\"img\">\n<title>",
                  w, h, w, h, RF__FONT_FAMILY);
    rf__xml_text(b, title);
    rf_buf_printf(b, "</title>\n<rect width=\"%g\" height=\"%g\" fill=\"#ffffff\"/>\n", w, h);
}

/* A log axis: value v at px p0 + (p1 - p0) (log v - log lo) / (log hi - log lo). */
typedef struct logaxis {
    double lo, hi, p0, p1;
} logaxis;

static double at(const logaxis *a, double v)
{
    double lo = rf__lg(a->lo), hi = rf__lg(a->hi);
    return a->p0 + (a->p1 - a->p0) * (rf__lg(v) - lo) / (hi > lo ? hi - lo : 1);
}

/* Every how many decades an axis from 10^e0 to 10^e1 is labelled: at most
 * 13 labels (and grid lines), so the file stays small on any axis. */
static int decade_step(int e0, int e1) { return e1 - e0 > 12 ? (e1 - e0 + 11) / 12 : 1; }

/* Decade grid lines and labels plus minor ticks (2..9, where every decade
 * is labelled) of a vertical log axis (y) over the horizontal span x0..x1;
 * lo is a power of ten, hi may fall between two. */
static void y_decades(rf_buf *b, const logaxis *y, double x0, double x1, char kind)
{
    char lab[48];
    int e0 = (int)lround(rf__lg(y->lo)), e1 = (int)floor(rf__lg(y->hi) + 1e-9);
    int step = decade_step(e0, e1);
    for (int e = e0; e <= e1; e += step) {
        double py = at(y, pow(10, e));
        rf_buf_printf(
            b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ececec\"/>\n", x0,
            py, x1, py);
        rf__decade_label(e, kind, lab, sizeof lab);
        text(b, x0 - 6, py + 4, RF__FONT_LABEL, "end", "#333333", false, lab);
        for (int k = 2; step == 1 && k < 10 && k * pow(10, e) < y->hi * (1 - 1e-9); k++) {
            double pm = at(y, k * pow(10, e));
            rf_buf_printf(
                b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888888\"/>\n",
                x0, pm, x0 + 3, pm);
        }
    }
}

/* ---- the roofline figure -------------------------------------------------- */
static const char *const series_class[3] = {"decode", "prefill", "other"};

/* A marker of radius r centred on the origin: circle (decode), square
 * (prefill), diamond (no phase), the three of one area (pi r^2: half side
 * r sqrt(pi) / 2, half diagonal r sqrt(pi / 2)); hollow when measured. */
static void marker(rf_buf *b, rf_plot_series s, bool hollow, double r)
{
    const char *c = rf__series_color[s];
    char style[96];
    snprintf(style, sizeof style, "fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"",
             hollow ? "#ffffff" : c, hollow ? c : "#ffffff", hollow ? "1.8" : "1");
    double h = r * 0.886227, d = r * 1.253314;
    if (s == RF_SERIES_DECODE)
        rf_buf_printf(b, "<circle r=\"%.2f\" %s/>", r, style);
    else if (s == RF_SERIES_PREFILL)
        rf_buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" %s/>", -h, -h,
                      2 * h, 2 * h, style);
    else
        rf_buf_printf(b, "<path d=\"M0 %.2f L%.2f 0 L0 %.2f L%.2f 0 Z\" %s/>", -d, d, d, -d, style);
}

/* A collective's marker: a triangle pointing up, of the area of a circle
 * of radius r (circumradius r sqrt(4 pi / (3 sqrt 3)), centred on its
 * centroid), filled in its series' colour. */
static void coll_marker(rf_buf *b, rf_plot_series s, double r)
{
    double R = r * 1.555109, hx = R * 0.866025;
    rf_buf_printf(b,
                  "<path d=\"M0 %.2f L%.2f %.2f L%.2f %.2f Z\" fill=\"%s\" stroke=\"%s\" "
                  "stroke-width=\"1\"/>",
                  -R, hx, R / 2, -hx, R / 2, rf__series_color[s], RF__ROOF_LINK);
}

static void roof_style(rf_buf *b, rf_plot_role role)
{
    if (role == RF_PLOT_MAIN)
        rf_buf_printf(b, " stroke=\"%s\" stroke-width=\"2.2\"", RF__ROOF_MAIN);
    else if (role == RF_PLOT_OTHER)
        rf_buf_printf(b, " stroke=\"%s\" stroke-width=\"1.3\"", RF__ROOF_OTHER);
    else if (role == RF_PLOT_MEASURED)
        rf_buf_printf(b, " stroke=\"%s\" stroke-width=\"1.6\" stroke-dasharray=\"7 4\"",
                      RF__ROOF_MEASURED);
    else
        rf_buf_printf(b, " stroke=\"%s\" stroke-width=\"1.6\" stroke-dasharray=\"9 3 2 3\"",
                      RF__ROOF_LINK);
}

/* The axes in the unit of the math dtype: FLOPs, or operations (OP) for
 * an integer one. */
static void axes(rf_buf *b, const rf_plot *p)
{
    const rf_plot_axes *a = &p->axes;
    double x0 = a->left_px, x1 = a->left_px + a->width_px;
    double y0 = a->top_px, y1 = a->top_px + a->height_px;
    logaxis y = {a->y_min, a->y_max, y1, y0};
    bool ops = rf__dtype_counts_ops(p->math);
    char lab[48];
    y_decades(b, &y, x0, x1, ops ? 'O' : 'F');
    int e0 = (int)lround(rf__lg(a->x_min)), e1 = (int)lround(rf__lg(a->x_max));
    int step = decade_step(e0, e1);
    for (int e = e0; e <= e1; e += step) {
        double px = rf_plot_x_px(a, pow(10, e));
        rf_buf_printf(
            b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ececec\"/>\n", px,
            y0, px, y1);
        rf__decade_label(e, 'I', lab, sizeof lab);
        text(b, px, y1 + 17, RF__FONT_LABEL, "middle", "#333333", false, lab);
        for (int k = 2; step == 1 && k < 10 && e < e1; k++) {
            double pm = rf_plot_x_px(a, k * pow(10, e));
            rf_buf_printf(
                b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888888\"/>\n",
                pm, y1, pm, y1 - 3);
        }
    }
    rf_buf_printf(b,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                  "stroke=\"#888888\"/>\n",
                  x0, y0, a->width_px, a->height_px);
    snprintf(lab, sizeof lab, "arithmetic intensity I (%s/byte), log scale", ops ? "OP" : "FLOP");
    text(b, (x0 + x1) / 2, y1 + 34, RF__FONT_LABEL, "middle", "#222222", false, lab);
    rf_buf_printf(b,
                  "<text transform=\"translate(18,%.1f) rotate(-90)\" font-size=\"%g\" "
                  "text-anchor=\"middle\" fill=\"#222222\">attainable throughput (%s/s), "
                  "log scale</text>\n",
                  (y0 + y1) / 2, RF__FONT_LABEL, ops ? "OP" : "FLOP");
}

static void label(rf_buf *b, const rf_plot_label *l)
{
    const rf_plot_box *x = &l->box;
    if (l->leader)
        rf_buf_printf(b,
                      "<line class=\"leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#999999\" stroke-width=\"0.8\"/>\n",
                      l->anchor_x, l->anchor_y, l->lead_x, l->lead_y);
    if (x->angle_deg != 0)
        rf_buf_printf(b, "<g transform=\"rotate(%.2f %.1f %.1f)\">\n", x->angle_deg, x->cx, x->cy);
    for (int i = 0; i < l->n_text; i++) {
        const char *fill = l->kind == RF_LABEL_POINTS   ? rf__series_color[l->color[i]]
                           : l->kind == RF_LABEL_RIDGE  ? RF__ROOF_MAIN
                           : l->kind == RF_LABEL_REGION ? "#777777"
                                                        : "#333333";
        double y = x->cy - x->h / 2 + 1 + i * RF__LINE_PX + l->font_px * 0.92, x0, x1;
        rf__label_line_x(l, i, &x0, &x1);
        text(b,
             l->align < 0   ? x0
             : l->align > 0 ? x1
                            : x->cx,
             y, l->font_px,
             l->align < 0   ? NULL
             : l->align > 0 ? "end"
                            : "middle",
             fill, true, l->text[i]);
    }
    if (x->angle_deg != 0)
        rf_buf_puts(b, "</g>\n");
}

static void legend(rf_buf *b, const rf_plot *p, const rf_plot_box *box)
{
    char rows[RF__LEGEND_ROWS][RF__LEGEND_ROW];
    int kinds[RF__LEGEND_ROWS], n = rf__plot_legend(p, rows, kinds);
    double x = box->cx - box->w / 2, y = box->cy - box->h / 2;
    rf_buf_printf(
        b,
        "<g class=\"legend\">\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
        "fill=\"#ffffff\" fill-opacity=\"0.92\" stroke=\"#cccccc\"/>\n",
        x, y, box->w, box->h);
    for (int i = 0; i < n; i++) {
        double cy = y + 13 + 16 * i, sx = x + 16;
        if (kinds[i] <= 2) {
            rf_buf_printf(b, "<g transform=\"translate(%.1f,%.1f)\">", sx, cy);
            marker(b, (rf_plot_series)kinds[i], false, RF__MEASURED_R);
            rf_buf_puts(b, "</g>\n");
        } else if (kinds[i] == 3) {
            rf_buf_printf(b, "<g transform=\"translate(%.1f,%.1f)\">", sx - 5, cy);
            marker(b, RF_SERIES_DECODE, true, RF__MEASURED_R);
            rf_buf_printf(b, "</g><g transform=\"translate(%.1f,%.1f)\">", sx + 6, cy);
            marker(b, RF_SERIES_PREFILL, true, RF__MEASURED_R);
            rf_buf_puts(b, "</g>\n");
        } else if (kinds[i] == 7) { /* the sample of the area legend */
            rf_buf_printf(b,
                          "<circle class=\"area-sample\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.2f\" "
                          "fill=\"#cfd8e3\" stroke=\"#1f66b3\"/>\n",
                          sx, cy, rf_plot_marker_r(RF__LEGEND_SHARE));
        } else if (kinds[i] == 8) {
            rf_buf_printf(b, "<g transform=\"translate(%.1f,%.1f)\">", sx, cy);
            coll_marker(b, RF_SERIES_DECODE, RF__MEASURED_R);
            rf_buf_puts(b, "</g>\n");
        } else {
            rf_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"", sx - 10, cy,
                          sx + 10, cy);
            roof_style(b, kinds[i] == 4   ? RF_PLOT_MAIN
                          : kinds[i] == 5 ? RF_PLOT_OTHER
                          : kinds[i] == 6 ? RF_PLOT_MEASURED
                                          : RF_PLOT_LINK);
            rf_buf_puts(b, "/>\n");
        }
        text(b, x + 32, cy + 4, RF__FONT_LABEL, NULL, "#222222", false, rows[i]);
    }
    rf_buf_puts(b, "</g>\n");
}

static void point_title(rf_buf *b, const rf_plot_point *q)
{
    char i[48], f[48];
    rf_fmt(q->intensity, RF_U_INTENSITY4, i, sizeof i);
    rf_fmt(q->flops_per_s, RF_U_FLOP_RATE, f, sizeof f);
    rf_buf_puts(b, "<title>");
    rf__xml_text(b, q->name);
    if (q->collective)
        rf_buf_printf(b,
                      " (%s, collective): drawn at I = %s FLOP/byte, %s = I x the link "
                      "bandwidth it attains</title>",
                      series_class[q->series], i, f);
    else
        rf_buf_printf(b, " (%s%s): I = %s FLOP/byte, %s %s</title>",
                      q->measured ? "measured, " : "",
                      q->series == RF_SERIES_OTHER ? "no phase" : series_class[q->series], i, f,
                      q->measured ? "achieved" : "attainable");
}

/* The roofs, the ridge's drop line, and each measured point's join to its
 * prediction. */
static void roofs(rf_buf *out, const rf_plot *p)
{
    const rf_plot_axes *a = &p->axes;
    for (size_t i = 0; i < p->n_lines; i++) {
        double xy[4];
        if (!rf__plot_line_px(p, &p->lines[i], xy))
            continue;
        rf_buf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"", xy[0], xy[1],
                      xy[2], xy[3]);
        roof_style(out, p->lines[i].role);
        rf_buf_puts(out, " stroke-linecap=\"round\"/>\n");
    }
    double rx = rf_plot_x_px(a, p->ridge), ry = rf_plot_y_px(a, p->peak_flops_per_s);
    rf_buf_printf(out,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#777777\" "
                  "stroke-dasharray=\"3 3\"/>\n",
                  rx, ry, rx, a->top_px + a->height_px);
    for (size_t i = 0; i < p->n_points; i++) {
        const rf_plot_point *q = &p->points[i];
        if (q->match < 0 || q->off_axes)
            continue;
        const rf_plot_point *m = &p->points[q->match];
        rf_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                      "stroke-width=\"1\" stroke-dasharray=\"2 2\"/>\n",
                      rf_plot_x_px(a, q->intensity), rf_plot_y_px(a, q->flops_per_s),
                      rf_plot_x_px(a, m->intensity), rf_plot_y_px(a, m->flops_per_s),
                      rf__series_color[q->series]);
    }
}

/* Drawing order: prefill, no-phase, then decode (a circle stays visible on
 * a square at the same place), larger markers first within each. */
static bool drawn_before(const rf_plot_point *a, const rf_plot_point *b)
{
    static const int rank[3] = {
        [RF_SERIES_PREFILL] = 0, [RF_SERIES_OTHER] = 1, [RF_SERIES_DECODE] = 2};
    if (a->series != b->series)
        return rank[a->series] < rank[b->series];
    return rf__marker_r(a) > rf__marker_r(b);
}

static void points(rf_buf *out, const rf_plot *p)
{
    size_t order[RF_PLOT_MAX_POINTS], n = 0;
    for (size_t i = 0; i < p->n_points; i++) { /* insertion: stable, and n is small */
        if (p->points[i].off_axes)
            continue;
        size_t j = n++;
        for (; j > 0 && drawn_before(&p->points[i], &p->points[order[j - 1]]); j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    const rf_plot_axes *a = &p->axes;
    for (size_t k = 0; k < n; k++) {
        const rf_plot_point *q = &p->points[order[k]];
        rf_buf_printf(out, "<g class=\"pt %s%s\" data-op=\"", series_class[q->series],
                      q->measured     ? " measured"
                      : q->collective ? " coll"
                                      : "");
        rf__xml_text(out, q->name);
        rf_buf_printf(out, "\" transform=\"translate(%.1f,%.1f)\">", rf_plot_x_px(a, q->intensity),
                      rf_plot_y_px(a, q->flops_per_s));
        point_title(out, q);
        if (q->collective)
            coll_marker(out, q->series, rf__marker_r(q));
        else
            marker(out, q->series, q->measured, rf__marker_r(q));
        rf_buf_puts(out, "</g>\n");
    }
    char ridge[32];
    rf_buf_printf(out,
                  "<g class=\"ridge\" transform=\"translate(%.1f,%.1f)\"><title>ridge I* = "
                  "%s %s/byte</title><path d=\"M0 -7.5 L7.5 0 L0 7.5 L-7.5 0 Z\" "
                  "fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"/></g>\n",
                  rf_plot_x_px(a, p->ridge), rf_plot_y_px(a, p->peak_flops_per_s),
                  rf__ridge_text(p->ridge, ridge), rf__dtype_counts_ops(p->math) ? "OP" : "FLOP",
                  RF__ROOF_MAIN);
}

/* The footnote: what is not drawn or not labelled, in at most two lines. */
static void footnote(rf_buf *out, const rf_plot *p, const rf_plot_layout *lay)
{
    char foot[2 * RF_PLOT_TEXT_MAX + 32], line[2 * RF_PLOT_TEXT_MAX + 32];
    snprintf(foot, sizeof foot, "%s%s%s%s", p->footnote,
             p->footnote[0] && lay->unlabelled[0] ? " \xc2\xb7 " : "",
             lay->unlabelled[0] ? "unlabelled (no room): " : "", lay->unlabelled);
    for (int i = 0; i < 2 && foot[0]; i++) {
        rf__take_line(foot, line, sizeof line, RF__FONT_SMALL, p->width_px - p->axes.left_px - 8,
                      i == 1);
        text(out, p->axes.left_px, p->height_px - 20 + 12 * i, RF__FONT_SMALL, NULL, "#555555",
             false, line);
    }
}

rf_status rf_plot_write_svg(const rf_plot *p, rf_buf *out, rf_err *err)
{
    rf_plot_layout *lay = malloc(sizeof *lay);
    if (!lay)
        return rf_err_set(err, RF_ENOMEM, "figure: out of memory");
    if (rf_plot_layout_compute(p, lay, err)) {
        free(lay);
        return RF_ENOMEM;
    }
    char full[2 * RF_PLOT_TEXT_MAX + 8];
    snprintf(full, sizeof full, "%s: %s", p->title, p->subtitle);
    svg_open(out, p->width_px, p->height_px, full);
    for (int i = 0; i < p->n_heading; i++) /* the title, then the subtitle's lines */
        text(out, p->axes.left_px, i ? 42 + 14.0 * (i - 1) : 24, i ? RF__FONT_SUB : RF__FONT_TITLE,
             NULL, i ? "#444444" : "#111111", false, p->heading[i]);
    axes(out, p);
    roofs(out, p);
    points(out, p);
    for (size_t i = 0; i < lay->n_labels; i++)
        label(out, &lay->labels[i]);
    legend(out, p, &lay->legend);
    footnote(out, p, lay);
    rf_buf_puts(out, "</svg>\n");
    free(lay);
    if (out->failed)
        return rf_err_set(err, RF_ENOMEM, "figure: out of memory");
    return RF_OK;
}

/* ---- the batch sweep chart ------------------------------------------------------ */
static void panel(rf_buf *b, const rf_batch_chart *c, const logaxis *x, const double *v, double top,
                  double height, char kind, rf_unit unit, const char *color, const char *name)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < c->n; i++)
        lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    logaxis y = {pow(10, floor(rf__lg(lo))), pow(10, ceil(rf__lg(hi))), top + height, top};
    if (y.hi <= y.lo)
        y.hi = y.lo * 10;
    y_decades(b, &y, x->p0, x->p1, kind);
    rf_buf_printf(b,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                  "stroke=\"#888888\"/>\n",
                  x->p0, top, x->p1 - x->p0, height);
    text(b, x->p0 + 6, top + 14, RF__FONT_LABEL, NULL, color, true, name);
    rf_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"", color);
    for (size_t i = 0; i < c->n; i++)
        rf_buf_printf(b, "%s%.1f,%.1f", i ? " " : "", at(x, (double)c->batch[i]), at(&y, v[i]));
    rf_buf_puts(b, "\"/>\n");
    /* Value labels on every k-th point, so neighbours never collide. */
    double step = c->n > 1 ? (x->p1 - x->p0) / (double)c->n : 1e9;
    size_t every = (size_t)ceil(64 / step);
    for (size_t i = 0; i < c->n; i++) {
        char val[48], tip[96];
        double px = at(x, (double)c->batch[i]), py = at(&y, v[i]);
        rf_fmt(v[i], unit, val, sizeof val);
        snprintf(tip, sizeof tip, "B = %lld: %s (%s)", (long long)c->batch[i], val,
                 rf_regime_name(c->regime[i]));
        rf_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>", px, py,
                      color);
        rf__xml_text(b, tip);
        rf_buf_puts(b, "</title></circle>\n");
        if (i % (every ? every : 1) == 0 || i + 1 == c->n)
            text(b, px, py - 8, RF__FONT_SMALL, "middle", "#333333", true, val);
    }
}

rf_status rf_batch_chart_write_svg(const rf_batch_chart *c, rf_buf *out, rf_err *err)
{
    if (!c->n)
        return rf_err_set(err, RF_EINVAL, "batch sweep: no points");
    double left = 84, right = c->width_px - 24;
    double t1 = 52, h = 150, t2 = t1 + h + 34;
    double lo = (double)c->batch[0], hi = (double)c->batch[c->n - 1];
    logaxis x = {lo / 1.3, hi * 1.3, left, right};
    svg_open(out, c->width_px, c->height_px, c->title);
    char title[RF_PLOT_TEXT_MAX], line[RF_PLOT_TEXT_MAX];
    snprintf(title, sizeof title, "%s", c->title);
    rf__take_line(title, line, sizeof line, RF__FONT_TITLE, right - left, true);
    text(out, left, 24, RF__FONT_TITLE, NULL, "#111111", false, line);

    if (c->capacity_sequences >= 0) {
        double cx = c->capacity_sequences <= x.lo   ? left
                    : c->capacity_sequences >= x.hi ? right
                                                    : at(&x, c->capacity_sequences);
        char cap[160], n[32];
        rf_fmt(c->capacity_sequences, RF_U_RATIO, n, sizeof n);
        snprintf(cap, sizeof cap, "KV capacity: %s sequences at s = %lld", n,
                 (long long)c->context);
        if (cx < right)
            rf_buf_printf(out,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                          "fill=\"#d62728\" fill-opacity=\"0.08\"/>\n"
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                          "fill=\"#d62728\" fill-opacity=\"0.08\"/>\n",
                          cx, t1, right - cx, h, cx, t2, right - cx, h);
        rf_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
                      "stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n",
                      cx, t1 - 8, cx, t2 + h);
        bool room = right - cx > rf_plot_text_px(cap, RF__FONT_SMALL) + 8;
        text(out, room ? cx + 4 : cx - 4, t1 - 10, RF__FONT_SMALL, room ? NULL : "end", "#b02020",
             true, cap);
        if (cx < right - 150)
            text(out, right - 6, t2 + h - 8, RF__FONT_SMALL, "end", "#b02020", true,
                 "shaded: more sequences than the KV cache holds");
    }
    panel(out, c, &x, c->floor_s, t1, h, 's', RF_U_SECONDS, "#1f66b3", "step floor (s)");
    panel(out, c, &x, c->tokens_per_s, t2, h, 't', RF_U_TOK_RATE, "#2a7d3a",
          "tokens/s ceiling (B / floor)");
    for (size_t i = 0; i < c->n; i++) {
        char lab[32];
        snprintf(lab, sizeof lab, "%lld", (long long)c->batch[i]);
        text(out, at(&x, (double)c->batch[i]), t2 + h + 16, RF__FONT_LABEL, "middle", "#333333",
             false, lab);
    }
    text(out, (left + right) / 2, t2 + h + 34, RF__FONT_LABEL, "middle", "#222222", false,
         "batch B (sequences in the decode step), log scale");
    rf_buf_puts(out, "</svg>\n");
    if (out->failed)
        return rf_err_set(err, RF_ENOMEM, "batch sweep: out of memory");
    return RF_OK;
}
