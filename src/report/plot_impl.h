/* plot_impl.h - what the figure's files (plot.c, plot_text.c, plot_layout.c,
 * batch_chart.c) share with the SVG and HTML writers (private to
 * src/report). */
#ifndef RF_PLOT_IMPL_H
#define RF_PLOT_IMPL_H

#include "roofline/rf_plot.h"

/* Font sizes (px) and the family every writer names; the layout estimates
 * text widths for DejaVu Sans, the widest of the family's first choices. */
#define RF__FONT_FAMILY "DejaVu Sans, Verdana, Liberation Sans, Arial, sans-serif"
#define RF__FONT_TITLE 15.0
#define RF__FONT_SUB 11.5
#define RF__FONT_LABEL 11.0
#define RF__FONT_SMALL 10.0
#define RF__LINE_PX 13.0 /* height of one line of 11 px text */

/* Colours of the series (decode, prefill, other) and of the roofs. */
extern const char *const rf__series_color[3];
#define RF__ROOF_MAIN "#222222"
#define RF__ROOF_OTHER "#b0b0b0"
#define RF__ROOF_MEASURED "#2a9d8f"
#define RF__ROOF_LINK "#8a3ffc"

/* Exponents beyond +-RF__LG_MAX are clamped: every log10 the figure takes
 * is finite, so every coordinate is, whatever the input. */
#define RF__LG_MAX 300.0

/* log10 v clamped to [-RF__LG_MAX, RF__LG_MAX]; -RF__LG_MAX for v <= 0 or
 * NaN. */
double rf__lg(double v);

/* The axis mapping of rf_plot.h from a log10 value already taken. */
double rf__plot_x_lg(const rf_plot_axes *a, double lg_intensity);
double rf__plot_y_lg(const rf_plot_axes *a, double lg_flops_per_s);

/* Integer dtypes count operations (OP/s), the others FLOPs. */
bool rf__dtype_counts_ops(rf_dtype_kind k);

/* Clip the segment (x0, y0)-(x1, y1) to [xmin, xmax] x [ymin, ymax];
 * false if nothing of it is left. */
bool rf__clip(double *x0, double *y0, double *x1, double *y1, double xmin, double ymin, double xmax,
              double ymax);

/* A roof segment in canvas px, clipped to the plot area; false when none
 * of it is visible. */
bool rf__plot_line_px(const rf_plot *p, const rf_plot_line *l, double xy[4]);

/* "330.3 TFLOP/s": a rate in the unit of dtype k; integer dtypes count
 * operations, not FLOPs ("1.979 POP/s"). */
void rf__rate_text(double flops_per_s, rf_dtype_kind k, char *out, size_t cap);

/* A ridge in FLOP/byte as the figure prints it: "163.9", "1250", "2.5e+06";
 * "-" when it is not a positive finite number. Returns out. */
char *rf__ridge_text(double ridge, char out[32]);

/* The text of a decade tick: 10^e of a quantity. kind: 'F' FLOP/s,
 * 'I' FLOP/byte, 's' seconds, 't' tokens/s, 'b' a batch (plain). */
void rf__decade_label(int e, char kind, char *out, size_t cap);

#define RF__LEGEND_ROW 160   /* bytes of one legend row */
#define RF__LEGEND_ROWS 11   /* rows of the legend at most */
#define RF__LEGEND_SHARE 0.1 /* share of the legend's sample marker */

/* The legend's rows of a figure: text and kind (0..2 a series, 3 measured
 * markers, 4 the main roof, 5 other dtypes, 6 measured roofs, 7 what a
 * marker's area means, 8 collectives, 9 link roofs); returns how many (at
 * most RF__LEGEND_ROWS). */
int rf__plot_legend(const rf_plot *p, char rows[][RF__LEGEND_ROW], int kinds[]);

/* Radius (px) of a point's marker: rf_plot_marker_r of its share when
 * predicted, RF__MEASURED_R when measured. */
#define RF__MEASURED_R 4.8
double rf__marker_r(const rf_plot_point *q);

/* Move the longest head of text that fits max_px into line (cap bytes),
 * cut at a space, so no word (and no operator name) is ever broken; text
 * keeps the rest. A first word wider than max_px makes a wider line. With
 * last set, a rest that does not fit is dropped and the line ends in "..."
 * (and only then may a single over-wide word be cut). */
void rf__take_line(char *text, char *line, size_t cap, double font, double max_px, bool last);

/* Break text into at most max_lines lines of max_px, preferring cuts where
 * sep (" \xc2\xb7 ") stands, then at spaces; the last line ends in "..." if
 * text does not fit. Returns the number of lines (0 for ""). */
int rf__wrap(const char *text, const char *sep, double font, double max_px,
             char lines[][RF_PLOT_TEXT_MAX], int max_lines);

/* The extent across of line i of label l: x0 .. x1 px, as its align sets
 * it inside the box (2 px from the side it is flush with). */
void rf__label_line_x(const rf_plot_label *l, int i, double *x0, double *x1);

/* XML/HTML text with &, <, >, " escaped. */
void rf__xml_text(rf_buf *b, const char *s);

#endif
