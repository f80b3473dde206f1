/* io_json.h - the JSON text every reader in io parses (not public).
 *
 * One reading for config.json, hardware profiles and measured files, so a
 * NUL byte, a file that is not JSON at all, or a syntax error reads the
 * same everywhere.
 */
#ifndef RF_IO_JSON_H
#define RF_IO_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roofline/rf_error.h"

/* Parse len bytes of text (no NUL needed, none allowed) into *root, with
 * duplicate keys refused; the caller json_decref()s it. RF_EINVAL, with
 * origin first in the message, for:
 *   "ORIGIN: empty, not JSON"
 *   "ORIGIN: not JSON: it starts with 'processor\t: 0' ('{' expected)"
 *   "ORIGIN: not JSON: a NUL byte at offset 12"
 *   "ORIGIN: line 2 column 25: '}' expected near end of file"  */
rf_status rf__json_parse(const char *text, size_t len, const char *origin, json_t **root,
                         rf_err *err);

/* As rf__json_parse, for files that Python's json module wrote: a bare
 * Infinity, -Infinity or NaN (not JSON; Nemotron-H's time_step_limit) where
 * a value stands, outside strings, reads as null, and *replaced counts
 * them so the caller can say so. Elsewhere the text is parsed unchanged. */
rf_status rf__json_parse_nonfinite(const char *text, size_t len, const char *origin, json_t **root,
                                   size_t *replaced, rf_err *err);

/* RF_EINVAL with "ORIGIN: " and the formatted text: every reader's refusal
 * of a field ("lab.json: cluster.links[0] ...: points is missing"). */
rf_status rf__json_fail(rf_err *err, const char *origin, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A reader's parse function, out its result (rf_model, rf_hw_profile,
 * rf_measured). */
typedef rf_status (*rf__parse_fn)(const char *text, size_t len, const char *origin, void *out,
                                  rf_err *err);

/* Every reader's load: all of the file at path (rf_file_read_all, at most
 * RF_FILE_MAX_BYTES; RF_EIO naming the path when it cannot be read), then
 * parse on its bytes with path as the origin. */
rf_status rf__json_load(const char *path, rf__parse_fn parse, void *out, rf_err *err);

/* The figures the readers bound, each kind to one documented range (the
 * hardware profile and the measured file alike), wide enough for any real
 * machine or operator and narrow enough that every ridge, time and plot
 * coordinate made from them is finite:
 *   bandwidth  [1e3, 1e16] bytes/s   (1 kB/s .. 10 PB/s)
 *   peak       [1e6, 1e19] FLOP/s    (1 MFLOP/s .. 10 EFLOP/s)
 *   flops      [1, 1e24]   an operator's FLOPs
 *   bytes      [1, 1e21]   an operator's bytes
 *   time       [1e-12, 1e6] s        (1 ps .. 11.6 days)
 *   clock      [1e6, 1e11] Hz */
typedef enum rf__figure {
    RF__FIG_BW,
    RF__FIG_PEAK,
    RF__FIG_FLOPS,
    RF__FIG_BYTES,
    RF__FIG_TIME,
    RF__FIG_CLOCK,
    RF__FIG_COUNT
} rf__figure;

/* RF_OK when v is within kind's range, or is 0 and zero_ok (0 = none);
 * else RF_EINVAL naming the key and the range:
 *   "lab.json: ops[0].flops (9.88131e-324) must be 0 (none) or within
 *    [1, 1e+24] FLOPs". */
rf_status rf__figure_check(const char *origin, const char *path, double v, rf__figure kind,
                           bool zero_ok, rf_err *err);

/* A byte count read from a file (a memory size, a cache, a level's working
 * set): RF_OK up to RF_SIZE_MAX_BYTES (2^60, as --mem), RF_EINVAL beyond. */
rf_status rf__bytes_check(const char *origin, const char *path, uint64_t v, rf_err *err);

/* ---- field accessors ------------------------------------------------------
 * The profile, calibration, cluster and measured readers read their fields
 * through these (json_fields.c). Each looks up obj[key] and names it in a
 * refusal as "ORIGIN: ATKEY ...", at being the path up to the key
 * ("levels[0].", "cluster.nodes[1].", "" at the top level). An absent key
 * is refused with "ATKEY is missing" when required; otherwise it is RF_OK
 * with *out left as it was. A reader's own rules (a range, a sign, a
 * figure kind) follow the read. */
typedef struct rf__json_doc {
    const char *origin; /* the file: first in every message */
    rf_err *err;
} rf__json_doc;

/* obj[key] itself; *v is NULL when absent (and not required). */
rf_status rf__field_get(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                        bool required, json_t **v);
/* A number: "ATKEY must be a number". */
rf_status rf__field_number(const rf__json_doc *d, const json_t *obj, const char *at,
                           const char *key, bool required, double *out);
/* An integer: "ATKEY must be a whole number". */
rf_status rf__field_integer(const rf__json_doc *d, const json_t *obj, const char *at,
                            const char *key, bool required, json_int_t *out);
/* An integer within [lo, hi]: "ATKEY (X) must be within [LO, HI]". */
rf_status rf__field_whole(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                          bool required, int64_t lo, int64_t hi, int64_t *out);
/* A string of fewer than cap bytes, copied (never cut: "ATKEY is longer
 * than N characters"); "ATKEY must be a string". */
rf_status rf__field_string(const rf__json_doc *d, const json_t *obj, const char *at,
                           const char *key, bool required, char *out, size_t cap);
/* A required fraction within [0, 100] (0% .. 10,000%): "ATKEY (X) must be
 * within [0, 100] (a fraction)". */
rf_status rf__field_fraction(const rf__json_doc *d, const json_t *obj, const char *at,
                             const char *key, double *out);
/* An array of at most max entries: "ATKEY must be an array", "ATKEY: more
 * than MAX". */
rf_status rf__field_array(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                          bool required, size_t max, json_t **out);

/* A file of an engine's figures, {"source": "...", "engines": {"<engine>":
 * {...}}} (serving_error.json, closed_loop_ttft.json), read into a
 * reader's struct: out (out_size bytes) is zeroed, the file's source copied
 * into source (source_cap bytes, inside out), and engines[engine], where
 * present, handed to read with its path "engines.<engine>."; *found true
 * when it was there and read, else out is zero again. A missing file is
 * RF_OK, found false; "the top level must be an object", "source is
 * missing", "engines must be an object", "engines.E must be an object" and
 * read's own refusals otherwise, each naming the file. */
typedef rf_status (*rf__engine_fn)(const rf__json_doc *d, const json_t *e, const char *at,
                                   void *user);
/* What a reader reads (initialised by position): its engine, read and
 * read's user, and the struct it fills with that struct's source field. */
typedef struct rf__engine_file {
    const char *engine;
    rf__engine_fn read;
    void *user; /* read's */
    void *out;
    size_t out_size;
    char *source;
    size_t source_cap;
} rf__engine_file;
rf_status rf__engine_file_load(const char *path, const rf__engine_file *f, bool *found,
                               rf_err *err);
/* The same from text in memory, origin naming it in refusals. */
rf_status rf__engine_file_parse(const char *text, size_t len, const char *origin,
                                const rf__engine_file *f, bool *found, rf_err *err);

#endif
