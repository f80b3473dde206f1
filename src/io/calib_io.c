/* calib_io.c - the sustained roof and the calibration of a profile as JSON
 * (calib_io.h). The schema, version 1 (docs/measure.md):
 *
 *   "bandwidth_sustained_bytes_per_s": 2.1e10,
 *   "calibration": {
 *     "version": 1, "backend": "...", "date": "...",
 *     "bandwidth_bytes_per_s": (the sustained roof), "peak_flops_per_s": (fp32),
 *     "fits": {"gemm": {"overhead_s", "efficiency", "rms_residual",
 *              "worst_residual", "loo_median", "loo_worst", "points"}, ...},
 *     "series": [{"kind": "gemm", "a": K, "b": N, "x": [...], "flops": [...],
 *                 "bytes": [...], "time_s": [...], "efficiency": [...]}]
 *   }
 *
 * The fits and efficiencies are written for readers; on reading they are
 * recomputed from the points, so a hand-edited file cannot disagree with
 * itself. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "calib_io.h"
#include "io_json.h"

static int put(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

static json_t *fit_json(const rf_calib_fit *f)
{
    json_t *o = json_object();
    if (!o || put(o, "overhead_s", json_real(f->overhead_s)) ||
        put(o, "efficiency", json_real(f->efficiency)) ||
        put(o, "rms_residual", json_real(f->rms_residual)) ||
        put(o, "worst_residual", json_real(f->worst_residual)) ||
        put(o, "loo_median", json_real(f->loo_median)) ||
        put(o, "loo_worst", json_real(f->loo_worst)) ||
        put(o, "points", json_integer((json_int_t)f->n_points)))
        return json_decref(o), NULL;
    return o;
}

/* One column of a series' points: x, flops, bytes, time_s or efficiency. */
static json_t *column(const rf_calib_series *s, int which)
{
    json_t *a = json_array();
    for (size_t p = 0; a && p < s->n; p++) {
        const rf_calib_point *pt = &s->pt[p];
        json_t *v = which == 0   ? json_integer((json_int_t)pt->x)
                    : which == 1 ? json_real(pt->flops)
                    : which == 2 ? json_real(pt->bytes)
                    : which == 3 ? json_real(pt->time_s)
                                 : json_real(pt->eff);
        if (json_array_append_new(a, v))
            return json_decref(a), NULL;
    }
    return a;
}

static const char *const columns[] = {"x", "flops", "bytes", "time_s", "efficiency"};

static json_t *series_json(const rf_calib_series *s)
{
    json_t *o = json_object();
    if (!o || put(o, "kind", json_string(rf_calib_kind_name(s->kind))) ||
        put(o, "a", json_integer((json_int_t)s->a)) || put(o, "b", json_integer((json_int_t)s->b)))
        return json_decref(o), NULL;
    for (int c = 0; c < 5; c++)
        if (put(o, columns[c], column(s, c)))
            return json_decref(o), NULL;
    return o;
}

static json_t *calib_json(const rf_calib *c)
{
    json_t *o = json_object(), *fits = json_object(), *series = json_array();
    bool ok = o && fits && series && !put(o, "version", json_integer(c->version)) &&
              !put(o, "backend", json_string(c->backend)) &&
              !put(o, "date", json_string(c->date)) &&
              !put(o, "bandwidth_bytes_per_s", json_real(c->bw_bytes_per_s)) &&
              !put(o, "peak_flops_per_s", json_real(c->peak_flops_per_s));
    for (int k = 0; ok && k < RF_CALIB_KIND_COUNT; k++)
        ok = !put(fits, rf_calib_kind_name((rf_calib_kind)k), fit_json(&c->fit[k]));
    for (size_t i = 0; ok && i < c->n_series; i++)
        ok = !json_array_append_new(series, series_json(&c->series[i]));
    if (ok) {
        ok = !put(o, "fits", fits);
        fits = NULL;
    }
    if (ok) {
        ok = !put(o, "series", series);
        series = NULL;
    }
    json_decref(fits);
    json_decref(series);
    if (!ok)
        return json_decref(o), NULL;
    return o;
}

int rf__calib_put(json_t *o, const rf_hw_profile *p)
{
    if (p->bandwidth_sustained_bytes_per_s > 0 &&
        put(o, "bandwidth_sustained_bytes_per_s", json_real(p->bandwidth_sustained_bytes_per_s)))
        return -1;
    if (p->calib.version && put(o, "calibration", calib_json(&p->calib)))
        return -1;
    return 0;
}

/* ---- reading ------------------------------------------------------------ */

/* obj[key], a number (required) into *out. */
static rf_status number(json_t *obj, const char *key, const char *path, const char *origin,
                        double *out, rf_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return rf__json_fail(err, origin, "%s.%s is missing", path, key);
    if (!json_is_number(v))
        return rf__json_fail(err, origin, "%s.%s must be a number", path, key);
    *out = json_number_value(v);
    return RF_OK;
}

/* obj[key], an integer 0 .. 2^40 into *out. */
static rf_status whole(json_t *obj, const char *key, const char *path, const char *origin,
                       int64_t *out, rf_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return rf__json_fail(err, origin, "%s.%s is missing", path, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > ((json_int_t)1 << 40))
        return rf__json_fail(err, origin, "%s.%s must be a whole number in 0 .. 2^40", path, key);
    *out = (int64_t)json_integer_value(v);
    return RF_OK;
}

/* The columns of series i: equal lengths, at most RF_CALIB_MAX_POINTS. */
static rf_status read_series(json_t *o, size_t i, const char *origin, rf_calib_series *s,
                             rf_err *err)
{
    char path[48];
    snprintf(path, sizeof path, "calibration.series[%zu]", i);
    if (!json_is_object(o))
        return rf__json_fail(err, origin, "%s must be an object", path);
    json_t *kind = json_object_get(o, "kind");
    int k = json_is_string(kind) ? rf_calib_kind_of_name(json_string_value(kind)) : -1;
    if (k < 0)
        return rf__json_fail(err, origin,
                             "%s.kind must be one of gemm, attn_decode, attn_prefill, norm, "
                                 "rope, act, residual, copy",
                    path);
    s->kind = (rf_calib_kind)k;
    rf_status st;
    if ((st = whole(o, "a", path, origin, &s->a, err)) ||
        (st = whole(o, "b", path, origin, &s->b, err)))
        return st;
    json_t *col[4];
    for (int c = 0; c < 4; c++) {
        col[c] = json_object_get(o, columns[c]);
        if (!json_is_array(col[c]))
            return rf__json_fail(err, origin, "%s.%s must be an array", path, columns[c]);
        if (json_array_size(col[c]) != json_array_size(col[0]))
            return rf__json_fail(err, origin, "%s.%s has %zu entries, x has %zu", path, columns[c],
                        json_array_size(col[c]), json_array_size(col[0]));
    }
    s->n = json_array_size(col[0]);
    if (s->n > RF_CALIB_MAX_POINTS)
        return rf__json_fail(err, origin,
                             "%s: %zu points (at most %d)", path, s->n, RF_CALIB_MAX_POINTS);
    for (size_t p = 0; p < s->n; p++) {
        json_t *x = json_array_get(col[0], p);
        if (!json_is_integer(x) || json_integer_value(x) > ((json_int_t)1 << 40))
            return rf__json_fail(err, origin, "%s.x[%zu] must be a whole number", path, p);
        s->pt[p].x = (int64_t)json_integer_value(x);
        double *dst[] = {&s->pt[p].flops, &s->pt[p].bytes, &s->pt[p].time_s};
        for (int c = 1; c < 4; c++) {
            json_t *v = json_array_get(col[c], p);
            if (!json_is_number(v))
                return rf__json_fail(err, origin,
                                     "%s.%s[%zu] must be a number", path, columns[c], p);
            *dst[c - 1] = json_number_value(v);
        }
    }
    return RF_OK;
}

static rf_status read_calib(json_t *o, const char *origin, rf_calib *c, rf_err *err)
{
    if (!json_is_object(o))
        return rf__json_fail(err, origin, "calibration must be an object");
    int64_t version = 0;
    rf_status s;
    if ((s = whole(o, "version", "calibration", origin, &version, err)))
        return s;
    if (version != RF_CALIB_VERSION)
        return rf__json_fail(err, origin,
                             "calibration.version %lld is not one this build reads (%d)",
                    (long long)version, RF_CALIB_VERSION);
    c->version = (int)version;
    const char *texts[] = {"backend", "date"};
    char *dst[] = {c->backend, c->date};
    size_t cap[] = {sizeof c->backend, sizeof c->date};
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(o, texts[i]);
        if (v && (!json_is_string(v) || json_string_length(v) >= cap[i]))
            return rf__json_fail(err, origin,
                                 "calibration.%s must be a string of at most %zu characters",
                        texts[i], cap[i] - 1);
        if (v)
            snprintf(dst[i], cap[i], "%s", json_string_value(v));
    }
    if ((s = number(o, "bandwidth_bytes_per_s", "calibration", origin, &c->bw_bytes_per_s, err)) ||
        (s = rf__figure_check(origin, "calibration.bandwidth_bytes_per_s", c->bw_bytes_per_s,
                              RF__FIG_BW, false, err)) ||
        (s = number(o, "peak_flops_per_s", "calibration", origin, &c->peak_flops_per_s, err)) ||
        (s = rf__figure_check(origin, "calibration.peak_flops_per_s", c->peak_flops_per_s,
                              RF__FIG_PEAK, false, err)))
        return s;
    json_t *series = json_object_get(o, "series");
    if (!json_is_array(series))
        return rf__json_fail(err, origin, "calibration.series must be an array");
    if (json_array_size(series) > RF_CALIB_MAX_SERIES)
        return rf__json_fail(err, origin, "calibration.series: more than %d", RF_CALIB_MAX_SERIES);
    c->n_series = json_array_size(series);
    for (size_t i = 0; i < c->n_series; i++)
        if ((s = read_series(json_array_get(series, i), i, origin, &c->series[i], err)))
            return s;
    if ((s = rf_calib_fit_all(c, err)))
        rf_err_prefix(err, s, "%s", origin);
    return s;
}

rf_status rf__calib_get(json_t *root, const char *origin, rf_hw_profile *out, rf_err *err)
{
    json_t *v = json_object_get(root, "bandwidth_sustained_bytes_per_s");
    if (v) {
        if (!json_is_number(v))
            return rf__json_fail(err, origin, "bandwidth_sustained_bytes_per_s must be a number");
        out->bandwidth_sustained_bytes_per_s = json_number_value(v);
        rf_status s = rf__figure_check(origin, "bandwidth_sustained_bytes_per_s",
                                       out->bandwidth_sustained_bytes_per_s, RF__FIG_BW, true, err);
        if (s)
            return s;
    }
    json_t *c = json_object_get(root, "calibration");
    return c ? read_calib(c, origin, &out->calib, err) : RF_OK;
}
