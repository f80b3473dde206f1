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

/* Parse len bytes of JSON text (every byte: a NUL inside is refused).
 * origin names the input in messages ("lab.json: ops[3].measured_s must be
 * a positive number"). Every figure is held to the range the hardware
 * profile reader holds it to, so that each point and roof of the figure
 * drawn from it is finite:
 *   bandwidth_bytes_per_s    [1e3, 1e16] bytes/s
 *   peak_flops_per_s.DTYPE   [1e6, 1e19] FLOP/s
 *   ops[i].flops             0 (no FLOPs: read, not drawn) or [1, 1e24]
 *   ops[i].bytes             [1, 1e21]
 *   ops[i].measured_s        [1e-12, 1e6] s
 * Errors: RF_EINVAL for bad JSON, a key of the wrong type, a figure out of
 * its range ("lab.json: ops[0].flops (9.88131e-324) must be 0 (none) or
 * within [1, 1e+24] FLOPs"), an unknown dtype or phase, or a file with
 * neither roofs nor operators; RF_ERANGE for more than RF_MEASURED_MAX_OPS
 * ops. */
rf_status rf_measured_parse(const char *text, size_t len, const char *origin, rf_measured *out,
                            rf_err *err);

/* Read and parse the file at path (RF_EIO when it cannot be read). */
rf_status rf_measured_load(const char *path, rf_measured *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
