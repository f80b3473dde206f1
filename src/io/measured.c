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
 * when zero_ok); absent leaves *out as is. at is the path up to the key
 * ("ops[3]." or ""). */
static rf_status figure(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                        rf__figure kind, bool zero_ok, bool required, double *out)
{
    json_t *v;
    rf_status s = rf__field_get(d, obj, at, key, required, &v);
    if (s || !v)
        return s;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!(isfinite(x) && (x > 0 || (zero_ok && x == 0))))
        return rf__json_fail(d->err, d->origin, "%s%s must be a positive number", at, key);
    char path[128];
    snprintf(path, sizeof path, "%s%s", at, key);
    if (!(s = rf__figure_check(d->origin, path, x, kind, zero_ok, d->err)))
        *out = x;
    return s;
}

static rf_status read_peaks(const rf__json_doc *d, const json_t *root, rf_measured *out)
{
    const json_t *peaks = json_object_get(root, "peak_flops_per_s");
    if (!peaks)
        return RF_OK;
    if (!json_is_object(peaks))
        return rf__json_fail(d->err, d->origin,
                             "peak_flops_per_s must be an object of dtype: FLOP/s");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)peaks, key, v)
    {
        rf_dtype dt;
        if (rf_dtype_parse(key, &dt, NULL))
            return rf__json_fail(d->err, d->origin, "peak_flops_per_s: unknown dtype '%s'", key);
        rf_status s = figure(d, peaks, "peak_flops_per_s.", key, RF__FIG_PEAK, false, true,
                             &out->peak_flops_per_s[dt.kind]);
        if (s)
            return s;
    }
    return RF_OK;
}

/* "decode" or "prefill" */
static bool is_phase(const json_t *v)
{
    return json_is_string(v) &&
           (!strcmp(json_string_value(v), "decode") || !strcmp(json_string_value(v), "prefill"));
}

/* ops[i] of the file; at is "ops[i]." */
static rf_status read_op(const rf__json_doc *d, const json_t *o, const char *at,
                         const json_t *phase_default, rf_measured_op *op)
{
    if (!json_is_object(o))
        return rf__json_fail(d->err, d->origin, "%.*s must be an object", (int)strlen(at) - 1, at);
    const json_t *name = json_object_get(o, "name");
    if (!json_is_string(name) || !*json_string_value(name))
        return rf__json_fail(d->err, d->origin, "%sname must be a non-empty string", at);
    snprintf(op->name, sizeof op->name, "%s", json_string_value(name));
    const json_t *phase = json_object_get(o, "phase");
    if (!phase)
        phase = phase_default;
    if (phase) {
        if (!is_phase(phase))
            return rf__json_fail(d->err, d->origin, "%sphase must be \"decode\" or \"prefill\"",
                                 at);
        op->has_phase = true;
        op->phase = json_string_value(phase)[0] == 'd' ? RF_DECODE : RF_PREFILL;
    }
    /* flops 0: an operator without FLOPs (a gather), read, not drawn */
    rf_status s;
    if ((s = figure(d, o, at, "flops", RF__FIG_FLOPS, true, true, &op->flops)) ||
        (s = figure(d, o, at, "bytes", RF__FIG_BYTES, false, true, &op->bytes)) ||
        (s = figure(d, o, at, "measured_s", RF__FIG_TIME, false, true, &op->measured_s)))
        return s;
    return RF_OK;
}

static rf_status read_ops(const rf__json_doc *d, const json_t *root, rf_measured *out)
{
    const json_t *ops = json_object_get(root, "ops");
    if (!ops)
        return RF_OK;
    if (!json_is_array(ops))
        return rf__json_fail(d->err, d->origin, "ops must be an array");
    /* the file's phase, a default for its ops: checked even when every op
     * names its own, so a wrong one never passes unseen */
    const json_t *phase = json_object_get(root, "phase");
    if (phase && !is_phase(phase))
        return rf__json_fail(d->err, d->origin, "phase must be \"decode\" or \"prefill\"");
    if (json_array_size(ops) > RF_MEASURED_MAX_OPS)
        return rf_err_set(d->err, RF_ERANGE, "%s: %zu ops, at most %d are drawn", d->origin,
                          json_array_size(ops), RF_MEASURED_MAX_OPS);
    for (size_t i = 0; i < json_array_size(ops); i++) {
        char at[32];
        rf_status s;
        snprintf(at, sizeof at, "ops[%zu].", i);
        if ((s = read_op(d, json_array_get(ops, i), at, phase, &out->ops[out->n_ops])))
            return s;
        out->n_ops++;
    }
    return RF_OK;
}

rf_status rf_measured_parse(const char *text, size_t len, const char *origin, rf_measured *out,
                            rf_err *err)
{
    memset(out, 0, sizeof *out);
    rf__json_doc d = {.origin = origin, .err = err};
    json_t *root = NULL;
    rf_status s = rf__json_parse(text, len, origin, &root, err);
    if (s)
        return s;
    if (!json_is_object(root)) {
        s = rf__json_fail(err, origin, "expected a JSON object");
        goto out;
    }
    const json_t *name = json_object_get(root, "name");
    if (json_is_string(name))
        snprintf(out->name, sizeof out->name, "%s", json_string_value(name));
    if ((s = figure(&d, root, "", "bandwidth_bytes_per_s", RF__FIG_BW, false, false,
                    &out->bw_bytes_per_s)) ||
        (s = read_peaks(&d, root, out)) || (s = read_ops(&d, root, out)))
        goto out;
    if (!rf_measured_has_roofs(out) && !out->n_ops)
        s = rf__json_fail(err, origin,
                          "nothing to draw (expected bandwidth_bytes_per_s, peak_flops_per_s "
                          "or ops)");
out:
    json_decref(root);
    return s;
}

static rf_status parse_any(const char *text, size_t len, const char *origin, void *out, rf_err *err)
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
