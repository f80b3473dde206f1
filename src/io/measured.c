/* measured.c - reading measured roofs and operator timings (rf_measured.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/rf_file.h"
#include "roofline/rf_measured_io.h"

#include "io_json.h"


/* A figure at key of obj: a positive number within kind's range (or 0
 * when zero_ok); absent leaves *out as is. origin names the file, at the
 * path up to the key ("ops[3]." or ""). */
static rf_status figure(const json_t *obj, const char *key, const char *origin, const char *at,
                        rf__figure kind, bool zero_ok, double *out, bool required, rf_err *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return rf_err_set(err, RF_EINVAL, "%s: %s%s is missing", origin, at, key);
        return RF_OK;
    }
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!(isfinite(x) && (x > 0 || (zero_ok && x == 0))))
        return rf_err_set(err, RF_EINVAL, "%s: %s%s must be a positive number", origin, at, key);
    char path[128];
    snprintf(path, sizeof path, "%s%s", at, key);
    rf_status s = rf__figure_check(origin, path, x, kind, zero_ok, err);
    if (!s)
        *out = x;
    return s;
}

static rf_status read_peaks(const json_t *root, const char *origin, rf_measured *out,
                            rf_err *err)
{
    const json_t *peaks = json_object_get(root, "peak_flops_per_s");
    if (!peaks)
        return RF_OK;
    if (!json_is_object(peaks))
        return rf_err_set(err, RF_EINVAL, "%s: peak_flops_per_s must be an object of dtype: FLOP/s",
                          origin);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)peaks, key, v) {
        rf_dtype dt;
        if (rf_dtype_parse(key, &dt, NULL))
            return rf_err_set(err, RF_EINVAL, "%s: peak_flops_per_s: unknown dtype '%s'", origin,
                              key);
        rf_status s = figure(peaks, key, origin, "peak_flops_per_s.", RF__FIG_PEAK, false,
                             &out->peak_flops_per_s[dt.kind], true, err);
        if (s)
            return s;
    }
    return RF_OK;
}

/* ops[i] of the file; at is "ops[i]." */
static rf_status read_op(const json_t *o, const char *origin, const char *at,
                         const json_t *phase_default, rf_measured_op *op, rf_err *err)
{
    if (!json_is_object(o))
        return rf_err_set(err, RF_EINVAL, "%s: %.*s must be an object", origin,
                          (int)strlen(at) - 1, at);
    const json_t *name = json_object_get(o, "name");
    if (!json_is_string(name) || !*json_string_value(name))
        return rf_err_set(err, RF_EINVAL, "%s: %sname must be a non-empty string", origin, at);
    snprintf(op->name, sizeof op->name, "%s", json_string_value(name));
    const json_t *phase = json_object_get(o, "phase");
    if (!phase)
        phase = phase_default;
    if (phase) {
        const char *ph = json_is_string(phase) ? json_string_value(phase) : "";
        if (strcmp(ph, "decode") && strcmp(ph, "prefill"))
            return rf_err_set(err, RF_EINVAL, "%s: %sphase must be \"decode\" or \"prefill\"",
                              origin, at);
        op->has_phase = true;
        op->phase = ph[0] == 'd' ? RF_DECODE : RF_PREFILL;
    }
    /* flops 0: an operator without FLOPs (a gather), read, not drawn */
    rf_status s;
    if ((s = figure(o, "flops", origin, at, RF__FIG_FLOPS, true, &op->flops, true, err)) ||
        (s = figure(o, "bytes", origin, at, RF__FIG_BYTES, false, &op->bytes, true, err)) ||
        (s = figure(o, "measured_s", origin, at, RF__FIG_TIME, false, &op->measured_s, true,
                    err)))
        return s;
    return RF_OK;
}

static rf_status read_ops(const json_t *root, const char *origin, rf_measured *out, rf_err *err)
{
    const json_t *ops = json_object_get(root, "ops");
    if (!ops)
        return RF_OK;
    if (!json_is_array(ops))
        return rf_err_set(err, RF_EINVAL, "%s: ops must be an array", origin);
    /* the file's phase, a default for its ops: checked even when every op
     * names its own, so a wrong one never passes unseen */
    const json_t *phase = json_object_get(root, "phase");
    if (phase && !(json_is_string(phase) && (!strcmp(json_string_value(phase), "decode") ||
                                             !strcmp(json_string_value(phase), "prefill"))))
        return rf_err_set(err, RF_EINVAL, "%s: phase must be \"decode\" or \"prefill\"",
                          origin);
    if (json_array_size(ops) > RF_MEASURED_MAX_OPS)
        return rf_err_set(err, RF_ERANGE, "%s: %zu ops, at most %d are drawn", origin,
                          json_array_size(ops), RF_MEASURED_MAX_OPS);
    for (size_t i = 0; i < json_array_size(ops); i++) {
        char at[32];
        snprintf(at, sizeof at, "ops[%zu].", i);
        rf_status s =
            read_op(json_array_get(ops, i), origin, at, phase, &out->ops[out->n_ops], err);
        if (s)
            return s;
        out->n_ops++;
    }
    return RF_OK;
}

rf_status rf_measured_parse(const char *text, size_t len, const char *origin, rf_measured *out,
                            rf_err *err)
{
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    rf_status s = rf__json_parse(text, len, origin, &root, err);
    if (s)
        return s;
    if (!json_is_object(root)) {
        s = rf_err_set(err, RF_EINVAL, "%s: expected a JSON object", origin);
        goto out;
    }
    const json_t *name = json_object_get(root, "name");
    if (json_is_string(name))
        snprintf(out->name, sizeof out->name, "%s", json_string_value(name));
    if ((s = figure(root, "bandwidth_bytes_per_s", origin, "", RF__FIG_BW, false,
                    &out->bw_bytes_per_s, false, err)) ||
        (s = read_peaks(root, origin, out, err)) || (s = read_ops(root, origin, out, err)))
        goto out;
    if (!rf_measured_has_roofs(out) && !out->n_ops)
        s = rf_err_set(err, RF_EINVAL,
                       "%s: nothing to draw (expected bandwidth_bytes_per_s, peak_flops_per_s "
                       "or ops)",
                       origin);
out:
    json_decref(root);
    return s;
}

static rf_status parse_any(const char *text, size_t len, const char *origin, void *out,
                           rf_err *err)
{
    return rf_measured_parse(text, len, origin, out, err);
}

rf_status rf_measured_load(const char *path, rf_measured *out, rf_err *err)
{
    rf_status s = rf__json_load(path, parse_any, out, err);
    if (s == RF_OK && !out->name[0]) {
        const char *base = strrchr(path, '/');
        snprintf(out->name, sizeof out->name, "%s", base ? base + 1 : path);
    }
    return s;
}
