/* rf_trace_io.h - read a request trace for the simulator (io layer): a CSV
 * of (arrival, prompt, output), one request a row, into the rf_sim_request
 * array that rf_sim_workload.trace takes (rf_sim.h).
 */
#ifndef RF_TRACE_IO_H
#define RF_TRACE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "rf_error.h"
#include "rf_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest trace file read (some 50 million rows). */
#define RF_TRACE_MAX_BYTES ((size_t)1 << 30)

/* Parse len bytes of CSV text: an optional header line (its first field
 * not a number, such as "arrival_s,prompt,output"), then one row a request,
 *     arrival_s, prompt, output
 * (arrival in seconds from the start, >= 0 and not before the previous
 * row's; prompt and output in tokens, whole numbers >= 1). Blank lines
 * and lines starting with '#' are skipped; CR before LF is accepted.
 * origin (a path, or NULL) prefixes every message, which names the line:
 *   "t.csv: line 4: arrival 1.5 s goes back in time (line 3 arrived at 2 s)"
 *   "t.csv: line 5: prompt -3 must be a whole number >= 1"
 * *out is malloc'd (free it with free) and *n its rows. Errors: RF_EINVAL
 * for the rows above, a row without three fields or with more, no rows;
 * RF_ENOMEM. */
rf_status rf_trace_parse(const char *text, size_t len, const char *origin, rf_sim_request **out,
                         int64_t *n, rf_err *err);

/* Read the file at path (rf_file_read_all) and parse it. RF_EIO naming the
 * path when it cannot be read. */
rf_status rf_trace_load(const char *path, rf_sim_request **out, int64_t *n, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
