/* load_svg.c - the latency-throughput curve under load (rf_load_svg.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "roofline/rf_load_svg.h"

#include "plot_impl.h"

enum { W = 900, H = 520, LEFT = 90, RIGHT = 30, TOP = 50, BOTTOM = 70 };

typedef struct frame {
    double x_hi;       /* the rate at the right edge                    */
    double y_lo, y_hi; /* log10 seconds at the bottom and top: decades  */
} frame;

static double x_px(const frame *f, double rate)
{
    return LEFT + rate / f->x_hi * (W - LEFT - RIGHT);
}

static double y_px(const frame *f, double s)
{
    return H - BOTTOM - (log10(s) - f->y_lo) / (f->y_hi - f->y_lo) * (H - TOP - BOTTOM);
}

static void curve(rf_buf *b, const frame *f, const rf_load_point *p, size_t n, bool ttft,
                  const char *color)
{
    rf_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color,
                  ttft ? "" : " stroke-dasharray=\"6 4\"");
    for (size_t i = 0; i < n; i++)
        rf_buf_printf(b, "%s%.1f,%.1f", i ? " " : "", x_px(f, p[i].rate_per_s),
                      y_px(f, ttft ? p[i].ttft_s : p[i].tpot_s));
    rf_buf_puts(b, "\"/>\n");
    for (size_t i = 0; i < n; i++)
        rf_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" stroke=\"%s\" fill=\"%s\"/>\n",
                      x_px(f, p[i].rate_per_s), y_px(f, ttft ? p[i].ttft_s : p[i].tpot_s), color,
                      p[i].overloaded ? "white" : color);
}

static void slo(rf_buf *b, const frame *f, double s, const char *label, const char *color)
{
    if (!(s > 0) || log10(s) < f->y_lo || log10(s) > f->y_hi)
        return;
    double y = y_px(f, s);
    rf_buf_printf(b,
                  "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                  "stroke-dasharray=\"2 3\"/>\n<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
                  "text-anchor=\"end\" fill=\"%s\">%s %g s</text>\n",
                  LEFT, y, W - RIGHT, y, color, W - RIGHT - 4, y - 4, color, label, s);
}

rf_status rf_load_svg_write(const rf_load_point *p, size_t n, const rf_load_marks *mk, rf_buf *out,
                            rf_err *err)
{
    if (n < 2)
        return rf_err_set(err, RF_EINVAL, "load curve: %zu points, at least 2 needed", n);
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && !(p[i].rate_per_s > p[i - 1].rate_per_s))
            return rf_err_set(err, RF_EINVAL, "load curve: point %zu's rate does not rise", i);
        double v[2] = {p[i].ttft_s, p[i].tpot_s};
        for (int k = 0; k < 2; k++) {
            if (!isfinite(v[k]) || !(v[k] > 0))
                return rf_err_set(err, RF_EINVAL, "load curve: point %zu has a time not > 0", i);
            lo = v[k] < lo ? v[k] : lo;
            hi = v[k] > hi ? v[k] : hi;
        }
    }
    double slos[2] = {mk->slo_ttft_s, mk->slo_tpot_s};
    for (int k = 0; k < 2; k++)
        if (slos[k] > 0) {
            lo = slos[k] < lo ? slos[k] : lo;
            hi = slos[k] > hi ? slos[k] : hi;
        }
    frame f = {p[n - 1].rate_per_s * 1.05, floor(log10(lo)), ceil(log10(hi))};
    if (f.y_hi <= f.y_lo)
        f.y_hi = f.y_lo + 1;
    rf_buf_printf(out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
                  "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n"
                  "<text x=\"%d\" y=\"28\" font-size=\"16\">",
                  W, H, W, H, W, H, LEFT);
    rf__xml_text(out, mk->title ? mk->title : "");
    rf_buf_puts(out, "</text>\n");
    for (int d = (int)f.y_lo; d <= (int)f.y_hi; d++) { /* decades */
        double y = y_px(&f, pow(10, d));
        rf_buf_printf(out,
                      "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                      "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">"
                      "%g s</text>\n",
                      LEFT, y, W - RIGHT, y, LEFT - 6, y + 4, pow(10, d));
    }
    for (int k = 0; k <= 5; k++) { /* rate ticks */
        double r = f.x_hi * k / 5, x = x_px(&f, r);
        rf_buf_printf(out,
                      "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">"
                      "%.3g</text>\n",
                      x, H - BOTTOM + 18, r);
    }
    rf_buf_printf(out,
                  "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                  "stroke=\"black\"/>\n<text x=\"%d\" y=\"%d\" font-size=\"13\" "
                  "text-anchor=\"middle\">request rate (requests/s)</text>\n"
                  "<text x=\"20\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" "
                  "transform=\"rotate(-90 20 %d)\">P%g latency (s, log)</text>\n",
                  LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM, (LEFT + W - RIGHT) / 2, H - 24,
                  (TOP + H - BOTTOM) / 2, (TOP + H - BOTTOM) / 2,
                  mk->percentile > 0 ? mk->percentile : 99);
    slo(out, &f, mk->slo_ttft_s, "TTFT SLO", "#c0392b");
    slo(out, &f, mk->slo_tpot_s, "TPOT SLO", "#2c5aa0");
    if (mk->knee_rate_per_s > 0 && mk->knee_rate_per_s <= f.x_hi) {
        double x = x_px(&f, mk->knee_rate_per_s);
        rf_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" "
                      "stroke-dasharray=\"4 4\"/>\n<text x=\"%.1f\" y=\"%d\" "
                      "font-size=\"12\">capacity knee %.3g/s</text>\n",
                      x, TOP, x, H - BOTTOM, x + 4, TOP + 14, mk->knee_rate_per_s);
    }
    curve(out, &f, p, n, true, "#c0392b");
    curve(out, &f, p, n, false, "#2c5aa0");
    rf_buf_printf(out,
                  "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#c0392b\">TTFT "
                  "(solid)</text>\n<text x=\"%d\" y=\"%d\" font-size=\"12\" "
                  "fill=\"#2c5aa0\">TPOT (dashed); hollow: overloaded</text>\n</svg>\n",
                  LEFT + 8, TOP + 16, LEFT + 8, TOP + 32);
    return RF_OK;
}

/* The root's width and height, and where its attributes end. */
static bool root_size(const char *svg, int *w, int *h, const char **after)
{
    const char *r = svg ? strstr(svg, "<svg ") : NULL;
    const char *end = r ? strchr(r, '>') : NULL;
    if (!end)
        return false;
    const char *pw = strstr(r, " width=\""), *ph = strstr(r, " height=\"");
    if (!pw || !ph || pw > end || ph > end || sscanf(pw, " width=\"%d\"", w) != 1 ||
        sscanf(ph, " height=\"%d\"", h) != 1 || *w < 1 || *h < 1)
        return false;
    *after = r + 5;
    return true;
}

rf_status rf_svg_stack(const char *const *svgs, size_t n, rf_buf *out, rf_err *err)
{
    int w = 0, h = 0;
    for (size_t i = 0; i < n; i++) {
        int wi, hi;
        const char *after;
        if (!root_size(svgs[i], &wi, &hi, &after))
            return rf_err_set(err, RF_EINVAL, "figure %zu: no root <svg> with a width and height",
                              i);
        w = wi > w ? wi : w;
        h += hi;
    }
    if (n < 1)
        return rf_err_set(err, RF_EINVAL, "no figure to stack");
    rf_buf_printf(out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\">\n",
                  w, h, w, h);
    int y = 0;
    for (size_t i = 0; i < n; i++) {
        int wi, hi;
        const char *after = NULL;
        if (!root_size(svgs[i], &wi, &hi, &after)) /* checked above: never */
            continue;
        rf_buf_printf(out, "<svg x=\"0\" y=\"%d\" ", y);
        rf_buf_puts(out, after);
        y += hi;
    }
    rf_buf_puts(out, "</svg>\n");
    return RF_OK;
}
