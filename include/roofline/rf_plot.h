/* rf_plot.h - Figure 1: every operator of a model on the roofline; the
 * batch-sweep chart; the self-contained HTML report that carries both.
 *
 * A figure is described format-neutrally (axes, roofs, ridge, points), then
 * rendered: rf_plot_write_svg draws it, rf_report_write_html embeds the SVG
 * text of any figures into one page with a report's tables. Building:
 *
 *     rf_plot_init(&p, &hw, &roof);                  roofs of the hardware
 *     rf_plot_describe(&p, model, hw, &dec, &pre);   title, legend entries
 *     rf_plot_add_step(&p, &decode_step, &err);      one point per operator
 *     rf_plot_add_step(&p, &prefill_step, &err);
 *     rf_plot_add_measured(&p, &measured, &err);     optional overlay
 *     rf_plot_fit(&p);                               axes: decades around all
 *     rf_plot_write_svg(&p, &buf, &err);
 *
 * Geometry. Both axes are logarithmic. The canvas is width_px x height_px
 * (900 x 560 unless changed before rf_plot_fit); the plot area is
 * axes.left_px .. left_px + width_px across and axes.top_px .. top_px +
 * height_px down (SVG y grows downwards):
 *     x(I)  = left + width  (log10 I    - log10 x_min) / (log10 x_max - log10 x_min)
 *     y(F') = top  + height (log10 y_max - log10 F')   / (log10 y_max - log10 y_min)
 * where I is FLOP/byte and F' is FLOP/s. A predicted operator sits at
 * (I, min(pi, I beta)) with I = F / Q of one instance (rf_roof_place); the
 * ridge at (pi / beta, pi). A measured operator sits at (F / Q, F / t).
 * Operators with no FLOPs (the embedding gather) have no place on a log
 * axis: they are named in the footnote instead.
 *
 * Labels never overlap each other, a marker or the legend: operators whose
 * markers fall within RF_PLOT_MERGE_PX of each other share one label
 * ("q/k/v/o/gate/up/down_proj, lm_head"), and each label is placed by a
 * search around its anchor, with a leader line when its text stands more
 * than RF_PLOT_LEADER_PX from its markers. rf_plot_layout exposes the
 * result so tests can check it.
 *
 * A predicted operator's marker area is proportional to its share of its
 * step's floor, count x max(F/pi, Q/beta) over the sum of that over the
 * step (the sum-of-max composition), so the operators that take the
 * step's time stand out; the legend says what the area means.
 *
 * Everything here is plain data; only the layout, the batch sweep and the
 * writers allocate (scratch, freed before they return), and the writers
 * render into an rf_buf (a file is then written whole or not at all).
 */
#ifndef RF_PLOT_H
#define RF_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_hw.h"
#include "rf_measured.h"
#include "rf_model.h"
#include "rf_parallel.h"
#include "rf_report.h"
#include "rf_step.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_PLOT_WIDTH_PX 900.0
#define RF_PLOT_HEIGHT_PX 560.0
#define RF_PLOT_MERGE_PX 7.0 /* markers closer than this share a label      */
#define RF_PLOT_TEXT_MAX 512
#define RF_PLOT_MAX_LINES 24
#define RF_PLOT_MAX_POINTS (2 * (RF_STEP_MAX_OPS + RF_PAR_MAX_COLL) + RF_MEASURED_MAX_OPS)
#define RF_PLOT_MAX_LABELS (RF_PLOT_MAX_POINTS + RF_PLOT_MAX_LINES + 3)
#define RF_PLOT_LABEL_LINES 4    /* lines of one label at most                 */
#define RF_PLOT_HEAD_LINES 6     /* the title and up to 5 lines of subtitle      */
#define RF_PLOT_MAX_DECADES 12.0 /* widest span of an axis, see rf_plot_fit    */
#define RF_PLOT_LEADER_PX                                                                          \
    10.0                    /* a label's text farther than this from its
                                  markers gets a leader line to them         */
#define RF_PLOT_AREA_R 20.0 /* radius (px) of a marker holding a whole step */
#define RF_PLOT_MARKER_R_MIN                                                                       \
    2.5 /* smallest marker radius (px), so every
                                    operator stays visible                   */

/* ---- axes ---------------------------------------------------------------- */
typedef struct rf_plot_axes {
    double x_min, x_max; /* FLOP/byte at the left and right edges (powers of 10) */
    double y_min, y_max; /* FLOP/s at the bottom (a power of 10) and the top
                             edge (a power of 10 or half a decade above one) */
    double left_px, top_px, width_px, height_px; /* plot area on the canvas, px   */
} rf_plot_axes;

/* The mappings above. Values <= 0 (or NaN) map to the left (bottom) edge;
 * log10 is clamped to +-300, so every result is finite. */
double rf_plot_x_px(const rf_plot_axes *a, double intensity);
double rf_plot_y_px(const rf_plot_axes *a, double flops_per_s);

/* ---- the figure ---------------------------------------------------------- */
typedef enum rf_plot_role {
    RF_PLOT_MAIN = 0, /* the roof of the math dtype in use (dark)            */
    RF_PLOT_OTHER,    /* another dtype the hardware has (lighter)             */
    RF_PLOT_MEASURED, /* from a measured file (dashed)                        */
    RF_PLOT_LINK      /* a link's bandwidth, y = I x link bw (many devices:
                         dash-dot, under the memory roof)                    */
} rf_plot_role;

/* One roof segment: sloped (y = I x bw) or flat (y = peak), drawn for
 * intensities from_intensity .. to_intensity, clipped to the axes. */
typedef struct rf_plot_line {
    rf_plot_role role;
    bool sloped;           /* memory roof; else a compute roof            */
    double value;          /* bw_bytes_per_s (sloped) or peak_flops_per_s */
    double from_intensity; /* FLOP/byte; 0 = from the left edge           */
    double to_intensity;   /* FLOP/byte; 0 = to the right edge            */
    char label[96];        /* "bf16 165.2 TFLOP/s", "1.008 TB/s", "fp8_e4m3
                                 1.979 PFLOP/s, int8 1.979 POP/s": integer
                                 dtypes in OP/s                              */
} rf_plot_line;

typedef enum rf_plot_series {
    RF_SERIES_DECODE = 0, /* circles, blue                                   */
    RF_SERIES_PREFILL,    /* squares, orange                                 */
    RF_SERIES_OTHER       /* measured with no phase: diamonds, grey          */
} rf_plot_series;

typedef struct rf_plot_point {
    char name[RF_MEASURED_NAME_MAX]; /* operator name                         */
    rf_plot_series series;
    bool measured;      /* hollow marker                                */
    bool collective;    /* a collective of a layout (triangle): placed
                                 by rf_plot_add_layout's convention          */
    double intensity;   /* F / Q, FLOP/byte (> 0)                       */
    double flops_per_s; /* predicted: min(pi, I beta); measured: F / t  */
    int match;          /* measured: index of the predicted point with the
                                 same name and phase (joined by a line); -1 none */
    double share;       /* predicted: count x max(F/pi, Q/beta) of the
                                 operator over its step's sum-of-max floor on
                                 this roof, 0..1; measured: 0              */
    bool off_axes;      /* set by rf_plot_fit: outside the axes, not
                                 drawn (named in the footnote)             */
} rf_plot_point;

typedef struct rf_plot {
    char title[RF_PLOT_TEXT_MAX];                       /* model and hardware                    */
    char subtitle[RF_PLOT_TEXT_MAX];                    /* dtypes, B, s, T                       */
    char series_label[3][128];                          /* legend text of each series            */
    char footnote[RF_PLOT_TEXT_MAX];                    /* set by rf_plot_fit: what is not drawn,
                                        where measured figures come from      */
    char unplaced[128];                                 /* operators with no FLOPs ("embed")     */
    char off_axes[RF_PLOT_TEXT_MAX];                    /* points and measured roofs not drawn:
                                        beyond a double, or outside the axes */
    char heading[RF_PLOT_HEAD_LINES][RF_PLOT_TEXT_MAX]; /* set by rf_plot_fit:
                                        the title, then the subtitle's lines,
                                        each fitting the canvas             */
    int n_heading;
    double heading_px;          /* set by rf_plot_fit: px height_px grew
                                        by for the subtitle's extra lines   */
    char measured_name[64];     /* name in the measured file             */
    double width_px, height_px; /* canvas                                */
    rf_plot_axes axes;          /* set by rf_plot_fit                    */
    rf_dtype_kind math;         /* dtype of the main compute roof        */
    double bw_bytes_per_s;      /* beta of the main roof                 */
    double peak_flops_per_s;    /* pi of the main roof                   */
    double ridge;               /* I* = pi / beta, FLOP/byte             */
    rf_plot_line lines[RF_PLOT_MAX_LINES];
    size_t n_lines;
    rf_plot_point points[RF_PLOT_MAX_POINTS];
    size_t n_points;
} rf_plot;

/* Start a figure on a roof: the memory roof up to the ridge, the compute
 * roof of roof->math from it, and a flat roof for every other dtype of hw
 * with a different positive peak (dtypes sharing a peak share a line). */
void rf_plot_init(rf_plot *p, const rf_hw *hw, const rf_roof *roof);

/* Title "<model> on <hw>", subtitle with the dtypes, decode B and s,
 * prefill B and T; legend entries of both series. Either opts may be NULL
 * when that phase is not drawn. */
void rf_plot_describe(rf_plot *p, const char *model, const char *hw, const rf_step_opts *decode,
                      const rf_step_opts *prefill);

/* One point per operator of st in the series of phase, at rf_roof_place of
 * one instance on p's roof. An operator with no FLOPs is named in
 * p->unplaced instead. RF_ERANGE when the figure is full. */
rf_status rf_plot_add_step(rf_plot *p, const rf_step *st, rf_phase phase, rf_err *err);

/* The measured overlay, dashed: a memory roof for its bandwidth and a flat
 * roof per measured peak (the math dtype's roof bends at the measured ridge
 * when both were measured; other lines span the plot), and a hollow point
 * per operator with FLOPs, joined to the predicted point of the same name
 * and phase. RF_ERANGE when full. */
rf_status rf_plot_add_measured(rf_plot *p, const rf_measured *m, rf_err *err);

/* A layout's step (rf_par_compute) instead of rf_plot_add_step: the
 * operators a device of the slowest stage runs (its shard; the embedding
 * and lm_head only where that stage holds them) and its collectives, in
 * the series of phase. Each marker's share is of that device's floor,
 * operators plus collectives (rf_par_stage.floor_s on this roof). Under
 * PP a stage's collectives include its pp_send to the next stage; the
 * last stage, which sends none, shows the send into it instead.
 *
 * Where a collective goes. It moves bytes over a link and adds little or
 * nothing, so it has no intensity of its own worth a log axis; the figure
 * uses one convention for all of them:
 *   x = rf_plot_coll_intensity(b_a) = 1 / (2 b_a) FLOP/byte: an
 *       all-reduce's adds per byte it moves (each device adds (t-1)/t n / b_a
 *       elements while it sends 2 (t-1)/t n bytes); all-gathers,
 *       all-to-alls and sends add nothing and stand in the same column;
 *   y = x times the link bandwidth it attains, x bw bw_s / time_s (bytes
 *       moved over its time): on the link's roof when bandwidth bounds it,
 *       below it by the share its alpha terms take when latency does.
 * Each link a collective crosses gets a roof of role RF_PLOT_LINK, sloped
 * at its bandwidth (one direction) up to the main compute peak, labelled
 * with its name and GB/s. The subtitle names the layout and the stage.
 * RF_ERANGE when the figure is full. */
double rf_plot_coll_intensity(double act_bytes);
rf_status rf_plot_add_layout(rf_plot *p, const rf_par *par, rf_phase phase, double act_bytes,
                             rf_err *err);

/* Choose the axes: x from the power of ten at least a quarter decade left
 * of the smallest intensity (points and ridge) to the power of ten at least
 * a quarter decade right of the largest (a compute roof's start counts 8x,
 * so each roof shows a stretch long enough for its label); y from the
 * power of ten below the lowest point or the memory roof at x_min, up to
 * the first half decade (10^(k/2)) that leaves 19 px above the highest roof
 * or point (room for a roof's label). Lays the plot area out on the canvas,
 * below the heading: the title on one line, the subtitle wrapped (at its
 * " \xc2\xb7 " pieces, then spaces) to the canvas, measured by
 * rf_plot_text_px; each subtitle line past the first adds 14 px to the
 * canvas above the plot (height_px grows, heading_px says by how much), so
 * the plot keeps its size.
 *
 * Total: any figures in give finite axes out, in bounded time. An axis
 * spans at most RF_PLOT_MAX_DECADES: when everything would span more, it
 * keeps the main roof's ridge, the predictions and the compute roofs, and
 * widens towards the measured figures (downwards first) up to that span;
 * a measured point or roof left outside is marked off_axes, not drawn,
 * and named in the footnote. The canvas is kept to 480..4000 x 320..4000
 * px (900 x 560 otherwise). */
void rf_plot_fit(rf_plot *p);

/* Width in px of s set in DejaVu Sans at font_px (UTF-8; a character
 * beyond ASCII counts wide): the estimate every layout decision uses. */
double rf_plot_text_px(const char *s, double font_px);

/* Radius (px) of a predicted operator's marker: its area is proportional
 * to the operator's share of the step's floor, RF_PLOT_AREA_R sqrt(share),
 * but never below RF_PLOT_MARKER_R_MIN. A circle of this radius; a square
 * or diamond of the same area. Measured markers keep 4.8 px. */
double rf_plot_marker_r(double share);

/* ---- layout: where every text goes ---------------------------------------- */
/* A box centred at (cx, cy), w x h px, turned angle_deg clockwise. */
typedef struct rf_plot_box {
    double cx, cy, w, h, angle_deg;
} rf_plot_box;

bool rf_plot_box_overlap(const rf_plot_box *a, const rf_plot_box *b);

typedef enum rf_label_kind {
    RF_LABEL_POINTS = 0, /* a cluster of operator markers                    */
    RF_LABEL_LINE,       /* a roof                                           */
    RF_LABEL_RIDGE,      /* the ridge point                                  */
    RF_LABEL_REGION      /* "memory-bound" / "compute-bound" either side of it */
} rf_label_kind;

typedef struct rf_plot_label {
    rf_label_kind kind;
    size_t index;                              /* points: first point of the cluster; line: index */
    char text[RF_PLOT_LABEL_LINES][160];       /* its lines of text              */
    rf_plot_series color[RF_PLOT_LABEL_LINES]; /* colour of each (points)   */
    int n_text;
    double font_px;
    rf_plot_box box;             /* where the text sits                            */
    double anchor_x, anchor_y;   /* the thing it names                          */
    double anchor_hw, anchor_hh; /* half sizes of what it names (its markers) */
    int align;                   /* its lines' alignment in the box: -1 flush left
                               (the box right of its anchor), 1 flush right
                               (left of it), 0 centred                       */
    bool leader;                 /* a leader line from the anchor to lead_x, lead_y:
                               set whenever its nearest line of text is more
                               than RF_PLOT_LEADER_PX from the anchor's box  */
    double lead_x, lead_y;       /* where the leader ends: the point of the nearest
                               line of text closest to the anchor           */
} rf_plot_label;

typedef struct rf_plot_layout {
    rf_plot_label labels[RF_PLOT_MAX_LABELS];
    size_t n_labels;
    int label_of[RF_PLOT_MAX_POINTS];            /* label naming each point; -1 none  */
    rf_plot_box markers[RF_PLOT_MAX_POINTS + 1]; /* each point, then the ridge */
    rf_plot_box legend;
    char unlabelled[RF_PLOT_TEXT_MAX]; /* labels that found no free place    */
} rf_plot_layout;

/* Lay out the labels of a fitted figure. Points come in clusters (single
 * linkage, markers within RF_PLOT_MERGE_PX); a cluster mixing the phases
 * gets a line per phase; a label's lines break only at spaces, so no name
 * is cut. Measured points matched to a prediction carry no label (the line
 * to it names them), nor do points off the axes. A roof's label goes along
 * its line (anywhere along a flat one), beside it or, failing that, on
 * it. Six orders are tried, the first one that leaves nothing unlabelled
 * kept, else the one that leaves the fewest: the roofs' labels before the
 * operators', the main roof's only, the operators' first; the operators'
 * widest first, then narrowest first. A label
 * that finds no place free of every other label, marker and the legend is
 * left out and its text named in out->unlabelled (drawn in the footnote),
 * so nothing ever overlaps. RF_ENOMEM when its scratch cannot be
 * allocated. */
rf_status rf_plot_layout_compute(const rf_plot *p, rf_plot_layout *out, rf_err *err);

/* Render the figure as a standalone SVG document (XML declaration, no
 * external references, no fonts, no rasters). Text taken from the input
 * (names, titles) is escaped for XML and every control character in it
 * is shown as '?'. Each axis labels at most 13 decades (every k-th one on
 * a wider axis), so the file stays small whatever the figures. Each
 * marker is a
 * <g class="pt SERIES[ measured]" data-op="NAME" transform="translate(x,y)">
 * and the ridge a <g class="ridge" transform="translate(x,y)">, at the pixel
 * coordinates of the mapping above, printed with one decimal; a predicted
 * marker's size is rf_plot_marker_r of its share (the legend says so), and
 * larger markers are drawn first so smaller ones stay on top. */
rf_status rf_plot_write_svg(const rf_plot *p, rf_buf *out, rf_err *err);

/* ---- the batch sweep chart -------------------------------------------------- */
#define RF_CHART_MAX_POINTS 24

/* Decode at one context over batch sizes 1, 2, 4, ... : the step floor and
 * the tokens/s ceiling, with the KV-capacity limit (sequences that fit at
 * this context) marked. */
typedef struct rf_batch_chart {
    char title[RF_PLOT_TEXT_MAX];
    int64_t context; /* s of every step                     */
    size_t n;
    int64_t batch[RF_CHART_MAX_POINTS];
    double floor_s[RF_CHART_MAX_POINTS];      /* rf_step.floor_s          */
    double tokens_per_s[RF_CHART_MAX_POINTS]; /* rf_step.tokens_per_s     */
    rf_regime regime[RF_CHART_MAX_POINTS];
    double capacity_sequences;  /* KV limit; < 0: unknown, not drawn   */
    double width_px, height_px; /* 900 x 440                           */
} rf_batch_chart;

/* Batches are the powers of two from 1 to max_batch (at most
 * RF_CHART_MAX_POINTS of them); max_batch 0 means 1024, or twice the
 * capacity when that is larger, so the limit always shows. Each point is
 * rf_step_compute of decode at that batch; errors are its errors
 * (RF_EINVAL for a negative max_batch). */
rf_status rf_batch_chart_build(rf_batch_chart *c, const rf_model *m, const rf_step_opts *decode,
                               const rf_roof *roof, int64_t max_batch, double capacity_sequences,
                               rf_err *err);

/* Two log-log panels sharing the batch axis: floor (top), tokens/s
 * (bottom); beyond the KV-capacity line the region is shaded. */
rf_status rf_batch_chart_write_svg(const rf_batch_chart *c, rf_buf *out, rf_err *err);

/* ---- the HTML report ---------------------------------------------------------- */
typedef struct rf_html_figure {
    const char *svg;     /* an SVG document; its XML declaration is dropped   */
    const char *caption; /* figure caption (plain text)                      */
    const char *after;   /* key of the report block it follows; NULL: right
                            after the assumptions                             */
} rf_html_figure;

/* One self-contained page: title, assumptions, the report's sections and
 * tables in order with the figures inline where `after` puts them, a print
 * stylesheet and a layout that reads on a narrow screen. No script, no
 * external reference; every text of the report is escaped, its control
 * characters shown as '?'. RF_ENOMEM on allocation failure; RF_EINVAL for a
 * figure whose `after` names no block. */
rf_status rf_report_write_html(const rf_report *r, const rf_html_figure *figs, size_t n_figs,
                               rf_buf *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
