/* closed_loop_io.c - an engine's closed-loop TTFT factor read from the file
 * tools/closed-loop/fit.py writes (rf_gpu_io.h, rf_closed_loop.h). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "io_json.h"
#include "roofline/rf_gpu_io.h"

typedef struct request {
    const char *lengths; /* "fixed" or "varied" */
    rf_closed_loop *out;
} request;

/* at + "lengths.<kind>": [[c, f], ...], c increasing from 1, f within
 * [1e-3, 1e6]: a TTFT a thousandth of a lone request's to a million times
 * it, so that f x t1 and the ratio of two points' factors stay finite (a
 * subnormal factor made the interpolation's ratio infinite: fuzz_serving). */
static rf_status points(const rf__json_doc *d, const json_t *lengths, const char *at,
                        const char *kind, rf_closed_loop *o)
{
    json_t *a = NULL;
    rf_status s = rf__field_array(d, lengths, at, kind, true, RF_CLOSED_LOOP_MAX_POINTS, &a);
    if (s)
        return s;
    if (json_array_size(a) == 0)
        return rf__json_fail(d->err, d->origin, "%s%s has no points", at, kind);
    o->n = (int)json_array_size(a);
    for (int i = 0; i < o->n; i++) {
        json_t *p = json_array_get(a, (size_t)i);
        json_t *c = json_array_get(p, 0), *f = json_array_get(p, 1);
        if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_number(c) ||
            !json_is_number(f))
            return rf__json_fail(d->err, d->origin,
                                 "%s%s[%d] must be [concurrency, factor], two numbers", at, kind,
                                 i);
        o->c[i] = json_number_value(c), o->f[i] = json_number_value(f);
        if (!(o->c[i] >= 1 && o->c[i] <= 1e6))
            return rf__json_fail(d->err, d->origin,
                                 "%s%s[%d]: concurrency %g must be within [1, 1e6]", at, kind, i,
                                 o->c[i]);
        if (!(o->f[i] >= 1e-3 && o->f[i] <= 1e6))
            return rf__json_fail(d->err, d->origin,
                                 "%s%s[%d]: factor %g must be within [0.001, 1e6]", at, kind, i,
                                 o->f[i]);
        if (i > 0 && !(o->c[i] > o->c[i - 1]))
            return rf__json_fail(d->err, d->origin,
                                 "%s%s[%d]: concurrency %g after %g: the grid must increase", at,
                                 kind, i, o->c[i], o->c[i - 1]);
    }
    return RF_OK;
}

/* engines[engine] (at): its runs, range and errors, then its points for the lengths. */
static rf_status read_engine(const rf__json_doc *d, const json_t *e, const char *at, void *user)
{
    const request *q = user;
    char lat[128];
    snprintf(lat, sizeof lat, "%slengths.", at);
    rf_closed_loop *o = q->out;
    int64_t lo = 0, hi = 0;
    json_t *lengths = NULL;
    rf_status s;
    if ((s = rf__field_whole(d, e, at, "runs", true, 1, 1000000, &o->runs)) ||
        (s = rf__field_whole(d, e, at, "c_min", true, 1, 1000000, &lo)) ||
        (s = rf__field_whole(d, e, at, "c_max", true, lo, 1000000, &hi)) ||
        (s = rf__field_fraction(d, e, at, "in_sample_median", &o->in_sample_median)) ||
        (s = rf__field_fraction(d, e, at, "held_out_median", &o->held_out_median)) ||
        (s = rf__field_fraction(d, e, at, "held_out_p90", &o->held_out_p90)) ||
        (s = rf__field_get(d, e, at, "lengths", true, &lengths)))
        return s;
    if (o->held_out_p90 < o->held_out_median)
        return rf__json_fail(d->err, d->origin, "%sheld_out_p90 is below held_out_median", at);
    if (!json_is_object(lengths))
        return rf__json_fail(d->err, d->origin, "%slengths must be an object", at);
    o->c_min = (double)lo, o->c_max = (double)hi;
    return points(d, lengths, lat, q->lengths, o);
}

rf_status rf_closed_loop_load(const char *path, const char *engine, bool varied,
                              rf_closed_loop *out, bool *found, rf_err *err)
{
    request q = {varied ? "varied" : "fixed", out};
    rf__engine_file f = {engine,      read_engine,       &q, out, sizeof *out,
                         out->source, sizeof out->source};
    return rf__engine_file_load(path, &f, found, err);
}

rf_status rf_closed_loop_parse(const char *text, size_t len, const char *origin, const char *engine,
                               bool varied, rf_closed_loop *out, bool *found, rf_err *err)
{
    request q = {varied ? "varied" : "fixed", out};
    rf__engine_file f = {engine,      read_engine,       &q, out, sizeof *out,
                         out->source, sizeof out->source};
    return rf__engine_file_parse(text, len, origin, &f, found, err);
}
