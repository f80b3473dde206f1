/* engine_io.c - an engine calibration's JSON file (rf_engine_io.h). */
#include "roofline/rf_engine_io.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_json.h"
#include "roofline/rf_reader.h"

/* ---- reading ------------------------------------------------------------ */

static rf_status read_roofs(const rf__json_doc *d, json_t *e, rf_engine_calib *c)
{
    json_t *r, *pk;
    rf_status s;
    if ((s = rf__field_get(d, e, "engine_calibration.", "roofs", true, &r)))
        return s;
    if (!json_is_object(r))
        return rf__json_fail(d->err, d->origin, "engine_calibration.roofs must be an object");
    const char *at = "engine_calibration.roofs.";
    if ((s = rf__field_string(d, r, at, "from", false, c->roofs_from, sizeof c->roofs_from)) ||
        (s = rf__field_number(d, r, at, "bandwidth_bytes_per_s", true, &c->bw_bytes_per_s)) ||
        (s = rf__figure_check(d->origin, "engine_calibration.roofs.bandwidth_bytes_per_s",
                              c->bw_bytes_per_s, RF__FIG_BW, false, d->err)) ||
        (s = rf__field_get(d, r, at, "peak_flops_per_s", true, &pk)))
        return s;
    if (!json_is_object(pk))
        return rf__json_fail(d->err, d->origin, "%speak_flops_per_s must be an object", at);
    const char *key;
    json_t *v;
    json_object_foreach(pk, key, v)
    {
        rf_dtype dt = {0};
        char path[96];
        snprintf(path, sizeof path, "%speak_flops_per_s.%s", at, key);
        if (rf_dtype_parse(key, &dt, NULL) || dt.ggml || dt.group_size)
            return rf__json_fail(d->err, d->origin, "%s: not a dtype", path);
        if (!json_is_number(v))
            return rf__json_fail(d->err, d->origin, "%s must be a number", path);
        c->peak_flops_per_s[dt.kind] = json_number_value(v);
        if ((s = rf__figure_check(d->origin, path, c->peak_flops_per_s[dt.kind], RF__FIG_PEAK,
                                  false, d->err)))
            return s;
    }
    return RF_OK;
}

static rf_status read_dtype(const rf__json_doc *d, json_t *o, const char *at, const char *key,
                            rf_dtype *out)
{
    char text[16];
    rf_status s = rf__field_string(d, o, at, key, true, text, sizeof text);
    if (s)
        return s;
    *out = (rf_dtype){0}; /* rf_dtype_parse sets only the fields its text names */
    if (rf_dtype_parse(text, out, NULL) || strcmp(rf_engine_dtype_key(*out), text))
        return rf__json_fail(d->err, d->origin,
                             "%s%s: '%s' is not a dtype (q4_0, q8_0, fp16, "
                             "fp32, bf16, ...)",
                             at, key, text);
    return RF_OK;
}

/* models[name] parsed as a config.json */
static rf_status read_model(const rf__json_doc *d, json_t *models, const char *name, rf_model *m)
{
    json_t *cfg = json_object_get(models, name);
    char origin[160];
    snprintf(origin, sizeof origin, "%s: engine_calibration.models.%s", d->origin, name);
    if (!json_is_object(cfg))
        return rf__json_fail(d->err, d->origin, "engine_calibration.models.%s %s", name,
                             cfg ? "must be a config.json object" : "is missing");
    char *text = json_dumps(cfg, JSON_COMPACT);
    if (!text)
        return rf_err_set(d->err, RF_ENOMEM, "%s: out of memory", origin);
    rf_status s = rf_model_parse(text, strlen(text), origin, m, d->err);
    free(text);
    return s;
}

static rf_status read_step(const rf__json_doc *d, json_t *o, json_t *models, size_t i,
                           rf_engine_calib *c)
{
    char at[48], phase[16], model[48];
    snprintf(at, sizeof at, "engine_calibration.steps[%zu].", i);
    int64_t tokens = 0, context = 0;
    double t = 0;
    rf_dtype w;
    rf_status s;
    if (!json_is_object(o))
        return rf__json_fail(d->err, d->origin, "engine_calibration.steps[%zu] must be an object",
                             i);
    char path[96];
    snprintf(path, sizeof path, "%smeasured_s", at);
    if ((s = rf__field_string(d, o, at, "model", true, model, sizeof model)) ||
        (s = read_dtype(d, o, at, "weights", &w)) ||
        (s = rf__field_string(d, o, at, "phase", true, phase, sizeof phase)) ||
        (s = rf__field_whole(d, o, at, "tokens", true, 1, 1 << 24, &tokens)) ||
        (s = rf__field_whole(d, o, at, "context", true, 0, 1 << 24, &context)) ||
        (s = rf__field_number(d, o, at, "measured_s", true, &t)) ||
        (s = rf__figure_check(d->origin, path, t, RF__FIG_TIME, false, d->err)))
        return s;
    if (strcmp(phase, "prefill") && strcmp(phase, "decode"))
        return rf__json_fail(d->err, d->origin, "%sphase: '%s' (prefill or decode)", at, phase);
    rf_phase ph = strcmp(phase, "prefill") ? RF_DECODE : RF_PREFILL;
    if (ph == RF_DECODE && tokens != 1)
        return rf__json_fail(d->err, d->origin, "%stokens: a decode step has 1 (%lld)", at,
                             (long long)tokens);
    rf_model m;
    if ((s = read_model(d, models, model, &m)))
        return s;
    char name[64];
    snprintf(name, sizeof name, "%s, %lld layers", model, (long long)m.layers);
    s = rf_engine_point_make(c, &m, name, w, ph, tokens, context, t, &c->pt[i], d->err);
    return s ? rf_err_prefix(d->err, s, "%s: %s", d->origin, at) : RF_OK;
}

static rf_status read_calib(const rf__json_doc *d, json_t *root, rf_engine_calib *c)
{
    json_t *e, *steps, *models;
    rf_status s;
    int64_t version = 0;
    const char *at = "engine_calibration.";
    if (!json_is_object(root))
        return rf__json_fail(d->err, d->origin, "not an engine calibration (an object expected)");
    if ((s = rf__field_get(d, root, "", "engine_calibration", true, &e)))
        return s;
    if (!json_is_object(e))
        return rf__json_fail(d->err, d->origin, "engine_calibration must be an object");
    if ((s = rf__field_whole(d, e, at, "version", true, 1, 1000, &version)) ||
        (s = rf__field_string(d, e, at, "engine", true, c->engine, sizeof c->engine)) ||
        (s = rf__field_string(d, e, at, "detail", false, c->detail, sizeof c->detail)) ||
        (s = rf__field_string(d, e, at, "date", false, c->date, sizeof c->date)) ||
        (s = read_dtype(d, e, at, "activations", &c->act)) ||
        (s = read_dtype(d, e, at, "kv", &c->kv)) || (s = read_roofs(d, e, c)) ||
        (s = rf__field_get(d, e, at, "models", true, &models)) ||
        (s = rf__field_array(d, e, at, "steps", true, RF_ENGINE_MAX_POINTS, &steps)))
        return s;
    c->version = (int)version;
    if ((s = rf_engine_check(c, d->err)))
        return rf_err_prefix(d->err, s, "%s", d->origin);
    if (!json_is_object(models))
        return rf__json_fail(d->err, d->origin, "engine_calibration.models must be an object");
    c->n_points = json_array_size(steps);
    for (size_t i = 0; i < c->n_points; i++)
        if ((s = read_step(d, json_array_get(steps, i), models, i, c)))
            return s;
    if ((s = rf_engine_fit_all(c, d->err)))
        return rf_err_prefix(d->err, s, "%s", d->origin);
    return RF_OK;
}

rf_status rf_engine_calib_parse(const char *text, size_t len, const char *origin,
                                rf_engine_calib *out, rf_err *err)
{
    memset(out, 0, sizeof *out);
    const char *name = origin ? origin : "engine calibration";
    json_t *root = NULL;
    rf_status s = rf__json_parse(text, len, name, &root, err);
    if (s)
        return s;
    rf__json_doc d = {name, err};
    s = read_calib(&d, root, out);
    json_decref(root);
    if (s)
        memset(out, 0, sizeof *out);
    return s;
}

static rf_status parse_fn(const char *text, size_t len, const char *origin, void *out, rf_err *err)
{
    return rf_engine_calib_parse(text, len, origin, out, err);
}

rf_status rf_engine_calib_load(const char *path, rf_engine_calib *out, rf_err *err)
{
    return rf__json_load(path, parse_fn, out, err);
}
