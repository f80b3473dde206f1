/* calib_io.h - the profile's sustained roof and calibration as JSON, the
 * part of the profile file (hw_profile.c) that `measure --calibrate`
 * writes; not installed. */
#ifndef RF_CALIB_IO_H
#define RF_CALIB_IO_H

#include <jansson.h>

#include "roofline/rf_hw_profile.h"

/* Put "bandwidth_sustained_bytes_per_s" (when measured) and "calibration"
 * (when p->calib.version is set) into the profile object o. 0 on success,
 * -1 when out of memory. */
int rf__calib_put(json_t *o, const rf_hw_profile *p);

/* Read both from a profile's root into out (absent: 0 and version 0, an
 * older profile), the points checked and fitted (rf_calib_fit_all).
 * RF_EINVAL with origin and the key first. */
rf_status rf__calib_get(json_t *root, const char *origin, rf_hw_profile *out, rf_err *err);

#endif
