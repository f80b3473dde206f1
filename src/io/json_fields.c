/* json_fields.c - the field accessors of the profile, calibration, cluster
 * and measured readers (io_json.h): one lookup, one "is missing", one
 * wording of each kind's refusal, whichever file the field is in. */
#include <stdio.h>

#include "io_json.h"

rf_status rf__field_get(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                        bool required, json_t **v)
{
    *v = json_object_get(obj, key);
    if (!*v && required)
        return rf__json_fail(d->err, d->origin, "%s%s is missing", at, key);
    return RF_OK;
}

#define KIND(t) (1u << (t))

/* obj[key], when present, of one of the JSON types in kinds, else
 * "ATKEY must be WHAT". jansson holds no value that is not finite. */
static rf_status typed(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                       bool required, unsigned kinds, const char *what, json_t **v)
{
    rf_status s = rf__field_get(d, obj, at, key, required, v);
    if (s || !*v || (kinds & KIND(json_typeof(*v))))
        return s;
    return rf__json_fail(d->err, d->origin, "%s%s must be %s", at, key, what);
}

rf_status rf__field_number(const rf__json_doc *d, const json_t *obj, const char *at,
                           const char *key, bool required, double *out)
{
    json_t *v;
    rf_status s =
        typed(d, obj, at, key, required, KIND(JSON_INTEGER) | KIND(JSON_REAL), "a number", &v);
    if (!s && v)
        *out = json_number_value(v);
    return s;
}

rf_status rf__field_integer(const rf__json_doc *d, const json_t *obj, const char *at,
                            const char *key, bool required, json_int_t *out)
{
    json_t *v;
    rf_status s = typed(d, obj, at, key, required, KIND(JSON_INTEGER), "a whole number", &v);
    if (!s && v)
        *out = json_integer_value(v);
    return s;
}

rf_status rf__field_whole(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                          bool required, int64_t lo, int64_t hi, int64_t *out)
{
    json_t *v;
    rf_status s = typed(d, obj, at, key, required, KIND(JSON_INTEGER), "a whole number", &v);
    if (s || !v)
        return s;
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return rf__json_fail(d->err, d->origin, "%s%s (%lld) must be within [%lld, %lld]", at, key,
                             (long long)x, (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return RF_OK;
}

rf_status rf__field_string(const rf__json_doc *d, const json_t *obj, const char *at,
                           const char *key, bool required, char *out, size_t cap)
{
    json_t *v;
    rf_status s = typed(d, obj, at, key, required, KIND(JSON_STRING), "a string", &v);
    if (s || !v)
        return s;
    if (json_string_length(v) >= cap)
        return rf__json_fail(d->err, d->origin, "%s%s is longer than %zu characters", at, key,
                             cap - 1);
    snprintf(out, cap, "%s", json_string_value(v));
    return RF_OK;
}

rf_status rf__field_array(const rf__json_doc *d, const json_t *obj, const char *at, const char *key,
                          bool required, size_t max, json_t **out)
{
    json_t *a;
    rf_status s = typed(d, obj, at, key, required, KIND(JSON_ARRAY), "an array", &a);
    if (s || !a)
        return s;
    if (json_array_size(a) > max)
        return rf__json_fail(d->err, d->origin, "%s%s: more than %zu", at, key, max);
    *out = a;
    return RF_OK;
}
