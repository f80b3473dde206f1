/* rf_engine_io.h - an engine calibration's JSON file (io layer); the type
 * is in rf_engine.h (core).
 *
 *   {"engine_calibration": {
 *      "version": 1, "engine": "llamacpp", "detail": "...", "date": "...",
 *      "activations": "fp32", "kv": "fp16",
 *      "roofs": {"from": "prof.json", "bandwidth_bytes_per_s": 6.5e10,
 *                "peak_flops_per_s": {"fp32": 4.6e11, "int8": 1.8e12}},
 *      "models": {"cal-a": {...a config.json...}, ...},
 *      "steps": [{"model": "cal-a", "weights": "q4_0", "phase": "prefill",
 *                 "tokens": 128, "context": 0, "measured_s": 0.41}, ...]}}
 *
 * The file holds what was measured: the roofs, the shapes timed (each a
 * config.json, its num_hidden_layers the layers the engine ran) and the
 * times. Each step's floors are derived on load by this library's own
 * accounting (rf_engine_point_make), and the fits made from them
 * (rf_engine_fit_all), so a calibration cannot disagree with the floors it
 * is applied to.
 */
#ifndef RF_ENGINE_IO_H
#define RF_ENGINE_IO_H

#include <stddef.h>

#include "rf_engine.h"
#include "rf_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse len bytes (origin names the file in every message): the header
 * (rf_engine_check), each model (rf_model_parse of its config), each step
 * (times within 1 ps to 11.6 days, tokens 1 to 2^24, context 0 to 2^24),
 * then the points and the fits. RF_EINVAL naming the file and the key:
 * "cal.json: engine_calibration.steps[3].measured_s (-1) must be ...". */
rf_status rf_engine_calib_parse(const char *text, size_t len, const char *origin,
                                rf_engine_calib *out, rf_err *err);

/* rf_engine_calib_parse on the whole file at path. */
rf_status rf_engine_calib_load(const char *path, rf_engine_calib *out, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
