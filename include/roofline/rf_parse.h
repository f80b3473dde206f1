/* rf_parse.h - the numbers a user types: integers, reals, sizes, ranges.
 *
 * Strict: the whole text must parse, no sign where none makes sense, no
 * silent clamping. Every error message names the text it refused, and the
 * caller prefixes the option ("--batch: ...").
 */
#ifndef RF_PARSE_H
#define RF_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An integer in [lo, hi]; decimal digits only (a leading '+' is refused). */
rf_status rf_parse_i64(const char *text, int64_t lo, int64_t hi, int64_t *out, rf_err *err);

/* A finite real in [lo, hi] (strtod syntax, no inf or nan). */
rf_status rf_parse_f64(const char *text, double lo, double hi, double *out, rf_err *err);

/* The largest size accepted, from the command line or a file (2^60 bytes,
 * 1 EiB: far above any memory, low enough for sums of a few in 64 bits). */
#define RF_SIZE_MAX_BYTES ((uint64_t)1 << 60)

/* A size in bytes: "16GB", "79.65GiB", "6 GiB", "512MiB", "4096" (bytes),
 * units B, KB, MB, GB, TB (1e3 steps), KiB, MiB, GiB, TiB (2^10 steps).
 * Rounded to the nearest byte; at most RF_SIZE_MAX_BYTES. */
rf_status rf_parse_size(const char *text, uint64_t *out, rf_err *err);

/* A range of positive integers, each in [1, hi]:
 *   "1..1024"     powers of two from 1 to 1024 (ends included; a start that
 *                 is not a power of two is doubled: 3..24 -> 3,6,12,24)
 *   "1..1024:1"   a linear step (here every integer)
 *   "1,16,256"    a list, in the order given
 *   "64"          one value
 * Fills at most cap values; RF_ERANGE when there would be more. *n receives
 * the count. An empty or descending range is refused. */
rf_status rf_parse_range(const char *text, int64_t hi, int64_t *vals, size_t cap, size_t *n,
                         rf_err *err);

/* Count of values rf_parse_range would produce (to size an allocation);
 * same errors. */
rf_status rf_parse_range_count(const char *text, int64_t hi, size_t *n, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
