/* json_fields.c - the field accessors of the profile, calibration, cluster
 * and measured readers (io_json.h): one lookup, one "is missing", one
 * wording of each kind's refusal, whichever file the field is in. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

typedef struct engine_file {
    const rf__engine_file *f;
    bool found;
} engine_file;

static rf_status parse_engine_file(const char *text, size_t len, const char *origin, void *user,
                                   rf_err *err)
{
    engine_file *q = user;
    const rf__engine_file *f = q->f;
    json_t *root = NULL, *engines = NULL, *e;
    rf_status s = rf__json_parse(text, len, origin, &root, err);
    if (s)
        return s;
    rf__json_doc d = {origin, err};
    if (!json_is_object(root))
        s = rf__json_fail(err, origin, "the top level must be an object");
    else if (!(s = rf__field_string(&d, root, "", "source", true, f->source, f->source_cap)) &&
             !(s = rf__field_get(&d, root, "", "engines", true, &engines)) &&
             !json_is_object(engines))
        s = rf__json_fail(err, origin, "engines must be an object");
    if (!s && (e = json_object_get(engines, f->engine)) != NULL) {
        char at[96];
        snprintf(at, sizeof at, "engines.%s.", f->engine);
        if (!json_is_object(e))
            s = rf__json_fail(err, origin, "engines.%s must be an object", f->engine);
        else
            q->found = !(s = f->read(&d, e, at, f->user));
    }
    json_decref(root);
    return s;
}

/* The file at path, or text (path NULL), into f->out. */
static rf_status read_engine_file(const char *path, const char *text, size_t len,
                                  const char *origin, const rf__engine_file *f, bool *found,
                                  rf_err *err)
{
    engine_file q = {f, false};
    rf_status s = RF_OK;
    memset(f->out, 0, f->out_size);
    if (!path)
        s = parse_engine_file(text, len, origin, &q, err);
    else if (access(path, F_OK) == 0 || errno != ENOENT)
        s = rf__json_load(path, parse_engine_file, &q, err);
    *found = !s && q.found;
    if (!*found)
        memset(f->out, 0, f->out_size);
    return s;
}

rf_status rf__engine_file_load(const char *path, const rf__engine_file *f, bool *found, rf_err *err)
{
    return read_engine_file(path, NULL, 0, NULL, f, found, err);
}

rf_status rf__engine_file_parse(const char *text, size_t len, const char *origin,
                                const rf__engine_file *f, bool *found, rf_err *err)
{
    return read_engine_file(NULL, text, len, origin, f, found, err);
}

rf_status rf__field_fraction(const rf__json_doc *d, const json_t *obj, const char *at,
                             const char *key, double *out)
{
    rf_status s = rf__field_number(d, obj, at, key, true, out);
    if (!s && !(*out >= 0 && *out <= 100))
        s = rf__json_fail(d->err, d->origin, "%s%s (%g) must be within [0, 100] (a fraction)", at,
                          key, *out);
    return s;
}
