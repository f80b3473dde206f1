/* calib_io.c - the sustained roof and the calibration of a profile as JSON
 * (calib_io.h). The schema, version 2 (docs/measure.md):
 *
 *   "bandwidth_sustained_bytes_per_s": 2.1e10,
 *   "calibration": {
 *     "version": 2, "backend": "...", "date": "...",
 *     "bandwidth_bytes_per_s": (the points' median roof), "peak_flops_per_s": (fp32),
 *     "fits": {"gemm": {"overhead_s", "efficiency", "rms_residual",
 *              "worst_residual", "loo_median", "loo_worst", "points"}, ...},
 *     "series": [{"kind": "gemm", "a": K, "b": N, "x": [...], "flops": [...],
 *                 "bytes": [...], "time_s": [...], "bandwidth_bytes_per_s": [...],
 *                 "peak_flops_per_s": [...], "efficiency": [...]}]
 *   }
 *
 * The two per-point roof columns are new in version 2 (0 = the
 * calibration's roof), with "point_roofs": {"memory": {"used": 0 or 1,
 * "round_spread": [on the calibration's roof, on the point's own]},
 * "compute": {...}} (absent: neither used); a version 1 file has neither,
 * and loads with every point on the calibration's roofs.
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

/* The columns of a series, in the order written: x, then the numbers of
 * each point (the two roofs from version 2 on), then the efficiency, which
 * is written for readers and not read. */
static const char *const columns[] = {
    "x", "flops", "bytes", "time_s", "bandwidth_bytes_per_s", "peak_flops_per_s", "efficiency"};
enum { ROOF_BW = 4, ROOF_PEAK = 5, EFF = 6, N_COLUMNS = 7 };

/* Point pt's number in column c (1 .. EFF). */
static double *cell(rf_calib_point *pt, int c)
{
    double *v[] = {NULL,        &pt->flops,          &pt->bytes,
                   &pt->time_s, &pt->bw_bytes_per_s, &pt->peak_flops_per_s,
                   &pt->eff};
    return v[c];
}

static json_t *column(const rf_calib_series *s, int which)
{
    json_t *a = json_array();
    for (size_t p = 0; a && p < s->n; p++) {
        rf_calib_point pt = s->pt[p];
        json_t *v = which == 0 ? json_integer((json_int_t)pt.x) : json_real(*cell(&pt, which));
        if (json_array_append_new(a, v))
            return json_decref(a), NULL;
    }
    return a;
}

static json_t *series_json(const rf_calib_series *s, int version)
{
    json_t *o = json_object();
    if (!o || put(o, "kind", json_string(rf_calib_kind_name(s->kind))) ||
        put(o, "a", json_integer((json_int_t)s->a)) || put(o, "b", json_integer((json_int_t)s->b)))
        return json_decref(o), NULL;
    for (int c = 0; c < N_COLUMNS; c++)
        if ((version >= 2 || (c != ROOF_BW && c != ROOF_PEAK)) && put(o, columns[c], column(s, c)))
            return json_decref(o), NULL;
    return o;
}

/* {"memory": {"used": 1, "round_spread": [global, own]}, "compute": ...}
 * (used: 1 or 0, a number, as the browser's reader has no booleans) */
static const char *const roof_names[] = {"memory", "compute"};

static json_t *roofs_json(const rf_calib *c)
{
    json_t *o = json_object();
    for (int r = 0; o && r < 2; r++) {
        json_t *one = json_object(), *sp = json_array();
        if (!one || !sp ||
            put(one, "used", json_integer((r ? c->point_peak : c->point_bw) ? 1 : 0)) ||
            json_array_append_new(sp, json_real(c->round_spread[r][0])) ||
            json_array_append_new(sp, json_real(c->round_spread[r][1])) ||
            put(one, "round_spread", sp) || put(o, roof_names[r], one)) {
            json_decref(one);
            return json_decref(o), NULL;
        }
    }
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
    if (ok && c->version >= 2)
        ok = !put(o, "point_roofs", roofs_json(c));
    for (int k = 0; ok && k < RF_CALIB_KIND_COUNT; k++)
        ok = !put(fits, rf_calib_kind_name((rf_calib_kind)k), fit_json(&c->fit[k]));
    for (size_t i = 0; ok && i < c->n_series; i++)
        ok = !json_array_append_new(series, series_json(&c->series[i], c->version));
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

/* obj[key], an integer 0 .. 2^40 into *out; path names obj. */
static rf_status whole(json_t *obj, const char *key, const char *path, const char *origin,
                       int64_t *out, rf_err *err)
{
    rf__json_doc d = {.origin = origin, .err = err};
    char at[64];
    snprintf(at, sizeof at, "%s.", path);
    json_t *v;
    rf_status s = rf__field_get(&d, obj, at, key, true, &v);
    if (s)
        return s;
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > ((json_int_t)1 << 40))
        return rf__json_fail(err, origin, "%s%s must be a whole number in 0 .. 2^40", at, key);
    *out = (int64_t)json_integer_value(v);
    return RF_OK;
}

/* The columns of series i: equal lengths, at most RF_CALIB_MAX_POINTS;
 * the roofs' columns from version 2 on. */
static rf_status read_series(json_t *o, size_t i, int version, const char *origin,
                             rf_calib_series *s, rf_err *err)
{
    char path[48];
    snprintf(path, sizeof path, "calibration.series[%zu]", i);
    memset(s, 0, sizeof *s); /* a version 1 point: no roofs of its own */
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
    json_t *col[EFF];
    int n_col = version >= 2 ? EFF : ROOF_BW;
    for (int c = 0; c < n_col; c++) {
        col[c] = json_object_get(o, columns[c]);
        if (!json_is_array(col[c]))
            return rf__json_fail(err, origin, "%s.%s must be an array", path, columns[c]);
        if (json_array_size(col[c]) != json_array_size(col[0]))
            return rf__json_fail(err, origin, "%s.%s has %zu entries, x has %zu", path, columns[c],
                                 json_array_size(col[c]), json_array_size(col[0]));
    }
    s->n = json_array_size(col[0]);
    if (s->n > RF_CALIB_MAX_POINTS)
        return rf__json_fail(err, origin, "%s: %zu points (at most %d)", path, s->n,
                             RF_CALIB_MAX_POINTS);
    for (size_t p = 0; p < s->n; p++) {
        json_t *x = json_array_get(col[0], p);
        if (!json_is_integer(x) || json_integer_value(x) > ((json_int_t)1 << 40))
            return rf__json_fail(err, origin, "%s.x[%zu] must be a whole number", path, p);
        s->pt[p].x = (int64_t)json_integer_value(x);
        for (int c = 1; c < n_col; c++) {
            json_t *v = json_array_get(col[c], p);
            if (!json_is_number(v))
                return rf__json_fail(err, origin, "%s.%s[%zu] must be a number", path, columns[c],
                                     p);
            *cell(&s->pt[p], c) = json_number_value(v);
            /* each figure within the readers' ranges (io_json.h), so no
             * time, rate or efficiency made from it is 0, inf or a
             * 96-digit number: a time, FLOPs and bytes (0 where a kind
             * has none), a point's own roofs (0: the calibration's); a
             * figure not positive is the core's to refuse (rf_calib_fit_all
             * names the point and what it must be) */
            static const struct {
                rf__figure kind;
                bool zero_ok;
            } range[] = {[1] = {RF__FIG_FLOPS, true},
                         [2] = {RF__FIG_BYTES, true},
                         [3] = {RF__FIG_TIME, false},
                         [ROOF_BW] = {RF__FIG_BW, true},
                         [ROOF_PEAK] = {RF__FIG_PEAK, true}};
            char at[96];
            snprintf(at, sizeof at, "%s.%s[%zu]", path, columns[c], p);
            double fig = *cell(&s->pt[p], c);
            rf_status st2 =
                fig > 0 ? rf__figure_check(origin, at, fig, range[c].kind, range[c].zero_ok, err)
                        : RF_OK;
            if (st2)
                return st2;
        }
    }
    return RF_OK;
}

/* "point_roofs" (version 2; absent: neither used, no spreads). */
static rf_status read_roofs(json_t *o, const char *origin, rf_calib *c, rf_err *err)
{
    c->point_bw = c->point_peak = false;
    memset(c->round_spread, 0, sizeof c->round_spread);
    if (!o)
        return RF_OK;
    if (!json_is_object(o))
        return rf__json_fail(err, origin, "calibration.point_roofs must be an object");
    for (int r = 0; r < 2; r++) {
        json_t *one = json_object_get(o, roof_names[r]);
        if (!one)
            continue;
        json_t *used = json_object_get(one, "used"), *sp = json_object_get(one, "round_spread");
        if (!json_is_object(one) ||
            (used && (!json_is_integer(used) || json_integer_value(used) < 0 ||
                      json_integer_value(used) > 1)) ||
            (sp &&
             (!json_is_array(sp) || json_array_size(sp) != 2 ||
              !json_is_number(json_array_get(sp, 0)) || !json_is_number(json_array_get(sp, 1)))))
            return rf__json_fail(err, origin,
                                 "calibration.point_roofs.%s must be {\"used\": 0 or 1, "
                                 "\"round_spread\": [two numbers]}",
                                 roof_names[r]);
        *(r ? &c->point_peak : &c->point_bw) = used && json_integer_value(used) == 1;
        for (int i = 0; sp && i < 2; i++) {
            double v = json_number_value(json_array_get(sp, (size_t)i));
            if (!(v >= 0 && v <= 1e3)) /* a relative spread: 0 .. 1000x */
                return rf__json_fail(err, origin,
                                     "calibration.point_roofs.%s.round_spread[%d] (%g) must be "
                                     "within [0, 1000]",
                                     roof_names[r], i, v);
            c->round_spread[r][i] = v;
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
    if (version < 1 || version > RF_CALIB_VERSION)
        return rf__json_fail(err, origin,
                             "calibration.version %lld is not one this build reads (1 to %d)",
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
    rf__json_doc d = {.origin = origin, .err = err};
    if ((s = rf__field_number(&d, o, "calibration.", "bandwidth_bytes_per_s", true,
                              &c->bw_bytes_per_s)) ||
        (s = rf__figure_check(origin, "calibration.bandwidth_bytes_per_s", c->bw_bytes_per_s,
                              RF__FIG_BW, false, err)) ||
        (s = rf__field_number(&d, o, "calibration.", "peak_flops_per_s", true,
                              &c->peak_flops_per_s)) ||
        (s = rf__figure_check(origin, "calibration.peak_flops_per_s", c->peak_flops_per_s,
                              RF__FIG_PEAK, false, err)))
        return s;
    if ((s = read_roofs(json_object_get(o, "point_roofs"), origin, c, err)))
        return s;
    json_t *series = json_object_get(o, "series");
    if (!json_is_array(series))
        return rf__json_fail(err, origin, "calibration.series must be an array");
    if (json_array_size(series) > RF_CALIB_MAX_SERIES)
        return rf__json_fail(err, origin, "calibration.series: more than %d", RF_CALIB_MAX_SERIES);
    c->n_series = json_array_size(series);
    for (size_t i = 0; i < c->n_series; i++)
        if ((s = read_series(json_array_get(series, i), i, c->version, origin, &c->series[i], err)))
            return s;
    if ((s = rf_calib_fit_all(c, err)))
        rf_err_prefix(err, s, "%s", origin);
    return s;
}

rf_status rf__calib_get(json_t *root, const char *origin, rf_hw_profile *out, rf_err *err)
{
    rf__json_doc d = {.origin = origin, .err = err};
    double *sustained = &out->bandwidth_sustained_bytes_per_s; /* 0 (none) when absent */
    rf_status s;
    if ((s = rf__field_number(&d, root, "", "bandwidth_sustained_bytes_per_s", false, sustained)) ||
        (s = rf__figure_check(origin, "bandwidth_sustained_bytes_per_s", *sustained, RF__FIG_BW,
                              true, err)))
        return s;
    json_t *c = json_object_get(root, "calibration");
    return c ? read_calib(c, origin, &out->calib, err) : RF_OK;
}
