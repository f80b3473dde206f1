/* plot.c - the roofline figure as data: roofs, points and axes from steps
 * and measured files, and where every label goes (rf_plot.h). Drawing is
 * write_svg.c's job; both use the axis mapping defined here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_impl.h"

#define PI 3.14159265358979323846

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
/* "330.3 TFLOP/s"; integer dtypes count operations, not FLOPs. */
static void rate_text(double flops_per_s, rf_dtype_kind k, char *out, size_t cap)
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
    rate_text(roof->peak_flops_per_s, roof->math, rate, sizeof rate);
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
        rate_text(peak, (rf_dtype_kind)k, rate, sizeof rate);
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
    if (prefill && prefill->context)
        snprintf(pre, sizeof pre, "prefill: B = %lld, T = %lld after s = %lld",
                 (long long)prefill->batch, (long long)prefill->tokens,
                 (long long)prefill->context);
    else if (prefill)
        snprintf(pre, sizeof pre, "prefill: B = %lld, T = %lld", (long long)prefill->batch,
                 (long long)prefill->tokens);
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
            rate_text(m->peak_flops_per_s[k], (rf_dtype_kind)k, rate, sizeof rate);
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

/* ---- text widths ----------------------------------------------------------- */
/* DejaVu Sans advance widths of ASCII 32..126, in 1/2048 em. */
static const unsigned short dejavu[95] = {
    651,  821,  942,  1716, 1303, 1946, 1597, 563,  799,  799,  1024, 1716, 651,  739,
    651,  690,  1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690,  690,
    1716, 1716, 1716, 1087, 2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604,
    604,  1343, 1141, 1767, 1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025,
    1403, 1251, 1403, 799,  690,  799,  1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260,
    721,  1300, 1298, 569,  569,  1186, 569,  1995, 1298, 1253, 1300, 1300, 842,  1067,
    803,  1298, 1212, 1675, 1212, 1212, 1075, 1303, 690,  1303, 1716};

double rf__text_px(const char *s, double font_px)
{
    double units = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c >= 32 && *c < 127)
            units += dejavu[*c - 32];
        else if ((*c & 0xC0) != 0x80)
            units += 1716; /* a multi-byte character: count it wide */
    }
    return units / 2048.0 * font_px;
}

/* ---- geometry --------------------------------------------------------------- */
typedef struct seg {
    double x0, y0, x1, y1;
    bool leader; /* a label's leader: no other label may cross it */
} seg;

static void axes_of(const rf_plot_box *b, double u[2], double v[2])
{
    double t = b->angle_deg * PI / 180.0;
    u[0] = cos(t), u[1] = sin(t);
    v[0] = -sin(t), v[1] = cos(t);
}

/* Project b's corners on axis d: [lo, hi]. */
static void project(const rf_plot_box *b, const double d[2], double *lo, double *hi)
{
    double u[2], v[2];
    axes_of(b, u, v);
    double c = b->cx * d[0] + b->cy * d[1];
    double r = fabs(u[0] * d[0] + u[1] * d[1]) * b->w / 2 + fabs(v[0] * d[0] + v[1] * d[1]) * b->h / 2;
    *lo = c - r;
    *hi = c + r;
}

bool rf_plot_box_overlap(const rf_plot_box *a, const rf_plot_box *b)
{
    double ax[2][2], bx[2][2];
    axes_of(a, ax[0], ax[1]);
    axes_of(b, bx[0], bx[1]);
    const double *axes[4] = {ax[0], ax[1], bx[0], bx[1]};
    for (int i = 0; i < 4; i++) {
        double alo, ahi, blo, bhi;
        project(a, axes[i], &alo, &ahi);
        project(b, axes[i], &blo, &bhi);
        if (ahi <= blo || bhi <= alo)
            return false; /* a separating axis; touching edges do not overlap */
    }
    return true;
}

/* Clip the segment to [xmin,xmax]x[ymin,ymax] (Liang-Barsky); false if
 * nothing is left. */
static bool clip(double *x0, double *y0, double *x1, double *y1, double xmin, double ymin,
                 double xmax, double ymax)
{
    double t0 = 0, t1 = 1, dx = *x1 - *x0, dy = *y1 - *y0;
    double pq[4][2] = {{-dx, *x0 - xmin}, {dx, xmax - *x0}, {-dy, *y0 - ymin}, {dy, ymax - *y0}};
    for (int i = 0; i < 4; i++) {
        double pp = pq[i][0], q = pq[i][1];
        if (pp == 0) {
            if (q < 0)
                return false;
            continue;
        }
        double t = q / pp;
        if (pp < 0 && t > t0)
            t0 = t;
        if (pp > 0 && t < t1)
            t1 = t;
    }
    if (t0 > t1)
        return false;
    double ox = *x0, oy = *y0;
    *x0 = ox + t0 * dx, *y0 = oy + t0 * dy;
    *x1 = ox + t1 * dx, *y1 = oy + t1 * dy;
    return true;
}

static bool seg_hits_box(const seg *s, const rf_plot_box *b)
{
    double u[2], v[2];
    axes_of(b, u, v);
    double px0 = s->x0 - b->cx, py0 = s->y0 - b->cy, px1 = s->x1 - b->cx, py1 = s->y1 - b->cy;
    double x0 = px0 * u[0] + py0 * u[1], y0 = px0 * v[0] + py0 * v[1];
    double x1 = px1 * u[0] + py1 * u[1], y1 = px1 * v[0] + py1 * v[1];
    return clip(&x0, &y0, &x1, &y1, -b->w / 2, -b->h / 2, b->w / 2, b->h / 2);
}

bool rf__plot_line_px(const rf_plot *p, const rf_plot_line *l, double xy[4])
{
    const rf_plot_axes *a = &p->axes;
    double i0 = l->from_intensity > 0 ? fmax(l->from_intensity, a->x_min) : a->x_min;
    double i1 = l->to_intensity > 0 ? fmin(l->to_intensity, a->x_max) : a->x_max;
    if (!(i0 < i1))
        return false;
    xy[0] = rf_plot_x_px(a, i0);
    xy[2] = rf_plot_x_px(a, i1);
    xy[1] = rf_plot_y_px(a, l->sloped ? i0 * l->value : l->value);
    xy[3] = rf_plot_y_px(a, l->sloped ? i1 * l->value : l->value);
    return clip(&xy[0], &xy[1], &xy[2], &xy[3], a->left_px, a->top_px, a->left_px + a->width_px,
                a->top_px + a->height_px);
}

/* ---- layout -------------------------------------------------------------------- */
#define MAX_SEGS (RF_PLOT_MAX_LINES + RF_PLOT_MAX_LABELS + 2)

typedef struct placer {
    const rf_plot *p;
    rf_plot_layout *out;
    rf_plot_box area;       /* where labels may go (the plot area, inset)  */
    seg segs[MAX_SEGS];     /* lines a label should rather not cross        */
    size_t n_segs;
    size_t n_markers;       /* points + the ridge                           */
    bool has_legend;
} placer;

static bool inside(const placer *pl, const rf_plot_box *b)
{
    double u[2], v[2];
    axes_of(b, u, v);
    double rx = fabs(u[0]) * b->w / 2 + fabs(v[0]) * b->h / 2;
    double ry = fabs(u[1]) * b->w / 2 + fabs(v[1]) * b->h / 2;
    return b->cx - rx >= pl->area.cx - pl->area.w / 2 && b->cx + rx <= pl->area.cx + pl->area.w / 2 &&
           b->cy - ry >= pl->area.cy - pl->area.h / 2 && b->cy + ry <= pl->area.cy + pl->area.h / 2;
}

/* Cost of putting a label at b (with an optional leader); INFINITY when it
 * would overlap a label, a marker or the legend, or leave the plot area. */
static double cost(const placer *pl, const rf_plot_box *b, const seg *leader)
{
    const rf_plot_layout *o = pl->out;
    if (!inside(pl, b))
        return INFINITY;
    if (pl->has_legend && rf_plot_box_overlap(b, &o->legend))
        return INFINITY;
    for (size_t i = 0; i < pl->n_markers; i++)
        if (rf_plot_box_overlap(b, &o->markers[i]))
            return INFINITY;
    for (size_t i = 0; i < o->n_labels; i++)
        if (rf_plot_box_overlap(b, &o->labels[i].box) ||
            (leader && seg_hits_box(leader, &o->labels[i].box)))
            return INFINITY;
    double c = 0;
    for (size_t i = 0; i < pl->n_segs; i++)
        if (seg_hits_box(&pl->segs[i], b)) {
            if (pl->segs[i].leader)
                return INFINITY;
            c += 40;
        }
    if (leader)
        for (size_t i = 0; i < pl->n_markers; i++)
            if (seg_hits_box(leader, &o->markers[i]))
                c += 25;
    return c;
}

static void add_seg(placer *pl, double x0, double y0, double x1, double y1, bool leader)
{
    if (pl->n_segs < MAX_SEGS)
        pl->segs[pl->n_segs++] = (seg){x0, y0, x1, y1, leader};
}

static void note_unlabelled(rf_plot_layout *o, const rf_plot_label *l)
{
    size_t n = strlen(o->unlabelled);
    for (int i = 0; i < l->n_text && n < sizeof o->unlabelled; i++)
        n += (size_t)snprintf(o->unlabelled + n, sizeof o->unlabelled - n, "%s%s",
                              n ? "; " : "", l->text[i]);
}

static void label_size(rf_plot_label *l)
{
    double w = 0;
    for (int i = 0; i < l->n_text; i++)
        w = fmax(w, rf__text_px(l->text[i], l->font_px));
    l->box.w = w + 4;
    l->box.h = l->n_text * RF__LINE_PX + 2;
}

/* Accept l at its best candidate; keep it out (and name it) if none fits. */
static void commit(placer *pl, rf_plot_label *l, double best)
{
    rf_plot_layout *o = pl->out;
    if (!isfinite(best)) {
        note_unlabelled(o, l);
        return;
    }
    if (l->leader) {
        /* The leader ends on the box edge nearest the anchor. */
        double ex = fmax(l->box.cx - l->box.w / 2, fmin(l->anchor_x, l->box.cx + l->box.w / 2));
        double ey = fmax(l->box.cy - l->box.h / 2, fmin(l->anchor_y, l->box.cy + l->box.h / 2));
        add_seg(pl, l->anchor_x, l->anchor_y, ex, ey, true);
    }
    o->labels[o->n_labels++] = *l;
}

/* Directions tried around an anchor, in order of preference (screen y down). */
static const double dirs[][2] = {
    {1, 0},  {-1, 0}, {1, -1}, {1, 1},  {-1, -1}, {-1, 1}, {0, -1}, {0, 1},
    {2, -1}, {2, 1},  {-2, -1}, {-2, 1}, {1, -2},  {1, 2},  {-1, -2}, {-1, 2},
};
static const double radii[] = {3, 8, 16, 28, 44, 64, 88, 118, 156, 200};

/* Search around the anchor box (cx, cy, half sizes ahw, ahh). prefer: index
 * of a direction that costs nothing extra (others pay for their rank). */
static void place_near(placer *pl, rf_plot_label *l, double cx, double cy, double ahw, double ahh,
                       int prefer)
{
    label_size(l);
    rf_plot_label best = *l;
    double best_c = INFINITY;
    for (size_t r = 0; r < sizeof radii / sizeof radii[0]; r++)
        for (int d = 0; d < (int)(sizeof dirs / sizeof dirs[0]); d++) {
            double dx = dirs[d][0], dy = dirs[d][1], n = fmax(fabs(dx), fabs(dy));
            dx /= n, dy /= n;
            rf_plot_label c = *l;
            c.box.cx = cx + dx * (ahw + c.box.w / 2 + radii[r]);
            c.box.cy = cy + dy * (ahh + c.box.h / 2 + radii[r]);
            c.leader = radii[r] > 12;
            seg lead = {l->anchor_x, l->anchor_y, c.box.cx, c.box.cy, true};
            double k = cost(pl, &c.box, c.leader ? &lead : NULL);
            k += radii[r] + (d == prefer ? 0 : 4 + 2 * d);
            if (k < best_c) {
                best_c = k;
                best = c;
            }
        }
    *l = best;
    commit(pl, l, best_c);
}

/* Names of a cluster's members of one series, shortest form: names ending
 * in "_proj" share it ("q/k/v/o_proj"), names sharing the word before their
 * first '_' share that ("expert_gate/up/down"); groups in the order they
 * first appear, joined by ", ". */
#define MAX_GROUPS 24
static void names_of(const rf_plot *p, const int *member, size_t n, rf_plot_series s, char *out,
                     size_t cap)
{
    struct group {
        char key[24];       /* "_proj" (a suffix), "expert_" (a prefix), or a whole name */
        char parts[160];    /* what differs, '/'-separated                           */
        char first[RF_MEASURED_NAME_MAX];
        size_t n, len;
    } g[MAX_GROUPS];
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = p->points[member[i]].name;
        if (p->points[member[i]].series != s)
            continue;
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= p->points[member[j]].series == s && !strcmp(p->points[member[j]].name, name);
        if (seen)
            continue;
        size_t k = strlen(name);
        const char *us = strchr(name, '_');
        char key[24];
        int plen;
        const char *part = name;
        if (k > 5 && !strcmp(name + k - 5, "_proj")) {
            snprintf(key, sizeof key, "_proj");
            plen = (int)(k - 5);
        } else if (us && us > name && us[1] && (size_t)(us - name) + 2 < sizeof key) {
            snprintf(key, sizeof key, "%.*s", (int)(us - name + 1), name);
            part = us + 1;
            plen = (int)strlen(part);
        } else {
            snprintf(key, sizeof key, "%.23s", name);
            plen = 0;
        }
        size_t at = 0;
        while (at < ng && strcmp(g[at].key, key))
            at++;
        if (at == ng) {
            if (ng == MAX_GROUPS)
                continue; /* more kinds of name than any model has */
            g[ng] = (struct group){.n = 0};
            snprintf(g[ng].key, sizeof g[ng].key, "%s", key);
            snprintf(g[ng].first, sizeof g[ng].first, "%s", name);
            ng++;
        }
        struct group *gr = &g[at];
        if (gr->len < sizeof gr->parts)
            gr->len += (size_t)snprintf(gr->parts + gr->len, sizeof gr->parts - gr->len, "%s%.*s",
                                        gr->n ? "/" : "", plen, part);
        gr->n++;
    }
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < ng && len < cap; i++) {
        const struct group *gr = &g[i];
        const char *sep = i ? ", " : "";
        if (gr->n == 1)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", sep, gr->first);
        else if (!strcmp(gr->key, "_proj"))
            len += (size_t)snprintf(out + len, cap - len, "%s%s_proj", sep, gr->parts);
        else
            len += (size_t)snprintf(out + len, cap - len, "%s%s%s", sep, gr->key, gr->parts);
    }
}

/* plot_impl.h; a cut falls after a '/' or before a ',' or a space. */
void rf__take_line(char *text, char *line, size_t cap, double font, double max_px, bool last)
{
    size_t n = strlen(text), cut = n;
    if (rf__text_px(text, font) > max_px) {
        double room = max_px - (last ? rf__text_px("...", font) : 0);
        size_t sep = 0, fit = 1;
        for (size_t i = 1; i < n; i++) {
            char save = text[i];
            text[i] = '\0';
            bool fits = rf__text_px(text, font) <= room;
            text[i] = save;
            if (!fits)
                break;
            fit = i;
            if (text[i - 1] == '/' || text[i] == ',' || text[i] == ' ')
                sep = i;
        }
        cut = sep ? sep : fit;
    }
    snprintf(line, cap, "%.*s%s", (int)cut, text, last && cut < n ? "..." : "");
    const char *rest = last ? text + n : text + cut;
    while (*rest == ',' || *rest == ' ')
        rest++;
    memmove(text, rest, strlen(rest) + 1);
}

static const char *const phase_word[3] = {"decode", "prefill", "no phase"};

/* A cluster's label: its names by series, a line or more each (at most
 * RF_PLOT_LABEL_LINES in all), coloured by series; "decode: ..." prefixes only when
 * the cluster mixes the series. */
static void cluster_label(const rf_plot *p, const int *member, size_t n, rf_plot_label *l)
{
    int series[3], ns = 0;
    bool measured = p->points[member[0]].measured;
    for (int s = 0; s < 3; s++)
        for (size_t i = 0; i < n; i++)
            if (p->points[member[i]].series == (rf_plot_series)s) {
                series[ns++] = s;
                break;
            }
    l->kind = RF_LABEL_POINTS;
    l->index = (size_t)member[0];
    l->font_px = RF__FONT_LABEL;
    l->n_text = 0;
    for (int k = 0; k < ns && l->n_text < RF_PLOT_LABEL_LINES; k++) {
        char names[128], text[200];
        names_of(p, member, n, (rf_plot_series)series[k], names, sizeof names);
        snprintf(text, sizeof text, "%s%s%s%s", measured ? "measured " : "",
                 ns > 1 ? phase_word[series[k]] : "", ns > 1 ? ": " : "", names);
        int last = RF_PLOT_LABEL_LINES - (ns - k); /* a line kept for each later series */
        while (text[0] && l->n_text <= last) {
            rf__take_line(text, l->text[l->n_text], sizeof l->text[0], l->font_px, 280,
                      l->n_text == last);
            l->color[l->n_text++] = (rf_plot_series)series[k];
        }
    }
}

int rf__plot_legend(const rf_plot *p, char rows[][RF__LEGEND_ROW], int kinds[])
{
    bool series[3] = {false}, measured = false, other = false, mroof = false;
    for (size_t i = 0; i < p->n_points; i++) {
        series[p->points[i].series] = true;
        measured |= p->points[i].measured;
    }
    for (size_t i = 0; i < p->n_lines; i++) {
        other |= p->lines[i].role == RF_PLOT_OTHER;
        mroof |= p->lines[i].role == RF_PLOT_MEASURED;
    }
    int n = 0;
    for (int s = 0; s < 3; s++)
        if (series[s]) {
            snprintf(rows[n], RF__LEGEND_ROW, "%s", p->series_label[s]);
            kinds[n++] = s;
        }
    if (measured) {
        snprintf(rows[n], RF__LEGEND_ROW, "measured (hollow), joined to its prediction");
        kinds[n++] = 3;
    }
    char pk[48], bw[48];
    rate_text(p->peak_flops_per_s, p->math, pk, sizeof pk);
    rf_fmt(p->bw_bytes_per_s, RF_U_BW, bw, sizeof bw);
    snprintf(rows[n], RF__LEGEND_ROW, "roof: %s %s, memory %s", rf_dtype_name(p->math), pk, bw);
    kinds[n++] = 4;
    if (other) {
        snprintf(rows[n], RF__LEGEND_ROW, "compute roofs of other dtypes");
        kinds[n++] = 5;
    }
    if (mroof) {
        snprintf(rows[n], RF__LEGEND_ROW, "measured roofs");
        kinds[n++] = 6;
    }
    return n;
}

static void place_legend(placer *pl)
{
    char rows[8][RF__LEGEND_ROW];
    int kinds[8], n = rf__plot_legend(pl->p, rows, kinds);
    double w = 0;
    for (int i = 0; i < n; i++)
        w = fmax(w, rf__text_px(rows[i], RF__FONT_LABEL));
    rf_plot_box b = {.w = w + 40, .h = n * 16 + 10};
    const rf_plot_axes *a = &pl->p->axes;
    double l = a->left_px + 8 + b.w / 2, r = a->left_px + a->width_px - 8 - b.w / 2;
    double t = a->top_px + 8 + b.h / 2, bo = a->top_px + a->height_px - 8 - b.h / 2;
    const double at[4][2] = {{l, t}, {r, bo}, {r, t}, {l, bo}};
    double best = INFINITY;
    for (int k = 0; k < 4; k++) {
        rf_plot_box c = b;
        c.cx = at[k][0], c.cy = at[k][1];
        double s = cost(pl, &c, NULL) + k;
        if (s < best) {
            best = s;
            pl->out->legend = c;
        }
    }
    pl->has_legend = true;
    if (!isfinite(best)) { /* markers everywhere: the first corner anyway */
        pl->out->legend = b;
        pl->out->legend.cx = l, pl->out->legend.cy = t;
    }
}

/* A roof's label: flat ones sit just above (or below) the line, sloped ones
 * along it, turned to its angle, on the empty upper-left side. */
static void place_line_label(placer *pl, size_t li)
{
    const rf_plot_line *line = &pl->p->lines[li];
    double xy[4];
    if (!rf__plot_line_px(pl->p, line, xy))
        return;
    rf_plot_label l = {.kind = RF_LABEL_LINE, .index = li, .n_text = 1,
                       .font_px = line->role == RF_PLOT_MAIN ? RF__FONT_LABEL : RF__FONT_SMALL};
    snprintf(l.text[0], sizeof l.text[0], "%s", line->label);
    label_size(&l);
    rf_plot_label best = l;
    double best_c = INFINITY;
    double len = hypot(xy[2] - xy[0], xy[3] - xy[1]);
    double ux = (xy[2] - xy[0]) / len, uy = (xy[3] - xy[1]) / len;
    double nx = uy, ny = -ux; /* the normal pointing up (up-left on the slope) */
    if (ny > 0)
        nx = -nx, ny = -ny;
    /* Along the line: sloped ones from a third of the way outwards both
     * ways, flat ones from the right end leftwards; on either side, flat
     * ones also standing a little off the line. */
    for (int side = 0; side < 2; side++)
        for (int k = 0; k <= 40; k++)
            for (int off_k = 0; off_k < (line->sloped ? 1 : 3); off_k++) {
                rf_plot_label c = l;
                double along = line->sloped
                                   ? len * (0.35 + (k % 2 ? -1 : 1) * 0.0125 * ((k + 1) / 2))
                                   : len - c.box.w / 2 - 6 - 12.0 * k;
                if (along < c.box.w / 2 || along > len - c.box.w / 2)
                    continue;
                double off = (c.box.h / 2 + 2 + 5.0 * off_k) * (side ? -1 : 1);
                c.box.cx = xy[0] + ux * along + nx * off;
                c.box.cy = xy[1] + uy * along + ny * off;
                c.box.angle_deg = line->sloped ? atan2(uy, ux) * 180 / PI : 0;
                c.anchor_x = c.box.cx, c.anchor_y = c.box.cy;
                double s = cost(pl, &c.box, NULL) + 2.0 * k + 30.0 * side + 12.0 * off_k;
                if (s < best_c) {
                    best_c = s;
                    best = c;
                }
            }
    commit(pl, &best, best_c);
}

/* The cluster a marker belongs to: the root of its union-find tree. */
static int root(const int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i];
    return i;
}

/* A measured point drawn joined to its prediction: it needs no label. */
static bool joined(const rf_plot_point *q) { return q->measured && q->match >= 0; }

rf_status rf_plot_layout_compute(const rf_plot *p, rf_plot_layout *out, rf_err *err)
{
    placer pl = {.p = p, .out = out};
    const rf_plot_axes *a = &p->axes;
    memset(out, 0, sizeof *out);
    pl.area = (rf_plot_box){.cx = a->left_px + a->width_px / 2, .cy = a->top_px + a->height_px / 2,
                            .w = a->width_px - 4, .h = a->height_px - 4};

    /* Markers: every point, then the ridge. */
    for (size_t i = 0; i < p->n_points; i++) {
        out->markers[i] = (rf_plot_box){.cx = rf_plot_x_px(a, p->points[i].intensity),
                                        .cy = rf_plot_y_px(a, p->points[i].flops_per_s),
                                        .w = 11, .h = 11};
        out->label_of[i] = -1;
    }
    double rx = rf_plot_x_px(a, p->ridge), ry = rf_plot_y_px(a, p->peak_flops_per_s);
    out->markers[p->n_points] = (rf_plot_box){.cx = rx, .cy = ry, .w = 13, .h = 13};
    pl.n_markers = p->n_points + 1;

    /* Lines to keep clear of: the roofs, the ridge drop line, the measured
     * points' joins to their predictions. */
    for (size_t i = 0; i < p->n_lines; i++) {
        double xy[4];
        if (rf__plot_line_px(p, &p->lines[i], xy))
            add_seg(&pl, xy[0], xy[1], xy[2], xy[3], false);
    }
    add_seg(&pl, rx, ry, rx, a->top_px + a->height_px, false);
    for (size_t i = 0; i < p->n_points; i++)
        if (p->points[i].match >= 0)
            add_seg(&pl, out->markers[i].cx, out->markers[i].cy,
                    out->markers[p->points[i].match].cx, out->markers[p->points[i].match].cy,
                    false);

    place_legend(&pl);

    rf_plot_label ridge = {.kind = RF_LABEL_RIDGE, .n_text = 1, .font_px = RF__FONT_LABEL,
                           .anchor_x = rx, .anchor_y = ry};
    snprintf(ridge.text[0], sizeof ridge.text[0], "ridge %.*f FLOP/B", p->ridge < 1000 ? 1 : 0,
             p->ridge);
    place_near(&pl, &ridge, rx, ry, 6.5, 6.5, 4 /* up-left: above the roof */);

    /* Which side of the ridge is which, along the bottom of the plot. */
    static const char *const side[2] = {"\xe2\x86\x90 memory-bound", "compute-bound \xe2\x86\x92"};
    for (int k = 0; k < 2; k++) {
        rf_plot_label l = {.kind = RF_LABEL_REGION, .n_text = 1, .font_px = RF__FONT_SMALL};
        snprintf(l.text[0], sizeof l.text[0], "%s", side[k]);
        label_size(&l);
        l.box.cx = rx + (k ? 1 : -1) * (l.box.w / 2 + 4);
        l.box.cy = a->top_px + a->height_px - 4 - l.box.h / 2;
        l.anchor_x = l.box.cx, l.anchor_y = l.box.cy;
        commit(&pl, &l, cost(&pl, &l.box, NULL));
    }

    for (size_t i = 0; i < p->n_lines; i++)
        if (p->lines[i].role == RF_PLOT_MAIN)
            place_line_label(&pl, i);

    /* Clusters: single linkage over markers, predicted and measured apart;
     * a measured point joined to its prediction needs no label. */
    int parent[RF_PLOT_MAX_POINTS];
    for (size_t i = 0; i < p->n_points; i++)
        parent[i] = (int)i;
    for (size_t i = 0; i < p->n_points; i++)
        for (size_t j = 0; j < i; j++) {
            const rf_plot_box *mi = &out->markers[i], *mj = &out->markers[j];
            if (p->points[i].measured != p->points[j].measured || joined(&p->points[i]) ||
                joined(&p->points[j]) ||
                fabs(mi->cx - mj->cx) >= RF_PLOT_MERGE_PX || fabs(mi->cy - mj->cy) >= RF_PLOT_MERGE_PX)
                continue;
            int ri = root(parent, (int)i), rj = root(parent, (int)j);
            parent[ri > rj ? ri : rj] = ri > rj ? rj : ri;
        }
    /* Widest labels first: they have the fewest places to go. */
    struct pending {
        rf_plot_label l;
        double hw, hh; /* half sizes of the cluster's markers together */
        bool done;
    } *todo = malloc(p->n_points * sizeof *todo + 1);
    if (!todo)
        return rf_err_set(err, RF_ENOMEM, "figure layout: out of memory");
    size_t n_todo = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        if (parent[i] != (int)i || joined(&p->points[i]))
            continue;
        int member[RF_PLOT_MAX_POINTS];
        size_t n = 0;
        double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
        for (size_t j = i; j < p->n_points; j++) {
            if (root(parent, (int)j) != (int)i)
                continue;
            member[n++] = (int)j;
            x0 = fmin(x0, out->markers[j].cx), x1 = fmax(x1, out->markers[j].cx);
            y0 = fmin(y0, out->markers[j].cy), y1 = fmax(y1, out->markers[j].cy);
        }
        struct pending *t = &todo[n_todo++];
        memset(t, 0, sizeof *t);
        cluster_label(p, member, n, &t->l);
        t->l.anchor_x = (x0 + x1) / 2, t->l.anchor_y = (y0 + y1) / 2;
        t->hw = (x1 - x0) / 2 + 5.5, t->hh = (y1 - y0) / 2 + 5.5;
        label_size(&t->l);
    }
    for (size_t k = 0; k < n_todo; k++) {
        struct pending *t = NULL;
        for (size_t i = 0; i < n_todo; i++)
            if (!todo[i].done &&
                (!t || todo[i].l.box.w * todo[i].l.n_text > t->l.box.w * t->l.n_text))
                t = &todo[i];
        t->done = true;
        size_t before = out->n_labels;
        place_near(&pl, &t->l, t->l.anchor_x, t->l.anchor_y, t->hw, t->hh, 0);
        if (out->n_labels > before)
            for (size_t j = 0; j < p->n_points; j++)
                if (root(parent, (int)j) == (int)t->l.index && !joined(&p->points[j]))
                    out->label_of[j] = (int)before;
    }
    free(todo);

    /* Last, the other dtypes' and the measured roofs: they may go unlabelled
     * where operators took the room (the legend still says what they are). */
    for (int role = RF_PLOT_OTHER; role <= RF_PLOT_MEASURED; role++)
        for (size_t i = 0; i < p->n_lines; i++)
            if ((int)p->lines[i].role == role)
                place_line_label(&pl, i);
    return RF_OK;
}

/* ---- the batch sweep -------------------------------------------------------------- */
rf_status rf_batch_chart_build(rf_batch_chart *c, const rf_model *m, const rf_step_opts *decode,
                               const rf_roof *roof, int64_t max_batch,
                               double capacity_sequences, rf_err *err)
{
    if (max_batch < 0)
        return rf_err_set(err, RF_EINVAL, "batch sweep: largest batch must be >= 1 (got %lld)",
                          (long long)max_batch);
    if (max_batch == 0)
        max_batch = capacity_sequences > 512 ? (int64_t)ceil(fmin(2 * capacity_sequences, (double)RF_DIM_MAX)) : 1024;
    memset(c, 0, sizeof *c);
    c->width_px = 900;
    c->height_px = 440;
    c->context = decode->context;
    c->capacity_sequences = capacity_sequences;
    snprintf(c->title, sizeof c->title,
             "%s, decode at s = %lld: step floor and tokens/s against batch B", m->name,
             (long long)decode->context);
    rf_step *st = malloc(sizeof *st);
    if (!st)
        return rf_err_set(err, RF_ENOMEM, "batch sweep: out of memory");
    rf_status s = RF_OK;
    for (int64_t b = 1; b <= max_batch && c->n < RF_CHART_MAX_POINTS; b *= 2) {
        rf_step_opts o = *decode;
        o.phase = RF_DECODE;
        o.batch = b;
        if ((s = rf_step_compute(m, &o, roof, st, err)))
            break;
        c->batch[c->n] = b;
        c->floor_s[c->n] = st->floor_s;
        c->tokens_per_s[c->n] = st->tokens_per_s;
        c->regime[c->n] = st->regime;
        c->n++;
    }
    free(st);
    return s;
}
