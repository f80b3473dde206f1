/* plot.c - the roofline figure as data: roofs, points and axes from steps
 * and measured files (rf_plot.h). Where the labels go is plot_layout.c's
 * job, drawing write_svg.c's; all use the axis mapping defined here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_impl.h"

const char *const rf__series_color[3] = {
    [RF_SERIES_DECODE] = "#1f66b3",
    [RF_SERIES_PREFILL] = "#d9560b",
    [RF_SERIES_OTHER] = "#555555",
};

/* ---- axes --------------------------------------------------------------- */
double rf_plot_x_px(const rf_plot_axes *a, double intensity)
{
    double lo = log10(a->x_min), hi = log10(a->x_max);
    double v = intensity > 0 ? log10(intensity) : lo;
    return a->left_px + a->width_px * (v - lo) / (hi - lo);
}

double rf_plot_y_px(const rf_plot_axes *a, double flops_per_s)
{
    double lo = log10(a->y_min), hi = log10(a->y_max);
    double v = flops_per_s > 0 ? log10(flops_per_s) : lo;
    return a->top_px + a->height_px * (hi - v) / (hi - lo);
}

/* ---- building ------------------------------------------------------------- */
/* plot_impl.h */
void rf__rate_text(double flops_per_s, rf_dtype_kind k, char *out, size_t cap)
{
    char tmp[48];
    rf_fmt(flops_per_s, RF_U_FLOP_RATE, tmp, sizeof tmp);
    char *f = strstr(tmp, "FLOP/s");
    if ((k == RF_INT8 || k == RF_INT4) && f)
        memmove(f, f + 2, strlen(f + 2) + 1); /* "FLOP/s" -> "OP/s" */
    snprintf(out, cap, "%s", tmp);
}

static void add_line(rf_plot *p, rf_plot_role role, bool sloped, double value, double from,
                     double to, const char *label)
{
    if (p->n_lines >= RF_PLOT_MAX_LINES)
        return; /* cannot happen: main 2 + other dtypes + measured 1 + dtypes < 24 */
    rf_plot_line *l = &p->lines[p->n_lines++];
    *l = (rf_plot_line){.role = role, .sloped = sloped, .value = value,
                        .from_intensity = from, .to_intensity = to};
    snprintf(l->label, sizeof l->label, "%s", label);
}

static bool same_peak(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(a, b); }

void rf_plot_init(rf_plot *p, const rf_hw *hw, const rf_roof *roof)
{
    char rate[48], label[64];
    memset(p, 0, sizeof *p);
    p->width_px = RF_PLOT_WIDTH_PX;
    p->height_px = RF_PLOT_HEIGHT_PX;
    p->math = roof->math;
    p->bw_bytes_per_s = roof->bw_bytes_per_s;
    p->peak_flops_per_s = roof->peak_flops_per_s;
    p->ridge = roof->ridge;
    rf_fmt(roof->bw_bytes_per_s, RF_U_BW, label, sizeof label);
    add_line(p, RF_PLOT_MAIN, true, roof->bw_bytes_per_s, 0, roof->ridge, label);
    rf__rate_text(roof->peak_flops_per_s, roof->math, rate, sizeof rate);
    snprintf(label, sizeof label, "%s %s", rf_dtype_name(roof->math), rate);
    add_line(p, RF_PLOT_MAIN, false, roof->peak_flops_per_s, roof->ridge, 0, label);

    bool done[RF_DTYPE_COUNT] = {false};
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        double peak = hw->peak_flops_per_s[k];
        if (done[k] || !(peak > 0) || k == (int)roof->math ||
            same_peak(peak, roof->peak_flops_per_s))
            continue;
        size_t n = (size_t)snprintf(label, sizeof label, "%s", rf_dtype_name((rf_dtype_kind)k));
        for (int j = k + 1; j < RF_DTYPE_COUNT; j++)
            if (!done[j] && same_peak(hw->peak_flops_per_s[j], peak) && n < sizeof label) {
                n += (size_t)snprintf(label + n, sizeof label - n, "/%s",
                                      rf_dtype_name((rf_dtype_kind)j));
                done[j] = true;
            }
        rf__rate_text(peak, (rf_dtype_kind)k, rate, sizeof rate);
        if (n < sizeof label)
            snprintf(label + n, sizeof label - n, " %s", rate);
        add_line(p, RF_PLOT_OTHER, false, peak, peak / roof->bw_bytes_per_s, 0, label);
    }
}

void rf_plot_describe(rf_plot *p, const char *model, const char *hw, const rf_step_opts *decode,
                      const rf_step_opts *prefill)
{
    const rf_step_opts *o = decode ? decode : prefill;
    char w[40] = "", a[40] = "", kv[40] = "", dec[96] = "", pre[96] = "";
    snprintf(p->title, sizeof p->title, "%s on %s", model, hw);
    if (o) {
        rf_dtype_describe(o->w, w, sizeof w);
        rf_dtype_describe(o->a, a, sizeof a);
        rf_dtype_describe(o->kv, kv, sizeof kv);
    }
    if (decode)
        snprintf(dec, sizeof dec, "decode: B = %lld at s = %lld", (long long)decode->batch,
                 (long long)decode->context);
    /* which attention the prefill points count: the full square or --causal */
    const char *mask = prefill && prefill->causal ? ", causal" : ", full T x T attention";
    if (prefill && prefill->context)
        snprintf(pre, sizeof pre, "prefill: B = %lld, T = %lld after s = %lld%s",
                 (long long)prefill->batch, (long long)prefill->tokens,
                 (long long)prefill->context, mask);
    else if (prefill)
        snprintf(pre, sizeof pre, "prefill: B = %lld, T = %lld%s", (long long)prefill->batch,
                 (long long)prefill->tokens, mask);
    snprintf(p->subtitle, sizeof p->subtitle,
             "weights %s, activations %s, KV %s; math %s \xc2\xb7 %s%s%s", w, a, kv,
             rf_dtype_name(p->math), dec, decode && prefill ? " \xc2\xb7 " : "", pre);
    snprintf(p->series_label[RF_SERIES_DECODE], sizeof p->series_label[0], "%s", dec);
    snprintf(p->series_label[RF_SERIES_PREFILL], sizeof p->series_label[0], "%s", pre);
    snprintf(p->series_label[RF_SERIES_OTHER], sizeof p->series_label[0], "measured, no phase");
}

static void note_unplaced(rf_plot *p, const char *name)
{
    size_t n = strlen(p->unplaced), k = strlen(name);
    for (const char *s = p->unplaced; (s = strstr(s, name)); s += k)
        if ((s == p->unplaced || s[-1] == ' ') && (s[k] == ',' || !s[k]))
            return; /* already named (both phases have an embedding) */
    snprintf(p->unplaced + n, sizeof p->unplaced - n, "%s%s", n ? ", " : "", name);
}

/* The next free point, named; NULL (and err set) when the figure is full. */
static rf_plot_point *new_point(rf_plot *p, const char *name, rf_err *err)
{
    if (p->n_points >= RF_PLOT_MAX_POINTS) {
        rf_err_set(err, RF_ERANGE, "figure full: more than %d points", RF_PLOT_MAX_POINTS);
        return NULL;
    }
    rf_plot_point *q = &p->points[p->n_points++];
    memset(q, 0, sizeof *q);
    snprintf(q->name, sizeof q->name, "%s", name);
    q->match = -1;
    return q;
}

rf_status rf_plot_add_step(rf_plot *p, const rf_step *st, rf_phase phase, rf_err *err)
{
    rf_roof roof = {.math = p->math, .peak_flops_per_s = p->peak_flops_per_s,
                    .bw_bytes_per_s = p->bw_bytes_per_s, .ridge = p->ridge};
    for (size_t i = 0; i < st->n_ops; i++) {
        const rf_op *op = &st->ops[i];
        rf_point pt = rf_roof_place(&roof, (double)op->flops, (double)op->bytes);
        if (!(pt.intensity > 0)) {
            note_unplaced(p, op->name);
            continue;
        }
        rf_plot_point *q = new_point(p, op->name, err);
        if (!q)
            return RF_ERANGE;
        q->series = phase == RF_DECODE ? RF_SERIES_DECODE : RF_SERIES_PREFILL;
        q->intensity = pt.intensity;
        q->flops_per_s = pt.attainable_flops_per_s;
    }
    return RF_OK;
}

rf_status rf_plot_add_measured(rf_plot *p, const rf_measured *m, rf_err *err)
{
    char label[64], rate[48];
    /* With both a bandwidth and a peak of the math dtype, the measured
     * roof bends at its own ridge; any other figure is a full line. */
    double peak = m->peak_flops_per_s[p->math], bw = m->bw_bytes_per_s;
    double ridge = bw > 0 && peak > 0 ? peak / bw : 0;
    if (bw > 0) {
        rf_fmt(bw, RF_U_BW, rate, sizeof rate);
        snprintf(label, sizeof label, "measured %s", rate);
        add_line(p, RF_PLOT_MEASURED, true, bw, 0, ridge, label);
    }
    for (int k = 0; k < RF_DTYPE_COUNT; k++)
        if (m->peak_flops_per_s[k] > 0) {
            rf__rate_text(m->peak_flops_per_s[k], (rf_dtype_kind)k, rate, sizeof rate);
            snprintf(label, sizeof label, "measured %s %s", rf_dtype_name((rf_dtype_kind)k), rate);
            add_line(p, RF_PLOT_MEASURED, false, m->peak_flops_per_s[k],
                     k == (int)p->math ? ridge : 0, 0, label);
        }
    size_t n_predicted = p->n_points;
    for (size_t i = 0; i < m->n_ops; i++) {
        const rf_measured_op *op = &m->ops[i];
        if (!(op->flops > 0)) {
            note_unplaced(p, op->name);
            continue;
        }
        rf_plot_point *q = new_point(p, op->name, err);
        if (!q)
            return RF_ERANGE;
        q->series = !op->has_phase            ? RF_SERIES_OTHER
                    : op->phase == RF_DECODE ? RF_SERIES_DECODE
                                              : RF_SERIES_PREFILL;
        q->measured = true;
        q->intensity = op->flops / op->bytes;
        q->flops_per_s = op->flops / op->measured_s;
        for (size_t j = 0; j < n_predicted; j++)
            if (!p->points[j].measured && p->points[j].series == q->series &&
                !strcmp(p->points[j].name, q->name)) {
                q->match = (int)j;
                break;
            }
    }
    snprintf(p->measured_name, sizeof p->measured_name, "%s", m->name[0] ? m->name : "file");
    return RF_OK;
}

void rf_plot_fit(rf_plot *p)
{
    double ilo = p->ridge, ihi = p->ridge, ylo = INFINITY, yhi = p->peak_flops_per_s;
    bool measured = false;
    for (size_t i = 0; i < p->n_points; i++) {
        const rf_plot_point *q = &p->points[i];
        ilo = fmin(ilo, q->intensity);
        ihi = fmax(ihi, q->intensity);
        ylo = fmin(ylo, q->flops_per_s);
        yhi = fmax(yhi, q->flops_per_s);
        measured |= q->measured;
    }
    for (size_t i = 0; i < p->n_lines; i++) {
        const rf_plot_line *l = &p->lines[i];
        measured |= l->role == RF_PLOT_MEASURED;
        if (l->sloped)
            continue;
        yhi = fmax(yhi, l->value);
        /* a compute roof needs room right of where it starts, for its label */
        ihi = fmax(ihi, 8 * l->from_intensity);
    }
    rf_plot_axes *a = &p->axes;
    a->x_min = pow(10, floor(log10(ilo) - 0.25));
    a->x_max = pow(10, ceil(log10(ihi) + 0.25));
    ylo = fmin(ylo, p->bw_bytes_per_s * a->x_min);
    a->y_min = pow(10, floor(log10(ylo) + 1e-9));
    a->left_px = 98;
    a->top_px = 58;
    a->width_px = p->width_px - a->left_px - 24;
    a->height_px = p->height_px - a->top_px - 74; /* ticks, axis title, 2 footnote lines */
    /* The top: the first half decade leaving 19 px above the highest roof,
     * room for its label (15 px of small text, 2 px off the line, inside
     * the 2 px inset labels keep from the frame). */
    double lo = log10(a->y_min), hi = log10(yhi), top = ceil(2 * hi) / 2;
    while ((top - hi) * a->height_px / (top - lo) < 19)
        top += 0.5;
    a->y_max = pow(10, top);

    size_t n = 0;
    p->footnote[0] = '\0';
    if (p->unplaced[0])
        n += (size_t)snprintf(p->footnote, sizeof p->footnote,
                              "no FLOPs, so no place on a log axis: %s", p->unplaced);
    if (measured && n < sizeof p->footnote)
        snprintf(p->footnote + n, sizeof p->footnote - n,
                 "%smeasured (dashed roofs, hollow markers): %s", n ? " \xc2\xb7 " : "",
                 p->measured_name);
}
