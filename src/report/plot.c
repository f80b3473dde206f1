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
/* plot_impl.h: log10 v, finite whatever v is. */
double rf__lg(double v)
{
    if (!(v > 0))
        return -RF__LG_MAX; /* 0, negative, NaN */
    return fmin(fmax(log10(v), -RF__LG_MAX), RF__LG_MAX);
}

/* An axis span in decades, never 0 (a degenerate axis maps to its start). */
static double span(double lo, double hi) { return hi - lo > 0 ? hi - lo : 1; }

double rf__plot_x_lg(const rf_plot_axes *a, double lg_intensity)
{
    double lo = rf__lg(a->x_min), hi = rf__lg(a->x_max);
    return a->left_px + a->width_px * (lg_intensity - lo) / span(lo, hi);
}

double rf__plot_y_lg(const rf_plot_axes *a, double lg_flops_per_s)
{
    double lo = rf__lg(a->y_min), hi = rf__lg(a->y_max);
    return a->top_px + a->height_px * (hi - lg_flops_per_s) / span(lo, hi);
}

double rf_plot_x_px(const rf_plot_axes *a, double intensity)
{
    return rf__plot_x_lg(a, intensity > 0 ? rf__lg(intensity) : rf__lg(a->x_min));
}

double rf_plot_y_px(const rf_plot_axes *a, double flops_per_s)
{
    return rf__plot_y_lg(a, flops_per_s > 0 ? rf__lg(flops_per_s) : rf__lg(a->y_min));
}

/* ---- geometry in canvas px ------------------------------------------------ */
/* plot_impl.h (Liang-Barsky) */
bool rf__clip(double *x0, double *y0, double *x1, double *y1, double xmin, double ymin, double xmax,
              double ymax)
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

bool rf__plot_line_px(const rf_plot *p, const rf_plot_line *l, double xy[4])
{
    const rf_plot_axes *a = &p->axes;
    double i0 = l->from_intensity > 0 ? fmax(l->from_intensity, a->x_min) : a->x_min;
    double i1 = l->to_intensity > 0 ? fmin(l->to_intensity, a->x_max) : a->x_max;
    if (!(i0 < i1))
        return false;
    xy[0] = rf_plot_x_px(a, i0);
    xy[2] = rf_plot_x_px(a, i1);
    /* y in log10, so a tiny bandwidth times a small I does not underflow
     * to 0 (which maps to the bottom edge) */
    double v = rf__lg(l->value);
    xy[1] = rf__plot_y_lg(a, l->sloped ? rf__lg(i0) + v : v);
    xy[3] = rf__plot_y_lg(a, l->sloped ? rf__lg(i1) + v : v);
    return rf__clip(&xy[0], &xy[1], &xy[2], &xy[3], a->left_px, a->top_px, a->left_px + a->width_px,
                    a->top_px + a->height_px);
}

/* ---- building ------------------------------------------------------------- */
/* plot_impl.h */
void rf__rate_text(double flops_per_s, rf_dtype_kind k, char *out, size_t cap)
{
    char tmp[48];
    rf_fmt(flops_per_s, RF_U_FLOP_RATE, tmp, sizeof tmp);
    char *f = strstr(tmp, "FLOP/s");
    if (rf__dtype_counts_ops(k) && f)
        memmove(f, f + 2, strlen(f + 2) + 1); /* "FLOP/s" -> "OP/s" */
    snprintf(out, cap, "%s", tmp);
}

char *rf__ridge_text(double ridge, char out[32])
{
    if (!(ridge > 0) || !isfinite(ridge))
        snprintf(out, 32, "-");
    else if (ridge < 1e6)
        snprintf(out, 32, "%.*f", ridge < 1000 ? 1 : 0, ridge);
    else
        snprintf(out, 32, "%.3g", ridge);
    return out;
}

static void add_line(rf_plot *p, rf_plot_role role, bool sloped, double value, double from,
                     double to, const char *label)
{
    if (p->n_lines >= RF_PLOT_MAX_LINES)
        return; /* cannot happen: main 2 + other dtypes + measured 1 + dtypes < 24 */
    rf_plot_line *l = &p->lines[p->n_lines++];
    *l = (rf_plot_line){
        .role = role, .sloped = sloped, .value = value, .from_intensity = from, .to_intensity = to};
    snprintf(l->label, sizeof l->label, "%s", label);
}

static bool same_peak(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(a, b); }

bool rf__dtype_counts_ops(rf_dtype_kind k) { return k == RF_INT8 || k == RF_INT4; }

/* "fp8_e4m3/fp8_e5m2 1.979 PFLOP/s": the dtypes of hw sharing peak whose
 * kind (integer or not) is ints, marked done; "" when there are none. */
static void peak_names(const rf_hw *hw, double peak, bool ints, bool *done, char *out, size_t cap)
{
    size_t n = 0;
    rf_dtype_kind first = RF_DTYPE_COUNT;
    out[0] = '\0';
    for (int k = 0; k < RF_DTYPE_COUNT && n < cap; k++) {
        if (done[k] || rf__dtype_counts_ops((rf_dtype_kind)k) != ints ||
            !same_peak(hw->peak_flops_per_s[k], peak))
            continue;
        done[k] = true;
        first = first == RF_DTYPE_COUNT ? (rf_dtype_kind)k : first;
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "/" : "",
                              rf_dtype_name((rf_dtype_kind)k));
    }
    if (first != RF_DTYPE_COUNT && n < cap) {
        char rate[48];
        rf__rate_text(peak, first, rate, sizeof rate);
        snprintf(out + n, cap - n, " %s", rate);
    }
}

void rf_plot_init(rf_plot *p, const rf_hw *hw, const rf_roof *roof)
{
    char rate[48], label[sizeof p->lines[0].label];
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

    /* One line per other peak; its label names floating-point dtypes in
     * FLOP/s and integer ones in OP/s ("fp8_e4m3 1.979 PFLOP/s, int8 1.979
     * POP/s"). */
    bool done[RF_DTYPE_COUNT] = {false};
    done[roof->math] = true;
    for (int k = 0; k < RF_DTYPE_COUNT; k++) {
        double peak = hw->peak_flops_per_s[k];
        if (done[k] || !(peak > 0) || same_peak(peak, roof->peak_flops_per_s))
            continue;
        char fl[48], in[44]; /* "fp8_e4m3/fp8_e5m2 1.979 PFLOP/s", "int8/int4 1.979 POP/s" */
        peak_names(hw, peak, false, done, fl, sizeof fl);
        peak_names(hw, peak, true, done, in, sizeof in);
        snprintf(label, sizeof label, "%s%s%s", fl, fl[0] && in[0] ? ", " : "", in);
        add_line(p, RF_PLOT_OTHER, false, peak, peak / roof->bw_bytes_per_s, 0, label);
    }
}

void rf_plot_describe(rf_plot *p, const char *model, const char *hw, const rf_step_opts *decode,
                      const rf_step_opts *prefill)
{
    const rf_step_opts *o = decode ? decode : prefill;
    char w[64] = "", a[64] = "", kv[64] = "", dec[96] = "", pre[128] = "";
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
                 (long long)prefill->batch, (long long)prefill->tokens, (long long)prefill->context,
                 mask);
    else if (prefill)
        snprintf(pre, sizeof pre, "prefill: B = %lld, T = %lld%s", (long long)prefill->batch,
                 (long long)prefill->tokens, mask);
    /* the full traffic model names itself; the default says nothing */
    const char *traffic = !o || o->traffic != RF_TRAFFIC_FULL ? ""
                          : o->fuse_elementwise ? " \xc2\xb7 traffic full, norms fused"
                                                : " \xc2\xb7 traffic full";
    snprintf(p->subtitle, sizeof p->subtitle,
             "weights %s, activations %s, KV %s; math %s \xc2\xb7 %s%s%s%s", w, a, kv,
             rf_dtype_name(p->math), dec, decode && prefill ? " \xc2\xb7 " : "", pre, traffic);
    snprintf(p->series_label[RF_SERIES_DECODE], sizeof p->series_label[0], "%s", dec);
    snprintf(p->series_label[RF_SERIES_PREFILL], sizeof p->series_label[0], "%s", pre);
    snprintf(p->series_label[RF_SERIES_OTHER], sizeof p->series_label[0], "measured, no phase");
}

/* Append name to list (", "-separated, cap bytes) unless it is there. */
static void note_name(char *list, size_t cap, const char *name)
{
    size_t n = strlen(list), k = strlen(name);
    for (const char *s = list; (s = strstr(s, name)); s += k)
        if ((s == list || s[-1] == ' ') && (s[k] == ',' || !s[k]))
            return; /* already named (both phases have an embedding) */
    snprintf(list + n, cap - n, "%s%s", n ? ", " : "", name);
}

static void note_unplaced(rf_plot *p, const char *name)
{
    note_name(p->unplaced, sizeof p->unplaced, name);
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

double rf_plot_marker_r(double share)
{
    double r = RF_PLOT_AREA_R * sqrt(share > 0 ? fmin(share, 1) : 0);
    return fmax(r, RF_PLOT_MARKER_R_MIN);
}

double rf__marker_r(const rf_plot_point *q)
{
    return q->measured ? RF__MEASURED_R : rf_plot_marker_r(q->share);
}

/* The plot's main roof, as rf_roof_place takes it. */
static rf_roof plot_roof(const rf_plot *p)
{
    return (rf_roof){.math = p->math,
                     .peak_flops_per_s = p->peak_flops_per_s,
                     .bw_bytes_per_s = p->bw_bytes_per_s,
                     .ridge = p->ridge};
}

/* One operator's point in the series of phase, its share of floor_s; an
 * operator with no FLOPs is named in p->unplaced instead. */
static rf_status add_op(rf_plot *p, const rf_op *op, rf_phase phase, double floor_s, rf_err *err)
{
    rf_roof roof = plot_roof(p);
    rf_point pt = rf_roof_place(&roof, (double)op->flops, (double)op->bytes);
    if (!(pt.intensity > 0)) {
        note_unplaced(p, op->name);
        return RF_OK;
    }
    rf_plot_point *q = new_point(p, op->name, err);
    if (!q)
        return RF_ERANGE;
    q->series = phase == RF_DECODE ? RF_SERIES_DECODE : RF_SERIES_PREFILL;
    q->intensity = pt.intensity;
    q->flops_per_s = pt.attainable_flops_per_s;
    double share = (double)op->count * pt.floor_s / floor_s;
    q->share = isfinite(share) && share > 0 ? fmin(share, 1) : 0;
    return RF_OK;
}

/* count x max(F/pi, Q/beta) of op on p's roof. */
static double op_floor_s(const rf_plot *p, const rf_op *op)
{
    rf_roof roof = plot_roof(p);
    return (double)op->count * rf_roof_place(&roof, (double)op->flops, (double)op->bytes).floor_s;
}

rf_status rf_plot_add_step(rf_plot *p, const rf_step *st, rf_phase phase, rf_err *err)
{
    /* The sum-of-max floor on this roof: sum_i count_i max(F_i/pi, Q_i/beta). */
    double floor_s = 0;
    for (size_t i = 0; i < st->n_ops; i++)
        floor_s += op_floor_s(p, &st->ops[i]);
    rf_status s = RF_OK;
    for (size_t i = 0; i < st->n_ops && !s; i++)
        s = add_op(p, &st->ops[i], phase, floor_s, err);
    return s;
}

/* ---- many devices ------------------------------------------------------------ */
double rf_plot_coll_intensity(double act_bytes)
{
    return act_bytes > 0 ? 1 / (2 * act_bytes) : 0.5;
}

/* The roof of the link c crosses, once a link: sloped at its bandwidth up
 * to the main compute peak (a reduction's adds run on the device). */
static void add_link_roof(rf_plot *p, const rf_coll *c)
{
    char label[sizeof p->lines[0].label], bw[48];
    rf_fmt(c->bw_bytes_per_s, RF_U_BW, bw, sizeof bw);
    snprintf(label, sizeof label, "%s %s", c->link, bw);
    for (size_t i = 0; i < p->n_lines; i++)
        if (p->lines[i].role == RF_PLOT_LINK && !strcmp(p->lines[i].label, label))
            return;
    add_line(p, RF_PLOT_LINK, true, c->bw_bytes_per_s, 0, p->peak_flops_per_s / c->bw_bytes_per_s,
             label);
}

/* The subtitle's " \xc2\xb7 TP 8 x PP 1 x EP 1 x DP 1 = 8 devices: a device's
 * share", or under PP "...; a device of the slowest of 2 stages: decode
 * stage 2", then ", prefill stage 1". */
static void note_layout(rf_plot *p, const rf_par *par, rf_phase phase)
{
    size_t n = strlen(p->subtitle), cap = sizeof p->subtitle;
    const rf_layout *l = &par->layout;
    bool first = !strstr(p->subtitle, " devices");
    if (first)
        n += (size_t)snprintf(p->subtitle + n, cap - n,
                              " \xc2\xb7 TP %lld x PP %lld x EP %lld x DP %lld = %lld devices",
                              (long long)l->tp, (long long)l->pp, (long long)l->ep,
                              (long long)l->dp, (long long)par->devices);
    if (n >= cap)
        return;
    const char *ph = phase == RF_DECODE ? "decode" : "prefill";
    if (par->n_stages == 1 && first)
        snprintf(p->subtitle + n, cap - n, ": a device's share");
    else if (par->n_stages > 1)
        snprintf(p->subtitle + n, cap - n, "%s%s stage %zu",
                 first ? "; a device of the slowest stage: " : ", ", ph, par->slowest + 1);
}

/* A collective's point (rf_plot.h: where it goes), its share of floor_s. */
static rf_status add_coll_point(rf_plot *p, const rf_coll *c, rf_phase phase, double act_bytes,
                                double floor_s, rf_err *err)
{
    rf_plot_point *q = new_point(p, c->name, err);
    if (!q)
        return RF_ERANGE;
    add_link_roof(p, c);
    q->series = phase == RF_DECODE ? RF_SERIES_DECODE : RF_SERIES_PREFILL;
    q->collective = true;
    q->intensity = rf_plot_coll_intensity(act_bytes);
    q->flops_per_s = q->intensity * c->bw_bytes_per_s * (c->time_s > 0 ? c->bw_s / c->time_s : 1);
    double share = (double)c->count * c->time_s / floor_s;
    q->share = isfinite(share) && share > 0 ? fmin(share, 1) : 0;
    return RF_OK;
}

rf_status rf_plot_add_layout(rf_plot *p, const rf_par *par, rf_phase phase, double act_bytes,
                             rf_err *err)
{
    size_t k = par->slowest;
    const rf_par_stage *st = &par->stages[k];
    /* the last stage sends nothing on: the send into it stands for its
     * pipeline transfer (the others show their own send to the next) */
    const rf_coll *into = NULL;
    for (size_t i = 0; k > 0 && k + 1 == par->n_stages && i < par->stages[k - 1].n_coll; i++)
        if (par->stages[k - 1].coll[i].kind == RF_COLL_P2P)
            into = &par->stages[k - 1].coll[i];
    double floor_s = 0;
    for (size_t i = 0; i < st->step.n_ops; i++)
        if (rf_par_stage_holds(par, k, &st->step.ops[i]))
            floor_s += op_floor_s(p, &st->step.ops[i]);
    floor_s += st->comm_s;
    rf_status s = RF_OK;
    for (size_t i = 0; i < st->step.n_ops && !s; i++)
        if (rf_par_stage_holds(par, k, &st->step.ops[i]))
            s = add_op(p, &st->step.ops[i], phase, floor_s, err);
    for (size_t i = 0; i < st->n_coll && !s; i++)
        s = add_coll_point(p, &st->coll[i], phase, act_bytes, floor_s, err);
    if (!s && into)
        s = add_coll_point(p, into, phase, act_bytes, floor_s, err);
    if (!s)
        note_layout(p, par, phase);
    return s;
}

rf_status rf_plot_add_measured(rf_plot *p, const rf_measured *m, rf_err *err)
{
    char label[sizeof p->lines[0].label], rate[48];
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
        double intensity = op->flops / op->bytes, fps = op->flops / op->measured_s;
        if (!(op->flops > 0)) {
            note_unplaced(p, op->name);
            continue;
        }
        if (!(isfinite(intensity) && intensity > 0 && isfinite(fps) && fps > 0)) {
            note_name(p->off_axes, sizeof p->off_axes, op->name); /* I or F/t beyond a double */
            continue;
        }
        rf_plot_point *q = new_point(p, op->name, err);
        if (!q)
            return RF_ERANGE;
        q->series = !op->has_phase           ? RF_SERIES_OTHER
                    : op->phase == RF_DECODE ? RF_SERIES_DECODE
                                             : RF_SERIES_PREFILL;
        q->measured = true;
        q->intensity = intensity;
        q->flops_per_s = fps;
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

/* ---- fitting the axes ------------------------------------------------------ */
/* A range of log10 values. */
typedef struct range {
    double lo, hi;
} range;

static const range EMPTY = {RF__LG_MAX, -RF__LG_MAX};

static void grow(range *r, double lg) { r->lo = fmin(r->lo, lg), r->hi = fmax(r->hi, lg); }

/* What the axis shows: all of `all` when it spans at most max decades;
 * else `core` (what must show: the main roof and the predictions),
 * widened towards the rest, downwards first, to max decades. */
static range window(range core, range all, double max)
{
    if (all.hi - all.lo <= max)
        return all;
    if (core.hi - core.lo >= max)
        return core;
    range w = {fmax(all.lo, core.hi - max), 0};
    w.hi = fmin(all.hi, w.lo + max);
    return w;
}

static bool is_flat(const rf_plot_line *l) { return !l->sloped; }

/* x: the ridge and every point; a compute roof's start counts 8x, so each
 * roof shows a stretch long enough for its label. */
static void fit_x(rf_plot *p)
{
    range core = EMPTY, all = EMPTY;
    grow(&core, rf__lg(p->ridge));
    for (size_t i = 0; i < p->n_points; i++)
        grow(p->points[i].measured ? &all : &core, rf__lg(p->points[i].intensity));
    for (size_t i = 0; i < p->n_lines; i++) {
        const rf_plot_line *l = &p->lines[i];
        if (is_flat(l) && l->from_intensity > 0)
            grow(l->role == RF_PLOT_MEASURED ? &all : &core, rf__lg(8 * l->from_intensity));
    }
    grow(&all, core.lo), grow(&all, core.hi);
    range w = window(core, all, RF_PLOT_MAX_DECADES);
    double e0 = fmax(floor(w.lo - 0.25), -RF__LG_MAX), e1 = fmin(ceil(w.hi + 0.25), RF__LG_MAX);
    e1 = fmax(e1, e0 + 1);
    /* and wide enough that each compute roof's stretch holds its label:
     * the roof from I0 shows W (e1 - lg I0) / (e1 - e0) px, which must be
     * the label's width + 16 px (4 of its box, 6 from the end, 6 spare) */
    double W = p->axes.width_px;
    for (size_t i = 0; i < p->n_lines; i++) {
        const rf_plot_line *l = &p->lines[i];
        double need =
            rf_plot_text_px(l->label, l->role == RF_PLOT_MAIN ? RF__FONT_LABEL : RF__FONT_SMALL) +
            16;
        double a = rf__lg(l->from_intensity);
        if (!is_flat(l) || !(l->from_intensity > 0) || a < e0 || a > e1 || W <= need)
            continue;
        double x = (a * W - need * e0) / (W - need); /* (x - a) W = need (x - e0) */
        e1 = fmin(fmax(e1, ceil(x - 1e-9)), fmin(e0 + RF_PLOT_MAX_DECADES + 1, RF__LG_MAX));
    }
    p->axes.x_min = pow(10, e0);
    p->axes.x_max = pow(10, e1);
}

/* y: every point and compute roof, and the memory roof at x_min; the top
 * is the first half decade (10^(k/2)) that leaves 19 px above the highest
 * roof or point, room for its label (15 px of small text, 2 px off the
 * line, inside the 2 px inset labels keep from the frame). */
static void fit_y(rf_plot *p)
{
    range core = EMPTY, all = EMPTY;
    grow(&core, rf__lg(p->peak_flops_per_s));
    grow(&core, rf__lg(p->bw_bytes_per_s) + rf__lg(p->axes.x_min));
    for (size_t i = 0; i < p->n_points; i++)
        grow(p->points[i].measured ? &all : &core, rf__lg(p->points[i].flops_per_s));
    for (size_t i = 0; i < p->n_lines; i++)
        if (is_flat(&p->lines[i]))
            grow(p->lines[i].role == RF_PLOT_MEASURED ? &all : &core, rf__lg(p->lines[i].value));
    grow(&all, core.lo), grow(&all, core.hi);
    range w = window(core, all, RF_PLOT_MAX_DECADES);
    double lo = fmax(floor(w.lo + 1e-9), -RF__LG_MAX), hi = fmax(w.hi, lo);
    double top = fmax(ceil(2 * hi) / 2, lo + 1), h = p->axes.height_px;
    for (int k = 0; k < 4 * RF_PLOT_MAX_DECADES && (top - hi) * h / (top - lo) < 19; k++)
        top += 0.5; /* (top - hi) / (top - lo) grows with top: a few steps */
    p->axes.y_min = pow(10, lo);
    p->axes.y_max = pow(10, fmin(top, RF__LG_MAX));
}

/* Points and measured roofs the axes leave out are not drawn: named. */
static void mark_off_axes(rf_plot *p)
{
    const rf_plot_axes *a = &p->axes;
    double x0 = rf__lg(a->x_min), x1 = rf__lg(a->x_max), y0 = rf__lg(a->y_min),
           y1 = rf__lg(a->y_max);
    for (size_t i = 0; i < p->n_points; i++) {
        rf_plot_point *q = &p->points[i];
        double x = rf__lg(q->intensity), y = rf__lg(q->flops_per_s);
        q->off_axes = x < x0 - 1e-9 || x > x1 + 1e-9 || y < y0 - 1e-9 || y > y1 + 1e-9;
        if (q->off_axes)
            note_name(p->off_axes, sizeof p->off_axes, q->name);
    }
    for (size_t i = 0; i < p->n_lines; i++) {
        double xy[4];
        if (p->lines[i].role == RF_PLOT_MEASURED && !rf__plot_line_px(p, &p->lines[i], xy))
            note_name(p->off_axes, sizeof p->off_axes, p->lines[i].label);
    }
}

/* The title on one line, the subtitle on as many as it needs (pieces kept
 * whole where they fit), each within the canvas right of the plot's left
 * edge, measured as the layout measures text. */
static void fit_heading(rf_plot *p)
{
    double room = p->width_px - p->axes.left_px - 8;
    char title[RF_PLOT_TEXT_MAX];
    snprintf(title, sizeof title, "%s", p->title);
    rf__take_line(title, p->heading[0], sizeof p->heading[0], RF__FONT_TITLE, room, true);
    p->n_heading = 1 + rf__wrap(p->subtitle, " \xc2\xb7 ", RF__FONT_SUB, room, p->heading + 1,
                                RF_PLOT_HEAD_LINES - 1);
}

static void fit_footnote(rf_plot *p, bool measured)
{
    size_t n = 0, cap = sizeof p->footnote;
    p->footnote[0] = '\0';
    if (p->unplaced[0])
        n += (size_t)snprintf(p->footnote, cap, "no FLOPs, so no place on a log axis: %s",
                              p->unplaced);
    if (p->off_axes[0] && n < cap)
        n += (size_t)snprintf(p->footnote + n, cap - n, "%soff the axes, not drawn: %s",
                              n ? " \xc2\xb7 " : "", p->off_axes);
    if (measured && n < cap)
        n += (size_t)snprintf(p->footnote + n, cap - n,
                              "%smeasured (dashed roofs, hollow markers): %s",
                              n ? " \xc2\xb7 " : "", p->measured_name);
    for (size_t i = 0; i < p->n_points && n < cap; i++)
        if (p->points[i].collective) { /* rf_plot_add_layout's convention */
            snprintf(p->footnote + n, cap - n,
                     "%scollectives (triangles) at I = %.3g, an all-reduce's adds a byte moved, "
                     "and I x the link bandwidth they attain",
                     n ? " \xc2\xb7 " : "", p->points[i].intensity);
            break;
        }
}

/* A canvas size from the caller, kept to what the layout can use. */
static double canvas(double v, double lo, double hi, double fallback)
{
    return v >= lo && v <= hi ? v : fallback;
}

void rf_plot_fit(rf_plot *p)
{
    bool measured = false;
    for (size_t i = 0; i < p->n_points; i++)
        measured |= p->points[i].measured;
    for (size_t i = 0; i < p->n_lines; i++)
        measured |= p->lines[i].role == RF_PLOT_MEASURED;
    p->width_px = canvas(p->width_px, 480, 4000, RF_PLOT_WIDTH_PX);
    p->height_px = canvas(p->height_px, 320, 4000, RF_PLOT_HEIGHT_PX);
    rf_plot_axes *a = &p->axes;
    a->left_px = 98;
    fit_heading(p);
    /* each subtitle line past the first: 14 px more canvas above the plot,
     * which keeps its size */
    double more = 14.0 * (p->n_heading - 2 > 0 ? p->n_heading - 2 : 0);
    p->height_px += more - p->heading_px;
    p->heading_px = more;
    a->top_px = 58 + more;
    a->width_px = p->width_px - a->left_px - 24;
    a->height_px = p->height_px - a->top_px - 74; /* ticks, axis title, 2 footnote lines */
    fit_x(p);
    fit_y(p);
    mark_off_axes(p);
    fit_footnote(p, measured);
}
