/* rf_hw_profile_io.h - read and write a measured hardware profile's JSON
 * file (io layer). The type itself is in rf_hw_profile.h (core).
 */
#ifndef RF_HW_PROFILE_IO_H
#define RF_HW_PROFILE_IO_H

#include <stddef.h>

#include "rf_error.h"
#include "rf_hw_profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a profile file (rf_hw_profile_parse on its bytes, all of them: a
 * NUL inside is refused, not an end). */
rf_status rf_hw_profile_load(const char *path, rf_hw_profile *out, rf_err *err);

/* rf_hw_profile_parse on a NUL-terminated string. */
rf_status rf_hw_profile_from_json(const char *text, const char *origin, rf_hw_profile *out,
                                  rf_err *err);

/* Parse len bytes of JSON text (no NUL needed; one inside is refused);
 * origin (a path, or NULL) prefixes every message. Required: name,
 * bandwidth_bytes_per_s > 0, peak_flops_per_s with at least one positive
 * figure keyed by a dtype name (rf_dtype_name). A missing, non-numeric or
 * negative figure anywhere (levels, kernels, spread, clock_hz) is RF_EINVAL
 * naming the key:
 *   "p.json: levels[1].bandwidth_bytes_per_s is negative (-3)".
 * Figures are held to the ranges the measured-file reader uses too
 * (rf_measured_io.h): every bandwidth (a level's may be 0, not measured)
 * [1e3, 1e16] bytes/s, every peak and theoretical peak 0 (none) or
 * [1e6, 1e19] FLOP/s, clock_hz 0 or [1e6, 1e11]; every byte count
 * (mem_bytes, l2_bytes, caches, levels, kernels) at most 2^60, as --mem.
 * Derived keys (ridge_flop_per_byte) are ignored: they are recomputed. */
rf_status rf_hw_profile_parse(const char *text, size_t len, const char *origin, rf_hw_profile *out,
                              rf_err *err);

/* The profile as JSON text (stable key order, raw SI numbers, the ridge of
 * every dtype and level added), NUL-terminated and malloc'd into *json; the
 * caller frees it. RF_ENOMEM on allocation failure. */
rf_status rf_hw_profile_to_json(const rf_hw_profile *p, char **json, rf_err *err);

/* Write rf_hw_profile_to_json atomically to path. */
rf_status rf_hw_profile_save(const rf_hw_profile *p, const char *path, rf_err *err);

#ifdef __cplusplus
}
#endif
#endif
