/* rf_report.h - one format-neutral report, several writers.
 *
 * A command builds one rf_report: a title, assumption lines, scalar fields
 * (grouped in sections) and tables. Every writer renders the same numbers:
 *   table  aligned text with units chosen for reading (15.01 GB, 4.48 ms)
 *   json   stable keys, raw SI numbers, exact integers for counts
 *   csv    the first table (or, with none, one row of the scalars)
 * Writers render into an rf_buf; the caller decides where the bytes go:
 * held whole, or passed on through the buffer's sink as they are made (the
 * CLI's atomic file or stdout), so no output is held whole in memory.
 * Strings are printed for a reader on one line: in tables every control
 * character shows as '?'; JSON escapes it.
 *
 * Ownership: rf_report_new allocates, rf_report_free releases (NULL is
 * fine). Strings passed in are copied.
 */
#ifndef RF_REPORT_H
#define RF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a growable byte buffer ------------------------------------------
 * Without a sink it holds everything put into it. With one (rf_buf_set_sink)
 * it holds at most about flush_at bytes: whenever it reaches flush_at it
 * hands what it holds to the sink and starts again from len 0, so output of
 * any size passes through in constant memory (a put of flush_at bytes or
 * more goes to the sink directly, not copied). The sink returns RF_OK, or
 * anything else to stop: the buffer is then failed and drops what follows
 * (the sink keeps its own message).                                        */
typedef rf_status (*rf_buf_sink)(void *user, const char *data, size_t len);

typedef struct rf_buf {
    char *data; /* NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    bool failed;      /* an allocation or the sink failed; contents incomplete */
    rf_buf_sink sink; /* NULL: keep everything                     */
    void *sink_user;
    size_t flush_at; /* bytes held before they go to the sink     */
} rf_buf;

void rf_buf_init(rf_buf *b);
void rf_buf_free(rf_buf *b);
void rf_buf_set_sink(rf_buf *b, rf_buf_sink sink, void *user, size_t flush_at);
/* Hand what the buffer holds to its sink now (at the end of an output). */
void rf_buf_flush(rf_buf *b);
void rf_buf_put(rf_buf *b, const char *s, size_t n);
void rf_buf_puts(rf_buf *b, const char *s);
void rf_buf_printf(rf_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- how a number is shown ----------------------------------------------
 * rf_fmt is the one number formatter: every unit but the last is for a
 * reader (tables, labels, assumption lines); RF_U_RAW6 is the machine text
 * of a streamed row's real in JSON and CSV.                                */
typedef enum rf_unit {
    RF_U_NONE = 0,   /* plain number, %g-like                        */
    RF_U_INT,        /* exact integer with thousands separators      */
    RF_U_BYTES,      /* decimal: B, KB, MB, GB, TB (4 significant)   */
    RF_U_BYTES_BIN,  /* binary: KiB, MiB, GiB                        */
    RF_U_FLOPS,      /* FLOP count: K, M, G, T (4 significant)       */
    RF_U_FLOP_RATE,  /* FLOP/s: GFLOP/s, TFLOP/s                     */
    RF_U_BW,         /* B/s: GB/s, TB/s                              */
    RF_U_SECONDS,    /* s, ms, us, ns (3 significant)                */
    RF_U_TOK_RATE,   /* tokens/s, integer with separators            */
    RF_U_INTENSITY,  /* FLOP/byte, 1 decimal (the lesson's table)    */
    RF_U_INTENSITY4, /* FLOP/byte, 4 significant (0.9996)            */
    RF_U_RATIO,      /* 0.xx, percent-free                           */
    RF_U_PERCENT,    /* 0..1 shown as 12.3%                          */
    RF_U_COUNT,      /* large counts: 218.1 M, 7.505 B (4 significant) */
    RF_U_SIG3,       /* 3 significant, zeros kept: 2.30, 14.0, 256; an
                       integral value as one (4, 1,024)              */
    RF_U_RAW6        /* for machines: shortest text at 6 significant
                       digits (0.00448049, 223.206, 1.2e+20; exponent
                       from 1e15 and below 1e-6); not finite: null    */
} rf_unit;

/* Format v in unit u into out (cap bytes; at least 32 for RF_U_RAW6) and
 * return out. A value that is not finite shows as "-" (RF_U_RAW6: "null"). */
char *rf_fmt(double v, rf_unit u, char *out, size_t cap);

/* ---- one value --------------------------------------------------------
 * What a report's scalar or table cell holds, and what a streamed row
 * passes: the one value model of every writer.                            */
typedef enum rf_cell_kind {
    RF_CELL_NUM,  /* a real in num (JSON null when not finite)             */
    RF_CELL_INT,  /* an exact integer in i                                 */
    RF_CELL_STR,  /* a string in str                                       */
    RF_CELL_NULL, /* no figure: JSON null, CSV empty; str is what a reader
                     sees ("never"; NULL: "-")                            */
    RF_CELL_BOOL  /* yes/no in i (1/0): JSON and CSV true/false; str is
                     what a reader sees (NULL: "yes" or "no")             */
} rf_cell_kind;

typedef struct rf_cell {
    rf_cell_kind kind;
    double num;
    uint64_t i;
    const char *str; /* a streamed row's strings are the caller's (static);
                        a report's are its own copies                     */
} rf_cell;

/* ---- the report -------------------------------------------------------- */
typedef struct rf_report rf_report;

typedef enum rf_format { RF_FMT_TABLE = 0, RF_FMT_JSON, RF_FMT_CSV } rf_format;

rf_report *rf_report_new(const char *title);
void rf_report_free(rf_report *r);

/* An assumption line, printed under the title and stored in JSON as
 * "assumptions": [...]. */
void rf_report_assume(rf_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Start a section of scalars (JSON: nested object under key; NULL key keeps
 * scalars at the top level). label is the human heading. */
void rf_report_section(rf_report *r, const char *key, const char *label);

/* Scalars in the current section. key is the JSON key; label the human
 * name. A NaN or infinite value is stored as JSON null and shown as "-". */
void rf_report_num(rf_report *r, const char *key, const char *label, double v, rf_unit u);
void rf_report_int(rf_report *r, const char *key, const char *label, uint64_t v, rf_unit u);
void rf_report_str(rf_report *r, const char *key, const char *label, const char *v);
void rf_report_null(rf_report *r, const char *key, const char *label, const char *shown);
/* A yes/no figure: JSON and CSV true/false; a reader sees `shown` (NULL:
 * "yes" or "no"). */
void rf_report_bool(rf_report *r, const char *key, const char *label, bool v, const char *shown);

/* Tables: columns first, then rows cell by cell in column order. */
void rf_report_table(rf_report *r, const char *key, const char *label);
void rf_report_col(rf_report *r, const char *key, const char *label, rf_unit u);
void rf_report_row(rf_report *r);
void rf_report_cell_num(rf_report *r, double v);
void rf_report_cell_int(rf_report *r, uint64_t v);
void rf_report_cell_str(rf_report *r, const char *v);
void rf_report_cell_null(rf_report *r, const char *shown);

/* A free-text line after everything else (human output only). */
void rf_report_note(rf_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Render. RF_ENOMEM on allocation failure. */
rf_status rf_report_write(const rf_report *r, rf_format f, rf_buf *out, rf_err *err);

/* ---- streamed rows ------------------------------------------------------
 * For outputs too large to hold as cells (a sweep of a million points):
 * the head (title and assumptions) comes from a report, then rows are
 * rendered straight into the buffer (reals as RF_U_RAW6). Numbers are the
 * same ones a report would carry: integers exact, reals to 6 significant
 * digits in JSON and CSV. Give the buffer a sink (rf_buf_set_sink) and the
 * rows pass through it in constant memory.                                 */
typedef struct rf_rowcol {
    const char *key;   /* JSON key / CSV header (carries the unit)       */
    const char *label; /* human header                                    */
    rf_unit unit;
    int width; /* human column width                              */
} rf_rowcol;

typedef struct rf_rows {
    rf_format fmt;
    const rf_rowcol *cols;
    size_t n_cols;
    size_t n_rows;
} rf_rows;

void rf_rows_begin(rf_rows *w, rf_buf *out, rf_format f, const rf_report *head, const char *key,
                   const rf_rowcol *cols, size_t n_cols);
void rf_rows_add(rf_rows *w, rf_buf *out, const rf_cell *cells);
void rf_rows_end(rf_rows *w, rf_buf *out);

#ifdef __cplusplus
}
#endif
#endif
