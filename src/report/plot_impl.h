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

/* Width in px of s set in DejaVu Sans at font_px (UTF-8; unknown glyphs
 * count as wide). */
double rf__text_px(const char *s, double font_px);

/* A roof segment in canvas px, clipped to the plot area; false when none
 * of it is visible. */
bool rf__plot_line_px(const rf_plot *p, const rf_plot_line *l, double xy[4]);

/* "330.3 TFLOP/s": a rate in the unit of dtype k; integer dtypes count
 * operations, not FLOPs ("1.979 POP/s"). */
void rf__rate_text(double flops_per_s, rf_dtype_kind k, char *out, size_t cap);

/* The text of a decade tick: 10^e of a quantity. kind: 'F' FLOP/s,
 * 'I' FLOP/byte, 's' seconds, 't' tokens/s, 'b' a batch (plain). */
void rf__decade_label(int e, char kind, char *out, size_t cap);

#define RF__LEGEND_ROW 160 /* bytes of one legend row */

/* The legend's rows of a figure: text and kind (0..2 a series, 3 measured
 * markers, 4 the main roof, 5 other dtypes, 6 measured roofs); returns how
 * many (at most 8). */
int rf__plot_legend(const rf_plot *p, char rows[][RF__LEGEND_ROW], int kinds[]);

/* Move the longest head of text that fits max_px into line (cap bytes),
 * cut after a '/' or before a ',' or a space where one fits, anywhere else
 * otherwise;
 * text keeps the rest. With last set, a rest that does not fit is dropped
 * and the line ends in "...". */
void rf__take_line(char *text, char *line, size_t cap, double font, double max_px, bool last);

/* XML/HTML text with &, <, >, " escaped. */
void rf__xml_text(rf_buf *b, const char *s);

#endif
