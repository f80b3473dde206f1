/* frontier_svg.c - the latency-throughput frontier (rf_frontier_svg.h). */
#include <math.h>
#include <stdbool.h>

#include "roofline/rf_frontier_svg.h"

enum { W = 900, H = 520, LEFT = 90, RIGHT = 30, TOP = 50, BOTTOM = 70 };

typedef struct axis {
    double lo, hi; /* log10 of the ends: whole decades */
} axis;

static axis fit(double lo, double hi)
{
    axis a = {floor(log10(lo)), ceil(log10(hi))};
    if (a.hi <= a.lo)
        a.hi = a.lo + 1;
    return a;
}

static double px(const axis *a, double v, double from, double to)
{
    return from + (log10(v) - a->lo) / (a->hi - a->lo) * (to - from);
}

/* Text with &, < and > escaped (model names come from files). */
static void text(rf_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            rf_buf_puts(b, "&amp;");
        else if (*s == '<')
            rf_buf_puts(b, "&lt;");
        else if (*s == '>')
            rf_buf_puts(b, "&gt;");
        else if ((unsigned char)*s < 0x20)
            rf_buf_puts(b, "?");
        else
            rf_buf_put(b, s, 1);
    }
}

static double lat(const rf_frontier_point *p, int which) { return which ? p->ttft_s : p->tpot_s; }

static bool front(const rf_frontier_point *p, int which)
{
    return which ? p->pareto_ttft : p->pareto_tpot;
}

/* A seconds tick as the report writes times: 1 ms, 10 us, 1 s. */
static void tick_label(rf_buf *b, double s)
{
    if (s >= 1)
        rf_buf_printf(b, "%g s", s);
    else if (s >= 1e-3)
        rf_buf_printf(b, "%g ms", s * 1e3);
    else
        rf_buf_printf(b, "%g us", s * 1e6);
}

/* The plot area and its two log axes. */
typedef struct frame {
    axis ax, ay;           /* latency (s), output tokens/s */
    double x0, x1, y0, y1; /* plot area, px: left, right, bottom, top */
} frame;

/* The axes that hold every point of both series; fails on a point that
 * cannot sit on a log axis. */
static rf_status fit_frame(const rf_frontier_point *p, size_t n, frame *f, rf_err *err)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    for (size_t i = 0; i < n; i++)
        for (int w = 0; w < 2; w++) {
            double x = lat(&p[i], w), y = p[i].tokens_per_s;
            if (w == 0 && x == 0 && n > 0)
                continue; /* no TPOT (N = 1): the TTFT series alone */
            if (!(x > 0 && isfinite(x) && y > 0 && isfinite(y)))
                return rf_err_set(err, RF_EINVAL,
                                  "frontier figure: batch %lld has a latency or throughput "
                                  "that is not positive",
                                  (long long)p[i].batch);
            xlo = fmin(xlo, x), xhi = fmax(xhi, x), ylo = fmin(ylo, y), yhi = fmax(yhi, y);
        }
    *f = (frame){fit(xlo, xhi), fit(ylo, yhi), LEFT, W - RIGHT, H - BOTTOM, TOP};
    return RF_OK;
}

/* The svg element, its white background and the title. */
static void write_header(rf_buf *out, const rf_frontier_marks *mk)
{
    rf_buf_printf(out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                  "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
                  W, H, W, H, W, H);
    rf_buf_printf(out, "<text x=\"%d\" y=\"24\" font-size=\"15\">", LEFT);
    text(out, mk && mk->title ? mk->title : "latency against throughput");
    rf_buf_puts(out, "</text>\n");
}

/* Decades of both axes (grid and labels), the frame and the axis titles. */
static void write_axes(rf_buf *out, const frame *f)
{
    for (double d = f->ax.lo; d <= f->ax.hi; d++) {
        double x = px(&f->ax, pow(10, d), f->x0, f->x1);
        rf_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                      x, f->y0, x, f->y1, x, f->y0 + 18);
        tick_label(out, pow(10, d));
        rf_buf_puts(out, "</text>\n");
    }
    for (double d = f->ay.lo; d <= f->ay.hi; d++) {
        double y = px(&f->ay, pow(10, d), f->y0, f->y1);
        rf_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                      f->x0, y, f->x1, y, f->x0 - 6, y + 4, pow(10, d));
    }
    rf_buf_printf(out,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                  "stroke=\"#333\"/>\n"
                  "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">latency (log): TPOT mean "
                  "(blue), TTFT (orange); filled: on the Pareto front</text>\n"
                  "<text transform=\"translate(20 %.1f) rotate(-90)\" "
                  "text-anchor=\"middle\">output tokens/s (log)</text>\n",
                  f->x0, f->y1, f->x1 - f->x0, f->y0 - f->y1, (f->x0 + f->x1) / 2, H - 22,
                  (f->y0 + f->y1) / 2);
}

/* Each series (TPOT, then TTFT): its front as a line, then every point,
 * filled when on the front. */
static void write_series(rf_buf *out, const frame *f, const rf_frontier_point *p, size_t n)
{
    static const char *const color[2] = {"#1f77b4", "#ff7f0e"};
    for (int w = 0; w < 2; w++) {
        rf_buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                      color[w]);
        for (size_t i = 0; i < n; i++)
            if (front(&p[i], w) && lat(&p[i], w) > 0)
                rf_buf_printf(out, "%.1f,%.1f ", px(&f->ax, lat(&p[i], w), f->x0, f->x1),
                              px(&f->ay, p[i].tokens_per_s, f->y0, f->y1));
        rf_buf_puts(out, "\"/>\n");
        for (size_t i = 0; i < n; i++) {
            if (!(lat(&p[i], w) > 0))
                continue;
            rf_buf_printf(out,
                          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" stroke=\"%s\" "
                          "fill=\"%s\"><title>B = %lld</title></circle>\n",
                          px(&f->ax, lat(&p[i], w), f->x0, f->x1),
                          px(&f->ay, p[i].tokens_per_s, f->y0, f->y1), color[w],
                          front(&p[i], w) ? color[w] : "white", (long long)p[i].batch);
        }
    }
}

/* The two named batches, ringed and labelled on the TPOT series. */
static void write_marks(rf_buf *out, const frame *f, const rf_frontier_point *p, size_t n,
                        const rf_frontier_marks *mk)
{
    const int64_t mark[2] = {mk ? mk->capacity_batch : 0, mk ? mk->weights_batch : 0};
    static const char *const name[2] = {"KV capacity", "KV = weights"};
    for (int k = 0; k < 2; k++) {
        if (mark[k] < 1 || (size_t)mark[k] > n || !(p[mark[k] - 1].tpot_s > 0))
            continue;
        const rf_frontier_point *q = &p[mark[k] - 1];
        double x = px(&f->ax, q->tpot_s, f->x0, f->x1);
        double y = px(&f->ay, q->tokens_per_s, f->y0, f->y1);
        rf_buf_printf(out,
                      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"none\" stroke=\"#333\"/>\n"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s, B = %lld</text>\n",
                      x, y, k ? x + 10 : x - 10, k ? y + 22 : y - 10, k ? "start" : "end", name[k],
                      (long long)q->batch);
    }
}

rf_status rf_frontier_svg_write(const rf_frontier_point *p, size_t n, const rf_frontier_marks *mk,
                                rf_buf *out, rf_err *err)
{
    if (!n)
        return rf_err_set(err, RF_EINVAL, "frontier figure: no points");
    frame f = {0}; /* filled by fit_frame; zeroed for the compiler's flow analysis */
    rf_status s = fit_frame(p, n, &f, err);
    if (s)
        return s;
    write_header(out, mk);
    write_axes(out, &f);
    write_series(out, &f, p, n);
    write_marks(out, &f, p, n, mk);
    rf_buf_puts(out, "</svg>\n");
    return out->failed ? rf_err_set(err, RF_EINTERNAL, "frontier figure: out of memory") : RF_OK;
}
