/* plot_layout.c - where every text of Figure 1 goes (rf_plot.h, "layout"):
 * boxes and their overlap, the roofs in canvas pixels, operator clusters
 * and their names, and a search for a free place for each label. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_impl.h"

#define PI 3.14159265358979323846

/* ---- geometry --------------------------------------------------------------- */
typedef struct seg {
    double x0, y0, x1, y1;
    bool leader;           /* a label's leader: no other label may cross it */
    double own_hw, own_hh; /* a leader: half sizes of the markers it starts
                              on (at x0, y0), which it may cross          */
} seg;

static void axes_of(const rf_plot_box *b, double u[2], double v[2])
{
    double t = b->angle_deg * PI / 180.0;
    u[0] = cos(t), u[1] = sin(t);
    v[0] = -sin(t), v[1] = cos(t);
}

/* Project b's corners on axis d: [lo, hi] (u, v: b's own axes). */
static void project_on(const rf_plot_box *b, const double u[2], const double v[2],
                       const double d[2], double *lo, double *hi)
{
    double c = b->cx * d[0] + b->cy * d[1];
    double r =
        fabs(u[0] * d[0] + u[1] * d[1]) * b->w / 2 + fabs(v[0] * d[0] + v[1] * d[1]) * b->h / 2;
    *lo = c - r;
    *hi = c + r;
}

/* Half the diagonal of b, a little more: the radius of a circle that holds
 * b at any angle. Boxes whose circles are apart cannot meet, so most pairs
 * are told apart without the trigonometry below (the figure is the same;
 * a fuzzed plot ran at 26 a second, most of it in sin and cos). */
static double reach(const rf_plot_box *b)
{
    return 0.5 * sqrt(b->w * b->w + b->h * b->h) * (1 + 1e-9) + 1e-9;
}

bool rf_plot_box_overlap(const rf_plot_box *a, const rf_plot_box *b)
{
    double dx = a->cx - b->cx, dy = a->cy - b->cy, r = reach(a) + reach(b);
    if (dx * dx + dy * dy > r * r)
        return false;
    double ax[2][2], bx[2][2];
    axes_of(a, ax[0], ax[1]);
    axes_of(b, bx[0], bx[1]);
    const double *axes[4] = {ax[0], ax[1], bx[0], bx[1]};
    for (int i = 0; i < 4; i++) {
        double alo, ahi, blo, bhi;
        project_on(a, ax[0], ax[1], axes[i], &alo, &ahi);
        project_on(b, bx[0], bx[1], axes[i], &blo, &bhi);
        if (ahi <= blo || bhi <= alo)
            return false; /* a separating axis; touching edges do not overlap */
    }
    return true;
}

static bool seg_hits_box(const seg *s, const rf_plot_box *b)
{
    double r = reach(b); /* the segment's bounds clear of b's circle: apart */
    if (fmax(s->x0, s->x1) < b->cx - r || fmin(s->x0, s->x1) > b->cx + r ||
        fmax(s->y0, s->y1) < b->cy - r || fmin(s->y0, s->y1) > b->cy + r)
        return false;
    double u[2], v[2];
    axes_of(b, u, v);
    double px0 = s->x0 - b->cx, py0 = s->y0 - b->cy, px1 = s->x1 - b->cx, py1 = s->y1 - b->cy;
    double x0 = px0 * u[0] + py0 * u[1], y0 = px0 * v[0] + py0 * v[1];
    double x1 = px1 * u[0] + py1 * u[1], y1 = px1 * v[0] + py1 * v[1];
    return rf__clip(&x0, &y0, &x1, &y1, -b->w / 2, -b->h / 2, b->w / 2, b->h / 2);
}

/* ---- layout -------------------------------------------------------------------- */
#define MAX_SEGS (RF_PLOT_MAX_LINES + RF_PLOT_MAX_LABELS + 2)

typedef struct placer {
    const rf_plot *p;
    rf_plot_layout *out;
    rf_plot_box area;   /* where labels may go (the plot area, inset)  */
    seg segs[MAX_SEGS]; /* lines a label should rather not cross        */
    size_t n_segs;
    size_t n_markers; /* points + the ridge                           */
    bool has_legend;
    size_t n_lost_points; /* operator labels that found no place          */
    size_t n_lost_lines;  /* roof labels that found none                  */
} placer;

static bool inside(const placer *pl, const rf_plot_box *b)
{
    double u[2], v[2];
    axes_of(b, u, v);
    double rx = fabs(u[0]) * b->w / 2 + fabs(v[0]) * b->h / 2;
    double ry = fabs(u[1]) * b->w / 2 + fabs(v[1]) * b->h / 2;
    return b->cx - rx >= pl->area.cx - pl->area.w / 2 &&
           b->cx + rx <= pl->area.cx + pl->area.w / 2 &&
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
    if (leader) /* a marker it does not name it should rather not cross */
        for (size_t i = 0; i < pl->n_markers; i++) {
            const rf_plot_box *m = &o->markers[i];
            bool own = fabs(m->cx - leader->x0) <= leader->own_hw &&
                       fabs(m->cy - leader->y0) <= leader->own_hh;
            if (seg_hits_box(leader, m))
                c += own ? 25 : 80;
        }
    return c;
}

static void add_seg(placer *pl, double x0, double y0, double x1, double y1, bool leader)
{
    if (pl->n_segs < MAX_SEGS)
        pl->segs[pl->n_segs++] = (seg){x0, y0, x1, y1, leader, 0, 0};
}

static void note_unlabelled(placer *pl, const rf_plot_label *l)
{
    rf_plot_layout *o = pl->out;
    pl->n_lost_points += l->kind == RF_LABEL_POINTS;
    pl->n_lost_lines += l->kind == RF_LABEL_LINE;
    size_t n = strlen(o->unlabelled);
    for (int i = 0; i < l->n_text && n < sizeof o->unlabelled; i++)
        n += (size_t)snprintf(o->unlabelled + n, sizeof o->unlabelled - n, "%s%s", n ? "; " : "",
                              l->text[i]);
}

static void label_size(rf_plot_label *l)
{
    double w = 0;
    for (int i = 0; i < l->n_text; i++)
        w = fmax(w, rf_plot_text_px(l->text[i], l->font_px));
    l->box.w = w + 4;
    l->box.h = l->n_text * RF__LINE_PX + 2;
}

/* Accept l at its best candidate; keep it out (and name it) if none fits. */
static void commit(placer *pl, rf_plot_label *l, double best)
{
    rf_plot_layout *o = pl->out;
    if (!isfinite(best)) {
        note_unlabelled(pl, l);
        return;
    }
    if (l->leader)
        add_seg(pl, l->anchor_x, l->anchor_y, l->lead_x, l->lead_y, true);
    o->labels[o->n_labels++] = *l;
}

/* plot_impl.h */
void rf__label_line_x(const rf_plot_label *l, int i, double *x0, double *x1)
{
    double w = rf_plot_text_px(l->text[i], l->font_px);
    double left = l->box.cx - l->box.w / 2 + 2, right = l->box.cx + l->box.w / 2 - 2;
    *x0 = l->align < 0 ? left : l->align > 0 ? right - w : l->box.cx - w / 2;
    *x1 = *x0 + w;
}

/* How far an upright label's nearest line of text stands from the box it
 * names (anchor +- anchor_hw, anchor_hh); *ex, *ey: the point of that line
 * nearest the anchor, where a leader would end. */
static double text_gap(const rf_plot_label *l, double *ex, double *ey)
{
    double best = INFINITY, top = l->box.cy - l->box.h / 2 + 1;
    for (int i = 0; i < l->n_text; i++) {
        double x0, x1;
        rf__label_line_x(l, i, &x0, &x1);
        double y0 = top + i * RF__LINE_PX, y1 = y0 + RF__LINE_PX;
        double dx =
            fmax(0, fmax(x0 - (l->anchor_x + l->anchor_hw), (l->anchor_x - l->anchor_hw) - x1));
        double dy =
            fmax(0, fmax(y0 - (l->anchor_y + l->anchor_hh), (l->anchor_y - l->anchor_hh) - y1));
        double g = hypot(dx, dy);
        if (g < best) {
            best = g;
            *ex = fmax(x0, fmin(l->anchor_x, x1));
            *ey = fmax(y0, fmin(l->anchor_y, y1));
        }
    }
    return best;
}

/* Directions tried around an anchor, in order of preference (screen y down). */
static const double dirs[][2] = {
    {1, 0},   {-1, 0}, {1, -1}, {1, 1}, {-1, -1}, {-1, 1}, {0, -1}, {0, 1}, {2, -1},  {2, 1},
    {-2, -1}, {-2, 1}, {1, -2}, {1, 2}, {-1, -2}, {-1, 2}, {3, -1}, {3, 1}, {-3, -1}, {-3, 1},
};
static const double radii[] = {3, 8, 16, 28, 44, 64, 88, 118, 156, 200, 250};

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
            c.anchor_hw = ahw, c.anchor_hh = ahh;
            /* lines flush towards the anchor, so each starts beside it */
            c.align = dx > 0 ? -1 : dx < 0 ? 1 : 0;
            c.leader = text_gap(&c, &c.lead_x, &c.lead_y) > RF_PLOT_LEADER_PX;
            seg lead = {l->anchor_x, l->anchor_y, c.lead_x, c.lead_y, true, ahw, ahh};
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
        char key[24];    /* "_proj" (a suffix), "expert_" (a prefix), or a whole name */
        char parts[160]; /* what differs, '/'-separated                           */
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
    bool series[3] = {false}, measured = false, other = false, mroof = false, area = false;
    bool coll = false, link = false;
    double coll_x = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        series[p->points[i].series] = true;
        measured |= p->points[i].measured;
        area |= !p->points[i].measured;
        coll |= p->points[i].collective;
        coll_x = p->points[i].collective ? p->points[i].intensity : coll_x;
    }
    for (size_t i = 0; i < p->n_lines; i++) {
        other |= p->lines[i].role == RF_PLOT_OTHER;
        mroof |= p->lines[i].role == RF_PLOT_MEASURED;
        link |= p->lines[i].role == RF_PLOT_LINK;
    }
    int n = 0;
    for (int s = 0; s < 3; s++)
        if (series[s]) {
            snprintf(rows[n], RF__LEGEND_ROW, "%s", p->series_label[s]);
            kinds[n++] = s;
        }
    if (area) {
        snprintf(rows[n], RF__LEGEND_ROW, "area: share of the step's time floor (this: %g%%)",
                 100 * RF__LEGEND_SHARE);
        kinds[n++] = 7;
    }
    if (measured) {
        snprintf(rows[n], RF__LEGEND_ROW, "measured (hollow), joined to its prediction");
        kinds[n++] = 3;
    }
    char pk[48], bw[48];
    rf__rate_text(p->peak_flops_per_s, p->math, pk, sizeof pk);
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
    if (coll) { /* where rf_plot_add_layout puts them: the footnote says why */
        snprintf(rows[n], RF__LEGEND_ROW, "collectives, at I = %.3g", coll_x);
        kinds[n++] = 8;
    }
    if (link) {
        snprintf(rows[n], RF__LEGEND_ROW, "link roofs (a direction)");
        kinds[n++] = 9;
    }
    return n;
}

static void place_legend(placer *pl)
{
    char rows[RF__LEGEND_ROWS][RF__LEGEND_ROW];
    int kinds[RF__LEGEND_ROWS], n = rf__plot_legend(pl->p, rows, kinds);
    double w = 0;
    for (int i = 0; i < n; i++)
        w = fmax(w, rf_plot_text_px(rows[i], RF__FONT_LABEL));
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

/* A roof's candidate place: `along` px from the line's start, `off` px off
 * it on the upper side (negative: below). */
static rf_plot_label on_line(const rf_plot_label *l, const double xy[4], double along, double off)
{
    double len = hypot(xy[2] - xy[0], xy[3] - xy[1]);
    double ux = (xy[2] - xy[0]) / len, uy = (xy[3] - xy[1]) / len;
    double nx = uy, ny = -ux; /* the normal pointing up (up-left on the slope) */
    if (ny > 0)
        nx = -nx, ny = -ny;
    rf_plot_label c = *l;
    c.box.cx = xy[0] + ux * along + nx * off;
    c.box.cy = xy[1] + uy * along + ny * off;
    c.box.angle_deg = uy != 0 ? atan2(uy, ux) * 180 / PI : 0;
    c.anchor_x = c.box.cx, c.anchor_y = c.box.cy;
    return c;
}

/* A roof's label: flat ones sit just above the line (or below it, or
 * standing a little off it, or at last on the line itself, over it),
 * tried from the right end leftwards along the whole line; sloped ones
 * along it, turned to its angle, on the empty upper-left side, from a
 * third of the way outwards both ways. */
static void place_line_label(placer *pl, size_t li)
{
    const rf_plot_line *line = &pl->p->lines[li];
    double xy[4];
    if (!rf__plot_line_px(pl->p, line, xy))
        return;
    rf_plot_label l = {.kind = RF_LABEL_LINE,
                       .index = li,
                       .n_text = 1,
                       .font_px = line->role == RF_PLOT_MAIN ? RF__FONT_LABEL : RF__FONT_SMALL};
    snprintf(l.text[0], sizeof l.text[0], "%s", line->label);
    label_size(&l);
    rf_plot_label best = l;
    double best_c = INFINITY, len = hypot(xy[2] - xy[0], xy[3] - xy[1]);
    int steps = line->sloped ? 40 : (int)(len / 12) + 1, offs = line->sloped ? 1 : 3;
    for (int side = 0; side < (line->sloped ? 2 : 3); side++)
        for (int k = 0; k <= steps; k++)
            for (int off_k = 0; off_k < (side == 2 ? 1 : offs); off_k++) {
                double along = line->sloped
                                   ? len * (0.35 + (k % 2 ? -1 : 1) * 0.0125 * ((k + 1) / 2))
                                   : len - l.box.w / 2 - 6 - 12.0 * k;
                if (along < l.box.w / 2 || along > len - l.box.w / 2)
                    continue;
                double off = side == 2 ? 0 : (l.box.h / 2 + 2 + 5.0 * off_k) * (side ? -1 : 1);
                rf_plot_label c = on_line(&l, xy, along, off);
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

/* A measured point drawn joined to its prediction needs no label, and one
 * off the axes has none. */
static bool joined(const rf_plot_point *q) { return (q->measured && q->match >= 0) || q->off_axes; }

/* Markers (every point, then the ridge) and the lines labels keep clear
 * of: the roofs, the ridge's drop line, measured points' joins. */
static void layout_markers(placer *pl)
{
    const rf_plot *p = pl->p;
    const rf_plot_axes *a = &p->axes;
    rf_plot_layout *out = pl->out;
    pl->area = (rf_plot_box){.cx = a->left_px + a->width_px / 2,
                             .cy = a->top_px + a->height_px / 2,
                             .w = a->width_px - 4,
                             .h = a->height_px - 4};
    for (size_t i = 0; i < p->n_points; i++) {
        const rf_plot_point *q = &p->points[i];
        double d = 2 * rf__marker_r(q) + 1.4; /* the white outline too */
        /* a collective's triangle (write_svg.c) reaches 1.347 r across and
         * 1.555 r up from its centre */
        double w = q->collective ? 2 * 1.347 * rf__marker_r(q) + 1.4 : d;
        double h = q->collective ? 2 * 1.555 * rf__marker_r(q) + 1.4 : d;
        out->markers[i] = (rf_plot_box){.cx = rf_plot_x_px(a, q->intensity),
                                        .cy = rf_plot_y_px(a, q->flops_per_s),
                                        .w = w,
                                        .h = h};
        if (q->off_axes) /* not drawn: nothing to keep clear of */
            out->markers[i] = (rf_plot_box){.cx = -1e4, .cy = -1e4};
        out->label_of[i] = -1;
    }
    double rx = rf_plot_x_px(a, p->ridge), ry = rf_plot_y_px(a, p->peak_flops_per_s);
    out->markers[p->n_points] = (rf_plot_box){.cx = rx, .cy = ry, .w = 13, .h = 13};
    pl->n_markers = p->n_points + 1;
    for (size_t i = 0; i < p->n_lines; i++) {
        double xy[4];
        if (rf__plot_line_px(p, &p->lines[i], xy))
            add_seg(pl, xy[0], xy[1], xy[2], xy[3], false);
    }
    add_seg(pl, rx, ry, rx, a->top_px + a->height_px, false);
    for (size_t i = 0; i < p->n_points; i++)
        if (p->points[i].match >= 0 && !p->points[i].off_axes)
            add_seg(pl, out->markers[i].cx, out->markers[i].cy, out->markers[p->points[i].match].cx,
                    out->markers[p->points[i].match].cy, false);
}

/* Which side of the ridge is which: "<- memory-bound" left of its drop
 * line, "compute-bound ->" right of it, side by side along the bottom, or
 * higher up the line where the bottom is taken (by the legend, markers):
 * the lowest height free for both, else each at its own. */
static void place_sides(placer *pl, double rx, double ry)
{
    static const char *const side[2] = {"\xe2\x86\x90 memory-bound", "compute-bound \xe2\x86\x92"};
    const rf_plot_axes *a = &pl->p->axes;
    rf_plot_label l[2];
    for (int k = 0; k < 2; k++) {
        l[k] = (rf_plot_label){.kind = RF_LABEL_REGION, .n_text = 1, .font_px = RF__FONT_SMALL};
        snprintf(l[k].text[0], sizeof l[k].text[0], "%s", side[k]);
        label_size(&l[k]);
        l[k].box.cx = rx + (k ? 1 : -1) * (l[k].box.w / 2 + 4);
    }
    double bottom = a->top_px + a->height_px - 4 - l[0].box.h / 2, both = NAN;
    for (double y = bottom; y > ry + 16 && isnan(both); y -= 13) {
        l[0].box.cy = l[1].box.cy = y;
        if (isfinite(cost(pl, &l[0].box, NULL)) && isfinite(cost(pl, &l[1].box, NULL)))
            both = y;
    }
    for (int k = 0; k < 2; k++) {
        l[k].box.cy = isnan(both) ? bottom : both;
        for (double y = bottom; isnan(both) && y > ry + 16; y -= 13) {
            l[k].box.cy = y;
            if (isfinite(cost(pl, &l[k].box, NULL)))
                break;
        }
        l[k].anchor_x = l[k].box.cx, l[k].anchor_y = l[k].box.cy;
        commit(pl, &l[k], cost(pl, &l[k].box, NULL));
    }
}

/* The ridge's label, and which side of it is which along the bottom. */
static void place_ridge(placer *pl)
{
    const rf_plot *p = pl->p;
    const rf_plot_axes *a = &p->axes;
    double rx = rf_plot_x_px(a, p->ridge), ry = rf_plot_y_px(a, p->peak_flops_per_s);
    rf_plot_label ridge = {.kind = RF_LABEL_RIDGE,
                           .n_text = 1,
                           .font_px = RF__FONT_LABEL,
                           .anchor_x = rx,
                           .anchor_y = ry};
    const char *unit = rf__dtype_counts_ops(p->math) ? "OP/B" : "FLOP/B";
    char num[32];
    snprintf(ridge.text[0], sizeof ridge.text[0], "ridge %s %s", rf__ridge_text(p->ridge, num),
             unit);
    place_near(pl, &ridge, rx, ry, 6.5, 6.5, 4 /* up-left: above the roof */);
    place_sides(pl, rx, ry);
}

/* Single linkage over markers, predicted and measured apart; a measured
 * point joined to its prediction stays alone (it needs no label). */
static void cluster(const placer *pl, int *parent)
{
    const rf_plot *p = pl->p;
    for (size_t i = 0; i < p->n_points; i++)
        parent[i] = (int)i;
    for (size_t i = 0; i < p->n_points; i++)
        for (size_t j = 0; j < i; j++) {
            const rf_plot_box *mi = &pl->out->markers[i], *mj = &pl->out->markers[j];
            if (p->points[i].measured != p->points[j].measured || joined(&p->points[i]) ||
                joined(&p->points[j]) || fabs(mi->cx - mj->cx) >= RF_PLOT_MERGE_PX ||
                fabs(mi->cy - mj->cy) >= RF_PLOT_MERGE_PX)
                continue;
            int ri = root(parent, (int)i), rj = root(parent, (int)j);
            parent[ri > rj ? ri : rj] = ri > rj ? rj : ri;
        }
}

/* A cluster's label waiting for its place. */
typedef struct pending {
    rf_plot_label l;
    double hw, hh; /* half sizes of the cluster's markers together */
    bool done;
} pending;

/* The label of the cluster rooted at i, anchored on its markers' middle. */
static void pending_of(const placer *pl, const int *parent, size_t i, pending *t)
{
    const rf_plot *p = pl->p;
    int member[RF_PLOT_MAX_POINTS];
    size_t n = 0;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (size_t j = i; j < p->n_points; j++) {
        if (root(parent, (int)j) != (int)i)
            continue;
        const rf_plot_box *m = &pl->out->markers[j];
        member[n++] = (int)j;
        x0 = fmin(x0, m->cx - m->w / 2), x1 = fmax(x1, m->cx + m->w / 2);
        y0 = fmin(y0, m->cy - m->h / 2), y1 = fmax(y1, m->cy + m->h / 2);
    }
    memset(t, 0, sizeof *t);
    cluster_label(p, member, n, &t->l);
    t->l.anchor_x = (x0 + x1) / 2, t->l.anchor_y = (y0 + y1) / 2;
    t->hw = (x1 - x0) / 2, t->hh = (y1 - y0) / 2;
    label_size(&t->l);
}

/* Every cluster's label, widest first (those have the fewest places), or
 * narrowest first (so small ones in a crowd go before a wide neighbour). */
static rf_status place_clusters(placer *pl, bool widest, rf_err *err)
{
    const rf_plot *p = pl->p;
    rf_plot_layout *out = pl->out;
    int parent[RF_PLOT_MAX_POINTS];
    cluster(pl, parent);
    pending *todo = malloc(p->n_points * sizeof *todo + 1);
    if (!todo)
        return rf_err_set(err, RF_ENOMEM, "figure layout: out of memory");
    size_t n_todo = 0;
    for (size_t i = 0; i < p->n_points; i++)
        if (parent[i] == (int)i && !joined(&p->points[i]))
            pending_of(pl, parent, i, &todo[n_todo++]);
    for (size_t k = 0; k < n_todo; k++) {
        pending *t = NULL;
        for (size_t i = 0; i < n_todo; i++)
            if (!todo[i].done &&
                (!t || (todo[i].l.box.w * todo[i].l.n_text > t->l.box.w * t->l.n_text) == widest))
                t = &todo[i];
        t->done = true;
        size_t before = out->n_labels;
        place_near(pl, &t->l, t->l.anchor_x, t->l.anchor_y, t->hw, t->hh, 0);
        if (out->n_labels > before)
            for (size_t j = 0; j < p->n_points; j++)
                if (root(parent, (int)j) == (int)t->l.index && !joined(&p->points[j]))
                    out->label_of[j] = (int)before;
    }
    free(todo);
    return RF_OK;
}

/* The labels of the roofs of the given roles. */
static void place_roofs(placer *pl, rf_plot_role from, rf_plot_role to)
{
    for (int role = (int)from; role <= (int)to; role++)
        for (size_t i = 0; i < pl->p->n_lines; i++)
            if ((int)pl->p->lines[i].role == role)
                place_line_label(pl, i);
}

/* The orders the roofs' and the operators' labels may be placed in: the
 * roofs first (they have few places, operators many), the operators
 * before the lesser roofs, or the operators first (order % 3); the
 * operators widest first, then (order / 3) narrowest first. */
#define N_ORDERS 6
static rf_status place_in_order(placer *pl, int order, rf_err *err)
{
    int roofs = order % 3;
    if (roofs < 2)
        place_roofs(pl, RF_PLOT_MAIN, roofs == 0 ? RF_PLOT_LINK : RF_PLOT_MAIN);
    rf_status s = place_clusters(pl, order < 3, err);
    if (roofs > 0)
        place_roofs(pl, roofs == 1 ? RF_PLOT_OTHER : RF_PLOT_MAIN, RF_PLOT_LINK);
    return s;
}

static size_t lost(const placer *pl) { return pl->n_lost_points + pl->n_lost_lines; }

rf_status rf_plot_layout_compute(const rf_plot *p, rf_plot_layout *out, rf_err *err)
{
    placer pl = {.p = p, .out = out};
    memset(out, 0, sizeof *out);
    layout_markers(&pl);
    place_legend(&pl);
    place_ridge(&pl);
    /* The first order that leaves nothing unlabelled, else the one that
     * leaves the fewest (the earliest of those). */
    rf_plot_layout *start = malloc(2 * sizeof *start), *best = start + 1;
    if (!start)
        return rf_err_set(err, RF_ENOMEM, "figure layout: out of memory");
    *start = *out;
    placer base = pl;
    size_t best_lost = SIZE_MAX;
    rf_status s = RF_OK;
    for (int order = 0; order < N_ORDERS && best_lost && !s; order++) {
        placer t = base;
        *out = *start;
        if (!(s = place_in_order(&t, order, err)) && lost(&t) < best_lost) {
            best_lost = lost(&t);
            *best = *out;
        }
    }
    if (!s)
        *out = *best;
    free(start);
    return s;
}
