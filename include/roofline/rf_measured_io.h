/* rf_measured_io.h - read a measured-results file (io layer) into the
 * rf_measured type of rf_measured.h (core).
 */
#ifndef RF_MEASURED_IO_H
#define RF_MEASURED_IO_H

#include <stddef.h>

#include "rf_error.h"
#include "rf_measured.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse len bytes of JSON text. origin names the input in messages
 * ("lab.json: ops[3].measured_s must be a positive number"). Errors:
 * RF_EINVAL for bad JSON, a key of the wrong type, a non-positive or
 * non-finite figure, an unknown dtype or phase, or a file with neither
 * roofs nor operators; RF_ERANGE for more than RF_MEASURED_MAX_OPS ops. */
rf_status rf_measured_parse(const char *text, size_t len, const char *origin, rf_measured *out,
                            rf_err *err);

/* Read and parse the file at path (RF_EIO when it cannot be read). */
rf_status rf_measured_load(const char *path, rf_measured *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
